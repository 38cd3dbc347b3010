/* SPDX-License-Identifier: MIT */
/* The fast paths of LT, LTX, ST and COMMIT, inlined into both front ends. */
#ifndef LTX_TX_FAST_H
#define LTX_TX_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "cd/invisible.h"
#include "cd/orec.h"
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

	if (ltx_unlikely(v >= cd->limit) &&
	    (!ltx_tx_fast_begin(tx) ||
	     (v = __atomic_load_n(orec, __ATOMIC_ACQUIRE)) >= cd->limit))
		return false;
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

/* LTX of the aligned word at addr. */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_load_excl(struct ltx_tx *tx, const void *addr, uint64_t *out)
{
	struct ltx_wentry *w = ltx_tx_fast_acquire(tx, addr);

	if (ltx_unlikely(w == NULL))
		return false;
	w->mask = 0;
	/* The line is ours: no committer can change it under us. */
	*out = ltx_load_word((const uint64_t *)addr);
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
	uintptr_t v = __atomic_load_n(orec, excl ? __ATOMIC_RELAXED
						 : __ATOMIC_ACQUIRE);
	struct ltx_wentry *w;

	if (ltx_likely(v < cd->limit)) {
		if (!excl)
			return ltx_inv_read(cd, orec, v, addr, out);
		w = ltx_inv_lock(cd, orec, v, addr);
		if (ltx_unlikely(w == NULL))
			return false;
		w->mask = 0;
		/* The line is ours: no committer can change it under us. */
		*out = ltx_load_word((const uint64_t *)addr);
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
 * COMMIT of a live read-only transaction of the fast paths, with nothing
 * to run at its end (no slow bit): forget the read set and go idle.
 * Returns false when the full commit is needed.
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_commit(struct ltx_tx *tx)
{
	if (ltx_unlikely(tx->slow != 0) || !ltx_inv_end_read_only(&tx->cd))
		return false;
	tx->end_state = 0; /* last_status and consec_aborts */
	/* Release: the reads are over before tm_free sees us idle. */
	__atomic_store_n(&tx->status, LTX_IDLE, __ATOMIC_RELEASE);
	return true;
}

#endif /* LTX_TX_FAST_H */
