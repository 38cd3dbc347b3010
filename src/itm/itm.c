/* SPDX-License-Identifier: MIT */
/* libitm ABI: transaction control (begin, commit, abort, restart, modes). */
#define _GNU_SOURCE
#include "config.h"

#include <ltx/tm.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itm/itm.h"
#include "itm/libitm.h"
#include "rt/array.h"
#include "rt/config.h"
#include "tx/alone.h"
#include "tx/fast.h"
#include "tx/tx.h"

/*
 * How a GCC transaction runs on ltx: every one is an ltx transaction of
 * the thread's descriptor, so GCC and tm_* transactions are the same kind
 * of thing to the engine (one registry, one serial token, one action list,
 * one set of grace periods).  This file translates the ABI onto it.
 *
 * Outermost begin picks a mode:
 *   ITM_SERIAL_IRR  if the code must run irrevocably (pr_doesGoIrrevocable,
 *                   no instrumented code path), or while no other thread
 *                   holds a descriptor and the transaction cannot cancel
 *                   (pr_hasNoAbort): an exclusive ltx transaction
 *                   (tx/serial.h: no other transaction runs), and the
 *                   uninstrumented code path runs, as fast as plain code.
 *   ITM_SERIAL      exclusive too, but the transaction may cancel: direct
 *                   access with an undo log; also how closed nesting runs
 *                   (by restarting the outermost transaction this way).
 *   ITM_INSTR       otherwise: an ordinary ltx transaction; barriers are
 *                   LT/LTX/ST.  One that keeps failing becomes irrevocable
 *                   by the engine's own fallback (LTX_SERIAL_AFTER), still
 *                   instrumented, beside the others.
 * The uninstrumented code path is returned only in ITM_SERIAL_IRR with
 * pr_hasNoAbort: GCC tail-calls the commit from that path and emits the
 * cancel there too, so that path must never be restarted or cancelled.
 *
 * A doomed ITM_INSTR transaction restarts as soon as ltx reports it, at a
 * barrier's slow path or at commit: GCC's code never calls VALIDATE, and
 * restarting early keeps zombie code short (its loads return 0).
 */

static uint64_t next_id = 2; /* _ITM_noTransactionId is 1 */

void ltx_itm_fatal(const char *why)
{
	fprintf(stderr, "ltx: libitm ABI: %s\n", why);
	abort();
}

/*
 * The calling thread's stack (barrier.c says why it must be known), asked
 * of libc once per thread: pthread_getattr_np takes a lock and allocates,
 * and a spare descriptor (tx.c), which handlers on threads without a
 * descriptor borrow, needs the stack of each thread that borrows it.
 */
static __thread uintptr_t thread_stack_lo,
	thread_stack_span __attribute__((tls_model("initial-exec")));

static void stack_bounds(struct ltx_tx *tx)
{
	pthread_attr_t attr;
	void *addr = NULL;
	size_t size = 0;

	if (thread_stack_span == 0) {
		if (pthread_getattr_np(pthread_self(), &attr) == 0) {
			if (pthread_attr_getstack(&attr, &addr, &size) != 0)
				addr = NULL;
			pthread_attr_destroy(&attr);
		}
		if (addr == NULL)
			ltx_itm_fatal("cannot find this thread's stack");
		thread_stack_lo = (uintptr_t)addr;
		thread_stack_span = size;
	}
	tx->stack_lo = thread_stack_lo;
	tx->stack_span = thread_stack_span;
}

/*
 * tx's state for the thread that holds it now: made on first use, and
 * made fresh when another thread took the descriptor (the buffers and
 * counters stay).  A handler descriptor shares its thread's stack.
 */
static struct ltx_itm_thread *fresh_state(struct ltx_tx *tx)
{
	struct ltx_itm_thread *t = tx->frontend;

