/* SPDX-License-Identifier: MIT */
/*
 * tm_on_commit and tm_on_abort: a commit handler runs once, after its
 * transaction has committed, in the order registered; an abort handler
 * runs once per aborted attempt, in reverse order; neither runs for the
 * other outcome.  Registration begins a transaction, a handler runs
 * outside it, a TM_ATOMIC restart runs the failed attempt's abort
 * handlers and drops its commit handlers, a doomed transaction keeps its
 * abort handlers only, and a signal handler's transaction has room for
 * eight.  The last tests check the counts under contention, with more
 * threads than cores, in both modes, then under a storm of signals.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <ltx/tm.h>

#include "ltx-test.h"

static tm_word_t cell[8] __attribute__((aligned(64)));

/* What the handlers did, in order: each appends its tag. */
static char trace[64];
static size_t ntrace;

static void note(void *arg)
{
	ck_assert_uint_lt(ntrace, sizeof(trace) - 1);
	trace[ntrace++] = (char)(uintptr_t)arg;
	trace[ntrace] = '\0';
}

static void reset(void)
{
	ntrace = 0;
	trace[0] = '\0';
	cell[0] = 0;
}

#define TAG(c) ((void *)(uintptr_t)(c))

START_TEST(test_commit_runs_commit_handlers_in_order)
{
	reset();
	ck_assert_int_eq(tm_on_commit(note, TAG('a')), 0);
	ck_assert(tm_in_transaction()); /* registration began it */
	ck_assert_int_eq(tm_on_abort(note, TAG('x')), 0);
	tm_st(&cell[0], 7);
	ck_assert_int_eq(tm_on_commit(note, TAG('b')), 0);
	ck_assert_str_eq(trace, ""); /* nothing before the commit */
	ck_assert(tm_commit());
	ck_assert_str_eq(trace, "ab");
	ck_assert(!tm_in_transaction());
	/* Run once: the next transaction has none. */
	(void)tm_lt(&cell[0]);
	ck_assert(tm_commit());
	ck_assert_str_eq(trace, "ab");
}
END_TEST

START_TEST(test_abort_runs_abort_handlers_in_reverse)
{
	reset();
	(void)tm_lt(&cell[0]);
	ck_assert_int_eq(tm_on_abort(note, TAG('a')), 0);
	ck_assert_int_eq(tm_on_commit(note, TAG('x')), 0);
	ck_assert_int_eq(tm_on_abort(note, TAG('b')), 0);
	tm_st(&cell[0], 7);
	tm_abort();
	ck_assert_str_eq(trace, "ba");
	ck_assert(!tm_in_transaction());
	ck_assert_uint_eq(cell[0], 0);
	(void)tm_lt(&cell[0]);
	ck_assert(tm_commit());
	ck_assert_str_eq(trace, "ba");
}
END_TEST

/* A commit handler runs outside the transaction, after its stores are
 * published: its own transaction reads them. */
static tm_word_t seen;
static int seen_inside;

static void read_cell(void *arg)
{
	(void)arg;
	seen_inside = tm_in_transaction();
	TM_ATOMIC {
		seen = tm_lt(&cell[0]);
	}
}

START_TEST(test_handler_runs_after_the_commit_outside_it)
{
	reset();
	seen = 0;
	seen_inside = -1;
	TM_ATOMIC {
		tm_st(&cell[0], 42);
		ck_assert_int_eq(tm_on_commit(read_cell, NULL), 0);
	}
	ck_assert_int_eq(seen_inside, 0);
	ck_assert_uint_eq(seen, 42);
}
END_TEST

/* A commit handler that leaves a transaction of its own open, with a
 * handler of its own: that one runs when that transaction commits, and
 * the first handler does not run again. */
static void reopen(void *arg)
{
	note(arg);
	ck_assert_int_eq(tm_on_commit(note, TAG('n')), 0);
	tm_st(&cell[1], 5);
}

START_TEST(test_handler_may_leave_its_own_transaction_open)
{
	reset();
	tm_st(&cell[0], 1);
	ck_assert_int_eq(tm_on_commit(reopen, TAG('r')), 0);
	ck_assert(tm_commit());
	ck_assert_str_eq(trace, "r");
	ck_assert(tm_in_transaction()); /* the handler's */
	ck_assert(tm_commit());
	ck_assert_str_eq(trace, "rn");
	ck_assert_uint_eq(cell[1], 5);
	ck_assert(!tm_in_transaction());
}
END_TEST

