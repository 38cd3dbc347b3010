/* SPDX-License-Identifier: MIT */
/* -fgnu-tm test: transaction_safe functions called through pointers. */
#include "itm-test.h"

#define ITERS 20000

/*
 * An indirect call in an atomic transaction goes through the TM clone
 * table: the runtime must find each function's instrumented clone
 * (_ITM_getTMCloneSafe), or the updates would not be transactional.
 */
static long account[2] = { 1000000, 0 };

__attribute__((transaction_safe, noinline)) static void move_right(long v)
{
	account[0] -= v;
	account[1] += v;
}

__attribute__((transaction_safe, noinline)) static void move_left(long v)
{
	account[1] -= v;
	account[0] += v;
}

typedef void safe_op(long) __attribute__((transaction_safe));

static safe_op *volatile ops[2] = {
	move_right, move_left
};

static void *worker(void *arg)
{
	unsigned long seed = 7777 + (unsigned long)arg;

	for (int i = 0; i < ITERS; i++) {
		unsigned long r = next_rand(&seed);
		safe_op *op = ops[r & 1];
		long a, b;

		__transaction_atomic {
			op((long)(r >> 40) % 100);
		}
		__transaction_atomic {
			a = account[0];
			b = account[1];
		}
		CHECK(a + b == 1000000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = nthreads_arg(argc, argv);

	run_threads(n, worker);
	CHECK(account[0] + account[1] == 1000000);
	printf("clone: %d threads: ok\n", n);
	return 0;
}
