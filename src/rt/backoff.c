/* SPDX-License-Identifier: MIT */
/* Backoff policies: none, spin, randomized truncated exponential (fixed, or
 * scaled by measuring: auto), yield. */
#include <sched.h>
#include <stdbool.h>

#include "arch/arch.h"
#include "rt/backoff.h"
#include "rt/wait.h"

/*
 * The exponential policy is the one the article's Figure 8.4 leaves as
 * "... delay ...": after the n-th consecutive failure wait a random time in
 * [0, min * 2^(n-1)), the window truncated at max.  Randomization breaks the
 * lockstep of two requesters that keep dooming each other (livelock).
 */
uint64_t ltx_backoff_window(const struct ltx_backoff_cfg *cfg, unsigned consec,
			    unsigned shift)
{
	unsigned n = consec > 0 ? consec - 1 : 0;
	/* min and max are at most 2^40 (config.c), shift at most 6. */
	uint64_t min = cfg->min << shift;
	uint64_t max = cfg->max << (shift < LTX_BACKOFF_MAX_SHIFT
					    ? shift
					    : LTX_BACKOFF_MAX_SHIFT);

	/* min << n would pass bit 63, or min is 0 (never set so): max. */
	if (min == 0 || n >= (unsigned)__builtin_clzll(min))
		return max;
	min <<= n;
	return min < max ? min : max;
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static uint64_t spin_for(uint64_t cycles)
{
	uint64_t start = ltx_cycles(), now = start;

	while (now - start < cycles) {
		ltx_cpu_relax();
		now = ltx_cycles();
	}
	return now - start;
}

const unsigned ltx_backoff_shifts[LTX_BACKOFF_ARMS] = { 0, 3, 6 };

/* A start this far ahead of a thread's cycle count is not a race of a
 * few cycles between threads: the counter went back. */
#define FAR ((int64_t)LTX_BACKOFF_EPOCH * LTX_BACKOFF_KEEP_MAX)

struct ltx_backoff_adapt ltx_backoff_auto __attribute__((aligned(64))) = {
	.len = LTX_BACKOFF_KEEP_MIN / 2,
};

/* The epoch [a->start, now) is over, its measure at p: score it and pick
 * the arm for the next one (the lock held). */
static void close_epoch(struct ltx_backoff_adapt *a, uint64_t now, uint64_t p)
{
	uint64_t done = p >= a->progress0 ? p - a->progress0 : 0;
	/* Ticks per 2^20 cycles; 128-bit, so that no epoch, however long
	 * (the controller runs only when a transaction fails), overflows. */
	uint64_t rate =
		(uint64_t)(((unsigned __int128)done << 20) / (now - a->start));
	unsigned arm = a->arm;

	a->epochs++;
	if (arm < LTX_BACKOFF_ARMS) {
		a->rate[arm++] = rate;
		if (arm == LTX_BACKOFF_ARMS) {
			unsigned b = 0;

			/* A larger scale must win by an eighth. */
			for (unsigned i = 1; i < LTX_BACKOFF_ARMS; i++)
				if (a->rate[i] > a->rate[b] + a->rate[b] / 8)
					b = i;
			if (b != a->best)
				a->len = LTX_BACKOFF_KEEP_MIN;
			else if (a->len < LTX_BACKOFF_KEEP_MAX)
				a->len *= 2;
			a->best = b;
			a->left = a->len;
		}
		a->arm = arm;
	} else if (a->left <= 1) {
		a->arm = 0; /* measure again */
	} else {
		a->left--;
	}
}

unsigned ltx_backoff_adapt_step(struct ltx_backoff_adapt *a, uint64_t now,
				const uint64_t *progress)
{
	uint64_t start = __atomic_load_n(&a->start, __ATOMIC_RELAXED);
	/* Signed: a now read just before another thread started the epoch
	 * is a little behind start, and inside the epoch too. */
	int64_t in = (int64_t)(now - start);
	unsigned shift;
	bool behind;

	if ((start != 0 && in < (int64_t)LTX_BACKOFF_EPOCH && in > -FAR) ||
	    __atomic_exchange_n(&a->lock, 1, __ATOMIC_ACQUIRE) != 0)
		return __atomic_load_n(&a->shift, __ATOMIC_RELAXED);
	/* Under the lock, again: another thread may have closed it
	 * meanwhile.  A start FAR ahead of now (a cycle counter that went
	 * back) starts an epoch without scoring one, as does a fork's
	 * reset. */
	start = a->start;
	behind = start != 0 && now < start;
	if (start == 0 || (!behind && now - start >= LTX_BACKOFF_EPOCH) ||
	    (behind && start - now >= (uint64_t)FAR)) {
		uint64_t p = __atomic_load_n(progress, __ATOMIC_RELAXED);

		/* Scored only if it lasted at most two epochs (a longer one
		 * had a stretch with no backoff at all: the program idle, or
		 * doing something else, not a measure of this arm), and if
		 * it is not the first (rt/backoff.h). */
		if (start != 0 && !behind &&
		    now - start <= 2 * LTX_BACKOFF_EPOCH && !a->fresh)
			close_epoch(a, now, p);
		else if (start != 0 && !behind)
			a->skipped++;
		a->fresh = start == 0;
		a->progress0 = p;
		__atomic_store_n(&a->start, now, __ATOMIC_RELAXED);
		shift = ltx_backoff_shifts[a->arm < LTX_BACKOFF_ARMS ? a->arm
								     : a->best];
		__atomic_store_n(&a->shift, shift, __ATOMIC_RELAXED);
	}
	shift = a->shift;
	__atomic_store_n(&a->lock, 0, __ATOMIC_RELEASE);
	return shift;
}

void ltx_backoff_adapt_reset(struct ltx_backoff_adapt *a)
{
	__atomic_store_n(&a->start, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&a->lock, 0, __ATOMIC_RELEASE);
}

uint64_t ltx_backoff_delay(const struct ltx_backoff_cfg *cfg, unsigned consec,
			   uint64_t *rng, const uint64_t *progress,
			   unsigned *shift)
{
	uint64_t start;

	*shift = 0;
	switch (cfg->policy) {
	case LTX_BACKOFF_SPIN:
		return spin_for(cfg->min);
	case LTX_BACKOFF_AUTO:
		if (progress != NULL)
			*shift = ltx_backoff_adapt_step(&ltx_backoff_auto,
							ltx_cycles(), progress);
		/* fall through */
	case LTX_BACKOFF_EXP:
		return spin_for(xorshift(rng) %
				ltx_backoff_window(cfg, consec, *shift));
	case LTX_BACKOFF_YIELD:
		start = ltx_cycles();
		ltx_yield();
		return ltx_cycles() - start;
	default:
		return 0;
	}
}
