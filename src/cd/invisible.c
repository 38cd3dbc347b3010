/* SPDX-License-Identifier: MIT */
/* Invisible mode: versioned orecs, global clock, snapshot extension. */
#include <ltx/tm.h>

#include <stdlib.h>
#include <string.h>

#include "cd/cd.h"
#include "cd/conflict.h"
#include "cd/invisible.h"
#include "cd/lines.h"
#include "cd/orec.h"
#include "cd/wset.h"
#include "rt/signal.h"
#include "rt/wait.h"

/*
 * The complete operations of the invisible mode; cd/invisible.h has the
 * inlined fast paths and the synchronization argument for loads.
 *
 * Opacity: every value a live transaction loads is checked, before it is
 * returned, to belong to the snapshot (its orec unlocked, unchanged across
 * the load, and no newer than the snapshot); a newer orec triggers snapshot
 * extension, which revalidates the whole read set at a later clock value
 * (LSA).  Every line this transaction locks had a version no newer than the
 * snapshot when locked, so lines it owns are consistent with it too.
 *
 * Why the read set needs no versions: a line read at version v <= S that
 * a committer changes afterwards was locked by it after the read (a locked
 * line fails the read), and the committer took its version ts from the
 * clock after locking, so ts > S.  An extension to S' reads the clock, then
 * validates against the old snapshot: if it read the clock before the lock,
 * ts > S' as well; if after, it finds the line locked or at ts > S, and
 * fails.  So while this transaction lives, a line changed since it was read
 * shows a foreign lock or a version above the current snapshot, and
 * "orec < limit (snapshot + 1), or locked by us" is the whole test.
 *
 * Commit (TL2/LSA): all written lines are already locked (encounter time);
 * take the commit version ts from the clock (acq_rel fetch-add); if another
 * commit happened since the snapshot, revalidate the read set; write the
 * dirty bytes back with release stores; release each orec with a release
 * store of ts.  A reader that sees a new byte therefore sees the orec
 * locked or at ts on its reload, and retries.
 *
 * Progress (DESIGN.md): an irrevocable transaction that finds a line
 * locked by another transaction does not fail, and waits only for a
 * holder that is committing: it dooms a live holder and takes the orec
 * from a doomed one (take_held).  The lock word names the holder's
 * write-set entry, whose owner field names the holder (cd.h), and
 * ltx_cd_holder tells its state.  A doomed holder never reaches its
 * commit point, so none of its buffered bytes reaches memory: the line
 * still holds the last committed data.  The holder may run on, unaware,
 * on its fast paths, until its next slow path ends it: its operations on
 * the line fail while the taker holds the orec (not its own lock word any
 * more), its snapshot cannot move past the take (extend checks that its
 * locks are still its own), and the taker lets go of the orec at a
 * version above every snapshot the holder can have (LTX_WENTRY_TAKEN:
 * the commit version, or a fresh one if it aborts), so that the holder
 * never reads the line again as if it had not lost it.  Its release skips
 * orecs it no longer holds (a CAS from its own lock word).
 * Why the CAS cannot take a lock of the holder's next transaction
 * instead: cd.h, ltx_cd_take_begin.
 *
 * The counted path: with a capacity limit (LTX_CAPACITY) every operation
 * must see each new line, to count its slots, so cd->counted is set at
 * begin and limit stays 0 while the transaction lives: every fast path
 * fails (v >= 0) and falls through to the operations here, which compare
 * against the snapshot themselves and keep the transaction-cache
 * directory (cd/lines.h), and with it the bus accounting.  Uncounted, the
 * invisible mode counts no bus requests but the failed ones (BUSY): its
 * fast paths keep no per-line record to tell a first access from a repeat.
 */

#define CONFLICT_CAUSE (TM_ABORT_CONFLICT | TM_ABORT_RETRY)
#define VALIDATE_CAUSE LTX_INV_VALIDATE_CAUSE

/* The write-set entry heading an orec this transaction holds, or NULL. */
static struct ltx_wentry *owned_head(const struct ltx_cd *cd, uintptr_t v)
{
	struct ltx_wentry *w = ltx_orec_entry(v);

