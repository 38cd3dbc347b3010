/* SPDX-License-Identifier: MIT */
/* Growing the read and write sets (outside every fast path). */
#include <stdlib.h>
#include <string.h>

#include "cd/wset.h"

bool ltx_rset_grow(struct ltx_tx *tx)
{
	size_t n = (size_t)(tx->rs_end - tx->rs_base);
	size_t used = (size_t)(tx->rs_next - tx->rs_base);
	struct ltx_rentry *p = realloc(tx->rs_base, 2 * n * sizeof(*p));

	if (p == NULL)
		return false;
	tx->rs_base = p;
	tx->rs_next = p + used;
	tx->rs_end = p + 2 * n;
	return true;
}

bool ltx_wset_grow(struct ltx_tx *tx)
{
	size_t n = (size_t)(tx->ws_end - tx->ws_base);
	size_t used = (size_t)(tx->ws_next - tx->ws_base);
	struct ltx_wentry *p;

	if (posix_memalign((void **)&p, LTX_LINE_SIZE, 2 * n * sizeof(*p)))
		return false;
	memcpy(p, tx->ws_base, used * sizeof(*p));
	free(tx->ws_base);
	tx->ws_base = p;
	tx->ws_next = p + used;
	tx->ws_end = p + 2 * n;
	return true;
}
