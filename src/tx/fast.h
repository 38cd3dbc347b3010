/* SPDX-License-Identifier: MIT */
/* The fast paths of LT, LTX, ST and COMMIT, inlined into both front ends. */
#ifndef LTX_TX_FAST_H
#define LTX_TX_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "cd/invisible.h"
#include "cd/orec.h"
#include "cd/wset.h"
#include "tx/desc.h"
#include "tx/serial.h"
#include "tx/tx.h"

/*
 * The common case of each operation, in the invisible mode: a live
 * transaction (or an idle descriptor, which begins one here), an unlocked
 * line no newer than the snapshot, room in the logs.  Each returns false
 * for anything else, and the caller runs the complete operation
 * (tx/tx.h).  The conflict-detection steps are cd/invisible.h's; the
 * transaction layer adds its begin.
 */

/*
 * Begin a transaction without leaving the fast path: the descriptor is idle
 * in this mode (status LTX_IDLE, never the boot descriptor's LTX_IDLE_SLOW).
 * The limit is armed before status turns ACTIVE, so a signal handler that
 * dooms the transaction (it checks status, then clears limit) is never
 * undone.
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_begin(struct ltx_tx *tx)
{
	if (ltx_unlikely(__atomic_load_n(&tx->status, __ATOMIC_RELAXED) !=
			 LTX_IDLE))
		return false;
	ltx_inv_arm(&tx->cd);
	tx->cause = 0;
	/* Release: pairs with tm_free's acquire load of tx_id (tx/mem.c),
	 * which then knows the previous transaction's reads are over. */
	__atomic_store_n(&tx->tx_id, tx->tx_id + 1, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* Release: pairs with tm_free's acquire load of status, which then
	 * reads this transaction's tx_id. */
	__atomic_store_n(&tx->status, LTX_ACTIVE, __ATOMIC_RELEASE);
	/* The light side of tm_free's and the serial token's asymmetric
	 * fence (rt/fence.h): no later load moves above the status store. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (ltx_unlikely(ltx_serial_may_block())) {
		/* An exclusive transaction may run: take the begin back
		 * (status, then the count, as tx.c's step_back) and let the
		 * slow path's begin wait for it. */
		tx->cd.limit = 0;
		__atomic_store_n(&tx->status, LTX_IDLE, __ATOMIC_RELEASE);
		__atomic_store_n(&tx->tx_id, tx->tx_id - 1, __ATOMIC_RELEASE);
		return false;
	}
	return true;
}

/*
 * LT of the aligned word at addr.  On begin, the orec was read before the
 * transaction announced itself: it is read again, so that a line freed by
 * a tm_free that did not see this transaction shows its new version
 * (tx/mem.c).
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_load(struct ltx_tx *tx, const void *addr, uint64_t *out)
{
	struct ltx_cd *cd = &tx->cd;
	uintptr_t *orec = ltx_orec_of(cd, addr);
	uintptr_t v = __atomic_load_n(orec, __ATOMIC_ACQUIRE);

	if (ltx_unlikely(v >= cd->limit)) {
		/* No transaction yet (begin it), or one that is open: a line
		 * of its own (read after write: the orec's lock bit puts it
		 * above every limit), else the slow path. */
		if (!ltx_tx_fast_begin(tx))
			return cd->limit != 0 &&
			       ltx_inv_load_owned(cd, v, addr, out);
		if ((v = __atomic_load_n(orec, __ATOMIC_ACQUIRE)) >= cd->limit)
			return false;
	}
	return ltx_inv_read(cd, orec, v, addr, out);
}

/* The write-set entry of a line newly taken in E, or NULL. */
static inline __attribute__((always_inline)) struct ltx_wentry *
ltx_tx_fast_acquire(struct ltx_tx *tx, const void *addr)
{
	struct ltx_cd *cd = &tx->cd;
	uintptr_t *orec = ltx_orec_of(cd, addr);
	uintptr_t v = __atomic_load_n(orec, __ATOMIC_RELAXED);

	if (ltx_unlikely(v >= cd->limit) &&
	    (!ltx_tx_fast_begin(tx) || v >= cd->limit))
		return NULL;
	return ltx_inv_lock(cd, orec, v, addr);
}

