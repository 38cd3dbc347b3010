/* SPDX-License-Identifier: MIT */
/* Signals: ltx's wrapper around the application's handlers. */
#ifndef LTX_RT_SIGNAL_H
#define LTX_RT_SIGNAL_H

#include <stdbool.h>

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
 *  2. enter, told whether the application's handler will run;
 *  3. the application's handler, exactly once;
 *  4. leave, with what enter returned;
 * and for a fault with no application handler, restores the default
 * action so that the instruction re-executes and the process dies of the
 * signal, with its core dump.
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
};

/*
 * ltx_signal_init: set the hooks and take over SIGSEGV, SIGBUS and SIGFPE
 * (the fault sandbox).  Run once, from the library's constructor.
 */
void ltx_signal_init(const struct ltx_signal_hooks *hooks);

#endif /* LTX_RT_SIGNAL_H */
