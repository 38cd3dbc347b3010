/* SPDX-License-Identifier: MIT */
/* Transaction life cycle: implicit begin, doom, abort, validate, commit. */
#ifndef LTX_TX_TX_H
#define LTX_TX_TX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "tx/desc.h"

/*
 * The slow paths behind the public operations.  Each takes the calling
 * thread's descriptor (ltx_self, which may still be ltx_boot_tx) and does
 * the whole operation: create the descriptor, begin a transaction, run the
 * conflict-detection mode's operation, doom the transaction on failure.
 */
uint64_t ltx_tx_load(struct ltx_tx *tx, const void *addr, bool excl);
/* LT after ltx_tx_fast_load failed, v the value it saw in addr's orec: a
 * read after write (a line of the transaction's own) first, else
 * ltx_tx_load. */
uint64_t ltx_tx_load_shared(const void *addr, struct ltx_tx *tx, uintptr_t v);
void ltx_tx_store(struct ltx_tx *tx, void *addr, uint64_t val, unsigned size);
bool ltx_tx_validate(struct ltx_tx *tx);

/*
 * As ltx_tx_load and ltx_tx_store, naming pc, the address in the program
 * the access was made from, as the abort site should it fail (statistics,
 * issue 6).  The plain forms name their own return address: the tm_*
 * functions reach them by tail calls, so that is the program's call site;
 * where it is not (it lies inside libltx), the site is found by unwinding.
 */
uint64_t ltx_tx_load_at(struct ltx_tx *tx, const void *addr, bool excl,
			uintptr_t pc);
void ltx_tx_store_at(struct ltx_tx *tx, void *addr, uint64_t val, unsigned size,
		     uintptr_t pc);
bool ltx_tx_commit(struct ltx_tx *tx);
void ltx_tx_abort(struct ltx_tx *tx);

/*
 * ltx_tx_commit_exclusive: COMMIT of a transaction that runs alone (begun
 * by ltx_tx_begin_exclusive or ltx_tx_begin_alone): with nothing logged
 * and no slow bit but the token's, it only counts the commit and gives
 * the token back; anything else takes ltx_tx_commit.
 */
bool ltx_tx_commit_exclusive(struct ltx_tx *tx);

/*
 * ltx_tx_add_action: run fn(arg) when the live transaction commits
 * (on_commit true) or aborts (false).  Commit actions run in order after
 * the stores are published and the lines released; abort actions run in
 * reverse order after the lines are released.  Returns false if there is no
 * memory to record it (the transaction is then doomed, TM_ABORT_NOMEM).
 */
bool ltx_tx_add_action(struct ltx_tx *tx, void (*fn)(void *), void *arg,
		       bool on_commit);

/*
 * ltx_tx_on_end: tm_on_commit (on_commit true) and tm_on_abort for the
 * calling thread's descriptor tx: begin a transaction if none is open,
 * then ltx_tx_add_action.  Returns 0, EINVAL (fn is NULL) or ENOMEM (no
 * descriptor, or no room to record it: the transaction is left as it
 * was).
 * In a doomed transaction an abort handler is recorded and a commit
 * handler is not (returns 0: it would never run).
 */
int ltx_tx_on_end(struct ltx_tx *tx, void (*fn)(void *), void *arg,
		  bool on_commit);

/* tm_line_state() of addr for the calling thread's descriptor tx. */
unsigned ltx_tx_line_state(struct ltx_tx *tx, const void *addr);

/*
 * ltx_tx_begin: begin a transaction now if none is open (front ends that
 * begin eagerly: a GCC transaction).  May wait for an exclusive one.
 */
void ltx_tx_begin(struct ltx_tx *tx);

/*
 * ltx_tx_begin_exclusive: begin a transaction that runs alone (tx idle):
 * take the serial token exclusive, wait for every running transaction to
 * end; others wait at their begin until it ends.  It may then read and
 * write memory directly (GCC's serial modes); it never aborts by itself
 * (irrevocable: the front end may roll back what it logged and call
 * ltx_tx_abort).  Not in signal handlers.
 */
