/* SPDX-License-Identifier: MIT */
/*
 * -fgnu-tm test (ltx only): a signal whose handler runs a GCC transaction,
 * landing in a system call made inside the allocator, called by libltx in
 * a transaction that holds the serial token exclusively.
 *
 * A signal that lands while its thread holds the token waits until the
 * token is given back: a transaction of its handler would wait for the
 * token for ever, held by the thread it interrupted (ltx(7), Signals).
 * The exception, a signal that interrupts a system call of the program,
 * must not cover the calls ltx makes for itself.  It did for the
 * allocator's: a lock that the allocator waits for in the kernel (a
 * contended futex in glibc's malloc), interrupted there, ran the handler
 * at once, whose transaction waited for ever.  Here the wait happens every
 * time: the program's own realloc or malloc, which libltx calls, sleeps in
 * nanosleep while another thread sends the signal.
 *
 * The main thread is the only one with transactions, so its transaction,
 * which may cancel, runs serially with an undo log (ltx's ITM_SERIAL
 * mode), holding the token exclusively.  It allocates a block (malloc,
 * made by libltx's _ITM_malloc) and its stores fill the undo log (realloc,
 * made by libltx); the argument says which of the two sleeps.  The other
 * thread runs no transaction: it sends SIGUSR1 once the main thread sleeps
 * there.  Passes if the handler runs once, after the serial transaction
 * (it sees its whole effect), and its own transaction commits.  A hang is
 * reported by a watchdog.  For LTX_ITM_SERIAL=auto (the default): with
 * never, no transaction runs serially (nothing waits for the token).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "itm-test.h"

#define WORDS 1024 /* undo records: 24 bytes each, past the first 4 KiB */

static long words[WORDS];
static long handler_word __attribute__((aligned(64)));

static pthread_t main_thread;
static volatile sig_atomic_t handled;
static volatile long handler_saw = -1;
static volatile int armed, in_sleep, signal_sent;
/* Never set; not static, so that the cancel below stays in the code. */
int log_wait_cancel;

void *__libc_realloc(void *p, size_t size);
void *__libc_malloc(size_t size);

/* Which call sleeps: realloc (the undo log grows) or malloc (the
 * transaction's own, which libltx makes for it). */
static enum { IN_REALLOC, IN_MALLOC } where;
static void *block;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* The main thread's first call of the kind chosen while armed sleeps in a
 * system call, as on a contended lock of the allocator, where the other
 * thread's signal finds it. */
static void maybe_sleep(int kind)
{
	if (armed && kind == (int)where && !in_sleep &&
	    pthread_equal(pthread_self(), main_thread)) {
		struct timespec ts = { 2, 0 };

		in_sleep = 1;
		nanosleep(&ts, NULL); /* the signal ends it (EINTR) */
	}
}

/* Stand in for libc's (libltx's calls come here). */
void *realloc(void *p, size_t size)
{
	maybe_sleep(IN_REALLOC);
	return __libc_realloc(p, size);
}

void *malloc(size_t size)
{
	maybe_sleep(IN_MALLOC);
	return __libc_malloc(size);
}

static void on_usr1(int sig)
{
	(void)sig;
	/* Where the signal waited: after the transaction, all of it. */
	handler_saw = words[WORDS - 1];
	__transaction_atomic
	{
		handler_word++;
	}
	handled++;
}

/* Sends the signal once the main thread sleeps in realloc (3 s at most),
 * then watches for a hang. */
static void *other(void *arg)
{
	static const char msg[] = "log_wait: no progress (the handler's "
				  "transaction waits for the token its own "
				  "thread holds)\n";
	struct timespec start, now;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		if (in_sleep) {
			sleep_ms(20); /* into nanosleep's system call */
			pthread_kill(main_thread, SIGUSR1);
			signal_sent = 1;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 3)
			return NULL; /* no sleep seen: main reports it */
		sleep_ms(1);
	}
	sleep(30);
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(2);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	pthread_t t;

	if (argc != 2 || (strcmp(argv[1], "realloc") != 0 &&
			  strcmp(argv[1], "malloc") != 0)) {
		fprintf(stderr, "usage: log_wait realloc|malloc\n");
		return 2;
	}
	where = strcmp(argv[1], "malloc") == 0 ? IN_MALLOC : IN_REALLOC;
	main_thread = pthread_self();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1; /* no SA_RESTART: nanosleep sees EINTR */
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	/* The thread's transaction state made first (its making calls
	 * realloc too, with signals blocked). */
	__transaction_atomic
	{
		handler_word += 0;
	}
	CHECK(pthread_create(&t, NULL, other, NULL) == 0);
	armed = 1;
	__transaction_atomic
	{
		block = malloc(64);
		for (int i = 0; i < WORDS; i++)
			words[i]++;
		/* Never taken: it makes the transaction one that may
		 * cancel, which runs with an undo log. */
		if (log_wait_cancel)
			__transaction_cancel;
	}
	armed = 0;
	if (!in_sleep) {
		fprintf(stderr, "log_wait: the transaction did not call %s\n",
			argv[1]);
		return 1;
	}
	CHECK(block != NULL);
	free(block);
	while (!signal_sent || handled == 0)
		sleep_ms(1);
	for (int i = 0; i < WORDS; i++)
		if (words[i] != 1) {
			fprintf(stderr, "log_wait: word %d is %ld (want 1)\n",
				i, words[i]);
			return 1;
		}
	if (handled != 1 || handler_word != 1 || handler_saw != 1) {
		fprintf(stderr,
			"log_wait: handled %d, the handler's word %ld, the "
			"last word seen by the handler %ld (want 1, 1, 1)\n",
			(int)handled, handler_word, handler_saw);
		return 1;
	}
	printf("log_wait: ok\n");
	return 0;
}
