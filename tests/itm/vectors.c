/* SPDX-License-Identifier: MIT */
/* -fgnu-tm test: 16-byte accesses (GCC's _ITM_RM128/_ITM_WM128 family). */
#include <stdint.h>
#include <string.h>

#include "itm-test.h"

#define ITERS 20000
#define SLOTS 4

/*
 * GCC loads and stores a 16-byte vector, and two adjacent longs that it
 * vectorises (it->used++, it->free--), with one barrier of 16 bytes.  ltx
 * takes those as two words: on the fast path, through the slow path, on
 * one line or across two (a vector aligned to 8 at offset 56), read after
 * the transaction's own scalar store, and on the stack.  The two halves
 * of each vector always move together, so a transaction that sees them
 * differ, or a total that is off, is a bug.
 */
typedef long v2 __attribute__((vector_size(16)));
typedef long v2u __attribute__((vector_size(16), aligned(8)));

static v2 slots[SLOTS] __attribute__((aligned(64)));
/* A vector across a line boundary: bytes 56-71 of a 128-byte block. */
static struct {
	long pad[7];
	v2u across;
	long tail[7];
} __attribute__((aligned(64))) line2;
static struct item {
	long used, free;
} item __attribute__((aligned(16)));

#define ITEM_FREE (64L * ITERS * 8)

__attribute__((transaction_safe, noinline)) static void bump(v2 *p)
{
	*p += (v2){ 1, 1 };
}

static void *worker(void *arg)
{
	unsigned k = (unsigned)(long)arg % SLOTS;

	for (int i = 0; i < ITERS; i++) {
		v2 seen, other;

		__transaction_atomic
		{
			slots[k] += (v2){ 1, 1 };
			line2.across += (v2){ 1, 1 };
			item.used++;
			item.free--;
		}
		/* Read after write: a scalar store to one half, then the
		 * vector, then the other half set to match. */
		__transaction_atomic
		{
			long *half = (long *)&slots[(k + 1) % SLOTS];

			half[0]++;
			seen = slots[(k + 1) % SLOTS];
			half[1] = seen[0];
		}
		CHECK(seen[0] == seen[1] + 1);
		__transaction_atomic
		{
			seen = slots[(k + 2) % SLOTS];
			other = line2.across;
		}
		CHECK(seen[0] == seen[1]);
		CHECK(other[0] == other[1]);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = nthreads_arg(argc, argv);
	long total = (long)n * ITERS, sum = 0;
	v2 local = { 5, 5 };
	int cancel = argc > 100; /* never true; the compiler cannot tell */

	item.free = ITEM_FREE;
	/* A vector on the stack written through a pointer, in a transaction
	 * that commits; one that may cancel always runs instrumented.  (That
	 * a cancel puts it back is check_itm's to test: GCC's libitm, this
	 * program's reference, leaves it changed.) */
	__transaction_atomic
	{
		bump(&local);
		if (cancel)
			__transaction_cancel;
	}
	CHECK(local[0] == 6 && local[1] == 6);

	run_threads(n, worker);
	for (int k = 0; k < SLOTS; k++) {
		CHECK(slots[k][0] == slots[k][1]);
		sum += slots[k][0];
	}
	/* Each worker adds 2 to some slot per iteration: 1 in its first
	 * transaction, 1 in its second (to another slot). */
	CHECK(sum == 2 * total);
	CHECK(line2.across[0] == total && line2.across[1] == total);
	CHECK(item.used == total && item.free == ITEM_FREE - total);
	for (int i = 0; i < 7; i++)
		CHECK(line2.pad[i] == 0 && line2.tail[i] == 0);
	printf("vectors: %d threads, %ld transactions of each kind: ok\n", n,
	       total);
	return 0;
}
