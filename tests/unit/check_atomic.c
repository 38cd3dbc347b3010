/* SPDX-License-Identifier: MIT */
/* TM_ATOMIC: commit at the end, restart on abort, tm_retry, tm_abort,
 * flat nesting, early exits, and a concurrent counter in every mode. */
#include <ltx/tm.h>

#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ltx-test.h"

static tm_word_t a, b;

START_TEST(test_atomic_block_commits_its_stores)
{
	if (!ltx_test_use_mode(_i))
		return;
	a = 1;
	TM_ATOMIC {
		tm_st(&a, tm_lt(&a) + 41);
		ck_assert(tm_in_transaction());
	}
	ck_assert(!tm_in_transaction());
	ck_assert_uint_eq(a, 42);
	ck_assert_uint_eq(tm_status(), 0);
}
END_TEST

START_TEST(test_retry_restarts_block_and_discards_stores)
{
	volatile int runs = 0;
	volatile unsigned seen = 0;

	if (!ltx_test_use_mode(_i))
		return;
	a = 0;
	TM_ATOMIC {
		if (runs++ == 1)
			seen = tm_status();
		tm_st(&a, tm_lt(&a) + 1);
		if (runs == 1)
			tm_retry();
	}
	ck_assert_int_eq(runs, 2);
	ck_assert_uint_eq(a, 1);
	ck_assert_uint_eq(seen, TM_ABORT_EXPLICIT | TM_ABORT_RETRY);
}
END_TEST

START_TEST(test_abort_leaves_block_without_its_stores)
{
	volatile int after = 0;

	if (!ltx_test_use_mode(_i))
		return;
	a = 5;
	TM_ATOMIC {
		tm_st(&a, 6);
		tm_abort();
		after = 1;
	}
	ck_assert_int_eq(after, 0);
	ck_assert_uint_eq(a, 5);
	ck_assert_uint_eq(tm_status(), TM_ABORT_EXPLICIT);
	ck_assert(!tm_in_transaction());
	/* The thread is usable afterwards. */
	TM_ATOMIC tm_st(&a, 7);
	ck_assert_uint_eq(a, 7);
}
END_TEST

START_TEST(test_nested_block_is_part_of_outer_transaction)
{
	volatile int outer_runs = 0, inner_runs = 0;

	if (!ltx_test_use_mode(_i))
		return;
	a = 0;
	b = 0;
	TM_ATOMIC {
		outer_runs++;
		tm_st(&a, tm_lt(&a) + 1);
		TM_ATOMIC {
			inner_runs++;
			tm_st(&b, tm_lt(&b) + 1);
		}
		/* The inner block did not commit on its own. */
		ck_assert(tm_in_transaction());
		if (outer_runs == 1)
			tm_retry(); /* restarts the outer block, inner too */
	}
	ck_assert_int_eq(outer_runs, 2);
	ck_assert_int_eq(inner_runs, 2);
	ck_assert_uint_eq(a, 1);
	ck_assert_uint_eq(b, 1);
}
END_TEST

START_TEST(test_abort_in_nested_block_leaves_outer)
{
	volatile int reached = 0;

	if (!ltx_test_use_mode(_i))
		return;
	a = 0;
	TM_ATOMIC {
		tm_st(&a, 1);
		TM_ATOMIC {
			tm_abort();
		}
		reached = 1;
	}
	ck_assert_int_eq(reached, 0);
	ck_assert_uint_eq(a, 0);
	TM_ATOMIC tm_st(&a, 2); /* depth was reset */
	ck_assert_uint_eq(a, 2);
}
END_TEST

static int leave_by_return(void)
{
	TM_ATOMIC {
		tm_st(&a, 9);
		return 3;
	}
	return 0;
}

START_TEST(test_break_and_return_commit_the_block)
{
	if (!ltx_test_use_mode(_i))
		return;
	a = 0;
	b = 0;
	for (;;) {
		TM_ATOMIC {
			tm_st(&b, 8);
			break;
		}
		break;
	}
	ck_assert_uint_eq(b, 8);
	ck_assert(!tm_in_transaction());
	ck_assert_int_eq(leave_by_return(), 3);
	ck_assert_uint_eq(a, 9);
	ck_assert(!tm_in_transaction());
}
END_TEST

#define THREADS 4
#define INCREMENTS 20000
static tm_word_t counter[8] __attribute__((aligned(64)));

/* One block per call: no local of the caller lives across the
 * checkpoint, so none can be clobbered by a restart (-Wclobbered). */
static void increment_once(void)
{
	TM_ATOMIC {
		tm_st(&counter[0], tm_lt(&counter[0]) + 1);
		tm_st(&counter[1], tm_lt(&counter[1]) + 2);
	}
}

static void *increment(void *arg)
{
	(void)arg;
	for (int i = 0; i < INCREMENTS; i++)
		increment_once();
	return NULL;
}

START_TEST(test_concurrent_blocks_lose_no_update)
{
	pthread_t t[THREADS];

	if (!ltx_test_use_mode(_i))
		return;
	memset(counter, 0, sizeof(counter));
	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, increment, NULL),
				 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	ck_assert_uint_eq(counter[0], THREADS * INCREMENTS);
	ck_assert_uint_eq(counter[1], 2 * THREADS * INCREMENTS);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("atomic");
	TCase *tc = tcase_create("block");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_atomic_block_commits_its_stores, 0,
			    LTX_TEST_NMODES);
	tcase_add_loop_test(tc, test_retry_restarts_block_and_discards_stores,
			    0, LTX_TEST_NMODES);
	tcase_add_loop_test(tc, test_abort_leaves_block_without_its_stores, 0,
			    LTX_TEST_NMODES);
	tcase_add_loop_test(tc, test_nested_block_is_part_of_outer_transaction,
			    0, LTX_TEST_NMODES);
	tcase_add_loop_test(tc, test_abort_in_nested_block_leaves_outer, 0,
			    LTX_TEST_NMODES);
	tcase_add_loop_test(tc, test_break_and_return_commit_the_block, 0,
			    LTX_TEST_NMODES);
	tcase_add_loop_test(tc, test_concurrent_blocks_lose_no_update, 0,
			    LTX_TEST_NMODES);
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
