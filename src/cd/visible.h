/* SPDX-License-Identifier: MIT */
/* Visible mode: per-line reader/writer bytelocks that mirror MESI S and E. */
#ifndef LTX_CD_VISIBLE_H
#define LTX_CD_VISIBLE_H

#include <stdint.h>

#include "arch/arch.h"

/* Threads (descriptor thread_slot below this) with a reader byte. */
#define LTX_VIS_SLOTS 48

/*
 * One bytelock per hashed line (TLRW, Dice & Shavit, SPAA 2010; the
 * layout of ck_bytelock): the owner word says who holds the lines that
 * hash here in E (0: nobody, else the owner's cd id + 1), reader[i]
 * is 1 while thread slot i holds one of them in S, and unslotted counts
 * the S holders without a byte (thread slots LTX_VIS_SLOTS and up).
 * One cache line each, so that lines hashing to different locks never
 * share a coherence unit.
 */
struct ltx_bytelock {
	uintptr_t owner;
	uint32_t unslotted;
	uint32_t pad_;
	uint8_t reader[LTX_VIS_SLOTS];
} __attribute__((aligned(LTX_LINE_SIZE)));

_Static_assert(sizeof(struct ltx_bytelock) == LTX_LINE_SIZE,
	       "one bytelock per cache line");

struct ltx_cd;

/* The visible mode's halves of ltx_cd_fork_finish and ltx_cd_fork_free
 * (cd.h). */
void ltx_vis_fork_finish(struct ltx_cd *cd);
void ltx_vis_fork_free(struct ltx_cd *const *keep, unsigned nkeep);

#endif /* LTX_CD_VISIBLE_H */