	if (t == NULL) {
		/* In a signal handler only if the thread never ran a GCC
		 * transaction before (malloc: see ltx(7), SIGNALS). */
		t = calloc(1, sizeof(*t));
		if (t == NULL)
			ltx_itm_fatal("no memory for the thread state");
		t->tx = tx;
		tx->frontend = t;
	}
	ltx_itm_set_mode(t, ITM_NONE);
	t->depth = 0;
	t->undo_len = 0;
	t->nests_len = 0;
	t->want_serial = false;
	t->want_irrevocable = false;
	t->id = 0;
	t->cxa_unthrown = NULL;
	t->eh_in_flight = NULL;
	t->cxa_catch_count = 0;
	if (tx->parent != NULL && tx->parent->stack_span != 0) {
		tx->stack_lo = tx->parent->stack_lo;
		tx->stack_span = tx->parent->stack_span;
	} else {
		stack_bounds(tx);
	}
	t->takes = tx->takes;
	return t;
}

/*
 * tx's state and its handler descriptor's, made now, outside any handler
 * if tx is a thread's own.  Signals wait meanwhile: stack_bounds takes a
 * lock of libc's (pthread_getattr_np), and a handler's first GCC
 * transaction, landing there, would make its own state and wait for that
 * lock for ever.  Blocked, they are delivered once both states are made.
 * Once per thread (and per thread that takes the descriptor after it).
 */
static __attribute__((noinline)) struct ltx_itm_thread *
fresh_states(struct ltx_tx *tx)
{
	struct ltx_itm_thread *t;
	sigset_t all, saved;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &saved);
	t = fresh_state(tx);
	if (tx->handler_tx != NULL)
		(void)fresh_state(tx->handler_tx);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	return t;
}

struct ltx_itm_thread *ltx_itm_thread_get(void)
{
	struct ltx_tx *tx = ltx_self;
	struct ltx_itm_thread *t;

	if (ltx_unlikely(tx == &ltx_boot_tx)) {
		tx = ltx_tx_self();
		if (tx == NULL)
			ltx_itm_fatal("no memory for a transaction descriptor");
	}
	if (ltx_unlikely(tx == &ltx_refuse_tx))
		ltx_itm_fatal("a GCC transaction in a signal handler that "
			      "interrupted another handler (not supported)");
	t = tx->frontend;
	if (ltx_likely(t != NULL && t->takes == tx->takes))
		return t;
	return fresh_states(tx);
}

static bool single_thread_serial(void)
{
	/* Alone, a transaction may as well run uninstrumented: the
	 * exclusive token costs no fence then, and a thread that begins
	 * meanwhile waits for it (tx/serial.h). */
	return __atomic_load_n(&ltx_config.itm_serial, __ATOMIC_RELAXED) &&
	       ltx_tx_other_threads() == 0;
}

/* The code path an ITM_SERIAL_IRR transaction with properties prop runs. */
static uint32_t irrevocable_path(uint32_t prop)
{
	if (!(prop & ITM_PR_INSTRUMENTED) ||
	    ((prop & ITM_PR_UNINSTRUMENTED) && (prop & ITM_PR_HAS_NO_ABORT)))
		return ITM_A_UNINSTRUMENTED;
	return ITM_A_INSTRUMENTED;
}

/*
 * The ltx transaction layer calls this when it finds an ITM_INSTR
 * transaction doomed (at any slow path, or at commit) and the fault
 * sandbox when a doomed one faults: restart it from its begin.
 */
/* The state a checkpoint is embedded in. */
static struct ltx_itm_thread *state_of(struct ltx_checkpoint *cp)
{
	return (struct ltx_itm_thread *)(void *)((char *)cp -
						 offsetof(struct ltx_itm_thread,
							  cp));
}

static void checkpoint_restart(struct ltx_checkpoint *cp, unsigned cause)
{
	struct ltx_itm_thread *t = state_of(cp);

	(void)cause;
	/* commit_outermost had already marked the transaction over. */
	ltx_itm_set_mode(t, ITM_INSTR);
	ltx_itm_restart(t);
}

