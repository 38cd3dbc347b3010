/* SPDX-License-Identifier: MIT */
/* TM_ATOMIC blocks: a checkpoint per outermost block, restart on abort. */
#pragma GCC visibility push(default)
#include <ltx/tm.h>
#pragma GCC visibility pop

#include <stddef.h>
#include <stdint.h>

#include "api/atomic-offsets.h"
#include "rt/jump.h"
#include "rt/unwind.h"
#include "tx/desc.h"
#include "tx/fast.h"
#include "tx/tx.h"

/*
 * A block's struct tm__atomic lives in the user's frame; its tm__link is
 * the ltx_checkpoint the descriptor points to while it is the outermost
 * block, and the macro's setjmp saved the restart point in tm__buf.
 *
 * Block states of kinds 0 and 1 (x86-64's, kind 2: below) (tm__state;
 * the loop runs while it is not BLOCK_DONE; the
 * block's address is passed to every call, so it lives in memory and is
 * read again after each, the jump back included): the for-loop calls
 * begin once, end after each run of the body; a restart longjmps into the
 * body's if, whose restarted() sets RESTART so that end lets the loop run
 * the body again instead of committing.
 */
enum {
	BLOCK_DONE = 0, /* committed or left (what the loop and cleanup test) */
	BLOCK_OUTER,	/* running, the outermost block: owns the checkpoint */
	BLOCK_NESTED,	/* running inside another block (flat) */
	BLOCK_RESTART,	/* jumped back: run the body again */
	BLOCK_LEAVE,	/* jumped back by tm_abort(): leave */
};

_Static_assert(offsetof(struct tm__atomic, tm__link) == 0 &&
		       sizeof(((struct tm__atomic *)0)->tm__link) >=
			       sizeof(struct ltx_checkpoint),
	       "the checkpoint heads the block");

static struct ltx_checkpoint *checkpoint_of(struct tm__atomic *a)
{
	return (struct ltx_checkpoint *)(void *)a->tm__link;
}

static struct tm__atomic *block_of(struct ltx_checkpoint *cp)
{
	return (struct tm__atomic *)(void *)cp;
}

/*
 * The x86-64 restart point (api/atomic-x86_64.S; TM__JMP_KIND 2):
 * tm__block_enter saves it in the block and begins the block (the
 * outermost one itself, the others by ltx_block_begin_slow);
 * ltx_atomic_resume jumps back to it through
 * ltx_atomic_landed.  Its checkpoint is bare (tx/desc.h): enter stores
 * the stack pointer with LTX_CHECKPOINT_BARE set, and no ops.
 *
 * Such a block's state (tm__state) is not what the loop reads (the macro
 * keeps enter's answer in a variable of its own), so the common path
 * stores none: the block is the outermost one while the descriptor's
 * checkpoint is its own; BLOCK_NESTED marks one begun inside another;
 * a restart sets BLOCK_RESTART or BLOCK_LEAVE, and BLOCK_DONE is set when
 * the block is over some other way than its end (left, tm_abort).
 */
_Static_assert(offsetof(struct tm__atomic, tm__buf) == 24 &&
		       offsetof(struct ltx_checkpoint, sp) == 8,
	       "api/atomic-x86_64.S's BUF and SP");
_Static_assert(sizeof(((struct tm__atomic *)0)->tm__buf) >= 7 * sizeof(void *),
	       "room for the x86-64 restart point");
_Static_assert(offsetof(struct ltx_tx, checkpoint) == LTX_TX_CHECKPOINT,
	       "api/atomic-offsets.h: the descriptor's checkpoint moved");
void *ltx_block_begin_slow(struct tm__atomic *a, struct ltx_tx *tx);
void *ltx_atomic_landed(struct tm__atomic *a);
void ltx_atomic_resume(struct tm__atomic *a) __attribute__((noreturn));

/* The checkpoint's restart: back into the block (from the tx layer, or
 * from the fault handler with the signal mask already restored). */
static void block_restart(struct ltx_checkpoint *cp, unsigned cause)
{
	struct tm__atomic *a = block_of(cp);

	a->tm__state = (cause & TM_ABORT_EXPLICIT) && !(cause & TM_ABORT_RETRY)
			       ? BLOCK_LEAVE
			       : BLOCK_RESTART;
	if (a->tm__kind == 1)
		__builtin_longjmp((void **)a->tm__buf, 1);
	/* A block built with setjmp(3): its buffer is a whole jmp_buf
	 * (tm__buf is declared as the block's compiler saw it). */
	ltx_longjmp_unhooked((void *)(uintptr_t)a->tm__buf, 1);
}

