/* SPDX-License-Identifier: MIT */
/* One growable array for every log, list and buffer that grows. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rt/array.h"
#include "rt/signal.h"

/* ltx_array_reserve past its first test: the array grows.  The allocator
 * may wait in the kernel (a contended lock), and this is ltx's own call,
 * made for its logs: ltx_array_reserve marks it (rt/signal.h). */
static bool grow(void **base, size_t *cap, size_t used, size_t need,
		 size_t elem, size_t min, size_t align, void **keep_old)
{
	size_t n = *cap != 0 ? *cap : (min != 0 ? min : 1);
	void *p;

	while (n < need) {
		if (n > SIZE_MAX / 2 / elem)
			return false;
		n *= 2;
	}
	if (n > SIZE_MAX / elem)
		return false;
	if (align == 0 && keep_old == NULL) {
		p = realloc(*base, n * elem);
		if (p == NULL)
			return false;
	} else {
		if (align == 0)
			p = malloc(n * elem);
		else if (posix_memalign(&p, align, n * elem) != 0)
			p = NULL;
		if (p == NULL)
			return false;
		if (used != 0)
			memcpy(p, *base, used * elem);
		if (keep_old != NULL)
			*keep_old = *base;
		else
			free(*base);
	}
	*base = p;
	*cap = n;
	return true;
}

bool ltx_array_reserve(void **base, size_t *cap, size_t used, size_t need,
		       size_t elem, size_t min, size_t align, void **keep_old)
{
	if (need <= *cap)
		return true;
	return LTX_OWN(grow(base, cap, used, need, elem, min, align, keep_old));
}
