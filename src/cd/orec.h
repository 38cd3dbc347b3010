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
 * Line address -> orec.  A multiplicative hash: bits 32 and up of
 * line * K depend on every line-number bit below them (all user address
 * bits for tables up to 2^28 orecs), so the high address bits are mixed in.
 * A plain shift-and-mask would make lines at the same offset in two
 * threads' 64 MiB-aligned glibc heaps share an orec (see DESIGN.md).  The
 * product is shifted right by 29, not 32, and masked with the table mask
 * scaled by the orec size, which yields the byte offset of the orec
 * directly: hash, scale and index in five instructions on x86-64.
 * K is passed in from memory (the descriptor's copy) so that the multiply
 * takes a memory operand instead of a 10-byte constant load.
 */
#define LTX_OREC_MUL 0x9e3779b97f4a7c15ull
#define LTX_OREC_HASH_SHIFT 29

#define LTX_OREC_BITS_DEFAULT 16
#define LTX_OREC_BITS_MIN 4
#define LTX_OREC_BITS_MAX 28

static inline uintptr_t *ltx_orec_at(uintptr_t *table, uintptr_t mask,
				     uint64_t mul, const void *addr)
{
	uintptr_t line = (uintptr_t)addr >> LTX_LINE_SHIFT;
	uintptr_t off = ((line * mul) >> LTX_OREC_HASH_SHIFT) & mask;

	return (uintptr_t *)((char *)table + off);
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

/* The orec table, allocated by ltx_orec_init(); mask is the mask for
 * ltx_orec_at(): (2^bits - 1) * sizeof(uintptr_t). */
extern uintptr_t *ltx_orec_table;
extern uintptr_t ltx_orec_mask;

/* ltx_orec_init: map the table of 2^bits orecs.  Returns 0 or -1 (errno). */
int ltx_orec_init(unsigned bits);

/* ltx_orec_ready: whether the table exists (its size is then fixed). */
bool ltx_orec_ready(void);

#endif /* LTX_CD_OREC_H */
