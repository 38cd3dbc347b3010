/* SPDX-License-Identifier: MIT */
/* Shared helpers of the -fgnu-tm test programs: threads and checks. */
#ifndef ITM_TEST_H
#define ITM_TEST_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* CHECK(cond): print the failed condition and exit 1. */
#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #cond);                              \
			exit(1);                                               \
		}                                                              \
	} while (0)

/* The thread count: argv[1], else 2. */
static inline int nthreads_arg(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;

	CHECK(n >= 1 && n <= 64);
	return n;
}

static pthread_barrier_t start_line;
static void *(*thread_body)(void *);

static long warm_up;

/* Each thread runs a transaction before the start line: every thread is
 * known to the TM runtime before any starts its run, so all overlap. */
static void *start_together(void *arg)
{
	__transaction_atomic
	{
		warm_up++;
	}
	pthread_barrier_wait(&start_line);
	return thread_body(arg);
}

/* Run fn(i) on n threads, i = 0..n-1, started together; wait for all. */
static inline void run_threads(int n, void *(*fn)(void *))
{
	pthread_t t[64];

	thread_body = fn;
	CHECK(pthread_barrier_init(&start_line, NULL, (unsigned)n) == 0);
	for (long i = 0; i < n; i++)
		CHECK(pthread_create(&t[i], NULL, start_together, (void *)i) ==
		      0);
	for (int i = 0; i < n; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	pthread_barrier_destroy(&start_line);
}

/* A small per-thread xorshift generator. */
static inline unsigned long next_rand(unsigned long *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#endif /* ITM_TEST_H */