void ltx_tx_begin_exclusive(struct ltx_tx *tx);

/*
 * ltx_tx_begin_alone: ltx_tx_begin_exclusive's quick case, when no other
 * thread holds a descriptor: one CAS of the token and nothing to drain.
 * Returns false, having changed nothing, if another thread holds a
 * descriptor, the token is taken, or tx is not idle (the caller then
 * chooses again).  Where it may be
 * called, as ltx_tx_begin_exclusive, whose work it does when it returns
 * true.
 */
bool ltx_tx_begin_alone(struct ltx_tx *tx);

/*
 * ltx_tx_become_exclusive: make tx's live transaction one that runs
 * alone: take the token exclusive, wait for the others to end, publish
 * what it did so far, and go on from there alone.  Returns false if the
 * token is held by another transaction or the transaction has failed
 * (it may then be doomed: the caller restarts it, and can begin it
 * exclusive with ltx_tx_begin_exclusive).
 */
bool ltx_tx_become_exclusive(struct ltx_tx *tx);

/*
 * ltx_tx_actions_mark/unwind: the number of actions registered now; drop
 * those registered since mark, running the abort ones among them (newest
 * first).  For closed nesting in the libitm layer.
 */
size_t ltx_tx_actions_mark(const struct ltx_tx *tx);
void ltx_tx_actions_unwind(struct ltx_tx *tx, size_t mark);

/*
 * ltx_tx_actions_keep: forget, without running them, the abort actions
 * registered since mark (the commit ones stay): what they would undo is
 * no longer the transaction's to undo.  For C++ exceptions in the libitm
 * layer: once thrown, the exception owns what was allocated to build it.
 */
void ltx_tx_actions_keep(struct ltx_tx *tx, size_t mark);

/* The status word tm_status() reports. */
unsigned ltx_tx_status(const struct ltx_tx *tx);

/*
 * ltx_tx_doom: fail the live transaction with cause (TM_ABORT_* bits).  Its
 * loads return 0 and its stores do nothing until VALIDATE/COMMIT end it.
 * An irrevocable transaction must not fail: out of memory (TM_ABORT_NOMEM)
 * it stops the process with a message instead.  Not for signal handlers.
 */
void ltx_tx_doom(struct ltx_tx *tx, unsigned cause);

/* ltx_tx_self: the calling thread's real descriptor, created if needed;
 * NULL if there is no memory for one.  In a signal handler on a thread
 * that has none: a spare descriptor, borrowed until the handler is over
 * (tx.c, spares). */
struct ltx_tx *ltx_tx_self(void);

/*
 * Spare descriptors for signal handlers (tx.c says how they work).
 * ltx_tx_make_spares: make them if not yet made; not in a handler (it
 * locks and allocates).  ltx_tx_is_spare: whether tx is one.
 * ltx_tx_give_back_spare: the
 * handler that borrowed tx is over, and tx's transaction has ended.
 * ltx_tx_in_handler (tx/signal.c): whether the calling thread is running
 * a signal handler that ltx wrapped.
 */
void ltx_tx_make_spares(void);
bool ltx_tx_is_spare(const struct ltx_tx *tx);
void ltx_tx_give_back_spare(struct ltx_tx *tx);
bool ltx_tx_in_handler(void);

/*
 * ltx_tx_other_threads: how many threads other than the caller hold a
 * descriptor now (have used ltx's transactions and not exited): then
 * process-wide settings can no longer change.  A hint: another thread may
 * take one right after.
 */
unsigned ltx_tx_other_threads(void);

/*
 * ltx_tx_live_threads: the threads that hold a descriptor of their own
 * (tx.c writes it with seq_cst RMWs when one takes or gives back one).
 * ltx_tx_alone_hint: whether the calling thread, which holds one, looks
 * like the only one: a relaxed load, a hint as ltx_tx_other_threads (a
 * thread may take one right after); ltx_tx_begin_alone decides for good.
 */
