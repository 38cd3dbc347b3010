/* SPDX-License-Identifier: MIT */
/* Growing the read and write sets (outside every fast path). */
#include <stdlib.h>

#include "cd/wset.h"
#include "rt/array.h"

bool ltx_rset_grow(struct ltx_cd *cd)
{
	size_t cap = (size_t)(cd->rs_end - cd->rs_base);
	size_t used = (size_t)(cd->rs_next - cd->rs_base);

	if (cd->no_alloc ||
	    !LTX_ARRAY_RESERVE(&cd->rs_base, &cap, used, used + 1, 1))
		return false;
	cd->rs_next = cd->rs_base + used;
	cd->rs_end = cd->rs_base + cap;
	return true;
}

bool ltx_wset_grow(struct ltx_cd *cd, void **old)
{
	size_t cap = (size_t)(cd->ws_end - cd->ws_base);
	size_t used = (size_t)(cd->ws_next - cd->ws_base);

	if (cd->no_alloc ||
	    !ltx_array_reserve((void **)&cd->ws_base, &cap, used, used + 1,
			       sizeof(*cd->ws_base), 1, LTX_LINE_SIZE, old))
		return false;
	cd->ws_next = cd->ws_base + used;
	cd->ws_end = cd->ws_base + cap;
	/* The copied entries keep theirs (cd.h, owner). */
	for (struct ltx_wentry *w = cd->ws_next; w < cd->ws_end; w++)
		w->owner = cd->id;
	return true;
}
