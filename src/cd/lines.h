/* SPDX-License-Identifier: MIT */
/* The transaction-cache directory: which lines a transaction holds, how. */
#ifndef LTX_CD_LINES_H
#define LTX_CD_LINES_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>

#include "cd/cd.h"
#include "rt/hash.h"

/*
 * One entry per line in the data set of the current transaction, in an
 * open-addressed table (linear probing) keyed by line address, private to
 * the descriptor.  An entry belongs to the current transaction when its
 * epoch is the descriptor's lines_epoch, so ending a transaction empties
 * the table by one increment.  It is the emulation's transaction-cache
 * directory: the visible mode's "do I already hold this line" check,
 * the slot count of the capacity limit, the bus accounting and the line
 * state query all read it.
 */
struct ltx_line {
	uintptr_t line; /* address of the line */
	uint32_t epoch; /* lines_epoch when the entry was made */
	uint32_t state; /* LTX_LINE_* */
	uint32_t widx;	/* LTX_LINE_EXCL: index of its write-set entry */
	uint32_t pad_;
};

#define LTX_LINE_READ 1u /* taken by LT: S */
#define LTX_LINE_EXCL 2u /* taken by LTX or ST: E (M once stored) */

/*
 * ltx_lines_probe: the current transaction's entry for line if it has
 * one, else the free entry where line would go (its epoch is not
 * lines_epoch: test with ltx_lines_held).  The table must exist
 * (lines_mask != 0): ltx_lines_charge makes it.
 */
static inline struct ltx_line *ltx_lines_probe(const struct ltx_cd *cd,
					       uintptr_t line)
{
	assert(cd->lines_mask != 0);
	uint32_t i = (uint32_t)ltx_hash_index(ltx_hash_line(line, LTX_HASH_MUL),
					      32, cd->lines_mask);

	for (;; i = (i + 1) & cd->lines_mask) {
		struct ltx_line *e = &cd->lines[i];

		if (e->epoch != cd->lines_epoch || e->line == line)
			return e;
	}
}

/* ltx_lines_held: whether a probed entry is the line's (not a free one). */
static inline bool ltx_lines_held(const struct ltx_cd *cd,
				  const struct ltx_line *e)
{
	return e->epoch == cd->lines_epoch;
}

/* ltx_lines_init: make the table now (for descriptors that must not
 * allocate later, in signal handlers).  Returns false if out of memory. */
bool ltx_lines_init(struct ltx_cd *cd);

/* ltx_lines_find: the current transaction's entry for line, or NULL. */
struct ltx_line *ltx_lines_find(const struct ltx_cd *cd, uintptr_t line);

/*
 * ltx_lines_charge: account for an LT (excl false) or LTX/ST (excl true)
 * of line, which the transaction does not yet hold in the needed state;
 * e is what ltx_lines_probe returned for it (NULL: not probed, or no
 * table yet).  Add the line's entry if it has none, charge the slots it
 * now takes (1 for a line read, 2 for a line written, 1 more for
 * S -> E) and count the bus request (T_READ, or T_RFO).  Returns 0 and the
 * entry in *out, or TM_ABORT_CAPACITY (limit reached, or no memory for
 * the table).  The caller sets the entry's state once the line is really
 * taken.
 */
unsigned ltx_lines_charge(struct ltx_cd *cd, struct ltx_line *e, uintptr_t line,
			  bool excl, struct ltx_line **out);

/*
 * ltx_lines_charge_new: ltx_lines_charge for the common case inlined: a
 * line not held at all (e, from ltx_lines_probe, is free), no capacity
 * limit and room in the table; anything else goes out of line.
 */
static inline unsigned ltx_lines_charge_new(struct ltx_cd *cd,
					    struct ltx_line *e, uintptr_t line,
					    bool excl, struct ltx_line **out)
{
	if (ltx_unlikely(e == NULL || ltx_lines_held(cd, e) ||
			 cd->capacity != 0 ||
			 2 * (cd->lines_used + 1) > cd->lines_mask + 1))
		return ltx_lines_charge(cd, e, line, excl, out);
	e->line = line;
	e->epoch = cd->lines_epoch;
	e->state = 0;
	cd->lines_used++;
	cd->slots += excl ? 2 : 1;
	if (excl)
		cd->stats->bus_t_rfo++;
	else
		cd->stats->bus_t_read++;
	*out = e;
	return 0;
}

/* ltx_lines_reset: forget every entry; the slot count starts over. */
void ltx_lines_reset(struct ltx_cd *cd);

#endif /* LTX_CD_LINES_H */
