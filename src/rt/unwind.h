/* SPDX-License-Identifier: MIT */
/* Unwinding: is a cleanup running because the stack is being unwound? */
#ifndef LTX_RT_UNWIND_H
#define LTX_RT_UNWIND_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A function with a cleanup (__attribute__((cleanup)), TM_ATOMIC's block)
 * runs it on every way out of its scope: break, return and goto, but also
 * the forced unwind of pthread_exit and pthread_cancel and a C++
 * exception passing through C code built with -fexceptions.  Only the
 * unwinder can tell them apart, so libltx.so interposes the personality
 * routine of such C code (__gcc_personality_v0, libgcc's; rt/preload.c):
 * when it sends the unwinder to a frame's landing pad, it notes the
 * frame's stack pointer at that point in ltx_unwind_sp (per thread);
 * libgcc's routine does everything else.  A cleanup called from that
 * landing pad is called with that same stack pointer.
 *
 * Why a match cannot be stale: ltx_unwind_forget() is called whenever a
 * block begins, so only blocks that began before the unwind are compared;
 * such a block whose frame was not unwound lives in an outer frame, whose
 * stack pointer is above every frame the unwind went through.  A frame
 * the unwind went through cannot return normally.
 *
 * Always false where the personality is not interposed (the static
 * library; programs that link libgcc statically).
 */
extern __thread uintptr_t ltx_unwind_sp
	__attribute__((tls_model("initial-exec")));

static inline void ltx_unwind_forget(void)
{
	ltx_unwind_sp = 0;
}

/* ltx_unwinding_into: whether a cleanup whose caller's stack pointer (at
 * the call) is sp runs in the landing pad the unwinder last entered. */
static inline bool ltx_unwinding_into(uintptr_t sp)
{
	return sp != 0 && ltx_unwind_sp == sp;
}

#endif /* LTX_RT_UNWIND_H */
