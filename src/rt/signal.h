/* SPDX-License-Identifier: MIT */
/* Signals: ltx's wrapper around the application's handlers. */
#ifndef LTX_RT_SIGNAL_H
#define LTX_RT_SIGNAL_H

/*
 * ltx interposes sigaction(2), signal(3), bsd_signal and sysv_signal
 * (exported by libltx.so, so they win over libc's whether the program
 * links libltx or preloads it).  For every signal the application catches,
 * and for SIGSEGV, SIGBUS and SIGFPE always, the kernel runs ltx's wrapper
 * instead, installed with the application's sa_mask and SA_* flags (plus
 * SA_SIGINFO); sigaction() reports the application's own handler.
 *
 * The wrapper (async-signal-safe: no lock, no malloc, no unwinding):
 *  1. a fault (SIGSEGV/SIGBUS/SIGFPE raised by an instruction) in a
 *     transaction that has a checkpoint and is doomed, or whose reads no
 *     longer hold, restarts it (TM_ABORT_FAULT, the signal number in bits
 *     24-31); the application's handler does not run;
 *  2. otherwise a live, revocable transaction of the thread is doomed
 *     (TM_ABORT_SIGNAL, the signal number in bits 24-31);
 *  3. the application's handler runs, exactly once, with ltx_self pointing
 *     to the thread's handler descriptor, so transactions begun in the
 *     handler never touch the interrupted one; a handler interrupting such
 *     a handler gets ltx_refuse_tx (its transactions fail at once);
 *  4. for a fault with no application handler, the default action is
 *     restored and the instruction re-executes: the process dies of the
 *     signal, with its core dump.
 */

/* ltx_signal_init: take over SIGSEGV, SIGBUS and SIGFPE (the sandbox).
 * Run once, from the library's constructor. */
void ltx_signal_init(void);

#endif /* LTX_RT_SIGNAL_H */
