/* SPDX-License-Identifier: MIT */
/* The invisible mode's conflict rules, as deterministic two-thread scripts. */
#include <ltx/tm.h>

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "ltx-test.h"

/*
 * The other thread of each script: the step harness's peer
 * (common/ltx-test.h), started and stopped around each test; main runs its
 * steps inline and calls other(fn) for the peer's.
 */
static struct ltx_test_peer peer;

static void other(void (*fn)(void *))
{
	ltx_test_peer_run(&peer, fn, NULL);
}

/* The scripts are the invisible mode's, whatever LTX_MODE says (the
 * visible mode's are check_conflict's), and exact only where the lines do
 * not share orecs: the default table, whatever LTX_OREC_BITS says, when
 * the table is not made yet (each test forks; with CK_FORK=no the first
 * test's table stays, EBUSY).  No serial fallback: a doomed step must
 * not make the next one irrevocable (it would wait for the other thread,
 * which waits for it). */
static void setup(void)
{
	ck_assert(ltx_test_use_mode(0));
	(void)tm_config_set("LTX_OREC_BITS", "16");
	ck_assert_int_eq(tm_config_set("LTX_SERIAL_AFTER", "0"), 0);
	ltx_test_peer_start(&peer);
}

static void teardown(void)
{
	ltx_test_peer_stop(&peer);
}

/* Three words on three lines. */
static uint64_t a[8] __attribute__((aligned(64)));
static uint64_t b[8] __attribute__((aligned(64)));
static uint64_t c[8] __attribute__((aligned(64)));
static uint64_t got;
static int ok;

static void init(void)
{
	a[0] = 1;
	b[0] = 1;
	c[0] = 100;
}

static void peer_lt_a(void *arg)
{
	got = tm_lt(&a[0]);
}
static void peer_ltx_a(void *arg)
{
	got = tm_ltx(&a[0]);
}
static void peer_st_a(void *arg)
{
	tm_st(&a[0], 7);
}
static void peer_commit(void *arg)
{
	ok = tm_commit();
}
static void peer_validate(void *arg)
{
	ok = tm_validate();
}
static void peer_update_a_and_b(void *arg)
{
	do {
		tm_st(&a[0], tm_ltx(&a[0]) + 1);
		tm_st(&b[0], tm_ltx(&b[0]) + 1);
	} while (!tm_commit());
}
static void peer_update_c(void *arg)
{
	do
		tm_st(&c[0], tm_ltx(&c[0]) + 1);
	while (!tm_commit());
}

/* LT and LT share the line (MESI S in both): neither is doomed. */
START_TEST(test_lt_then_lt_both_commit)
{
	init();
	ck_assert_uint_eq(tm_lt(&a[0]), 1);
	other(peer_lt_a);
	ck_assert_uint_eq(got, 1);
	other(peer_commit);
	ck_assert(ok);
	ck_assert(tm_commit());
}
END_TEST

/* LTX of a line another transaction holds in E: the requester loses (its
 * T_RFO gets BUSY); the holder commits. */
START_TEST(test_ltx_of_a_line_held_in_e_dooms_the_requester)
{
	init();
	ck_assert_uint_eq(tm_ltx(&a[0]), 1);
	other(peer_ltx_a);
	ck_assert_uint_eq(got, 0); /* failed load */
	other(peer_validate);
	ck_assert(!ok);
	tm_st(&a[0], 5);
	ck_assert(tm_commit());
	ck_assert_uint_eq(a[0], 5);
}
END_TEST

/* LT of a line another transaction has stored to (E/M, XABORT): the
 * reader's T_READ gets BUSY; it is doomed, the writer commits. */
START_TEST(test_lt_of_a_written_line_dooms_the_reader)
{
	init();
	tm_st(&a[0], 9);
	other(peer_lt_a);
	ck_assert_uint_eq(got, 0);
	other(peer_commit);
	ck_assert(!ok);
	ck_assert(tm_commit());
	ck_assert_uint_eq(a[0], 9);
}
END_TEST

/* ST after another's LT: in the invisible mode the reader left no trace,
 * so the writer is not doomed (unlike the article's bus, where T_RFO gets
 * BUSY against a shared line: that is the visible mode).  The reader is
 * the one that fails, at its next VALIDATE. */
START_TEST(test_st_after_invisible_lt_dooms_the_reader_at_validate)
{
	init();
	ck_assert_uint_eq(tm_lt(&a[0]), 1);
	other(peer_st_a);
	other(peer_commit);
	ck_assert(ok);
	ck_assert_uint_eq(a[0], 7);
	ck_assert(!tm_validate());
	ck_assert(tm_status() & TM_ABORT_CONFLICT);
	ck_assert(tm_status() & TM_ABORT_VALIDATE);
}
END_TEST

/* Opacity: a live transaction never sees a and b from different commits.
 * After the peer updates both, the old reader's LT of b cannot extend its
 * snapshot (a changed), so the load fails instead of returning new b. */
