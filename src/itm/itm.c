/* SPDX-License-Identifier: MIT */
/* libitm ABI: transaction control (begin, commit, abort, restart, modes). */
#include "config.h"

#include <ltx/tm.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itm/itm.h"
#include "itm/libitm.h"
#include "rt/config.h"
#include "tx/fast.h"
#include "tx/tx.h"

/*
 * How a GCC transaction runs on ltx.
 *
 * Outermost begin picks a mode:
 *   ITM_SERIAL_IRR  if the code must run irrevocably (pr_doesGoIrrevocable,
 *                   no instrumented code path), after too many restarts, or
 *                   while this is the only thread that uses the ABI and the
 *                   transaction cannot cancel (pr_hasNoAbort): then the
 *                   uninstrumented code path runs, as fast as plain code.
 *   ITM_SERIAL      the only thread, but the transaction may cancel; or a
 *                   cancellable transaction nests inside (closed nesting is
 *                   done by restarting the outermost one this way).
 *   ITM_INSTR       otherwise: an ltx transaction; barriers are LT/LTX/ST.
 * The uninstrumented code path is returned only in ITM_SERIAL_IRR with
 * pr_hasNoAbort: GCC tail-calls the commit from that path and emits the
 * cancel there too, so that path must never be restarted or cancelled.
 *
 * A doomed ITM_INSTR transaction restarts as soon as ltx reports it, at a
 * barrier's slow path or at commit: GCC's code never calls VALIDATE, and
 * restarting early keeps zombie code short (its loads return 0).
 */

#define MAX_RESTARTS 100

static uint64_t next_id = 2;	/* _ITM_noTransactionId is 1 */

