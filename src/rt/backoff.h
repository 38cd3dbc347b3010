/* SPDX-License-Identifier: MIT */
/* Backoff applied by a failing VALIDATE or COMMIT (the article's "delay"). */
#ifndef LTX_RT_BACKOFF_H
#define LTX_RT_BACKOFF_H

#include <stdint.h>

enum ltx_backoff_policy {
	LTX_BACKOFF_NONE,  /* retry at once */
	LTX_BACKOFF_SPIN,  /* a fixed delay of min cycles */
	LTX_BACKOFF_EXP,   /* randomized truncated exponential, min..max */
	LTX_BACKOFF_YIELD, /* sched_yield() */
};

struct ltx_backoff_cfg {
	int policy;   /* enum ltx_backoff_policy */
	uint64_t min; /* cycles: the fixed delay, or the first window */
	uint64_t max; /* cycles: the largest window (exp) */
};

/*
 * ltx_backoff_delay: wait as cfg says after the consec-th consecutive
 * failure (consec >= 1); rng is the caller's xorshift state.  Spins on the
 * cycle counter; makes no system call except for the yield policy.
 * Returns the cycles spent.
 */
uint64_t ltx_backoff_delay(const struct ltx_backoff_cfg *cfg, unsigned consec,
			   uint64_t *rng);

/* ltx_backoff_window: the exp policy's window after consec failures. */
uint64_t ltx_backoff_window(const struct ltx_backoff_cfg *cfg, unsigned consec);

#endif /* LTX_RT_BACKOFF_H */
