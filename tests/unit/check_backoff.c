/* SPDX-License-Identifier: MIT */
/* The backoff windows, and the auto policy's controller (rt/backoff.h). */
#include <ltx/tm.h>

#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arch/arch.h"
#include "rt/backoff.h"
#include "tx/desc.h"
#include "ltx-test.h"

static const struct ltx_backoff_cfg dflt = { LTX_BACKOFF_AUTO, 64, 65536 };

/* The windows as ltx(7) states them: min doubling per failure, at most
 * max; scaled, min << shift and max << (shift, at most 2). */
START_TEST(test_window_doubles_to_max_and_scales)
{
	static const struct ltx_backoff_cfg top = { LTX_BACKOFF_EXP, 1ull << 40,
						    1ull << 40 };
	uint64_t w = 64;

	for (unsigned n = 1; n < 100; n++) {
		ck_assert_uint_eq(ltx_backoff_window(&dflt, n, 0), w);
		if (w < 65536)
			w *= 2;
	}
	ck_assert_uint_eq(ltx_backoff_window(&dflt, 0, 0), 64);
	ck_assert_uint_eq(ltx_backoff_window(&dflt, 1, 3), 512);
	ck_assert_uint_eq(ltx_backoff_window(&dflt, 1, 6), 4096);
	ck_assert_uint_eq(ltx_backoff_window(&dflt, 2, 6), 8192);
	ck_assert_uint_eq(ltx_backoff_window(&dflt, 30, 3), 65536 * 4);
	ck_assert_uint_eq(ltx_backoff_window(&dflt, 30, 6), 65536 * 4);
	/* The largest values allowed: no bit is lost on the way to max. */
	for (unsigned n = 1; n < 70; n++)
		for (unsigned s = 0; s <= 6; s += 3)
			ck_assert_uint_eq(ltx_backoff_window(&top, n, s),
					  (1ull << 40) << (s > 2 ? 2 : s));
}
END_TEST

/*
 * A program simulated epoch by epoch: the measure grows in each epoch by
 * rate[arm in force].  Returns the shift in force after epochs epochs,
 * and counts how many of them ran each shift.
 */
struct sim {
	struct ltx_backoff_adapt a;
	uint64_t now, progress;
	unsigned ran[7];
};

/* A fresh controller past its first epoch, which is never scored (the
 * start-up): the arm x1 is the one measured next. */
static void sim_init(struct sim *s)
{
	memset(s, 0, sizeof(*s));
	s->a.len = LTX_BACKOFF_KEEP_MIN / 2; /* as ltx_backoff_auto's */
	s->now = 1ull << 50;		     /* room to go back */
	ck_assert_uint_eq(ltx_backoff_adapt_step(&s->a, s->now, &s->progress),
			  0);
	s->progress += 1ull << 30; /* whatever it does, it is not scored */
	s->now += LTX_BACKOFF_EPOCH;
	ck_assert_uint_eq(ltx_backoff_adapt_step(&s->a, s->now, &s->progress),
			  0);
	ck_assert_uint_eq(s->a.epochs, 0);
	ck_assert_uint_eq(s->a.skipped, 1);
	ck_assert_uint_eq(s->a.arm, 0);
}

static unsigned sim_run(struct sim *s, const uint64_t rate[7], unsigned epochs)
{
	unsigned shift = ltx_backoff_adapt_step(&s->a, s->now, &s->progress);

	for (unsigned e = 0; e < epochs; e++) {
		ck_assert(shift == 0 || shift == 3 || shift == 6);
		s->ran[shift]++;
		/* Calls inside the epoch change nothing. */
		s->progress += rate[shift];
		s->now += LTX_BACKOFF_EPOCH / 2;
		ck_assert_uint_eq(
			ltx_backoff_adapt_step(&s->a, s->now, &s->progress),
			shift);
		s->now += LTX_BACKOFF_EPOCH / 2;
		shift = ltx_backoff_adapt_step(&s->a, s->now, &s->progress);
	}
	return shift;
}

/* Each arm measured once, then the best kept: the longest window where it
 * does most, none where the shortest does. */
START_TEST(test_controller_keeps_the_arm_that_does_most)
{
	static const uint64_t long_best[7] = { 1000, 0, 0, 1500, 0, 0, 3000 };
	static const uint64_t mid_best[7] = { 1000, 0, 0, 3000, 0, 0, 1500 };
	static const uint64_t short_best[7] = { 3000, 0, 0, 1500, 0, 0, 1000 };
	struct sim s;

	sim_init(&s);
	ck_assert_uint_eq(sim_run(&s, long_best, 3), 6);
	ck_assert_uint_eq(s.ran[0] + s.ran[3] + s.ran[6], 3);
	ck_assert_uint_eq(s.ran[3], 1);
	ck_assert_uint_eq(sim_run(&s, long_best, 200), 6);
	ck_assert_uint_ge(s.ran[6], 190);
	sim_init(&s);
	ck_assert_uint_eq(sim_run(&s, mid_best, 100), 3);
	ck_assert_uint_ge(s.ran[3], 90);
	sim_init(&s);
	ck_assert_uint_eq(sim_run(&s, short_best, 100), 0);
	ck_assert_uint_ge(s.ran[0], 90);
}
END_TEST