static const struct ltx_checkpoint_ops block_ops = {
	.restart = block_restart,
	.left = NULL, /* the block's frame is gone: nothing to forget */
};

/* The same for the x86-64 restart point (a bare checkpoint). */
static void bare_restart(struct ltx_checkpoint *cp, unsigned cause)
{
	struct tm__atomic *a = block_of(cp);

	a->tm__state = (cause & TM_ABORT_EXPLICIT) && !(cause & TM_ABORT_RETRY)
			       ? BLOCK_LEAVE
			       : BLOCK_RESTART;
	ltx_atomic_resume(a); /* lands in ltx_atomic_landed */
}

/* The transaction layer let go of the block (ltx_tx_leave_block: an
 * unwind, or a jump about to leave it, while its frame is still there):
 * it is over, so that its scope exit (tm__block_left) does nothing more. */
static void bare_left(struct ltx_checkpoint *cp)
{
	block_of(cp)->tm__state = BLOCK_DONE;
}

const struct ltx_checkpoint_ops ltx_bare_checkpoint_ops = {
	.restart = bare_restart,
	.left = bare_left,
};

/* Begin a block on tx, a thread's descriptor. */
static inline __attribute__((always_inline)) struct tm__atomic *
begin_on(struct ltx_tx *tx, struct tm__atomic *a, int kind, uintptr_t frame_sp)
{
	struct ltx_checkpoint *cp = checkpoint_of(a);

	a->tm__kind = kind;
	ltx_unwind_forget(); /* no unwind reaches back into a new block */
	/* Flat nesting: a block inside another (or inside a GCC
	 * transaction) runs as part of it; the outermost restart point is
	 * the descriptor's. */
	if (tx->checkpoint != NULL) {
		a->tm__state = BLOCK_NESTED;
		return a;
	}
	cp->ops = &block_ops;
	cp->sp = frame_sp;
	tx->checkpoint = cp;
	a->tm__state = BLOCK_OUTER;
	return a;
}

/* The thread's first block (no descriptor yet), or a handler's that
 * cannot have one (ltx_refuse_tx: the block does not run). */
static __attribute__((noinline)) struct tm__atomic *
begin_slow(struct tm__atomic *a, int kind, uintptr_t frame_sp)
{
	struct ltx_tx *tx = ltx_tx_self();

	if (tx == NULL || tx == &ltx_refuse_tx) {
		a->tm__state = BLOCK_DONE; /* it cannot run at all */
		return a;
	}
	return begin_on(tx, a, kind, frame_sp);
}

struct tm__atomic *tm__atomic_begin(struct tm__atomic *a, int kind)
{
	struct ltx_tx *tx = ltx_self;
	/* The block's frame: the caller's stack pointer at this call. */
	uintptr_t frame_sp = (uintptr_t)__builtin_dwarf_cfa();

	if (ltx_unlikely(tx->slow & LTX_SLOW_STATIC))
		return begin_slow(a, kind, frame_sp);
	return begin_on(tx, a, kind, frame_sp);
}

/*
 * An x86-64 block's descriptor, which its begin keeps in the block's
 * checkpoint (ops, which a bare checkpoint does not use), so that its end
 * reads it from there: the thread's descriptor for the outermost block
 * (the same as ltx_self at the end: a block ends on the thread and in the
 * handler, or not, where it began); nested_marker for a block inside
 * another, whose status is never LTX_ACTIVE (all zero: LTX_IDLE), so
 * that its end never takes the fast path and finds it at once after.
 */
static struct ltx_tx nested_marker;

static void set_block_tx(struct tm__atomic *a, struct ltx_tx *tx)
{
	a->tm__link[0] = tx;
}

/*
 * The x86-64 block's begin when the descriptor has a checkpoint already
 * (tm__block_enter, api/atomic-x86_64.S, begins the others itself: it
 * forgets the last unwind, as ltx_unwind_forget, and takes the
 * checkpoint): a block inside another (or inside a GCC transaction) runs
 * flat; or the descriptor is ltx_boot_tx (the thread's first block: no
 * descriptor yet) or ltx_refuse_tx (a handler's that cannot have one: the
 * block does not run), whose checkpoint is never NULL (tx.c).  Returns
 * enter's answer: non-NULL to run the body, NULL to skip it.
 */