	if (!ltx_orec_locked(v))
		return NULL;
	if ((uintptr_t)w - (uintptr_t)cd->ws_base >=
	    (uintptr_t)cd->ws_next - (uintptr_t)cd->ws_base)
		return NULL;
	return w;
}

static struct ltx_wentry *find_line(struct ltx_cd *cd, struct ltx_wentry *w,
				    uintptr_t line)
{
	for (;;) {
		if (w->line == line) {
			/* Callers read or add bytes: the general form. */
			ltx_wset_expand(w);
			return w;
		}
		if (w->next == 0)
			return NULL;
		w = cd->ws_base + (w->next - 1);
	}
}

/* Is read-set entry r still valid (unchanged, or locked by us since)? */
static bool read_valid(const struct ltx_cd *cd, const struct ltx_rentry *r)
{
	uintptr_t cur = __atomic_load_n(r->orec, __ATOMIC_ACQUIRE);

	return cur <= cd->snapshot || owned_head(cd, cur) != NULL;
}

/*
 * The whole read set, four entries a step: each entry is one load of the
 * entry and one compare with its orec in memory (ltx_word_above), and a
 * step whose orecs are all at or below the snapshot, the common case, is
 * done; a step with one above it (locked, by us or another, or newer) is
 * looked at again entry by entry (read_valid).  Half the instructions of
 * an entry-by-entry loop: at two threads nearly every update commit
 * revalidates a read set of hundreds of entries (vacation).
 */
bool ltx_inv_reads_valid(const struct ltx_cd *cd)
{
	const struct ltx_rentry *r = cd->rs_base, *end = cd->rs_next;
	/* Where the steps of four end: one compare a step. */
	const struct ltx_rentry *steps = r + ((size_t)(end - r) & ~(size_t)3);
	uintptr_t snap = cd->snapshot;

#ifdef LTX_TEST_BREAK_READ_VALIDATION
	/* A deliberately broken test build (tests/check_history_broken). */
	return true;
#endif
	for (; r < steps; r += 4)
		if (ltx_unlikely(ltx_word_above(r[0].orec, snap) ||
				 ltx_word_above(r[1].orec, snap) ||
				 ltx_word_above(r[2].orec, snap) ||
				 ltx_word_above(r[3].orec, snap)))
			for (unsigned i = 0; i < 4; i++)
				if (!read_valid(cd, &r[i]))
					return false;
	for (; r < end; r++)
		if (!read_valid(cd, r))
			return false;
	return true;
}

/*
 * Is every orec we locked still ours?  Not if an irrevocable transaction
 * took one (see the top): we are doomed then, and must not move our
 * snapshot past its commit, or the fast paths would read the line it
 * wrote as if it were ours to read.  The clock was loaded before (acquire:
 * if the taker's commit is in it, so is the take, made before).
 */
static bool locks_held(const struct ltx_cd *cd)
{
	for (const struct ltx_wentry *w = cd->ws_base; w < cd->ws_next; w++)
		if (w->orec != NULL &&
		    __atomic_load_n(w->orec, __ATOMIC_ACQUIRE) !=
			    ltx_orec_lock_word(w))
			return false;
	return true;
}

/* Move the snapshot to the present if every read is still valid. */
static bool extend(struct ltx_cd *cd)
{
	uintptr_t now = __atomic_load_n(&ltx_clock.now, __ATOMIC_ACQUIRE);

	if (cd->irrevocable)
		return true; /* owns what it read; limit stays 0 */
	if (!ltx_inv_reads_valid(cd) || !locks_held(cd))
		return false;
	cd->snapshot = now;
	if (!cd->counted)
		cd->limit = now + 1;
	return true;
}

/*
 * Double the write set.  Locked orecs point at their head entries, so they
 * are repointed at the new copies; they stay locked by us throughout
 * (unless an irrevocable transaction takes one, which the CAS leaves
 * alone), and other threads only test the lock bit (and whether the entry
 * lies in their own write set), so relaxed CASes suffice.
 * Synchronization: the old set is freed only after every orec points into
 * the new one.  Until then no allocation, another thread's new write set
 * included, can be placed on it, so no thread can find one of our lock
 * words pointing into its own write set and take our line for its own
 * (owned_head).  An irrevocable transaction that read one of the old lock
 * words may still be reading the entry's owner: the fence, then
 * ltx_cd_take_wait, wait for it (the Dekker pair of cd.h, with the
 * repointing CASes as our stores).
 */
