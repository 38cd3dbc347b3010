/* SPDX-License-Identifier: MIT */
/* x86-64: spin-wait hint and time-stamp counter. */
#ifndef LTX_ARCH_X86_64_H
#define LTX_ARCH_X86_64_H

#include <stdbool.h>
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

#if defined(__GCC_ASM_FLAG_OUTPUTS__) && !defined(__SANITIZE_THREAD__)
#define LTX_ARCH_HAS_WORD_CHANGED 1
/*
 * ltx_word_changed: a relaxed atomic load of *p compared with v, as one
 * cmp with a memory operand (compilers do not fold atomic loads into
 * compares).  An aligned 8-byte load is single-copy atomic on x86-64.
 */
static inline __attribute__((always_inline)) bool
ltx_word_changed(const uintptr_t *p, uintptr_t v)
{
	bool changed;

	/* v in a register, or an immediate when it is a small constant
	 * (AT&T order: v first, the only place an immediate may be). */
	__asm__ __volatile__("cmpq %1, %2"
			     : "=@ccne"(changed)
			     : "re"(v), "m"(*p));
	return changed;
}
#endif

#if defined(__GCC_ASM_FLAG_OUTPUTS__) && !defined(__SANITIZE_THREAD__)
#define LTX_ARCH_HAS_INT_DIFFERS 1
/*
 * ltx_int_differs: a relaxed atomic load of the int at p compared with v,
 * as one cmp with a memory operand (as ltx_word_changed).
 * ltx_word_bits_set: an acquire load of the word at p tested against
 * mask, as one test with a memory operand: an x86-64 load is an acquire,
 * and the compiler barrier after it keeps later accesses after it.
 */
static inline __attribute__((always_inline)) bool ltx_int_differs(const int *p,
								  int v)
{
	bool differs;

	__asm__ __volatile__("cmpl %2, %1"
			     : "=@ccne"(differs)
			     : "m"(*p), "ir"(v));
	return differs;
}

/*
 * ltx_misaligned_word: is p not 8-aligned?  One test, made where it is
 * written (volatile: the compiler neither hoists it onto paths that do not
 * test it nor keeps its result in a register for several tests).
 */
static inline __attribute__((always_inline)) bool
ltx_misaligned_word(const void *p)
{
	bool misaligned;

	__asm__ __volatile__("testb $7, %b1" : "=@ccnz"(misaligned) : "q"(p));
	return misaligned;
}

/*
 * ltx_word_above: an acquire load of the word at p compared with v, as
 * one cmp with a memory operand: is it above v (unsigned)?  The x86-64
 * load is an acquire, and the compiler barrier after it keeps later
 * accesses after it.
 */
static inline __attribute__((always_inline)) bool
ltx_word_above(const uintptr_t *p, uintptr_t v)
{
	bool above;

	__asm__ __volatile__("cmpq %2, %1" : "=@cca"(above) : "m"(*p), "r"(v));
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return above;
}

static inline __attribute__((always_inline)) bool
ltx_word_bits_set(const uintptr_t *p, uintptr_t mask)
{
	bool set;

	__asm__ __volatile__("testq %2, %1"
			     : "=@ccnz"(set)
			     : "m"(*p), "er"(mask));
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return set;
}
#endif

#if !defined(__SANITIZE_THREAD__)
#define LTX_ARCH_HAS_OWNER_ADD 1
/*
 * ltx_owner_add: *p += d by the word's only writer, as one add to memory
 * (an aligned 8-byte store, single-copy atomic: other threads' atomic
 * loads see the old value or the new), a release store: the x86-64 store
 * is one, and the compiler barrier before it keeps earlier accesses
 * before it.  Other threads must never write *p.
 */
static inline __attribute__((always_inline)) void ltx_owner_add(uint64_t *p,
								uint64_t d)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__asm__ __volatile__("addq %1, %0" : "+m"(*p) : "er"(d));
}
#endif

/*
 * LTX_BUMP(lv, n): the pointer lvalue lv moved on by n bytes (a constant),
 * as one add to memory, for a pointer that only this thread writes and
 * whose old value the caller has used already (a log's next free slot):
 * one instruction where a copy in a register, an add and a store back
 * would be three.  Not ordered with other threads' accesses.
 */
#define LTX_ARCH_HAS_BUMP 1
#define LTX_BUMP(lv, n)	  __asm__("addq %1, %0" : "+m"(lv) : "i"(n))

#if !defined(__SANITIZE_THREAD__)
#define LTX_ARCH_HAS_LOAD_WORD 1
/*
 * ltx_load_word: an acquire load of the aligned word at p (a plain mov on
 * x86-64).  Sized loads read the whole aligned word around a 1, 2 or 4
 * byte object; the word never crosses a page, but AddressSanitizer would
 * flag the bytes outside the object, so the load is hidden from it.
 * Volatile: it is not moved across the orec loads around it.
 */
static inline __attribute__((always_inline)) uint64_t
ltx_load_word(const uint64_t *p)
{
	uint64_t x;

	__asm__ __volatile__("movq %1, %0" : "=r"(x) : "m"(*p));
	return x;
}
#endif

/*
 * ltx_jmpbuf_sp: the stack pointer a glibc x86-64 jmp_buf restores.  glibc
 * keeps it in word 6 of the buffer, mangled (PTR_MANGLE: xor with the
 * thread's pointer guard at %fs:0x30, then rotate left by 17); this
 * undoes that.  rt/jump.c checks on a buffer of its own that it reads
 * true before relying on it.
 */
#define LTX_ARCH_HAS_JMPBUF_SP 1
static inline uintptr_t ltx_jmpbuf_sp(const void *env)
{
	uintptr_t v = ((const uintptr_t *)env)[6], guard;

	__asm__("movq %%fs:0x30, %0" : "=r"(guard));
	v = (v >> 17) | (v << (64 - 17));
	return v ^ guard;
}

#endif /* LTX_ARCH_X86_64_H */