static bool single_thread_serial(void)
{
	/* The serial modes do not exclude tm_* transactions: while another
	 * thread has used those, run instrumented (see ltx(7)). */
	return __atomic_load_n(&ltx_config.itm_serial, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&ltx_itm_live_threads, __ATOMIC_RELAXED) == 1 &&
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
static void checkpoint_restart(struct ltx_checkpoint *cp, unsigned cause)
{
	(void)cause;
	ltx_itm_restart(cp->arg);
}

/* Stop the ltx layer from restarting us: we are about to end or abort
 * the ltx transaction ourselves. */
static struct ltx_tx *disarm(void)
{
	struct ltx_tx *tx = ltx_self;

	tx->checkpoint = NULL;
	ltx_itm_fast.tx = NULL; /* the barriers now look at the mode */
	return tx;
}

/* Enter mode for the outermost transaction; returns its code path. */
static uint32_t enter(struct ltx_itm_thread *t, int mode)
{
	t->mode = mode;
	t->log_writes = mode == ITM_SERIAL;
	t->stats.begins[mode]++;
	switch (mode) {
	case ITM_INSTR: {
		struct ltx_tx *tx = ltx_tx_self();

		if (tx == NULL)
			ltx_itm_fatal("no memory for a transaction descriptor");
		ltx_itm_shared_enter(t);
		t->cp.restart = checkpoint_restart;
		t->cp.arg = t;
		tx->checkpoint = &t->cp;
		ltx_itm_fast.tx = tx;
		return ITM_A_INSTRUMENTED;
	}
	case ITM_SERIAL:
		ltx_itm_serial_enter(t);
		return ITM_A_INSTRUMENTED;
	default: {
		uint32_t path = irrevocable_path(t->prop);

		ltx_itm_serial_enter(t);
		if (path == ITM_A_UNINSTRUMENTED)
			t->stats.uninstrumented++;
		return path;
	}
	}
}

static int choose_mode(struct ltx_itm_thread *t)
{
	uint32_t prop = t->prop;

	if (t->want_irrevocable || (prop & ITM_PR_GOES_IRREVOCABLE) ||
	    !(prop & ITM_PR_INSTRUMENTED) || t->restarts > MAX_RESTARTS)
		return ITM_SERIAL_IRR;
	if (t->want_serial)
		return ITM_SERIAL;
	if (single_thread_serial())
		return (prop & ITM_PR_HAS_NO_ABORT) ? ITM_SERIAL_IRR
						    : ITM_SERIAL;
	return ITM_INSTR;
}

/* Leave the current mode's lock. */
static void leave(struct ltx_itm_thread *t)
{
	if (t->mode == ITM_INSTR)
		ltx_itm_shared_exit(t);
	else
		ltx_itm_serial_exit();
}

static void run_actions(struct ltx_itm_thread *t, size_t from, bool committed)
{
	size_t n = t->actions_len;

	t->actions_len = from;
	if (committed) {
		for (size_t i = from; i < n; i++)
			if (t->actions[i].on_commit)
				t->actions[i].fn(t->actions[i].arg);
	} else {
		for (size_t i = n; i-- > from;)
			if (!t->actions[i].on_commit)
				t->actions[i].fn(t->actions[i].arg);
	}
}

/*
 * Copy the undo log back, newest first, down to length from.  Records for
 * the stack below cfa are skipped: those frames (of functions called in
 * the transaction, and of this rollback) are dead or in use now.
 */
static void undo_to(struct ltx_itm_thread *t, size_t from, uintptr_t cfa)
{
	size_t pos = t->undo_len;

	while (pos > from) {
		uintptr_t addr;
		size_t len, padded;

		pos -= 2 * sizeof(uintptr_t);
		memcpy(&addr, t->undo + pos, sizeof(addr));
		memcpy(&len, t->undo + pos + sizeof(addr), sizeof(len));
		padded = (len + 7) & ~(size_t)7;
		pos -= padded;
		if (addr + len <= t->stack_lo || addr >= cfa)
			memcpy((void *)addr, t->undo + pos, len);
	}
	t->undo_len = from;
}

void ltx_itm_log(struct ltx_itm_thread *t, const void *addr, size_t size)
{
	size_t padded = (size + 7) & ~(size_t)7;
	size_t need = t->undo_len + padded + 2 * sizeof(uintptr_t);
	uintptr_t a = (uintptr_t)addr;

	if (need > t->undo_cap) {
		size_t cap = t->undo_cap ? 2 * t->undo_cap : 4096;
		unsigned char *p;

		while (cap < need)
			cap *= 2;
		p = realloc(t->undo, cap);
		if (p == NULL)
			ltx_itm_fatal("no memory for the undo log");
		t->undo = p;
		t->undo_cap = cap;
	}
	memcpy(t->undo + t->undo_len, addr, size);
	t->undo_len += padded;
	memcpy(t->undo + t->undo_len, &a, sizeof(a));
	memcpy(t->undo + t->undo_len + sizeof(a), &size, sizeof(size));
	t->undo_len += 2 * sizeof(uintptr_t);
}

/* Undo everything the transaction did outside ltx, down to the lengths
 * of nest n (or all of it), for a return to a checkpoint at cfa. */
static void rollback_logs(struct ltx_itm_thread *t, const struct ltx_itm_nest *n,
			  uintptr_t cfa)
{
	undo_to(t, n ? n->undo_len : 0, cfa);
	ltx_itm_alloc_finish(t, n ? n->allocs_len : 0, false);
	run_actions(t, n ? n->actions_len : 0, false);
	if (n == NULL)
		ltx_itm_eh_rollback(t);
}

/* The outermost transaction is over (committed or rolled back). */
static void finish(struct ltx_itm_thread *t)
{
	t->undo_len = 0;
	t->nests_len = 0;
	t->depth = 0;
	t->mode = ITM_NONE;
	ltx_itm_fast.tx = NULL;
	t->id = 0;
}

void ltx_itm_restart(struct ltx_itm_thread *t)
{
	struct ltx_tx *tx;
	uint32_t path;

	if (t->mode == ITM_SERIAL_IRR)
		ltx_itm_fatal("an irrevocable transaction cannot restart");
	if (t->mode == ITM_INSTR) {
		tx = disarm();
		/* Ends a doomed transaction with backoff; a live one (a
		 * restart we chose) without. */
		if (__atomic_load_n(&tx->status, __ATOMIC_RELAXED) ==
		    LTX_DOOMED)
			ltx_tx_rollback(tx);
		else
			ltx_tx_abort(tx);
	}
	rollback_logs(t, NULL, t->jb.cfa);
	leave(t);
	t->stats.restarts++;
	t->restarts++;
	t->nests_len = 0;
	t->depth = 1;
	t->frees_pending = false;
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

	for (unsigned i = 0; i < sizeof(*to) / sizeof(uint64_t); i++)
		dst[i] = src[i];
}

uint32_t ltx_itm_begin(uint32_t prop, const struct ltx_itm_jmpbuf *jb)
{
	struct ltx_itm_thread *t = ltx_itm_self;
	struct ltx_itm_nest *n;

	if (ltx_unlikely(t == NULL))
		t = ltx_itm_thread_get();
	if (ltx_likely(t->depth == 0)) {
		t->depth = 1;
		t->prop = prop;
		copy_checkpoint(&t->jb, jb);
		t->restarts = 0;
		return enter(t, choose_mode(t)) | ITM_A_SAVE_LIVE;
	}
	t->depth++;
	/* Code that must run irrevocably, or exists only uninstrumented,
	 * makes the whole transaction irrevocable (maybe by a restart). */
	if ((prop & ITM_PR_GOES_IRREVOCABLE) || !(prop & ITM_PR_INSTRUMENTED))
		ltx_itm_go_irrevocable(t);
	if (prop & ITM_PR_HAS_NO_ABORT) {
		/* Flat nesting: the code path of the current mode. */
		if (t->mode == ITM_SERIAL_IRR && (prop & ITM_PR_UNINSTRUMENTED) &&
		    t->nests_len == 0)
			return ITM_A_UNINSTRUMENTED;
		return (prop & ITM_PR_INSTRUMENTED) ? ITM_A_INSTRUMENTED
						    : ITM_A_UNINSTRUMENTED;
	}
	/* A nested transaction that may cancel: closed nesting needs an
	 * undo log, which only the serial modes keep. */
	if (t->mode == ITM_INSTR) {
		t->want_serial = true;
		t->restarts--; /* not a conflict */
		ltx_itm_restart(t);
	}
	if (t->nests_len == t->nests_cap) {
		unsigned cap = t->nests_cap ? 2 * t->nests_cap : 8;
		struct ltx_itm_nest *p = realloc(t->nests, cap * sizeof(*p));

		if (p == NULL)
			ltx_itm_fatal("no memory for a nested transaction");
		t->nests = p;
		t->nests_cap = cap;
	}
	n = &t->nests[t->nests_len++];
	copy_checkpoint(&n->jb, jb);
	n->depth = t->depth;
	n->undo_len = t->undo_len;
	n->allocs_len = t->allocs_len;
	n->actions_len = t->actions_len;
	t->log_writes = true;
	return ((prop & ITM_PR_INSTRUMENTED) ? ITM_A_INSTRUMENTED
					     : ITM_A_UNINSTRUMENTED) |
	       ITM_A_SAVE_LIVE;
}

static void commit_outermost(struct ltx_itm_thread *t)
{
	bool concurrent = t->frees_pending && t->mode == ITM_INSTR;

	if (t->mode == ITM_INSTR) {
		struct ltx_tx *tx = ltx_self;

		/* A failed commit restarts through the checkpoint. */
		if (!ltx_tx_fast_commit(tx) && !ltx_tx_commit(tx))
			ltx_itm_restart(t);
		tx->checkpoint = NULL;
		ltx_itm_shared_exit(t);
	} else {
		struct ltx_tx *tx = ltx_tx_self();

		ltx_itm_serial_exit();
		/* Statistics count it too (ltxstat's totals match). */
		if (tx != NULL)
			ltx_tx_count_serial_commit(tx);
	}
	t->stats.commits++;
	t->frees_pending = false;
	finish(t);
	/* What it freed is released after the concurrent transactions end
	 * (alloc.c): none may still read it. */
	if (t->allocs_len != 0)
		ltx_itm_alloc_commit(t, concurrent);
	t->cxa_catch_count = 0;
	t->cxa_unthrown = NULL;
	if (ltx_unlikely(t->actions_len != 0))
		run_actions(t, 0, true);
}

void _ITM_commitTransaction(void)
{
	struct ltx_itm_thread *t = ltx_itm_self;

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
	struct ltx_itm_thread *t = ltx_itm_self;

	if (t != NULL)
		t->eh_in_flight = exc;
	_ITM_commitTransaction();
	if (t != NULL)
		t->eh_in_flight = NULL;
}

void _ITM_abortTransaction(_ITM_abortReason reason)
{
	struct ltx_itm_thread *t = ltx_itm_self;
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

		rollback_logs(t, n, n->jb.cfa);
		t->depth = n->depth - 1;
		if (t->nests_len == 0 && t->mode != ITM_SERIAL)
			t->log_writes = false;
		ltx_itm_longjmp(ITM_A_ABORT | ITM_A_RESTORE_LIVE, &n->jb);
	}
	if (t->mode == ITM_SERIAL_IRR)
		ltx_itm_fatal("cannot cancel an irrevocable transaction");
	if (t->mode == ITM_INSTR)
		ltx_tx_abort(disarm());
	rollback_logs(t, NULL, t->jb.cfa);
	leave(t);
	t->frees_pending = false;
	finish(t); /* keeps t->jb */
	ltx_itm_longjmp(ITM_A_ABORT | ITM_A_RESTORE_LIVE, &t->jb);
}

