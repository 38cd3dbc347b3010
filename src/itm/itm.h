/* SPDX-License-Identifier: MIT */
/* The libitm ABI layer: per-thread state shared by the src/itm files. */
#ifndef LTX_ITM_ITM_H
#define LTX_ITM_ITM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "tx/desc.h"

/* Properties GCC passes to _ITM_beginTransaction (libitm.h values).  Only
 * the four ltx trusts are named: GCC sets the others inconsistently. */
#define ITM_PR_INSTRUMENTED	0x0001u
#define ITM_PR_UNINSTRUMENTED	0x0002u
#define ITM_PR_HAS_NO_ABORT	0x0008u
#define ITM_PR_GOES_IRREVOCABLE 0x0040u

/* Action codes returned by _ITM_beginTransaction. */
#define ITM_A_INSTRUMENTED   0x01u
#define ITM_A_UNINSTRUMENTED 0x02u
#define ITM_A_SAVE_LIVE	     0x04u
#define ITM_A_RESTORE_LIVE   0x08u
#define ITM_A_ABORT	     0x10u

/* _ITM_abortReason bits. */
#define ITM_USER_ABORT	0x01u
#define ITM_OUTER_ABORT 0x10u

/*
 * The checkpoint _ITM_beginTransaction takes (layout fixed by
 * checkpoint-x86_64.S): what setjmp would keep, and where to return.
 */
struct ltx_itm_jmpbuf {
	uintptr_t cfa;
	uint64_t rbx, rbp, r12, r13, r14, r15;
	uintptr_t rip;
};

_Static_assert(sizeof(struct ltx_itm_jmpbuf) == 64, "checkpoint layout");

/* How the current transaction runs (struct ltx_itm_thread.mode). */
enum ltx_itm_mode {
	ITM_NONE = 0,	    /* no transaction */
	ITM_INSTR = 1,	    /* an ltx transaction: barriers are LT/LTX/ST */
	ITM_SERIAL = 2,	    /* alone, revocable: direct access, undo log */
	ITM_SERIAL_IRR = 3, /* alone, irrevocable: direct access */
};

/* A nested transaction that may be cancelled by itself (closed nesting):
 * where its begin returns, and how long the logs were when it began. */
struct ltx_itm_nest {
	struct ltx_itm_jmpbuf jb;
	unsigned depth;
	size_t undo_len;
	size_t actions; /* ltx_tx_actions_mark() */
};

/*
 * An exception object the current transaction allocated
 * (_ITM_cxa_allocate_exception): private to it, so it is written directly
 * (eh.c says why) while it may still be written: until it is thrown, and
 * while a catch of it in the transaction is open.
 */
struct ltx_itm_eh_obj {
	uintptr_t lo;	  /* the object, as __cxa_allocate_exception gave it */
	size_t size;	  /* 0: freed */
	size_t actions;	  /* ltx_tx_actions_mark() at its allocation */
	unsigned catches; /* catches of it open in the transaction */
	bool thrown;
};

/* Per-thread counters, summed by LTX_ITM_REPORT at exit. */
struct ltx_itm_stats {
	uint64_t begins[4];	 /* outermost begins, by enum ltx_itm_mode */
	uint64_t uninstrumented; /* begins that ran the uninstrumented path */
	uint64_t commits;
	uint64_t restarts;
	uint64_t cancels;
	uint64_t upgrades; /* _ITM_changeTransactionMode done in place */
};

/*
 * A descriptor's cache of TM clone lookups (clone.c says how it is kept
 * coherent): direct-mapped by the original's address.  Private to the
 * thread, but for busy, which a library's (de)registration reads.
 */
#define LTX_ITM_CLONE_CACHE 64

struct ltx_itm_clone_entry {
	void *orig;
	void *clone;
};

struct ltx_itm_clones {
	uint64_t gen;  /* the clone tables' generation the entries are of */
	unsigned busy; /* reading the shared index */
	struct ltx_itm_clone_entry e[LTX_ITM_CLONE_CACHE];
};

/*
 * The ABI's own per-thread state: what GCC's calling convention needs
 * beyond an ltx transaction (nesting, the begin's checkpoint, the undo
 * log of the serial modes, C++ exception bookkeeping).  It hangs off the
 * thread's descriptor (struct ltx_tx.frontend), made on first use and
 * kept with it when the descriptor is pooled; a signal handler's
 * descriptor has its own.  Everything else -- the thread registry, the
 * actions, the grace periods of frees, the serial token -- is the
 * transaction layer's (src/tx).  Private to the thread.
 */
struct ltx_itm_thread {
	int mode;		  /* enum ltx_itm_mode: ltx_itm_set_mode */
	struct ltx_tx *tx;	  /* the descriptor this state hangs off */
	unsigned depth;		  /* nesting depth, 0 outside */
	uint32_t prop;		  /* properties of the outermost begin */
	uint32_t takes;		  /* the descriptor's takes this state is for */
	struct ltx_itm_jmpbuf jb; /* the outermost begin's checkpoint */
	/* ITM_INSTR: registered as the ltx transaction's restart point, so
	 * the transaction layer and the fault sandbox restart it here */
	struct ltx_checkpoint cp;

	bool log_writes;       /* serial: undo-log direct stores */
	bool want_serial;      /* the next restart runs ITM_SERIAL */
	bool want_irrevocable; /* the next restart runs ITM_SERIAL_IRR */
	uint64_t id;	       /* _ITM_getTransactionId, 0 until asked */

	unsigned char *undo; /* undo log: [bytes][addr][len] records */
	size_t undo_len, undo_cap;
	struct ltx_itm_nest *nests;
	size_t nests_len, nests_cap;

