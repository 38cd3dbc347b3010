/* SPDX-License-Identifier: MIT */
/* An asymmetric fence: membarrier, or an mprotect TLB shootdown. */
#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "rt/fence.h"
#include "rt/signal.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int use_membarrier;
static char *dummy_page; /* under dummy_lock */
static pthread_mutex_t dummy_lock = PTHREAD_MUTEX_INITIALIZER;

/* How long a fence that cannot be made is tried again before ltx gives
 * up: FENCE_TRIES waits of FENCE_WAIT_NS. */
#define FENCE_TRIES   1000
#define FENCE_WAIT_NS 1000000L

static long membarrier(int cmd)
{
	return syscall(__NR_membarrier, cmd, 0, 0);
}

/* In the child of a fork, which runs the forking thread alone: the lock
 * may have been another thread's, in the fallback, and would never be
 * given back.  (Registered at the first fence: before it, nobody took
 * the lock.  If it cannot be, a child of a fork made while another
 * thread was in the fallback waits at its first fallback fence.) */
static void at_fork_child(void)
{
	pthread_mutex_init(&dummy_lock, NULL);
}

static void init(void)
{
	long cmds = membarrier(MEMBARRIER_CMD_QUERY);

	(void)pthread_atfork(NULL, NULL, at_fork_child);

	if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
	    membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0)
		use_membarrier = 1;
}

uint64_t ltx_fence_heavy_calls;

/*
 * The fallback: dirty the page, then take write access away.  The kernel
 * must shoot the stale translation down on every CPU that may cache it,
 * by an interrupt that serializes that CPU.  The lock keeps two callers
 * from undoing each other's protection change.  The page is mapped on
 * first use (also where membarrier worked until now and fails once: it
 * can, for want of kernel memory).  False if it could not be made.
 */
static bool fence_mprotect(void)
{
	bool ok = false;

	pthread_mutex_lock(&dummy_lock);
	if (dummy_page == NULL) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p != MAP_FAILED)
			dummy_page = p;
	}
	if (dummy_page != NULL &&
	    mprotect(dummy_page, 4096, PROT_READ | PROT_WRITE) == 0) {
		__atomic_add_fetch(dummy_page, 1, __ATOMIC_SEQ_CST);
		ok = mprotect(dummy_page, 4096, PROT_READ) == 0;
	}
	pthread_mutex_unlock(&dummy_lock);
	return ok;
}

static __attribute__((noreturn, cold)) void no_fence(void)
{
	static const char msg[] =
		"ltx: no fence can be made (membarrier and mprotect fail): "
		"transactions cannot go on safely: aborting\n";

	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	abort();
}

/*
 * The fence itself: membarrier, or the fallback.  A fence is never
 * skipped: the light side has none of its own, so tm_free's grace
 * periods and the serial token would no longer exclude anything.  While
 * neither can be made (the kernel out of memory), it is tried again, and
 * the process stops, with a message, if it still cannot after about a
 * second.
 */
static void fence(void)
{
	pthread_once(&init_once, init);
	for (unsigned tries = 0;; tries++) {
		struct timespec wait = { 0, FENCE_WAIT_NS };

		if (use_membarrier &&
		    membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0)
			return;
		if (fence_mprotect())
			return;
		if (tries == FENCE_TRIES)
			no_fence();
		/* The system call, not libc's nanosleep, which is a
		 * cancellation point: a thread cancelled here, maybe holding
		 * the serial token, would never give it back. */
		(void)syscall(SYS_nanosleep, &wait, NULL);
	}
}

void ltx_fence_heavy(void)
{
	unsigned own;

	__atomic_add_fetch(&ltx_fence_heavy_calls, 1, __ATOMIC_RELAXED);
	/* ltx's own system calls (rt/signal.h): an exclusive transaction
	 * makes them holding the serial token (tx/serial.c, drain). */
	own = ltx_own_syscall_begin();
	fence();
	ltx_own_syscall_end(own);
}
