/* SPDX-License-Identifier: MIT */
/* Invisible mode: the inlined fast paths of LT, LTX and ST. */
#ifndef LTX_CD_INVISIBLE_H
#define LTX_CD_INVISIBLE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <ltx/tm.h>

#include "cd/cd.h"
#include "cd/orec.h"
#include "cd/wset.h"

LTX_SIZED_COPIES_BEGIN

/* The fast paths' race window (LTX_TEST_HOOK, cd.h): between finding a
 * line held by the transaction and reading memory under it. */
#define LTX_TEST_FAST_READ(addr) LTX_TEST_HOOK(fast_read, addr)

/*
 * The invisible mode follows LSA/TinySTM's write-back, encounter-time
 * locking design (Riegel, Felber, Fetzer, DISC 2006; Felber, Fetzer, Riegel,
 * PPoPP 2008): a global version clock, one versioned orec per hashed line,
 * reads that leave no trace in shared memory and are validated at each load
 * against a snapshot that is extended when a newer version shows up, and
 * LTX/ST that lock the line's orec when they first touch it (the article's
 * E state) and buffer the new bytes in the write set until commit.
 *
 * Synchronization (reader side, a seqlock read per load):
 *   v1 = load-acquire(orec)      pairs with the committer's release store of
 *                                the new version (data written before it)
 *   x  = load-acquire(word)      pairs with the committer's release stores of
 *                                the data, which it makes only while holding
 *                                the orec: if x is new data, the reload below
 *                                sees the orec locked or with a new version
 *   v2 = load-relaxed(orec)      ordered after x by x's acquire
 *   v1 == v2, unlocked, <= snapshot: x belongs to the snapshot.
 * These are plain movs on x86-64; the orders are what the compiler must keep.
 *
 * The fast paths handle only the common case and return false for
 * anything else (no transaction yet, doomed, the line locked by anyone or
 * newer than the snapshot, a log full); the transaction layer then runs the
 * complete operation (invisible.c).
 */

/*
 * The pieces the transaction layer's fast paths are made of (tx/fast.h
 * puts them together with its begin).  An orec value v read before the
 * transaction began is still fine to use with them: the read rechecks it
 * after loading the data, and a lock is a CAS from v.
 */

/* Arm the fast paths of a transaction beginning with a lazy snapshot:
 * the last clock value this thread saw (see inv_begin in invisible.c). */
static inline __attribute__((always_inline)) void ltx_inv_arm(struct ltx_cd *cd)
{
	cd->limit = cd->snapshot + 1;
}

/*
 * LT of the word at addr under orec, seen at v (unlocked, below limit):
 * the seqlock read above, then the read is logged.  Returns false for
 * the slow path (the orec changed, or the read set is full).
 */
static inline __attribute__((always_inline)) bool
ltx_inv_read(struct ltx_cd *cd, uintptr_t *orec, uintptr_t v, const void *addr,
	     uint64_t *out)
{
	struct ltx_rentry *r;
	uint64_t x;

	x = ltx_load_word((const uint64_t *)addr);
#ifndef LTX_TEST_BREAK_READ_VALIDATION /* tests/check_history_broken */
	if (ltx_unlikely(ltx_word_changed(orec, v)))
		return false;
#endif
	r = cd->rs_next;
	if (ltx_unlikely(r == cd->rs_end))
		return false;
	r->orec = orec;
	LTX_BUMP(cd->rs_next, sizeof(*r));
	*out = x;
	return true;
}

/*
 * First LTX or ST of a line whose orec was seen free at v (below limit):
 * lock the orec for a new write-set entry.  Returns the entry, or NULL for
 * the slow path.  Synchronization: the CAS is acquire so that nothing the
 * transaction does with the line moves before it; the data is published
 * later, at commit, by release stores made while the lock is held.  It is
 * a release too (the same lock cmpxchg on x86-64): an irrevocable
 * transaction that reads the lock word then sees this transaction's
 * status as it was when it locked, or later (invisible.c, take_held).
 */
