/* SPDX-License-Identifier: MIT */
/* The line hashes: the multiplicative hashes of the tables keyed by line. */
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
 * shift, mask) = (h >> shift) & mask, from bit 32 up.  mul is the
 * constant, passed in so that callers on the hot path can keep it in
 * memory (an imul with a memory operand instead of a 10-byte constant
 * load; the descriptor's copy is what <ltx/inline.h> reads, so the
 * constant is not part of the inline ABI).  <ltx/inline.h> carries a
 * copy of the orec formula for programs built with LTX_INLINE (a public
 * header cannot include this one).
 *
 * Two constants, for two kinds of table:
 *
 * LTX_HASH_MUL, for the tables a transaction probes by line (cd/lines.h)
 * and for seeding: a constant that scatters.  For a table of 2^b entries
 * at bit 32 the hash is the product modulo 2^(32+b); two lines d apart
 * share an entry when d times the constant, as a fraction of 2^(32+b),
 * is within 2^-b of an integer.  The golden-ratio constant
 * 0x9e3779b97f4a7c15 is bad taken that way (for b = 16 lines 7037 apart
 * always shared an entry); this one came from a search over odd
 * constants for the largest such smallest d over every b from 4 to 28.
 *
 * LTX_OREC_MUL, for the ownership records (cd/orec.h, and the visible
 * mode's bytelocks, cd/visible.c): 2^32 + m, with m / 2^32 = 0.0403.  The
 * index is then floor(line * 1.0403) modulo 2^b, the line number
 * itself plus a slow drift, which keeps what is near in memory near in
 * the table:
 * - Lines side by side take records side by side: 256 lines in a row
 *   take 266 records on 34 cache lines of records, not 256 cache lines.
 *   Where a transaction reads many neighbouring lines (an array; nodes
 *   allocated one after the other), most of its record loads hit a line
 *   of records it has just loaded, and a commit that writes neighbouring
 *   lines dirties fewer lines of records for the other threads.
 * - Two lines share a record only if they are at least (2^b - 1) /
 *   1.0403 lines apart, more than 0.95 times 2^b (LTX_HASH_MUL: 0.21
 *   times 2^b for some b).
 * - The drift carries the high bits in: glibc's 64 MiB-aligned heaps,
 *   2^20 lines apart, land 2^20 * 0.0403 records apart, and m was chosen
 *   by a search (over 300 values of m / 2^32 between 1/32 and 1/8) where
 *   2 to 16 heaps holding the same 2^b / 64 lines each share no record
 *   at any b from 10 to 22 (LTX_HASH_MUL: up to 89% of the lines share
 *   one), and where 2^b / 4 lines at any stride of 1, 3, 5 or 7 times a
 *   power of two lines (to 2^22) take as many distinct records as 37%
 *   of them at least (random keys: 88%; LTX_HASH_MUL: 20%).
 *   tests/unit/check_conflict.c checks the three properties.
 * What it gives up: lines about 2^b / 1.0403 apart share a record, and so
 * do whole regions at such a distance, where scattered records would
 * spread the sharing thin; a larger LTX_OREC_BITS moves that distance.
 */
#define LTX_HASH_MUL 0x634cc594bd743f09ull
#define LTX_OREC_MUL 0x10a519bcdull

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
