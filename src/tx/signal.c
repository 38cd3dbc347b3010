/* SPDX-License-Identifier: MIT */
/* What a signal does to a transaction: doom it, sandbox faults, handlers. */
#define _GNU_SOURCE
#include <ltx/tm.h>

#include <signal.h>
#include <stdbool.h>
#include <ucontext.h>

#include "cd/cd.h"
#include "rt/signal.h"
#include "tx/desc.h"
#include "tx/tx.h"

/*
 * The article (section 8.2.5): a signal aborts the transaction it lands
 * in.  rt/signal.c interposes the application's handlers and calls these
 * hooks around each (async-signal-safe: no lock, no malloc):
 *  - fault: a fault (SIGSEGV/SIGBUS/SIGFPE raised by an instruction) in a
 *    transaction that has a checkpoint and is doomed, or whose reads no
 *    longer hold, restarts it (TM_ABORT_FAULT, the signal number in bits
 *    24-31); the application's handler does not run;
 *  - enter: a live, revocable transaction of the thread is doomed
 *    (TM_ABORT_SIGNAL, the signal number in bits 24-31); if the
 *    application's handler runs, ltx_self points to the thread's handler
 *    descriptor meanwhile, so transactions begun in the handler never
 *    touch the interrupted one; a handler interrupting such a handler gets
 *    ltx_refuse_tx (its transactions fail at once);
 *  - leave: a transaction the handler left open is abandoned, and ltx_self
 *    points to the interrupted descriptor again.
 */

/*
 * Doom the thread's transaction from a handler: only limit, cause and
 * status (see desc.h); the lines are released by the next slow path.  An
 * irrevocable transaction is not doomed: it never aborts.
 */
static void doom_from_handler(struct ltx_tx *tx, unsigned cause)
{
	if (tx == &ltx_boot_tx || tx == &ltx_refuse_tx || tx->cd.irrevocable)
		return;
	if (__atomic_load_n(&tx->status, __ATOMIC_RELAXED) != LTX_ACTIVE)
		return;
	__atomic_store_n(&tx->cd.limit, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&tx->cause,
			 __atomic_load_n(&tx->cause, __ATOMIC_RELAXED) | cause,
			 __ATOMIC_RELAXED);
	/* The interrupted code must see limit 0 before status DOOMED. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&tx->status, LTX_DOOMED, __ATOMIC_RELAXED);
}

/*
 * The fault sandbox: restart tx at its checkpoint if the fault can be
 * blamed on inconsistent data.  Returns only when it cannot.
 */
static void sandbox(struct ltx_tx *tx, int sig, ucontext_t *uc)
{
	const struct ltx_cd_ops *ops;
	unsigned cause = TM_ABORT_FAULT | TM_ABORT_RETRY | ((unsigned)sig << 24);
	int st;

	if (tx == &ltx_boot_tx || tx == &ltx_refuse_tx)
		return;
	st = __atomic_load_n(&tx->status, __ATOMIC_RELAXED);
	if (ltx_status_idle(st) || st == LTX_COMMITTING ||
	    tx->checkpoint == NULL || tx->cd.irrevocable)
		return;
	if (st == LTX_ACTIVE) {
		ops = ltx_cd_ops_of(tx->mode);
		if (ops->valid_now == NULL || ops->valid_now(&tx->cd))
			return; /* a real bug: let it have its way */
		doom_from_handler(tx, cause);
	} else {
		__atomic_store_n(&tx->cause,
				 __atomic_load_n(&tx->cause, __ATOMIC_RELAXED) |
					 cause,
				 __ATOMIC_RELAXED);
	}
	/* The checkpoint saved no mask: put back the interrupted one. */
	pthread_sigmask(SIG_SETMASK, &uc->uc_sigmask, NULL);
	tx->checkpoint->restart(tx->checkpoint, cause);
}


static void on_fault(int sig, void *uc)
{
	sandbox(ltx_self, sig, uc);
}

static void *on_enter(int sig, bool handler)
{
	struct ltx_tx *cur = ltx_self, *use;

	doom_from_handler(cur, TM_ABORT_SIGNAL | ((unsigned)sig << 24));
	if (!handler)
		return NULL;
	/* Transactions in the handler run on the handler descriptor. */
	if (cur == &ltx_boot_tx)
		use = cur;
	else if (cur->parent == NULL && cur->handler_tx != NULL &&
		 cur != &ltx_refuse_tx)
		use = cur->handler_tx;
	else
		use = &ltx_refuse_tx;
	ltx_self = use;
	return cur;
}

static void on_leave(void *token)
{
	struct ltx_tx *cur = token, *use = ltx_self;

	if (use != cur && use != &ltx_refuse_tx) {
		/* A transaction the handler left open is abandoned. */
		use->checkpoint = NULL;
		use->atomic_depth = 0;
		ltx_tx_abort(use);
	}
	if (cur != &ltx_boot_tx)
		ltx_self = cur;
}

void ltx_tx_signals_init(void)
{
	static const struct ltx_signal_hooks hooks = {
		.fault = on_fault,
		.enter = on_enter,
		.leave = on_leave,
	};

	ltx_signal_init(&hooks);
}
