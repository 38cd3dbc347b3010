/* SPDX-License-Identifier: MIT */
/* The test library (libltxtest): the Check runner, the modes, and the
 * two-thread step harness that the Check suites share.  The LIFO and the
 * bank are in lifo.h and bank.h. */
#ifndef LTX_TEST_H
#define LTX_TEST_H

#include <check.h>
#include <pthread.h>
#include <stdbool.h>

/*
 * ltx_test_run: run every test of s as make check does (srunner_run_all
 * with CK_ENV: CK_FORK, CK_VERBOSITY, CK_RUN_SUITE, CK_RUN_CASE... apply)
 * and free it.  Returns the exit status for main: EXIT_SUCCESS if no test
 * failed, else EXIT_FAILURE.
 */
int ltx_test_run(Suite *s);

/* The modes, in the order loop tests number them: _i 0 is invisible, 1 is
 * visible. */
extern const char *const ltx_test_modes[];
#define LTX_TEST_NMODES 2

/*
 * ltx_test_use_mode: set LTX_MODE to ltx_test_modes[i].  Returns false if
 * this build does not have that mode (tm_config_set failed with EINVAL:
 * the caller skips the test); fails the test on any other error.
 */
bool ltx_test_use_mode(int i);

/*
 * ltx_test_set_handler: install h for sig by sigaction, with sa_flags
 * flags and an empty mask; fails the test if sigaction fails.
 */
void ltx_test_set_handler(int sig, void (*h)(int), int flags);

/*
 * The two-thread step harness: a second thread (the peer) that runs one
 * step at a time when the test asks, so that a test interleaves two
 * transactions exactly as it writes them.  The peer's transaction state
 * persists from one step to the next, as a thread's does, and between
 * steps the peer waits outside ltx.
 *
 * Synchronization: one mutex and condition variable.  ltx_test_peer_run
 * hands the step over under the mutex and waits, under it, for the peer to
 * say it is done; so everything the test did before the call happens
 * before the step, and the whole step happens before the call returns:
 * the test and its peer never run at the same time.  A step may use Check
 * assertions (a failure ends the test's process, as from the test's own
 * thread).
 */
struct ltx_test_peer {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	void (*step)(void *); /* the step asked for; NULL once it is done */
	void *arg;
	bool quit;
};

/* ltx_test_peer_start: create p's thread, waiting for its first step. */
void ltx_test_peer_start(struct ltx_test_peer *p);

/* ltx_test_peer_run: run step(arg) on p's thread; returns once it has. */
void ltx_test_peer_run(struct ltx_test_peer *p, void (*step)(void *),
		       void *arg);

/* ltx_test_peer_stop: end p's thread (it exits as a thread that ran those
 * steps: ltx's thread-exit hook runs) and join it. */
void ltx_test_peer_stop(struct ltx_test_peer *p);

#endif /* LTX_TEST_H */