void *ltx_block_begin_slow(struct tm__atomic *a, struct ltx_tx *tx)
{
	if (ltx_unlikely(tx->slow & LTX_SLOW_STATIC)) {
		tx = ltx_tx_self();
		if (tx == NULL || tx == &ltx_refuse_tx)
			return NULL;
		ltx_unwind_forget();
		if (tx->checkpoint == NULL) {
			set_block_tx(a, tx);
			tx->checkpoint = checkpoint_of(a);
			return a;
		}
	}
	ltx_unwind_forget(); /* no unwind reaches back into a new block */
	set_block_tx(a, &nested_marker);
	a->tm__state = BLOCK_NESTED;
	return a;
}

/* The outermost block is over: the descriptor forgets its checkpoint. */
static void block_done(struct tm__atomic *a, struct ltx_tx *tx)
{
	tx->checkpoint = NULL;
	a->tm__state = BLOCK_DONE;
}

/* The end of the outermost block by the full commit. */
static __attribute__((noinline)) void end_outer(struct tm__atomic *a,
						struct ltx_tx *tx)
{
	/* A commit that fails restarts the block (no return). */
	if (ltx_tx_commit(tx)) {
		/* The block is over, even if its last run made no
		 * transactional access (no transaction to commit): its
		 * aborts no longer count towards the serial fallback. */
		tx->consec_aborts = 0;
		block_done(a, tx);
	}
}

/* end's other cases: a commit that needs the full path, nesting, a
 * restart, a block already over. */
static __attribute__((noinline)) void end_slow(struct tm__atomic *a,
					       struct ltx_tx *tx)
{
	switch (a->tm__state) {
	case BLOCK_OUTER:
		end_outer(a, tx);
		break;
	case BLOCK_NESTED:
		a->tm__state = BLOCK_DONE;
		break;
	case BLOCK_RESTART:
		a->tm__state = BLOCK_OUTER; /* the loop runs the body again */
		break;
	default:
		break;
	}
}

/*
 * The end of the outermost block a after the fast path could not commit
 * it: the small commit (checked first, or not where the fast path knows
 * it may take the transaction), the commit that revalidates with the clock
 * value taken, the commit of more than two entries (end_many, below), or
 * the full commit (as end_slow).  Each is tail-called by the
 * fast path (tx/fast.h).
 */
static bool end_full(void *a, struct ltx_tx *tx)
{
	end_outer(a, tx);
	return true;
}

static __attribute__((noinline)) bool end_small(void *a, struct ltx_tx *tx)
{
	if (!ltx_tx_commit_small_checked(tx))
		return end_full(a, tx);
	block_done(a, tx);
	return true;
}

static __attribute__((noinline)) bool end_lone(void *a, struct ltx_tx *tx)
{
	if (!ltx_tx_commit_small(tx))
		return end_full(a, tx);
	block_done(a, tx);
	return true;
}

static __attribute__((noinline)) bool end_revalidate(void *a, struct ltx_tx *tx,
						     uintptr_t ts)
{
	if (!ltx_tx_fast_commit_revalidate(tx, ts))
		return end_full(a, tx);
	block_done(a, tx);
	return true;
}

/* More than two write-set entries and no slow bit: ltx_tx_commit_many,
 * then as end_slow's outermost case. */
static __attribute__((noinline)) bool end_many(void *a, struct ltx_tx *tx)
{
	/* A commit that fails restarts the block (no return). */
	if (ltx_tx_commit_many(tx)) {
		tx->consec_aborts = 0;
		block_done(a, tx);
	}
	return true;
}

/* A commit the fast path made: the block is over. */
static inline __attribute__((always_inline)) void end_done(void *a,
							   struct ltx_tx *tx)
{
	block_done(a, tx);
}

void tm__atomic_end(struct tm__atomic *a)
{
	static const struct ltx_commit_exits exits = {
		.small = end_small,
		.lone = end_lone,
		.revalidate = end_revalidate,
		.full = end_full,
		.many = end_many,
		.done = end_done,
	};
	struct ltx_tx *tx = ltx_self;

	/* The common end: an outermost block whose transaction commits on
	 * the fast path (which also clears the consecutive-abort count),
	 * every other case by a tail call, so no register to save. */
	if (ltx_likely(a->tm__state == BLOCK_OUTER)) {
		(void)ltx_tx_fast_commit_then(tx, &exits, a);
		return;
	}
	end_slow(a, tx);
}

/* A commit the fast path made, of an x86-64 block: it is over (the
 * macro ends the loop itself, reading no state). */