void ltx_itm_go_irrevocable(struct ltx_itm_thread *t)
{
	switch (t->mode) {
	case ITM_SERIAL_IRR:
		return;
	case ITM_SERIAL:
		t->mode = ITM_SERIAL_IRR;
		t->log_writes = t->nests_len != 0;
		return;
	case ITM_INSTR:
		break;
	default:
		ltx_itm_fatal("irrevocable mode requested outside a "
			      "transaction");
	}
	/*
	 * In place: become the only transaction, then publish what this one
	 * did so far; from there on it accesses memory directly.  If another
	 * thread is becoming serial too, the others do not finish soon, or
	 * the commit fails, start over irrevocably from the begin.
	 */
	if (ltx_itm_serial_try_enter(t)) {
		struct ltx_tx *tx = disarm();

		ltx_itm_shared_exit(t);
		if (ltx_tx_fast_commit(tx) || ltx_tx_commit(tx)) {
			t->mode = ITM_SERIAL_IRR;
			t->log_writes = false;
			t->stats.upgrades++;
			return;
		}
		/* The failed commit aborted the ltx transaction; restart
		 * takes the serial lock again. */
		t->mode = ITM_SERIAL;
		t->want_irrevocable = true;
		t->restarts--;
		ltx_itm_restart(t);
	}
	t->want_irrevocable = true;
	t->restarts--;
	ltx_itm_restart(t);
}