/* A longer window must do an eighth more than a shorter one to be kept:
 * 10% more is noise. */
START_TEST(test_controller_prefers_the_shorter_window_within_an_eighth)
{
	static const uint64_t close[7] = { 10000, 0, 0, 10900, 0, 0, 11000 };
	static const uint64_t clear[7] = { 10000, 0, 0, 10900, 0, 0, 11300 };
	struct sim s;

	sim_init(&s);
	ck_assert_uint_eq(sim_run(&s, close, 50), 0);
	sim_init(&s);
	ck_assert_uint_eq(sim_run(&s, clear, 50), 6);
}
END_TEST

/*
 * The kept arm is measured against the others again after 4, 8, 16, 32
 * and then every 64 epochs while it keeps winning; when another one wins,
 * the controller changes to it at that measurement, and keeps it 4 epochs
 * before measuring again.
 */
START_TEST(test_controller_measures_again_and_follows_a_change)
{
	static const uint64_t short_best[7] = { 3000, 0, 0, 1500, 0, 0, 1000 };
	static const uint64_t long_best[7] = { 1000, 0, 0, 1500, 0, 0, 3000 };
	static const unsigned keep[] = { 4, 8, 16, 32, 64, 64, 64 };
	struct sim s;
	unsigned e = 3;

	sim_init(&s);
	ck_assert_uint_eq(sim_run(&s, short_best, 3), 0);
	for (unsigned k = 0; k < sizeof(keep) / sizeof(keep[0]); k++) {
		/* Kept keep[k] epochs, then measured: 3 epochs on the arms. */
		ck_assert_uint_eq(s.a.len, keep[k]);
		memset(s.ran, 0, sizeof(s.ran));
		ck_assert_uint_eq(sim_run(&s, short_best, keep[k] + 3), 0);
		ck_assert_uint_eq(s.ran[0], keep[k] + 1);
		ck_assert_uint_eq(s.ran[3], 1);
		ck_assert_uint_eq(s.ran[6], 1);
		e += keep[k] + 3;
	}
	ck_assert_uint_eq(s.a.epochs, e);
	/* The program changes: at most 64 + 3 epochs to follow it. */
	memset(s.ran, 0, sizeof(s.ran));
	ck_assert_uint_eq(sim_run(&s, long_best, 64 + 3), 6);
	ck_assert_uint_eq(s.a.len, LTX_BACKOFF_KEEP_MIN);
}
END_TEST

/* Whoever finds the controller held does not wait, and changes nothing;
 * a fork's reset frees it and starts a new epoch without scoring one. */
START_TEST(test_controller_never_waits_and_resets)
{
	static const uint64_t long_best[7] = { 1000, 0, 0, 1500, 0, 0, 3000 };
	struct sim s;
	uint64_t epochs;

	sim_init(&s);
	ck_assert_uint_eq(sim_run(&s, long_best, 10), 6);
	epochs = s.a.epochs;
	s.a.lock = 1; /* another thread is closing the epoch */
	s.now += 10 * LTX_BACKOFF_EPOCH;
	ck_assert_uint_eq(ltx_backoff_adapt_step(&s.a, s.now, &s.progress), 6);
	ck_assert_uint_eq(s.a.epochs, epochs);
	ltx_backoff_adapt_reset(&s.a);
	ck_assert_int_eq(s.a.lock, 0);
	/* The next call starts an epoch, the child's first: not scored. */
	s.progress += 1ull << 40;
	ck_assert_uint_eq(ltx_backoff_adapt_step(&s.a, s.now, &s.progress), 6);
	ck_assert_uint_eq(s.a.epochs, epochs);
	s.now += LTX_BACKOFF_EPOCH;
	(void)ltx_backoff_adapt_step(&s.a, s.now, &s.progress);
	ck_assert_uint_eq(s.a.epochs, epochs);
	ck_assert_uint_eq(s.a.skipped, 2);
	s.now += LTX_BACKOFF_EPOCH;
	(void)ltx_backoff_adapt_step(&s.a, s.now, &s.progress);
	ck_assert_uint_eq(s.a.epochs, epochs + 1);
	/* A cycle count a little behind the epoch's start (read just before
	 * another thread started it) changes nothing; one far behind (a
	 * counter that went back) starts an epoch over, unscored. */
	s.now -= 5;
	(void)ltx_backoff_adapt_step(&s.a, s.now, &s.progress);
	ck_assert_uint_eq(s.a.epochs, epochs + 1);
	s.now += 5 + LTX_BACKOFF_EPOCH - 1;
	(void)ltx_backoff_adapt_step(&s.a, s.now, &s.progress);
	ck_assert_uint_eq(s.a.epochs, epochs + 1);
	s.now -= 1000 * LTX_BACKOFF_EPOCH;
	(void)ltx_backoff_adapt_step(&s.a, s.now, &s.progress);
	ck_assert_uint_eq(s.a.epochs, epochs + 1);
	s.now += LTX_BACKOFF_EPOCH;
	(void)ltx_backoff_adapt_step(&s.a, s.now, &s.progress);
	ck_assert_uint_eq(s.a.epochs, epochs + 2);
}
END_TEST

