/* SPDX-License-Identifier: MIT */
/* -fgnu-tm test: irrevocable printf inside __transaction_relaxed. */
#include <stdio.h>
#include <string.h>

#include "itm-test.h"

#define ITERS 2000

/* Declared by libitm.h; the runtime under test provides it. */
extern int _ITM_inTransaction(void);

static long count, seen_irrevocable, printed, other;
static FILE *out;

static void *worker(void *arg)
{
	for (int i = 0; i < ITERS; i++) {
		/* Every other transaction makes an unsafe call: it turns
		 * irrevocable there (in place, or by restarting), runs alone
		 * and prints its line exactly once. */
		__transaction_relaxed
		{
			long c = ++count;

			if (c % 2 == 0) {
				fprintf(out, "%ld %ld\n", (long)arg, c);
				printed++;
				if (_ITM_inTransaction() == 2)
					seen_irrevocable++;
			}
		}
		__transaction_atomic
		{
			other++;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = nthreads_arg(argc, argv);
	char line[64];
	long lines = 0, last = 0, t, c;

	out = tmpfile();
	CHECK(out != NULL);
	run_threads(n, worker);
	CHECK(count == (long)n * ITERS && other == count);
	CHECK(printed == count / 2 && seen_irrevocable == printed);
	rewind(out);
	while (fgets(line, sizeof(line), out) != NULL) {
		CHECK(sscanf(line, "%ld %ld", &t, &c) == 2);
		CHECK(t >= 0 && t < n);
		CHECK(c == last + 2); /* in order, none twice, none lost */
		last = c;
		lines++;
	}
	CHECK(lines == printed);
	printf("relaxed: %d threads, %ld lines: ok\n", n, lines);
	return 0;
}
