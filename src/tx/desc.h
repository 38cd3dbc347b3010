/* SPDX-License-Identifier: MIT */
/* The transaction descriptor: ltx's per-thread transaction cache. */
#ifndef LTX_TX_DESC_H
#define LTX_TX_DESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "rt/config.h"
#include "cd/cd.h"
#include "rt/stats.h"

#define LTX_INTERNAL 1
#include <ltx/inline.h>

/*
 * Transaction states (struct ltx_tx.status).  The article's TACTIVE flag is
 * !ltx_status_idle(status); its TSTATUS flag is status == LTX_ACTIVE.
 *
 * Three idle states say how the next transaction may begin.  LTX_IDLE and
 * LTX_IDLE_VISIBLE are stored only while the descriptor is set for the
 * settings, with no capacity limit: its mode is the setting's, and
 * cd.capacity and cd.counted are 0 (tx.c's rearm sets it so when the
 * settings change, and every begin keeps it so: a transaction ends in
 * the settings it began in).  A transaction that runs alone then begins
 * by tx/alone.h's steps in either mode.
 */
enum ltx_status {
	LTX_IDLE = 0,	      /* no transaction: the next operation begins
			       * one on the fast paths (the invisible mode
			       * with no capacity limit) */
	LTX_ACTIVE = 1,	      /* live: may still commit */
	LTX_DOOMED = 2,	      /* failed: loads return 0, stores do nothing */
	LTX_IDLE_SLOW = 3,    /* as LTX_IDLE, but begin by the slow path
			       * (the boot descriptor, a capacity limit,
			       * due for the serial fallback, a thread's
			       * end, a fork) */
	LTX_COMMITTING = 4,   /* past the commit point, writing back: signals
			       * and the fault sandbox leave it alone */
	LTX_IDLE_VISIBLE = 8, /* as LTX_IDLE_SLOW, in the visible mode with
			       * no capacity limit: only a transaction that
			       * runs alone begins without the slow path (a
			       * bit of its own: tx/alone.h tests for it and
			       * LTX_IDLE at once) */
};

/*
 * Slow bits (struct ltx_tx.slow): each says why a commit cannot take the
 * fast path (tx/fast.h); COMMIT's first test is slow == 0.
 */
#define LTX_SLOW_ACTIONS 1u  /* actions are registered (tx.c) */
#define LTX_SLOW_STATS	 2u  /* statistics count every commit (tx/stats.c) */
#define LTX_SLOW_SERIAL	 4u  /* holds the serial token (tx/serial.h) */
#define LTX_SLOW_STATIC	 8u  /* ltx_boot_tx, ltx_refuse_tx: not a thread's */
#define LTX_SLOW_MEM	 16u /* tm_malloc/tm_free to settle at the end (mem.c) */
/* end_state may be non-zero (an abort set last_status or consec_aborts):
 * the next commit clears both, and the bit.  So slow == 0 means end_state
 * is 0 already, and the fast commits (tx/fast.h) need not store it. */
#define LTX_SLOW_ABORTED 32u
/* The transaction was begun with limit 0 (the visible mode, a capacity
 * limit, irrevocable): set by tx.c's begin(), the one begin that leaves
 * limit 0 with no other slow bit, and cleared when a transaction ends
 * (committed_slow, finish_abort).  So a live transaction (status
 * LTX_ACTIVE) with no slow bit has limit != 0: it is of the fast paths,
 * and the fast commits test status and slow alone, as one word. */
#define LTX_SLOW_UNARMED 64u
/* The slow bits whose work only comes after the commit: the small fast
 * commit (tx/fast.h) takes transactions with those. */
#define LTX_SLOW_AFTER (LTX_SLOW_ACTIONS | LTX_SLOW_MEM | LTX_SLOW_ABORTED)

/* status_slow of a live transaction with no slow bit (status is the low
 * half on a little-endian CPU). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define LTX_LIVE_PLAIN ((uint64_t)LTX_ACTIVE << 32)
#else
#define LTX_LIVE_PLAIN ((uint64_t)LTX_ACTIVE)
#endif

static inline bool ltx_status_idle(int status)
{
	return status == LTX_IDLE || status == LTX_IDLE_SLOW ||
	       status == LTX_IDLE_VISIBLE;
}

/*
 * An action run when the transaction ends: fn(arg) after a commit (after
 * the new values are published and the lines released), or after an abort
 * (in reverse order of registration).  Used for deferred frees, undoing
 * allocations, and the libitm user actions.
 */
