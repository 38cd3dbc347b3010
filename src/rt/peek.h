/* SPDX-License-Identifier: MIT */
/* Reading memory another thread may free: a copy that cannot fault. */
#ifndef LTX_RT_PEEK_H
#define LTX_RT_PEEK_H

#include <stdbool.h>
#include <stddef.h>

/*
 * ltx_peek: copy n bytes at src into dst, where src lies in memory that
 * another thread may be changing, or freeing, and its pages unmapping:
 * the statistics read other threads' write-set entries this way (cd/
 * conflict.h).  Returns false if the bytes could not be read.  A torn or
 * stale copy is the caller's to judge.
 *
 * It is one instruction, rep movsb (rt/peek.c), which the fault
 * handler (rt/signal.c) resumes past at a fault, to return false:
 * ltx_peek_fixup.  No lock, no system call; it does not change errno.
 * Not from a handler of SIGSEGV or SIGBUS that blocks them.
 */
bool ltx_peek(void *dst, const void *src, size_t n);

/*
 * ltx_peek_fixup: the fault (SIGSEGV, SIGBUS) whose handler's ucontext is
 * uc: if ltx_peek's copy raised it, make the copy return false when the
 * handler returns, and return true; else false.
 */
bool ltx_peek_fixup(void *uc);

#endif /* LTX_RT_PEEK_H */