/*
 * LTX of the aligned word at addr.  The word is read before the lock is
 * taken, not after: once the line is ours, an irrevocable transaction may
 * still doom us, take it and write it back (the progress rule,
 * cd/invisible.c), so a read after the lock could see its bytes.  Read
 * between the acquire load of the orec at v and the CAS from v, the word
 * is the data of version v: a commit in between would have changed the
 * orec, and the CAS (a release: the read stays before it) would fail.
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_load_excl(struct ltx_tx *tx, const void *addr, uint64_t *out)
{
	struct ltx_cd *cd = &tx->cd;
	uintptr_t *orec = ltx_orec_of(cd, addr);
	uintptr_t v = __atomic_load_n(orec, __ATOMIC_ACQUIRE);
	struct ltx_wentry *w;
	uint64_t x;

	if (ltx_unlikely(v >= cd->limit) &&
	    (!ltx_tx_fast_begin(tx) || v >= cd->limit))
		return false;
	x = ltx_load_word((const uint64_t *)addr);
	w = ltx_inv_lock(cd, orec, v, addr);
	if (ltx_unlikely(w == NULL))
		return false;
	LTX_TEST_FAST_READ(addr);
	w->mask = 0;
	*out = x;
	return true;
}

/*
 * tm_free's LTX of a word of a line of the block: the line taken in E on
 * the fast path, its new entry marked to get a new version at commit
 * (LTX_WENTRY_BUMP: readers with an older snapshot must not trust the
 * freed block).  False for the slow path (and its mode's bump_line).
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_take_bumped(struct ltx_tx *tx, const void *addr)
{
	struct ltx_wentry *w = ltx_tx_fast_acquire(tx, addr);

	if (ltx_unlikely(w == NULL))
		return false;
	w->mask = 0;
	w->link = LTX_WENTRY_LONE_BUMP;
	return true;
}

/* ST of the low size bytes of val to addr (aligned to size). */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_store(struct ltx_tx *tx, void *addr, uint64_t val, unsigned size)
{
	struct ltx_wentry *w = ltx_tx_fast_acquire(tx, addr);

	if (ltx_unlikely(w == NULL))
		return false;
	ltx_inv_first_store(w, addr, val, size);
	return true;
}

/*
 * LT (LTX if excl) of the aligned word at addr for a front end whose
 * transaction is already open (the libitm barriers: _ITM_beginTransaction
 * began it), so no begin is tried: a line new to the transaction, or one
 * it has written (read after write), with one hash and one read of the
 * orec for both.  Returns false for anything else.
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_load_open(struct ltx_tx *tx, const void *addr, bool excl,
		      uint64_t *out)
{
	struct ltx_cd *cd = &tx->cd;
	uintptr_t *orec = ltx_orec_of(cd, addr);
	uintptr_t v = __atomic_load_n(orec, __ATOMIC_ACQUIRE);
	struct ltx_wentry *w;
	uint64_t x;

	if (ltx_likely(v < cd->limit)) {
		if (!excl)
			return ltx_inv_read(cd, orec, v, addr, out);
		/* Read before the lock is taken, as in ltx_tx_fast_load_excl:
		 * once the line is ours an irrevocable transaction may doom
		 * us, take it and write it. */
		x = ltx_load_word((const uint64_t *)addr);
		w = ltx_inv_lock(cd, orec, v, addr);
		if (ltx_unlikely(w == NULL))
			return false;
		LTX_TEST_FAST_READ(addr);
		w->mask = 0;
		*out = x;
		return true;
	}
	return cd->limit != 0 && ltx_inv_load_owned(cd, v, addr, out);
}

/* ST of the low size bytes of val to addr (aligned to size), the same
 * way: a new line, or one the transaction holds alone already. */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_store_open(struct ltx_tx *tx, void *addr, uint64_t val,
		       unsigned size)
{
	struct ltx_cd *cd = &tx->cd;
	uintptr_t *orec = ltx_orec_of(cd, addr);
	uintptr_t v = __atomic_load_n(orec, __ATOMIC_RELAXED);
	struct ltx_wentry *w;

	if (ltx_likely(v < cd->limit)) {
		w = ltx_inv_lock(cd, orec, v, addr);
		if (ltx_unlikely(w == NULL))
			return false;
		ltx_inv_first_store(w, addr, val, size);
		return true;
	}
	return cd->limit != 0 && ltx_inv_store_owned(cd, v, addr, val, size);
}

/*
 * Out of line (tx.c): ltx_tx_commit_small, the small update commit below,
 * then the work of the slow bits that only come after a commit
 * (LTX_SLOW_AFTER: tm_malloc/tm_free, actions), for a transaction with no
 * other slow bit;
 * ltx_tx_fast_commit_revalidate, its path when another update committed
 * since the snapshot (the reads are checked, then it goes on with ts).
 */
bool ltx_tx_commit_small(struct ltx_tx *tx);
bool ltx_tx_fast_commit_revalidate(struct ltx_tx *tx, uintptr_t ts);

/* Write one lone entry back and release its orec at ts (a lone single
 * word, or a lone head with its dirty bytes; LTX alone keeps the version,
 * unless tm_free marked it LTX_WENTRY_BUMP).  See ltx_inv_publish for
 * the order. */
static inline __attribute__((always_inline)) void
ltx_tx_fast_publish_one(struct ltx_wentry *w, uintptr_t ts)
{
	uint64_t m;

	if (ltx_likely(w->link == LTX_WENTRY_LONE_SINGLE)) {
		__atomic_store_n((uint64_t *)w->single_addr, w->single_val,
				 __ATOMIC_RELEASE);
		__atomic_store_n(w->orec, ts, __ATOMIC_RELEASE);
		return;
	}
	m = w->mask;
	if (m != 0)
		ltx_wset_write_back(w, m);
	__atomic_store_n(w->orec,
			 m != 0 || w->link != 0 ? ts : w->old_version,
			 __ATOMIC_RELEASE);
}

