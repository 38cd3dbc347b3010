/* SPDX-License-Identifier: MIT */
/* Invisible mode: the inlined fast paths of LT, LTX and ST. */
#ifndef LTX_CD_INVISIBLE_H
#define LTX_CD_INVISIBLE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cd/orec.h"
#include "tx/desc.h"

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
 * The fast paths below handle only the common case and return false for
 * anything else (no transaction yet, doomed, the line locked by anyone or
 * newer than the snapshot, a log full); the transaction layer then runs the
 * complete operation (invisible.c).
 */

/*
 * Begin a transaction without leaving the fast path: the descriptor is idle
 * in this mode (status LTX_IDLE, never the boot descriptor's LTX_IDLE_SLOW).
 * limit is armed before status turns ACTIVE, so a signal handler that dooms
 * the transaction (it checks status, then clears limit) is never undone.
 * An orec value read before the snapshot is still fine to use: the load
 * below rechecks it after reading the data, so it held across the snapshot.
 */
static inline __attribute__((always_inline)) bool
ltx_inv_fast_begin(struct ltx_tx *tx)
{
	uintptr_t now;

	if (ltx_unlikely(__atomic_load_n(&tx->status, __ATOMIC_RELAXED) !=
			 LTX_IDLE))
		return false;
	/*
	 * Lazy snapshot: start from the last clock value this thread saw (at
	 * its last commit or extension) instead of reading the shared clock,
	 * whose line every update commit of every thread writes.  An older
	 * snapshot is as consistent as a fresh one (a line at a version no
	 * newer than it has not changed since); the first line found newer
	 * extends it, which reads the clock only when it is needed.
	 */
	now = tx->snapshot;
	tx->limit = now + 1;
	tx->cause = 0;
	/* Release: pairs with tm_free's acquire load of tx_id (tx/mem.c),
	 * which then knows the previous transaction's reads are over. */
	__atomic_store_n(&tx->tx_id, tx->tx_id + 1, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* Release: pairs with tm_free's acquire load of status, which then
	 * reads this transaction's tx_id. */
	__atomic_store_n(&tx->status, LTX_ACTIVE, __ATOMIC_RELEASE);
	/* The light side of tm_free's asymmetric fence (rt/fence.h): no orec
	 * or memory load of the transaction moves above the status store. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return true;
}

static inline __attribute__((always_inline)) bool
ltx_inv_fast_load(struct ltx_tx *tx, const void *addr, uint64_t *out)
{
	uintptr_t *orec = ltx_orec_at(tx->orecs, tx->orec_mask, tx->orec_mul, addr);
	uintptr_t v = __atomic_load_n(orec, __ATOMIC_ACQUIRE);
	struct ltx_rentry *r;
	uint64_t x;

	/* On begin, v was read before the transaction announced itself:
	 * read it again, so that a line freed by a tm_free that did not see
	 * this transaction shows its new version (tx/mem.c). */
	if (ltx_unlikely(v >= tx->limit) &&
	    (!ltx_inv_fast_begin(tx) ||
	     (v = __atomic_load_n(orec, __ATOMIC_ACQUIRE)) >= tx->limit))
		return false;
	x = ltx_load_word((const uint64_t *)addr);
#ifndef LTX_TEST_BREAK_READ_VALIDATION /* tests/check_history_broken */
	if (ltx_unlikely(ltx_word_changed(orec, v)))
		return false;
#endif
	r = tx->rs_next;
	if (ltx_unlikely(r == tx->rs_end))
		return false;
	r->orec = orec;
	tx->rs_next = r + 1;
	*out = x;
	return true;
}

/*
 * First LTX or ST of a line whose orec is free: lock the orec for a new
 * write-set entry.  Returns the entry, or NULL for the slow path.
 * Synchronization: the CAS is acquire so that nothing this transaction does
 * with the line moves before it; the data is published later, at commit, by
 * release stores made while the lock is held.
 */
static inline __attribute__((always_inline)) struct ltx_wentry *
ltx_inv_fast_acquire(struct ltx_tx *tx, const void *addr)
{
	uintptr_t *orec = ltx_orec_at(tx->orecs, tx->orec_mask, tx->orec_mul, addr);
	uintptr_t v = __atomic_load_n(orec, __ATOMIC_RELAXED);
	struct ltx_wentry *w = tx->ws_next;

	if (ltx_unlikely(v >= tx->limit) &&
	    (!ltx_inv_fast_begin(tx) || v >= tx->limit))
		return NULL;
	if (ltx_unlikely(w == tx->ws_end))
		return NULL;
	if (ltx_unlikely(!__atomic_compare_exchange_n(
		    orec, &v, (uintptr_t)w | LTX_OREC_LOCKED, false,
		    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)))
		return NULL;
	tx->ws_next = w + 1;
	w->line = (uintptr_t)addr & ~LTX_LINE_MASK;
	w->orec = orec;
	w->old_version = v;
	w->link = 0;
	return w;
}

/*
 * ST to a line this transaction already holds alone on its orec (after
 * LTX, or a first ST): add the bytes to its entry.  The orec points at the
 * entry, which must lie in our write set (only then is the line ours: see
 * owned_head in invisible.c); a doomed transaction's set is empty.
 * Returns false for anything else (chains, flags: the slow path).
 */
static inline __attribute__((always_inline)) bool
ltx_inv_fast_store_owned(struct ltx_tx *tx, void *addr, uint64_t val,
			 unsigned size)
{
	uintptr_t *orec =
		ltx_orec_at(tx->orecs, tx->orec_mask, tx->orec_mul, addr);
	uintptr_t v = __atomic_load_n(orec, __ATOMIC_RELAXED);
	struct ltx_wentry *w = (struct ltx_wentry *)(v & ~LTX_OREC_LOCKED);
	unsigned off = (unsigned)((uintptr_t)addr & LTX_LINE_MASK);

	if (!(v & LTX_OREC_LOCKED) ||
	    (uintptr_t)w - (uintptr_t)tx->ws_base >=
		    (uintptr_t)tx->ws_next - (uintptr_t)tx->ws_base ||
	    w->line != ((uintptr_t)addr & ~LTX_LINE_MASK))
		return false;
	if (w->link == 0) {
		memcpy((char *)w->data + off, &val, size); /* little-endian */
		w->mask |= (uint64_t)((1u << size) - 1) << off;
		return true;
	}
	if (size == 8 && w->link == LTX_WENTRY_LONE_SINGLE &&
	    w->single_addr == (uintptr_t)addr) {
		w->single_val = val; /* the same word again */
		return true;
	}
	return false;
}

static inline __attribute__((always_inline)) bool
ltx_inv_fast_store(struct ltx_tx *tx, void *addr,
				      uint64_t val, unsigned size)
{
	struct ltx_wentry *w = ltx_inv_fast_acquire(tx, addr);
	unsigned off = (unsigned)((uintptr_t)addr & LTX_LINE_MASK);

	if (ltx_unlikely(w == NULL))
		return false;
	if (size == 8) {
		/* A whole aligned word: kept aside (LTX_WENTRY_SINGLE). */
		w->link = LTX_WENTRY_LONE_SINGLE;
		w->single_addr = (uintptr_t)addr;
		w->single_val = val;
		return true;
	}
	memcpy((char *)w->data + off, &val, size); /* little-endian */
	w->mask = (uint64_t)((1u << size) - 1) << off;
	return true;
}

static inline __attribute__((always_inline)) bool
ltx_inv_fast_load_excl(struct ltx_tx *tx,
					  const void *addr, uint64_t *out)
{
	struct ltx_wentry *w = ltx_inv_fast_acquire(tx, addr);

	if (ltx_unlikely(w == NULL))
		return false;
	w->mask = 0;
	/* The line is ours: no committer can change it under us. */
	*out = ltx_load_word((const uint64_t *)addr);
	return true;
}

/*
 * ltx_inv_bump_line: the line holding addr, which tx holds in E (LTX), gets
 * a new version when tx commits even if no byte of it is stored (tm_free:
 * readers with an older snapshot must not trust it any more).  Does nothing
 * if tx does not hold the line (it is then doomed).
 */
void ltx_inv_bump_line(struct ltx_tx *tx, const void *addr);

#endif /* LTX_CD_INVISIBLE_H */
