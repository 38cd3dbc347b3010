/* SPDX-License-Identifier: MIT */
/* Invisible mode: versioned orecs, global clock, snapshot extension. */
#include <ltx/tm.h>

#include <stdlib.h>
#include <string.h>

#include "cd/cd.h"
#include "cd/invisible.h"
#include "cd/orec.h"
#include "tx/serial.h"
#include "tx/tx.h"

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
 */

#define CONFLICT_CAUSE (TM_ABORT_CONFLICT | TM_ABORT_RETRY)
#define VALIDATE_CAUSE (TM_ABORT_CONFLICT | TM_ABORT_RETRY | TM_ABORT_VALIDATE)

/* The write-set entry heading an orec this transaction holds, or NULL. */
static struct ltx_wentry *owned_head(const struct ltx_tx *tx, uintptr_t v)
{
	uintptr_t p = v & ~LTX_OREC_LOCKED;

	if (!(v & LTX_OREC_LOCKED))
		return NULL;
	if (p - (uintptr_t)tx->ws_base >=
	    (uintptr_t)tx->ws_next - (uintptr_t)tx->ws_base)
		return NULL;
	return (struct ltx_wentry *)p;
}

static struct ltx_wentry *find_line(struct ltx_tx *tx, struct ltx_wentry *w,
				    uintptr_t line)
{
	for (;;) {
		if (w->line == line)
			return w;
		if (w->next == 0)
			return NULL;
		w = tx->ws_base + (w->next - 1);
	}
}

/* Is read-set entry r still valid (unchanged, or locked by us since)? */
static bool read_valid(const struct ltx_tx *tx, const struct ltx_rentry *r)
{
	uintptr_t cur = __atomic_load_n(r->orec, __ATOMIC_ACQUIRE);

	return cur < tx->limit || owned_head(tx, cur) != NULL;
}

static bool reads_valid(const struct ltx_tx *tx)
{
#ifdef LTX_TEST_BREAK_READ_VALIDATION
	/* A deliberately broken test build (tests/check_history_broken). */
	return true;
#endif
	for (const struct ltx_rentry *r = tx->rs_base; r < tx->rs_next; r++)
		if (!read_valid(tx, r))
			return false;
	return true;
}

/* Move the snapshot to the present if every read is still valid. */
static bool extend(struct ltx_tx *tx)
{
	uintptr_t now = __atomic_load_n(&ltx_clock, __ATOMIC_ACQUIRE);

	if (tx->irrevocable)
		return true; /* owns what it read; limit stays 0 */
	if (!reads_valid(tx))
		return false;
	tx->snapshot = now;
	tx->limit = now + 1;
	return true;
}

/* Double the read set.  Returns false when out of memory. */
static bool grow_reads(struct ltx_tx *tx)
{
	size_t n = (size_t)(tx->rs_end - tx->rs_base);
	size_t used = (size_t)(tx->rs_next - tx->rs_base);
	struct ltx_rentry *p = realloc(tx->rs_base, 2 * n * sizeof(*p));

	if (p == NULL)
		return false;
	tx->rs_base = p;
	tx->rs_next = p + used;
	tx->rs_end = p + 2 * n;
	return true;
}

/*
 * Double the write set.  Locked orecs point at their head entries, so they
 * are repointed at the new copies; they stay locked by us throughout, and
 * other threads only test the lock bit, so relaxed stores suffice.
 */
static bool grow_writes(struct ltx_tx *tx)
{
	size_t n = (size_t)(tx->ws_end - tx->ws_base);
	size_t used = (size_t)(tx->ws_next - tx->ws_base);
	struct ltx_wentry *p;

	if (tx->no_alloc ||
	    posix_memalign((void **)&p, LTX_LINE_SIZE, 2 * n * sizeof(*p)))
		return false;
	memcpy(p, tx->ws_base, used * sizeof(*p));
	for (size_t i = 0; i < used; i++)
		if (p[i].orec != NULL)
			__atomic_store_n(p[i].orec,
					 (uintptr_t)&p[i] | LTX_OREC_LOCKED,
					 __ATOMIC_RELAXED);
	free(tx->ws_base);
	tx->ws_base = p;
	tx->ws_next = p + used;
	tx->ws_end = p + 2 * n;
	return true;
}

/* A new entry for line on an orec we already hold, chained to head. */
static struct ltx_wentry *chain_entry(struct ltx_tx *tx, uint32_t head,
				      uintptr_t line)
{
	struct ltx_wentry *w, *h;

	if (tx->ws_next == tx->ws_end && !grow_writes(tx))
		return NULL;
	h = tx->ws_base + head;
	w = tx->ws_next++;
	w->line = line;
	w->orec = NULL;
	w->old_version = 0;
	w->mask = 0;
	w->flags = LTX_WENTRY_CHAINED;
	w->head = head;
	w->next = h->next;
	h->next = (uint32_t)(w - tx->ws_base) + 1;
	return w;
}

