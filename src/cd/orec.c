/* SPDX-License-Identifier: MIT */
/* The orec table and the global version clock. */
#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>

#include "cd/orec.h"

/*
 * Alone on its 128 bytes (the struct's size is its alignment): every
 * update commit writes it, so a variable beside it would cost its readers
 * a miss per commit of another thread.  Before, only the start was
 * aligned, and the linker put statics read on every commit with
 * statistics on (tx/stats.c's child_pending) on the same line.  128, not
 * 64: adjacent-line prefetchers fetch lines in pairs.
 */
struct ltx_clock ltx_clock;
uintptr_t *ltx_orec_table;
uintptr_t ltx_orec_mask;

int ltx_orec_init(unsigned bits)
{
	size_t size = sizeof(uintptr_t) << bits;
	void *p;

	if (bits < LTX_OREC_BITS_MIN || bits > LTX_OREC_BITS_MAX) {
		errno = EINVAL;
		return -1;
	}
	/* Zero pages on demand: only the orecs a program touches cost memory.
	 */
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	ltx_orec_mask = (((uintptr_t)1 << bits) - 1) * sizeof(uintptr_t);
	/* Pairs with the acquire load in ltx_orec_ready(). */
	__atomic_store_n(&ltx_orec_table, (uintptr_t *)p, __ATOMIC_RELEASE);
	return 0;
}

bool ltx_orec_ready(void)
{
	return __atomic_load_n(&ltx_orec_table, __ATOMIC_ACQUIRE) != NULL;
}
