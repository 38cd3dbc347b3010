/* SPDX-License-Identifier: MIT */
/*
 * -fgnu-tm test, ltx only: GCC transactions and tm_* transactions on the
 * same data at the same time.  N threads move amounts between two
 * accounts with __transaction_atomic, N others with TM_ATOMIC and
 * tm_ltx/tm_st; every transaction also counts itself and checks that the
 * sum is constant.  A GCC transaction that ran alone, uninstrumented,
 * while tm_* transactions ran would lose updates or see a torn sum.
 *
 * Usage: mixed [N]   (N GCC threads and N tm_* threads; default 1)
 */
#include <stdint.h>

#include <ltx/tm.h>

#include "itm-test.h"

#define ITERS 50000
#define TOTAL 1000000

static uint64_t acct[2] = { TOTAL, 0 };
static uint64_t count;
static long torn[64];
static pthread_barrier_t ready;

static void *gcc_worker(void *arg)
{
	long id = (long)arg;
	unsigned long seed = 88172645463325252ul + (unsigned long)id;

	pthread_barrier_wait(&ready);
	for (int i = 0; i < ITERS; i++) {
		uint64_t k = next_rand(&seed) % 100, sum;

		__transaction_atomic
		{
			int from = acct[0] >= k ? 0 : 1;

			acct[from] -= k;
			acct[1 - from] += k;
			count++;
			sum = acct[0] + acct[1];
		}
		torn[id] += sum != TOTAL;
	}
	return NULL;
}

static void *tm_worker(void *arg)
{
	long id = (long)arg;
	unsigned long seed = 88172645463325252ul + (unsigned long)id;

	/* A first transaction before the start: this thread holds an ltx
	 * descriptor when the GCC transactions run. */
	TM_ATOMIC {
		(void)tm_lt_u64(&count);
	}
	pthread_barrier_wait(&ready);
	for (int i = 0; i < ITERS; i++) {
		uint64_t k = next_rand(&seed) % 100;
		volatile uint64_t sum = 0;

		TM_ATOMIC {
			uint64_t a = tm_ltx_u64(&acct[0]);
			uint64_t b = tm_ltx_u64(&acct[1]);

			if (a >= k) {
				a -= k;
				b += k;
			} else {
				b -= k;
				a += k;
			}
			tm_st_u64(&acct[0], a);
			tm_st_u64(&acct[1], b);
			tm_st_u64(&count, tm_ltx_u64(&count) + 1);
			sum = a + b;
		}
		torn[id] += sum != TOTAL;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? nthreads_arg(argc, argv) : 1;
	pthread_t t[64];
	long bad = 0;

	CHECK(n <= 32);
	CHECK(pthread_barrier_init(&ready, NULL, 2u * (unsigned)n) == 0);
	for (long i = 0; i < n; i++) {
		CHECK(pthread_create(&t[i], NULL, tm_worker, (void *)i) == 0);
		CHECK(pthread_create(&t[n + i], NULL, gcc_worker,
				     (void *)(n + i)) == 0);
	}
	for (int i = 0; i < 2 * n; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	for (int i = 0; i < 2 * n; i++)
		bad += torn[i];
	CHECK(bad == 0);
	CHECK(acct[0] + acct[1] == TOTAL);
	CHECK(count == 2u * (uint64_t)n * ITERS);
	printf("mixed: %d GCC and %d tm_* threads, %llu transactions: ok\n", n,
	       n, (unsigned long long)count);
	return 0;
}