static bool grow_writes(struct ltx_cd *cd)
{
	struct ltx_wentry *p;
	void *old;

	if (!ltx_wset_grow(cd, &old))
		return false;
	for (p = cd->ws_base; p < cd->ws_next; p++)
		if (p->orec != NULL) {
			/* A CAS from the old lock word: an irrevocable
			 * transaction may have doomed us and taken the orec
			 * (see the top); its lock must stay. */
			uintptr_t was = ltx_orec_lock_word(
				(struct ltx_wentry *)old + (p - cd->ws_base));

			(void)__atomic_compare_exchange_n(
				p->orec, &was, ltx_orec_lock_word(p), false,
				__ATOMIC_RELAXED, __ATOMIC_RELAXED);
		}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	ltx_cd_take_wait();
	LTX_OWN_VOID(free(old)); /* the allocator's (rt/signal.h) */
	ltx_wset_grow_done(cd);
	return true;
}

/* A new entry for line on an orec we already hold, chained to head. */
static struct ltx_wentry *chain_entry(struct ltx_cd *cd, uint32_t head,
				      uintptr_t line)
{
	struct ltx_wentry *w, *h;

	if (cd->ws_next == cd->ws_end && !grow_writes(cd))
		return NULL;
	h = cd->ws_base + head;
	w = cd->ws_next++;
	w->line = line;
	w->orec = NULL;
	w->old_version = 0;
	w->mask = 0;
	w->flags = LTX_WENTRY_CHAINED;
	w->single_addr = LTX_WENTRY_NO_SINGLE;
	w->head = head;
	w->next = h->next;
	h->next = (uint32_t)(w - cd->ws_base) + 1;
	return w;
}

/*
 * Lock orec, seen unlocked at v, for a new head entry of line (0: a line
 * read before the transaction became irrevocable, whose address the read
 * set does not keep: it never matches a real line, and its entry only
 * releases the orec).  Returns the entry; NULL with *cause unset if the
 * orec changed (look again), set if out of memory.
 */