struct ltx_action {
	void (*fn)(void *arg);
	void *arg;
	int on_commit; /* 1: run on commit; 0: run on abort */
};

/*
 * struct ltx_tx: one per thread, reached through ltx_self (initial-exec TLS).
 * Created on a thread's first transactional operation, returned to a pool at
 * thread exit and never freed, so statistics survive the thread and no
 * dangling descriptor can ever be reached.  It owns the transaction's life
 * cycle; cd is conflict detection's part (cd/cd.h), which cd sees alone.
 *
 * The first cache line holds what the fast paths read and write: status,
 * slow, the transaction count and cd's hot fields (limit first: see
 * cd/cd.h).  The second holds cd's write-set bounds and snapshot, which
 * read after write and a begin also read.
 *
 * Synchronization: a descriptor is written only by its own thread, by
 * signal handlers running on that thread, which touch only status,
 * cd.limit and cause with relaxed atomics, and by the irrevocable
 * transaction of another thread, which may turn status from ACTIVE to
 * DOOMED with a CAS (tx.c, doom_remote; the commit point is a CAS too);
 * other threads read status and tx_id (tm_free's grace periods, the
 * serial token's drain, the irrevocable transaction: acquire loads that
 * pair with the release stores made at begin and end).
 */
struct ltx_tx {
	/* hot: the first line, mirrored by struct tm__hot (<ltx/inline.h>) */
	union {
		struct {
			int status;    /* enum ltx_status */
			uint32_t slow; /* LTX_SLOW_*: why commit must take
					* its full path */
		};
		/* Both, for the fast commits' one test (LTX_LIVE_PLAIN): a
		 * relaxed load, which a signal handler's or another
		 * thread's store to status may race with, as with a load
		 * of status alone. */
		uint64_t status_slow;
	};
	uint64_t tx_id; /* transactions begun by this thread: the serial
			 * number of the current or last one */
	struct ltx_cd cd;

	/* warm: slow paths */
	int mode;	 /* enum ltx_mode of this transaction */
	unsigned cause;	 /* TM_ABORT_* bits while doomed (0 from begin:
			  * <ltx/inline.h> clears it at TM__CAUSE_OFFSET) */
	int signal_wait; /* a signal landed past the commit point and waits
			  * for the commit's end (tx/signal.c, on_defer;
			  * ltx_tx_committed) */
	int itm_path;	 /* the libitm layer's barriers' one test of its
			  * per-thread state: LTX_ITM_PATH_* bits it keeps
			  * (itm/itm.h, ltx_itm_set_path) */
	union {
		struct {
			uint32_t last_status;	/* tm_status() of the last */
			uint32_t consec_aborts; /* aborts since a commit */
		};
		uint64_t end_state; /* both, cleared by one store at commit;
				     * non-zero only with LTX_SLOW_ABORTED */
	};
	uint64_t rng; /* backoff randomization (xorshift) */

	/* actions to run when the transaction ends (tx.c) */
	struct ltx_action *actions;
	size_t nactions, actions_cap;

	/* life cycle */
	struct ltx_tx *next_all; /* registry of all descriptors (never freed) */
	int in_use;		 /* owned by a live thread */

	struct ltx_stats stats; /* this thread's counters (rt/stats.h) */

	/* statistics (tx/stats.c): see tx/stats.h */
	uint64_t stats_gen;   /* seqlock generation, odd while updating */
	uint64_t stats_id0;   /* tx_id when stats were last reset (fork) */
	int stats_on;	      /* enum ltx_stats_level this thread counts at */
	int doom_kind;	      /* enum ltx_site_kind of the doom, if noted */
	uintptr_t doom_pc;    /* where the doomed access was made, or 0 */
	uint32_t doom_nstack; /* frames in doom_stack */
	uintptr_t doom_stack[LTX_STATS_STACK];
	struct ltx_stats_site *sites;  /* LTX_STATS_SITES, while stats_on */
	struct ltx_stats_lines *lines; /* conflict lines, while stats_on */
	/*
	 * Checkpoints, signals and irrevocability.  checkpoint is the restart
	 * point of the outermost restartable block (TM_ATOMIC, api/atomic.c;
	 * the libitm layer registers its own the same way): while it is set,
	 * a doomed transaction is ended and restarted there as soon as the
	 * transaction layer notices (any slow path), and a fault in a doomed
	 * transaction restarts it from the fault handler.  Whether the
	 * transaction is irrevocable (holds the serial token) is
	 * cd.irrevocable; a handler descriptor has cd.no_alloc set.
	 */
	struct ltx_checkpoint *checkpoint;
	struct ltx_tx *handler_tx; /* runs this thread's handler txs */
	struct ltx_tx *parent;	   /* of a handler descriptor: the main one */