/* A jump (longjmp) took the thread out of the transaction, which the
 * transaction layer has ended: the ABI's state starts over. */
static void checkpoint_left(struct ltx_checkpoint *cp)
{
	struct ltx_itm_thread *t = state_of(cp);

	ltx_itm_eh_rollback(t);
	t->undo_len = 0;
	t->nests_len = 0;
	t->depth = 0;
	ltx_itm_set_mode(t, ITM_NONE);
	t->id = 0;
}

/* Register the transaction's restart point with the ltx transaction:
 * restarted there when doomed (ITM_INSTR), ended if a jump leaves it. */
static const struct ltx_checkpoint_ops checkpoint_ops = {
	.restart = checkpoint_restart,
	.left = checkpoint_left,
};

static void arm(struct ltx_itm_thread *t, struct ltx_tx *tx)
{
	t->cp.ops = &checkpoint_ops;
	t->cp.sp = t->jb.cfa;
	tx->checkpoint = &t->cp;
}

/* Begin the ltx transaction of the outermost one in ITM_INSTR: on the
 * fast path if the descriptor is idle for it (tx/fast.h; it steps back
 * if a transaction runs alone), else by ltx_tx_begin, which waits. */
static inline uint32_t enter_instr(struct ltx_itm_thread *t, struct ltx_tx *tx)
{
	ltx_itm_set_mode(t, ITM_INSTR);
	t->log_writes = false;
	t->stats.begins[ITM_INSTR]++;
	if (!ltx_tx_fast_begin(tx))
		ltx_tx_begin(tx);
	arm(t, tx);
	return ITM_A_INSTRUMENTED;
}

/* Begin the ltx transaction of the outermost one in mode; returns its
 * code path. */
static uint32_t enter(struct ltx_itm_thread *t, int mode)
{
	struct ltx_tx *tx = ltx_self;

	if (mode == ITM_INSTR)
		return enter_instr(t, tx);
	ltx_itm_set_mode(t, mode);
	t->log_writes = mode == ITM_SERIAL;
	t->stats.begins[mode]++;
	if (!ltx_status_idle(__atomic_load_n(&tx->status, __ATOMIC_RELAXED))) {
		/* Inside an open tm_* transaction: it must become one that
		 * runs alone, in place (nothing can restart it from here). */
		if (!ltx_tx_become_exclusive(tx))
			ltx_itm_fatal("a GCC transaction that must run alone "
				      "inside a tm_* transaction that cannot");
	} else {
		ltx_tx_begin_exclusive(tx);
	}
	arm(t, tx); /* never restarted: it runs alone, irrevocably */
	if (mode == ITM_SERIAL)
		return ITM_A_INSTRUMENTED;
	if (irrevocable_path(t->prop) == ITM_A_UNINSTRUMENTED) {
		t->stats.uninstrumented++;
		return ITM_A_UNINSTRUMENTED;
	}
	return ITM_A_INSTRUMENTED;
}

static int choose_mode(struct ltx_itm_thread *t)
{
	uint32_t prop = t->prop;

	if (t->want_irrevocable || (prop & ITM_PR_GOES_IRREVOCABLE) ||
	    !(prop & ITM_PR_INSTRUMENTED))
		return ITM_SERIAL_IRR;
	if (t->want_serial)
		return ITM_SERIAL;
	if (single_thread_serial())
		return (prop & ITM_PR_HAS_NO_ABORT) ? ITM_SERIAL_IRR
						    : ITM_SERIAL;
	return ITM_INSTR;
}

/*
 * Copy the undo log back, newest first, down to length from.  Records for
 * the stack below cfa are skipped: those frames (of functions called in
 * the transaction, and of this rollback) are dead or in use now.
 */
