/* SPDX-License-Identifier: MIT */
/* The transaction descriptor: ltx's per-thread transaction cache. */
#ifndef LTX_TX_DESC_H
#define LTX_TX_DESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "rt/config.h"
#include "rt/stats.h"

#define LTX_INTERNAL 1
#include <ltx/inline.h>

/*
 * Transaction states (struct ltx_tx.status).  The article's TACTIVE flag is
 * status != LTX_IDLE; its TSTATUS flag is status == LTX_ACTIVE.
 */
enum ltx_status {
	LTX_IDLE = 0,	   /* no transaction: the next operation begins one */
	LTX_ACTIVE = 1,	   /* live: may still commit */
	LTX_DOOMED = 2,	   /* failed: loads return 0, stores do nothing */
	LTX_IDLE_SLOW = 3, /* as LTX_IDLE, but begin by the slow path (the
			    * boot descriptor, modes without a fast path) */
	LTX_COMMITTING = 4, /* past the commit point, writing back: signals
			     * and the fault sandbox leave it alone */
};

static inline bool ltx_status_idle(int status)
{
	return status == LTX_IDLE || status == LTX_IDLE_SLOW;
}

/*
 * Read-set entry of the invisible mode: the orec of a line read.  No
 * version is kept: a line read at a version <= snapshot that changes later
 * gets a version above the snapshot of that moment (see invisible.c), so
 * "orec still <= snapshot" is the whole validity test.
 */
struct ltx_rentry {
	uintptr_t *orec;
};

/*
 * Write-set entry: one line held in E, with its XABORT copy.  data holds
 * the bytes stored by ST; mask has bit i set when byte i of the line is
 * dirty.  Memory itself is the XCOMMIT copy: it is not touched before the
 * commit point, and at commit only dirty bytes are written back, so bytes of
 * the line that the transaction did not store are never clobbered.
 *
 * Several lines can hash to one orec.  The first entry to take the orec
 * (the head) records it in orec and the version it replaced in old_version;
 * later entries on the same orec have orec == NULL and are chained from the
 * head through next (indices + 1 into the write set; 0 ends the chain).
 */
struct ltx_wentry {
	uint64_t data[8];      /* XABORT copy of the line (dirty bytes) */
	uint64_t mask;	       /* dirty-byte mask */
	uintptr_t line;	       /* address of the line */
	uintptr_t *orec;       /* orec taken by this entry, or NULL */
	uintptr_t old_version; /* head only: the orec's value before */
	union {
		struct {
			uint32_t next;	/* next entry on this orec, index + 1 */
			uint32_t flags; /* LTX_WENTRY_* */
		};
		uint64_t link; /* 0: a lone head, the common case */
	};
	uint32_t head;	       /* chained entries: index of the head */
	uint32_t pad_;
	uintptr_t single_addr; /* LTX_WENTRY_SINGLE: the word stored... */
	uint64_t single_val;   /* ...and its value (data, mask unused) */
};

_Static_assert(sizeof(struct ltx_wentry) == 128, "write-set entry size");

/* The orec must get a new version at commit even if no byte is dirty. */
#define LTX_WENTRY_BUMP 1u
/* A later entry on an orec held by an earlier one (orec is NULL). */
#define LTX_WENTRY_CHAINED 2u
/*
 * The line's only store so far is one aligned word, made by the fast path:
 * it is in single_addr/single_val, and data and mask are stale.  Commit
 * writes it back with one store; anything else that needs the bytes calls
 * ltx_wset_expand() first.  The common ST costs no mask arithmetic, and
 * its commit no mask loop.
 */
#define LTX_WENTRY_SINGLE 4u
/* link of a lone head whose one store is a LTX_WENTRY_SINGLE word. */
#define LTX_WENTRY_LONE_SINGLE ((uint64_t)LTX_WENTRY_SINGLE << 32)

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
 * dangling descriptor can ever be reached.
 *
 * The first cache line holds what the hot path reads.  limit is the key to
 * the fast path: while a transaction is live it is snapshot + 1, and an
 * orec value below it is an unlocked line no newer than the snapshot; in
 * every other case (no transaction yet, doomed, visible mode, line locked -
 * a locked orec has bit 63 set - or too new) limit is 0 or the orec value is
 * above it, and the operation takes the slow path.  One compare covers all.
 *
 * Synchronization: a descriptor is written only by its own thread, and by
 * signal handlers running on that thread (issue: checkpoints and signals),
 * which touch only status, limit and cause with relaxed atomics; the
 * fields shared with other threads are the orecs the descriptor locks.
 */
struct ltx_tx {
	/* hot: read by tm_lt/tm_ltx/tm_st/tm_commit */
	uintptr_t limit;
	uintptr_t *orecs;
	uintptr_t orec_mask; /* (table size - 1) * sizeof(orec): see orec.h */
	uint64_t orec_mul;   /* LTX_OREC_MUL, as a memory operand for imul */
	int status;
	struct ltx_rentry *rs_next;
	struct ltx_rentry *rs_end;
	struct ltx_wentry *ws_next;
	struct ltx_wentry *ws_end;
	struct ltx_wentry *ws_base;

	/* warm: slow paths */
	uintptr_t snapshot;	    /* global clock value the reads are valid at */
	struct ltx_rentry *rs_base;
	int mode;		    /* enum ltx_mode of this transaction */
	unsigned cause;		    /* TM_ABORT_* bits while doomed */
	union {
		struct {
			uint32_t last_status;	/* tm_status() of the last */
			uint32_t consec_aborts; /* aborts since a commit */
		};
		uint64_t end_state; /* both, cleared by one store at commit */
	};
	uint64_t rng;	/* backoff randomization (xorshift) */
	uint64_t tx_id; /* transactions begun by this thread: the serial
			 * number of the current or last one */

