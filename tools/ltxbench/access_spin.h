/* SPDX-License-Identifier: MIT */
/* Access interface: one global test-and-test-and-set lock with backoff. */
#include <sched.h>

#define BENCH_ACCESS_NAME "spin"

/*
 * Synchronization: the lock word is taken by an acquire exchange, which
 * pairs with the release store that drops it, so the critical sections of
 * all threads are totally ordered.  Waiters spin on relaxed loads with an
 * exponential delay, and yield the CPU once the delay is long: with more
 * threads than cores a preempted holder would otherwise cost whole slices.
 */
static int bench_spin_word __attribute__((aligned(64)));

static inline void bench_spin_lock(void)
{
	unsigned delay = 4;

	while (__atomic_exchange_n(&bench_spin_word, 1, __ATOMIC_ACQUIRE)) {
		do {
			if (delay >= 4096) {
				sched_yield();
			} else {
				for (unsigned i = 0; i < delay; i++)
					__builtin_ia32_pause();
				delay *= 2;
			}
		} while (__atomic_load_n(&bench_spin_word, __ATOMIC_RELAXED));
	}
}

static inline void bench_spin_unlock(void)
{
	/* Pairs with the acquire exchange in bench_spin_lock. */
	__atomic_store_n(&bench_spin_word, 0, __ATOMIC_RELEASE);
}

#define TX_SAFE
#define LOAD(lv)     (lv)
#define LOADX(lv)    (lv)
#define STORE(lv, v) ((lv) = (v))
#define TX_BEGIN(w)                                                            \
	do {                                                                   \
		bench_spin_lock();                                             \
		do {
#define TX_END(w)                                                              \
	}                                                                      \
	while (0)                                                              \
		;                                                              \
	bench_spin_unlock();                                                   \
	}                                                                      \
	while (0)
#define TX_RESTART(w)                                                          \
	bench_fatal("ltxbench: code under a spinlock read an impossible "      \
		    "value")
