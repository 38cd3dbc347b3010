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
	LTX_BACKOFF_AUTO,  /* exp, its windows scaled by measuring (below) */
};

struct ltx_backoff_cfg {
	int policy;   /* enum ltx_backoff_policy */
	uint64_t min; /* cycles: the fixed delay, or the first window */
	uint64_t max; /* cycles: the largest window (exp) */
};

/*
 * The auto policy: the exp policy's windows, both bounds multiplied by a
 * scale that one controller per process picks by measuring which of a
 * few scales gets the most work done.  Why: where the threads' cores pass
 * a cache line slowly (a host that puts two vCPUs far apart) and short
 * transactions keep failing, a long wait lets one thread run alone for a
 * while, and the program does more than with every thread running;
 * elsewhere (conflicts on different lines, cores close by) the wait is
 * time lost.  No fixed window suits both (ltx(7), LTX_BACKOFF).
 *
 * The measure is a count that grows with the work done, which the caller
 * names (tx.c: the global version clock, one tick per update transaction
 * that reaches its commit) and the controller reads at the end of each
 * epoch of LTX_BACKOFF_EPOCH cycles: its rate is the epoch's score.  The
 * controller runs only where a transaction backs off, so a program that
 * never fails never pays for it.  Two epochs are not scored: one that
 * nobody ended before it had lasted two (part of it went by with no
 * backoff at all: the program idle, or doing something else), and the
 * first of the process (or of a fork's child), which starts at the first
 * backoff and so often covers the threads' start-up.  It measures each arm
 * (window scale) for one epoch, takes the best (a larger scale must beat the
 * smaller ones by an eighth), and keeps it for len epochs before measuring
 * again; len doubles while the same arm wins, up to LTX_BACKOFF_KEEP_MAX, and
 * starts over at LTX_BACKOFF_KEEP_MIN when another one does.  So a program
 * whose best scale does not change spends about 3 epochs of every 67 on the
 * others.
 *
 * Synchronization: lock is a try-lock (an acquire exchange, a release
 * store) held while a thread closes an epoch; whoever finds it held does
 * not wait, and backs off with the scale as it is, so the controller
 * never blocks (a signal handler's transaction may back off while its
 * thread holds it).  Every field is read and written under it, except
 * start and shift, which the holder stores and anyone may load (relaxed
 * atomics: any value either has ever had is a valid one to act on; a
 * stale start only lets a thread try the lock early or late).
 */
#define LTX_BACKOFF_ARMS     3
#define LTX_BACKOFF_EPOCH    (1ull << 23) /* cycles: a few milliseconds */
#define LTX_BACKOFF_KEEP_MIN 4
#define LTX_BACKOFF_KEEP_MAX 64

/* The arms: the windows' bounds shifted left by this many bits (min by
 * the whole shift, max by at most LTX_BACKOFF_MAX_SHIFT). */
extern const unsigned ltx_backoff_shifts[LTX_BACKOFF_ARMS];
#define LTX_BACKOFF_MAX_SHIFT 2

struct ltx_backoff_adapt {
	int lock;	    /* 1 while a thread closes an epoch */
	unsigned shift;	    /* the scale in force (ltx_backoff_shifts[]) */
	uint64_t start;	    /* cycle count at the epoch's start, 0: none */
	uint64_t progress0; /* the measure then */
	uint64_t rate[LTX_BACKOFF_ARMS]; /* the arms' last scores */
	unsigned arm;	  /* arm being measured; LTX_BACKOFF_ARMS: none */
	unsigned best;	  /* arm kept between measurements */
	unsigned left;	  /* epochs to keep it still */
	unsigned len;	  /* epochs it was kept for last time */
	int fresh;	  /* the epoch began the controller's life (start 0) */
	uint64_t epochs;  /* epochs scored */
	uint64_t skipped; /* epochs not scored: the first, or longer than two */
};

/* The process's controller. */
extern struct ltx_backoff_adapt ltx_backoff_auto;

/*
 * ltx_backoff_adapt_step: at cycle count now, with the measure at
 * *progress, close a's epoch if it has lasted LTX_BACKOFF_EPOCH and
 * nobody else is closing it; returns the shift to apply now.
 */
unsigned ltx_backoff_adapt_step(struct ltx_backoff_adapt *a, uint64_t now,
				const uint64_t *progress);

/* ltx_backoff_adapt_reset: a's lock free and its epoch over (the child
 * of a fork, where the holder may be a thread that is gone). */
void ltx_backoff_adapt_reset(struct ltx_backoff_adapt *a);

/*
 * ltx_backoff_delay: wait as cfg says after the consec-th consecutive
 * failure (consec >= 1); rng is the caller's xorshift state; progress is
 * the auto policy's measure (NULL: none, the windows keep their scale);
 * *shift is set to the scale applied (0 but for auto).  Spins on the
 * cycle counter; makes no system call except for the yield policy.
 * Returns the cycles spent.
 */
uint64_t ltx_backoff_delay(const struct ltx_backoff_cfg *cfg, unsigned consec,
			   uint64_t *rng, const uint64_t *progress,
			   unsigned *shift);

/* ltx_backoff_window: the exp or auto policy's window after consec
 * failures, both bounds shifted left by shift (max by at most
 * LTX_BACKOFF_MAX_SHIFT). */
uint64_t ltx_backoff_window(const struct ltx_backoff_cfg *cfg, unsigned consec,
			    unsigned shift);

#endif /* LTX_RT_BACKOFF_H */
