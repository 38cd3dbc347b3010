/* SPDX-License-Identifier: MIT */
/* Ownership records of the invisible mode: one word per hashed line. */
#ifndef LTX_CD_OREC_H
#define LTX_CD_OREC_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/arch.h"
#include "cd/cd.h"
#include "rt/config.h"
#include "rt/hash.h"

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
 * Line address -> orec: the line hash by LTX_OREC_MUL (rt/hash.h, which
 * says why that constant), its bits from 29 up
 * masked with the table mask scaled by the orec size, which yields the
 * byte offset of the orec directly: hash, scale and index in five
 * instructions on x86-64 (<ltx/inline.h> has the same formula).
 */
#define LTX_OREC_HASH_SHIFT 29

static inline uintptr_t *ltx_orec_at(uintptr_t *table, uintptr_t mask,
				     uint64_t mul, const void *addr)
{
	uintptr_t off = ltx_hash_index(ltx_hash_line((uintptr_t)addr, mul),
				       LTX_OREC_HASH_SHIFT, mask);

	return (uintptr_t *)((char *)table + off);
}

/* The orec of addr's line, in cd's table. */
static inline uintptr_t *ltx_orec_of(const struct ltx_cd *cd, const void *addr)
{
	return ltx_orec_at(cd->orecs, cd->orec_mask, cd->orec_mul, addr);
}

/* The lock word: an orec value is locked, or a version. */
static inline bool ltx_orec_locked(uintptr_t v)
{
	return (v & LTX_OREC_LOCKED) != 0;
}

/* The write-set entry a locked orec value points at (its owner's). */
static inline struct ltx_wentry *ltx_orec_entry(uintptr_t v)
{
	return (struct ltx_wentry *)(v & ~LTX_OREC_LOCKED);
}

/* The locked value that names entry w as the orec's owner. */
static inline uintptr_t ltx_orec_lock_word(const struct ltx_wentry *w)
{
	return (uintptr_t)w | LTX_OREC_LOCKED;
}

/*
 * The global version clock (LSA/TL2).  Synchronization: a committing
 * update transaction takes its commit version with an acq_rel fetch-add,
 * after it has locked its write set; a transaction takes its snapshot with
 * an acquire load.  Pairs with: the release stores of orec versions at
 * commit (a transaction that sees clock >= v and then reads an orec holding
 * v also sees the data written before v was released).
 */
struct ltx_clock {
	uint64_t now;
} __attribute__((aligned(128)));

extern struct ltx_clock ltx_clock;

/* The orec table, allocated by ltx_orec_init(); mask is the mask for
 * ltx_orec_at(): (2^bits - 1) * sizeof(uintptr_t). */
extern uintptr_t *ltx_orec_table;
extern uintptr_t ltx_orec_mask;

/* ltx_orec_init: map the table of 2^bits orecs.  Returns 0 or -1 (errno). */
int ltx_orec_init(unsigned bits);

/* ltx_orec_ready: whether the table exists (its size is then fixed). */
bool ltx_orec_ready(void);

#endif /* LTX_CD_OREC_H */
