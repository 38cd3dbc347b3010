/* SPDX-License-Identifier: MIT */
/* Growing the read and write sets (outside every fast path). */
#include <stdlib.h>
#include <string.h>

#include "cd/wset.h"

bool ltx_rset_grow(struct ltx_cd *cd)
{
	size_t n = (size_t)(cd->rs_end - cd->rs_base);
	size_t used = (size_t)(cd->rs_next - cd->rs_base);
	struct ltx_rentry *p = realloc(cd->rs_base, 2 * n * sizeof(*p));

	if (p == NULL)
		return false;
	cd->rs_base = p;
	cd->rs_next = p + used;
	cd->rs_end = p + 2 * n;
	return true;
}

bool ltx_wset_grow(struct ltx_cd *cd)
{
	size_t n = (size_t)(cd->ws_end - cd->ws_base);
	size_t used = (size_t)(cd->ws_next - cd->ws_base);
	struct ltx_wentry *p;

	if (posix_memalign((void **)&p, LTX_LINE_SIZE, 2 * n * sizeof(*p)))
		return false;
	memcpy(p, cd->ws_base, used * sizeof(*p));
	free(cd->ws_base);
	cd->ws_base = p;
	cd->ws_next = p + used;
	cd->ws_end = p + 2 * n;
	return true;
}
