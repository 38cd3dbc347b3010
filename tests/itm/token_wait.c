/* SPDX-License-Identifier: MIT */
/*
 * -fgnu-tm test (ltx only): a signal whose handler runs a GCC transaction,
 * landing in a system call that ltx makes while its thread holds the
 * serial token exclusively, waiting for another thread's transaction to
 * end.
 *
 * A signal that lands while its thread holds the token waits until the
 * token is given back, since a transaction of its handler would wait for
 * the token for ever, held by the thread it interrupted (ltx(7),
 * Signals).  The exception is a signal that interrupts a system call of
 * the program, which must see its EINTR at once.  ltx took that
 * exception for its own system calls too: a serial transaction waiting
 * for the other thread's transaction (sched_yield in ltx's wait loop),
 * interrupted there, ran the handler at once, whose transaction waited
 * for ever.  In a real program the signal must land on the syscall
 * instruction itself; here it lands in a system call every time: the
 * program's own sched_yield, which libltx calls, sleeps in nanosleep while
 * the other thread sends the signal.
 *
 * The main thread's relaxed transaction calls a function that is not
 * transaction-safe, so it goes serial and irrevocable: ltx makes it run
 * alone, waiting for the other thread's transaction, which stays open
 * (in a transaction_pure wait) until the signal has been sent.  Passes if
 * the handler runs once, after the serial transaction (it sees all of
 * that transaction's effect), and every transaction commits once.  A hang is
 * reported by a watchdog thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "itm-test.h"

static long handler_word __attribute__((aligned(64)));
static long main_word __attribute__((aligned(64)));
static long other_word __attribute__((aligned(64)));

static pthread_t main_thread;
static volatile sig_atomic_t handled;
static volatile long main_seen = -1;
static volatile int armed, other_started, in_sleep, signal_sent;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * Stands in for libc's sched_yield (libltx's calls come here).  The
 * main thread's first call while armed (its serial transaction waiting
 * for the other thread's) sleeps in a system call, where the other
 * thread's signal finds it.
 */
int sched_yield(void)
{
	if (armed && !in_sleep && pthread_equal(pthread_self(), main_thread)) {
		struct timespec ts = { 2, 0 };

		in_sleep = 1;
		nanosleep(&ts, NULL); /* the signal ends it (EINTR) */
	}
	return (int)syscall(SYS_sched_yield);
}

static void on_usr1(int sig)
{
	(void)sig;
	/* After the serial transaction: its whole effect is there. */
	main_seen = main_word;
	__transaction_atomic
	{
		handler_word++;
	}
	handled++;
}

/* In the other thread's transaction: hold it open until the main
 * thread's wait for it has been interrupted (3 s at most). */
__attribute__((transaction_pure)) static void hold_open(void)
{
	struct timespec start, now;

	other_started = 1;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		if (in_sleep && !signal_sent) {
			sleep_ms(20); /* into nanosleep's system call */
			pthread_kill(main_thread, SIGUSR1);
			signal_sent = 1;
			sleep_ms(50);
			return;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 3)
			return; /* no wait seen: main reports it */
	}
}

static void *other(void *arg)
{
	(void)arg;
	__transaction_atomic
	{
		other_word++;
		hold_open();
	}
	return NULL;
}

/* Not transaction-safe: the transaction that calls it goes serial. */
__attribute__((noinline)) static void unsafe_call(void)
{
	__asm__ volatile("" ::: "memory");
}

static void *watchdog(void *arg)
{
	static const char msg[] = "token_wait: no progress (the handler's "
				  "transaction waits for the token its own "
				  "thread holds)\n";

	(void)arg;
	sleep(30);
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(2);
}

int main(void)
{
	struct sigaction sa;
	pthread_t t, w;

	main_thread = pthread_self();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1; /* no SA_RESTART: nanosleep sees EINTR */
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	CHECK(pthread_create(&w, NULL, watchdog, NULL) == 0);
	/* This thread is known to the runtime before the other begins, so
	 * that the other's transaction is not one of a thread alone. */
	__transaction_atomic
	{
		main_word++;
	}
	CHECK(pthread_create(&t, NULL, other, NULL) == 0);
	while (!other_started)
		sleep_ms(1);
	armed = 1;
	__transaction_relaxed
	{
		main_word++;
		unsafe_call();
		main_word++;
	}
	armed = 0;
	CHECK(pthread_join(t, NULL) == 0);
	if (!in_sleep || !signal_sent) {
		fprintf(stderr, "token_wait: the serial transaction did not "
				"wait in sched_yield for the other thread\n");
		return 1;
	}
	if (handled != 1 || main_seen != 3 || handler_word != 1 ||
	    main_word != 3 || other_word != 1) {
		fprintf(stderr,
			"token_wait: handled %d, the main word seen by the "
			"handler %ld, words %ld %ld %ld (want 1, 3, 1 3 1)\n",
			(int)handled, main_seen, handler_word, main_word,
			other_word);
		return 1;
	}
	printf("token_wait: ok\n");
	return 0;
}
