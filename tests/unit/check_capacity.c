/* SPDX-License-Identifier: MIT */
/* LTX_CAPACITY: a transaction's slots, counted as the article does. */
#include <ltx/tm.h>

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ltx-test.h"

#define N 6 /* the capacity under test, in slots */

static tm_word_t lines[64][8] __attribute__((aligned(64)));

/* The mode and capacity under test, and no serial fallback whatever
 * LTX_SERIAL_AFTER says: the slots alone decide (the fallback is
 * test_irrevocable_transactions_ignore_the_limit's). */
static void set(const char *mode, const char *capacity)
{
	ck_assert_int_eq(tm_config_set("LTX_MODE", mode), 0);
	ck_assert_int_eq(tm_config_set("LTX_CAPACITY", capacity), 0);
	ck_assert_int_eq(tm_config_set("LTX_SERIAL_AFTER", "0"), 0);
}

/*
 * One transaction: r lines read by LT, then w other lines taken by LTX
 * (each line touched twice, which must not count again).  Returns whether
 * it committed; a doomed one must say TM_ABORT_CAPACITY.
 */
static bool run(int r, int w)
{
	tm_word_t sum = 0;
	bool ok;

	for (int i = 0; i < r; i++)
		sum += tm_lt(&lines[i][0]) + tm_lt(&lines[i][1]);
	for (int i = r; i < r + w; i++)
		sum += tm_ltx(&lines[i][0]) + tm_ltx(&lines[i][1]);
	ok = tm_commit();
	if (!ok)
		ck_assert_uint_eq(tm_status() & TM_ABORT_CAPACITY,
				  TM_ABORT_CAPACITY);
	return ok && sum == 0;
}

/* Reads take one slot each: N-1 and N fit, N+1 does not. */
START_TEST(test_reads_take_one_slot_each)
{
	set(ltx_test_modes[_i], "6");
	ck_assert(run(N - 1, 0));
	ck_assert(run(N, 0));
	ck_assert(!run(N + 1, 0));
	ck_assert(run(N, 0)); /* the next transaction starts over */
}
END_TEST

/* Written lines take two slots (XCOMMIT and XABORT). */
START_TEST(test_written_lines_take_two_slots)
{
	set(ltx_test_modes[_i], "6");
	ck_assert(run(1, 2));  /* 5 = N-1 */
	ck_assert(run(0, 3));  /* 6 = N */
	ck_assert(run(2, 2));  /* 6 = N */
	ck_assert(!run(1, 3)); /* 7 = N+1 */
	ck_assert(!run(0, 4)); /* 8 */
}
END_TEST

/* A line read, then written: 2 slots in all (S, then XCOMMIT+XABORT). */
START_TEST(test_upgrade_adds_one_slot)
{
	bool ok;

	set(ltx_test_modes[_i], "6");
	for (int i = 0; i < 3; i++) {
		(void)tm_lt(&lines[i][0]);
		tm_st(&lines[i][0], 0);
	}
	ck_assert(tm_commit()); /* 3 lines x 2 = 6 = N */
	for (int i = 0; i < 3; i++) {
		(void)tm_lt(&lines[i][0]);
		tm_st(&lines[i][1], 0);
	}
	(void)tm_lt(&lines[3][0]); /* 7 = N+1 */
	ok = tm_commit();
	ck_assert(!ok);
	ck_assert_uint_eq(tm_status() & TM_ABORT_CAPACITY, TM_ABORT_CAPACITY);
}
END_TEST

/* Overflow dooms at once: later loads return 0, stores do nothing. */
START_TEST(test_overflow_dooms_the_transaction)
{
	set(ltx_test_modes[_i], "1");
	lines[1][0] = 5;
	(void)tm_lt(&lines[0][0]);
	ck_assert_uint_eq(tm_lt(&lines[1][0]), 0);
	ck_assert_uint_eq(tm_status() & TM_ABORT_CAPACITY, TM_ABORT_CAPACITY);
	tm_st(&lines[0][0], 9);
	ck_assert(!tm_validate());
	ck_assert_uint_eq(lines[0][0], 0);
	lines[1][0] = 0;
}
END_TEST

/*
 * The limit does not bind an irrevocable transaction, which cannot abort:
 * one begun by tm_irrevocable, or by the serial fallback.  So a
 * transaction too big for the cache fails with TM_ABORT_CAPACITY
 * LTX_SERIAL_AFTER times in a row, then commits irrevocably; with the
 * fallback off (0) it fails every time.
 */
START_TEST(test_irrevocable_transactions_ignore_the_limit)
{
	set(ltx_test_modes[_i], "6");
	ck_assert(tm_irrevocable());
	for (int i = 0; i < 4; i++)
		tm_st(&lines[i][2], 7); /* 8 slots */
	ck_assert(tm_commit());
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(lines[i][2], 7);
	ck_assert_int_eq(tm_config_set("LTX_SERIAL_AFTER", "3"), 0);
	for (int k = 0; k < 3; k++)
		ck_assert(!run(0, 4)); /* 8 slots: TM_ABORT_CAPACITY */
	ck_assert(run(0, 4));	       /* the fourth begins irrevocably */
	ck_assert_int_eq(tm_config_set("LTX_SERIAL_AFTER", "0"), 0);
	for (int k = 0; k < 20; k++)
		ck_assert(!run(0, 4));
	for (int i = 0; i < 4; i++)
		lines[i][2] = 0;
	ck_assert_int_eq(tm_config_set("LTX_SERIAL_AFTER", "16"), 0);
}
END_TEST

/* The default is unlimited, and "unlimited" and 0 restore it. */
START_TEST(test_default_is_unlimited)
{
	const char *fork = getenv("CK_FORK");
	char buf[32];

	/* Each test runs in a fresh process unless CK_FORK=no. */
	if (fork == NULL || strcmp(fork, "no") != 0) {
		ck_assert_int_eq(
			tm_config_get("LTX_CAPACITY", buf, sizeof(buf)), 0);
		ck_assert_str_eq(buf, "unlimited");
	}
	set(ltx_test_modes[_i], "unlimited");
	ck_assert(run(30, 30));
	set(ltx_test_modes[_i], "4");
	ck_assert_int_eq(tm_config_get("LTX_CAPACITY", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "4");
	ck_assert(!run(30, 30));
	set(ltx_test_modes[_i], "0");
	ck_assert(run(30, 30));
	ck_assert_int_eq(tm_config_set("LTX_CAPACITY", "-1"), -1);
	ck_assert_int_eq(tm_config_set("LTX_CAPACITY", "lots"), -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("capacity");
	TCase *tc = tcase_create("slots");

	tcase_add_loop_test(tc, test_reads_take_one_slot_each, 0, 2);
	tcase_add_loop_test(tc, test_written_lines_take_two_slots, 0, 2);
	tcase_add_loop_test(tc, test_upgrade_adds_one_slot, 0, 2);
	tcase_add_loop_test(tc, test_overflow_dooms_the_transaction, 0, 2);
	tcase_add_loop_test(tc, test_irrevocable_transactions_ignore_the_limit,
			    0, 2);
	tcase_add_loop_test(tc, test_default_is_unlimited, 0, 2);
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
