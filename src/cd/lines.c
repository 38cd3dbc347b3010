/* SPDX-License-Identifier: MIT */
/* The transaction-cache directory: a per-descriptor table keyed by line. */
#include <ltx/tm.h>

#include <stdlib.h>
#include <string.h>

#include "cd/lines.h"
#include "rt/signal.h"

#define LINES_INITIAL 64

struct ltx_line *ltx_lines_find(const struct ltx_cd *cd, uintptr_t line)
{
	struct ltx_line *e;

	if (cd->lines_mask == 0)
		return NULL;
	e = ltx_lines_probe(cd, line);
	return ltx_lines_held(cd, e) ? e : NULL;
}

/* Double the table (or make the first one); false if out of memory. */
static __attribute__((noinline)) bool grow(struct ltx_cd *cd)
{
	uint32_t n = cd->lines_mask ? 2 * (cd->lines_mask + 1) : LINES_INITIAL;
	uint32_t old_n = cd->lines_mask ? cd->lines_mask + 1 : 0;
	struct ltx_line *old = cd->lines, *p;

	if (cd->no_alloc) /* a signal handler's descriptor */
		return false;
	p = LTX_OWN(calloc(n, sizeof(*p))); /* the allocator's (rt/signal.h) */
	if (p == NULL)
		return false;
	cd->lines = p;
	cd->lines_mask = n - 1;
	if (cd->lines_epoch == 0)
		cd->lines_epoch = 1; /* calloc'd entries (epoch 0) are free */
	for (uint32_t i = 0; i < old_n; i++)
		if (old[i].epoch == cd->lines_epoch)
			*ltx_lines_probe(cd, old[i].line) = old[i];
	LTX_OWN_VOID(free(old));
	return true;
}

bool ltx_lines_init(struct ltx_cd *cd)
{
	return cd->lines_mask != 0 || grow(cd);
}

unsigned ltx_lines_charge(struct ltx_cd *cd, struct ltx_line *e, uintptr_t line,
			  bool excl, struct ltx_line **out)
{
	uint32_t held = excl ? LTX_LINE_EXCL : LTX_LINE_READ | LTX_LINE_EXCL;
	uint32_t need;

	if (e == NULL && cd->lines_mask != 0)
		e = ltx_lines_probe(cd, line);
	if (e != NULL && ltx_lines_held(cd, e) && (e->state & held)) {
		*out = e; /* a hit: no slot, no bus request */
		return 0;
	}
	need = e != NULL && ltx_lines_held(cd, e) ? 1 /* S -> E */
	       : excl				  ? 2
						  : 1;
	/* An irrevocable transaction must not fail: it ignores the limit. */
	if (cd->capacity != 0 && cd->slots + need > cd->capacity &&
	    !cd->irrevocable)
		return TM_ABORT_CAPACITY;
	if (e == NULL || !ltx_lines_held(cd, e)) {
		/* Keep the table at most half full: probes stay short. */
		if (2 * (cd->lines_used + 1) > cd->lines_mask + 1) {
			if (!grow(cd))
				return TM_ABORT_CAPACITY | TM_ABORT_NOMEM;
			e = ltx_lines_probe(cd, line);
		}
		e->line = line;
		e->epoch = cd->lines_epoch;
		e->state = 0;
		e->widx = 0;
		cd->lines_used++;
	}
	cd->slots += need;
	if (excl)
		cd->stats->bus_t_rfo++;
	else
		cd->stats->bus_t_read++;
	*out = e;
	return 0;
}

void ltx_lines_reset(struct ltx_cd *cd)
{
	cd->slots = 0;
	if (cd->lines_used == 0)
		return;
	cd->lines_used = 0;
	if (++cd->lines_epoch == 0) {
		/* Wrapped: old entries could look current; wipe them. */
		memset(cd->lines, 0, (cd->lines_mask + 1) * sizeof(*cd->lines));
		cd->lines_epoch = 1;
	}
}
