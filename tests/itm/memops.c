/* SPDX-License-Identifier: MIT */
/* -fgnu-tm test: memcpy/memset and unaligned, straddling accesses in txs. */
#include <stdint.h>
#include <string.h>

#include "itm-test.h"

#define ITERS	5000
#define NBLOCKS 4
#define BLOCK	200 /* not a multiple of 8 or 64: ragged edges */

/*
 * Blocks of bytes that are always uniform: a transaction memsets a block
 * to a new value, or memcpys one block over another, at an odd offset
 * inside a 64-byte aligned arena, so copies straddle cache lines and
 * start and end mid-word.  Guard bytes around each block must never
 * change.  A packed struct has counters that straddle a line boundary.
 */
static unsigned char arena[NBLOCKS][BLOCK + 24] __attribute__((aligned(64)));
#define BLK(i) (&arena[i][11])

struct __attribute__((packed)) odd {
	char pad[61];
	uint32_t a; /* bytes 61..64: straddles the first line boundary */
	uint16_t b; /* 65..66: misaligned */
	uint64_t c; /* 67..74: misaligned */
};

static struct odd odd __attribute__((aligned(64)));

static void *worker(void *arg)
{
	unsigned long seed = 0x9e3779b97f4a7c15ul + (unsigned long)arg;

	for (int i = 0; i < ITERS; i++) {
		unsigned long r = next_rand(&seed);
		int x = (int)(r % NBLOCKS), y = (int)((r >> 8) % NBLOCKS);
		unsigned char v = (unsigned char)(r >> 16);
		unsigned char tmp[BLOCK];

		if (r & (1ul << 40)) {
			__transaction_atomic
			{
				memset(BLK(x), v, BLOCK);
			}
		} else {
			__transaction_atomic
			{
				memcpy(tmp, BLK(y), BLOCK);
				memcpy(BLK(x), tmp, BLOCK);
			}
		}
		__transaction_atomic
		{
			memcpy(tmp, BLK(y), BLOCK);
		}
		for (int k = 1; k < BLOCK; k++)
			CHECK(tmp[k] == tmp[0]);
		__transaction_atomic
		{
			odd.a++;
			odd.b++;
			odd.c += 2;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = nthreads_arg(argc, argv);

	CHECK((uintptr_t)&odd.a % 64 == 61);
	memset(arena, 0xee, sizeof(arena));
	for (int i = 0; i < NBLOCKS; i++)
		memset(BLK(i), i, BLOCK);
	run_threads(n, worker);
	for (int i = 0; i < NBLOCKS; i++) {
		for (int k = 0; k < 11; k++)
			CHECK(arena[i][k] == 0xee);
		for (int k = 11 + BLOCK; k < BLOCK + 24; k++)
			CHECK(arena[i][k] == 0xee);
		for (int k = 1; k < BLOCK; k++)
			CHECK(BLK(i)[k] == BLK(i)[0]);
	}
	for (int k = 0; k < 61; k++)
		CHECK(odd.pad[k] == 0);
	CHECK(odd.a == (uint32_t)(n * ITERS));
	CHECK(odd.b == (uint16_t)(n * ITERS));
	CHECK(odd.c == (uint64_t)2 * n * ITERS);
	printf("memops: %d threads: ok\n", n);
	return 0;
}
