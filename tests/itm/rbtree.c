/* SPDX-License-Identifier: MIT */
/* -fgnu-tm test: a red-black tree updated by concurrent transactions. */
#include <stdint.h>

#include "itm-test.h"
#include "rbtree.h"

#define KEYS 512
#define OPS  20000

static long net[64];

static void *worker(void *arg)
{
	long id = (long)arg;
	unsigned long seed = 2463534242ul * (unsigned long)(id + 1);

	for (int i = 0; i < OPS; i++) {
		unsigned long r = next_rand(&seed);
		long key = (long)(r >> 8) % KEYS;
		int op = (int)(r % 10), done;

		if (op < 2) {
			__transaction_atomic
			{
				done = rb_insert(key);
			}
			net[id] += done;
		} else if (op < 4) {
			__transaction_atomic
			{
				done = rb_erase(key);
			}
			net[id] -= done;
		} else {
			__transaction_atomic
			{
				done = rb_contains(key);
			}
			(void)done;
		}
	}
	return NULL;
}

static void key_in_range(long key, void *val)
{
	(void)val;
	CHECK(key >= 0 && key < KEYS);
}

int main(int argc, char **argv)
{
	int n = nthreads_arg(argc, argv);
	long expect = 0, count = 0;

	for (long k = 0; k < KEYS; k += 2)
		expect += rb_insert(k);
	run_threads(n, worker);
	for (int i = 0; i < n; i++)
		expect += net[i];
	CHECK(colour(rb_set.root) == BLACK);
	rb_check(&rb_set, rb_set.root, NULL, NULL, NULL, &count, key_in_range);
	CHECK(count == expect);
	printf("rbtree: %d threads, %ld keys at the end: ok\n", n, count);
	return 0;
}
