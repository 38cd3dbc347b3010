/* SPDX-License-Identifier: MIT */
/* -fgnu-tm test: nested transactions, __transaction_cancel inner and outer. */
#include "itm-test.h"

#define ITERS	 5000
#define ACCOUNTS 8

static long balance[ACCOUNTS], ops[64], flat;

/* Single-threaded semantics, checked before the threads run. */
static void check_semantics(void)
{
	static long a, b, c;
	long local = 5;
	long *p = &local;
	char *mem = NULL;

	__transaction_atomic
	{
		a = 1;
		__transaction_atomic
		{
			b = 1;
			__transaction_cancel;
		}
		c = 1;
	}
	CHECK(a == 1 && b == 0 && c == 1); /* only the inner one undone */

	a = b = c = 0;
	__transaction_atomic [[outer]]
	{
		a = 1;
		__transaction_atomic
		{
			b = 1;
			__transaction_cancel [[outer]];
		}
		c = 1;
	}
	CHECK(a == 0 && b == 0 && c == 0); /* all undone */

	__transaction_atomic
	{
		*p = 7;
		mem = malloc(16);
		__transaction_cancel;
	}
	CHECK(local == 5 && mem == NULL); /* thread-private memory too */

	__transaction_atomic
	{
		__transaction_atomic
		{
			flat++;
		}
		flat++;
	}
	CHECK(flat == 2);
	flat = 0;
}

/* Move v from x to y unless x would go negative (the inner one cancels). */
static void *worker(void *arg)
{
	long id = (long)arg;
	unsigned long seed = 99991 + (unsigned long)id;

	for (int i = 0; i < ITERS; i++) {
		unsigned long r = next_rand(&seed);
		int x = (int)(r % ACCOUNTS), y = (int)((r >> 8) % ACCOUNTS);
		long v = (long)((r >> 16) % 50);

		__transaction_atomic
		{
			ops[id]++;
			__transaction_atomic
			{
				balance[x] -= v;
				balance[y] += v;
				if (balance[x] < 0)
					__transaction_cancel;
			}
		}
		__transaction_atomic
		{
			flat++;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = nthreads_arg(argc, argv);
	long sum = 0, nops = 0;

	check_semantics();
	for (int i = 0; i < ACCOUNTS; i++)
		balance[i] = 100;
	run_threads(n, worker);
	for (int i = 0; i < ACCOUNTS; i++) {
		CHECK(balance[i] >= 0);
		sum += balance[i];
	}
	for (int i = 0; i < n; i++)
		nops += ops[i];
	CHECK(sum == 100 * ACCOUNTS);
	CHECK(nops == (long)n * ITERS && flat == (long)n * ITERS);
	printf("nested: %d threads: ok\n", n);
	return 0;
}
