/* SPDX-License-Identifier: MIT */
/*
 * Every way out of a transaction (DESIGN.md): a longjmp out of a TM_ATOMIC
 * block, a siglongjmp out of a signal handler that interrupted a
 * transaction, pthread_exit and pthread_cancel inside a block (this file
 * is built with -fexceptions, so the block's cleanup runs during the
 * forced unwind).  Whatever the way out, no line stays owned -- another
 * thread can take it -- and the thread's next transactional operation
 * begins a new transaction.  Each case runs in both conflict-detection
 * modes (LTX_MODE is set per case, in its own process).
 */
#include <check.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ltx/tm.h>

#include "ltx-test.h"

static tm_word_t cell[8] __attribute__((aligned(64)));
static tm_word_t other[8] __attribute__((aligned(64)));
static tm_word_t many[100][8] __attribute__((aligned(64), unused));

static void set_mode(int i)
{
	ck_assert_int_eq(tm_config_set("LTX_MODE", ltx_test_modes[i]), 0);
	cell[0] = 0;
	other[0] = 0;
}

/* Another thread takes cell's line (LTX, ST) and commits: it must get it
 * within a second, or the line was left owned. */
static volatile int taken;

static void *take_cell(void *arg)
{
	(void)arg;
	TM_ATOMIC {
		tm_st(&cell[0], tm_ltx(&cell[0]) + 100);
	}
	taken = 1;
	return NULL;
}

static void assert_line_free(void)
{
	pthread_t t;
	struct timespec d = { 0, 1000000 };

	taken = 0;
	ck_assert_int_eq(pthread_create(&t, NULL, take_cell, NULL), 0);
	for (int i = 0; i < 2000 && !taken; i++)
		nanosleep(&d, NULL);
	ck_assert_msg(taken, "another thread could not take the line: it "
			     "was left owned");
	pthread_join(t, NULL);
}

/* The next block is an outermost one: its stores are committed. */
static void assert_next_block_commits(void)
{
	TM_ATOMIC {
		tm_st(&other[0], 9);
	}
	ck_assert_uint_eq(other[0], 9);
	ck_assert(!tm_in_transaction());
}

static jmp_buf out;

static __attribute__((noinline, unused)) void store_and_jump(void)
{
	tm_st(&cell[0], 5);
	longjmp(out, 1);
}

#ifndef LTX_TEST_STATIC
START_TEST(test_longjmp_out_of_tm_atomic_ends_the_block)
{
	volatile int jumped = 0;

	set_mode(_i);
	if (setjmp(out) == 0) {
		TM_ATOMIC {
			(void)tm_ltx(&cell[0]);
			store_and_jump();
		}
	} else {
		jumped = 1;
	}
	ck_assert(jumped);
	ck_assert_uint_eq(cell[0], 0); /* aborted: the store never landed */
	ck_assert(!tm_in_transaction());
	ck_assert_uint_eq(tm_status() & TM_ABORT_EXPLICIT, TM_ABORT_EXPLICIT);
	assert_line_free();
	ck_assert_uint_eq(cell[0], 100);
	assert_next_block_commits();
	/* tm_abort() in a later block leaves that block, and returns here. */
	TM_ATOMIC {
		tm_st(&other[0], 1);
		tm_abort();
	}
	ck_assert_uint_eq(other[0], 9);
}
END_TEST
#endif

/* A jump whose target lies inside the block's own frame depth (a setjmp
 * made in the body by a callee) does not leave the block. */
static __attribute__((noinline)) int jump_within(void)
{
	jmp_buf here;

	if (setjmp(here) == 0) {
		tm_st(&cell[0], 3);
		longjmp(here, 1);
	}
	return 1;
}

START_TEST(test_longjmp_inside_tm_atomic_stays_in_the_block)
{
	set_mode(_i);
	TM_ATOMIC {
		(void)tm_ltx(&cell[0]);
		ck_assert_int_eq(jump_within(), 1);
		ck_assert(tm_in_transaction());
		tm_st(&other[0], 4);
	}
	ck_assert_uint_eq(cell[0], 3);
	ck_assert_uint_eq(other[0], 4);
}
END_TEST

static sigjmp_buf from_handler;

static __attribute__((unused)) void jump_out(int sig)
{
	(void)sig;
	siglongjmp(from_handler, 1);
}

static void install(void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
}