static struct ltx_wentry *lock_orec(struct ltx_cd *cd, uintptr_t *orec,
				    uintptr_t v, uintptr_t line,
				    unsigned *cause)
{
	struct ltx_wentry *w;

	if (cd->ws_next == cd->ws_end && !grow_writes(cd)) {
		*cause = TM_ABORT_NOMEM | TM_ABORT_CAPACITY;
		return NULL;
	}
	w = cd->ws_next;
	/* Filled first, as in ltx_inv_lock (release_held). */
	w->orec = orec;
	w->old_version = v;
	/* Acquire and release: as in ltx_inv_lock. */
	if (!__atomic_compare_exchange_n(orec, &v, ltx_orec_lock_word(w), false,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return NULL;
	cd->ws_next = w + 1;
	w->line = line;
	w->link = 0;
	w->mask = 0;
	w->single_addr = LTX_WENTRY_NO_SINGLE;
	return w;
}

/*
 * Progress (see the top): orec was found locked by another transaction,
 * and cd is irrevocable.  Take the orec for a new head entry of line if
 * its holder is doomed (dooming it first if it is live: the caller looks
 * again).  Returns the entry; NULL to look again (with *cause set if out
 * of memory), after a wait step if the holder is committing.
 */
static struct ltx_wentry *take_held(struct ltx_cd *cd, uintptr_t *orec,
				    uintptr_t line, unsigned *spins,
				    unsigned *cause)
{
	struct ltx_wentry *w = NULL;
	enum ltx_holder held = LTX_HOLDER_AGAIN;
	uintptr_t v;

	if (cd->ws_next == cd->ws_end && !grow_writes(cd)) {
		*cause = TM_ABORT_NOMEM | TM_ABORT_CAPACITY;
		return NULL;
	}
	ltx_cd_take_begin();
	/* Seq_cst: the taker's load of the Dekker pair (cd.h). */
	v = __atomic_load_n(orec, __ATOMIC_SEQ_CST);
	if (ltx_orec_locked(v) && owned_head(cd, v) == NULL)
		held = ltx_cd_holder(cd, LTX_HOLDER_ID,
				     __atomic_load_n(&ltx_orec_entry(v)->owner,
						     __ATOMIC_RELAXED));
	if (held == LTX_HOLDER_GONE) {
		w = cd->ws_next;
		w->line = line;
		w->orec = orec;
		w->old_version = 0; /* never used: see inv_release */
		w->next = 0;
		w->flags = LTX_WENTRY_TAKEN | LTX_WENTRY_BUMP;
		w->mask = 0;
		w->single_addr = LTX_WENTRY_NO_SINGLE;
		if (__atomic_compare_exchange_n(orec, &v, ltx_orec_lock_word(w),
						false, __ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED))
			cd->ws_next = w + 1;
		else
			w = NULL;
	}
	ltx_cd_take_end();
	if (held == LTX_HOLDER_BUSY)
		ltx_wait_step(spins);
	return w;
}

/*
 * The entry of the line holding addr, taking the line in E if needed.
 * Returns NULL with *cause set when the line is held by another
 * transaction, its version is too new for an unextendable snapshot, or
 * memory runs out.
 */
static struct ltx_wentry *acquire(struct ltx_cd *cd, const void *addr,
				  unsigned *cause)
{
	uintptr_t *orec = ltx_orec_of(cd, addr);
	uintptr_t line = (uintptr_t)addr & ~LTX_LINE_MASK;
	unsigned spins = 0;

	for (;;) {
		uintptr_t v = __atomic_load_n(orec, __ATOMIC_RELAXED);
		struct ltx_wentry *w, *h;

		if (cd->irrevocable && !(ltx_orec_locked(v))) {
			/* Any unlocked version is fine: see lock_orec. */
			w = lock_orec(cd, orec, v, line, cause);
			if (w != NULL || *cause != 0)
				return w;
			continue;
		}

		if (ltx_orec_locked(v)) {
			h = owned_head(cd, v);
			if (h == NULL && cd->irrevocable) {
				w = take_held(cd, orec, line, &spins, cause);
				if (w != NULL || *cause != 0)
					return w;
				continue;
			}
			if (h == NULL) {
				cd->stats->bus_busy++;
				ltx_cd_conflict_held(cd, LTX_CD_HELD_ENTRY, v);
				ltx_cd_conflict_access(cd, addr, 8);
				*cause = CONFLICT_CAUSE;
				return NULL;
			}
			w = find_line(cd, h, line);
			if (w == NULL)
				w = chain_entry(cd, (uint32_t)(h - cd->ws_base),
						line);
			if (w == NULL)
				*cause = TM_ABORT_NOMEM | TM_ABORT_CAPACITY;
			return w;
		}
		if (v > cd->snapshot) {
			if (!extend(cd)) {
				*cause = VALIDATE_CAUSE;
				return NULL;
			}
			continue;
		}
		w = lock_orec(cd, orec, v, line, cause);
		if (w != NULL || *cause != 0)
			return w;
		/* The orec changed under us: look again. */
	}
}

/*
 * Read the word at addr under orec, seen unlocked at v (<= snapshot), and
 * log the read (there is room): the seqlock read of cd/invisible.h, which
 * does not depend on limit (0 on the counted path).  Returns false if the
 * orec changed.
 */
static bool read_word(struct ltx_cd *cd, uintptr_t *orec, uintptr_t v,
		      const void *addr, uint64_t *out)
{
	uint64_t x = ltx_load_word((const uint64_t *)addr);

	if (__atomic_load_n(orec, __ATOMIC_RELAXED) != v)
		return false;
	cd->rs_next->orec = orec;
	cd->rs_next++;
	*out = x;
	return true;
}

static void inv_begin(struct ltx_cd *cd)
{
	/* A lazy snapshot, as in ltx_inv_fast_begin. */
	uintptr_t now = cd->snapshot;

	cd->counted = cd->capacity != 0;
	cd->limit = cd->counted ? 0 : now + 1;
}

/*
 * The counted path's bookkeeping before an operation on addr's line:
 * slots and bus request (cd/lines.h).  The entry's state is set at once:
 * if the operation then fails, the transaction is doomed and the whole
 * directory is reset.  Returns 0 or a cause.
 */
static unsigned charge(struct ltx_cd *cd, const void *addr, bool excl)
{
	struct ltx_line *e;
	unsigned cause = ltx_lines_charge(
		cd, NULL, (uintptr_t)addr & ~LTX_LINE_MASK, excl, &e);

	if (cause == 0)
		e->state |= excl ? LTX_LINE_EXCL : LTX_LINE_READ;
	return cause;
}

static uint64_t inv_load(struct ltx_cd *cd, const void *addr, bool excl,
			 unsigned *cause)
{
	uintptr_t *orec = ltx_orec_of(cd, addr);
	uint64_t x;

	if (cd->counted) {
		*cause = charge(cd, addr, excl);
		if (*cause != 0)
			return 0;
	}
	/* An irrevocable transaction takes every line it reads in E, so
	 * that nothing it read can change before it commits. */
	if (excl || cd->irrevocable) {
		struct ltx_wentry *w = acquire(cd, addr, cause);

		return w != NULL ? ltx_wset_merged_word(w, addr) : 0;
	}
	for (;;) {
		uintptr_t v = __atomic_load_n(orec, __ATOMIC_ACQUIRE);

		if (ltx_orec_locked(v)) {
			struct ltx_wentry *h = owned_head(cd, v), *w;

			if (h == NULL) {
				cd->stats->bus_busy++;
				ltx_cd_conflict_held(cd, LTX_CD_HELD_ENTRY, v);
				ltx_cd_conflict_access(cd, addr, 8);
				*cause = CONFLICT_CAUSE;
				return 0;
			}
			/* Read after write: the line may be buffered. */
			w = find_line(cd, h, (uintptr_t)addr & ~LTX_LINE_MASK);
			if (w != NULL)
				return ltx_wset_merged_word(w, addr);
			return ltx_load_word((const uint64_t *)addr);
		}
		if (v > cd->snapshot) {
			if (!extend(cd)) {
				*cause = VALIDATE_CAUSE;
				return 0;
			}
			continue;
		}
		if (cd->rs_next == cd->rs_end && !ltx_rset_grow(cd)) {
			*cause = TM_ABORT_NOMEM | TM_ABORT_CAPACITY;
			return 0;
		}
		if (read_word(cd, orec, v, addr, &x))
			return x;
	}
}

static unsigned inv_store(struct ltx_cd *cd, void *addr, uint64_t val,
			  unsigned size)
{
	unsigned cause = 0;
	struct ltx_wentry *w;

	if (cd->counted) {
		cause = charge(cd, addr, true);
		if (cause != 0)
			return cause;
	}
	w = acquire(cd, addr, &cause);
	if (w != NULL)
		ltx_wset_buffer(w, addr, val, size);
	else
		ltx_cd_conflict_access(cd, addr, size); /* not the word */
	return cause;
}

static unsigned inv_validate(struct ltx_cd *cd)
{
	if (__atomic_load_n(&ltx_clock.now, __ATOMIC_ACQUIRE) == cd->snapshot)
		return 0;
	return extend(cd) ? 0 : VALIDATE_CAUSE;
}

/*
 * The counted path's end of a commit: count the lines with dirty bytes
 * (write-backs), empty the directory and the logs.
 */
void ltx_inv_counted_end(struct ltx_cd *cd)
{
	for (struct ltx_wentry *w = cd->ws_base; w < cd->ws_next; w++)
		if (ltx_wset_dirty(w))
			cd->stats->bus_writeback++;
	ltx_lines_reset(cd);
	ltx_inv_reset(cd);
}

static unsigned inv_prepare(struct ltx_cd *cd, uintptr_t *ts)
{
	return ltx_inv_prepare(cd, ts);
}

static void inv_publish(struct ltx_cd *cd, uintptr_t ts)
{
	ltx_inv_publish(cd, ts);
}

/*
 * Unlock the orec of entry w at version v, if w still holds it:
 * release_held may have let go of it already, and an irrevocable
 * transaction may have taken it (see the top).  A CAS from our lock word,
 * release at least: our loads of the line are over.
 */
static void unlock_entry(const struct ltx_wentry *w, uintptr_t v)
{
	uintptr_t mine = ltx_orec_lock_word(w);

	if (w->orec != NULL)
		(void)__atomic_compare_exchange_n(w->orec, &mine, v, false,
						  __ATOMIC_SEQ_CST,
						  __ATOMIC_RELAXED);
}

/*
 * Abort: unlock every held orec at its old version (data never changed),
 * or, for one taken from a doomed holder, at a fresh one (see the top);
 * empty the logs.
 */
static void inv_release(struct ltx_cd *cd)
{
	uintptr_t fresh = 0;

	for (struct ltx_wentry *w = cd->ws_base; w < cd->ws_next; w++)
		if (ltx_unlikely(w->flags & LTX_WENTRY_TAKEN) &&
		    w->orec != NULL) {
			if (fresh == 0)
				fresh = __atomic_add_fetch(&ltx_clock.now, 1,
							   __ATOMIC_ACQ_REL);
			unlock_entry(w, fresh);
		} else {
			unlock_entry(w, w->old_version);
		}
	if (cd->counted)
		ltx_lines_reset(cd);
	ltx_inv_reset(cd);
}

/*
 * From a signal handler (cd.h): unlock the entries held, and the next one
 * if an interrupted lock has just taken its orec (the lock paths fill the
 * entry's orec and old version before their CAS, so a lock word naming
 * the entry means the CAS succeeded).  The logs stay as they are.
 */
static void inv_release_held(struct ltx_cd *cd)
{
	struct ltx_wentry *w, *next = cd->ws_next;

	if (__atomic_load_n(&cd->resizing, __ATOMIC_RELAXED))
		return;
	/* Doomed, so not irrevocable: no entry was taken from a holder. */
	for (w = cd->ws_base; w < next; w++)
		unlock_entry(w, w->old_version);
	/* The next entry may never have been used: its orec is trusted
	 * only if it points into the table. */
	if (next < cd->ws_end &&
	    (uintptr_t)next->orec - (uintptr_t)cd->orecs <= cd->orec_mask &&
	    ((uintptr_t)next->orec & (sizeof(uintptr_t) - 1)) == 0)
		unlock_entry(next, next->old_version);
}

/*
 * Become irrevocable: take every line read so far in E.  A line read at a
 * version the snapshot still covers and locked now at that same version
 * cannot have changed in between.  Fails (no waiting: this transaction
 * may hold lines others wait for) if one of them changed or is held.
 * Afterwards limit is 0, so every operation takes the slow path, where
 * reads take lines too, conflicts wait, and validation is trivial.
 */
static unsigned inv_make_irrevocable(struct ltx_cd *cd)
{
	unsigned cause = 0;

	for (struct ltx_rentry *r = cd->rs_base; r < cd->rs_next; r++) {
		for (;;) {
			uintptr_t v =
				__atomic_load_n(r->orec, __ATOMIC_RELAXED);

			if (ltx_orec_locked(v)) {
				if (owned_head(cd, v) == NULL)
					return CONFLICT_CAUSE;
				break;
			}
			if (v > cd->snapshot)
				return VALIDATE_CAUSE;
			if (lock_orec(cd, r->orec, v, 0, &cause) != NULL)
				break;
			if (cause != 0)
				return cause;
		}
	}
	cd->limit = 0;
	return 0;
}

/* For the fault handler: loads of orecs only (the table is never unmapped). */
static bool inv_valid_now(const struct ltx_cd *cd)
{
	return ltx_inv_reads_valid(cd);
}

static void inv_bump_line(struct ltx_cd *cd, const void *addr)
{
	uintptr_t *orec = ltx_orec_of(cd, addr);
	struct ltx_wentry *h =
		owned_head(cd, __atomic_load_n(orec, __ATOMIC_RELAXED));

	/* A lone head with BUMP set has link != 0: commit then releases it
	 * through released_version, which honours the flag. */
	if (h != NULL)
		h->flags |= LTX_WENTRY_BUMP;
}

/*
 * E or M for a line of ours in the write set (M once a byte is dirty); S
 * for a line read: from the directory on the counted path, else from the
 * read set, which knows orecs only, so a line sharing an orec with one
 * read shows S too; I otherwise.
 */
static unsigned inv_line_state(struct ltx_cd *cd, const void *addr)
{
	uintptr_t *orec = ltx_orec_of(cd, addr);
	uintptr_t line = (uintptr_t)addr & ~LTX_LINE_MASK;
	struct ltx_wentry *h =
		owned_head(cd, __atomic_load_n(orec, __ATOMIC_RELAXED));
	struct ltx_wentry *w = h != NULL ? find_line(cd, h, line) : NULL;

	if (w != NULL)
		return LTX_LINE_STATE(TM_XABORT, ltx_wset_dirty(w) ? 'M' : 'E');
	if (cd->counted) {
		struct ltx_line *e = ltx_lines_find(cd, line);

		if (e != NULL && (e->state & LTX_LINE_READ))
			return LTX_LINE_STATE(TM_NORMAL, 'S');
		return LTX_LINE_STATE(TM_EMPTY, 'I');
	}
	for (const struct ltx_rentry *r = cd->rs_base; r < cd->rs_next; r++)
		if (r->orec == orec)
			return LTX_LINE_STATE(TM_NORMAL, 'S');
	return LTX_LINE_STATE(TM_EMPTY, 'I');
}

/*
 * Fork (cd.h): the gone transaction cd was past its commit point; write
 * back its lines whose orec it still holds (it releases an orec only after
 * writing every line on it back, so those released are whole).
 */
void ltx_inv_fork_finish(struct ltx_cd *cd)
{
	for (struct ltx_wentry *w = cd->ws_base; w < cd->ws_next; w++) {
		const struct ltx_wentry *h =
			w->orec != NULL ? w : cd->ws_base + w->head;

		if (h->orec == NULL ||
		    __atomic_load_n(h->orec, __ATOMIC_RELAXED) !=
			    ltx_orec_lock_word(h))
			continue;
		ltx_wset_expand(w);
		if (w->mask != 0)
			ltx_wset_write_back(w, w->mask);
	}
}

/* Whether the lock word v is one of a kept cd's. */
static bool kept_lock(struct ltx_cd *const *keep, unsigned nkeep, uintptr_t v)
{
	for (unsigned i = 0; i < nkeep; i++)
		if (owned_head(keep[i], v) != NULL)
			return true;
	return false;
}

/*
 * Fork (cd.h): unlock every orec not held by a kept cd at a new version.
 * The whole table is scanned, not the gone write sets: a thread may have
 * been stopped between its lock and its log's update, or growing its log.
 */
void ltx_inv_fork_free(struct ltx_cd *const *keep, unsigned nkeep)
{
	uintptr_t *t = ltx_orec_table, ts;
	size_t n;

	if (t == NULL)
		return;
	ts = __atomic_add_fetch(&ltx_clock.now, 1, __ATOMIC_ACQ_REL);
	n = ltx_orec_mask / sizeof(uintptr_t) + 1;
	for (size_t i = 0; i < n; i++) {
		uintptr_t v = __atomic_load_n(&t[i], __ATOMIC_RELAXED);

		if (ltx_orec_locked(v) && !kept_lock(keep, nkeep, v))
			__atomic_store_n(&t[i], ts, __ATOMIC_RELEASE);
	}
}

const struct ltx_cd_ops ltx_cd_invisible = {
	.begin = inv_begin,
	.load = inv_load,
	.store = inv_store,
	.validate = inv_validate,
	.prepare = inv_prepare,
	.publish = inv_publish,
	.release = inv_release,
	.release_held = inv_release_held,
	.valid_now = inv_valid_now,
	.make_irrevocable = inv_make_irrevocable,
	.line_state = inv_line_state,
	.bump_line = inv_bump_line,
};
