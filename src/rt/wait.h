/* SPDX-License-Identifier: MIT */
/* Waiting: spin a little, then give the CPU away (every wait in ltx). */
#ifndef LTX_RT_WAIT_H
#define LTX_RT_WAIT_H

#include <sched.h>

#include "arch/arch.h"
#include "rt/signal.h"

/* Spins before a waiter starts yielding the CPU. */
#define LTX_WAIT_SPINS 128

/*
 * ltx_yield: sched_yield as ltx's own system call (rt/signal.h,
 * ltx_own_syscall): a signal that interrupts it while the thread holds
 * the serial token waits for the token's release, as it would anywhere
 * else in ltx, instead of running a handler whose transactions would wait
 * for that token for ever.
 */
static inline void ltx_yield(void)
{
	unsigned own = ltx_own_syscall_begin();

	sched_yield();
	ltx_own_syscall_end(own);
}

/*
 * ltx_wait_step: one step of a wait loop; *spins starts at 0.  The first
 * steps spin (the thread waited for is likely running and about to finish
 * a few instructions), the later ones yield: on a busy machine the thread
 * waited for may be descheduled, and spinning would keep it off the CPU.
 */
static inline void ltx_wait_step(unsigned *spins)
{
	if (*spins < LTX_WAIT_SPINS) {
		++*spins;
		ltx_cpu_relax();
		return;
	}
	ltx_yield();
}

#endif /* LTX_RT_WAIT_H */