static void undo_to(struct ltx_itm_thread *t, size_t from, uintptr_t cfa)
{
	uintptr_t stack_lo = ltx_self->stack_lo;
	size_t pos = t->undo_len;

	while (pos > from) {
		uintptr_t addr;
		size_t len, padded;

		pos -= 2 * sizeof(uintptr_t);
		memcpy(&addr, t->undo + pos, sizeof(addr));
		memcpy(&len, t->undo + pos + sizeof(addr), sizeof(len));
		padded = (len + 7) & ~(size_t)7;
		pos -= padded;
		if (addr + len <= stack_lo || addr >= cfa)
			memcpy((void *)addr, t->undo + pos, len);
	}
	t->undo_len = from;
}

void ltx_itm_log(struct ltx_itm_thread *t, const void *addr, size_t size)
{
	size_t padded = (size + 7) & ~(size_t)7;
	size_t need = t->undo_len + padded + 2 * sizeof(uintptr_t);
	uintptr_t a = (uintptr_t)addr;

	if (!LTX_ARRAY_RESERVE(&t->undo, &t->undo_cap, t->undo_len, need, 4096))
		ltx_itm_fatal("no memory for the undo log");
	memcpy(t->undo + t->undo_len, addr, size);
	t->undo_len += padded;
	memcpy(t->undo + t->undo_len, &a, sizeof(a));
	memcpy(t->undo + t->undo_len + sizeof(a), &size, sizeof(size));
	t->undo_len += 2 * sizeof(uintptr_t);
}

/* The outermost transaction is over for the ABI (committed, or rolled
 * back): what its abort or commit actions may begin is a new one. */
static void finish(struct ltx_itm_thread *t)
{
	t->undo_len = 0;
	t->nests_len = 0;
	t->depth = 0;
	ltx_itm_set_mode(t, ITM_NONE);
	t->id = 0;
}

/*
 * Roll the whole transaction back: its direct writes (the undo log, while
 * it still runs alone), then the ltx transaction, whose abort actions
 * undo allocations and run the user's undo actions.
 */
static void roll_back(struct ltx_itm_thread *t)
{
	struct ltx_tx *tx = ltx_self;
	bool doomed =
		__atomic_load_n(&tx->status, __ATOMIC_RELAXED) == LTX_DOOMED;

	tx->checkpoint = NULL;
	undo_to(t, 0, t->jb.cfa);
	ltx_itm_eh_rollback(t);
	finish(t);
	/* A doomed one ends with backoff; a live one (a restart we chose,
	 * or a cancel) without. */
	if (doomed)
		ltx_tx_rollback(tx);
	else
		ltx_tx_abort(tx);
}

void ltx_itm_restart(struct ltx_itm_thread *t)
{
	uint32_t path;

	if (t->mode == ITM_SERIAL_IRR)
		ltx_itm_fatal("an irrevocable transaction cannot restart");
	roll_back(t);
	t->stats.restarts++;
	t->depth = 1;
	path = enter(t, choose_mode(t));
	t->want_serial = false;
	t->want_irrevocable = false;
	ltx_itm_longjmp(path | ITM_A_RESTORE_LIVE, &t->jb);
}

/*
 * Copy a checkpoint record word by word: checkpoint-x86_64.S has just
 * stored it that way, and the 16-byte loads the compiler would use for a
 * struct copy cannot be forwarded from 8-byte stores (each would wait for
 * the stores to reach the cache).  volatile keeps the loads 8 bytes wide.
 */
static inline void copy_checkpoint(struct ltx_itm_jmpbuf *to,
				   const struct ltx_itm_jmpbuf *from)
{
	const volatile uint64_t *src = (const volatile uint64_t *)from;
	uint64_t *dst = (uint64_t *)to;

	/* Written out: a loop over volatile loads stays a loop (8 loads
	 * and 8 stores instead of about 40 instructions). */
	_Static_assert(sizeof(*to) == 8 * sizeof(uint64_t), "8 words");
	dst[0] = src[0];
	dst[1] = src[1];
	dst[2] = src[2];
	dst[3] = src[3];
	dst[4] = src[4];
	dst[5] = src[5];
	dst[6] = src[6];
	dst[7] = src[7];
}

