/* SPDX-License-Identifier: MIT */
/* tm_line_state across a transaction's life, and the bus accounting. */
#include <ltx/tm.h>

#include <check.h>
#include <pthread.h>
#include <stdlib.h>

#include "ltx-test.h"

static tm_word_t lines[8][8] __attribute__((aligned(64)));

/* The modes under test: invisible, visible, invisible with a capacity
 * limit (the counted path, which keeps the per-line directory). */
static void set_mode(int i)
{
	ck_assert_int_eq(
		tm_config_set("LTX_MODE", i == 1 ? "visible" : "invisible"), 0);
	ck_assert_int_eq(
		tm_config_set("LTX_CAPACITY", i == 2 ? "1000" : "unlimited"),
		0);
}

#define assert_state(addr, tx_state, mesi)                                     \
	do {                                                                   \
		unsigned s_ = tm_line_state(addr);                             \
		ck_assert_int_eq(TM_LINE_TX(s_), tx_state);                    \
		ck_assert_int_eq(TM_LINE_MESI(s_), mesi);                      \
	} while (0)

/*
 * LT: NORMAL/S; LTX: XABORT/E; ST: XABORT/M; LT then ST: XABORT/M; a
 * line not touched, and every line outside a transaction: EMPTY/I.
 */
START_TEST(test_line_states_through_a_transaction)
{
	set_mode(_i);
	assert_state(&lines[0][0], TM_EMPTY, 'I');
	(void)tm_lt(&lines[0][0]);
	assert_state(&lines[0][0], TM_NORMAL, 'S');
	assert_state(&lines[0][7], TM_NORMAL, 'S'); /* same line */
	(void)tm_ltx(&lines[1][0]);
	assert_state(&lines[1][0], TM_XABORT, 'E');
	tm_st(&lines[1][3], 5);
	assert_state(&lines[1][0], TM_XABORT, 'M');
	tm_st(&lines[2][0], 5);
	assert_state(&lines[2][0], TM_XABORT, 'M');
	(void)tm_lt(&lines[3][0]);
	assert_state(&lines[3][0], TM_NORMAL, 'S');
	tm_st(&lines[3][0], 6);
	assert_state(&lines[3][0], TM_XABORT, 'M');
	assert_state(&lines[4][0], TM_EMPTY, 'I');
	ck_assert(tm_commit());
	for (int i = 0; i < 5; i++)
		assert_state(&lines[i][0], TM_EMPTY, 'I');
	ck_assert_uint_eq(lines[3][0], 6);
}
END_TEST

/* An aborted transaction holds nothing any more. */
START_TEST(test_abort_empties_every_line)
{
	set_mode(_i);
	(void)tm_lt(&lines[0][0]);
	tm_st(&lines[1][0], 1);
	tm_abort();
	assert_state(&lines[0][0], TM_EMPTY, 'I');
	assert_state(&lines[1][0], TM_EMPTY, 'I');
}
END_TEST

/* A line another transaction owns is not in ours: I. */
static void *hold_and_query(void *arg)
{
	unsigned *out = arg;

	(void)tm_lt(&lines[6][0]);
	*out = tm_line_state(&lines[5][0]);
	tm_abort();
	return NULL;
}

START_TEST(test_line_held_elsewhere_is_invalid_here)
{
	pthread_t t;
	unsigned s = 0;

	set_mode(_i);
	tm_st(&lines[5][0], 1);
	pthread_create(&t, NULL, hold_and_query, &s);
	pthread_join(t, NULL);
	ck_assert_int_eq(TM_LINE_TX(s), TM_EMPTY);
	ck_assert_int_eq(TM_LINE_MESI(s), 'I');
	assert_state(&lines[5][0], TM_XABORT, 'M');
	tm_abort();
}
END_TEST

static struct tm_bus_stats delta(const struct tm_bus_stats *before)
{
	struct tm_bus_stats now;

	ck_assert_int_eq(tm_bus_stats(&now), 0);
	now.t_read -= before->t_read;
	now.t_rfo -= before->t_rfo;
	now.busy -= before->busy;
	now.write_back -= before->write_back;
	return now;
}

/*
 * T_READ on the first LT of a line, T_RFO on the first LTX/ST of a line
 * and on S -> E; nothing on hits; one write-back per line stored.
 */
START_TEST(test_bus_requests_are_counted_per_line)
{
	struct tm_bus_stats b, d;

	set_mode(_i);
	ck_assert_int_eq(tm_bus_stats(&b), 0);
	(void)tm_lt(&lines[0][0]);  /* T_READ */
	(void)tm_lt(&lines[0][1]);  /* hit */
	(void)tm_ltx(&lines[1][0]); /* T_RFO */
	(void)tm_lt(&lines[1][0]);  /* hit (E) */
	(void)tm_lt(&lines[2][0]);  /* T_READ */
	(void)tm_ltx(&lines[2][0]); /* T_RFO: S -> E */
	tm_st(&lines[3][0], 1);	    /* T_RFO */
	tm_st(&lines[3][1], 2);	    /* hit */
	ck_assert(tm_commit());	    /* one write-back: line 3 */
	d = delta(&b);
	if (_i == 0) {
		/* Uncounted invisible mode: only failures are counted. */
		ck_assert_uint_eq(d.t_read + d.t_rfo + d.write_back, 0);
	} else {
		ck_assert_uint_eq(d.t_read, 2);
		ck_assert_uint_eq(d.t_rfo, 3);
		ck_assert_uint_eq(d.write_back, 1);
	}
	ck_assert_uint_eq(d.busy, 0);
}
END_TEST

static void *request_owned_line(void *arg)
{
	(void)tm_lt(&lines[4][0]);
	*(bool *)arg = tm_validate();
	return NULL;
}

/* A T_READ of a line another transaction owns fails: BUSY. */
START_TEST(test_failed_request_counts_busy)
{
	struct tm_bus_stats b, d;
	pthread_t t;
	bool ok = true;

	set_mode(_i);
	ck_assert_int_eq(tm_bus_stats(&b), 0);
	tm_st(&lines[4][0], 1);
	pthread_create(&t, NULL, request_owned_line, &ok);
	pthread_join(t, NULL);
	ck_assert(!ok);
	ck_assert(tm_commit());
	d = delta(&b);
	ck_assert_uint_eq(d.busy, 1);
	if (_i != 0) {
		ck_assert_uint_eq(d.t_read, 1);
		ck_assert_uint_eq(d.t_rfo, 1);
	}
	ck_assert_int_eq(tm_bus_stats(NULL), -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("linestate");
	TCase *tc = tcase_create("states");

	tcase_add_loop_test(tc, test_line_states_through_a_transaction, 0, 3);
	tcase_add_loop_test(tc, test_abort_empties_every_line, 0, 3);
	tcase_add_loop_test(tc, test_line_held_elsewhere_is_invalid_here, 0, 3);
	tcase_add_loop_test(tc, test_bus_requests_are_counted_per_line, 0, 3);
	tcase_add_loop_test(tc, test_failed_request_counts_busy, 0, 3);
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