START_TEST(test_live_transaction_never_sees_a_torn_snapshot)
{
	init();
	ck_assert_uint_eq(tm_lt(&a[0]), 1);
	other(peer_update_a_and_b);
	ck_assert_uint_eq(a[0], 2);
	ck_assert_uint_eq(tm_lt(&b[0]), 0); /* not the new 2 */
	ck_assert(!tm_commit());
}
END_TEST

/* Snapshot extension: a commit to an unrelated line does not doom a
 * reader that then reads the new line; it sees the new value. */
START_TEST(test_unrelated_commit_extends_the_snapshot)
{
	init();
	ck_assert_uint_eq(tm_lt(&a[0]), 1);
	other(peer_update_c);
	ck_assert_uint_eq(tm_lt(&c[0]), 101);
	ck_assert(tm_validate());
	ck_assert(tm_commit());
}
END_TEST

/* A read-write transaction whose read is overwritten by a commit between
 * its read and its commit fails at commit (TL2/LSA commit validation). */
START_TEST(test_update_commit_fails_if_a_read_line_changed)
{
	init();
	ck_assert_uint_eq(tm_lt(&a[0]), 1);
	tm_st(&c[0], 55);
	other(peer_st_a);
	other(peer_commit);
	ck_assert(ok);
	ck_assert(!tm_commit());
	ck_assert_uint_eq(c[0], 100);
	ck_assert(tm_status() & TM_ABORT_CONFLICT);
}
END_TEST

/* After a failed transaction the lines it held are free again. */
START_TEST(test_doomed_transaction_releases_its_lines)
{
	init();
	tm_st(&b[0], 3);
	other(peer_st_a);		    /* peer holds a */
	ck_assert_uint_eq(tm_lt(&a[0]), 0); /* doomed: releases b at once */
	other(peer_commit);
	ck_assert(ok);
	ck_assert(!tm_validate());
	ck_assert_uint_eq(b[0], 1);
	tm_st(&b[0], 4);
	ck_assert(tm_commit());
	ck_assert_uint_eq(b[0], 4);
}
END_TEST

/* Lines for a read set of many entries (validation's steps of four and
 * what is left over). */
#define NLINES 13
static uint64_t lines[NLINES][8] __attribute__((aligned(64)));
static int victim;

static void peer_update_victim(void *arg)
{
	do
		tm_st(&lines[victim][0], tm_ltx(&lines[victim][0]) + 1);
	while (!tm_commit());
}

/*
 * Read lines 0..n-1 (one read-set entry each), store to line own (< 0:
 * none) so that its orec is locked by us, let the peer commit to line
 * changed (< 0: to c, a line not read), then VALIDATE.  Returns its
 * answer; a transaction that passed it must commit (a failed VALIDATE
 * has ended it already).
 */
static bool validate_after(int n, int own, int changed)
{
	bool valid;

	for (int i = 0; i < n; i++)
		ck_assert_uint_eq(tm_lt(&lines[i][0]), lines[i][0]);
	if (own >= 0)
		tm_st(&lines[own][1], 5);
	if (changed >= 0) {
		victim = changed;
		other(peer_update_victim);
	} else {
		other(peer_update_c);
	}
	valid = tm_validate();
	if (valid)
		ck_assert(tm_commit());
	return valid;
}

/* Validation finds a changed line wherever it is in the read set, and
 * takes a line the transaction itself holds since it read it for valid:
 * every length from 1 to NLINES, every position of the changed line,
 * with and without a held line at every position. */
START_TEST(test_validation_finds_a_changed_line_anywhere)
{
	init();
	for (int n = 1; n <= NLINES; n++) {
		for (int own = -1; own < n; own++) {
			ck_assert_msg(validate_after(n, own, -1),
				      "%d lines, held %d, none changed: "
				      "not valid",
				      n, own);
			for (int k = 0; k < n; k++) {
				if (k == own)
					continue;
				ck_assert_msg(!validate_after(n, own, k),
					      "%d lines, held %d, line %d "
					      "changed: valid",
					      n, own, k);
			}
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("invisible");
	TCase *tc = tcase_create("two-thread scripts");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_lt_then_lt_both_commit);
	tcase_add_test(tc, test_ltx_of_a_line_held_in_e_dooms_the_requester);
	tcase_add_test(tc, test_lt_of_a_written_line_dooms_the_reader);
	tcase_add_test(tc,
		       test_st_after_invisible_lt_dooms_the_reader_at_validate);
	tcase_add_test(tc, test_live_transaction_never_sees_a_torn_snapshot);
	tcase_add_test(tc, test_unrelated_commit_extends_the_snapshot);
	tcase_add_test(tc, test_update_commit_fails_if_a_read_line_changed);
	tcase_add_test(tc, test_doomed_transaction_releases_its_lines);
	tcase_add_test(tc, test_validation_finds_a_changed_line_anywhere);
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
