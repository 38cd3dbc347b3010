/* SPDX-License-Identifier: MIT */
/* Fault tolerance: dying threads and failing allocations free their lines. */
#define _GNU_SOURCE
#include <ltx/tm.h>

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NLINES 16
#define BIG    5000 /* lines: far more than the logs' initial sizes */

struct line {
	tm_word_t w;
	char pad[64 - sizeof(tm_word_t)];
} __attribute__((aligned(64)));

static struct line lines[NLINES];

/* Set by the victim once it holds every line; read by the main thread. */
static int holding;

/* Take every line in E (stores and an LTX), then tell the main thread. */
static void take_lines(void)
{
	for (unsigned i = 0; i < NLINES; i++) {
		if (i % 2)
			tm_st(&lines[i].w, 1000 + i);
		else
			(void)tm_ltx(&lines[i].w);
	}
	__atomic_store_n(&holding, 1, __ATOMIC_RELEASE);
}

static void wait_holding(void)
{
	while (!__atomic_load_n(&holding, __ATOMIC_ACQUIRE))
		sched_yield();
}

/* Another thread can now take every line and commit; the dead thread's
 * stores were discarded. */
static void assert_lines_free(void)
{
	for (unsigned i = 0; i < NLINES; i++) {
		tm_word_t v = tm_ltx(&lines[i].w);

		ck_assert_msg(v == i,
			      "line %u holds %lu: a store of the dead "
			      "transaction leaked",
			      i, (unsigned long)v);
		tm_st(&lines[i].w, v);
	}
	ck_assert_msg(tm_commit(), "lines still owned (status %#x)",
		      tm_status());
}

static void setup(void)
{
	for (unsigned i = 0; i < NLINES; i++)
		lines[i].w = i;
	holding = 0;
}

static void *exit_in_tx(void *arg)
{
	take_lines();
	pthread_exit(arg);
}

static void *return_in_tx(void *arg)
{
	take_lines();
	return arg;
}

#ifndef __SANITIZE_THREAD__ /* see main() */
static void *cancelled_in_tx(void *arg)
{
	struct timespec ms = {0, 1000000};

	take_lines();
	for (;;)
		nanosleep(&ms, NULL); /* a cancellation point */
	return arg;
}
#endif

static void *cancelled_at_testcancel(void *arg)
{
	take_lines();
	for (;;) {
		pthread_testcancel();
		sched_yield();
	}
	return arg;
}

START_TEST(test_pthread_exit_in_tx_releases_lines)
{
	pthread_t t;

	setup();
	ck_assert(pthread_create(&t, NULL, exit_in_tx, NULL) == 0);
	ck_assert(pthread_join(t, NULL) == 0);
	assert_lines_free();
}
END_TEST

START_TEST(test_return_from_thread_in_tx_releases_lines)
{
	pthread_t t;

	setup();
	ck_assert(pthread_create(&t, NULL, return_in_tx, NULL) == 0);
	ck_assert(pthread_join(t, NULL) == 0);
	assert_lines_free();
}
END_TEST

#ifndef __SANITIZE_THREAD__
START_TEST(test_cancel_in_nanosleep_in_tx_releases_lines)
{
	pthread_t t;
	void *res;

	setup();
	ck_assert(pthread_create(&t, NULL, cancelled_in_tx, NULL) == 0);
	wait_holding();
	/* While the victim lives, its lines are owned: LTX fails. */
	(void)tm_ltx(&lines[1].w);
	ck_assert(!tm_commit());
	ck_assert(tm_status() & TM_ABORT_CONFLICT);
	ck_assert(pthread_cancel(t) == 0);
	ck_assert(pthread_join(t, &res) == 0);
	ck_assert(res == PTHREAD_CANCELED);
	assert_lines_free();
}
END_TEST
#endif

START_TEST(test_cancel_at_testcancel_in_tx_releases_lines)
{
	pthread_t t;
	void *res;

	setup();
	ck_assert(pthread_create(&t, NULL, cancelled_at_testcancel, NULL) == 0);
	wait_holding();
	ck_assert(pthread_cancel(t) == 0);
	ck_assert(pthread_join(t, &res) == 0);
	ck_assert(res == PTHREAD_CANCELED);
	assert_lines_free();
}
END_TEST

/*
 * Failing allocations.  malloc, realloc and posix_memalign are interposed
 * in this program (glibc's own are reached by their __libc_ names) and fail
 * on the calling thread once armed, after fail_after more successes.  Not
 * with sanitizers: they interpose the allocator themselves.
 */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define HAVE_FAILING_MALLOC 1
#endif

#ifdef HAVE_FAILING_MALLOC
extern void *__libc_malloc(size_t n);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

