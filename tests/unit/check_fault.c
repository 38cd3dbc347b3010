/* SPDX-License-Identifier: MIT */
/* Fault tolerance: dying threads and failing allocations free their lines. */
#define _GNU_SOURCE
#include <ltx/tm.h>

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ltx-test.h"

#define NLINES 16
#define BIG    5000 /* lines: far more than the logs' initial sizes */

struct line {
	tm_word_t w;
	char pad[64 - sizeof(tm_word_t)];
} __attribute__((aligned(64)));

static struct line lines[NLINES];

/* Set by the victim once it holds every line; read by the main thread. */
static int holding;

/* Take every line in E (stores and an LTX), then tell the main thread. */
static void take_lines(void)
{
	for (unsigned i = 0; i < NLINES; i++) {
		if (i % 2)
			tm_st(&lines[i].w, 1000 + i);
		else
			(void)tm_ltx(&lines[i].w);
	}
	__atomic_store_n(&holding, 1, __ATOMIC_RELEASE);
}

static void wait_holding(void)
{
	while (!__atomic_load_n(&holding, __ATOMIC_ACQUIRE))
		sched_yield();
}

/* Another thread can now take every line and commit; the dead thread's
 * stores were discarded. */
static void assert_lines_free(void)
{
	for (unsigned i = 0; i < NLINES; i++) {
		tm_word_t v = tm_ltx(&lines[i].w);

		ck_assert_msg(v == i,
			      "line %u holds %lu: a store of the dead "
			      "transaction leaked",
			      i, (unsigned long)v);
		tm_st(&lines[i].w, v);
	}
	ck_assert_msg(tm_commit(), "lines still owned (status %#x)",
		      tm_status());
}

static void setup(void)
{
	for (unsigned i = 0; i < NLINES; i++)
		lines[i].w = i;
	holding = 0;
}

static void *exit_in_tx(void *arg)
{
	take_lines();
	pthread_exit(arg);
}

static void *return_in_tx(void *arg)
{
	take_lines();
	return arg;
}

#ifndef __SANITIZE_THREAD__ /* see main() */
static void *cancelled_in_tx(void *arg)
{
	struct timespec ms = { 0, 1000000 };

	take_lines();
	for (;;)
		nanosleep(&ms, NULL); /* a cancellation point */
	return arg;
}
#endif

static void *cancelled_at_testcancel(void *arg)
{
	take_lines();
	for (;;) {
		pthread_testcancel();
		sched_yield();
	}
	return arg;
}

START_TEST(test_pthread_exit_in_tx_releases_lines)
{
	pthread_t t;

	setup();
	ck_assert(pthread_create(&t, NULL, exit_in_tx, NULL) == 0);
	ck_assert(pthread_join(t, NULL) == 0);
	assert_lines_free();
}
END_TEST

START_TEST(test_return_from_thread_in_tx_releases_lines)
{
	pthread_t t;

	setup();
	ck_assert(pthread_create(&t, NULL, return_in_tx, NULL) == 0);
	ck_assert(pthread_join(t, NULL) == 0);
	assert_lines_free();
}
END_TEST

#ifndef __SANITIZE_THREAD__
START_TEST(test_cancel_in_nanosleep_in_tx_releases_lines)
{
	pthread_t t;
	void *res;

	setup();
	ck_assert(pthread_create(&t, NULL, cancelled_in_tx, NULL) == 0);
	wait_holding();
	/* While the victim lives, its lines are owned: LTX fails. */
	(void)tm_ltx(&lines[1].w);
	ck_assert(!tm_commit());
	ck_assert(tm_status() & TM_ABORT_CONFLICT);
	ck_assert(pthread_cancel(t) == 0);
	ck_assert(pthread_join(t, &res) == 0);
	ck_assert(res == PTHREAD_CANCELED);
	assert_lines_free();
}
END_TEST
#endif

START_TEST(test_cancel_at_testcancel_in_tx_releases_lines)
{
	pthread_t t;
	void *res;

	setup();
	ck_assert(pthread_create(&t, NULL, cancelled_at_testcancel, NULL) == 0);
	wait_holding();
	ck_assert(pthread_cancel(t) == 0);
	ck_assert(pthread_join(t, &res) == 0);
	ck_assert(res == PTHREAD_CANCELED);
	assert_lines_free();
}
END_TEST

