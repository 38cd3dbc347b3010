/* SPDX-License-Identifier: MIT */
/* Per-thread transaction counters (plain increments by the owning thread). */
#ifndef LTX_RT_STATS_H
#define LTX_RT_STATS_H

#include <stdint.h>

/* Number of TM_ABORT_* bits counted separately. */
#define LTX_STATS_CAUSES 16

/*
 * Synchronization: only the owning thread writes these, with plain
 * increments; readers in other threads may see a torn or stale total and
 * must treat the figures as approximate while the thread runs.
 */
/*
 * Read-only commits are not counted on their (fast) path: they are the
 * transactions begun (struct ltx_tx.tx_id) less commits_rw, less aborts,
 * less the one in progress if any.
 */
struct ltx_stats {
	uint64_t commits_rw;		      /* committed, some line written */
	uint64_t aborts;		      /* transactions that aborted */
	uint64_t abort_cause[LTX_STATS_CAUSES]; /* per TM_ABORT_* bit */
	uint64_t backoff_cycles;	      /* time spent in backoff delays */
};

#endif /* LTX_RT_STATS_H */
