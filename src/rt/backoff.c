/* SPDX-License-Identifier: MIT */
/* Backoff policies: none, spin, randomized truncated exponential, yield. */
#include <sched.h>

#include "arch/arch.h"
#include "rt/backoff.h"

/*
 * The exponential policy is the one the article's Figure 8.4 leaves as
 * "... delay ...": after the n-th consecutive failure wait a random time in
 * [0, min * 2^(n-1)), the window truncated at max.  Randomization breaks the
 * lockstep of two requesters that keep dooming each other (livelock).
 */
uint64_t ltx_backoff_window(const struct ltx_backoff_cfg *cfg, unsigned consec)
{
	unsigned shift = consec > 0 ? consec - 1 : 0;
	uint64_t w;

	if (shift > 40)
		shift = 40;
	w = cfg->min << shift;
	if (w > cfg->max || w < cfg->min)
		w = cfg->max;
	return w;
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

uint64_t ltx_backoff_delay(const struct ltx_backoff_cfg *cfg, unsigned consec,
			   uint64_t *rng)
{
	uint64_t start;

	switch (cfg->policy) {
	case LTX_BACKOFF_SPIN:
		return spin_for(cfg->min);
	case LTX_BACKOFF_EXP:
		return spin_for(xorshift(rng) %
				ltx_backoff_window(cfg, consec));
	case LTX_BACKOFF_YIELD:
		start = ltx_cycles();
		sched_yield();
		return ltx_cycles() - start;
	default:
		return 0;
	}
}
