/* SPDX-License-Identifier: MIT */
/* Irrevocable transactions and the serial fallback, in every mode. */
#include <ltx/tm.h>

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bank.h"
#include "ltx-test.h"
#include "tx/desc.h"
#include "tx/tx.h"

static tm_word_t a;

START_TEST(test_irrevocable_outside_transaction_begins_one)
{
	if (!ltx_test_use_mode(_i))
		return;
	ck_assert(!tm_in_transaction());
	ck_assert(tm_irrevocable());
	ck_assert(tm_in_transaction());
	ck_assert(ltx_self->cd.irrevocable);
	ck_assert(tm_irrevocable()); /* again: still */
	tm_st(&a, 5);
	ck_assert(tm_commit());
	ck_assert(!ltx_self->cd.irrevocable);
	ck_assert_uint_eq(a, 5);
}
END_TEST

/* 16 orecs (LTX_OREC_BITS=4), every one held by a peer's transaction:
 * 32 lines in a row take 33 orec indices, every residue. */
static tm_word_t held[32][8] __attribute__((aligned(64)));
static bool peer_committed;

static void hold_every_orec(void *arg)
{
	(void)arg;
	for (int i = 0; i < 32; i++)
		(void)tm_ltx(&held[i][0]);
	ck_assert(tm_in_transaction());
}

static void commit_held(void *arg)
{
	(void)arg;
	peer_committed = tm_commit();
}

/*
 * tm_irrevocable() with no transaction open begins one that has read
 * nothing, so it must not fail for a line another transaction holds: it
 * once began by a tm_lt of a word of its own, whose orec another
 * transaction may hold (every one here; any one of them, rarely, at the
 * default size), and then returned false.  The peer's transaction is
 * untouched and commits.
 */
START_TEST(test_irrevocable_from_idle_ignores_held_lines)
{
	struct ltx_test_peer holder;

	ck_assert_int_eq(tm_config_set("LTX_OREC_BITS", "4"), 0);
	if (!ltx_test_use_mode(_i))
		return;
	ltx_test_peer_start(&holder);
	ltx_test_peer_run(&holder, hold_every_orec, NULL);
	ck_assert(!tm_in_transaction());
	ck_assert_msg(tm_irrevocable(), "tm_status %#x", tm_status());
	ck_assert(ltx_self->cd.irrevocable);
	ck_assert(tm_commit());
	ltx_test_peer_run(&holder, commit_held, NULL);
	ltx_test_peer_stop(&holder);
	ck_assert(peer_committed);
}
END_TEST

START_TEST(test_serial_fallback_after_k_consecutive_aborts)
{
	volatile int runs = 0, irrevocable_run = 0;

	if (!ltx_test_use_mode(_i))
		return;
	ck_assert_int_eq(tm_config_set("LTX_SERIAL_AFTER", "3"), 0);
	TM_ATOMIC {
		runs++;
		tm_st(&a, (tm_word_t)runs);
		if (ltx_self->cd.irrevocable)
			irrevocable_run = runs;
		else
			tm_retry();
	}
	ck_assert_int_eq(runs, 4);
	ck_assert_int_eq(irrevocable_run, 4);
	ck_assert_uint_eq(a, 4);
	/* Plain code: the next transaction after 3 aborts goes serial. */
	for (int i = 0; i < 3; i++) {
		tm_st(&a, 0);
		tm_retry();
	}
	(void)tm_lt(&a);
	ck_assert(ltx_self->cd.irrevocable);
	ck_assert(tm_commit());
	/* 0: never. */
	ck_assert_int_eq(tm_config_set("LTX_SERIAL_AFTER", "0"), 0);
	runs = 0;
	TM_ATOMIC {
		ck_assert(!ltx_self->cd.irrevocable);
		if (++runs < 200)
			tm_retry();
	}
	ck_assert_int_eq(runs, 200);
	ck_assert_int_eq(tm_config_set("LTX_SERIAL_AFTER", "16"),
			 0); /* the default */
}
END_TEST

