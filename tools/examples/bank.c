/* SPDX-License-Identifier: MIT */
/*
 * Bank transfers with tm_*: threads move money between accounts while an
 * auditor sums all balances in read-only transactions.  The total never
 * changes; the auditor checks it inside every transaction that commits.
 *
 * usage: bank [THREADS [TRANSFERS_PER_THREAD [ACCOUNTS]]]
 */
#include <ltx/tm.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define INITIAL 1000

struct account {
	long balance;
	char pad[64 - sizeof(long)]; /* one line per account */
};

static struct account *accounts;
static long naccounts = 64, nthreads = 2, ntransfers = 100000;
static volatile int done;

static void transfer(long from, long to, long amount)
{
	do {
		long a = (long)tm_ltx(&accounts[from].balance);
		long b = (long)tm_ltx(&accounts[to].balance);

		tm_st(&accounts[from].balance, (tm_word_t)(a - amount));
		tm_st(&accounts[to].balance, (tm_word_t)(b + amount));
	} while (!tm_commit());
}

/* Sum every balance in one read-only transaction. */
static long audit(void)
{
	for (;;) {
		long sum = 0;

		for (long i = 0; i < naccounts; i++)
			sum += (long)tm_lt(&accounts[i].balance);
		if (tm_commit())
			return sum;
	}
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;

	for (long i = 0; i < ntransfers; i++) {
		long from = rand_r(&seed) % naccounts;
		long to = rand_r(&seed) % naccounts;

		if (from != to)
			transfer(from, to, rand_r(&seed) % 100);
	}
	return NULL;
}

static void *auditor(void *arg)
{
	long *bad = arg;

	while (!done)
		if (audit() != naccounts * INITIAL)
			(*bad)++;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[256], a;
	long bad = 0, total;

	if (argc > 1)
		nthreads = strtol(argv[1], NULL, 10);
	if (argc > 2)
		ntransfers = strtol(argv[2], NULL, 10);
	if (argc > 3)
		naccounts = strtol(argv[3], NULL, 10);
	if (nthreads < 1 || nthreads > 256 || ntransfers < 0 || naccounts < 2 ||
	    naccounts > 1000000) {
		fprintf(stderr, "usage: bank [THREADS(1-256) [TRANSFERS "
				"[ACCOUNTS(2-1e6)]]]\n");
		return 2;
	}
	accounts = aligned_alloc(64, (size_t)naccounts * sizeof(*accounts));
	for (long i = 0; i < naccounts; i++)
		accounts[i].balance = INITIAL;
	pthread_create(&a, NULL, auditor, &bad);
	for (long i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	for (long i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	done = 1;
	pthread_join(a, NULL);
	total = audit();
	printf("bank: %ld threads x %ld transfers over %ld accounts: total "
	       "%ld (expected %ld), %ld inconsistent audits\n",
	       nthreads, ntransfers, naccounts, total, naccounts * INITIAL,
	       bad);
	return total == naccounts * INITIAL && bad == 0 ? 0 : 1;
}
