/* SPDX-License-Identifier: MIT */
/*
 * -fgnu-tm test (ltx only): a signal handler that jumps out of a system
 * call ltx makes for itself must not leave that call marked as ltx's.
 *
 * ltx marks the system calls it makes for itself (its waits, the
 * allocator's when ltx calls it: rt/signal.h, ltx_own_syscall), so that a
 * signal landing there while the thread holds the serial token waits for
 * the token's release; one landing in a system call of the program runs
 * its handler at once, as the program expects (ltx(7), Signals).  A
 * handler that siglongjmps out of a marked call (the thread did not hold
 * the token, so the handler ran) left the mark set for good: every later
 * signal in the program's own system calls, in a transaction that holds
 * the token, then waited for the transaction's end.
 *
 * First the main thread's instrumented transaction allocates; the
 * program's malloc, which libltx's _ITM_malloc calls, sleeps in nanosleep,
 * and the other thread's SIGUSR1 finds it there; the handler siglongjmps
 * out of the transaction.  Then the main thread's relaxed transaction goes
 * serial (a call that is not transaction-safe) and sleeps in nanosleep
 * itself; the other thread's second SIGUSR1 must run the handler at once,
 * inside that transaction.  A hang is reported by a watchdog.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "itm-test.h"

void *__libc_malloc(size_t size);

static long shared_word __attribute__((aligned(64)));
static long other_word __attribute__((aligned(64)));

static pthread_t main_thread;
static sigjmp_buf jump_back;
static volatile int phase; /* 1: jump out of malloc; 2: the serial sleep */
static volatile int armed, in_sleep, signal_sent, in_serial;
static volatile int jumped, ran_in_serial = -1;
static void *block;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Stands in for libc's (libltx's calls come here): the main thread's
 * first call while armed sleeps in a system call. */
void *malloc(size_t size)
{
	if (armed && !in_sleep && pthread_equal(pthread_self(), main_thread)) {
		struct timespec ts = { 2, 0 };

		in_sleep = 1;
		nanosleep(&ts, NULL); /* the signal's handler jumps out */
	}
	return __libc_malloc(size);
}

static void on_usr1(int sig)
{
	(void)sig;
	if (phase == 1) {
		jumped = 1;
		siglongjmp(jump_back, 1);
	}
	ran_in_serial = in_serial;
}

/* Not transaction-safe: the transaction that calls it goes serial. */
__attribute__((noinline)) static void unsafe_call(void)
{
	__asm__ volatile("" ::: "memory");
}

/* The program's own system call, in the serial transaction. */
__attribute__((transaction_pure)) static void serial_sleep(void)
{
	struct timespec ts = { 2, 0 };

	in_serial = 1;
	nanosleep(&ts, NULL); /* the signal ends it (EINTR) */
	in_serial = 0;
}

/* Has a descriptor (so that the main thread's transactions are not a
 * thread's alone: instrumented), sends both signals, watches for a hang. */
static void *other(void *arg)
{
	static const char msg[] = "own_jump: no progress\n";
	struct timespec start, now;

	(void)arg;
	__transaction_atomic
	{
		other_word++;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (int sent = 0; sent < 2;) {
		if ((sent == 0 && in_sleep) || (sent == 1 && in_serial)) {
			sleep_ms(20); /* into nanosleep's system call */
			pthread_kill(main_thread, SIGUSR1);
			sent++;
			signal_sent = sent;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 30) {
			(void)!write(2, msg, sizeof(msg) - 1);
			_exit(2);
		}
		sleep_ms(1);
	}
	return NULL;
}

/* Phase 2: the program's own system call in a serial transaction. */
__attribute__((noinline)) static void serial_phase(void)
{
	__transaction_relaxed
	{
		shared_word++;
		unsafe_call();
		serial_sleep();
	}
}

/* The main thread's descriptor, before the other thread begins. */
__attribute__((noinline)) static void make_descriptor(void)
{
	__transaction_atomic
	{
		shared_word += 0;
	}
}

/* Phase 1 (the transactions are out of main: GCC 12 crashes compiling a
 * transaction in the function that calls sigsetjmp). */
__attribute__((noinline)) static void allocate(void)
{
	armed = 1;
	__transaction_atomic
	{
		block = malloc(64);
		shared_word++;
	}
}

int main(void)
{
	struct sigaction sa;
	pthread_t t;

	main_thread = pthread_self();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1; /* no SA_RESTART: nanosleep sees EINTR */
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	make_descriptor();
	CHECK(pthread_create(&t, NULL, other, NULL) == 0);
	while (__atomic_load_n(&other_word, __ATOMIC_ACQUIRE) == 0)
		sleep_ms(1);
	phase = 1;
	if (sigsetjmp(jump_back, 1) == 0)
		allocate();
	armed = 0;
	if (!jumped) {
		fprintf(stderr, "own_jump: the handler did not jump out of "
				"the transaction's malloc\n");
		return 1;
	}
	phase = 2;
	serial_phase();
	CHECK(pthread_join(t, NULL) == 0);
	if (ran_in_serial != 1 || shared_word != 1) {
		fprintf(stderr,
			"own_jump: the handler ran %s the serial "
			"transaction (want inside: the program's own "
			"nanosleep); the word %ld (want 1)\n",
			ran_in_serial == 0 ? "after" : "not even after",
			shared_word);
		return 1;
	}
	printf("own_jump: ok\n");
	return 0;
}
