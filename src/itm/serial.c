/* SPDX-License-Identifier: MIT */
/* Thread state of the libitm ABI and the serial lock that orders modes. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itm/itm.h"
#include "rt/fence.h"

/*
 * The serial lock lets one transaction run alone (ITM_SERIAL and
 * ITM_SERIAL_IRR: irrevocable code, uninstrumented code, closed nesting)
 * while ITM_INSTR transactions run concurrently with each other.  It is a
 * reader-writer lock with per-thread reader flags, in the style of libitm's
 * gtm_rwlock and of Dekker's mutual exclusion: a reader publishes itself in
 * its own cache line, so concurrent readers share no written line.
 *
 * Synchronization (Dekker, with an asymmetric fence: readers are every
 * instrumented transaction, writers are rare, so the readers' side has no
 * fence instruction and the writer pays with ltx_fence_heavy, rt/fence.h):
 *   reader (ltx_itm_shared_enter)    writer (ltx_itm_serial_enter)
 *     seq becomes odd (relaxed)        writer 0 -> 1 (seq_cst CAS)
 *     compiler barrier only            if another thread is registered:
 *     load writer (relaxed)              ltx_fence_heavy()
 *                                      load each other thread's seq
 *                                        (seq_cst)
 * The heavy fence makes every other thread execute a full barrier: a
 * reader whose odd seq was stored before its barrier is seen by the
 * writer's loads after the fence, and the writer waits for it; one whose
 * load of writer comes after its barrier sees the CAS, and backs off (seq
 * even again, waits for writer == 0).  Without another registered thread
 * there is no reader to see: a thread registers (ltx_itm_live_threads, a
 * seq_cst RMW followed by a seq_cst fence) before its first shared_enter,
 * and the writer reads the count (seq_cst) after its CAS, so either the
 * writer sees the newcomer and fences, or the newcomer's first load of
 * writer sees the CAS.  The reader's release store of the even seq pairs
 * with the writer's acquire load of it; the writer's release store of
 * writer = 0 pairs with the readers' acquire loads of it.
 *
 * seq also serves privatization safety (ltx_itm_quiesce): it changes at
 * every transaction end, so a thread that waits, after a heavy fence, until
 * every odd seq it saw has changed knows that every transaction that ran
 * concurrently with its commit has finished.
 */

__thread struct ltx_itm_thread *ltx_itm_self
	__attribute__((tls_model("initial-exec")));
__thread struct ltx_itm_fast ltx_itm_fast
	__attribute__((tls_model("initial-exec")));

struct ltx_itm_thread *ltx_itm_registry;
unsigned ltx_itm_live_threads;

static unsigned writer;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

void ltx_itm_fatal(const char *why)
{
	fprintf(stderr, "ltx: libitm ABI: %s\n", why);
	abort();
}

static void thread_exit(void *arg)
{
	struct ltx_itm_thread *t = arg;

	ltx_itm_self = NULL;
	ltx_itm_fast.tx = NULL;
	__atomic_fetch_sub(&ltx_itm_live_threads, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&registry_lock);
	t->in_use = 0;
	pthread_mutex_unlock(&registry_lock);
}

static void make_key(void)
{
	if (pthread_key_create(&exit_key, thread_exit) != 0)
		ltx_itm_fatal("no thread-specific key for the thread state");
}

/* The calling thread's stack (barrier.c says why it must be known). */
static void stack_bounds(struct ltx_itm_thread *t)
{
	pthread_attr_t attr;
	void *addr = NULL;
	size_t size = 0;

	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		if (pthread_attr_getstack(&attr, &addr, &size) != 0)
			addr = NULL;
		pthread_attr_destroy(&attr);
	}
	if (addr == NULL)
		ltx_itm_fatal("cannot find this thread's stack");
	t->stack_lo = (uintptr_t)addr;
	t->stack_hi = (uintptr_t)addr + size;
	ltx_itm_fast.stack_lo = t->stack_lo;
	ltx_itm_fast.stack_span = size;
}

struct ltx_itm_thread *ltx_itm_thread_get(void)
{
	struct ltx_itm_thread *t = ltx_itm_self;

