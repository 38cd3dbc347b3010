/* SPDX-License-Identifier: MIT */
/* Jumps: the interposed longjmp family tells the transaction layer. */
#ifndef LTX_RT_JUMP_H
#define LTX_RT_JUMP_H

#include <stdint.h>

/*
 * libltx.so interposes longjmp, _longjmp, siglongjmp and __longjmp_chk
 * (the fortified longjmp), as it does sigaction: before libc's function
 * jumps, hook(sp) is called with the stack pointer the jump will restore,
 * so that the transaction layer can end what the jump leaves: a
 * transaction whose restart point lies in a frame the jump discards, a
 * signal handler the jump leaves.  The stack pointer is read from libc's
 * jmp_buf (the arch header says how); if that reading fails a self-check at
 * start, the hook is never called.  The static library interposes
 * nothing (a static program keeps libc's functions).
 *
 * ltx_jump_init: resolve libc's functions and set the hook; once, from the
 * library's constructor (not from a signal handler: jumps from handlers
 * need everything resolved already).
 */
void ltx_jump_init(void (*hook)(uintptr_t sp));

/* ltx_longjmp_unhooked: libc's longjmp to env, without the hook (ltx's own
 * restarts, which stay inside their block).  env is a jmp_buf. */
void ltx_longjmp_unhooked(void *env, int val) __attribute__((noreturn));

#endif /* LTX_RT_JUMP_H */