#ifndef LTX_TEST_STATIC
START_TEST(test_siglongjmp_out_of_a_handler_aborts_and_restores)
{
	volatile int jumped = 0;

	set_mode(_i);
	install(jump_out);
	if (sigsetjmp(from_handler, 1) == 0) {
		/* A plain transaction holding the line, interrupted. */
		tm_st(&cell[0], tm_ltx(&cell[0]) + 1);
		raise(SIGUSR1);
		ck_abort_msg("the handler returned");
	} else {
		jumped = 1;
	}
	ck_assert(jumped);
	/* The transaction the signal interrupted is over: the next
	 * operation begins a new one, and the thread is on its own
	 * descriptor again (irrevocable works, which a handler's cannot). */
	ck_assert(!tm_in_transaction());
	ck_assert_uint_eq(tm_status() & TM_ABORT_SIGNAL, TM_ABORT_SIGNAL);
	ck_assert_uint_eq(cell[0], 0);
	assert_line_free();
	(void)tm_lt(&other[0]);
	ck_assert(tm_irrevocable());
	ck_assert(tm_commit());
	/* More lines than a handler's descriptor may hold (visible mode: it
	 * never grows its logs). */
	for (int i = 0; i < 100; i++)
		tm_st(&many[i][0], (tm_word_t)i + 1);
	ck_assert(tm_commit());
	ck_assert_uint_eq(many[99][0], 100);
}
END_TEST
#endif

#ifndef LTX_TEST_STATIC
/*
 * A handler on a thread that has no descriptor runs on a borrowed spare
 * (tx.c), which a jump out of the handler gives back as a return does:
 * after more rounds than there are spares, each a new thread jumping out
 * of its handler with a transaction left open, a handler still gets one
 * (a spare kept would make it wait for ever: the timeout), every
 * committed increment is there, and the open transactions are gone.
 */
#define JUMP_ROUNDS 5

static __thread sigjmp_buf thread_jump;

static void borrow_and_jump(int sig)
{
	(void)sig;
	TM_ATOMIC {
		tm_st(&cell[0], tm_ltx(&cell[0]) + 1);
	}
	tm_st(&other[0], 7); /* left open */
	siglongjmp(thread_jump, 1);
}

static void *jumping_thread(void *arg)
{
	(void)arg;
	if (sigsetjmp(thread_jump, 1) == 0) {
		raise(SIGUSR1);
		return (void *)1; /* the handler returned */
	}
	return NULL;
}

START_TEST(test_siglongjmp_out_of_a_borrowing_handler_gives_it_back)
{
	set_mode(_i);
	install(borrow_and_jump);
	/* The process has used ltx (the spares exist). */
	tm_st(&other[0], 0);
	ck_assert(tm_commit());
	for (int r = 0; r < JUMP_ROUNDS; r++) {
		pthread_t t;
		void *ret;

		ck_assert_int_eq(pthread_create(&t, NULL, jumping_thread, NULL),
				 0);
		ck_assert_int_eq(pthread_join(t, &ret), 0);
		ck_assert_ptr_null(ret);
	}
	ck_assert_uint_eq(cell[0], JUMP_ROUNDS);
	ck_assert_uint_eq(other[0], 0);
	assert_line_free();
	signal(SIGUSR1, SIG_DFL);
}
END_TEST
#endif

#ifndef LTX_TEST_STATIC
START_TEST(test_siglongjmp_out_of_a_handler_leaves_the_block)
{
	volatile int runs = 0;

	set_mode(_i);
	install(jump_out);
	if (sigsetjmp(from_handler, 1) == 0) {
		TM_ATOMIC {
			runs++;
			tm_st(&cell[0], tm_ltx(&cell[0]) + 1);
			raise(SIGUSR1);
		}
		ck_abort_msg("the block went on after the handler's jump");
	}
	ck_assert_int_eq(runs, 1);
	ck_assert(!tm_in_transaction());
	ck_assert_uint_eq(cell[0], 0);
	assert_line_free();
	assert_next_block_commits();
}
END_TEST
#endif

/* A handler that returns: the block restarts (the signal doomed it). */
static void just_return(int sig)
{
	(void)sig;
}

START_TEST(test_handler_that_returns_restarts_the_block)
{
	volatile int runs = 0;

	set_mode(_i);
	install(just_return);
	TM_ATOMIC {
		runs++;
		tm_st(&cell[0], tm_ltx(&cell[0]) + 1);
		if (runs == 1)
			raise(SIGUSR1);
	}
	ck_assert_int_eq(runs, 2);
	ck_assert_uint_eq(cell[0], 1);
}
END_TEST

/*
 * A signal releases the lines of the transaction it aborts before the
 * handler runs, as the hardware's slots go EMPTY: a handler's own
 * transaction on one of those lines commits.  Loop index: bit 0 the mode,
 * bit 1 whether the interrupted transaction wrote the line (LTX, ST) or
 * only read it (LT: in the visible mode a reader byte).
 */
static volatile int handler_committed;

static void handler_takes_cell(int sig)
{
	(void)sig;
	for (int i = 0; i < 10000; i++) {
		tm_st(&cell[0], tm_ltx(&cell[0]) + 1);
		if (tm_commit()) {
			handler_committed = 1;
			return;
		}
	}
}