	if (ltx_likely(t != NULL))
		return t;
	pthread_once(&key_once, make_key);
	pthread_mutex_lock(&registry_lock);
	for (t = ltx_itm_registry; t != NULL; t = t->next_all)
		if (!t->in_use)
			break;
	if (t == NULL) {
		if (posix_memalign((void **)&t, LTX_LINE_SIZE, sizeof(*t)))
			ltx_itm_fatal("no memory for the thread state");
		memset(t, 0, sizeof(*t));
		t->next_all = ltx_itm_registry;
		/* Pairs with the acquire loads of the registry head by
		 * writers walking it without the lock. */
		__atomic_store_n(&ltx_itm_registry, t, __ATOMIC_RELEASE);
	}
	t->in_use = 1;
	pthread_mutex_unlock(&registry_lock);
	stack_bounds(t);
	t->mode = ITM_NONE;
	t->depth = 0;
	/* Registered before the first shared_enter, with a full barrier
	 * after it: see the top of the file. */
	__atomic_fetch_add(&ltx_itm_live_threads, 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	pthread_setspecific(exit_key, t);
	ltx_itm_self = t;
	return t;
}

static void pause_a_little(unsigned *spins)
{
	if (++*spins < 64)
		ltx_cpu_relax();
	else
		sched_yield();
}

void ltx_itm_shared_enter(struct ltx_itm_thread *t)
{
	for (;;) {
		unsigned spins = 0;

		__atomic_store_n(&t->seq, t->seq + 1, __ATOMIC_RELAXED);
		/* The light side of the writer's heavy fence. */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (ltx_likely(__atomic_load_n(&writer, __ATOMIC_RELAXED) == 0))
			return;
		/* Pairs with the writer's acquire load of our seq. */
		__atomic_store_n(&t->seq, t->seq + 1, __ATOMIC_RELEASE);
		/* Pairs with the writer's release store of 0. */
		while (__atomic_load_n(&writer, __ATOMIC_ACQUIRE) != 0)
			pause_a_little(&spins);
	}
}

void ltx_itm_shared_exit(struct ltx_itm_thread *t)
{
	/* Pairs with the acquire loads of seq by writers and quiescers. */
	__atomic_store_n(&t->seq, t->seq + 1, __ATOMIC_RELEASE);
}

/*
 * Wait until no thread but t holds the lock shared (after the CAS), for at
 * most budget waits (0: no limit).  Returns false on running out.
 */
static bool drain_readers(struct ltx_itm_thread *t, unsigned budget)
{
	unsigned spins = 0;

	if (__atomic_load_n(&ltx_itm_live_threads, __ATOMIC_SEQ_CST) <= 1)
		return true; /* no other registered thread: no reader */
	ltx_fence_heavy();

	for (struct ltx_itm_thread *o =
		     __atomic_load_n(&ltx_itm_registry, __ATOMIC_ACQUIRE);
	     o != NULL; o = o->next_all) {
		if (o == t)
			continue;
		while (__atomic_load_n(&o->seq, __ATOMIC_SEQ_CST) & 1) {
			if (budget != 0 && spins >= budget)
				return false;
			pause_a_little(&spins);
		}
	}
	return true;
}

static bool take_writer(void)
{
	unsigned expected = 0;

	return __atomic_compare_exchange_n(&writer, &expected, 1, false,
					   __ATOMIC_SEQ_CST,
					   __ATOMIC_RELAXED);
}

bool ltx_itm_serial_try_enter(struct ltx_itm_thread *t)
{
	if (!take_writer())
		return false;
	/*
	 * The caller may hold lines of a live ltx transaction, and a reader
	 * that ltx made irrevocable (LTX_SERIAL_AFTER) may wait for one of
	 * them: give up rather than wait for it for ever.
	 */
	if (drain_readers(t, 4096))
		return true;
	ltx_itm_serial_exit();
	return false;
}

void ltx_itm_serial_enter(struct ltx_itm_thread *t)
{
	unsigned spins = 0;

	while (!take_writer())
		pause_a_little(&spins);
	drain_readers(t, 0); /* t holds no line: every reader ends */
}

void ltx_itm_serial_exit(void)
{
	/* Pairs with the readers' acquire loads of writer. */
	__atomic_store_n(&writer, 0, __ATOMIC_RELEASE);
}

void ltx_itm_quiesce(struct ltx_itm_thread *t)
{
	/* Every transaction running now shows an odd seq after this. */
	ltx_fence_heavy();
	for (struct ltx_itm_thread *o =
		     __atomic_load_n(&ltx_itm_registry, __ATOMIC_ACQUIRE);
	     o != NULL; o = o->next_all) {
		uint64_t s = __atomic_load_n(&o->seq, __ATOMIC_ACQUIRE);
		unsigned spins = 0;

		if (o == t || !(s & 1))
			continue;
		while (__atomic_load_n(&o->seq, __ATOMIC_ACQUIRE) == s)
			pause_a_little(&spins);
	}
}
