/* SPDX-License-Identifier: MIT */
/* fork while another thread is inside a transaction: the child is free. */
#define _GNU_SOURCE
#include <ltx/tm.h>

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ltx-test.h"

/*
 * DESIGN.md, Every way out of a transaction: fork ends, in the child,
 * every transaction of the threads it does not copy.  A holder thread
 * takes line A (LT, LTX, ST, or ST in an irrevocable transaction, holding
 * the serial token) and reads line B, then blocks inside its transaction;
 * the main thread frees a block (whose grace period waits for the
 * holder's transaction) and forks.  The child, with the serial fallback
 * off, must at once: write A and B in one transaction that commits at
 * the first try; change a process-wide setting (no other thread holds a
 * descriptor now); become irrevocable (the token is free); release the
 * freed block (no transaction to wait for); and run a transaction on A in
 * a new thread.  Each step that fails exits with its own code; one that
 * hangs is killed after 10 s.  The old code failed the first step, or hung.
 */
enum take { TAKE_LT, TAKE_LTX, TAKE_ST, TAKE_IRREVOCABLE, NTAKES };

struct line {
	tm_word_t w;
	char pad[64 - sizeof(tm_word_t)];
} __attribute__((aligned(64)));

static struct line a, b;
static enum take how;

/* The holder's steps (the step harness, common/ltx-test.h): take the lines
 * as how says, then, after the fork, commit. */
static void holder_takes(void *arg)
{
	if (how == TAKE_IRREVOCABLE)
		ck_assert(tm_irrevocable());
	switch (how) {
	case TAKE_LT:
		(void)tm_lt(&a.w);
		break;
	case TAKE_LTX:
		(void)tm_ltx(&a.w);
		break;
	default:
		tm_st(&a.w, 99);
		break;
	}
	(void)tm_lt(&b.w);
	ck_assert(tm_in_transaction());
}

static void holder_commits(void *arg)
{
	(void)tm_commit();
}

static void *child_thread(void *arg)
{
	tm_st(&a.w, 3);
	*(bool *)arg = tm_commit();
	return NULL;
}

/* The child's steps; its exit code names the first that failed. */
static void child(int mode)
{
	struct tm_mem_stats ms;
	pthread_t t;
	bool ok = false;

	if (tm_config_set("LTX_SERIAL_AFTER", "0") != 0)
		_exit(9);
	tm_st(&a.w, 1);
	tm_st(&b.w, 2);
	if (!tm_commit())
		_exit(10);
	if (a.w != 1 || b.w != 2)
		_exit(11);
	if (tm_config_set("LTX_MODE", ltx_test_modes[mode]) != 0)
		_exit(12); /* EBUSY: the parent's holder still counted */
	if (!tm_irrevocable())
		_exit(13);
	tm_st(&a.w, 4);
	if (!tm_commit())
		_exit(14);
	tm_mem_flush();
	if (tm_mem_stats(&ms) != 0 || ms.pending_blocks != 0)
		_exit(15);
	if (pthread_create(&t, NULL, child_thread, &ok) != 0 ||
	    pthread_join(t, NULL) != 0 || !ok || a.w != 3)
		_exit(16);
	_exit(0);
}

/* _i: mode (bit 0), how the holder takes A (bits 1-2). */
START_TEST(test_child_of_fork_gets_the_lines_of_gone_threads)
{
	int mode = _i & 1, status = 0;
	struct tm_mem_stats ms;
	struct ltx_test_peer holder;
	void *block;
	pid_t pid, done = 0;

	how = (enum take)(_i >> 1);
	ck_assert_int_eq(tm_config_set("LTX_MODE", ltx_test_modes[mode]), 0);
	a.w = 0;
	b.w = 0;
	block = tm_malloc(64);
	ck_assert_ptr_nonnull(block);
	ltx_test_peer_start(&holder);
	ltx_test_peer_run(&holder, holder_takes, NULL);
	/* Its grace period waits for the holder's transaction. */
	tm_free(block);
	tm_mem_flush();
	ck_assert_int_eq(tm_mem_stats(&ms), 0);
	ck_assert_uint_ge(ms.pending_blocks, 1);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		child(mode);
	for (int ms10 = 0; ms10 < 1000 && done == 0; ms10++) {
		struct timespec ten = { 0, 10 * 1000 * 1000 };

		done = waitpid(pid, &status, WNOHANG);
		if (done == 0)
			nanosleep(&ten, NULL);
	}
	if (done == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	ltx_test_peer_run(&holder, holder_commits, NULL);
	ltx_test_peer_stop(&holder);
	ck_assert_msg(done == pid, "the child hung (killed after 10 s)");
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the child failed: status %#x (exit 10: its transaction "
		      "failed; 12: EBUSY; 13: no token; 15: block pending; "
		      "16: new thread)",
		      status);
}
END_TEST

/*
 * fork inside a signal handler whose transaction runs on a borrowed spare
 * (its thread has no descriptor of its own, tx.c): the child goes on with
 * the handler's transaction, which must commit there (fork_child keeps
 * the spare as the forking thread's, and frees the others); in the parent
 * the same transaction commits too, and the spare goes back when the
 * handler returns, so that more rounds than spares all get one.  Each
 * round is a new thread that signals itself.
 */
#define FORK_ROUNDS 4

static struct line c;
static volatile sig_atomic_t child_ok, parent_ok;

static void fork_in_handler(int sig)
{
	tm_word_t v;
	pid_t pid;
	int status = 0;

	(void)sig;
	v = tm_ltx(&c.w);
	tm_st(&c.w, v + 1);
	pid = fork();
	if (pid == 0)
		_exit(tm_commit() && c.w == v + 1 ? 0 : 1);
	child_ok = pid > 0 && waitpid(pid, &status, 0) == pid &&
		   WIFEXITED(status) && WEXITSTATUS(status) == 0;
	parent_ok = tm_commit() && c.w == v + 1;
}

static void *signal_self(void *arg)
{
	(void)arg;
	child_ok = parent_ok = 0;
	raise(SIGUSR1);
	return (void *)(uintptr_t)(child_ok && parent_ok);
}

START_TEST(test_fork_in_a_handler_on_a_spare)
{
	struct sigaction sa;

	ck_assert_int_eq(tm_config_set("LTX_MODE", ltx_test_modes[_i]), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fork_in_handler;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	c.w = 0;
	for (int r = 0; r < FORK_ROUNDS; r++) {
		pthread_t t;
		void *ok = NULL;

		ck_assert_int_eq(pthread_create(&t, NULL, signal_self, NULL),
				 0);
		ck_assert_int_eq(pthread_join(t, &ok), 0);
		ck_assert_msg(ok != NULL,
			      "round %d: the child's commit failed (%d) or the "
			      "parent's (%d)",
			      r, (int)child_ok, (int)parent_ok);
	}
	ck_assert_uint_eq(c.w, FORK_ROUNDS);
	signal(SIGUSR1, SIG_DFL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fork");
	TCase *tc = tcase_create("fork");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc,
			    test_child_of_fork_gets_the_lines_of_gone_threads,
			    0, 2 * NTAKES);
	tcase_add_loop_test(tc, test_fork_in_a_handler_on_a_spare, 0,
			    LTX_TEST_NMODES);
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
