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
	TM_ATOMIC
		tm_st(&a, 7);
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
	TM_ATOMIC
		tm_st(&a, 2); /* depth was reset */
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

#define THREADS	   4
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

/*
 * A restart from a frame below the block's, after that frame has
 * overwritten the callee-saved registers (x86-64: all five that a
 * function may use besides the frame pointer): the block's function must
 * find its own state as it was when the block began, as after longjmp.
 */
static __attribute__((noinline)) void retry_from_below(volatile int *runs)
{
	if ((*runs)++ != 0)
		return;
#if defined(__x86_64__) && defined(__GNUC__)
	__asm__ __volatile__("mov $-1, %%rbx\n\tmov $-1, %%r12\n\t"
			     "mov $-1, %%r13\n\tmov $-1, %%r14\n\t"
			     "mov $-1, %%r15"
			     :
			     :
			     : "rbx", "r12", "r13", "r14", "r15");
#endif
	tm_retry();
	/* Not a tail call: the registers stay overwritten across it. */
	__asm__ __volatile__("" ::: "memory");
}

static __attribute__((noinline)) unsigned long block_between(unsigned long x,
							     volatile int *runs)
{
	/* Values the function keeps across the block, in registers if the
	 * compiler likes. */
	unsigned long k1 = x * 3, k2 = x + 7, k3 = x ^ 0x55, k4 = x << 2,
		      k5 = x - 1;

	TM_ATOMIC {
		tm_st(&a, tm_lt(&a) + 1);
		retry_from_below(runs);
	}
	return k1 + 2 * k2 + 3 * k3 + 5 * k4 + 7 * k5;
}

/* Values kept across block_between by its caller (in callee-saved
 * registers if the compiler likes): checked after it returned. */
static __attribute__((noinline)) unsigned long
call_block_between(unsigned long x, volatile int *runs)
{
	volatile unsigned long xv = x;
	unsigned long v1 = x * 11, v2 = x * 13, v3 = x * 17, v4 = x * 19,
		      v5 = x * 23, got;

	__asm__ __volatile__(""
			     : "+r"(v1), "+r"(v2), "+r"(v3), "+r"(v4),
			       "+r"(v5));
	got = block_between(x, runs);
	__asm__ __volatile__(""
			     : "+r"(v1), "+r"(v2), "+r"(v3), "+r"(v4),
			       "+r"(v5));
	x = xv; /* from memory: not a register the restart could clobber */
	if (v1 != x * 11 || v2 != x * 13 || v3 != x * 17 || v4 != x * 19 ||
	    v5 != x * 23)
		return 0;
	return got;
}

START_TEST(test_restart_from_below_keeps_the_functions_state)
{
	volatile int runs = 0;
	unsigned long x = 1000 + (unsigned long)_i, got;

	if (!ltx_test_use_mode(_i))
		return;
	a = 0;
	got = call_block_between(x, &runs);
	ck_assert_int_eq(runs, 2);
	ck_assert_uint_eq(a, 1);
	ck_assert_uint_eq(got, x * 3 + 2 * (x + 7) + 3 * (x ^ 0x55) +
				       5 * (x << 2) + 7 * (x - 1));
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
	tcase_add_loop_test(tc,
			    test_restart_from_below_keeps_the_functions_state,
			    0, LTX_TEST_NMODES);
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