static inline __attribute__((always_inline)) struct ltx_wentry *
ltx_inv_lock(struct ltx_cd *cd, uintptr_t *orec, uintptr_t v, const void *addr)
{
	struct ltx_wentry *w = cd->ws_next;

	if (ltx_unlikely(w == cd->ws_end))
		return NULL;
	/* Filled before the CAS: a signal handler that lands right after
	 * it finds the orec it took and its old version (release_held). */
	w->orec = orec;
	w->old_version = v;
	if (ltx_unlikely(!__atomic_compare_exchange_n(
		    orec, &v, ltx_orec_lock_word(w), false, __ATOMIC_ACQ_REL,
		    __ATOMIC_RELAXED)))
		return NULL;
	cd->ws_next = w + 1;
	w->line = (uintptr_t)addr & ~LTX_LINE_MASK;
	w->link = 0;
	w->single_addr = LTX_WENTRY_NO_SINGLE;
	return w;
}

/* The first ST of a line just locked: an aligned word is kept aside
 * (LTX_WENTRY_SINGLE), anything smaller goes into data and mask. */
static inline __attribute__((always_inline)) void
ltx_inv_first_store(struct ltx_wentry *w, void *addr, uint64_t val,
		    unsigned size)
{
	unsigned off = (unsigned)((uintptr_t)addr & LTX_LINE_MASK);

	if (size == 8) {
		w->link = LTX_WENTRY_LONE_SINGLE;
		w->single_addr = (uintptr_t)addr;
		w->single_val = val;
		return;
	}
	memcpy((char *)w->data + off, &val, size); /* little-endian */
	w->mask = (uint64_t)((1u << size) - 1) << off;
}

/*
 * The entry through which this transaction holds addr's line alone, from
 * the orec value v (locked, pointing into our write set: only then is the
 * line ours, see owned_head in invisible.c; a doomed transaction's set is
 * empty), or NULL: not ours, or not the head of a lone orec.
 */
static inline __attribute__((always_inline)) struct ltx_wentry *
ltx_inv_owned_entry(const struct ltx_cd *cd, uintptr_t v, const void *addr)
{
	struct ltx_wentry *w = ltx_orec_entry(v);

	if (!ltx_orec_locked(v) ||
	    (uintptr_t)w - (uintptr_t)cd->ws_base >=
		    (uintptr_t)cd->ws_next - (uintptr_t)cd->ws_base ||
	    w->line != ((uintptr_t)addr & ~LTX_LINE_MASK))
		return NULL;
	return w;
}

/*
 * ST to a line this transaction already holds alone on its orec, seen at
 * v (after LTX, or a first ST): add the bytes to its entry.  The first
 * aligned word stored on a line taken by LTX is kept aside
 * (LTX_WENTRY_SINGLE), as a first ST's is; a line whose one store so far
 * was kept aside takes a second word in the general form.  Returns false for
 * anything else (not ours, chains, other flags: the slow path).
 */
static inline __attribute__((always_inline)) bool
ltx_inv_store_owned(struct ltx_cd *cd, uintptr_t v, void *addr, uint64_t val,
		    unsigned size)
{
	struct ltx_wentry *w = ltx_inv_owned_entry(cd, v, addr);
	unsigned off = (unsigned)((uintptr_t)addr & LTX_LINE_MASK);

	if (w == NULL)
		return false;
	/* A lone head first (after LTX: a read-modify-write), one test. */
	if (w->link == 0) {
		/* Nothing stored yet (LTX alone leaves mask 0): the word is
		 * kept aside as a first ST would, so that the commit is the
		 * fast one's single store. */
		if (size == 8 && w->mask == 0) {
			ltx_inv_first_store(w, addr, val, size);
			return true;
		}
	} else {
		if (w->link != LTX_WENTRY_LONE_SINGLE)
			return false;
		if (size == 8 && w->single_addr == (uintptr_t)addr) {
			w->single_val = val; /* the same word again */
			return true;
		}
		/* Another word of the line (the next field of a node): the
		 * general form, then the new bytes. */
		ltx_wset_expand(w);
	}
	memcpy((char *)w->data + off, &val, size); /* little-endian */
	w->mask |= (uint64_t)((1u << size) - 1) << off;
	return true;
}