/* The properties of most transactions: both code paths, cannot cancel,
 * does not go irrevocable by itself.  choose_mode picks ITM_SERIAL_IRR
 * on the uninstrumented path (irrevocable_path) for one when the thread
 * is alone, else ITM_INSTR. */
#define PR_PLAIN_MASK                                                          \
	(ITM_PR_INSTRUMENTED | ITM_PR_UNINSTRUMENTED | ITM_PR_HAS_NO_ABORT |   \
	 ITM_PR_GOES_IRREVOCABLE)
#define PR_PLAIN                                                               \
	(ITM_PR_INSTRUMENTED | ITM_PR_UNINSTRUMENTED | ITM_PR_HAS_NO_ABORT)

/*
 * The outermost begin of a PR_PLAIN transaction when this thread looks
 * alone: what choose_mode and enter would pick and do (ITM_SERIAL_IRR on
 * the uninstrumented path), with the token taken by one CAS and nothing
 * to drain (ltx_tx_begin_alone says why that is safe against a thread
 * that takes a descriptor meanwhile).  False, having done nothing, when
 * the general path must decide.
 */
static inline bool begin_alone(struct ltx_itm_thread *t, struct ltx_tx *tx,
			       uint32_t prop, const struct ltx_itm_jmpbuf *jb)
{
	if (!ltx_tx_fast_begin_alone(tx))
		return false;
	t->depth = 1;
	t->prop = prop;
	/*
	 * Of the checkpoint, only the frame is needed: an irrevocable
	 * transaction is never restarted or cancelled from its begin
	 * (ltx_itm_restart and _ITM_abortTransaction refuse it), so nothing
	 * returns to jb; the barriers and arm() read cfa.
	 */
	t->jb.cfa = jb->cfa;
	ltx_itm_set_mode(t, ITM_SERIAL_IRR);
	t->log_writes = false;
	t->stats.begins[ITM_SERIAL_IRR]++;
	t->stats.uninstrumented++;
	arm(t, tx);
	return true;
}

/* The outermost begin in general, and a nested one: out of line, so
 * that ltx_itm_begin's common cases save few registers. */
static __attribute__((noinline)) uint32_t
begin_outermost(struct ltx_itm_thread *t, uint32_t prop,
		const struct ltx_itm_jmpbuf *jb)
{
	t->depth = 1;
	t->prop = prop;
	copy_checkpoint(&t->jb, jb);
	return enter(t, choose_mode(t)) | ITM_A_SAVE_LIVE;
}

static __attribute__((noinline)) uint32_t
begin_nested(struct ltx_itm_thread *t, uint32_t prop,
	     const struct ltx_itm_jmpbuf *jb)
{
	struct ltx_itm_nest *n;

	t->depth++;
	/* Code that must run irrevocably, or exists only uninstrumented,
	 * makes the whole transaction irrevocable (maybe by a restart). */
	if ((prop & ITM_PR_GOES_IRREVOCABLE) || !(prop & ITM_PR_INSTRUMENTED))
		ltx_itm_go_irrevocable(t);
	if (prop & ITM_PR_HAS_NO_ABORT) {
		/* Flat nesting: the code path of the current mode. */
		if (t->mode == ITM_SERIAL_IRR &&
		    (prop & ITM_PR_UNINSTRUMENTED) && t->nests_len == 0)
			return ITM_A_UNINSTRUMENTED;
		return (prop & ITM_PR_INSTRUMENTED) ? ITM_A_INSTRUMENTED
						    : ITM_A_UNINSTRUMENTED;
	}
	/* A nested transaction that may cancel: closed nesting needs an
	 * undo log, which only the serial modes keep. */
	if (t->mode == ITM_INSTR) {
		t->want_serial = true;
		ltx_itm_restart(t);
	}
	if (!LTX_ARRAY_RESERVE(&t->nests, &t->nests_cap, t->nests_len,
			       t->nests_len + 1, 8))
		ltx_itm_fatal("no memory for a nested transaction");
	n = &t->nests[t->nests_len++];
	copy_checkpoint(&n->jb, jb);
	n->depth = t->depth;
	n->undo_len = t->undo_len;
	n->actions = ltx_tx_actions_mark(ltx_self);
	t->log_writes = true;
	return ((prop & ITM_PR_INSTRUMENTED) ? ITM_A_INSTRUMENTED
					     : ITM_A_UNINSTRUMENTED) |
	       ITM_A_SAVE_LIVE;
}

