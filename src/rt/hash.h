/* SPDX-License-Identifier: MIT */
/* The line hash: one multiplicative hash for every table keyed by line. */
#ifndef LTX_RT_HASH_H
#define LTX_RT_HASH_H

#include <stdint.h>

#include "arch/arch.h"

/*
 * A multiplicative (Fibonacci) hash of the line number: bit k of the
 * product depends on every line-number bit at or below k, so the high
 * bits, which the tables index with, mix in every address bit below them.
 * A plain shift-and-mask would make lines at the same offset in two
 * threads' 64 MiB-aligned glibc heaps collide (DESIGN.md).
 *
 * Users take the bits they need from the top of the 64-bit product:
 * ltx_hash_index(h, shift, mask) = (h >> shift) & mask.  mul is the
 * constant, passed in so that callers on the hot path can keep it in
 * memory (an imul with a memory operand instead of a 10-byte constant
 * load).  <ltx/inline.h> carries a copy of the orec case for programs
 * built with LTX_INLINE (a public header cannot include this one).
 */
#define LTX_HASH_MUL 0x9e3779b97f4a7c15ull

static inline uint64_t ltx_hash_line(uintptr_t addr, uint64_t mul)
{
	return (uint64_t)(addr >> LTX_LINE_SHIFT) * mul;
}

static inline uintptr_t ltx_hash_index(uint64_t h, unsigned shift,
				       uintptr_t mask)
{
	return (uintptr_t)(h >> shift) & mask;
}

#endif /* LTX_RT_HASH_H */