/*
 * Failing allocations.  malloc, realloc and posix_memalign are interposed
 * in this program (glibc's own are reached by their __libc_ names) and fail
 * on the calling thread once armed, after fail_after more successes.  Not
 * with sanitizers: they interpose the allocator themselves.
 */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define HAVE_FAILING_MALLOC 1
#endif

#ifdef HAVE_FAILING_MALLOC
extern void *__libc_malloc(size_t n);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void __libc_free(void *p);

static __thread int fail_armed;
static __thread long fail_after;
static __thread long failures;
/* Allocations made on this thread while count_armed (item 9 below). */
static __thread int count_armed;
static __thread long allocations;

static bool should_fail(void)
{
	if (count_armed)
		allocations++;
	if (!fail_armed)
		return false;
	if (fail_after > 0) {
		fail_after--;
		return false;
	}
	failures++;
	return true;
}

void *malloc(size_t n)
{
	return should_fail() ? NULL : __libc_malloc(n);
}

void *realloc(void *p, size_t n)
{
	return should_fail() ? NULL : __libc_realloc(p, n);
}

void *calloc(size_t n, size_t size)
{
	return should_fail() ? NULL : __libc_calloc(n, size);
}

/*
 * A block freed by a thread while capture_armed is kept (captured) and,
 * once handed over (handover), given to the next posix_memalign of its
 * size on the thread that armed reuse_armed: the write-set race below.
 * The freeing thread waits inside free until told to go on.
 */
static __thread int capture_armed, reuse_armed;
static void *captured;
static size_t captured_size;
static sem_t captured_sem, go_on_sem;

void free(void *p)
{
	if (capture_armed && p != NULL) {
		capture_armed = 0;
		captured = p;
		sem_post(&captured_sem);
		while (sem_wait(&go_on_sem) != 0)
			;
		return; /* the taker owns it now */
	}
	__libc_free(p);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	if (reuse_armed && captured != NULL && n == captured_size) {
		reuse_armed = 0;
		*out = captured;
		captured = NULL;
		return 0;
	}
	if (should_fail())
		return ENOMEM;
	p = __libc_memalign(align, n);
	if (p == NULL)
		return ENOMEM;
	*out = p;
	return 0;
}

static struct line big[BIG];

static void big_setup(void)
{
	for (unsigned i = 0; i < BIG; i++)
		big[i].w = i;
	/* A first transaction creates this thread's descriptor unarmed. */
	(void)tm_lt(&big[0].w);
	ck_assert(tm_commit());
}

/* After the failure every line is free and unchanged. */
static void assert_big_free(void)
{
	for (unsigned i = 0; i < BIG; i += 7) {
		ck_assert_uint_eq(tm_ltx(&big[i].w), i);
		tm_st(&big[i].w, i);
	}
	ck_assert_msg(tm_commit(), "status %#x", tm_status());
}

static void oom_writes(long after)
{
	bool ok;

	big_setup();
	fail_after = after;
	failures = 0;
	fail_armed = 1;
	for (unsigned i = 0; i < BIG; i++)
		tm_st(&big[i].w, 100000 + i);
	ok = tm_commit();
	fail_armed = 0;
	/* The first growth of a fresh descriptor's log must have failed. */
	ck_assert(after > 0 || failures > 0);
	if (failures == 0) {
		/* The logs were already big enough (a later loop index). */
		ck_assert(ok);
		return;
	}
	ck_assert_msg(!ok, "a transaction whose log could not grow committed");
	ck_assert_msg((tm_status() & (TM_ABORT_NOMEM | TM_ABORT_CAPACITY)) ==
			      (TM_ABORT_NOMEM | TM_ABORT_CAPACITY),
		      "status %#x", tm_status());
	ck_assert(!tm_in_transaction());
	for (unsigned i = 0; i < BIG; i++)
		ck_assert_uint_eq(big[i].w, i);
	assert_big_free();
}

START_TEST(test_write_log_oom_aborts_cleanly)
{
	oom_writes(_i);
}
END_TEST

START_TEST(test_read_log_oom_aborts_cleanly)
{
	bool ok;
	tm_word_t sum = 0;

	big_setup();
	fail_after = _i;
	failures = 0;
	fail_armed = 1;
	for (unsigned i = 0; i < BIG; i++)
		sum += tm_lt(&big[i].w);
	ok = tm_commit();
	fail_armed = 0;
	ck_assert(_i > 0 || failures > 0);
	if (failures == 0) {
		ck_assert(ok);
		ck_assert_uint_eq(sum, (tm_word_t)BIG * (BIG - 1) / 2);
		return;
	}
	ck_assert(!ok);
	ck_assert_msg((tm_status() & (TM_ABORT_NOMEM | TM_ABORT_CAPACITY)) ==
			      (TM_ABORT_NOMEM | TM_ABORT_CAPACITY),
		      "status %#x", tm_status());
	assert_big_free();
}
END_TEST

