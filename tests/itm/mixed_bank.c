/* SPDX-License-Identifier: MIT */
/*
 * -fgnu-tm test, ltx only: a bank shared by GCC transactions and tm_*
 * transactions, with every kind of GCC transaction the ABI has.
 *
 * N GCC threads and N tm_* threads move money between ACCOUNTS accounts
 * and audit the total.  The GCC threads mix plain atomic transfers,
 * audits, relaxed transfers that go irrevocable (inline asm is unsafe, so
 * GCC switches the transaction to serial irrevocable mode before it),
 * and transfers with a nested transaction that may cancel itself (closed
 * nesting).  The tm_* threads mix TM_ATOMIC transfers and audits, and
 * transfers made irrevocable with tm_irrevocable().  Contention is high
 * (few accounts, audits that read them all), so transactions restart long
 * runs of times and reach the serial fallback (LTX_SERIAL_AFTER).
 *
 * The invariants: every audit sees the total; at the end the total is
 * unchanged and every transfer that committed is counted once.  A GCC
 * transaction that ran serially (uninstrumented, direct access) while a
 * tm_* transaction ran would break them.
 *
 * Usage: mixed_bank [N [ITERS]]   (N GCC threads and N tm_* threads)
 */
#include <stdint.h>

#include <ltx/tm.h>

#include "itm-test.h"

#define ACCOUNTS 8
#define START	 1000

static uint64_t acct[ACCOUNTS];
static uint64_t transfers; /* committed transfers, counted inside them */
static long torn[64], done[64];
static uint64_t expect[64]; /* transfers each thread committed */
static pthread_barrier_t ready;
static int iters = 20000;

/* The amount moved: all of it if the account holds less. */
static uint64_t take(uint64_t have, uint64_t want)
{
	return have < want ? have : want;
}

/* A plain GCC transfer. */
static void gcc_transfer(int from, int to, uint64_t k)
{
	__transaction_atomic
	{
		uint64_t m = take(acct[from], k);

		acct[from] -= m;
		acct[to] += m;
		transfers++;
	}
}

/* A relaxed transfer that becomes irrevocable half-way: the asm is an
 * unsafe statement, so GCC asks for serial irrevocable mode before it,
 * with the first half of the transfer already done in the transaction. */
static void gcc_irrevocable_transfer(int from, int to, uint64_t k)
{
	__transaction_relaxed
	{
		uint64_t m = take(acct[from], k);

		acct[from] -= m;
		__asm__ __volatile__("" ::: "memory");
		acct[to] += m;
		transfers++;
	}
}

/* A transfer whose second leg is a nested transaction that cancels
 * itself when cancel is set (only that leg is undone). */
static void gcc_nested_transfer(int a, int b, int c, uint64_t k, int cancel)
{
	__transaction_atomic
	{
		uint64_t m = take(acct[a], k);

		acct[a] -= m;
		acct[b] += m;
		transfers++;
		__transaction_atomic
		{
			uint64_t n = take(acct[b], k);

			acct[b] -= n;
			acct[c] += n;
			transfers++;
			if (cancel)
				__transaction_cancel;
		}
	}
}

static uint64_t gcc_audit(void)
{
	uint64_t sum = 0;

	__transaction_atomic
	{
		for (int i = 0; i < ACCOUNTS; i++)
			sum += acct[i];
	}
	return sum;
}

static void *gcc_worker(void *arg)
{
	long id = (long)arg;
	unsigned long seed = 88172645463325252ul + (unsigned long)id * 7919;

	pthread_barrier_wait(&ready);
	for (int i = 0; i < iters; i++) {
		unsigned long r = next_rand(&seed);
		int from = (int)(r % ACCOUNTS), to = (int)(r / 8 % ACCOUNTS);
		int third = (int)(r / 64 % ACCOUNTS);
		uint64_t k = r / 512 % 50;

		switch (r / 65536 % 8) {
		case 0:
		case 1:
		case 2:
			gcc_transfer(from, to, k);
			expect[id]++;
			break;
		case 3:
		case 4:
			torn[id] += gcc_audit() != ACCOUNTS * START;
			break;
		case 5:
			gcc_irrevocable_transfer(from, to, k);
			expect[id]++;
			break;
		default:
			gcc_nested_transfer(from, to, third, k, (r >> 40) & 1);
			expect[id] += 2 - ((r >> 40) & 1);
			break;
		}
		done[id]++;
	}
	return NULL;
}

static void *tm_worker(void *arg)
{
	long id = (long)arg;
	unsigned long seed = 2862933555777941757ul + (unsigned long)id * 104729;

	pthread_barrier_wait(&ready);
	for (int i = 0; i < iters; i++) {
		unsigned long r = next_rand(&seed);
		int from = (int)(r % ACCOUNTS), to = (int)(r / 8 % ACCOUNTS);
		uint64_t k = r / 512 % 50;
		int kind = (int)(r / 65536 % 8);

		if (kind < 3) {
			volatile uint64_t sum = 0;

			TM_ATOMIC {
				uint64_t s = 0;

				for (int j = 0; j < ACCOUNTS; j++)
					s += tm_lt_u64(&acct[j]);
				sum = s;
			}
			torn[id] += sum != ACCOUNTS * START;
		} else {
			TM_ATOMIC {
				uint64_t a, m;

				if (kind == 7)
					(void)tm_irrevocable();
				a = tm_ltx_u64(&acct[from]);
				m = take(a, k);
				tm_st_u64(&acct[from], a - m);
				/* from == to: the store above is read back */
				tm_st_u64(&acct[to], tm_ltx_u64(&acct[to]) + m);
				tm_st_u64(&transfers,
					  tm_ltx_u64(&transfers) + 1);
			}
			expect[id]++;
		}
		done[id]++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? nthreads_arg(argc, argv) : 1;
	uint64_t sum = 0, want = 0;
	long bad = 0;
	pthread_t t[64];

	if (argc > 2)
		iters = atoi(argv[2]);
	CHECK(n <= 32 && iters > 0);
	for (int i = 0; i < ACCOUNTS; i++)
		acct[i] = START;
	CHECK(pthread_barrier_init(&ready, NULL, 2u * (unsigned)n) == 0);
	for (long i = 0; i < n; i++) {
		CHECK(pthread_create(&t[i], NULL, tm_worker, (void *)i) == 0);
		CHECK(pthread_create(&t[n + i], NULL, gcc_worker,
				     (void *)(n + i)) == 0);
	}
	for (int i = 0; i < 2 * n; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	for (int i = 0; i < 2 * n; i++) {
		bad += torn[i];
		want += expect[i];
		CHECK(done[i] == iters);
	}
	for (int i = 0; i < ACCOUNTS; i++)
		sum += acct[i];
	if (bad != 0 || sum != ACCOUNTS * START || transfers != want)
		fprintf(stderr,
			"mixed_bank: %ld torn audits, total %llu "
			"(expected %d), %llu transfers (expected %llu)\n",
			bad, (unsigned long long)sum, ACCOUNTS * START,
			(unsigned long long)transfers,
			(unsigned long long)want);
	CHECK(bad == 0);
	CHECK(sum == ACCOUNTS * START);
	CHECK(transfers == want);
	printf("mixed_bank: %d GCC and %d tm_* threads: ok\n", n, n);
	return 0;
}
