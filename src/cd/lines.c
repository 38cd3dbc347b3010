/* SPDX-License-Identifier: MIT */
/* The transaction-cache directory: a per-descriptor table keyed by line. */
#include <ltx/tm.h>

#include <stdlib.h>
#include <string.h>

#include "cd/lines.h"
#include "cd/orec.h"

#define LINES_INITIAL 64

struct ltx_line *ltx_lines_find(const struct ltx_tx *tx, uintptr_t line)
{
	struct ltx_line *e;

	if (tx->lines_mask == 0)
		return NULL;
	e = ltx_lines_probe(tx, line);
	return ltx_lines_held(tx, e) ? e : NULL;
}

/* Double the table (or make the first one); false if out of memory. */
static __attribute__((noinline)) bool grow(struct ltx_tx *tx)
{
	uint32_t n = tx->lines_mask ? 2 * (tx->lines_mask + 1) : LINES_INITIAL;
	uint32_t old_n = tx->lines_mask ? tx->lines_mask + 1 : 0;
	struct ltx_line *old = tx->lines, *p;

	if (tx->no_alloc) /* a signal handler's descriptor */
		return false;
	p = calloc(n, sizeof(*p));
	if (p == NULL)
		return false;
	tx->lines = p;
	tx->lines_mask = n - 1;
	if (tx->lines_epoch == 0)
		tx->lines_epoch = 1; /* calloc'd entries (epoch 0) are free */
	for (uint32_t i = 0; i < old_n; i++)
		if (old[i].epoch == tx->lines_epoch)
			*ltx_lines_probe(tx, old[i].line) = old[i];
	free(old);
	return true;
}

bool ltx_lines_init(struct ltx_tx *tx)
{
	return tx->lines_mask != 0 || grow(tx);
}

unsigned ltx_lines_charge(struct ltx_tx *tx, struct ltx_line *e, uintptr_t line,
			  bool excl, struct ltx_line **out)
{
	uint32_t held = excl ? LTX_LINE_EXCL : LTX_LINE_READ | LTX_LINE_EXCL;
	uint32_t need;

	if (e == NULL && tx->lines_mask != 0)
		e = ltx_lines_probe(tx, line);
	if (e != NULL && ltx_lines_held(tx, e) && (e->state & held)) {
		*out = e; /* a hit: no slot, no bus request */
		return 0;
	}
	need = e != NULL && ltx_lines_held(tx, e) ? 1 /* S -> E */
	       : excl				  ? 2
						  : 1;
	/* An irrevocable transaction must not fail: it ignores the limit. */
	if (tx->capacity != 0 && tx->slots + need > tx->capacity &&
	    !tx->irrevocable)
		return TM_ABORT_CAPACITY;
	if (e == NULL || !ltx_lines_held(tx, e)) {
		/* Keep the table at most half full: probes stay short. */
		if (2 * (tx->lines_used + 1) > tx->lines_mask + 1) {
			if (!grow(tx))
				return TM_ABORT_CAPACITY | TM_ABORT_NOMEM;
			e = ltx_lines_probe(tx, line);
		}
		e->line = line;
		e->epoch = tx->lines_epoch;
		e->state = 0;
		e->widx = 0;
		tx->lines_used++;
	}
	tx->slots += need;
	if (excl)
		tx->stats.bus_t_rfo++;
	else
		tx->stats.bus_t_read++;
	*out = e;
	return 0;
}

void ltx_lines_reset(struct ltx_tx *tx)
{
	tx->slots = 0;
	if (tx->lines_used == 0)
		return;
	tx->lines_used = 0;
	if (++tx->lines_epoch == 0) {
		/* Wrapped: old entries could look current; wipe them. */
		memset(tx->lines, 0, (tx->lines_mask + 1) * sizeof(*tx->lines));
		tx->lines_epoch = 1;
	}
}
