/* SPDX-License-Identifier: MIT */
/* -fgnu-tm integer-set throughput: linked list or red-black tree. */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "itm-test.h"
#include "list.h"
#include "rbtree.h"

/*
 * bench_intset list|rbtree THREADS [MS [KEYS [UPDATE%]]]
 * The set starts with KEYS keys drawn from a range of 2*KEYS; each
 * operation picks a random key in the range and inserts it (UPDATE/2 %),
 * removes it (UPDATE/2 %) or looks it up, in its own transaction.  Prints
 * million operations per second over MS milliseconds (default 1000; 256
 * keys; 20% updates: the linked-list workload).
 */
static int use_tree;
static long range, update_pct;
static volatile int stop;
static unsigned long done_ops[64];

static void *worker(void *arg)
{
	long id = (long)arg;
	unsigned long seed = 0x2545f4914f6cdd1dul * (unsigned long)(id + 1);
	unsigned long ops = 0;

	while (!stop) {
		unsigned long r = next_rand(&seed);
		long key = (long)((r >> 8) % (unsigned long)range);
		long op = (long)(r % 100);
		int res;

		if (op < update_pct / 2) {
			if (use_tree)
				__transaction_atomic
				{
					res = rb_insert(key);
				}
			else
				__transaction_atomic
				{
					res = insert(key);
				}
		} else if (op < update_pct) {
			if (use_tree)
				__transaction_atomic
				{
					res = rb_erase(key);
				}
			else
				__transaction_atomic
				{
					res = erase(key);
				}
		} else {
			if (use_tree)
				__transaction_atomic
				{
					res = rb_contains(key);
				}
			else
				__transaction_atomic
				{
					res = contains(key);
				}
		}
		(void)res;
		ops++;
	}
	done_ops[id] = ops;
	return NULL;
}

static void *timer(void *arg)
{
	struct timespec ts = { (long)arg / 1000, ((long)arg % 1000) * 1000000 };

	nanosleep(&ts, NULL);
	stop = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	long ms, keys, total = 0;
	unsigned long seed = 12345;
	int n;
	pthread_t tm;
	struct timespec t0, t1;
	double secs;

	CHECK(argc >= 3);
	use_tree = strcmp(argv[1], "rbtree") == 0;
	n = atoi(argv[2]);
	ms = argc > 3 ? atol(argv[3]) : 1000;
	keys = argc > 4 ? atol(argv[4]) : 256;
	update_pct = argc > 5 ? atol(argv[5]) : 20;
	CHECK(n >= 1 && n <= 64 && ms > 0 && keys > 0);
	range = 2 * keys;
	for (long k = 0; k < keys;) {
		long key = (long)(next_rand(&seed) % (unsigned long)range);

		k += use_tree ? rb_insert(key) : insert(key);
	}
	CHECK(pthread_create(&tm, NULL, timer, (void *)ms) == 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	run_threads(n, worker);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_join(tm, NULL);
	for (int i = 0; i < n; i++)
		total += (long)done_ops[i];
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	       (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("%s %d %.3f\n", argv[1], n, total / secs / 1e6);
	return 0;
}
