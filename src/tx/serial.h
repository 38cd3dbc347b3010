/* SPDX-License-Identifier: MIT */
/* The serial token: irrevocable transactions, and transactions alone. */
#ifndef LTX_TX_SERIAL_H
#define LTX_TX_SERIAL_H

#include <stdbool.h>
#include <stdint.h>

#include "rt/signal.h"
#include "tx/desc.h"

/*
 * One token for the whole process, held by at most one transaction at a
 * time, in one of two strengths:
 *
 * - irrevocable (shared): the holder takes every line it reads or writes
 *   (cd make_irrevocable) and never fails on a line others hold: it
 *   dooms a live holder and takes the line, and waits only for a holder
 *   that is committing, which ends in bounded time (the progress rule of
 *   DESIGN.md; cd.h, ltx_cd_holder).  Ordinary transactions keep running
 *   and committing beside it, on other lines, and never wait for
 *   anything, so it never aborts and never waits for ever, even for a
 *   transaction blocked outside ltx.  Two irrevocable ones would doom
 *   each other: hence the token.  tm_irrevocable(), the serial fallback
 *   (LTX_SERIAL_AFTER) and GCC transactions that restarted long use it.
 *
 * - exclusive: no other transaction runs at all.  The holder waits until
 *   every transaction running when it took the token has ended (the
 *   drain), and transactions that begin meanwhile wait for it at their
 *   begin.  For code that reads and writes memory directly: GCC's serial
 *   modes (uninstrumented code, irrevocable operations, closed nesting),
 *   whether the other transactions are GCC's or tm_*'s.  The drain does
 *   wait for live transactions: the holder writes memory behind the
 *   orecs' back, so a doomed one still running on its fast paths could
 *   read torn data without ever noticing.
 *
 * The token word is 0, or the holder's descriptor address with
 * LTX_SERIAL_EXCL set for the exclusive strength (descriptors are
 * 64-byte aligned).
 *
 * Synchronization (Dekker through an asymmetric fence, as tm_free's grace
 * periods, tx/mem.c; the algorithm of libitm's serial lock and of
 * liburcu's membarrier flavour):
 *   beginning transaction                exclusive taker
 *     store status ACTIVE (release)        CAS token 0 -> tx|EXCL (seq_cst)
 *     compiler barrier only                if another thread holds a
 *     load token (acquire)                   descriptor: ltx_fence_heavy()
 *                                          load each status (acquire)
 * The heavy fence makes every other thread execute a full barrier: a
 * transaction whose ACTIVE store came before its barrier is seen by the
 * drain, which waits for it; one whose token load comes after its barrier
 * sees the CAS and steps back (status idle again) to wait.  Without
 * another thread holding a descriptor there is nobody to fence: a thread
 * takes a descriptor (a seq_cst RMW on the live-thread count, then a
 * seq_cst fence, tx.c) before its first begin, and the taker reads the
 * count (seq_cst) after its CAS, so either it sees the newcomer, or the
 * newcomer's first token load sees the CAS.  The token is taken with an
 * acquire CAS and given back with a release store, so each holder sees
 * the previous one's commit; the drain's acquire loads of status pair
 * with the release stores of idle at every transaction end.  A beginning
 * transaction's token load is an acquire too (a plain load on x86-64):
 * one that finds no exclusive holder any more reads the release store
 * that ended the last one, or a later write of the token, made by a
 * holder after its own acquire of it, so it sees memory as the exclusive
 * one left it, although no orec or bytelock tells of its direct writes.
 *
 * A doomed transaction is not waited for: its loads return 0 without
 * touching memory and it can never commit (tx.c's commit point).  A
 * committing one is: its write-back must not interleave with direct
 * accesses.
 */
#define LTX_SERIAL_EXCL ((uintptr_t)1)

/* Exported as tm__serial_v4 for <ltx/inline.h>, whose begin loads it. */
#define ltx_serial_token tm__serial_v4
extern uintptr_t ltx_serial_token;
_Static_assert(LTX_SERIAL_EXCL == TM__SERIAL_EXCL,
	       "<ltx/inline.h>'s exclusive bit differs from ltx's");

/* ltx_serial_try: take the token irrevocable if free (true); no wait. */
bool ltx_serial_try(struct ltx_tx *tx);

/* ltx_serial_try_exclusive: take it exclusive if free, or upgrade it if
 * tx holds it irrevocable (true); no wait.  Does not drain.  Inline: one
 * CAS, the whole cost of a transaction that runs alone in a process
 * where no other thread uses ltx (tx.c, ltx_tx_begin_alone). */
static inline bool ltx_serial_try_exclusive(struct ltx_tx *tx)
{
	uintptr_t expect = tx->cd.irrevocable ? (uintptr_t)tx : 0;

	/* Seq_cst: ordered before the load of the live-thread count in
	 * ltx_serial_drain and ltx_tx_begin_alone (see above); also the
	 * acquire of the token. */
	if (!__atomic_compare_exchange_n(&ltx_serial_token, &expect,
					 (uintptr_t)tx | LTX_SERIAL_EXCL, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		return false;
	tx->cd.irrevocable = 1; /* the flag cd's operations follow (cd.h) */
	return true;
}

/* ltx_serial_acquire(_exclusive): take it, waiting as long as needed.
 * Only for a descriptor that is idle (it could be waited for). */
void ltx_serial_acquire(struct ltx_tx *tx);
void ltx_serial_acquire_exclusive(struct ltx_tx *tx);

/* ltx_serial_drain: with the token exclusive, wait until no other thread
 * runs a transaction that is live or committing. */
void ltx_serial_drain(struct ltx_tx *tx);

/* ltx_serial_release: give the token back if tx holds it (idempotent). */
static inline void ltx_serial_release(struct ltx_tx *tx)
{
	if (!tx->cd.irrevocable)
		return;
	tx->cd.irrevocable = 0;
	/* Release: pairs with the acquire CAS of the next holder, and with
	 * the token loads of transactions waiting to begin. */
	__atomic_store_n(&ltx_serial_token, 0, __ATOMIC_RELEASE);
	/* The signals deferred while this thread held it (tx/signal.c,
	 * on_defer) are delivered now.  Looked at after the store: a signal
	 * that lands before it is deferred and seen here, one that lands
	 * after it runs its handler at once. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (ltx_unlikely(ltx_signal_deferred != 0))
		ltx_signal_deliver_deferred();
}

/* ltx_serial_exclusive: whether tx holds the token exclusive. */
static inline bool ltx_serial_exclusive(const struct ltx_tx *tx)
{
	return __atomic_load_n(&ltx_serial_token, __ATOMIC_RELAXED) ==
	       ((uintptr_t)tx | LTX_SERIAL_EXCL);
}

/*
 * ltx_serial_may_block: the fast test a beginning transaction makes after
 * its status store: may an exclusive holder run?  If so, the slow test
 * (ltx_serial_blocks, tx.c) decides.
 */
static inline __attribute__((always_inline)) bool ltx_serial_may_block(void)
{
	/* Acquire: pairs with ltx_serial_release (see above); one test of
	 * the word in memory (arch/arch.h). */
	return ltx_word_bits_set(&ltx_serial_token, LTX_SERIAL_EXCL);
}

#endif /* LTX_TX_SERIAL_H */