	/* actions to run when the transaction ends (tx.c) */
	struct ltx_action *actions;
	unsigned nactions, actions_cap;

	/* life cycle */
	struct ltx_tx *next_all; /* registry of all descriptors (never freed) */
	int in_use;		 /* owned by a live thread */
	int thread_slot;	 /* small integer id, stable for the thread */

	struct ltx_stats stats; /* this thread's counters (rt/stats.h) */

	/* statistics (tx/stats.c): see tx/stats.h */
	uint64_t stats_gen;	/* seqlock generation, odd while updating */
	uint64_t stats_id0;	/* tx_id when stats were last reset (fork) */
	int stats_on;		/* enum ltx_stats_level this thread counts at */
	int doom_kind;		/* enum ltx_site_kind of the doom, if noted */
	uintptr_t doom_pc;	/* where the doomed access was made, or 0 */
	uint32_t doom_nstack;	/* frames in doom_stack */
	uintptr_t doom_stack[LTX_STATS_STACK];
	struct ltx_stats_site *sites; /* LTX_STATS_SITES, while stats_on */
	unsigned actions_keep;	/* leading actions that never end (see
				 * ltx_stats_arm: they route commits to the
				 * slow path while statistics are on) */
	/*
	 * Checkpoints, signals and irrevocability (issue 4).  checkpoint is
	 * the restart point of the outermost restartable block (TM_ATOMIC,
	 * api/atomic.c; the libitm layer registers its own the same way):
	 * while it is set, a doomed transaction is ended and restarted there
	 * as soon as the transaction layer notices (any slow path), and a
	 * fault in a doomed transaction restarts it from the fault handler.
	 */
	struct ltx_checkpoint *checkpoint;
	unsigned atomic_depth;	   /* TM_ATOMIC blocks open (flat nesting) */
	int irrevocable;	   /* holds the serial token (tx/serial.c) */
	int no_alloc;		   /* a handler descriptor: never malloc */
	struct ltx_tx *handler_tx; /* runs this thread's handler txs */
	struct ltx_tx *parent;	   /* of a handler descriptor: the main one */

	/* tm_malloc/tm_free state (tx/mem.c), NULL until first used; kept
	 * with the descriptor when it is pooled */
	struct ltx_mem_thread *mem;

	/*
	 * The transaction-cache directory (cd/lines.h): the lines of the
	 * current transaction's data set, kept by the visible mode always and
	 * by the invisible mode on its counted path (capacity limit set).
	 */
	struct ltx_line *lines;
	uint32_t lines_mask;  /* table size - 1; 0 before the first use */
	uint32_t lines_used;  /* entries of the current epoch */
	uint32_t lines_epoch; /* entries of older epochs are free */
	uint32_t capacity;    /* LTX_CAPACITY in slots for this tx; 0: none */
	uint32_t slots;	      /* slots the transaction holds */
	int counted;	      /* invisible: every operation takes the slow
			       * path, which keeps the directory */
};

/*
 * struct ltx_checkpoint: where a restartable block resumes.  restart(cp,
 * cause) is called on the owning thread with the transaction doomed (not
 * yet ended) or already ended, from ordinary code or from the fault
 * handler (the signal mask already restored); it must not return.  It
 * jumps back to the block, which then ends the transaction if it is still
 * open (ltx_tx_rollback) and runs again, or leaves the block when cause is
 * TM_ABORT_EXPLICIT without TM_ABORT_RETRY (tm_abort()).  arg is free for
 * the owner's use.
 *
 * Rules for every conflict-detection mode (the visible one included):
 * implement make_irrevocable (cd.h): an irrevocable transaction holds
 * every line it has read or written, never dooms itself on a conflict and
 * waits for the holder instead (holders are never irrevocable, and
 * ordinary transactions never wait, so the wait ends); an update commit
 * stores LTX_COMMITTING in status at its commit point, after checking that
 * status is still LTX_ACTIVE (a signal may have doomed it).  A descriptor
 * with no_alloc set must fail with TM_ABORT_CAPACITY rather than grow its
 * logs (it runs in signal handlers).
 */
struct ltx_checkpoint {
	void (*restart)(struct ltx_checkpoint *cp, unsigned cause);
	void *arg;
};

/*
 * The calling thread's descriptor (never NULL: see ltx_boot_tx).  Exported
 * as tm__self_v1 for <ltx/inline.h>, whose struct tm__hot mirrors the head
 * of struct ltx_tx: change that head and the version in the name together.
 */
#define ltx_self tm__self_v1
extern __thread struct ltx_tx *ltx_self
	__attribute__((tls_model("initial-exec")));

/*
 * ltx_boot_tx: what ltx_self points to before a thread's first operation.
 * Its limit is 0, its status LTX_IDLE_SLOW and its orec table a one-word
 * dummy (mask 0), so the hot path reads harmlessly and falls into the slow
 * path, which creates the real one.
 */
extern struct ltx_tx ltx_boot_tx;

#define LTX_HOT_SAME(f)                                                       \
	_Static_assert(offsetof(struct ltx_tx, f) ==                          \
			       offsetof(struct tm__hot, f),                   \
		       "struct tm__hot (ltx/inline.h) differs from ltx_tx: " #f)
LTX_HOT_SAME(limit);
LTX_HOT_SAME(orecs);
LTX_HOT_SAME(orec_mask);
LTX_HOT_SAME(orec_mul);
LTX_HOT_SAME(status);
LTX_HOT_SAME(rs_next);
LTX_HOT_SAME(rs_end);
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