static inline __attribute__((always_inline)) void bare_done(void *a,
							    struct ltx_tx *tx)
{
	(void)a;
	tx->checkpoint = NULL;
}

/* The end of an x86-64 block whose transaction is not live with no
 * slow bit: nothing for a nested block or one the transaction layer let
 * go of (not the holder of the checkpoint), else as end_small. */
static __attribute__((noinline)) bool bare_end_small(void *a, struct ltx_tx *tx)
{
	if (tx->checkpoint != checkpoint_of(a))
		return true;
	return end_small(a, tx);
}

/*
 * The end of an x86-64 block: the outermost one commits, on the fast
 * path if it can, every other case by a tail call (so no register to
 * save); a failed commit restarts it.  A nested block has nothing to do:
 * its transaction is the outermost one's.  No test of the checkpoint on
 * the fast path: the descriptor kept in the block is nested_marker for a
 * nested block (bare_end_small), and a live outermost one holds it.
 */
/* GCC: no cross-jumping, which merges the two-line commit's tail into the
 * one-line one's at the cost of a jump on the two-line path. */
#if defined(__GNUC__) && !defined(__clang__)
#define END_STRAIGHT __attribute__((optimize("no-crossjumping")))
#else
#define END_STRAIGHT
#endif

END_STRAIGHT void tm__block_end(struct tm__atomic *a)
{
	static const struct ltx_commit_exits exits = {
		.small = bare_end_small,
		.lone = end_lone,
		.revalidate = end_revalidate,
		.full = end_full,
		.many = end_many,
		.done = bare_done,
	};

	(void)ltx_tx_fast_commit_then(a->tm__link[0], &exits, a);
}

/*
 * Where a restart of an x86-64 block lands (ltx_atomic_resume), before
 * tm__block_enter returns again: as tm__atomic_restarted, then enter's
 * answer: the block, to run the body again, or NULL after tm_abort().
 */
void *ltx_atomic_landed(struct tm__atomic *a)
{
	tm__atomic_restarted(a);
	return a->tm__state == BLOCK_DONE ? NULL : a;
}

void tm__atomic_restarted(struct tm__atomic *a)
{
	struct ltx_tx *tx = ltx_self;

	/* Doomed by a signal or a fault: end it now, outside any handler. */
	ltx_tx_rollback(tx);
	if (a->tm__state == BLOCK_LEAVE)
		block_done(a, tx);
}

void tm__atomic_left(struct tm__atomic *a)
{
	struct ltx_tx *tx = ltx_self;

	/*
	 * Left by break, return or goto: the block ends here, committed.
	 * Left by a forced unwind (pthread_exit, pthread_cancel in code
	 * built with -fexceptions) or an exception: the body did not finish,
	 * so its transaction is aborted, never committed (rt/unwind.h; the
	 * cleanup that calls this is inlined into the block's function, so
	 * our caller's stack pointer is the block's frame's).
	 */
	if (ltx_unwinding_into((uintptr_t)__builtin_dwarf_cfa())) {
		if (a->tm__state == BLOCK_OUTER || a->tm__state == BLOCK_NESTED)
			ltx_tx_leave_block(tx);
		a->tm__state = BLOCK_DONE;
		return;
	}
	if (a->tm__state == BLOCK_OUTER || a->tm__state == BLOCK_NESTED)
		tm__atomic_end(a);
}

void tm__block_left(struct tm__atomic *a)
{
	struct ltx_tx *tx = ltx_self;
	bool outer = tx->checkpoint == checkpoint_of(a);

	/* As tm__atomic_left, for an x86-64 block (outermost while it holds
	 * the checkpoint; BLOCK_DONE once the transaction layer let go of
	 * it). */
	if (ltx_unwinding_into((uintptr_t)__builtin_dwarf_cfa())) {
		if (outer || a->tm__state == BLOCK_NESTED)
			ltx_tx_leave_block(tx);
		a->tm__state = BLOCK_DONE;
		return;
	}
	if (outer)
		tm__block_end(a);
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
	/* Begin one that has read nothing: not by a load of some word of
	 * ours, whose orec another transaction may hold (orecs are shared
	 * by hashing), which would doom it for a line it never used. */
	ltx_tx_begin(tx);
	if (ltx_tx_irrevocable(tx))
		return true;
	if (tx->checkpoint != NULL)
		ltx_tx_validate(tx); /* ends it and restarts the block */
	return false;
}
