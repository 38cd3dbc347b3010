/* SPDX-License-Identifier: MIT */
/* One growable array for every log, list and buffer that grows. */
#ifndef LTX_RT_ARRAY_H
#define LTX_RT_ARRAY_H

#include <stdbool.h>
#include <stddef.h>

/*
 * ltx_array_reserve: make the array at *base, of *cap elements of elem
 * bytes of which the first used are in use, hold at least need elements:
 * the capacity doubles (from min, at least) until it does.  align is the
 * alignment the block needs (0: malloc's).  If keep_old is NULL the old
 * block is freed; else it is left in place and returned there, for a
 * caller that must still read it after the move (the caller frees it).
 * Returns false, changing nothing, when out of memory.  Not in signal
 * handlers (it allocates); callers that must not allocate check first.
 */
bool ltx_array_reserve(void **base, size_t *cap, size_t used, size_t need,
		       size_t elem, size_t min, size_t align, void **keep_old);

/* The common case: a malloc'd array of T, *base of type T **. */
#define LTX_ARRAY_RESERVE(base, cap, used, need, min)                          \
	ltx_array_reserve((void **)(base), (cap), (used), (need),              \
			  sizeof(**(base)), (min), 0, NULL)

#endif /* LTX_RT_ARRAY_H */