static __thread int fail_armed;
static __thread long fail_after;
static __thread long failures;

static bool should_fail(void)
{
	if (!fail_armed)
		return false;
	if (fail_after > 0) {
		fail_after--;
		return false;
	}
	failures++;
	return true;
}

void *malloc(size_t n)
{
	return should_fail() ? NULL : __libc_malloc(n);
}

void *realloc(void *p, size_t n)
{
	return should_fail() ? NULL : __libc_realloc(p, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	if (should_fail())
		return ENOMEM;
	p = __libc_memalign(align, n);
	if (p == NULL)
		return ENOMEM;
	*out = p;
	return 0;
}

static struct line big[BIG];

static void big_setup(void)
{
	for (unsigned i = 0; i < BIG; i++)
		big[i].w = i;
	/* A first transaction creates this thread's descriptor unarmed. */
	(void)tm_lt(&big[0].w);
	ck_assert(tm_commit());
}

/* After the failure every line is free and unchanged. */
static void assert_big_free(void)
{
	for (unsigned i = 0; i < BIG; i += 7) {
		ck_assert_uint_eq(tm_ltx(&big[i].w), i);
		tm_st(&big[i].w, i);
	}
	ck_assert_msg(tm_commit(), "status %#x", tm_status());
}

static void oom_writes(long after)
{
	bool ok;

	big_setup();
	fail_after = after;
	failures = 0;
	fail_armed = 1;
	for (unsigned i = 0; i < BIG; i++)
		tm_st(&big[i].w, 100000 + i);
	ok = tm_commit();
	fail_armed = 0;
	/* The first growth of a fresh descriptor's log must have failed. */
	ck_assert(after > 0 || failures > 0);
	if (failures == 0) {
		/* The logs were already big enough (a later loop index). */
		ck_assert(ok);
		return;
	}
	ck_assert_msg(!ok, "a transaction whose log could not grow committed");
	ck_assert_msg((tm_status() & (TM_ABORT_NOMEM | TM_ABORT_CAPACITY)) ==
			  (TM_ABORT_NOMEM | TM_ABORT_CAPACITY),
		      "status %#x", tm_status());
	ck_assert(!tm_in_transaction());
	for (unsigned i = 0; i < BIG; i++)
		ck_assert_uint_eq(big[i].w, i);
	assert_big_free();
}

START_TEST(test_write_log_oom_aborts_cleanly)
{
	oom_writes(_i);
}
END_TEST

START_TEST(test_read_log_oom_aborts_cleanly)
{
	bool ok;
	tm_word_t sum = 0;

	big_setup();
	fail_after = _i;
	failures = 0;
	fail_armed = 1;
	for (unsigned i = 0; i < BIG; i++)
		sum += tm_lt(&big[i].w);
	ok = tm_commit();
	fail_armed = 0;
	ck_assert(_i > 0 || failures > 0);
	if (failures == 0) {
		ck_assert(ok);
		ck_assert_uint_eq(sum, (tm_word_t)BIG * (BIG - 1) / 2);
		return;
	}
	ck_assert(!ok);
	ck_assert_msg((tm_status() & (TM_ABORT_NOMEM | TM_ABORT_CAPACITY)) ==
			  (TM_ABORT_NOMEM | TM_ABORT_CAPACITY),
		      "status %#x", tm_status());
	assert_big_free();
}
END_TEST
#endif /* HAVE_FAILING_MALLOC */

int main(void)
{
	Suite *s = suite_create("fault");
	TCase *tc = tcase_create("thread death");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_pthread_exit_in_tx_releases_lines);
	tcase_add_test(tc, test_return_from_thread_in_tx_releases_lines);
#ifndef __SANITIZE_THREAD__
	/*
	 * Not under TSan: a thread cancelled inside an intercepted blocking
	 * call (nanosleep) runs its TSD destructors while TSan still counts it
	 * inside that interceptor, so the registry mutex taken by ltx's
	 * thread-exit hook goes unrecorded and TSan reports a race on the
	 * descriptor's in_use flag that the mutex does prevent.
	 */
	tcase_add_test(tc, test_cancel_in_nanosleep_in_tx_releases_lines);
#endif
	tcase_add_test(tc, test_cancel_at_testcancel_in_tx_releases_lines);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
#ifdef HAVE_FAILING_MALLOC
	tc = tcase_create("out of memory");
	/* Fail the first, second or third growth of the log. */
	tcase_add_loop_test(tc, test_write_log_oom_aborts_cleanly, 0, 3);
	tcase_add_loop_test(tc, test_read_log_oom_aborts_cleanly, 0, 3);
	suite_add_tcase(s, tc);
#endif
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
