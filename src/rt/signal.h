/* SPDX-License-Identifier: MIT */
/* Signals: ltx's wrapper around the application's handlers. */
#ifndef LTX_RT_SIGNAL_H
#define LTX_RT_SIGNAL_H

#include <stdbool.h>
#include <stdint.h>

/*
 * ltx interposes sigaction(2), signal(3), bsd_signal and sysv_signal
 * (exported by libltx.so, so they win over libc's whether the program
 * links libltx or preloads it).  For every signal the application catches,
 * and for SIGSEGV, SIGBUS and SIGFPE always, the kernel runs ltx's wrapper
 * instead, installed with the application's sa_mask and SA_* flags (plus
 * SA_SIGINFO); sigaction() reports the application's own handler.
 *
 * The wrapper (async-signal-safe: no lock, no malloc, no unwinding) knows
 * no transaction: it calls the hooks the transaction layer registered
 * (tx/signal.c says what they do to a transaction):
 *  1. for a fault (SIGSEGV/SIGBUS/SIGFPE raised by an instruction), fault;
 *     it may restart a transaction and not return;
 *  2. for any other signal the application catches, defer; if it says so,
 *     the signal is deferred (below) and nothing else runs now;
 *  3. enter, told whether the application's handler will run;
 *  4. the application's handler, exactly once;
 *  5. leave, with what enter returned;
 * and for a fault with no application handler, restores the default
 * action so that the instruction re-executes and the process dies of the
 * signal, with its core dump.
 *
 * A deferred signal is blocked in the thread's signal mask (in the
 * interrupted context's too, which the kernel restores when the wrapper
 * returns) and sent again to the thread with its siginfo
 * (rt_tgsigqueueinfo), so that it is pending, and its bit is set in
 * ltx_signal_deferred.  ltx_signal_deliver_deferred unblocks it: the
 * kernel delivers it then, with a fresh context, and the wrapper runs the
 * application's handler as for any signal.  Blocked and sent again, not
 * kept aside: sigpending(2) shows it, and a second instance of a standard
 * signal merges with it as the kernel merges them anyway.
 */
struct ltx_signal_hooks {
	/* fault: a fault signal sig raised by an instruction; uc is the
	 * handler's ucontext_t.  Returns if it does not take it. */
	void (*fault)(int sig, void *uc);
	/* enter: sig was delivered; handler says whether the application's
	 * handler runs next.  Returns a token for leave. */
	void *(*enter)(int sig, bool handler);
	/* leave: the application's handler returned. */
	void (*leave)(void *token);
	/* defer: whether an asynchronous signal (not a fault raised by an
	 * instruction) with an application handler must wait; uc is the
	 * handler's ucontext_t. */
	bool (*defer)(void *uc);
	/* installed: the application installed a handler (sigaction,
	 * signal); called outside the table's lock, and maybe from a
	 * handler that calls sigaction. */
	void (*installed)(void);
};

/*
 * The signals deferred on this thread, bit sig - 1 for signal sig; 0 for
 * none.  Thread-local, written by the thread's wrapper and by
 * ltx_signal_deliver_deferred only.
 */
extern __thread uint64_t ltx_signal_deferred
	__attribute__((tls_model("initial-exec")));

/*
 * Nonzero while the thread is in a system call that ltx makes for itself:
 * a wait's yield (rt/wait.h), a backoff's, the heavy fence (rt/fence.c),
 * and the allocator's, which may wait in the kernel for a lock, where ltx
 * allocates or frees: its logs (rt/array.c, LTX_OWN), the blocks of
 * GCC transactions (itm/alloc.c).  Not tm_malloc's and tm_free's fast
 * paths, whose instructions are counted (a signal there, with the token
 * held, runs its handler at once, as for the program's own calls).
 * A signal that interrupts a system call of the program runs its handler
 * at once, even where it would otherwise wait (the program must see its
 * EINTR: tx/signal.c, on_defer); one that interrupts ltx's own is no such
 * case, and waits as it would anywhere else in ltx.  Thread-local, and a
 * handler that makes such a call itself puts back the value it found
 * (ltx_own_syscall_begin/end), so a depth, not a flag.  A handler starts
 * at 0 and its end puts back what it interrupted; a jump out of one leaves
 * 0 (tx/signal.c, on_enter, on_leave, on_jump).
 */
extern __thread unsigned ltx_own_syscall
	__attribute__((tls_model("initial-exec")));

/* Mark the system calls that follow as ltx's own; returns what
 * ltx_own_syscall_end puts back.  The compiler keeps the calls between. */
static inline unsigned ltx_own_syscall_begin(void)
{
	unsigned old = ltx_own_syscall;

	ltx_own_syscall = old + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return old;
}

static inline void ltx_own_syscall_end(unsigned old)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ltx_own_syscall = old;
}

/* The call's value, the call made as ltx's own (LTX_OWN_VOID: a call with
 * none).  Not around a call that may throw or jump out: the mark would
 * stay set (this C code runs no cleanup when unwound). */
#define LTX_OWN(call)                                                          \
	__extension__({                                                        \
		unsigned ltx_own_ = ltx_own_syscall_begin();                   \
		__typeof__(call) ltx_r_ = (call);                              \
		ltx_own_syscall_end(ltx_own_);                                 \
		ltx_r_;                                                        \
	})
#define LTX_OWN_VOID(call)                                                     \
	do {                                                                   \
		unsigned ltx_own_ = ltx_own_syscall_begin();                   \
		call;                                                          \
		ltx_own_syscall_end(ltx_own_);                                 \
	} while (0)

/* ltx_signal_deliver_deferred: unblock the thread's deferred signals (the
 * kernel delivers them now) and clear ltx_signal_deferred.  In a fork
 * child, where nothing is pending any more, it only unblocks them. */
void ltx_signal_deliver_deferred(void);

/*
 * ltx_signal_init: set the hooks and take over SIGSEGV, SIGBUS and SIGFPE
 * (the fault sandbox).  Run once, from the library's constructor.
 */
void ltx_signal_init(const struct ltx_signal_hooks *hooks);

#endif /* LTX_RT_SIGNAL_H */