START_TEST(test_serial_after_setting_rejects_bad_values)
{
	char buf[32];

	ck_assert_int_eq(tm_config_set("LTX_SERIAL_AFTER", "-1"), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(tm_config_get("LTX_SERIAL_AFTER", buf, sizeof(buf)),
			 0);
	ck_assert_str_eq(buf, "16"); /* unchanged: the default */
}
END_TEST

#define THREADS	  4
#define ACCOUNTS  32
#define INITIAL	  100
#define TRANSFERS 20000

static struct bank bank;

struct worker {
	int id;
	unsigned long irrevocable, restarted_after_irrevocable, audits_bad;
};

/* One transfer; a separate function keeps the caller's locals out of the
 * block's setjmp frame (TM_ATOMIC(3)). */
static void transfer(struct worker *w, unsigned from, unsigned to,
		     bool go_irrevocable)
{
	tm_word_t *src = bank_balance(&bank, from);
	tm_word_t *dst = bank_balance(&bank, to);
	volatile int became = 0;

	TM_ATOMIC {
		tm_word_t x;

		if (became)
			w->restarted_after_irrevocable++;
		x = tm_lt(src);
		if (go_irrevocable) {
			/* In a block: true, or the block restarts. */
			ck_assert(tm_irrevocable());
			became = 1;
		}
		tm_st(src, x - 1);
		tm_st(dst, tm_lt(dst) + 1);
	}
	if (became)
		w->irrevocable++;
}

static void *bank_worker(void *arg)
{
	struct worker *w = arg;
	unsigned seed = (unsigned)w->id * 31u + 7;

	for (int n = 0; n < TRANSFERS; n++) {
		unsigned from = (unsigned)rand_r(&seed) % ACCOUNTS;
		unsigned to = (unsigned)rand_r(&seed) % ACCOUNTS;

		transfer(w, from, to, (n % 16) == w->id);
		if (n % 64 == 0 &&
		    bank_audit(&bank) != (tm_word_t)ACCOUNTS * INITIAL)
			w->audits_bad++;
	}
	return NULL;
}

START_TEST(test_irrevocable_interleaved_with_ordinary_keeps_invariants)
{
	pthread_t t[THREADS];
	struct worker w[THREADS];

	if (!ltx_test_use_mode(_i))
		return;
	ck_assert_int_eq(tm_config_set("LTX_SERIAL_AFTER", "4"), 0);
	bank_open(&bank, ACCOUNTS, INITIAL);
	for (int i = 0; i < THREADS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].id = i;
		ck_assert_int_eq(
			pthread_create(&t[i], NULL, bank_worker, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		ck_assert_uint_eq(w[i].restarted_after_irrevocable, 0);
		ck_assert_uint_eq(w[i].audits_bad, 0);
		ck_assert_uint_eq(w[i].irrevocable, TRANSFERS / 16);
	}
	ck_assert_uint_eq(bank_total(&bank), (tm_word_t)ACCOUNTS * INITIAL);
	ck_assert_int_eq(tm_config_set("LTX_SERIAL_AFTER", "16"),
			 0); /* the default */
}
END_TEST

/*
 * Progress (DESIGN.md): an irrevocable transaction never waits for one
 * that is not committing.  R takes a line (LT, LTX or ST) and then blocks,
 * inside its transaction, until W has committed: W fails on the line
 * until the serial fallback (or tm_irrevocable) makes it irrevocable, and
 * then must doom R and take the line, or both wait for ever (the test
 * times out).  R then sees its doom: loads return 0, its buffered store
 * never reaches memory, its commit fails with TM_ABORT_CONFLICT.
 */
enum take { TAKE_LT, TAKE_LTX, TAKE_ST };

struct stalled {
	enum take how;
	bool unslotted;	  /* visible: R has no reader byte */
	tm_word_t reread; /* R's load after W's commit */
	bool committed;	  /* R's tm_commit */
	unsigned status;  /* R's tm_status after it */
};

static tm_word_t contested[2][8] __attribute__((aligned(64)));

/* R's first step: take the line; R then waits, inside its transaction and
 * outside ltx, for its next step (the step harness, common/ltx-test.h). */
static void stalled_take(void *arg)
{
	struct stalled *r = arg;

	if (r->unslotted) /* white box, as in check_conflict */
		ltx_tx_self()->cd.slot = 1000;
	switch (r->how) {
	case TAKE_LT:
		(void)tm_lt(&contested[0][0]);
		break;
	case TAKE_LTX:
		(void)tm_ltx(&contested[0][0]);
		break;
	case TAKE_ST:
		tm_st(&contested[0][0], 99);
		break;
	}
	ck_assert(tm_in_transaction());
}

/* R's second step, once W has committed. */
static void stalled_finish(void *arg)
{
	struct stalled *r = arg;

	r->reread = tm_lt(&contested[1][0]);
	r->committed = tm_commit();
	r->status = tm_status();
}

/* W on the calling thread against R holding contested[0] as r says;
 * explicit: W calls tm_irrevocable() instead of waiting for the fallback.
 * Returns W's attempts. */
static int irrevocable_against_stalled(struct stalled *r, bool explicit)
{
	struct ltx_test_peer holder;
	int attempts = 0;

	contested[0][0] = 0;
	contested[1][0] = 0;
	ck_assert_int_eq(tm_config_set("LTX_SERIAL_AFTER", "3"), 0);
	ltx_test_peer_start(&holder);
	ltx_test_peer_run(&holder, stalled_take, r);
	do {
		attempts++;
		if (explicit)
			ck_assert(tm_irrevocable());
		tm_st(&contested[0][0], 1);
		tm_st(&contested[1][0], 7);
	} while (!tm_commit());
	ltx_test_peer_run(&holder, stalled_finish, r);
	ltx_test_peer_stop(&holder);
	ck_assert_uint_eq(contested[0][0], 1);
	ck_assert_uint_eq(contested[1][0], 7);
	ck_assert_int_eq(tm_config_set("LTX_SERIAL_AFTER", "16"),
			 0); /* the default */
	return attempts;
}

/* _i: mode (bit 0), how R takes the line (bits 1-2), R unslotted (bit 3). */
START_TEST(test_irrevocable_dooms_stalled_holder)
{
	struct stalled r = { .how = (enum take)((_i >> 1) & 3),
			     .unslotted = (_i & 8) != 0 };
	int attempts;

	if (r.how > TAKE_ST || !ltx_test_use_mode(_i & 1))
		return;
	if (r.unslotted && (_i & 1) == 0)
		return; /* slots: the visible mode's */
	attempts = irrevocable_against_stalled(&r, false);
	/* An invisible read holds nothing: W commits at once, and R fails
	 * to extend its snapshot over W's commit.  Otherwise three aborts,
	 * then the fourth runs irrevocable and wins. */
	ck_assert_int_eq(attempts, (_i & 1) == 0 && r.how == TAKE_LT ? 1 : 4);
	ck_assert_uint_eq(r.reread, 0);
	ck_assert(!r.committed);
	ck_assert(r.status & TM_ABORT_CONFLICT);
}
END_TEST

START_TEST(test_explicit_irrevocable_dooms_stalled_holder)
{
	struct stalled r = { .how = (_i & 2) ? TAKE_ST : TAKE_LTX };

	if (!ltx_test_use_mode(_i & 1))
		return;
	ck_assert_int_eq(irrevocable_against_stalled(&r, true), 1);
	ck_assert_uint_eq(r.reread, 0);
	ck_assert(!r.committed);
	ck_assert(r.status & TM_ABORT_CONFLICT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("irrevocable");
	TCase *tc = tcase_create("irrevocable");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_irrevocable_outside_transaction_begins_one,
			    0, LTX_TEST_NMODES);
	tcase_add_loop_test(tc, test_serial_fallback_after_k_consecutive_aborts,
			    0, LTX_TEST_NMODES);
	tcase_add_loop_test(tc, test_irrevocable_from_idle_ignores_held_lines,
			    0, LTX_TEST_NMODES);
	tcase_add_test(tc, test_serial_after_setting_rejects_bad_values);
	tcase_add_loop_test(
		tc, test_irrevocable_interleaved_with_ordinary_keeps_invariants,
		0, LTX_TEST_NMODES);
	suite_add_tcase(s, tc);
	tc = tcase_create("progress");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_irrevocable_dooms_stalled_holder, 0, 16);
	tcase_add_loop_test(tc, test_explicit_irrevocable_dooms_stalled_holder,
			    0, 4);
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
