/* SPDX-License-Identifier: MIT */
/* An asymmetric fence: membarrier, or an mprotect TLB shootdown. */
#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rt/fence.h"
#include "rt/signal.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int use_membarrier;
static char *dummy_page;
static pthread_mutex_t dummy_lock = PTHREAD_MUTEX_INITIALIZER;

static long membarrier(int cmd)
{
	return syscall(__NR_membarrier, cmd, 0, 0);
}

static void init(void)
{
	long cmds = membarrier(MEMBARRIER_CMD_QUERY);

	if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
	    membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0) {
		use_membarrier = 1;
		return;
	}
	dummy_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (dummy_page == MAP_FAILED)
		dummy_page = NULL;
}

uint64_t ltx_fence_heavy_calls;

/* The fence itself: membarrier, or the fallback. */
static void fence(void)
{
	pthread_once(&init_once, init);
	if (use_membarrier && membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0)
		return;
	/*
	 * Dirty the page, then take write access away: the kernel must shoot
	 * the stale translation down on every CPU that may cache it, by an
	 * interrupt that serializes that CPU.  The lock keeps two callers from
	 * undoing each other's protection change.
	 */
	if (dummy_page == NULL) {
		/* No mapping: a full barrier here is all that is left (an
		 * RMW, which TSan models, unlike a bare fence). */
		static int dummy;

		__atomic_fetch_add(&dummy, 1, __ATOMIC_SEQ_CST);
		return;
	}
	pthread_mutex_lock(&dummy_lock);
	mprotect(dummy_page, 4096, PROT_READ | PROT_WRITE);
	__atomic_add_fetch(dummy_page, 1, __ATOMIC_SEQ_CST);
	mprotect(dummy_page, 4096, PROT_READ);
	pthread_mutex_unlock(&dummy_lock);
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
