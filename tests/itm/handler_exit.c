/* SPDX-License-Identifier: MIT */
/* -fgnu-tm test: signal handlers with transactions while threads exit. */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "itm-signal.h"

#define ROUNDS	   1000
#define PER_THREAD 20

/*
 * SIGALRM every 100 microseconds while short-lived threads run a few GCC
 * transactions and exit, round after round; its handler runs a GCC
 * transaction too, on data of its own.  A signal that lands on a thread
 * that is exiting, after ltx gave its descriptor back (its thread-specific
 * destructor), must not run its handler there: the handler's transaction
 * would make a descriptor and the GCC front end's state with malloc
 * inside the handler, and wait for ever for the heap's lock when the
 * signal had interrupted libc's own teardown (seen: 1 run in ~500 of
 * handler_tx).  ltx blocks the thread's signals from that point, so the
 * kernel gives them to another thread.  Checks: no hang (a watchdog), and
 * every transaction's effect exactly once.
 */
static volatile sig_atomic_t ticks;
static long pair[2], done;
static struct {
	long pair[2];
	long done;
} __attribute__((aligned(64))) h;

static void on_alarm(int sig)
{
	(void)sig;
	__transaction_atomic
	{
		h.pair[0]++;
		h.pair[1] = h.pair[0];
		h.done++;
	}
	/* Handlers run at once on several threads: one atomic step. */
	__atomic_fetch_add(&ticks, 1, __ATOMIC_RELAXED);
}

static void *worker(void *arg)
{
	(void)arg;
	mask_sigalrm(1);
	for (int i = 0; i < PER_THREAD; i++) {
		__transaction_atomic
		{
			pair[0]++;
			pair[1] = pair[0];
			done++;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = nthreads_arg(argc, argv);
	pthread_t t[64];

	start_watchdog("handler_exit", 30);
	/* The main thread, which only creates and joins, never takes it. */
	start_alarm(on_alarm, 100);
	for (int r = 0; r < ROUNDS; r++) {
		for (long i = 0; i < n; i++)
			CHECK(pthread_create(&t[i], NULL, worker, NULL) == 0);
		for (int i = 0; i < n; i++)
			CHECK(pthread_join(t[i], NULL) == 0);
	}
	stop_alarm();

	CHECK(done == (long)ROUNDS * n * PER_THREAD);
	CHECK(pair[0] == done && pair[1] == done);
	CHECK(h.pair[0] == h.done && h.pair[1] == h.done);
	CHECK(h.done == ticks);
	printf("handler_exit: %d threads x %d rounds: ok\n", n, ROUNDS);
	fprintf(stderr, "handler_exit: %ld handler transactions\n",
		(long)ticks);
	return 0;
}
