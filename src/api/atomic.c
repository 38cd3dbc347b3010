/* SPDX-License-Identifier: MIT */
/* TM_ATOMIC blocks: a checkpoint per outermost block, restart on abort. */
#pragma GCC visibility push(default)
#include <ltx/tm.h>
#pragma GCC visibility pop

#include <setjmp.h>
#include <stddef.h>

#include "tx/desc.h"
#include "tx/tx.h"

/*
 * A block's struct tm__atomic lives in the user's frame; its tm__link is
 * the ltx_checkpoint the descriptor points to while it is the outermost
 * block, and setjmp in the macro saved the restart point in tm__buf.
 *
 * Block states (tm__state; volatile, as it changes between setjmp and
 * longjmp): the for-loop calls begin before each run of the body and end
 * after it; a restart longjmps into the body's if, whose restarted() sets
 * RESTART so that end does nothing and begin runs the body again.
 */
enum {
	BLOCK_INIT = 0, /* not entered yet */
	BLOCK_OUTER,	/* running, the outermost block: owns the checkpoint */
	BLOCK_NESTED,	/* running inside another block (flat) */
	BLOCK_RESTART,	/* jumped back: run the body again */
	BLOCK_LEAVE,	/* jumped back by tm_abort(): leave */
	BLOCK_DONE,	/* committed or left */
};

_Static_assert(sizeof(((struct tm__atomic *)0)->tm__link) >=
		       sizeof(struct ltx_checkpoint),
	       "room for the checkpoint header");

static struct ltx_checkpoint *checkpoint_of(struct tm__atomic *a)
{
	return (struct ltx_checkpoint *)(void *)a->tm__link;
}

/* The checkpoint's restart: back into the block (from the tx layer, or
 * from the fault handler with the signal mask already restored). */
static void block_restart(struct ltx_checkpoint *cp, unsigned cause)
{
	struct tm__atomic *a = cp->arg;

	a->tm__state = (cause & TM_ABORT_EXPLICIT) && !(cause & TM_ABORT_RETRY)
			       ? BLOCK_LEAVE
			       : BLOCK_RESTART;
	longjmp(a->tm__buf, 1);
}

/* The descriptor a block runs on, or NULL when it cannot run at all. */
static struct ltx_tx *block_tx(void)
{
	struct ltx_tx *tx = ltx_tx_self();

	if (tx == NULL || tx == &ltx_refuse_tx)
		return NULL;
	return tx;
}

int tm__atomic_begin(struct tm__atomic *a)
{
	struct ltx_tx *tx;

	switch (a->tm__state) {
	case BLOCK_INIT:
		tx = block_tx();
		if (tx == NULL) {
			a->tm__state = BLOCK_DONE;
			return 0;
		}
		if (tx->atomic_depth++ != 0) {
			a->tm__state = BLOCK_NESTED;
			return 1;
		}
		checkpoint_of(a)->restart = block_restart;
		checkpoint_of(a)->arg = a;
		tx->checkpoint = checkpoint_of(a);
		a->tm__state = BLOCK_OUTER;
		return 1;
	case BLOCK_RESTART:
		a->tm__state = BLOCK_OUTER;
		return 1;
	default:
		return 0;
	}
}

/* The outermost block is over: the descriptor forgets its checkpoint. */
static void block_done(struct tm__atomic *a, struct ltx_tx *tx)
{
	tx->checkpoint = NULL;
	tx->atomic_depth = 0;
	a->tm__state = BLOCK_DONE;
}

void tm__atomic_end(struct tm__atomic *a)
{
	struct ltx_tx *tx = ltx_self;

	switch (a->tm__state) {
	case BLOCK_NESTED:
		tx->atomic_depth--;
		a->tm__state = BLOCK_DONE;
		break;
	case BLOCK_OUTER:
		/* On failure this restarts the block: no return. */
		if (ltx_tx_commit(tx)) {
			/* The block is over, even if its last run made no
			 * transactional access (no transaction to commit):
			 * its aborts no longer count towards the serial
			 * fallback. */
			if (tx != &ltx_boot_tx)
				tx->consec_aborts = 0;
			block_done(a, tx);
		}
		break;
	default:
		break;
	}
}

void tm__atomic_restarted(struct tm__atomic *a)
{
	struct ltx_tx *tx = ltx_self;

	/* Doomed by a signal or a fault: end it now, outside any handler. */
	ltx_tx_rollback(tx);
	tx->atomic_depth = 1; /* the inner blocks' frames are gone */
	if (a->tm__state == BLOCK_LEAVE)
		block_done(a, tx);
}

void tm__atomic_cleanup(struct tm__atomic *a)
{
	/* Left by break, continue, return or goto: end the block here. */
	if (a->tm__state == BLOCK_OUTER || a->tm__state == BLOCK_NESTED)
		tm__atomic_end(a);
}

void tm_retry(void)
{
	ltx_tx_retry(ltx_self);
}

bool tm_irrevocable(void)
{
	struct ltx_tx *tx = ltx_tx_self();

	if (tx == NULL)
		return false;
	if (ltx_status_idle(__atomic_load_n(&tx->status, __ATOMIC_RELAXED))) {
		/* Begin one: a load does (of a word nobody else uses). */
		static const tm_word_t anchor;

		(void)tm_lt(&anchor);
	}
	if (ltx_tx_irrevocable(tx))
		return true;
	if (tx->checkpoint != NULL)
		ltx_tx_validate(tx); /* ends it and restarts the block */
	return false;
}
