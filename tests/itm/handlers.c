/* SPDX-License-Identifier: MIT */
/*
 * -fgnu-tm test, ltx only: tm_on_commit and tm_on_abort called from GCC
 * transactions (through transaction_pure wrappers, as tm_on_commit(3)
 * shows).  N threads each run ITERS transactions on one counter; every
 * tenth cancels itself (__transaction_cancel).  Each attempt makes a side
 * effect outside the transaction and registers its undo as an abort
 * handler, and a commit handler that counts the commit.  Conflicts
 * restart attempts at two threads or more.  At the end the counter, the
 * side effects left and the commits counted by the handlers are all the
 * number of transactions that committed: a handler run for the wrong
 * outcome, lost, or run twice breaks one of them.
 *
 * Usage: handlers [N]   (N threads; default 2)
 */
#include <stdint.h>

#include <ltx/tm.h>

#include "itm-test.h"

#define ITERS 20000

static uint64_t counter;
static long side;
static long committed[64];

static void undo_side(void *arg)
{
	(void)arg;
	__atomic_fetch_sub(&side, 1, __ATOMIC_RELAXED);
}

static void count_commit(void *arg)
{
	(*(long *)arg)++;
}

/* Registration inside a GCC transaction: pure, as the runtime keeps the
 * handler with the transaction itself. */
__attribute__((transaction_pure)) static void on_commit(void (*fn)(void *),
							void *arg)
{
	CHECK(tm_on_commit(fn, arg) == 0);
}

__attribute__((transaction_pure)) static void on_abort(void (*fn)(void *),
						       void *arg)
{
	CHECK(tm_on_abort(fn, arg) == 0);
}

__attribute__((transaction_pure)) static void make_side_effect(void)
{
	__atomic_fetch_add(&side, 1, __ATOMIC_RELAXED);
}

/* One transaction (a function of its own: no loop variable lives across
 * the transaction's restart point). */
static __attribute__((noinline)) void one(long id, int i)
{
	__transaction_atomic
	{
		make_side_effect();
		on_abort(undo_side, NULL);
		on_commit(count_commit, &committed[id]);
		counter++;
		if (i % 10 == 9)
			__transaction_cancel;
	}
}

static void *worker(void *arg)
{
	for (int i = 0; i < ITERS; i++)
		one((long)arg, i);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = nthreads_arg(argc, argv);
	long total = 0;
	const long want = (long)ITERS - ITERS / 10;

	run_threads(n, worker);
	for (int i = 0; i < n; i++) {
		if (committed[i] != want)
			fprintf(stderr,
				"thread %d: %ld commits counted, not %ld\n", i,
				committed[i], want);
		CHECK(committed[i] == want);
		total += committed[i];
	}
	CHECK(counter == (uint64_t)total);
	CHECK(side == total);
	printf("handlers: %d threads, %ld commits, %ld cancels: ok\n", n, total,
	       (long)n * (ITERS / 10));
	return 0;
}