void _ITM_changeTransactionMode(_ITM_transactionState state)
{
	struct ltx_itm_thread *t = ltx_itm_self;

	if (state != modeSerialIrrevocable)
		ltx_itm_fatal("_ITM_changeTransactionMode: unknown mode");
	if (t == NULL || t->depth == 0)
		ltx_itm_fatal("_ITM_changeTransactionMode outside a "
			      "transaction");
	ltx_itm_go_irrevocable(t);
}

_ITM_howExecuting _ITM_inTransaction(void)
{
	struct ltx_itm_thread *t = ltx_itm_self;

	if (t == NULL || t->depth == 0)
		return outsideTransaction;
	return t->mode == ITM_SERIAL_IRR ? inIrrevocableTransaction
					 : inRetryableTransaction;
}

_ITM_transactionId_t _ITM_getTransactionId(void)
{
	struct ltx_itm_thread *t = ltx_itm_self;

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

static void add_action(struct ltx_itm_thread *t, void (*fn)(void *), void *arg,
		       bool on_commit)
{
	if (t->actions_len == t->actions_cap) {
		size_t cap = t->actions_cap ? 2 * t->actions_cap : 16;
		struct ltx_itm_action *p =
			realloc(t->actions, cap * sizeof(*p));

		if (p == NULL)
			ltx_itm_fatal("no memory for a user action");
		t->actions = p;
		t->actions_cap = cap;
	}
	t->actions[t->actions_len++] =
		(struct ltx_itm_action){ fn, arg, on_commit };
}

void _ITM_addUserCommitAction(_ITM_userCommitFunction fn,
			      _ITM_transactionId_t resuming, void *arg)
{
	struct ltx_itm_thread *t = ltx_itm_self;

	if (resuming != _ITM_noTransactionId)
		ltx_itm_fatal("resuming commit actions are not supported");
	if (t == NULL || t->depth == 0) {
		fn(arg); /* outside a transaction: it has committed */
		return;
	}
	add_action(t, fn, arg, true);
}

void _ITM_addUserUndoAction(_ITM_userUndoFunction fn, void *arg)
{
	struct ltx_itm_thread *t = ltx_itm_self;

	if (t == NULL || t->depth == 0)
		return; /* nothing can roll back */
	add_action(t, fn, arg, false);
}

void _ITM_dropReferences(void *addr, size_t size)
{
	/* A hint that the transaction no longer needs these addresses kept
	 * consistent; keeping them is always correct. */
	(void)addr;
	(void)size;
}

/* LTX_ITM_REPORT: one summary line at exit, proof of who ran the code. */
__attribute__((destructor)) static void report(void)
{
	struct ltx_itm_stats s;

	if (!__atomic_load_n(&ltx_config.itm_report, __ATOMIC_RELAXED))
		return;
	memset(&s, 0, sizeof(s));
	for (struct ltx_itm_thread *t =
		     __atomic_load_n(&ltx_itm_registry, __ATOMIC_ACQUIRE);
	     t != NULL; t = t->next_all) {
		for (int m = 0; m < 4; m++)
			s.begins[m] += t->stats.begins[m];
		s.uninstrumented += t->stats.uninstrumented;
		s.commits += t->stats.commits;
		s.restarts += t->stats.restarts;
		s.cancels += t->stats.cancels;
		s.upgrades += t->stats.upgrades;
	}
	fprintf(stderr,
		"ltx-itm: %llu transactions (%llu instrumented, %llu serial, "
		"%llu irrevocable, %llu uninstrumented), %llu commits, "
		"%llu restarts, %llu cancels, %llu upgrades\n",
		(unsigned long long)(s.begins[ITM_INSTR] + s.begins[ITM_SERIAL] +
				     s.begins[ITM_SERIAL_IRR] - s.restarts),
		(unsigned long long)s.begins[ITM_INSTR],
		(unsigned long long)s.begins[ITM_SERIAL],
		(unsigned long long)s.begins[ITM_SERIAL_IRR],
		(unsigned long long)s.uninstrumented,
		(unsigned long long)s.commits, (unsigned long long)s.restarts,
		(unsigned long long)s.cancels, (unsigned long long)s.upgrades);
}
