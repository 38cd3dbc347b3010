/* SPDX-License-Identifier: MIT */
/* -fgnu-tm test: a sorted linked list, nodes malloc'ed and freed in txs. */
#include <stdint.h>

#include "itm-test.h"
#include "list.h"

#define KEYS 256
#define OPS 20000

static long net[64];

static void *worker(void *arg)
{
	long id = (long)arg;
	unsigned long seed = 88172645463325252ul + (unsigned long)id;

	for (int i = 0; i < OPS; i++) {
		unsigned long r = next_rand(&seed);
		long key = (long)(r >> 8) % KEYS;
		int op = (int)(r % 10), done;

		if (op == 0) {
			__transaction_atomic { done = insert(key); }
			net[id] += done;
		} else if (op == 1) {
			__transaction_atomic { done = erase(key); }
			net[id] -= done;
		} else {
			__transaction_atomic { done = contains(key); }
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
	printf("list: %d threads, %ld keys at the end: ok\n", n, len);
	return 0;
}