START_TEST(test_signal_releases_the_lines_before_the_handler)
{
	set_mode(_i & 1);
	install(handler_takes_cell);
	handler_committed = 0;
	if (_i & 2)
		tm_st(&cell[0], tm_ltx(&cell[0]) + 10);
	else
		(void)tm_lt(&cell[0]);
	(void)tm_lt(&other[0]);
	raise(SIGUSR1);
	ck_assert_msg(handler_committed,
		      "the handler could not take a line the aborted "
		      "transaction had held");
	ck_assert(!tm_commit()); /* the interrupted one was aborted */
	ck_assert_uint_eq(tm_status() & TM_ABORT_SIGNAL, TM_ABORT_SIGNAL);
	ck_assert_uint_eq(cell[0], 1);
	assert_line_free();
}
END_TEST

/* pthread_exit and pthread_cancel inside a block: the forced unwind runs
 * the block's cleanup, which must abort the half-done block, not commit
 * it. */
static __attribute__((unused)) void *exit_inside(void *arg)
{
	(void)arg;
	TM_ATOMIC {
		tm_st(&cell[0], 1);
		pthread_exit(NULL);
		tm_st(&other[0], 1);
	}
	return NULL;
}

static __attribute__((unused)) void *cancelled_inside(void *arg)
{
	(void)arg;
	TM_ATOMIC {
		struct timespec d = { 10, 0 };

		tm_st(&cell[0], 1);
		nanosleep(&d, NULL); /* a cancellation point */
		tm_st(&other[0], 1);
	}
	return NULL;
}

#ifndef LTX_TEST_STATIC
START_TEST(test_pthread_exit_inside_tm_atomic_aborts)
{
	pthread_t t;

	set_mode(_i);
	ck_assert_int_eq(pthread_create(&t, NULL, exit_inside, NULL), 0);
	pthread_join(t, NULL);
	ck_assert_uint_eq(cell[0], 0);
	ck_assert_uint_eq(other[0], 0);
	assert_line_free();
}
END_TEST
#endif

#ifndef LTX_TEST_STATIC
START_TEST(test_pthread_cancel_inside_tm_atomic_aborts)
{
	pthread_t t;
	void *res;
	struct timespec d = { 0, 20000000 };

	set_mode(_i);
	ck_assert_int_eq(pthread_create(&t, NULL, cancelled_inside, NULL), 0);
	nanosleep(&d, NULL);
	ck_assert_int_eq(pthread_cancel(t), 0);
	pthread_join(t, &res);
	ck_assert_ptr_eq(res, PTHREAD_CANCELED);
	ck_assert_uint_eq(cell[0], 0);
	ck_assert_uint_eq(other[0], 0);
	assert_line_free();
}
END_TEST
#endif

/* Leaving the body with return, break or goto still commits. */
static int store_and_return(void)
{
	TM_ATOMIC {
		tm_st(&cell[0], 7);
		return 1;
	}
	return 0;
}

START_TEST(test_return_break_goto_commit)
{
	set_mode(_i);
	ck_assert_int_eq(store_and_return(), 1);
	ck_assert_uint_eq(cell[0], 7);
	ck_assert(!tm_in_transaction());
	TM_ATOMIC {
		tm_st(&other[0], 8);
		break;
	}
	ck_assert_uint_eq(other[0], 8);
	TM_ATOMIC {
		tm_st(&other[0], 9);
		goto after;
	}
after:
	ck_assert_uint_eq(other[0], 9);
	assert_next_block_commits();
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ways_out");
	TCase *j = tcase_create("jumps");
	TCase *u = tcase_create("unwind");

	tcase_set_timeout(j, 30);
	tcase_add_loop_test(j, test_longjmp_inside_tm_atomic_stays_in_the_block,
			    0, 2);
	tcase_add_loop_test(j, test_handler_that_returns_restarts_the_block, 0,
			    2);
	tcase_add_loop_test(j, test_return_break_goto_commit, 0, 2);
	tcase_add_loop_test(
		j, test_signal_releases_the_lines_before_the_handler, 0, 4);
#ifndef LTX_TEST_STATIC
	/* The jump and unwind hooks are libltx.so's (rt/jump.h,
	 * rt/unwind.h): a static program keeps libc's and libgcc's. */
	tcase_add_loop_test(j, test_longjmp_out_of_tm_atomic_ends_the_block, 0,
			    2);
	tcase_add_loop_test(
		j, test_siglongjmp_out_of_a_handler_aborts_and_restores, 0, 2);
	tcase_add_loop_test(
		j, test_siglongjmp_out_of_a_handler_leaves_the_block, 0, 2);
	tcase_add_loop_test(
		j, test_siglongjmp_out_of_a_borrowing_handler_gives_it_back, 0,
		2);
#endif
	suite_add_tcase(s, j);
	tcase_set_timeout(u, 30);
#ifndef LTX_TEST_STATIC
	tcase_add_loop_test(u, test_pthread_exit_inside_tm_atomic_aborts, 0, 2);
	tcase_add_loop_test(u, test_pthread_cancel_inside_tm_atomic_aborts, 0,
			    2);
#endif
	suite_add_tcase(s, u);
	return s;
}

int main(void)
{
	return ltx_test_run(suite());
}