uint32_t ltx_itm_begin(uint32_t prop, const struct ltx_itm_jmpbuf *jb)
{
	struct ltx_tx *tx = ltx_self;
	struct ltx_itm_thread *t = tx->frontend;

	/* ltx_itm_thread_get's common case: the boot and refuse
	 * descriptors have no front end state. */
	if (ltx_unlikely(t == NULL || t->takes != tx->takes)) {
		t = ltx_itm_thread_get();
		tx = ltx_self; /* made by the call if it was the boot one */
	}
	if (ltx_unlikely(t->depth != 0))
		return begin_nested(t, prop, jb);
	/* choose_mode's common cases inline: a PR_PLAIN transaction
	 * (want_serial and want_irrevocable are only set in a restart). */
	if (ltx_unlikely((prop & PR_PLAIN_MASK) != PR_PLAIN || t->want_serial ||
			 t->want_irrevocable))
		return begin_outermost(t, prop, jb);
	if (__atomic_load_n(&ltx_config.itm_serial, __ATOMIC_RELAXED) &&
	    ltx_tx_alone_hint()) {
		if (ltx_likely(begin_alone(t, tx, prop, jb)))
			return ITM_A_UNINSTRUMENTED | ITM_A_SAVE_LIVE;
		return begin_outermost(t, prop, jb);
	}
	/* Another thread holds a descriptor: choose_mode's ITM_INSTR. */
	t->depth = 1;
	t->prop = prop;
	copy_checkpoint(&t->jb, jb);
	return enter_instr(t, tx) | ITM_A_SAVE_LIVE;
}

static void commit_outermost(struct ltx_itm_thread *t)
{
	struct ltx_tx *tx = ltx_self;
	bool ok, alone = t->mode != ITM_INSTR;

	t->stats.commits++;
	t->cxa_catch_count = 0;
	t->cxa_unthrown = NULL;
	/* Over for the ABI before the commit actions run (they may begin a
	 * transaction); a failed commit restarts it (checkpoint_restart). */
	finish(t);
	if (alone)
		ok = ltx_tx_commit_exclusive(tx);
	else
		ok = ltx_tx_fast_commit(tx) || ltx_tx_commit(tx);
	if (!ok)
		ltx_itm_fatal("a transaction that runs alone failed to commit");
	tx->checkpoint = NULL;
}

void _ITM_commitTransaction(void)
{
	struct ltx_itm_thread *t = ltx_itm_state();

	if (t == NULL || t->depth == 0)
		ltx_itm_fatal("_ITM_commitTransaction outside a transaction");
	if (t->nests_len != 0 && t->nests[t->nests_len - 1].depth == t->depth)
		t->nests_len--; /* its logs now belong to the parent */
	if (--t->depth != 0) {
		if (t->nests_len == 0 && t->mode != ITM_SERIAL)
			t->log_writes = false;
		return;
	}
	commit_outermost(t);
}

void _ITM_commitTransactionEH(void *exc)
{
	struct ltx_itm_thread *t = ltx_itm_state();

	if (t != NULL)
		t->eh_in_flight = exc;
	_ITM_commitTransaction();
	if (t != NULL)
		t->eh_in_flight = NULL;
}

