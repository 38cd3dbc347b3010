/* SPDX-License-Identifier: MIT */
/* -fgnu-tm test: a timer signal keeps landing in transactions. */
#include <signal.h>
#include <string.h>
#include <sys/time.h>

#include "itm-test.h"

#define ITERS 20000

/*
 * SIGALRM every 200 microseconds while the threads run transactions.
 * Under ltx each signal dooms the transaction it lands in, which then
 * restarts; the application's handler must still run once per signal, and
 * every transaction's effect must happen exactly once.
 */
static volatile sig_atomic_t ticks;
static long pair[2], done;

static void on_alarm(int sig)
{
	(void)sig;
	ticks++;
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		long a, b;

		__transaction_atomic
		{
			pair[0]++;
			pair[1] = pair[0];
			done++;
		}
		__transaction_atomic
		{
			a = pair[0];
			b = pair[1];
		}
		CHECK(a == b);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = nthreads_arg(argc, argv);
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	struct itimerval off;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
	CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
	run_threads(n, worker);
	memset(&off, 0, sizeof(off));
	CHECK(setitimer(ITIMER_REAL, &off, NULL) == 0);
	CHECK(done == (long)n * ITERS);
	CHECK(pair[0] == done && pair[1] == done);
	CHECK(ticks > 0);
	printf("signals: %d threads: ok\n", n);
	return 0;
}
