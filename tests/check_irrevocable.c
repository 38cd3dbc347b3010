/* SPDX-License-Identifier: MIT */
/* Irrevocable transactions and the serial fallback, in every mode. */
#include <ltx/tm.h>

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tx/desc.h"

static const char *const modes[] = { "invisible", "visible" };
#define NMODES ((int)(sizeof(modes) / sizeof(modes[0])))

static bool use_mode(int i)
{
	if (tm_config_set("LTX_MODE", modes[i]) == 0)
		return true;
	ck_assert_int_eq(errno, EINVAL);
	return false;
}

static tm_word_t a;

START_TEST(test_irrevocable_outside_transaction_begins_one)
{
	if (!use_mode(_i))
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

START_TEST(test_serial_fallback_after_k_consecutive_aborts)
{
	volatile int runs = 0, irrevocable_run = 0;

	if (!use_mode(_i))
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
	ck_assert_int_eq(tm_config_set("LTX_SERIAL_AFTER", "16"), 0); /* the default */
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

#define THREADS 4
#define ACCOUNTS 32
#define INITIAL 100
#define TRANSFERS 20000

static tm_word_t accounts[ACCOUNTS][8] __attribute__((aligned(64)));

struct worker {
	int id;
	unsigned long irrevocable, restarted_after_irrevocable, audits_bad;
};

/* One transfer; a separate function keeps the caller's locals out of the
 * block's setjmp frame (TM_ATOMIC(3)). */
static void transfer(struct worker *w, unsigned from, unsigned to,
		     bool go_irrevocable)
{
	volatile int became = 0;

	TM_ATOMIC {
		tm_word_t x;

		if (became)
			w->restarted_after_irrevocable++;
		x = tm_lt(&accounts[from][0]);
		if (go_irrevocable) {
			/* In a block: true, or the block restarts. */
			ck_assert(tm_irrevocable());
			became = 1;
		}
		tm_st(&accounts[from][0], x - 1);
		tm_st(&accounts[to][0], tm_lt(&accounts[to][0]) + 1);
	}
	if (became)
		w->irrevocable++;
}

static tm_word_t audit(void)
{
	volatile tm_word_t sum = 0;

	TM_ATOMIC {
		sum = 0;
		for (int i = 0; i < ACCOUNTS; i++)
			sum += tm_lt(&accounts[i][0]);
	}
	return sum;
}

static void *bank_worker(void *arg)
{
	struct worker *w = arg;
	unsigned seed = (unsigned)w->id * 31u + 7;

	for (int n = 0; n < TRANSFERS; n++) {
		unsigned from = (unsigned)rand_r(&seed) % ACCOUNTS;
		unsigned to = (unsigned)rand_r(&seed) % ACCOUNTS;

		transfer(w, from, to, (n % 16) == w->id);
		if (n % 64 == 0 && audit() != (tm_word_t)ACCOUNTS * INITIAL)
			w->audits_bad++;
	}
	return NULL;
}

START_TEST(test_irrevocable_interleaved_with_ordinary_keeps_invariants)
{
	pthread_t t[THREADS];
	struct worker w[THREADS];
	tm_word_t sum = 0;

	if (!use_mode(_i))
		return;
	ck_assert_int_eq(tm_config_set("LTX_SERIAL_AFTER", "4"), 0);
	for (int i = 0; i < ACCOUNTS; i++)
		accounts[i][0] = INITIAL;
	for (int i = 0; i < THREADS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].id = i;
		ck_assert_int_eq(pthread_create(&t[i], NULL, bank_worker, &w[i]),
				 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		ck_assert_uint_eq(w[i].restarted_after_irrevocable, 0);
		ck_assert_uint_eq(w[i].audits_bad, 0);
		ck_assert_uint_eq(w[i].irrevocable, TRANSFERS / 16);
	}
	for (int i = 0; i < ACCOUNTS; i++)
		sum += accounts[i][0];
	ck_assert_uint_eq(sum, (tm_word_t)ACCOUNTS * INITIAL);
	ck_assert_int_eq(tm_config_set("LTX_SERIAL_AFTER", "16"), 0); /* the default */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("irrevocable");
	TCase *tc = tcase_create("irrevocable");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_irrevocable_outside_transaction_begins_one,
			    0, NMODES);
	tcase_add_loop_test(tc, test_serial_fallback_after_k_consecutive_aborts,
			    0, NMODES);
	tcase_add_test(tc, test_serial_after_setting_rejects_bad_values);
	tcase_add_loop_test(
		tc, test_irrevocable_interleaved_with_ordinary_keeps_invariants,
		0, NMODES);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