	/* tm_malloc/tm_free state (tx/mem.c), NULL until first used; kept
	 * with the descriptor when it is pooled */
	struct ltx_mem_thread *mem;

	/*
	 * For the front ends.  frontend is a front end's per-thread state
	 * (the libitm layer's), made on first use and kept with the
	 * descriptor; takes counts the threads that took the descriptor, so
	 * that the front end knows when its state belongs to a new thread.
	 * stack_lo and stack_span bound the owning thread's stack, set by
	 * the front end that needs them (the libitm barriers: a store to the
	 * thread's own stack is made directly).
	 */
	void *frontend;
	uint32_t takes;
	uintptr_t stack_lo;
	uintptr_t stack_span;
};

/*
 * struct ltx_checkpoint: where a restartable block resumes.  ops->restart(cp,
 * cause) is called on the owning thread with the transaction doomed (not
 * yet ended) or already ended, from ordinary code or from the fault
 * handler (the signal mask already restored); it must not return.  It
 * jumps back to the block, which then ends the transaction if it is still
 * open (ltx_tx_rollback) and runs again, or leaves the block when cause is
 * TM_ABORT_EXPLICIT without TM_ABORT_RETRY (tm_abort()).  The owner embeds
 * the checkpoint in its own state and finds that from cp.
 *
 * A jump out of the block (rt/jump.h) ends its transaction -- aborted, or
 * committed if it is irrevocable (it cannot be undone) -- and calls left.
 *
 * Rules for every conflict-detection mode (the visible one included):
 * implement make_irrevocable (cd.h): an irrevocable transaction holds
 * every line it has read or written, never dooms itself on a conflict,
 * and waits only for a holder that is committing: a live holder it dooms
 * and a doomed one's line it takes (ltx_cd_holder, cd.h); an update
 * commit turns status from LTX_ACTIVE to LTX_COMMITTING by CAS at its
 * commit point (a signal or an irrevocable transaction may have doomed
 * it).  A descriptor with no_alloc set must fail with TM_ABORT_CAPACITY
 * rather than grow its logs (it runs in signal handlers).
 */
struct ltx_checkpoint_ops {
	void (*restart)(struct ltx_checkpoint *cp, unsigned cause);
	/* left: a jump (longjmp, siglongjmp) or an unwind took the thread
	 * out of the block, whose transaction the transaction layer has
	 * ended; the owner forgets the block (its frame is gone).  May be
	 * NULL. */
	void (*left)(struct ltx_checkpoint *cp);
};

struct ltx_checkpoint {
	const struct ltx_checkpoint_ops *ops;
	/* The stack pointer of the block's frame: a jump to this frame or an
	 * outer one leaves the block (rt/jump.h).  With LTX_CHECKPOINT_BARE
	 * set, a bare checkpoint: ops is not the ops (it is its owner's to
	 * use; read both through the functions below). */
	uintptr_t sp;
};

/*
 * A bare checkpoint: TM_ATOMIC's x86-64 restart point (api/atomic.c),
 * whose begin stores the stack pointer with this bit set and no ops, one
 * store less per block; its ops are ltx_bare_checkpoint_ops, defined
 * there (weak here: only a program that makes such a checkpoint links
 * api/atomic.c in, from a static library).  A stack pointer is at least
 * 8-aligned, so the bit is free.
 */
#define LTX_CHECKPOINT_BARE ((uintptr_t)1)
extern const struct ltx_checkpoint_ops ltx_bare_checkpoint_ops
	__attribute__((weak));

static inline const struct ltx_checkpoint_ops *
ltx_checkpoint_ops(const struct ltx_checkpoint *cp)
{
	return (cp->sp & LTX_CHECKPOINT_BARE) ? &ltx_bare_checkpoint_ops
					      : cp->ops;
}

static inline uintptr_t ltx_checkpoint_sp(const struct ltx_checkpoint *cp)
{
	return cp->sp & ~LTX_CHECKPOINT_BARE;
}