START_TEST(test_restart_runs_abort_drops_commit)
{
	volatile int attempts = 0;

	reset();
	TM_ATOMIC {
		attempts++;
		tm_st(&cell[0], (tm_word_t)attempts);
		ck_assert_int_eq(
			tm_on_commit(note, attempts == 1 ? TAG('c') : TAG('C')),
			0);
		ck_assert_int_eq(
			tm_on_abort(note, attempts == 1 ? TAG('a') : TAG('A')),
			0);
		if (attempts == 1)
			tm_retry();
	}
	ck_assert_int_eq(attempts, 2);
	ck_assert_str_eq(trace, "aC");
	ck_assert_uint_eq(cell[0], 2);
}
END_TEST

START_TEST(test_nested_block_handlers_belong_to_the_outer)
{
	reset();
	TM_ATOMIC {
		tm_st(&cell[0], 1);
		TM_ATOMIC {
			ck_assert_int_eq(tm_on_commit(note, TAG('i')), 0);
		}
		ck_assert_str_eq(trace, ""); /* the outer has not committed */
		ck_assert_int_eq(tm_on_commit(note, TAG('o')), 0);
	}
	ck_assert_str_eq(trace, "io");
}
END_TEST

START_TEST(test_null_function_is_einval)
{
	reset();
	(void)tm_lt(&cell[0]);
	errno = 0;
	ck_assert_int_eq(tm_on_commit(NULL, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(tm_on_abort(NULL, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* The transaction goes on. */
	tm_st(&cell[0], 3);
	ck_assert(tm_commit());
	ck_assert_uint_eq(cell[0], 3);
}
END_TEST

/* A signal dooms the transaction it lands in (no restart point here):
 * from then on a commit handler is dropped, an abort handler kept. */
static void ignore(int sig)
{
	(void)sig;
}

START_TEST(test_doomed_transaction_keeps_abort_handlers_only)
{
	reset();
	ltx_test_set_handler(SIGUSR1, ignore, 0);
	tm_st(&cell[0], 5);
	ck_assert_int_eq(tm_on_commit(note, TAG('x')), 0);
	ck_assert_int_eq(tm_on_abort(note, TAG('a')), 0);
	raise(SIGUSR1);
	ck_assert_uint_ne(tm_status() & TM_ABORT_SIGNAL, 0);
	ck_assert_int_eq(tm_on_commit(note, TAG('y')), 0);
	ck_assert_int_eq(tm_on_abort(note, TAG('b')), 0);
	ck_assert(!tm_commit());
	ck_assert_str_eq(trace, "ba");
	ck_assert_uint_eq(cell[0], 0);
	signal(SIGUSR1, SIG_DFL);
}
END_TEST

#ifndef LTX_TEST_STATIC
/* A longjmp out of a TM_ATOMIC block ends its transaction as aborted (the
 * jump hook is libltx.so's: a static program keeps libc's longjmp). */
static jmp_buf out;

START_TEST(test_longjmp_out_of_a_block_runs_abort_handlers)
{
	reset();
	if (setjmp(out) == 0) {
		TM_ATOMIC {
			tm_st(&cell[0], 1);
			ck_assert_int_eq(tm_on_commit(note, TAG('x')), 0);
			ck_assert_int_eq(tm_on_abort(note, TAG('a')), 0);
			longjmp(out, 1);
		}
	}
	ck_assert_str_eq(trace, "a");
	ck_assert(!tm_in_transaction());
	ck_assert_uint_eq(cell[0], 0);
}
END_TEST
#endif

/* A thread that exits inside a transaction aborts it. */
static void *exit_inside(void *arg)
{
	(void)arg;
	tm_st(&cell[0], 1);
	ck_assert_int_eq(tm_on_commit(note, TAG('x')), 0);
	ck_assert_int_eq(tm_on_abort(note, TAG('e')), 0);
	pthread_exit(NULL);
}

START_TEST(test_thread_exit_runs_abort_handlers)
{
	pthread_t t;

	reset();
	ck_assert_int_eq(pthread_create(&t, NULL, exit_inside, NULL), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_str_eq(trace, "e");
	ck_assert_uint_eq(cell[0], 0);
}
END_TEST

/* A signal handler's transaction: eight handlers fit (it never
 * allocates); the ninth is ENOMEM, and the transaction goes on. */
static int handler_results[10];
static int handler_errno;
static int handler_commit;

static void in_handler(int sig)
{
	(void)sig;
	tm_st(&cell[1], 9);
	for (int i = 0; i < 9; i++)
		handler_results[i] = tm_on_commit(note, TAG('0' + i));
	handler_errno = errno;
	handler_commit = tm_commit();
}

START_TEST(test_signal_handler_transaction_has_room_for_eight)
{
	reset();
	cell[1] = 0;
	/* The thread's descriptor first: a handler's transactions run on
	 * its twin (on the thread's first use of ltx, on a new one). */
	(void)tm_lt(&cell[0]);
	ck_assert(tm_commit());
	ltx_test_set_handler(SIGUSR2, in_handler, 0);
	raise(SIGUSR2);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(handler_results[i], 0);
	ck_assert_int_eq(handler_results[8], -1);
	ck_assert_int_eq(handler_errno, ENOMEM);
	ck_assert(handler_commit);
	ck_assert_str_eq(trace, "01234567");
	ck_assert_uint_eq(cell[1], 9);
	signal(SIGUSR2, SIG_DFL);
}
END_TEST

/*
 * Under contention (six threads on however many cores, every transaction
 * on one counter): each attempt makes a side effect outside the
 * transaction (side++), its abort handler undoes it and its commit
 * handler counts the commit.  A runtime that ran a commit handler for an
 * aborted attempt, lost an abort handler or ran one twice, or ran either
 * before the outcome was final, breaks one of the three counts.
 */
#define THREADS 6
#define ROUNDS	2000

static tm_word_t counter[8] __attribute__((aligned(64)));
static long side;
static long commits_seen;

static void undo_side(void *arg)
{
	(void)arg;
	__atomic_fetch_sub(&side, 1, __ATOMIC_RELAXED);
}

static void count_commit(void *arg)
{
	long *mine = arg;

	(*mine)++;
	__atomic_fetch_add(&commits_seen, 1, __ATOMIC_RELAXED);
}

/* One increment (its own function: no loop variable lives across the
 * block's restart point, the setjmp rule of TM_ATOMIC(3)). */
static void one_round(long *mine)
{
	TM_ATOMIC {
		tm_word_t v = tm_ltx(&counter[0]);

		__atomic_fetch_add(&side, 1, __ATOMIC_RELAXED);
		if (tm_on_abort(undo_side, NULL) != 0)
			__atomic_fetch_sub(&side, 1, __ATOMIC_RELAXED);
		ck_assert_int_eq(tm_on_commit(count_commit, mine), 0);
		tm_st(&counter[0], v + 1);
	}
}

static void *contend(void *arg)
{
	for (int i = 0; i < ROUNDS; i++)
		one_round(arg);
	return NULL;
}

START_TEST(test_counts_under_contention)
{
	pthread_t t[THREADS];
	long mine[THREADS];

	if (!ltx_test_use_mode(_i))
		return;
	counter[0] = 0;
	side = 0;
	commits_seen = 0;
	for (int i = 0; i < THREADS; i++) {
		mine[i] = 0;
		ck_assert_int_eq(pthread_create(&t[i], NULL, contend, &mine[i]),
				 0);
	}
	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	ck_assert_uint_eq(counter[0], (tm_word_t)THREADS * ROUNDS);
	ck_assert_int_eq(commits_seen, (long)THREADS * ROUNDS);
	ck_assert_int_eq(side, (long)THREADS * ROUNDS);
	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(mine[i], ROUNDS);
}
END_TEST

#ifndef __SANITIZE_THREAD__ /* (suite() says why) */
/*
 * The same under a storm of signals: every signal dooms the transaction it
 * lands in (its abort handlers must then run, once), and its handler runs
 * a transaction of its own, on the thread's handler descriptor, with a
 * commit handler of its own.  Every handler transaction commits once and
 * is counted once by its commit handler.  (No Check assertion in the
 * signal handler: Check's are not async-signal-safe.)
 */
static tm_word_t hcounter[THREADS][8] __attribute__((aligned(64)));
static long hcommits[THREADS], hsignals[THREADS];
static int hfailed;
static __thread int my_slot = -1;

static void count_handler_commit(void *arg)
{
	(*(long *)arg)++;
}

static void storm_handler(int sig)
{
	int i = my_slot;

	(void)sig;
	if (i < 0)
		return;
	hsignals[i]++;
	TM_ATOMIC {
		tm_st(&hcounter[i][0], tm_ltx(&hcounter[i][0]) + 1);
		if (tm_on_commit(count_handler_commit, &hcommits[i]) != 0)
			hfailed = 1;
	}
}

static pthread_barrier_t storm_ready, storm_end;
static long storm_mine[THREADS];
static int storm_finished;
/* The contention test's work, this many times over, under the storm. */
#define STORM_REPEAT 5

static void *storm_worker(void *arg)
{
	long *mine = arg;

	/* A descriptor (and its handler twin) before the first signal. */
	(void)tm_lt(&counter[0]);
	ck_assert(tm_commit());
	my_slot = (int)(mine - storm_mine);
	pthread_barrier_wait(&storm_ready);
	for (int k = 0; k < STORM_REPEAT; k++)
		(void)contend(arg);
	/* Alive until the storm is over: a signal to an ended thread
	 * would be an error. */
	__atomic_fetch_add(&storm_finished, 1, __ATOMIC_RELEASE);
	pthread_barrier_wait(&storm_end);
	return NULL;
}

START_TEST(test_counts_under_a_signal_storm)
{
	pthread_t t[THREADS];
	struct timespec d = { 0, 50000 };
	long sent = 0, handled = 0;

	if (!ltx_test_use_mode(_i))
		return;
	counter[0] = 0;
	side = 0;
	commits_seen = 0;
	memset(hcounter, 0, sizeof(hcounter));
	memset(hcommits, 0, sizeof(hcommits));
	memset(hsignals, 0, sizeof(hsignals));
	hfailed = 0;
	ltx_test_set_handler(SIGUSR1, storm_handler, SA_RESTART);
	storm_finished = 0;
	ck_assert_int_eq(pthread_barrier_init(&storm_ready, NULL, THREADS + 1),
			 0);
	ck_assert_int_eq(pthread_barrier_init(&storm_end, NULL, THREADS + 1),
			 0);
	for (int i = 0; i < THREADS; i++) {
		storm_mine[i] = 0;
		ck_assert_int_eq(pthread_create(&t[i], NULL, storm_worker,
						&storm_mine[i]),
				 0);
	}
	pthread_barrier_wait(&storm_ready);
	/* A signal to every worker every 0.05 ms until all have done their
	 * work (they wait for the end of the storm before they exit). */
	while (__atomic_load_n(&storm_finished, __ATOMIC_ACQUIRE) < THREADS) {
		for (int i = 0; i < THREADS; i++) {
			ck_assert_int_eq(pthread_kill(t[i], SIGUSR1), 0);
			sent++;
		}
		nanosleep(&d, NULL);
	}
	pthread_barrier_wait(&storm_end);
	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	signal(SIGUSR1, SIG_DFL);
	pthread_barrier_destroy(&storm_ready);
	pthread_barrier_destroy(&storm_end);
	ck_assert_uint_eq(counter[0],
			  (tm_word_t)THREADS * ROUNDS * STORM_REPEAT);
	ck_assert_int_eq(commits_seen, (long)THREADS * ROUNDS * STORM_REPEAT);
	ck_assert_int_eq(side, (long)THREADS * ROUNDS * STORM_REPEAT);
	ck_assert_int_eq(hfailed, 0);
	for (int i = 0; i < THREADS; i++) {
		ck_assert_int_eq(storm_mine[i], ROUNDS * STORM_REPEAT);
		ck_assert_int_eq((long)hcounter[i][0], hsignals[i]);
		ck_assert_int_eq(hcommits[i], hsignals[i]);
		handled += hsignals[i];
	}
	/* Pending signals merge: at most sent, at least one. */
	ck_assert_int_gt(handled, 0);
	ck_assert_int_le(handled, sent);
}
END_TEST
#endif

static Suite *suite(void)
{
	Suite *s = suite_create("handlers");
	TCase *c = tcase_create("handlers");
	TCase *k = tcase_create("contention");

	tcase_add_test(c, test_commit_runs_commit_handlers_in_order);
	tcase_add_test(c, test_abort_runs_abort_handlers_in_reverse);
	tcase_add_test(c, test_handler_runs_after_the_commit_outside_it);
	tcase_add_test(c, test_handler_may_leave_its_own_transaction_open);
	tcase_add_test(c, test_restart_runs_abort_drops_commit);
	tcase_add_test(c, test_nested_block_handlers_belong_to_the_outer);
	tcase_add_test(c, test_null_function_is_einval);
	tcase_add_test(c, test_doomed_transaction_keeps_abort_handlers_only);
#ifndef LTX_TEST_STATIC
	tcase_add_test(c, test_longjmp_out_of_a_block_runs_abort_handlers);
#endif
	tcase_add_test(c, test_thread_exit_runs_abort_handlers);
	tcase_add_test(c, test_signal_handler_transaction_has_room_for_eight);
	suite_add_tcase(s, c);
	tcase_set_timeout(k, 60);
	tcase_add_loop_test(k, test_counts_under_contention, 0,
			    LTX_TEST_NMODES);
#ifndef __SANITIZE_THREAD__
	/* TSan holds signals back to its own points of delivery: a storm
	 * then takes minutes (as for the check_signal* suites, kept out of
	 * TSan runs). */
	tcase_add_loop_test(k, test_counts_under_a_signal_storm, 0,
			    LTX_TEST_NMODES);
#endif
	suite_add_tcase(s, k);
	return s;
}

int main(void)
{
	return ltx_test_run(suite());
}