extern unsigned ltx_tx_live_threads;

static inline bool ltx_tx_alone_hint(void)
{
	return __atomic_load_n(&ltx_tx_live_threads, __ATOMIC_RELAXED) <= 1;
}

/* ltx_tx_other_threads_now: the same, as a seq_cst load (the Dekker
 * pair of the serial token, tx/serial.h). */
unsigned ltx_tx_other_threads_now(void);

/* ltx_tx_foreach: call fn on every descriptor ever created (live or
 * pooled), under the registry lock.  Not for signal handlers. */
void ltx_tx_foreach(void (*fn)(struct ltx_tx *tx, void *arg), void *arg);

/*
 * ltx_tx_rollback: end tx's transaction if it is still open (doomed by a
 * signal or a fault), as a failed VALIDATE would: release, abort actions,
 * backoff.  For the code a checkpoint's restart lands in.
 */
void ltx_tx_rollback(struct ltx_tx *tx);

/*
 * ltx_tx_leave_block: the thread left tx's restartable block by a jump or
 * an unwind: end its transaction (aborted; committed if irrevocable, which
 * cannot be undone), forget the block (checkpoint, depth) and tell its
 * owner (struct ltx_checkpoint.left).  Not in signal handlers.
 */
void ltx_tx_leave_block(struct ltx_tx *tx);

/*
 * ltx_tx_retry: abort the transaction (beginning one if none is open) with
 * TM_ABORT_EXPLICIT|TM_ABORT_RETRY and apply backoff; in a restartable
 * block, restart it.
 */
void ltx_tx_retry(struct ltx_tx *tx);

/*
 * ltx_tx_irrevocable: make tx's live transaction irrevocable: wait for the
 * serial token and for the update commits in flight, then revalidate.
 * Returns true if it now is (it will then never abort on a conflict and
 * no other update commits until it ends), false if the transaction is not
 * live or has become doomed (it must be ended: VALIDATE/COMMIT).  Not in
 * signal handlers (returns false there and dooms, TM_ABORT_SIGNAL).
 * _ITM_changeTransactionMode(modeSerialIrrevocable) calls this.
 */
bool ltx_tx_irrevocable(struct ltx_tx *tx);

/*
 * ltx_tx_registry: the most recently created descriptor; the others follow
 * through next_all.  Lock-free: descriptors are never freed and are pushed
 * with a release store that pairs with this acquire load.
 */
struct ltx_tx *ltx_tx_registry(void);

/* ltx_tx_mode_changed: the mode setting changed; re-arm this thread's
 * idle descriptor for it. */
void ltx_tx_mode_changed(void);

/*
 * ltx_tx_committed: the end of every update commit, after the store that
 * takes status from LTX_COMMITTING to idle; returns true (the commit's
 * answer), so that a caller ends with it and the call out, if any, is a
 * tail call.  A signal that landed past the commit point waited for it
 * (tx/signal.c, on_defer, which sets signal_wait): its handler runs now.
 * Looked at after the store, in program order (the signal fence): a
 * signal that lands before the store sees COMMITTING and is seen here, one
 * that lands after it sees an idle descriptor and runs its handler at
 * once.  Both sides are this thread (a handler runs on the thread it
 * interrupts): one relaxed compare with memory, two instructions when
 * nothing waits.  A caller holding the serial token looks after giving it
 * back (the handler must not run under it).
 */
bool ltx_tx_deliver_waiting(struct ltx_tx *tx);

static inline __attribute__((always_inline)) bool
ltx_tx_committed(struct ltx_tx *tx)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (ltx_unlikely(ltx_int_differs(&tx->signal_wait, 0)))
		return ltx_tx_deliver_waiting(tx);
	return true;
}

/* ltx_tx_signals_init: register what a signal does to a transaction with
 * the signal wrapper (rt/signal.h) and take over the fault signals.  Run
 * once, from the library's constructor. */
void ltx_tx_signals_init(void);

#endif /* LTX_TX_TX_H */
