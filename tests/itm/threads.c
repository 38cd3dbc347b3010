/* SPDX-License-Identifier: MIT */
/*
 * -fgnu-tm test: threads that come and go while another runs transactions.
 * One thread runs transactions until told to stop; meanwhile the main
 * thread starts N short-lived threads at a time, ROUNDS times, each running
 * its own transactions.  The TM switches between running a lone thread's
 * transactions serially (uninstrumented, on ltx and libitm) and running
 * them concurrently each time a thread arrives or leaves, so a newcomer
 * racing with a serial transaction is exercised hundreds of times.  Every
 * transaction keeps x == y, and x counts every transaction.
 */
#include "itm-test.h"

#define ROUNDS 200
#define ITERS  1000

static long x, y;
static long torn;
static volatile int stop;

static void step(void)
{
	long a, b;

	__transaction_atomic
	{
		x++;
		y = x;
	}
	__transaction_atomic
	{
		a = x;
		b = y;
	}
	if (a != b)
		__atomic_fetch_add(&torn, 1, __ATOMIC_RELAXED);
}

static void *short_lived(void *arg)
{
	for (int i = 0; i < ITERS; i++)
		step();
	return arg;
}

static void *long_lived(void *arg)
{
	long n = 0;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		step();
		n++;
	}
	return (void *)n;
}

int main(int argc, char **argv)
{
	int n = nthreads_arg(argc, argv);
	pthread_t lone, t[64];
	void *ret;

	CHECK(pthread_create(&lone, NULL, long_lived, NULL) == 0);
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < n; i++)
			CHECK(pthread_create(&t[i], NULL, short_lived, NULL) ==
			      0);
		for (int i = 0; i < n; i++)
			CHECK(pthread_join(t[i], NULL) == 0);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	CHECK(pthread_join(lone, &ret) == 0);
	CHECK(torn == 0);
	CHECK(x == y);
	CHECK(x == (long)ret + (long)ROUNDS * n * ITERS);
	printf("threads: %d at a time, %d rounds, beside a lone one: ok\n", n,
	       ROUNDS);
	return 0;
}
