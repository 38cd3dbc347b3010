/* SPDX-License-Identifier: MIT */
/* The public allocation calls: tm_malloc, tm_calloc, tm_free and friends. */
#pragma GCC visibility push(default)
#include <ltx/tm.h>
#pragma GCC visibility pop

#include <errno.h>
#include <stdint.h>

#include "tx/mem.h"

void *tm_malloc(size_t size)
{
	return ltx_mem_malloc(size);
}

void *tm_calloc(size_t nmemb, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(nmemb, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return ltx_mem_alloc(total, 0, true);
}

void *tm_aligned_alloc(size_t alignment, size_t size)
{
	if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
		errno = EINVAL;
		return NULL;
	}
	return ltx_mem_alloc(size, alignment, false);
}

void tm_free(void *ptr)
{
	ltx_mem_free(ptr);
}

void tm_free_sized(void *ptr, size_t size)
{
	ltx_mem_free_sized(ptr, size);
}

int tm_mem_stats(struct tm_mem_stats *out)
{
	if (out == NULL) {
		errno = EINVAL;
		return -1;
	}
	ltx_mem_stats(out);
	return 0;
}

int tm_mem_flush(void)
{
	ltx_mem_flush();
	return 0;
}
