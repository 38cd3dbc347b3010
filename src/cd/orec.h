/* SPDX-License-Identifier: MIT */
/* Ownership records of the invisible mode: one word per hashed line. */
#ifndef LTX_CD_OREC_H
#define LTX_CD_OREC_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/arch.h"

/*
 * An orec is one word.  Unlocked, it holds the version of the lines that
 * hash to it: the global clock value of the last commit that wrote one of
 * them (bit 63 clear).  Locked, it holds LTX_OREC_LOCKED | the address of
 * the owner's write-set entry for that orec (user-space addresses are below
 * 2^47, so bit 63 is free).  Because a locked value is above every version,
 * "v >= snapshot + 1" tests "locked or too new" in one compare.
 */
#define LTX_OREC_LOCKED ((uintptr_t)1 << 63)

/*
 * Line address -> orec index.  A multiplicative (Fibonacci) hash: the top
 * bits of line * K depend on every bit of the line number, so the high
 * address bits are mixed in.  A plain shift-and-mask would make lines at the
 * same offset in two threads' 64 MiB-aligned glibc heaps share an orec
 * (see DESIGN.md).
 */
#define LTX_OREC_MUL 0x9e3779b97f4a7c15ull

#define LTX_OREC_BITS_DEFAULT 20
#define LTX_OREC_BITS_MIN 4
#define LTX_OREC_BITS_MAX 28

static inline uintptr_t *ltx_orec_at(uintptr_t *table, unsigned shift,
				     const void *addr)
{
	uintptr_t line = (uintptr_t)addr >> LTX_LINE_SHIFT;

	return table + ((line * LTX_OREC_MUL) >> shift);
}

/*
 * The global version clock (LSA/TL2).  Synchronization: a committing
 * update transaction takes its commit version with an acq_rel fetch-add,
 * after it has locked its write set; a transaction takes its snapshot with
 * an acquire load.  Pairs with: the release stores of orec versions at
 * commit (a transaction that sees clock >= v and then reads an orec holding
 * v also sees the data written before v was released).
 */
extern uint64_t ltx_clock;

/* The orec table, allocated by ltx_orec_init(); shift is 64 - bits. */
extern uintptr_t *ltx_orec_table;
extern unsigned ltx_orec_shift;

/* ltx_orec_init: map the table of 2^bits orecs.  Returns 0 or -1 (errno). */
int ltx_orec_init(unsigned bits);

/* ltx_orec_ready: whether the table exists (its size is then fixed). */
bool ltx_orec_ready(void);

#endif /* LTX_CD_OREC_H */
