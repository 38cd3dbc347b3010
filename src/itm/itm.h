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
#define ITM_PR_INSTRUMENTED 0x0001u
#define ITM_PR_UNINSTRUMENTED 0x0002u
#define ITM_PR_HAS_NO_ABORT 0x0008u
#define ITM_PR_GOES_IRREVOCABLE 0x0040u

/* Action codes returned by _ITM_beginTransaction. */
#define ITM_A_INSTRUMENTED 0x01u
#define ITM_A_UNINSTRUMENTED 0x02u
#define ITM_A_SAVE_LIVE 0x04u
#define ITM_A_RESTORE_LIVE 0x08u
#define ITM_A_ABORT 0x10u

/* _ITM_abortReason bits. */
#define ITM_USER_ABORT 0x01u
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
 * where its begin returns, and how long each log was when it began. */
struct ltx_itm_nest {
	struct ltx_itm_jmpbuf jb;
	unsigned depth;
	size_t undo_len, allocs_len, actions_len;
};

/* An allocation made (free on abort) or freed (free on commit). */
struct ltx_itm_alloc {
	void *ptr;
	size_t size;   /* for sized operator delete */
	uint8_t kind;  /* enum in alloc.c: which deallocation function */
	uint8_t on_commit;
};

/* A user action (_ITM_addUserCommitAction/_ITM_addUserUndoAction). */
struct ltx_itm_action {
	void (*fn)(void *);
	void *arg;
	bool on_commit;
};

/* Per-thread counters, summed by LTX_ITM_REPORT at exit. */
struct ltx_itm_stats {
	uint64_t begins[4]; /* outermost begins, by enum ltx_itm_mode */
	uint64_t uninstrumented; /* begins that ran the uninstrumented path */
	uint64_t commits;
	uint64_t restarts;
	uint64_t cancels;
	uint64_t upgrades; /* _ITM_changeTransactionMode done in place */
};

/*
 * One per thread that used the ABI; never freed (recycled at thread exit),
 * so other threads can walk the registry without locks.
 *
 * Synchronization: seq is the only field other threads read.  It is odd
 * while the thread runs an ITM_INSTR transaction (it holds the serial lock
 * shared); see serial.c for the protocol.
 */
struct ltx_itm_thread {
	uint64_t seq __attribute__((aligned(LTX_LINE_SIZE)));
	struct ltx_itm_thread *next_all;
	int in_use;

	/* private to the thread, hot */
	int mode __attribute__((aligned(LTX_LINE_SIZE)));
	unsigned depth;	      /* nesting depth, 0 outside */
	uint32_t prop;	      /* properties of the outermost begin */
	uintptr_t stack_lo;   /* this thread's stack: [stack_lo, stack_hi) */
	uintptr_t stack_hi;
	struct ltx_itm_jmpbuf jb; /* the outermost begin's checkpoint */
	/* ITM_INSTR: registered as the ltx transaction's restart point, so
	 * the transaction layer and the fault sandbox restart it here */
	struct ltx_checkpoint cp;

	/* warm */
	bool log_writes;      /* serial: undo-log direct stores */
	bool want_serial;     /* the next restart runs ITM_SERIAL */
	bool want_irrevocable; /* the next restart runs ITM_SERIAL_IRR */
	unsigned restarts;    /* consecutive restarts of this transaction */
	uint64_t id;	      /* _ITM_getTransactionId, 0 until asked */

	unsigned char *undo; /* undo log: [bytes][addr][len] records */
	size_t undo_len, undo_cap;
	struct ltx_itm_alloc *allocs;
	size_t allocs_len, allocs_cap;
	bool frees_pending;
	struct ltx_itm_action *actions;
	size_t actions_len, actions_cap;
	struct ltx_itm_nest *nests;
	unsigned nests_len, nests_cap;

	/* C++ exceptions (eh.c) */
	void *cxa_unthrown;
	void *eh_in_flight;
	unsigned cxa_catch_count;

	struct ltx_itm_stats stats;
};

extern __thread struct ltx_itm_thread *ltx_itm_self
	__attribute__((tls_model("initial-exec")));

/*
 * What the barriers' fast paths need, each one %fs-relative load away
 * (no load of ltx_itm_self, no mode check): tx is this thread's ltx
 * descriptor exactly while the thread runs an ITM_INSTR transaction, else
 * NULL (every barrier then takes its slow path, which looks at the mode).
 * The stack bounds are set once, when the thread state is made.  Written
 * by the thread only; a signal handler that runs tm_* transactions switches
 * ltx_self, not this, so the interrupted barrier still sees its own.
 */
struct ltx_itm_fast {
	struct ltx_tx *tx;
	uintptr_t stack_lo;
	uintptr_t stack_span; /* stack_hi - stack_lo */
};

extern __thread struct ltx_itm_fast ltx_itm_fast
	__attribute__((tls_model("initial-exec")));

/* ltx_itm_thread_get: the caller's state, created if needed (fatal if no
 * memory: the ABI has no way to report it). */
struct ltx_itm_thread *ltx_itm_thread_get(void);

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

/* Logs of allocations and actions, undone or run at the end (alloc.c). */
void ltx_itm_alloc_record(struct ltx_itm_thread *t, void *ptr, size_t size,
			  unsigned kind, bool on_commit);
void ltx_itm_alloc_finish(struct ltx_itm_thread *t, size_t from,
			  bool committed);
void ltx_itm_free_now(void *ptr, size_t size, unsigned kind);
/* The outermost transaction committed: release what it freed; after
 * others that ran concurrently (ITM_INSTR) have ended, if concurrent. */
void ltx_itm_alloc_commit(struct ltx_itm_thread *t, bool concurrent);

/*
 * Serial lock (serial.c).  serial_enter waits as long as needed: only for
 * a thread that holds no ltx line.  serial_try_enter gives up (false) if
 * another thread holds or soon takes the lock alone.
 */
bool ltx_itm_serial_try_enter(struct ltx_itm_thread *t);
void ltx_itm_serial_enter(struct ltx_itm_thread *t);
void ltx_itm_serial_exit(void);
void ltx_itm_shared_enter(struct ltx_itm_thread *t);
void ltx_itm_shared_exit(struct ltx_itm_thread *t);
void ltx_itm_quiesce(struct ltx_itm_thread *t);
extern struct ltx_itm_thread *ltx_itm_registry;
extern unsigned ltx_itm_live_threads;

/* C++ exception state on rollback (eh.c). */
void ltx_itm_eh_rollback(struct ltx_itm_thread *t);

/* A fatal misuse of the ABI: message on stderr, then abort(). */
void ltx_itm_fatal(const char *why) __attribute__((noreturn));

#endif /* LTX_ITM_ITM_H */
