/* SPDX-License-Identifier: MIT */
/* -fgnu-tm test: a sorted linked list, nodes malloc'ed and freed in txs. */
#include <stdint.h>

#include <ltx/tm.h>

#include "itm-test.h"
#include "list.h"

/* ltx's, when the program runs on ltx; NULL under libitm. */
#pragma weak tm_mem_stats
#pragma weak tm_mem_flush

#define KEYS 256
#define OPS  20000

static long net[64], erased[64];

static void *worker(void *arg)
{
	long id = (long)arg;
	unsigned long seed = 88172645463325252ul + (unsigned long)id;

	for (int i = 0; i < OPS; i++) {
		unsigned long r = next_rand(&seed);
		long key = (long)(r >> 8) % KEYS;
		int op = (int)(r % 10), done;

		if (op == 0) {
			__transaction_atomic
			{
				done = insert(key);
			}
			net[id] += done;
		} else if (op == 1) {
			__transaction_atomic
			{
				done = erase(key);
			}
			net[id] -= done;
			erased[id] += done;
		} else {
			__transaction_atomic
			{
				done = contains(key);
			}
			(void)done;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = nthreads_arg(argc, argv);
	long expect = 0, len = 0, last = -1;

	for (long k = 0; k < KEYS; k += 2)
		expect += insert(k);
	run_threads(n, worker);
	for (int i = 0; i < n; i++)
		expect += net[i];
	for (struct node *c = head.next; c != NULL; c = c->next, len++) {
		CHECK(c->key > last && c->key < KEYS);
		last = c->key;
	}
	CHECK(len == expect);
	if (tm_mem_stats != NULL) {
		/* On ltx, a node erased by a concurrent (instrumented)
		 * transaction is released after a grace period: once every
		 * thread has ended, a flush releases them all. */
		struct tm_mem_stats s;
		long all_erased = 0;

		for (int i = 0; i < n; i++)
			all_erased += erased[i];
		tm_mem_flush();
		tm_mem_stats(&s);
		CHECK(s.pending_blocks == 0 && s.pending_bytes == 0);
		CHECK(s.freed_blocks <= (uint64_t)all_erased);
		if (n >= 2)
			CHECK(s.freed_blocks > 0);
		fprintf(stderr,
			"list: %ld erased, %llu released after a "
			"grace period\n",
			all_erased, (unsigned long long)s.freed_blocks);
	}
	printf("list: %d threads, %ld keys at the end: ok\n", n, len);
	return 0;
}