void _ITM_abortTransaction(_ITM_abortReason reason)
{
	struct ltx_itm_thread *t = ltx_itm_state();

	if (t == NULL || t->depth == 0)
		ltx_itm_fatal("_ITM_abortTransaction outside a transaction");
	if (!(reason & ITM_USER_ABORT) ||
	    (reason & ~(ITM_USER_ABORT | ITM_OUTER_ABORT)))
		ltx_itm_fatal("_ITM_abortTransaction: unknown reason");
	t->stats.cancels++;
	if (!(reason & ITM_OUTER_ABORT) && t->nests_len != 0 &&
	    t->nests[t->nests_len - 1].depth == t->depth) {
		/* Cancel the innermost (closed) transaction only. */
		struct ltx_itm_nest *n = &t->nests[--t->nests_len];

		undo_to(t, n->undo_len, n->jb.cfa);
		ltx_tx_actions_unwind(ltx_self, n->actions);
		t->depth = n->depth - 1;
		if (t->nests_len == 0 && t->mode != ITM_SERIAL)
			t->log_writes = false;
		ltx_itm_longjmp(ITM_A_ABORT | ITM_A_RESTORE_LIVE, &n->jb);
	}
	if (t->mode == ITM_SERIAL_IRR)
		ltx_itm_fatal("cannot cancel an irrevocable transaction");
	roll_back(t); /* keeps t->jb */
	ltx_itm_longjmp(ITM_A_ABORT | ITM_A_RESTORE_LIVE, &t->jb);
}

void ltx_itm_go_irrevocable(struct ltx_itm_thread *t)
{
	switch (t->mode) {
	case ITM_SERIAL_IRR:
		return;
	case ITM_SERIAL:
		ltx_itm_set_mode(t, ITM_SERIAL_IRR);
		t->log_writes = t->nests_len != 0;
		return;
	case ITM_INSTR:
		break;
	default:
		ltx_itm_fatal("irrevocable mode requested outside a "
			      "transaction");
	}
	/*
	 * In place: become the only transaction, publishing what this one
	 * did so far; from there on it accesses memory directly.  If another
	 * transaction holds the token, or this one has failed, start over
	 * irrevocably from the begin.
	 */
	if (ltx_tx_become_exclusive(ltx_self)) {
		ltx_itm_set_mode(t, ITM_SERIAL_IRR);
		t->log_writes = false;
		t->stats.upgrades++;
		return;
	}
	t->want_irrevocable = true;
	ltx_itm_restart(t);
}

void _ITM_changeTransactionMode(_ITM_transactionState state)
{
	struct ltx_itm_thread *t = ltx_itm_state();

	if (state != modeSerialIrrevocable)
		ltx_itm_fatal("_ITM_changeTransactionMode: unknown mode");
	if (t == NULL || t->depth == 0)
		ltx_itm_fatal("_ITM_changeTransactionMode outside a "
			      "transaction");
	ltx_itm_go_irrevocable(t);
}

_ITM_howExecuting _ITM_inTransaction(void)
{
	struct ltx_itm_thread *t = ltx_itm_state();

	if (t == NULL || t->depth == 0)
		return outsideTransaction;
	return t->mode == ITM_SERIAL_IRR ? inIrrevocableTransaction
					 : inRetryableTransaction;
}

_ITM_transactionId_t _ITM_getTransactionId(void)
{
	struct ltx_itm_thread *t = ltx_itm_state();

	if (t == NULL || t->depth == 0)
		return _ITM_noTransactionId;
	if (t->id == 0)
		t->id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
	return t->id;
}

int _ITM_versionCompatible(int version)
{
	return version == _ITM_VERSION_NO;
}

const char *_ITM_libraryVersion(void)
{
	return "ltx " PACKAGE_VERSION " (libitm ABI " _ITM_VERSION ")";
}