	/* C++ exceptions (eh.c) */
	void *cxa_unthrown;
	void *eh_in_flight;
	unsigned cxa_catch_count;
	uint64_t eh_tx_id; /* the ltx transaction eh_objs belong to */
	struct ltx_itm_eh_obj *eh_objs;
	size_t eh_objs_len, eh_objs_cap;
	uint32_t *eh_catches; /* per open catch: its eh_objs index + 1, or 0 */
	size_t eh_catches_len, eh_catches_cap;

	struct ltx_itm_stats stats;
	struct ltx_itm_clones clones; /* clone.c */
};

/*
 * The descriptor's copy of what the barriers ask of the state first
 * (struct ltx_tx.itm_path), tested in the descriptor they have at hand
 * instead of through its frontend pointer (two dependent loads):
 * LTX_ITM_PATH_DIRECT while the transaction accesses memory directly (a
 * serial mode: barrier.c, serial_mode), LTX_ITM_PATH_EH while exception
 * objects are recorded (eh_objs_len != 0: barrier.c, eh_objects).
 * ltx_itm_set_path makes it again from the state; it is called wherever
 * either changes (ltx_itm_set_mode, and eh.c), on the owning thread (or
 * its handler, on its own descriptor's state).
 */
#define LTX_ITM_PATH_DIRECT 1
#define LTX_ITM_PATH_EH	    2

static inline void ltx_itm_set_path(struct ltx_itm_thread *t)
{
	t->tx->itm_path = (t->mode > ITM_INSTR ? LTX_ITM_PATH_DIRECT : 0) |
			  (t->eh_objs_len != 0 ? LTX_ITM_PATH_EH : 0);
}

static inline void ltx_itm_set_mode(struct ltx_itm_thread *t, int mode)
{
	t->mode = mode;
	ltx_itm_set_path(t);
}

/*
 * ltx_itm_thread_get: the calling thread's state (on its current
 * descriptor, made if needed; fatal if there is no memory: the ABI has no
 * way to report it).  ltx_itm_state: the same, or NULL if the thread has
 * none yet.
 */
struct ltx_itm_thread *ltx_itm_thread_get(void);

static inline struct ltx_itm_thread *ltx_itm_state(void)
{
	struct ltx_tx *tx = ltx_self;
	struct ltx_itm_thread *t = tx->frontend;

	return t != NULL && t->takes == tx->takes ? t : NULL;
}

/* Entry points called from checkpoint-x86_64.S. */
uint32_t ltx_itm_begin(uint32_t prop, const struct ltx_itm_jmpbuf *jb);
void ltx_itm_longjmp(uint32_t actions, const struct ltx_itm_jmpbuf *jb)
	__attribute__((noreturn));

/*
 * ltx_itm_restart: roll the current transaction back and run it again
 * from its outermost begin (which returns a_restoreLiveVariables).  For a
 * doomed ITM_INSTR transaction, from a barrier or the commit.  Noreturn.
 */
void ltx_itm_restart(struct ltx_itm_thread *t) __attribute__((noreturn));

/* ltx_itm_go_irrevocable: make the current transaction ITM_SERIAL_IRR,
 * in place or by restarting it. */
void ltx_itm_go_irrevocable(struct ltx_itm_thread *t);

/* Undo log (thread-private memory): save size bytes at addr. */
void ltx_itm_log(struct ltx_itm_thread *t, const void *addr, size_t size);

/*
 * The same for an object of at most 8 bytes (a store to a local of the
 * function that began the transaction), inline while the log has room:
 * the record ltx_itm_log writes, its bytes padded to one word.
 */
static inline void ltx_itm_log_small(struct ltx_itm_thread *t, const void *addr,
				     size_t size)
{
	size_t len = t->undo_len;
	uintptr_t a = (uintptr_t)addr;
	uint64_t old = 0;

	if (ltx_unlikely(len + 3 * sizeof(uint64_t) > t->undo_cap)) {
		ltx_itm_log(t, addr, size);
		return;
	}
	__builtin_memcpy(&old, addr, size);
	__builtin_memcpy(t->undo + len, &old, sizeof(old));
	__builtin_memcpy(t->undo + len + sizeof(old), &a, sizeof(a));
	__builtin_memcpy(t->undo + len + sizeof(old) + sizeof(a), &size,
			 sizeof(size));
	t->undo_len = len + 3 * sizeof(uint64_t);
}

/* Whether the caller's transaction might still roll back. */
bool ltx_itm_revocable(const struct ltx_itm_thread *t);

/*
 * ltx_itm_on_end: run fn(arg) when the current transaction commits
 * (on_commit) or rolls back: an action of the ltx transaction (tx.h).
 * Fatal if there is no memory to record it.
 */
void ltx_itm_on_end(struct ltx_itm_thread *t, void (*fn)(void *), void *arg,
		    bool on_commit);

/* C++ exception state on rollback (eh.c). */
void ltx_itm_eh_rollback(struct ltx_itm_thread *t);

/*
 * ltx_itm_eh_private: whether [addr, addr + size) lies in an exception
 * object that the current transaction allocated and may write, which the
 * barriers then write directly (eh.c).  Only ever true while
 * t->eh_objs_len != 0, the test the barriers make first.
 */
bool ltx_itm_eh_private(struct ltx_itm_thread *t, const void *addr,
			size_t size);

/* A fatal misuse of the ABI: message on stderr, then abort(). */
void ltx_itm_fatal(const char *why) __attribute__((noreturn));

#endif /* LTX_ITM_ITM_H */