/*
 * Issue 13, item 9: a signal handler's transaction must never allocate
 * (the signal may have interrupted malloc, whose lock it would then wait
 * for): writing 100 lines, past its logs' first size, it fails with
 * TM_ABORT_CAPACITY instead.  The old invisible mode grew the write set
 * (posix_memalign and free) in the handler.
 */
static tm_word_t handler_committed, handler_status;

static void write_100_lines(int sig)
{
	(void)sig;
	count_armed = 1;
	allocations = 0;
	for (unsigned i = 0; i < 100; i++)
		tm_st(&big[i].w, 7);
	handler_committed = tm_commit();
	handler_status = tm_status();
	count_armed = 0;
}

START_TEST(test_handler_transaction_never_allocates)
{
	struct sigaction sa;

	ck_assert_int_eq(
		tm_config_set("LTX_MODE", _i ? "visible" : "invisible"), 0);
	big_setup();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = write_100_lines;
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	ck_assert_int_eq(raise(SIGUSR1), 0);
	ck_assert_msg(allocations == 0,
		      "the handler's transaction allocated %ld times",
		      allocations);
	ck_assert(handler_committed ||
		  (handler_status & TM_ABORT_CAPACITY) != 0);
	if (!handler_committed)
		for (unsigned i = 0; i < BIG; i++)
			ck_assert_uint_eq(big[i].w, i);
}
END_TEST

/*
 * Issue 13, item 10: while the invisible mode's write set grows, the old
 * block must not be freed before every lock word points into the new one.
 * Else another thread's new write set, placed on the freed block, finds
 * the grower's lock words pointing into its own set, and takes the
 * grower's lines for its own.  Made deterministic with the allocator:
 * thread A holds line L (its first entry) and grows its write set; the
 * block it frees is captured and A waits inside free; thread B, new, gets
 * the block for its own write set, stores to another line (its first
 * entry, where A's entry for L was), then to L.  A holds L: B's commit
 * must fail.  The old code freed first, and B committed its store to L.
 */
static struct line raced[2];

static void *grow_holding_first(void *arg)
{
	(void)arg;
	tm_st(&raced[0].w, 1); /* the first entry */
	for (unsigned i = 1; i < 64; i++)
		tm_st(&big[i].w, 100 + i);
	capture_armed = 1;
	tm_st(&big[64].w, 164); /* the 65th entry: the set grows */
	ck_assert(tm_commit());
	return NULL;
}

static void *reuse_the_block(void *arg)
{
	bool *committed = arg;

	reuse_armed = 1;
	tm_st(&raced[1].w, 5); /* a new descriptor, on the captured block */
	reuse_armed = 0;
	tm_st(&raced[0].w, 7); /* A's line */
	*committed = tm_commit();
	return NULL;
}

START_TEST(test_grown_write_set_freed_after_repointing)
{
	pthread_t a, b;
	bool b_committed = true;

	ck_assert_int_eq(tm_config_set("LTX_MODE", "invisible"), 0);
	big_setup();
	raced[0].w = raced[1].w = 0;
	captured_size = 64 * 128; /* a new descriptor's write set */
	ck_assert_int_eq(sem_init(&captured_sem, 0, 0), 0);
	ck_assert_int_eq(sem_init(&go_on_sem, 0, 0), 0);
	ck_assert_int_eq(pthread_create(&a, NULL, grow_holding_first, NULL), 0);
	while (sem_wait(&captured_sem) != 0)
		;
	ck_assert_int_eq(
		pthread_create(&b, NULL, reuse_the_block, &b_committed), 0);
	ck_assert_int_eq(pthread_join(b, NULL), 0);
	ck_assert_msg(captured == NULL, "B did not get the freed block");
	sem_post(&go_on_sem);
	ck_assert_int_eq(pthread_join(a, NULL), 0);
	ck_assert_msg(!b_committed,
		      "a store to a line another transaction held committed");
	ck_assert_uint_eq(raced[0].w, 1);
}
END_TEST