void _ITM_error(const _ITM_srcLocation *loc, int code)
{
	(void)code;
	fprintf(stderr, "ltx: libitm ABI: error at %s\n",
		loc && loc->psource ? loc->psource : "an unknown location");
	abort();
}

bool ltx_itm_revocable(const struct ltx_itm_thread *t)
{
	return t != NULL && t->depth != 0 &&
	       (t->mode != ITM_SERIAL_IRR || t->nests_len != 0);
}

void ltx_itm_on_end(struct ltx_itm_thread *t, void (*fn)(void *), void *arg,
		    bool on_commit)
{
	struct ltx_tx *tx = ltx_self;

	(void)t;
	if (ltx_tx_add_action(tx, fn, arg, on_commit))
		return;
	/* No memory: a transaction that can restart does (doomed, it does
	 * so at its next barrier); one that cannot, cannot go on. */
	if (__atomic_load_n(&tx->status, __ATOMIC_RELAXED) != LTX_DOOMED)
		ltx_itm_fatal("no memory to record a transaction's action");
}

void _ITM_addUserCommitAction(_ITM_userCommitFunction fn,
			      _ITM_transactionId_t resuming, void *arg)
{
	struct ltx_itm_thread *t = ltx_itm_state();

	if (resuming != _ITM_noTransactionId)
		ltx_itm_fatal("resuming commit actions are not supported");
	if (t == NULL || t->depth == 0) {
		fn(arg); /* outside a transaction: it has committed */
		return;
	}
	ltx_itm_on_end(t, fn, arg, true);
}

void _ITM_addUserUndoAction(_ITM_userUndoFunction fn, void *arg)
{
	struct ltx_itm_thread *t = ltx_itm_state();

	if (t == NULL || t->depth == 0)
		return; /* nothing can roll back */
	ltx_itm_on_end(t, fn, arg, false);
}

void _ITM_dropReferences(void *addr, size_t size)
{
	/* A hint that the transaction no longer needs these addresses kept
	 * consistent; keeping them is always correct. */
	(void)addr;
	(void)size;
}

/* LTX_ITM_REPORT: one summary line at exit, proof of who ran the code. */
static void add_report(struct ltx_tx *tx, void *arg)
{
	const struct ltx_itm_thread *t = tx->frontend;
	struct ltx_itm_stats *s = arg;

	if (t == NULL)
		return;
	for (int m = 0; m < 4; m++)
		s->begins[m] += t->stats.begins[m];
	s->uninstrumented += t->stats.uninstrumented;
	s->commits += t->stats.commits;
	s->restarts += t->stats.restarts;
	s->cancels += t->stats.cancels;
	s->upgrades += t->stats.upgrades;
}

__attribute__((destructor)) static void report(void)
{
	struct ltx_itm_stats s;

	if (!__atomic_load_n(&ltx_config.itm_report, __ATOMIC_RELAXED))
		return;
	memset(&s, 0, sizeof(s));
	ltx_tx_foreach(add_report, &s);
	fprintf(stderr,
		"ltx-itm: %llu transactions (%llu instrumented, %llu serial, "
		"%llu irrevocable, %llu uninstrumented), %llu commits, "
		"%llu restarts, %llu cancels, %llu upgrades\n",
		(unsigned long long)(s.begins[ITM_INSTR] +
				     s.begins[ITM_SERIAL] +
				     s.begins[ITM_SERIAL_IRR] - s.restarts),
		(unsigned long long)s.begins[ITM_INSTR],
		(unsigned long long)s.begins[ITM_SERIAL],
		(unsigned long long)s.begins[ITM_SERIAL_IRR],
		(unsigned long long)s.uninstrumented,
		(unsigned long long)s.commits, (unsigned long long)s.restarts,
		(unsigned long long)s.cancels, (unsigned long long)s.upgrades);
}