/* The same, reading the orec. */
static inline __attribute__((always_inline)) bool
ltx_inv_fast_store_owned(struct ltx_cd *cd, void *addr, uint64_t val,
			 unsigned size)
{
	return ltx_inv_store_owned(
		cd, __atomic_load_n(ltx_orec_of(cd, addr), __ATOMIC_RELAXED),
		addr, val, size);
}

/*
 * LT of the word at addr from the orec value *vp, seen at or above limit by
 * a transaction that the caller knows is not an idle descriptor of the
 * fast paths: read after write, the common case, where v is our lock word
 * on the entry of addr's line and that line's one store so far is addr's
 * word, kept aside (LTX_WENTRY_SINGLE: whatever else the entry is, a
 * chain's head or marked by tm_free, that word is in single_val).  The
 * answer is the transaction's own data, from its entry: no byte of memory
 * is read, so nothing is checked again.  The flag is not tested:
 * single_addr == addr says it (an entry without it has
 * LTX_WENTRY_NO_SINGLE there, cd.h).  addr need not be aligned: a
 * misaligned one never equals single_addr (aligned with the flag, and
 * LTX_WENTRY_NO_SINGLE is no address a load asks for), so it gets false
 * (the caller's misaligned path then).  On false, *vp is v again.
 *
 * Ours is one compare, v - ws_key < ws_span (ltx_cd_ws_bounds): v points
 * into our write set's allocation.  Only our own lock words can: another
 * transaction's lock word points into its own write set, a live
 * allocation while the orec holds it, and two live allocations do not
 * overlap.  A lock word left in an orec never outlives its allocation:
 * grow_writes (invisible.c) moves every lock word of the old set to the
 * new one (or an irrevocable taker has put its own there) before it frees
 * the old set, and the allocator orders that free before any later
 * allocation of the same memory (by us or anyone), hence before our load
 * of v.  An unlocked v fails the compare (ltx_cd_ws_bounds).  And our
 * lock word names an entry we hold, below ws_next, at every point where
 * this thread runs a load: entries are released (their orecs given back)
 * before ws_next comes down, and taken (ws_next raised) right after the
 * CAS, with no load of this descriptor in between (a signal handler's
 * transactions run on a descriptor of their own).
 *
 * The orec holds our lock word only while we hold the line, whatever the
 * transaction's state: an idle descriptor and a transaction doomed by its
 * own thread hold nothing (release empties the write set), one doomed by
 * a signal handler has let go of its lines (release_held), one doomed by
 * an irrevocable transaction holds its line until that one takes it (the
 * word is still its own, as it would be had the load come first, and the
 * first slow path after the doom empties the write set).  A counted
 * transaction's load of a line it holds in E charges nothing
 * (ltx_lines_charge: a hit), and an irrevocable one holds the line
 * already: both get the answer their slow path gives.  Returns false for
 * anything else (ltx_inv_load_owned, then the slow path).  <ltx/inline.h>
 * has the same steps.
 */
static inline __attribute__((always_inline)) bool
ltx_inv_load_single(const struct ltx_cd *cd, uintptr_t *vp, const void *addr,
		    uint64_t *out)
{
	uintptr_t off = *vp - cd->ws_key;
	uintptr_t w;

	/*
	 * On a miss *vp is made again, from off or from w: the empty asm
	 * hides that it is v (and, clobbering memory, that ws_key is the
	 * value already loaded), so that the compiler keeps no copy of v
	 * nor of ws_key for the miss: off takes v's register, w off's, and
	 * the hit path moves nothing.
	 */
	if (off >= cd->ws_span) {
		__asm__("" : "+r"(off) : : "memory");
		*vp = off + cd->ws_key;
		return false;
	}
	w = (uintptr_t)cd->ws_base + off;
	/* LTX_WENTRY_SINGLE with addr's word: single_addr == addr says
	 * both (LTX_WENTRY_NO_SINGLE). */
	if (((const struct ltx_wentry *)w)->single_addr != (uintptr_t)addr) {
		__asm__("" : "+r"(w));
		*vp = w | LTX_OREC_LOCKED;
		return false;
	}
	*out = ((const struct ltx_wentry *)w)->single_val;
	return true;
}

