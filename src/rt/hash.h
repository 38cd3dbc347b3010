/* SPDX-License-Identifier: MIT */
/* The line hash: one multiplicative hash for every table keyed by line. */
#ifndef LTX_RT_HASH_H
#define LTX_RT_HASH_H

#include <stdint.h>

#include "arch/arch.h"

/*
 * A multiplicative hash of the line number: bit k of the product depends
 * on every line-number bit at or below k, so the high bits, which the
 * tables index with, mix in every address bit below them.  A plain
 * shift-and-mask would make lines at the same offset in two threads'
 * 64 MiB-aligned glibc heaps collide (DESIGN.md).
 *
 * Users take the bits they need at a fixed shift: ltx_hash_index(h,
 * shift, mask) = (h >> shift) & mask.  The orec table takes bits 32 up
 * (cd/orec.h), so for a table of 2^b entries the hash is the product
 * modulo 2^(32+b), a multiplicative hash whose constant is mul modulo
 * 2^(32+b), not the top bits of the full product.  Two lines d apart
 * share an entry when d times that constant, as a fraction of 2^(32+b),
 * is within 2^-b of an integer; the smallest such d should be near the
 * table's size for every b.  The golden-ratio constant
 * 0x9e3779b97f4a7c15 is not, taken that way: for b = 16 its window is
 * near a fraction of denominator 7037, so 16384 lines in a row took
 * about 7,100 of the 65536 orecs (random keys: 14,500) and lines 7037
 * apart always shared one (most of bench_apps' vacation aborts at 2
 * threads were that aliasing).  LTX_HASH_MUL was chosen by a search over
 * odd constants for the largest such smallest d, relative to 2^b, over
 * every table size from 2^4 to 2^28 and strides of 1, 2, 4 and 8 lines:
 * at least 0.21 times 2^b for each (the golden-ratio constant: 0.013).
 * 16384 lines in a row at strides of 1 to 5 lines, 8 and 64 lines take
 * 14,850 to 16,384 orecs (tests/unit/check_conflict.c).
 *
 * mul is the constant, passed in so that callers on the hot path can keep
 * it in memory (an imul with a memory operand instead of a 10-byte
 * constant load; the descriptor's copy is what <ltx/inline.h> reads, so
 * the constant is not part of the inline ABI).  <ltx/inline.h> carries a
 * copy of the orec formula for programs built with LTX_INLINE (a public
 * header cannot include this one).
 */
#define LTX_HASH_MUL 0x634cc594bd743f09ull

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
