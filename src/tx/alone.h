/* SPDX-License-Identifier: MIT */
/* A transaction that runs alone because no other thread uses ltx. */
#ifndef LTX_TX_ALONE_H
#define LTX_TX_ALONE_H

#include <stdbool.h>

#include "tx/desc.h"
#include "tx/serial.h"
#include "tx/stats.h"
#include "tx/tx.h"

/*
 * When the calling thread is the only one that holds a descriptor, a
 * transaction that must run alone (tx/serial.h, exclusive) has nobody to
 * wait for: it takes the token with one CAS and begins.  Inline, for the
 * libitm front end's begin (a GCC transaction of a lone thread runs
 * uninstrumented); tx.c's ltx_tx_begin_alone and ltx_tx_begin_exclusive
 * use the same steps.
 */

/*
 * Whether no other thread can run a transaction beside the exclusive
 * holder, so that there is nothing to drain: no other thread holds a
 * descriptor.  Seq_cst, after the holder's seq_cst CAS of the token: the
 * Dekker pair of tx/serial.h.  A thread that takes a descriptor and is
 * not counted by this load has its seq_cst increment of
 * ltx_tx_live_threads, and the full fence after it, ordered after the
 * load, hence after the CAS: its first begin's load of the token sees
 * the CAS, and it waits (serial_blocks; ltx_tx_fast_begin steps back).
 * A thread that gave its descriptor back had ended its transaction
 * first (thread_exit) and decremented the count with a release RMW,
 * which this load reads or follows in the count's RMW chain: whatever
 * that transaction did happens before the holder's direct accesses.
 */
static inline bool ltx_tx_alone_with_token(void)
{
	return __atomic_load_n(&ltx_tx_live_threads, __ATOMIC_SEQ_CST) <= 1;
}

/*
 * Whether a descriptor idle in state st is set for the settings with no
 * capacity limit (desc.h: LTX_IDLE, the invisible mode; LTX_IDLE_VISIBLE,
 * the visible one), so that the exclusive holder's transaction may begin
 * by ltx_tx_fast_begin_held.  Not LTX_IDLE_SLOW, which also stands for a
 * capacity limit (LTX_CAPACITY), the boot descriptor and the rest: tx.c's
 * begin() then.  (Due for the serial fallback does not matter here: the
 * token is held already, and begin() would not take it again.)
 */
static inline __attribute__((always_inline)) bool ltx_tx_idle_held(int st)
{
	/* One test, (st & ~LTX_IDLE_VISIBLE) == 0, in both modes. */
	_Static_assert(LTX_IDLE == 0 &&
			       (LTX_IDLE_VISIBLE & (LTX_IDLE_VISIBLE - 1)) == 0,
		       "LTX_IDLE_VISIBLE is a bit of its own");
	return st == LTX_IDLE || st == LTX_IDLE_VISIBLE;
}

/*
 * Begin the exclusive holder's transaction, for a descriptor for which
 * ltx_tx_idle_held holds: what tx.c's begin() does then, without its
 * detours.  The descriptor's mode, capacity limit (none) and counted flag
 * (0) are the settings' already (desc.h), so what is left is the mode's
 * begin and make_irrevocable, which with an empty read set come to
 * limit 0 in both modes: the invisible one arms the fast paths (as
 * ltx_tx_fast_begin) and make_irrevocable disarms them; the visible one
 * never arms them, and its make_irrevocable has nothing to take.  Limit
 * 0: every operation of the holder, a tm_* one included, takes the slow
 * path, which follows cd.irrevocable.  The visible mode's begin also does
 * first-use work, left to where it is needed: its table is made on the
 * first line requested (cd/visible.c, table_ready), and a handler
 * descriptor that has no reader slot yet reads as a thread without a
 * byte does (cd.h, slot).  Counted as begin() counts it: irrevocable, not
 * serial (the fallback did not take the token).  No token test after the
 * status store: tx holds it.
 */
static inline __attribute__((always_inline)) void
ltx_tx_fast_begin_held(struct ltx_tx *tx)
{
	tx->cause = 0;
	/* Release: as in ltx_tx_fast_begin (tx/fast.h). */
	__atomic_store_n(&tx->tx_id, tx->tx_id + 1, __ATOMIC_RELEASE);
	tx->cd.limit = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* Release: as in ltx_tx_fast_begin. */
	__atomic_store_n(&tx->status, LTX_ACTIVE, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	tx->slow |= LTX_SLOW_SERIAL;
	ltx_stats_write_begin(tx);
	tx->stats.irrevocable++;
	ltx_stats_write_end(tx);
}

/*
 * ltx_tx_begin_alone's common case inline (tx.h), for a descriptor for
 * which ltx_tx_idle_held holds, in either mode; the others take the
 * out-of-line one.
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_begin_alone(struct ltx_tx *tx)
{
	if (ltx_unlikely(!ltx_tx_idle_held(
		    __atomic_load_n(&tx->status, __ATOMIC_RELAXED))))
		return ltx_tx_begin_alone(tx);
	/* The count read first as a hint, so that threads that are not
	 * alone never write the token's line for nothing. */
	if (!ltx_tx_alone_hint() || ltx_unlikely(!ltx_serial_try_exclusive(tx)))
		return false;
	if (ltx_unlikely(!ltx_tx_alone_with_token())) {
		/* Nothing was done under it: give it back. */
		ltx_serial_release(tx);
		return false;
	}
	ltx_tx_fast_begin_held(tx);
	return true;
}

#endif /* LTX_TX_ALONE_H */