/*
 * LT or LTX of the aligned word at addr on a line this transaction holds
 * alone on its orec, seen at v (read after write): the word as the
 * transaction sees it, its buffered bytes over memory's.  The entry is
 * only read: a lone word kept aside (LTX_WENTRY_SINGLE) is answered from
 * there.  Nothing to log: a line held needs no validation.  For a live,
 * uncounted transaction (limit != 0: a counted one's loads are charged in
 * invisible.c).  Returns false for anything else (not ours, chains: the
 * slow path).
 */
static inline __attribute__((always_inline)) bool
ltx_inv_load_owned(const struct ltx_cd *cd, uintptr_t v, const void *addr,
		   uint64_t *out)
{
	const struct ltx_wentry *w = ltx_inv_owned_entry(cd, v, addr);

	if (w == NULL)
		return false;
	/* The common case first: the line's one store so far, a word kept
	 * aside (LTX_WENTRY_SINGLE), as after a tm_st of it.  That word is
	 * answered from the entry: the transaction's own data, no byte of
	 * memory read, nothing to check again (ltx_inv_load_single). */
	if (ltx_likely(w->link == LTX_WENTRY_LONE_SINGLE)) {
		if (w->single_addr == (uintptr_t)addr) {
			*out = w->single_val;
			return true;
		}
		/* Another word of that line, from memory. */
		LTX_TEST_FAST_READ(addr);
		*out = ltx_load_word((const uint64_t *)addr);
	} else if (w->link == 0 || w->link == LTX_WENTRY_LONE_BUMP) {
		/* A lone head, or one tm_free marked for a new version (its
		 * bytes are still the transaction's to read). */
		LTX_TEST_FAST_READ(addr);
		*out = ltx_wset_merged_word(w, addr);
	} else {
		return false;
	}
	/*
	 * The bytes not written come from memory.  An irrevocable
	 * transaction may have doomed us and taken the line (the progress
	 * rule, cd/invisible.c): it changes the orec before it writes the
	 * line, so if the orec still holds our lock word after the read,
	 * the read saw the line as we took it.  Otherwise the slow path
	 * finds the transaction doomed.  (check_history under ASan: a
	 * word read twice with two values in a live transaction.)
	 */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(w->orec, __ATOMIC_RELAXED) == v;
}

/*
 * COMMIT of a live read-only transaction of the fast paths (limit != 0:
 * live and uncounted), where every read was validated when it was made:
 * just forget the read set.  Returns false when the full commit is needed.
 */
static inline __attribute__((always_inline)) bool
ltx_inv_end_read_only(struct ltx_cd *cd)
{
	if (ltx_unlikely(cd->limit == 0 || cd->ws_next != cd->ws_base))
		return false;
	cd->rs_next = cd->rs_base;
	cd->limit = 0;
	return true;
}

/* Is every read of the transaction still valid (invisible.c)? */
bool ltx_inv_reads_valid(const struct ltx_cd *cd);

/* The counted path's end of a commit (invisible.c). */
void ltx_inv_counted_end(struct ltx_cd *cd);

/* The invisible mode's halves of ltx_cd_fork_finish and
 * ltx_cd_fork_free (cd.h). */
void ltx_inv_fork_finish(struct ltx_cd *cd);
void ltx_inv_fork_free(struct ltx_cd *const *keep, unsigned nkeep);

#define LTX_INV_VALIDATE_CAUSE                                                 \
	(TM_ABORT_CONFLICT | TM_ABORT_RETRY | TM_ABORT_VALIDATE)

/* Empty the logs and disarm the fast paths. */
static inline void ltx_inv_reset(struct ltx_cd *cd)
{
	cd->rs_next = cd->rs_base;
	cd->ws_next = cd->ws_base;
	cd->limit = 0;
}