/*
 * More threads than cores step one controller, round by round, all with
 * the cycle count one epoch after the last round's: with the try-lock
 * working, the first to take it closes the epoch and every other one
 * finds it closed, so each round closes exactly one (the first unscored,
 * the others scored); two threads inside at once would close a round's
 * epoch twice.
 */
#define THREADS 8
#define ROUNDS	4000

static struct ltx_backoff_adapt shared_a = { .len = LTX_BACKOFF_KEEP_MIN / 2 };
static uint64_t shared_progress;
static pthread_barrier_t round_barrier;

static void *stepper(void *arg)
{
	(void)arg;
	for (uint64_t r = 1; r <= ROUNDS; r++) {
		unsigned shift;

		pthread_barrier_wait(&round_barrier);
		__atomic_add_fetch(&shared_progress, 3, __ATOMIC_RELAXED);
		shift = ltx_backoff_adapt_step(
			&shared_a, (1ull << 40) + r * LTX_BACKOFF_EPOCH,
			&shared_progress);
		ck_assert(shift == 0 || shift == 3 || shift == 6);
	}
	return NULL;
}

START_TEST(test_controller_closes_each_epoch_once_under_threads)
{
	pthread_t t[THREADS];

	ck_assert_int_eq(pthread_barrier_init(&round_barrier, NULL, THREADS),
			 0);
	/* Round 0: the first epoch starts. */
	(void)ltx_backoff_adapt_step(&shared_a, 1ull << 40, &shared_progress);
	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, stepper, NULL), 0);
	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	/* Round 1 closed the first epoch, which is never scored. */
	ck_assert_uint_eq(shared_a.epochs, ROUNDS - 1);
	ck_assert_uint_eq(shared_a.skipped, 1);
	ck_assert_int_eq(shared_a.lock, 0);
	ck_assert_uint_le(shared_a.arm, LTX_BACKOFF_ARMS);
	pthread_barrier_destroy(&round_barrier);
}
END_TEST

/* The library's own controller is stepped by a backoff under the auto
 * policy, and by none under exp or without a measure: after a sleep far
 * longer than two epochs at any clock rate above 200 MHz, the first step
 * starts a new epoch, and scores none (it was too long). */
START_TEST(test_auto_policy_steps_the_process_controller)
{
	static const struct ltx_backoff_cfg exp = { LTX_BACKOFF_EXP, 1, 2 };
	static const struct ltx_backoff_cfg aut = { LTX_BACKOFF_AUTO, 1, 2 };
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	uint64_t rng = 88172645463325252ull, progress = 0, start, epochs;
	unsigned shift = 9;

	/* Starts an epoch. */
	(void)ltx_backoff_delay(&aut, 1, &rng, &progress, &shift);
	ck_assert_uint_eq(shift, 0);
	start = ltx_backoff_auto.start;
	epochs = ltx_backoff_auto.epochs;
	ck_assert_uint_ne(start, 0);
	nanosleep(&ts, NULL);
	(void)ltx_backoff_delay(&exp, 1, &rng, &progress, &shift);
	(void)ltx_backoff_delay(&aut, 1, &rng, NULL, &shift);
	ck_assert_uint_eq(ltx_backoff_auto.start, start);
	(void)ltx_backoff_delay(&aut, 1, &rng, &progress, &shift);
	ck_assert_uint_gt(ltx_backoff_auto.start, start);
	ck_assert_uint_eq(ltx_backoff_auto.epochs, epochs);
	ck_assert_uint_eq(ltx_backoff_auto.skipped, 1);
}
END_TEST

/* An epoch that lasted more than two is not scored, and the arm it ran
 * is measured again; one of two exactly is. */
