/* SPDX-License-Identifier: MIT */
/*
 * The heavy fence (rt/fence.c) is never skipped.  tm_free's grace periods
 * and the serial token pair it with no fence at all on the light side, so
 * a heavy fence that does nothing lets a grace period end under a reader,
 * or an exclusive transaction run beside another.  membarrier can fail
 * after it has worked (the kernel out of memory); the fence then falls
 * back to its mprotect shootdown, tries again while neither works, and
 * stops the process with a message if it still cannot.  The fence took a
 * plain atomic add instead (no fence for the other threads) whenever
 * membarrier failed after working.
 *
 * White-box (linked with the runtime's objects): the test interposes
 * syscall (membarrier goes through it), mmap and mprotect, makes them fail
 * on demand and counts the fallback's calls.
 */
#define _GNU_SOURCE
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt/fence.h"
#include "ltx-test.h"

static volatile int hold_in_mprotect, in_mprotect; /* (the fork case) */
static int fail_membarrier; /* membarrier's fence fails with ENOMEM */
static int fail_maps;	    /* page maps to fail; -1: all */
static int maps_failed;
static int mprotect_calls;

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == __NR_membarrier && a[0] == MEMBARRIER_CMD_PRIVATE_EXPEDITED &&
	    fail_membarrier) {
		errno = ENOMEM;
		return -1;
	}
	if (real == NULL)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* Only the fence's one-page anonymous maps fail (no other caller of
 * this program maps a single page while a test runs). */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off_t);

	if (len == 4096 && (flags & MAP_ANONYMOUS) && fail_maps != 0) {
		if (fail_maps > 0)
			fail_maps--;
		maps_failed++;
		errno = ENOMEM;
		return MAP_FAILED;
	}
	if (real == NULL)
		real = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(
			RTLD_NEXT, "mmap");
	return real(addr, len, prot, flags, fd, off);
}

int mprotect(void *addr, size_t len, int prot)
{
	static int (*real)(void *, size_t, int);

	mprotect_calls++;
	if (hold_in_mprotect) {
		in_mprotect = 1;
		while (hold_in_mprotect)
			usleep(1000);
	}
	if (real == NULL)
		real = (int (*)(void *, size_t, int))dlsym(RTLD_NEXT,
							   "mprotect");
	return real(addr, len, prot);
}

START_TEST(test_a_failing_membarrier_falls_back_to_mprotect)
{
	ltx_fence_heavy(); /* membarrier set up (where the kernel has it) */
	fail_membarrier = 1;
	mprotect_calls = 0;
	ltx_fence_heavy();
	ck_assert_msg(mprotect_calls == 2,
		      "the fence made %d mprotect calls after membarrier "
		      "failed (want 2: the shootdown, not nothing)",
		      mprotect_calls);
	fail_membarrier = 0;
	mprotect_calls = 0;
	ltx_fence_heavy();
	ck_assert_msg(mprotect_calls == 0 || mprotect_calls == 2,
		      "%d mprotect calls", mprotect_calls);
}
END_TEST

START_TEST(test_the_fence_is_tried_again_until_it_can_be_made)
{
	fail_membarrier = 1;
	fail_maps = 3;
	mprotect_calls = 0;
	ltx_fence_heavy();
	ck_assert_msg(maps_failed == 3 && mprotect_calls == 2,
		      "%d failed maps, %d mprotect calls (want 3, then the "
		      "shootdown: 2)",
		      maps_failed, mprotect_calls);
}
END_TEST

/* Neither can be made: the process stops (SIGABRT, after its message)
 * rather than go on without the fence. */
START_TEST(test_no_fence_at_all_stops_the_process)
{
	fail_membarrier = 1;
	fail_maps = -1;
	ltx_fence_heavy();
}
END_TEST

static void *fence_thread(void *arg)
{
	(void)arg;
	ltx_fence_heavy();
	return NULL;
}

static volatile int fenced;

static void *fence_then_cancel(void *arg)
{
	(void)arg;
	ltx_fence_heavy();
	fenced = 1;
	pthread_testcancel();
	return NULL;
}

/* A thread cancelled while the fence waits to try again: the wait is no
 * cancellation point (the caller may hold the serial token, which a
 * thread unwound there would never give back). */
START_TEST(test_the_fence_wait_is_no_cancellation_point)
{
	pthread_t t;
	void *ret;
	int waited = 0;

	fail_membarrier = 1;
	fail_maps = 100; /* about 100 ms of waits */
	ck_assert_int_eq(pthread_create(&t, NULL, fence_then_cancel, NULL), 0);
	while (maps_failed == 0 && waited++ < 5000)
		usleep(1000);
	ck_assert_msg(maps_failed > 0, "the fence never tried its fallback");
	ck_assert_int_eq(pthread_cancel(t), 0);
	ck_assert_int_eq(pthread_join(t, &ret), 0);
	ck_assert_msg(fenced, "the thread was cancelled inside the fence");
	ck_assert_msg(ret == PTHREAD_CANCELED, "not cancelled at all");
}
END_TEST

/* A fork made while another thread is in the fallback, holding its lock:
 * the child's own fences must not wait for that thread, which is not in
 * the child. */
START_TEST(test_a_fork_child_fences_though_a_thread_held_the_fallback)
{
	pthread_t t;
	pid_t pid;
	int st, waited = 0;

	ltx_fence_heavy(); /* membarrier set up (where the kernel has it) */
	fail_membarrier = 1;
	hold_in_mprotect = 1;
	ck_assert_int_eq(pthread_create(&t, NULL, fence_thread, NULL), 0);
	while (!in_mprotect && waited++ < 5000)
		usleep(1000);
	if (!in_mprotect) {
		hold_in_mprotect = 0;
		pthread_join(t, NULL);
		ck_abort_msg("the fence never reached its mprotect fallback");
	}
	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		hold_in_mprotect = 0;
		/* A hang kills the child (not Check's handler, inherited,
		 * which would kill the test). */
		signal(SIGALRM, SIG_DFL);
		alarm(10);
		mprotect_calls = 0;
		ltx_fence_heavy();
		_exit(mprotect_calls == 2 ? 0 : 1);
	}
	hold_in_mprotect = 0;
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "the child's fence %s",
		      WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM
			      ? "waited for ever for the fallback's lock"
			      : "made no shootdown");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fence");
	TCase *tc = tcase_create("fence");

	tcase_add_test(tc, test_a_failing_membarrier_falls_back_to_mprotect);
	tcase_add_test(tc, test_the_fence_is_tried_again_until_it_can_be_made);
	tcase_add_test(
		tc, test_a_fork_child_fences_though_a_thread_held_the_fallback);
	tcase_add_test(tc, test_the_fence_wait_is_no_cancellation_point);
	tcase_add_test_raise_signal(tc, test_no_fence_at_all_stops_the_process,
				    SIGABRT);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
