/* SPDX-License-Identifier: MIT */
/* An asymmetric fence: a heavy side that spares the hot path any fence. */
#ifndef LTX_RT_FENCE_H
#define LTX_RT_FENCE_H

#include <stdint.h>

/*
 * ltx_fence_heavy: make every other thread of the process execute a full
 * memory barrier before this call returns.  Pairs with a compiler-only
 * barrier (__atomic_signal_fence) on the light side: a light-side store
 * that precedes its later loads in program order is either visible to the
 * loads this thread makes after ltx_fence_heavy, or those later loads of
 * the light side see every store this thread made before the call (the
 * Dekker pattern of liburcu's membarrier flavour).
 *
 * Uses membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), registered on first
 * use; where the kernel refuses or fails it, an mprotect() downgrade,
 * whose TLB shootdown interrupts every CPU running the process.  Never
 * skipped: while neither can be made it tries again, and after about a
 * second it aborts the process with a message.  A system call: for
 * batched, slow paths only.  Not for signal handlers.
 */
void ltx_fence_heavy(void);

/* How many times ltx_fence_heavy ran in this process (relaxed; for the
 * white-box tests, which count tm_free's fences). */
extern uint64_t ltx_fence_heavy_calls;

#endif /* LTX_RT_FENCE_H */