/*
 * An irrevocable transaction never fails, not even out of memory: it has
 * done its I/O, and failing would report it undone (tm_commit false) or,
 * in TM_ATOMIC, run the I/O again.  Its logs cannot grow: ltx stops the
 * process with a message, after the one I/O.  Run in a child, which must
 * die of SIGABRT having written its byte once (the old code committed
 * false, or reran the block, writing it again, until killed).
 */
static int io_fd;

static void irrevocable_big_writes(void)
{
	for (unsigned i = 0; i < BIG; i++)
		tm_st(&big[i].w, 100000 + i);
}

static void irrevocable_io_then_oom(bool atomic)
{
	big_setup();
	fail_after = 0;
	failures = 0;
	if (atomic) {
		TM_ATOMIC {
			fail_armed = 0; /* a rerun (old code) redoes it all */
			ck_assert(tm_irrevocable());
			ck_assert_int_eq(write(io_fd, "x", 1), 1);
			fail_armed = 1;
			irrevocable_big_writes();
		}
		_exit(4); /* committed: cannot be, its logs could not grow */
	}
	ck_assert(tm_irrevocable());
	ck_assert_int_eq(write(io_fd, "x", 1), 1);
	fail_armed = 1;
	irrevocable_big_writes();
	_exit(tm_commit() ? 4 : 3);
}

START_TEST(test_irrevocable_oom_stops_after_one_io)
{
	int out[2], err[2], status;
	char buf[512];
	ssize_t n, io = 0;
	size_t elen = 0;
	pid_t pid;

	ck_assert_int_eq(pipe(out), 0);
	ck_assert_int_eq(pipe(err), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(out[0]);
		close(err[0]);
		dup2(err[1], STDERR_FILENO);
		io_fd = out[1];
		irrevocable_io_then_oom(_i != 0);
	}
	close(out[1]);
	close(err[1]);
	/* The old code reran the block for ever: 5 s of it is enough. */
	for (int ms = 0; ms < 5000; ms++) {
		struct pollfd p = { .fd = out[0], .events = POLLIN };

		if (poll(&p, 1, 1) != 1)
			continue;
		n = read(out[0], buf, sizeof(buf));
		if (n <= 0)
			break; /* the child is gone */
		io += n;
	}
	kill(pid, SIGKILL); /* if it still runs */
	while (elen < sizeof(buf) - 1 &&
	       (n = read(err[0], buf + elen, sizeof(buf) - 1 - elen)) > 0)
		elen += (size_t)n;
	buf[elen] = '\0';
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(io == 1, "the transaction's I/O ran %zd times", io);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
		      "child status %#x (3: tm_commit false; 4: true; "
		      "SIGKILL: the block reran)",
		      status);
	ck_assert_msg(strstr(buf, "out of memory in an irrevocable") != NULL,
		      "stderr: %s", buf);
	close(out[0]);
	close(err[0]);
}
END_TEST
#endif /* HAVE_FAILING_MALLOC */

int main(void)
{
	Suite *s = suite_create("fault");
	TCase *tc = tcase_create("thread death");

	tcase_add_test(tc, test_pthread_exit_in_tx_releases_lines);
	tcase_add_test(tc, test_return_from_thread_in_tx_releases_lines);
#ifndef __SANITIZE_THREAD__
	/*
	 * Not under TSan: a thread cancelled inside an intercepted blocking
	 * call (nanosleep) runs its TSD destructors while TSan still counts it
	 * inside that interceptor, so the registry mutex taken by ltx's
	 * thread-exit hook goes unrecorded and TSan reports a race on the
	 * descriptor's in_use flag that the mutex does prevent.
	 */
	tcase_add_test(tc, test_cancel_in_nanosleep_in_tx_releases_lines);
#endif
	tcase_add_test(tc, test_cancel_at_testcancel_in_tx_releases_lines);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
#ifdef HAVE_FAILING_MALLOC
	tc = tcase_create("out of memory");
	/* Fail the first, second or third growth of the log. */
	tcase_add_loop_test(tc, test_write_log_oom_aborts_cleanly, 0, 3);
	tcase_add_loop_test(tc, test_read_log_oom_aborts_cleanly, 0, 3);
	/* 0: plain tm_irrevocable; 1: in TM_ATOMIC. */
	tcase_add_loop_test(tc, test_irrevocable_oom_stops_after_one_io, 0, 2);
	/* 0: invisible; 1: visible. */
	tcase_add_loop_test(tc, test_handler_transaction_never_allocates, 0, 2);
	tcase_add_test(tc, test_grown_write_set_freed_after_repointing);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
#endif
	return ltx_test_run(s);
}
