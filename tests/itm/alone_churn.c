/* SPDX-License-Identifier: MIT */
/*
 * -fgnu-tm test, ltx only: a GCC thread that is alone most of the time,
 * and tm_* threads that come and go beside it.
 *
 * While it is the only thread that holds a descriptor, the GCC thread
 * runs its transactions uninstrumented, taking the serial token with one
 * CAS and draining nothing (tx.c, ltx_tx_begin_alone).  The main thread
 * (which runs no transaction) starts ROUNDS short-lived tm_* threads one
 * after the other; each takes a descriptor while the GCC thread may be in
 * the middle of such a transaction, moves money with TM_ATOMIC transfers
 * and audits, and exits, so that the GCC thread is alone again.  A tm_*
 * transaction that ran beside an uninstrumented one (a newcomer not
 * excluded, or a leaver whose last commit the GCC thread did not see)
 * would tear an audit or lose money.
 *
 * Usage: alone_churn [ROUNDS [OPS]]   (OPS transactions per tm_* thread)
 */
#include <stdint.h>

#include <ltx/tm.h>

#include "itm-test.h"

#define ACCOUNTS 8
#define START	 1000

static uint64_t acct[ACCOUNTS];
static uint64_t transfers; /* committed transfers, counted inside them */
static volatile int stop;
static int ops = 200;
static long torn_gcc, torn_tm;
static uint64_t gcc_expect, tm_expect;

static uint64_t take(uint64_t have, uint64_t want)
{
	return have < want ? have : want;
}

static void *gcc_worker(void *arg)
{
	unsigned long seed = 88172645463325252ul;

	(void)arg;
	while (!stop) {
		unsigned long r = next_rand(&seed);
		int from = (int)(r % ACCOUNTS), to = (int)(r / 8 % ACCOUNTS);
		uint64_t k = r / 512 % 50, sum = 0;

		if (r / 65536 % 4 == 0) {
			__transaction_atomic
			{
				for (int i = 0; i < ACCOUNTS; i++)
					sum += acct[i];
			}
			torn_gcc += sum != ACCOUNTS * START;
			continue;
		}
		__transaction_atomic
		{
			uint64_t m = take(acct[from], k);

			acct[from] -= m;
			acct[to] += m;
			transfers++;
		}
		gcc_expect++;
	}
	return NULL;
}

static void *tm_worker(void *arg)
{
	unsigned long seed = 2862933555777941757ul * ((unsigned long)arg + 1);

	for (int i = 0; i < ops; i++) {
		unsigned long r = next_rand(&seed);
		int from = (int)(r % ACCOUNTS), to = (int)(r / 8 % ACCOUNTS);
		uint64_t k = r / 512 % 50;

		if (r / 65536 % 4 == 0) {
			volatile uint64_t sum = 0;

			TM_ATOMIC {
				uint64_t s = 0;

				for (int j = 0; j < ACCOUNTS; j++)
					s += tm_lt_u64(&acct[j]);
				sum = s;
			}
			torn_tm += sum != ACCOUNTS * START;
			continue;
		}
		TM_ATOMIC {
			uint64_t a = tm_ltx_u64(&acct[from]), m = take(a, k);

			tm_st_u64(&acct[from], a - m);
			/* from == to: the store above is read back */
			tm_st_u64(&acct[to], tm_ltx_u64(&acct[to]) + m);
			tm_st_u64(&transfers, tm_ltx_u64(&transfers) + 1);
		}
		tm_expect++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 300;
	uint64_t sum = 0;
	pthread_t g, t;

	if (argc > 2)
		ops = atoi(argv[2]);
	CHECK(rounds > 0 && ops > 0);
	for (int i = 0; i < ACCOUNTS; i++)
		acct[i] = START;
	CHECK(pthread_create(&g, NULL, gcc_worker, NULL) == 0);
	/* One tm_* thread at a time: torn_tm and tm_expect have one writer,
	 * and the GCC thread is alone between two of them. */
	for (long i = 0; i < rounds; i++) {
		CHECK(pthread_create(&t, NULL, tm_worker, (void *)i) == 0);
		CHECK(pthread_join(t, NULL) == 0);
	}
	stop = 1;
	CHECK(pthread_join(g, NULL) == 0);
	for (int i = 0; i < ACCOUNTS; i++)
		sum += acct[i];
	if (torn_gcc != 0 || torn_tm != 0 || sum != ACCOUNTS * START ||
	    transfers != gcc_expect + tm_expect)
		fprintf(stderr,
			"alone_churn: %ld+%ld torn audits, total %llu "
			"(expected %d), %llu transfers (expected "
			"%llu)\n",
			torn_gcc, torn_tm, (unsigned long long)sum,
			ACCOUNTS * START, (unsigned long long)transfers,
			(unsigned long long)(gcc_expect + tm_expect));
	CHECK(torn_gcc == 0 && torn_tm == 0);
	CHECK(sum == ACCOUNTS * START);
	CHECK(transfers == gcc_expect + tm_expect);
	printf("alone_churn: %d tm_* threads beside a GCC one: ok\n", rounds);
	return 0;
}
