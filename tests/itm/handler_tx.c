/* SPDX-License-Identifier: MIT */
/* -fgnu-tm test: a signal handler runs GCC transactions of its own. */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "itm-signal.h"

/* Each thread runs until the handler ran TICKS times, at most MAX_ITERS. */
#define TICKS	  300
#define MAX_ITERS 20000000

/*
 * SIGALRM every 200 microseconds, taken by the threads while they run
 * transactions, and its handler runs a GCC transaction too, on data of its
 * own.  ltx only: under libitm a handler's transaction waits for ever when
 * its thread is in a serial transaction (one thread, the default).  Under
 * ltx a signal that lands while its thread holds the serial token (a
 * thread alone runs its GCC transactions uninstrumented, holding it; the
 * serial fallback holds it too) has its handler run when the token is
 * given back; in an instrumented transaction the signal dooms it and the
 * handler's transaction runs on the thread's handler descriptor.  Every
 * transaction's effect happens exactly once, the handler's included, and
 * nothing waits for ever: a watchdog (SIGUSR2 from a timer, no
 * transaction in its handler) ends a run that hangs.  With "shared" after
 * the thread count the handler updates the workers' own data instead: a
 * signal that lands while its thread writes that line back at a commit
 * (past the commit point, when it can no longer be doomed) must wait for
 * the write-back to end, or its handler's transaction would wait for ever
 * for the line (see ltx(7), Signals).  With "bystander", the workers run
 * no transaction at all, only a loop: each handler's transaction runs on
 * a spare descriptor it borrows (their threads have none), after the main
 * thread's one transaction has made the spares.
 */
static volatile sig_atomic_t ticks;
static long pair[2], done;
/* The handler's, on a line of their own (nothing else on it). */
static struct {
	long pair[2];
	long done;
} __attribute__((aligned(64))) h;
#define hpair h.pair
#define hdone h.done
static char h_pad[64] __attribute__((aligned(64), used));
static int shared, bystander;
/* The workers' transactions, all threads together (shared runs). */
static long iters;

static void on_alarm(int sig)
{
	(void)sig;
	if (shared) {
		__transaction_atomic
		{
			pair[0]++;
			pair[1] = pair[0];
			done++;
		}
	} else {
		__transaction_atomic
		{
			hpair[0]++;
			hpair[1] = hpair[0];
			hdone++;
		}
	}
	/* One read-modify-write: handlers of this signal run at once on
	 * several threads (each blocks it on its own thread only), and a
	 * plain ticks++ lost a count (seen: done one more than iters +
	 * ticks, 1 run in ~500, while a second atomic counter agreed). */
	__atomic_fetch_add(&ticks, 1, __ATOMIC_RELAXED);
}

static void *worker(void *arg)
{
	long i;

	(void)arg;
	/* The workers take the signal, not the main thread that waits for
	 * them (which blocks it: the kernel would pick that idle thread). */
	mask_sigalrm(1);

	if (bystander) {
		/* No transaction and no libc call: only the handler's. */
		while (ticks < TICKS)
			;
		return NULL;
	}
	for (i = 0; i < MAX_ITERS && ticks < TICKS; i++) {
		__transaction_atomic
		{
			pair[0]++;
			pair[1] = pair[0];
			done++;
		}
	}
	__atomic_fetch_add(&iters, i, __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = nthreads_arg(argc, argv);

	shared = argc > 2 && strcmp(argv[2], "shared") == 0;
	bystander = argc > 2 && strcmp(argv[2], "bystander") == 0;
	start_watchdog("handler_tx", 60);
	if (bystander) {
		/* The process has used ltx: the spares exist. */
		__transaction_atomic
		{
			pair[0]++;
			pair[1] = pair[0];
			done++;
		}
		iters = 1;
	}
	start_alarm(on_alarm, 200);
	run_threads(n, worker);
	stop_alarm();

	CHECK(pair[0] == done && pair[1] == done);
	CHECK(hpair[0] == hdone && hpair[1] == hdone);
	/* Each transaction's effect exactly once, the handler's too. */
	if (shared) {
		CHECK(hdone == 0);
		CHECK(done == iters + ticks);
	} else {
		CHECK(hdone == ticks);
		CHECK(done == iters);
	}
	/* The signals came, each ran its handler once. */
	CHECK(ticks >= TICKS);
	printf("handler_tx: %d threads%s: ok\n", n,
	       shared	   ? ", shared"
	       : bystander ? ", bystander"
			   : "");
	fprintf(stderr, "handler_tx: %ld handler transactions\n", (long)ticks);
	return 0;
}
