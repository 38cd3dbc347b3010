/* SPDX-License-Identifier: MIT */
/* Conflicts: what the modes note where they find one, and its class. */
#ifndef LTX_CD_CONFLICT_H
#define LTX_CD_CONFLICT_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/arch.h"
#include "cd/cd.h"
#include "rt/stats.h"

/*
 * Which cache lines conflict, and why (issue 19).  Where a mode finds the
 * line held by another transaction -- on the failing path only, never on
 * a fast path -- it notes what held it (ltx_cd_conflict_held) and what the
 * requester accessed (ltx_cd_conflict_access) in cd->conflict.  When the
 * transaction layer counts the abort with statistics on, it classifies the
 * note (ltx_cd_conflict_classify, rt/stats.h has the classes): the holder's
 * dirty bytes of the line, from its write-set entry, against the
 * requester's bytes; or, the holder holding another line on the same
 * ownership record (bytelock), aliasing.
 *
 * Synchronization: none.  The holder's write-set entry lies in another
 * thread's write set, which that thread may be changing, or freeing (a
 * write set that grows is freed once the orecs point at its copy: see
 * grow_writes in cd/invisible.c; the visible mode frees at once), its
 * pages unmapped, while it is read.  So it is read only with ltx_peek
 * (rt/peek.h), a copy that returns false instead of faulting, and a copy
 * that is torn or stale only makes one statistic wrong.  Every conclusion
 * is checked against what must hold of a current entry (its line, its
 * record), and what does not fit is unknown.
 */

/* What held the line (struct ltx_cd_conflict.held). */
#define LTX_CD_HELD_ENTRY   1 /* invisible: an orec locked by another tx */
#define LTX_CD_HELD_OWNER   2 /* visible: a bytelock another tx owns (E) */
#define LTX_CD_HELD_READERS 3 /* visible: a bytelock others hold in S */

/* The mode found the line held: by holder (see struct ltx_cd_conflict). */
static inline void ltx_cd_conflict_held(struct ltx_cd *cd, unsigned held,
					uintptr_t holder)
{
	cd->conflict.held = held;
	cd->conflict.holder = holder;
}

/* ... by an access of size bytes at addr (an LT or LTX: its word, 8). */
static inline void ltx_cd_conflict_access(struct ltx_cd *cd, const void *addr,
					  unsigned size)
{
	cd->conflict.addr = (uintptr_t)addr;
	cd->conflict.size = size;
}

/* A conflict classified. */
struct ltx_conflict {
	unsigned cls;	 /* enum ltx_conflict_class */
	unsigned bits;	 /* ALIAS: the LTX_OREC_BITS that separates line
			  * and other, 0: none up to the maximum */
	uintptr_t line;	 /* the requester's line, 0: not known */
	uint64_t mine;	 /* the requester's bytes of it (bit i: byte i) */
	uint64_t theirs; /* the holder's dirty bytes of it, 0: not known */
	uintptr_t other; /* ALIAS: the holder's line on the same record */
	bool again;	 /* the holder had stored nothing into the line
			  * yet: look again (ltx_cd_conflict_again) */
	struct ltx_cd_conflict note;
	const struct ltx_cd *owner;
};

/*
 * ltx_cd_conflict_classify: classify the conflict noted in *note into *k.
 * owner is the cd whose id is the holder of a LTX_CD_HELD_OWNER note (the
 * transaction layer finds it: cd knows no registry), else NULL.
 * A conflict with no note, or whose holder cannot be read, is UNKNOWN.
 * Abort path only.
 */
void ltx_cd_conflict_classify(struct ltx_conflict *k,
			      const struct ltx_cd_conflict *note,
			      const struct ltx_cd *owner);

/*
 * ltx_cd_conflict_again: a conflict whose holder had taken the line (LTX)
 * but stored nothing into it yet (k->again): look at the holder's entry
 * once more, later, and classify the conflict by the bytes stored since if
 * it still has the same line.  k->again stays set if it still has nothing
 * stored (look again later); a holder's entry now for another line leaves
 * the conflict UNKNOWN.
 */
void ltx_cd_conflict_again(struct ltx_conflict *k);

/*
 * ltx_cd_separating_bits: the LTX_OREC_BITS at which the lines a and b
 * stop sharing an ownership record (and a bytelock: both tables index
 * with the same bits of the line hash), or 0 if none up to
 * LTX_OREC_BITS_MAX does.
 */
unsigned ltx_cd_separating_bits(uintptr_t a, uintptr_t b);

#endif /* LTX_CD_CONFLICT_H */
