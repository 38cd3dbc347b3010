/* SPDX-License-Identifier: MIT */
/* Signals under load: a storm of SIGUSR1 over bank transfers and audits,
 * in every mode; no money lost, every signal handled, each handler's own
 * transaction committed once.  Not for TSan (signal handlers touching the
 * descriptor). */
#define _GNU_SOURCE
#include <ltx/tm.h>

#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bank.h"
#include "ltx-test.h"

/* The storm: bank transfers under SIGUSR1 from another thread. */
#define WORKERS	      4
#define ACCOUNTS      64
#define INITIAL	      1000
#define STORM_SECONDS 2
#define EXACT_ROUNDS  50

static struct bank bank;
static tm_word_t handled_tx __attribute__((aligned(64)));
static unsigned long handled[WORKERS];
static __thread int worker_id = -1;
static volatile int storm_stop;

static volatile int workers_ready;

struct worker {
	pthread_t thread;
	int id;
	unsigned long transfers, signal_aborts, bad_code, audits_bad;
};

static void storm_handler(int sig)
{
	(void)sig;
	if (worker_id >= 0)
		__atomic_fetch_add(&handled[worker_id], 1, __ATOMIC_RELEASE);
	/* A transaction of the handler's own, on every delivery. */
	TM_ATOMIC
		tm_st(&handled_tx, tm_lt(&handled_tx) + 1);
}

static void storm_transfer(struct worker *w, unsigned from, unsigned to)
{
	tm_word_t *src = bank_balance(&bank, from);
	tm_word_t *dst = bank_balance(&bank, to);
	volatile int attempt = 0;

	TM_ATOMIC {
		tm_word_t x;

		if (attempt++ > 0) {
			unsigned st = tm_status();

			if (st & TM_ABORT_SIGNAL) {
				w->signal_aborts++;
				if (TM_ABORT_CODE(st) != SIGUSR1)
					w->bad_code++;
			}
		}
		x = tm_lt(src);
		tm_st(src, x - 1);
		tm_st(dst, tm_lt(dst) + 1);
	}
}

static void *storm_worker(void *arg)
{
	struct worker *w = arg;
	unsigned seed = (unsigned)w->id * 7919u + 1;

	worker_id = w->id;
	/* The descriptors are made here, not in a handler (no malloc). */
	(void)tm_lt(bank_balance(&bank, 0));
	tm_commit();
	__atomic_fetch_add(&workers_ready, 1, __ATOMIC_RELEASE);
	while (!storm_stop) {
		unsigned from = (unsigned)rand_r(&seed) % ACCOUNTS;
		unsigned to = (unsigned)rand_r(&seed) % ACCOUNTS;

		storm_transfer(w, from, to);
		if ((++w->transfers & 63) == 0 &&
		    bank_audit(&bank) != (tm_word_t)ACCOUNTS * INITIAL)
			w->audits_bad++;
	}
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

START_TEST(test_signal_storm_loses_no_money_and_no_signal)
{
	struct worker w[WORKERS];
	unsigned long sent[WORKERS] = { 0 }, total_sent = 0, aborts = 0;
	unsigned long total_handled = 0;
	double end;

	if (!ltx_test_use_mode(_i))
		return;
	bank_open(&bank, ACCOUNTS, INITIAL);
	handled_tx = 0;
	memset(handled, 0, sizeof(handled));
	storm_stop = 0;
	workers_ready = 0;
	ltx_test_set_handler(SIGUSR1, storm_handler, SA_RESTART);
	for (int i = 0; i < WORKERS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].id = i;
		ck_assert_int_eq(
			pthread_create(&w[i].thread, NULL, storm_worker, &w[i]),
			0);
	}
	while (__atomic_load_n(&workers_ready, __ATOMIC_ACQUIRE) != WORKERS)
		sched_yield();
	/* The storm: thousands of sends a second; pending ones may merge. */
	end = now_s() + STORM_SECONDS;
	for (unsigned long n = 0; now_s() < end; n++) {
		struct timespec pause = { 0, 100000 };
		int i = (int)(n % WORKERS);

		ck_assert_int_eq(pthread_kill(w[i].thread, SIGUSR1), 0);
		sent[i]++;
		if (i == WORKERS - 1)
			nanosleep(&pause, NULL);
	}
	for (int i = 0; i < WORKERS; i++)
		total_sent += sent[i];
	/* Then one at a time, each awaited: every send is at least one
	 * handler run (a pending storm signal may merge with the first). */
	for (int round = 0; round < EXACT_ROUNDS; round++) {
		for (int i = 0; i < WORKERS; i++) {
			unsigned long before =
				__atomic_load_n(&handled[i], __ATOMIC_ACQUIRE);

			ck_assert_int_eq(pthread_kill(w[i].thread, SIGUSR1), 0);
			while (__atomic_load_n(&handled[i], __ATOMIC_ACQUIRE) ==
			       before)
				sched_yield();
		}
	}
	storm_stop = 1;
	for (int i = 0; i < WORKERS; i++) {
		pthread_join(w[i].thread, NULL);
		total_handled += handled[i];
		/* Never more runs than sends (merging only loses some). */
		ck_assert_uint_le(handled[i], sent[i] + EXACT_ROUNDS);
		ck_assert_uint_ge(handled[i], EXACT_ROUNDS);
		ck_assert_uint_eq(w[i].bad_code, 0);
		ck_assert_uint_eq(w[i].audits_bad, 0);
		aborts += w[i].signal_aborts;
	}
	signal(SIGUSR1, SIG_DFL);
	ck_assert_uint_eq(bank_total(&bank), (tm_word_t)ACCOUNTS * INITIAL);
	/* Each handler run committed its own transaction exactly once. */
	ck_assert_uint_eq(handled_tx, total_handled);
	ck_assert_uint_gt(aborts, 0);
	fprintf(stderr,
		"storm (%s): %lu SIGUSR1 sent in %d s, %lu handled, "
		"%lu transactions aborted by them\n",
		ltx_test_modes[_i], total_sent, STORM_SECONDS,
		total_handled - WORKERS * EXACT_ROUNDS, aborts);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("signal_storm");
	TCase *tc = tcase_create("storm");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_signal_storm_loses_no_money_and_no_signal,
			    0, LTX_TEST_NMODES);
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