/*
 * Commit, first half (cd.h, prepare): fix the commit version *ts (the
 * clock, acq_rel fetch-add, after every written line is locked) and check
 * the reads if another update committed since the snapshot.  A read-only
 * transaction needs neither: every read was valid at the snapshot.
 */
static inline __attribute__((always_inline)) unsigned
ltx_inv_prepare(struct ltx_cd *cd, uintptr_t *ts)
{
	if (cd->ws_next == cd->ws_base)
		return 0;
	*ts = __atomic_add_fetch(&ltx_clock.now, 1, __ATOMIC_ACQ_REL);
	/* An irrevocable transaction holds every line it read. */
	if (*ts != cd->snapshot + 1 && !cd->irrevocable &&
	    !ltx_inv_reads_valid(cd))
		return LTX_INV_VALIDATE_CAUSE;
	return 0;
}

/*
 * The value a head entry's orec gets at commit.  A line taken by LTX and
 * never stored keeps its old version: its data did not change, so readers
 * of it need not abort.  tm_free sets LTX_WENTRY_BUMP to force a new
 * version on the lines it frees, whatever was stored.
 */
static inline uintptr_t ltx_inv_released_version(const struct ltx_wentry *h,
						 uintptr_t ts)
{
	return (ltx_wset_dirty(h) || (h->flags & LTX_WENTRY_BUMP))
		       ? ts
		       : h->old_version;
}

/*
 * Commit, second half (past the commit point): write the dirty bytes back
 * and release each orec with a release store of ts, so that a reader that
 * sees a new byte sees the orec locked or at ts on its reload, and
 * retries.  Write back and release go in one pass: an orec may be
 * released once the lines it covers are written back.  An orec covering
 * several of our lines (a chain) is released in a second pass, after all
 * of them, which sit later in the write set than their head.
 */
static inline __attribute__((always_inline)) void
ltx_inv_publish(struct ltx_cd *cd, uintptr_t ts)
{
	struct ltx_wentry *w, *end = cd->ws_next;
	bool chains = false;

	if (end == cd->ws_base) {
		if (ltx_unlikely(cd->counted))
			ltx_inv_counted_end(cd);
		ltx_inv_reset(cd);
		return;
	}
	for (w = cd->ws_base; w < end; w++) {
		uint64_t m;

		if (ltx_likely(w->link == LTX_WENTRY_LONE_SINGLE)) {
			/* The common ST: one word, alone on its orec. */
			__atomic_store_n((uint64_t *)w->single_addr,
					 w->single_val, __ATOMIC_RELEASE);
			__atomic_store_n(w->orec, ts, __ATOMIC_RELEASE);
			continue;
		}
		if (ltx_likely(w->link == 0)) {
			/* A lone head (LTX, sub-word or several stores); LTX
			 * without ST keeps the version. */
			m = w->mask;
			if (m != 0)
				ltx_wset_write_back(w, m);
			__atomic_store_n(w->orec, m != 0 ? ts : w->old_version,
					 __ATOMIC_RELEASE);
			continue;
		}
		/* Chained or flagged: released in the second pass. */
		ltx_wset_expand(w);
		m = w->mask;
		if (m != 0)
			ltx_wset_write_back(w, m);
		chains = true;
		if (w->orec == NULL && m != 0)
			cd->ws_base[w->head].flags |= LTX_WENTRY_BUMP;
	}
	if (chains)
		for (w = cd->ws_base; w < end; w++)
			if (w->orec != NULL && w->link != 0 &&
			    w->link != LTX_WENTRY_LONE_SINGLE)
				__atomic_store_n(
					w->orec,
					ltx_inv_released_version(w, ts),
					__ATOMIC_RELEASE);
	/* The next transaction's lazy snapshot: no line is newer than ts
	 * but those still being committed, which are locked. */
	cd->snapshot = ts;
	if (ltx_unlikely(cd->counted)) {
		ltx_inv_counted_end(cd);
		return;
	}
	ltx_inv_reset(cd);
}

LTX_SIZED_COPIES_END

#endif /* LTX_CD_INVISIBLE_H */
