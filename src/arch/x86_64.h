/* SPDX-License-Identifier: MIT */
/* x86-64: spin-wait hint and time-stamp counter. */
#ifndef LTX_ARCH_X86_64_H
#define LTX_ARCH_X86_64_H

#include <stdint.h>

#define LTX_ARCH_HAS_CPU_RELAX 1
static inline void ltx_cpu_relax(void)
{
	__asm__ __volatile__("pause" ::: "memory");
}

#define LTX_ARCH_HAS_CYCLES 1
/* Time-stamp counter: a cheap monotonic clock for backoff delays. */
static inline uint64_t ltx_cycles(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

#endif /* LTX_ARCH_X86_64_H */
