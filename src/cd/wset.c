/* SPDX-License-Identifier: MIT */
/* Growing the read and write sets (outside every fast path). */
#include <stdlib.h>

#include "cd/wset.h"
#include "rt/array.h"

/* Byte b of MASK(d) is 0xff if bit b of d is set (see wset.h). */
#define BYTE(d, b) ((((d) >> (b)) & 1) ? (uint64_t)0xff << (8 * (b)) : 0)
#define MASK(d)                                                               \
	(BYTE(d, 0) | BYTE(d, 1) | BYTE(d, 2) | BYTE(d, 3) | BYTE(d, 4) |     \
	 BYTE(d, 5) | BYTE(d, 6) | BYTE(d, 7))
#define MASK4(d) MASK(d), MASK((d) + 1), MASK((d) + 2), MASK((d) + 3)
#define MASK16(d) MASK4(d), MASK4((d) + 4), MASK4((d) + 8), MASK4((d) + 12)
#define MASK64(d)                                                             \
	MASK16(d), MASK16((d) + 16), MASK16((d) + 32), MASK16((d) + 48)

const uint64_t ltx_wset_byte_masks[256] = {
	MASK64(0), MASK64(64), MASK64(128), MASK64(192)
};

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
	return true;
}