/*
 * The calling thread's descriptor (never NULL: see ltx_boot_tx).  Exported
 * as tm__self_v4 for <ltx/inline.h>, whose struct tm__head mirrors the
 * head of struct ltx_tx (its first two lines) and struct tm__wentry a
 * write-set entry's: change either and the version in the name together.
 */
#define ltx_self tm__self_v4
extern __thread struct ltx_tx *ltx_self
	__attribute__((tls_model("initial-exec")));

/*
 * ltx_boot_tx: what ltx_self points to before a thread's first operation.
 * Its limit is 0, its status LTX_IDLE_SLOW and its orec table a one-word
 * dummy (mask 0), so the hot path reads harmlessly and falls into the slow
 * path, which creates the real one.
 */
extern struct ltx_tx ltx_boot_tx;

#define LTX_HOT_SAME(f, g)                                                     \
	_Static_assert(                                                        \
		offsetof(struct ltx_tx, f) == offsetof(struct tm__hot, g),     \
		"struct tm__hot (ltx/inline.h) differs from ltx_tx: " #g)
LTX_HOT_SAME(status, status);
LTX_HOT_SAME(slow, slow);
_Static_assert(offsetof(struct ltx_tx, cause) == TM__CAUSE_OFFSET,
	       "TM__CAUSE_OFFSET (ltx/inline.h) differs from ltx_tx's cause");
LTX_HOT_SAME(tx_id, tx_id);
LTX_HOT_SAME(cd.limit, limit);
LTX_HOT_SAME(cd.orecs, orecs);
LTX_HOT_SAME(cd.orec_mask, orec_mask);
LTX_HOT_SAME(cd.orec_mul, orec_mul);
LTX_HOT_SAME(cd.rs_next, rs_next);
LTX_HOT_SAME(cd.rs_end, rs_end);
_Static_assert(sizeof(struct tm__hot) <= LTX_LINE_SIZE,
	       "the fast paths' fields fit in the descriptor's first line");
#define LTX_HEAD_SAME(f, g)                                                    \
	_Static_assert(                                                        \
		offsetof(struct ltx_tx, f) == offsetof(struct tm__head, g),    \
		"struct tm__head (ltx/inline.h) differs from ltx_tx: " #g)
LTX_HEAD_SAME(status, hot);
LTX_HEAD_SAME(cd.ws_next, ws_next);
LTX_HEAD_SAME(cd.ws_end, ws_end);
LTX_HEAD_SAME(cd.ws_base, ws_base);
LTX_HEAD_SAME(cd.rs_base, rs_base);
LTX_HEAD_SAME(cd.snapshot, snapshot);
LTX_HEAD_SAME(cd.ws_key, ws_key);
LTX_HEAD_SAME(cd.ws_span, ws_span);
_Static_assert(sizeof(struct tm__head) <= 2 * LTX_LINE_SIZE,
	       "read after write and begin read the first two lines only");
#define LTX_WENTRY_SAME(f)                                                     \
	_Static_assert(offsetof(struct ltx_wentry, f) ==                       \
			       offsetof(struct tm__wentry, f),                 \
		       "struct tm__wentry (ltx/inline.h) differs: " #f)
LTX_WENTRY_SAME(next);
LTX_WENTRY_SAME(flags);
LTX_WENTRY_SAME(single_addr);
LTX_WENTRY_SAME(single_val);
_Static_assert(sizeof(struct tm__wentry) == sizeof(struct ltx_wentry),
	       "struct tm__wentry (ltx/inline.h) differs: size");
_Static_assert(TM__SINGLE == LTX_WENTRY_SINGLE && TM__IDLE == LTX_IDLE &&
		       TM__ACTIVE == LTX_ACTIVE,
	       "<ltx/inline.h>'s constants differ from ltx's");
_Static_assert(sizeof(struct ltx_rentry) == sizeof(uintptr_t *),
	       "a read-set entry is one orec pointer (ltx/inline.h)");

/*
 * ltx_refuse_tx: what ltx_self points to in a signal handler that runs
 * while this thread's handler descriptor is already in use (a handler
 * interrupted by another) or could not be created.  Every transaction on it
 * fails at once with TM_ABORT_SIGNAL|TM_ABORT_CAPACITY; nothing writes it.
 */
extern struct ltx_tx ltx_refuse_tx;

#endif /* LTX_TX_DESC_H */