/*
 * Lock orec, seen unlocked at v, for a new head entry of line (0: a line
 * read before the transaction became irrevocable, whose address the read
 * set does not keep: it never matches a real line, and its entry only
 * releases the orec).  Returns the entry; NULL with *cause unset if the
 * orec changed (look again), set if out of memory.
 */
static struct ltx_wentry *lock_orec(struct ltx_tx *tx, uintptr_t *orec,
				    uintptr_t v, uintptr_t line,
				    unsigned *cause)
{
	struct ltx_wentry *w;

	if (tx->ws_next == tx->ws_end && !grow_writes(tx)) {
		*cause = TM_ABORT_NOMEM | TM_ABORT_CAPACITY;
		return NULL;
	}
	w = tx->ws_next;
	/* Acquire: as in ltx_inv_fast_acquire. */
	if (!__atomic_compare_exchange_n(orec, &v,
					 (uintptr_t)w | LTX_OREC_LOCKED, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return NULL;
	tx->ws_next = w + 1;
	w->line = line;
	w->orec = orec;
	w->old_version = v;
	w->link = 0;
	w->mask = 0;
	return w;
}

/*
 * The entry of the line holding addr, taking the line in E if needed.
 * Returns NULL with *cause set when the line is held by another
 * transaction, its version is too new for an unextendable snapshot, or
 * memory runs out.
 */
static struct ltx_wentry *acquire(struct ltx_tx *tx, const void *addr,
				  unsigned *cause)
{
	uintptr_t *orec = ltx_orec_at(tx->orecs, tx->orec_mask, tx->orec_mul, addr);
	uintptr_t line = (uintptr_t)addr & ~LTX_LINE_MASK;
	unsigned spins = 0;

	for (;;) {
		uintptr_t v = __atomic_load_n(orec, __ATOMIC_RELAXED);
		struct ltx_wentry *w, *h;

		if (tx->irrevocable && !(v & LTX_OREC_LOCKED)) {
			/* Any unlocked version is fine: see lock_orec. */
			w = lock_orec(tx, orec, v, line, cause);
			if (w != NULL || *cause != 0)
				return w;
			continue;
		}

		if (v & LTX_OREC_LOCKED) {
			h = owned_head(tx, v);
			if (h == NULL && tx->irrevocable) {
				/* The holder cannot commit: it will let go. */
				ltx_serial_wait(&spins);
				continue;
			}
			if (h == NULL) {
				*cause = CONFLICT_CAUSE;
				return NULL;
			}
			w = find_line(tx, h, line);
			if (w == NULL)
				w = chain_entry(tx, (uint32_t)(h - tx->ws_base),
						line);
			if (w == NULL)
				*cause = TM_ABORT_NOMEM | TM_ABORT_CAPACITY;
			return w;
		}
		if (v >= tx->limit) {
			if (!extend(tx)) {
				*cause = VALIDATE_CAUSE;
				return NULL;
			}
			continue;
		}
		if (tx->ws_next == tx->ws_end && !grow_writes(tx)) {
			*cause = TM_ABORT_NOMEM | TM_ABORT_CAPACITY;
			return NULL;
		}
		w = ltx_inv_fast_acquire(tx, addr);
		if (w != NULL) {
			w->mask = 0;
			return w;
		}
		/* The orec changed under us: look again. */
	}
}

/* addr's word as this transaction sees it: memory under its dirty bytes. */
static uint64_t merged_word(const struct ltx_wentry *w, const void *addr)
{
	uint64_t x = ltx_load_word((const uint64_t *)addr);
	unsigned i = (unsigned)(((uintptr_t)addr & LTX_LINE_MASK) >> 3);
	unsigned dirty = (unsigned)(w->mask >> (i * 8)) & 0xffu;
	uint64_t keep = 0;

	if (dirty == 0)
		return x;
	for (unsigned b = 0; b < 8; b++)
		if (dirty & (1u << b))
			keep |= (uint64_t)0xff << (b * 8);
	return (x & ~keep) | (w->data[i] & keep);
}

static void inv_begin(struct ltx_tx *tx)
{
	uintptr_t now = __atomic_load_n(&ltx_clock, __ATOMIC_ACQUIRE);

	tx->snapshot = now;
	tx->limit = now + 1;
}

static uint64_t inv_load(struct ltx_tx *tx, const void *addr, bool excl,
			 unsigned *cause)
{
	uintptr_t *orec = ltx_orec_at(tx->orecs, tx->orec_mask, tx->orec_mul, addr);
	unsigned spins = 0;
	uint64_t x;

	/* An irrevocable transaction takes every line it reads in E, so
	 * that nothing it read can change before it commits. */
	if (excl || tx->irrevocable) {
		struct ltx_wentry *w = acquire(tx, addr, cause);

		return w != NULL ? merged_word(w, addr) : 0;
	}
	for (;;) {
		uintptr_t v = __atomic_load_n(orec, __ATOMIC_ACQUIRE);

		if (v & LTX_OREC_LOCKED) {
			struct ltx_wentry *h = owned_head(tx, v), *w;

			if (h == NULL && tx->irrevocable) {
				ltx_serial_wait(&spins);
				continue;
			}
			if (h == NULL) {
				*cause = CONFLICT_CAUSE;
				return 0;
			}
			/* Read after write: the line may be buffered. */
			w = find_line(tx, h, (uintptr_t)addr & ~LTX_LINE_MASK);
			if (w != NULL)
				return merged_word(w, addr);
			return ltx_load_word((const uint64_t *)addr);
		}
		if (v >= tx->limit) {
			if (!extend(tx)) {
				*cause = VALIDATE_CAUSE;
				return 0;
			}
			continue;
		}
		if (tx->rs_next == tx->rs_end &&
		    (tx->no_alloc || !grow_reads(tx))) {
			*cause = TM_ABORT_NOMEM | TM_ABORT_CAPACITY;
			return 0;
		}
		if (ltx_inv_fast_load(tx, addr, &x))
			return x;
	}
}

static unsigned inv_store(struct ltx_tx *tx, void *addr, uint64_t val,
			  unsigned size)
{
	unsigned cause = 0;
	struct ltx_wentry *w = acquire(tx, addr, &cause);

	if (w != NULL)
		ltx_inv_buffer(w, addr, val, size);
	return cause;
}

static unsigned inv_validate(struct ltx_tx *tx)
{
	if (__atomic_load_n(&ltx_clock, __ATOMIC_ACQUIRE) == tx->snapshot)
		return 0;
	return extend(tx) ? 0 : VALIDATE_CAUSE;
}

/*
 * Write the dirty bytes of w back to memory (release stores: see the top).
 * Most often one aligned word was stored (one ST to the line); else,
 * usually every dirty word is dirty whole (ST of aligned words): then each
 * byte of the mask is 0x00 or 0xff, which spreading the low bit of each
 * byte reproduces, and the words are stored whole.
 */
static inline void write_back(const struct ltx_wentry *w, uint64_t m)
{
	const uint64_t low_bits = 0x0101010101010101ull;
	uint64_t *line = (uint64_t *)w->line;
	unsigned first = (unsigned)__builtin_ctzll(m);
	uint64_t words = m & low_bits;

	if (ltx_likely((m >> first) == 0xff && (first & 7) == 0)) {
		__atomic_store_n(&line[first >> 3], w->data[first >> 3],
				 __ATOMIC_RELEASE);
		return;
	}
	if (words * 0xff == m) {
		do {
			unsigned i = (unsigned)__builtin_ctzll(words) >> 3;

			__atomic_store_n(&line[i], w->data[i], __ATOMIC_RELEASE);
			words &= words - 1;
		} while (words != 0);
		return;
	}
	do {
		unsigned b = (unsigned)__builtin_ctzll(m);

		__atomic_store_n((uint8_t *)line + b,
				 ((const uint8_t *)w->data)[b],
				 __ATOMIC_RELEASE);
		m &= m - 1;
	} while (m != 0);
}

static void reset(struct ltx_tx *tx)
{
	tx->rs_next = tx->rs_base;
	tx->ws_next = tx->ws_base;
	tx->limit = 0;
}

/*
 * The value a head entry's orec gets at commit.  A line taken by LTX and
 * never stored keeps its old version: its data did not change, so readers
 * of it need not abort.  tm_free sets LTX_WENTRY_BUMP to force a new
 * version on the lines it frees, whatever was stored.
 */
static uintptr_t released_version(const struct ltx_wentry *h, uintptr_t ts)
{
	return (h->mask != 0 || (h->flags & LTX_WENTRY_BUMP)) ? ts
							      : h->old_version;
}

static unsigned inv_commit(struct ltx_tx *tx)
{
	struct ltx_wentry *w, *end = tx->ws_next;
	uintptr_t ts;
	bool chains = false;

	if (end == tx->ws_base) {
		/* Read-only: every read was valid at the snapshot. */
		reset(tx);
		return 0;
	}
	ts = __atomic_add_fetch(&ltx_clock, 1, __ATOMIC_ACQ_REL);
	/* An irrevocable transaction holds every line it read. */
	if (ts != tx->snapshot + 1 && !tx->irrevocable && !reads_valid(tx))
		return VALIDATE_CAUSE;
	/*
	 * The commit point.  A signal handler may have doomed the transaction
	 * at any instruction up to here (it only flips status from ACTIVE to
	 * DOOMED): honour it now.  From the store of LTX_COMMITTING on it is
	 * too late, the transaction commits, and the handler leaves it alone
	 * (the fault sandbox too: a fault while writing back is a real bug).
	 * A doom landing between the load and the store is lost, as if the
	 * signal had come just after the commit.
	 */
	if (ltx_unlikely(__atomic_load_n(&tx->status, __ATOMIC_RELAXED) !=
			 LTX_ACTIVE))
		return __atomic_load_n(&tx->cause, __ATOMIC_RELAXED) |
		       TM_ABORT_SIGNAL;
	__atomic_store_n(&tx->status, LTX_COMMITTING, __ATOMIC_RELAXED);
	/*
	 * Write back and release in one pass: an orec may be released once
	 * the lines it covers are written back.  An orec covering several of
	 * our lines (a chain) is released in a second pass, after all of
	 * them, which sit later in the write set than their head.
	 */
	for (w = tx->ws_base; w < end; w++) {
		uint64_t m = w->mask;

		if (m != 0)
			write_back(w, m);
		if (ltx_likely(w->link == 0)) {
			/* A lone head: LTX without ST keeps the version. */
			__atomic_store_n(w->orec, m != 0 ? ts : w->old_version,
					 __ATOMIC_RELEASE);
			continue;
		}
		chains = true;
		if (w->orec == NULL && m != 0)
			tx->ws_base[w->head].flags |= LTX_WENTRY_BUMP;
	}
	if (chains)
		for (w = tx->ws_base; w < end; w++)
			if (w->orec != NULL && w->link != 0)
				__atomic_store_n(w->orec,
						 released_version(w, ts),
						 __ATOMIC_RELEASE);
	reset(tx);
	return 0;
}

/* Abort: unlock every held orec at its old version (data never changed). */
static void inv_release(struct ltx_tx *tx)
{
	for (struct ltx_wentry *w = tx->ws_base; w < tx->ws_next; w++)
		if (w->orec != NULL)
			__atomic_store_n(w->orec, w->old_version,
					 __ATOMIC_RELEASE);
	reset(tx);
}

/*
 * Become irrevocable: take every line read so far in E.  A line read at a
 * version the snapshot still covers and locked now at that same version
 * cannot have changed in between.  Fails (no waiting: this transaction
 * may hold lines others wait for) if one of them changed or is held.
 * Afterwards limit is 0, so every operation takes the slow path, where
 * reads take lines too, conflicts wait, and validation is trivial.
 */
static unsigned inv_make_irrevocable(struct ltx_tx *tx)
{
	unsigned cause = 0;

	for (struct ltx_rentry *r = tx->rs_base; r < tx->rs_next; r++) {
		for (;;) {
			uintptr_t v = __atomic_load_n(r->orec, __ATOMIC_RELAXED);

			if (v & LTX_OREC_LOCKED) {
				if (owned_head(tx, v) == NULL)
					return CONFLICT_CAUSE;
				break;
			}
			if (v >= tx->limit)
				return VALIDATE_CAUSE;
			if (lock_orec(tx, r->orec, v, 0, &cause) != NULL)
				break;
			if (cause != 0)
				return cause;
		}
	}
	tx->limit = 0;
	return 0;
}

/* For the fault handler: loads of orecs only (the table is never unmapped). */
static bool inv_valid_now(const struct ltx_tx *tx)
{
	return reads_valid(tx);
}

void ltx_inv_bump_line(struct ltx_tx *tx, const void *addr)
{
	uintptr_t *orec =
		ltx_orec_at(tx->orecs, tx->orec_mask, tx->orec_mul, addr);
	struct ltx_wentry *h =
		owned_head(tx, __atomic_load_n(orec, __ATOMIC_RELAXED));

	/* A lone head with BUMP set has link != 0: commit then releases it
	 * through released_version, which honours the flag. */
	if (h != NULL)
		h->flags |= LTX_WENTRY_BUMP;
}

const struct ltx_cd_ops ltx_cd_invisible = {
	.name = "invisible",
	.begin = inv_begin,
	.load = inv_load,
	.store = inv_store,
	.validate = inv_validate,
	.commit = inv_commit,
	.release = inv_release,
	.valid_now = inv_valid_now,
	.make_irrevocable = inv_make_irrevocable,
};
