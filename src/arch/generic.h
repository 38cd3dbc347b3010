/* SPDX-License-Identifier: MIT */
/* Generic fallbacks for what an architecture header did not provide. */
#ifndef LTX_ARCH_GENERIC_H
#define LTX_ARCH_GENERIC_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#ifndef LTX_ARCH_HAS_CPU_RELAX
static inline void ltx_cpu_relax(void)
{
	__asm__ __volatile__("" ::: "memory");
}
#endif

#ifndef LTX_ARCH_HAS_CYCLES
/* No cycle counter: nanoseconds from the vDSO clock stand in for cycles. */
static inline uint64_t ltx_cycles(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

#ifndef LTX_ARCH_HAS_WORD_CHANGED
static inline __attribute__((always_inline)) bool
ltx_word_changed(const uintptr_t *p, uintptr_t v)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED) != v;
}
#endif

#ifndef LTX_ARCH_HAS_INT_DIFFERS
static inline __attribute__((always_inline)) bool ltx_int_differs(const int *p,
								  int v)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED) != v;
}

static inline __attribute__((always_inline)) bool
ltx_word_bits_set(const uintptr_t *p, uintptr_t mask)
{
	return (__atomic_load_n(p, __ATOMIC_ACQUIRE) & mask) != 0;
}

static inline __attribute__((always_inline)) bool
ltx_misaligned_word(const void *p)
{
	return ((uintptr_t)p & 7) != 0;
}

static inline __attribute__((always_inline)) bool
ltx_word_above(const uintptr_t *p, uintptr_t v)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE) > v;
}
#endif

#ifndef LTX_ARCH_HAS_BUMP
#define LTX_BUMP(lv, n) ((lv) = (__typeof__(lv))((char *)(lv) + (n)))
#endif

#ifndef LTX_ARCH_HAS_OWNER_ADD
static inline __attribute__((always_inline)) void ltx_owner_add(uint64_t *p,
								uint64_t d)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + d,
			 __ATOMIC_RELEASE);
}
#endif

#ifndef LTX_ARCH_HAS_LOAD_WORD
static inline __attribute__((always_inline)) uint64_t
ltx_load_word(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
#endif

#ifndef LTX_ARCH_HAS_JMPBUF_SP
/* Unknown jmp_buf layout: rt/jump.c's self-check then turns the jump
 * hook off. */
static inline uintptr_t ltx_jmpbuf_sp(const void *env)
{
	(void)env;
	return 0;
}
#endif

#endif /* LTX_ARCH_GENERIC_H */