START_TEST(test_controller_skips_an_epoch_with_a_gap)
{
	static const uint64_t long_best[7] = { 1000, 0, 0, 1500, 0, 0, 3000 };
	struct sim s;

	sim_init(&s);
	ck_assert_uint_eq(sim_run(&s, long_best, 1), 3);
	/* Arm 1 runs, then nothing backs off for a while. */
	s.progress += 1ull << 30;
	s.now += 3 * LTX_BACKOFF_EPOCH;
	ck_assert_uint_eq(ltx_backoff_adapt_step(&s.a, s.now, &s.progress), 3);
	ck_assert_uint_eq(s.a.epochs, 1);
	ck_assert_uint_eq(s.a.skipped, 2);
	ck_assert_uint_eq(s.a.arm, 1);
	/* Measured again, two epochs long: scored. */
	s.progress += 1500;
	s.now += 2 * LTX_BACKOFF_EPOCH;
	ck_assert_uint_eq(ltx_backoff_adapt_step(&s.a, s.now, &s.progress), 6);
	ck_assert_uint_eq(s.a.epochs, 2);
	ck_assert_uint_eq(s.a.skipped, 2);
	ck_assert_uint_eq(sim_run(&s, long_best, 1), 6);
	ck_assert_uint_eq(s.a.rate[1],
			  (1500ull << 20) / (2 * LTX_BACKOFF_EPOCH));
}
END_TEST

/*
 * A failed VALIDATE backs off in the window the process's controller
 * keeps, and counts it in backoff_scaled (ltxstat's "backoffs in wider
 * windows") when that window is scaled up; with exp it is never scaled.
 * The controller is set to keep min x8 for its whole keeping time, so a
 * descheduled test does not see it measure.
 */
static tm_word_t word __attribute__((aligned(64)));

static void peer_write(void *arg)
{
	(void)arg;
	tm_st(&word, tm_lt(&word) + 1);
	ck_assert(tm_commit());
}

static uint64_t fail_validate(struct ltx_test_peer *peer)
{
	uint64_t before = ltx_self->stats.backoff_cycles;

	(void)tm_lt(&word);
	ltx_test_peer_run(peer, peer_write, NULL);
	ck_assert(!tm_validate());
	/* A delay drawn from [0, window) may be 0 (spin_for(0) spends no
	 * cycle): one draw in a window's length; the count of scaled
	 * backoffs is what this test checks. */
	ck_assert_uint_ge(ltx_self->stats.backoff_cycles, before);
	return ltx_self->stats.backoff_scaled;
}

START_TEST(test_scaled_backoffs_are_counted)
{
	struct ltx_test_peer peer;

	/* The policy under test and no serial fallback, whatever
	 * LTX_BACKOFF and LTX_SERIAL_AFTER say. */
	ck_assert_int_eq(tm_config_set("LTX_MODE", "invisible"), 0);
	ck_assert_int_eq(tm_config_set("LTX_BACKOFF", "auto"), 0);
	ck_assert_int_eq(tm_config_set("LTX_SERIAL_AFTER", "0"), 0);
	ltx_test_peer_start(&peer);
	(void)tm_lt(&word); /* the thread's descriptor */
	ck_assert(tm_commit());
	ltx_backoff_auto.arm = LTX_BACKOFF_ARMS;
	ltx_backoff_auto.best = 1;
	ltx_backoff_auto.len = ltx_backoff_auto.left = LTX_BACKOFF_KEEP_MAX;
	ltx_backoff_auto.shift = ltx_backoff_shifts[1];
	ltx_backoff_auto.start = ltx_cycles();
	ck_assert_uint_eq(ltx_self->stats.backoff_scaled, 0);
	ck_assert_uint_eq(fail_validate(&peer), 1);
	ck_assert_uint_eq(fail_validate(&peer), 2);
	ck_assert_int_eq(tm_config_set("LTX_BACKOFF", "exp"), 0);
	ck_assert_uint_eq(fail_validate(&peer), 2);
	ck_assert_int_eq(tm_config_set("LTX_BACKOFF", "auto"), 0);
	ck_assert_uint_eq(fail_validate(&peer), 3);
	ltx_test_peer_stop(&peer);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("backoff");
	TCase *tc = tcase_create("backoff");

	tcase_add_test(tc, test_window_doubles_to_max_and_scales);
	tcase_add_test(tc, test_controller_keeps_the_arm_that_does_most);
	tcase_add_test(
		tc,
		test_controller_prefers_the_shorter_window_within_an_eighth);
	tcase_add_test(tc, test_controller_measures_again_and_follows_a_change);
	tcase_add_test(tc, test_controller_never_waits_and_resets);
	tcase_add_test(tc, test_controller_skips_an_epoch_with_a_gap);
	tcase_add_test(tc,
		       test_controller_closes_each_epoch_once_under_threads);
	tcase_add_test(tc, test_auto_policy_steps_the_process_controller);
	tcase_add_test(tc, test_scaled_backoffs_are_counted);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