/* Whether write-set entry w is a lone one (no chain, no flag but
 * LTX_WENTRY_SINGLE or LTX_WENTRY_BUMP alone): the fast commit takes those
 * only. */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_entry(const struct ltx_wentry *w)
{
	return w->link == LTX_WENTRY_LONE_SINGLE || w->link == 0 ||
	       w->link == LTX_WENTRY_LONE_BUMP;
}

/*
 * The small update commit: one or two lone write-set entries.  With a
 * clock value that needs no revalidation (no other update committed
 * since the snapshot) it calls nothing, so it saves no register.  tx.c
 * holds the out-of-line copy that tm_commit and TM_ATOMIC's end reach;
 * prepared is ltx_clock's new value when the caller took it already
 * (after revalidating), 0 otherwise.
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_commit_small(struct ltx_tx *tx, uintptr_t prepared)
{
	struct ltx_cd *cd = &tx->cd;
	struct ltx_wentry *w = cd->ws_base, *end = cd->ws_next;
	uintptr_t ts = prepared;

	if (ts == 0) {
		if (end == w) {
			/* Read-only (with slow bits that come after). */
			cd->rs_next = cd->rs_base;
			cd->limit = 0;
			tx->end_state = 0;
			__atomic_store_n(&tx->status, LTX_IDLE, __ATOMIC_RELEASE);
			return true;
		}
		if (ltx_unlikely(end - w > 2 || !ltx_tx_fast_entry(w) ||
				 (end - w == 2 && !ltx_tx_fast_entry(w + 1))))
			return false;
		/* ltx_inv_prepare; revalidation is the caller's slow path */
		ts = __atomic_add_fetch(&ltx_clock, 1, __ATOMIC_ACQ_REL);
		if (ltx_unlikely(ts != cd->snapshot + 1))
			return ltx_tx_fast_commit_revalidate(tx, ts);
	}
	/* The commit point, a CAS as in tx.c commit_point: a signal or an
	 * irrevocable transaction may have doomed us. */
	if (ltx_unlikely(!__atomic_compare_exchange_n(
		    &tx->status, &(int){LTX_ACTIVE}, LTX_COMMITTING, false,
		    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)))
		return false;
	ltx_tx_fast_publish_one(w, ts);
	if (end - w == 2)
		ltx_tx_fast_publish_one(w + 1, ts);
	/* The next transaction's lazy snapshot (ltx_inv_publish). */
	cd->snapshot = ts;
	cd->ws_next = w;
	cd->rs_next = cd->rs_base;
	cd->limit = 0;
	tx->stats.commits_rw++;
	tx->end_state = 0; /* last_status and consec_aborts */
	/* Release: the commit is over before tm_free sees us idle. */
	__atomic_store_n(&tx->status, LTX_IDLE, __ATOMIC_RELEASE);
	return true;
}

/*
 * COMMIT on the fast path (ltx_tx_fast_commit; ltx_tx_fast_commit_ro for
 * a read-only one alone): a transaction of the fast paths (limit != 0:
 * live, invisible, uncounted, not irrevocable) with no slow bit, read-only
 * or with one or two lone write-set entries -- what most transactions
 * are.  The same steps as the full commit (tx.c commit_live with
 * ltx_inv_prepare/ltx_inv_publish), with no mask loop, no action scan and
 * no statistics branch.  Returns false, having done nothing that matters,
 * for everything else (the full commit then runs; a clock value taken and
 * not used is harmless: the clock only has to grow).
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_commit_ro(struct ltx_tx *tx)
{
	struct ltx_cd *cd = &tx->cd;

	if (ltx_unlikely(tx->slow != 0) || ltx_unlikely(cd->limit == 0) ||
	    ltx_unlikely(cd->ws_next != cd->ws_base))
		return false;
	cd->rs_next = cd->rs_base;
	cd->limit = 0;
	tx->end_state = 0; /* last_status and consec_aborts */
	/* Release: the reads are over before tm_free sees us idle. */
	__atomic_store_n(&tx->status, LTX_IDLE, __ATOMIC_RELEASE);
	return true;
}

static inline __attribute__((always_inline)) bool
ltx_tx_fast_commit(struct ltx_tx *tx)
{
	/* The read-only case inline and leaf; the update out of line. */
	return ltx_tx_fast_commit_ro(tx) ||
	       ((tx->slow & ~LTX_SLOW_AFTER) == 0 && tx->cd.limit != 0 &&
		tx->cd.ws_next - tx->cd.ws_base <= 2 &&
		ltx_tx_commit_small(tx));
}

#endif /* LTX_TX_FAST_H */
