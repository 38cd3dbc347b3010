/* SPDX-License-Identifier: MIT */
/* Statistics collection: per-thread counters, abort sites, process totals. */
#ifndef LTX_TX_STATS_H
#define LTX_TX_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "cd/conflict.h"
#include "rt/stats.h"
#include "tx/desc.h"

/*
 * A thread's conflict lines (issue 19), made with its abort sites when it
 * starts counting: the conflict that doomed its transaction, classified
 * when it was found; the aborts counted unknown because their holder had
 * stored nothing yet, all with one holder and line, to look at again
 * later (a holder preempted between its LTX and its ST dooms every try
 * until it runs again); and the LTX_STATS_LINES hottest lines, the only
 * part other threads read.
 */
struct ltx_stats_lines {
	struct ltx_conflict doom;
	struct ltx_conflict pend;
	uint64_t npend;	     /* aborts in pend, 0: none */
	unsigned pend_looks; /* times pend was looked at again */
	struct ltx_stats_line line[LTX_STATS_LINES];
};

/*
 * Synchronization of the counters below (issue 6): the owning thread brackets
 * each update made in a slow path with ltx_stats_write_begin/end, a seqlock
 * (struct ltx_tx.stats_gen odd while writing); ltx_stats_read copies a
 * descriptor's counters and retries until the generation was even and
 * unchanged around the copy, so a snapshot never shows an abort without
 * its cause or a commit without its histogram entry.
 */
/* Inline: a store and a compiler barrier each on x86, and an irrevocable
 * transaction that runs alone counts itself on its begin (tx.c).  The
 * stores that follow write_begin are ordered after the odd generation by
 * the release fence; write_end's release store orders them before the
 * even one.  Both pair with the acquire load and fence in
 * read_descriptor (stats.c). */
static inline void ltx_stats_write_begin(struct ltx_tx *tx)
{
	__atomic_store_n(&tx->stats_gen, tx->stats_gen + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void ltx_stats_write_end(struct ltx_tx *tx)
{
	__atomic_store_n(&tx->stats_gen, tx->stats_gen + 1, __ATOMIC_RELEASE);
}

/*
 * ltx_stats_arm: a thread took tx (called once per take, not for handler
 * twins): count the thread, and make tx count what LTX_STATS asks for (a
 * change of the setting re-arms the calling thread's descriptor by itself).
 * Not for signal handlers.
 */
void ltx_stats_arm(struct ltx_tx *tx);

/* ltx_stats_doom: note where the live transaction failed (slow path, before
 * ltx_tx_doom; addr is the line accessed or NULL). */
void ltx_stats_doom(struct ltx_tx *tx, int kind, uintptr_t pc, const void *addr,
		    unsigned cause);

/* ltx_stats_commit: count a commit of nr loads and nw lines (stats on). */
void ltx_stats_commit(struct ltx_tx *tx, uint64_t nr, uint64_t nw);

/* ltx_stats_abort: count an abort's site and conflict kind (stats on),
 * inside the write section finish_abort opens. */
void ltx_stats_abort(struct ltx_tx *tx, unsigned cause);

/* ltx_stats_thread_end: the thread that took tx ends (stats on): look at
 * its pending conflicts (cd/conflict.h, ltx_cd_conflict_again) for the
 * last times, so that none stays unknown only because the thread stopped
 * aborting and committing. */
void ltx_stats_thread_end(struct ltx_tx *tx);

/* ltx_stats_changed: LTX_STATS was set by tm_config_set. */
void ltx_stats_changed(void);

/* ltx_stats_init: start the export if LTX_STATS asked for it (called once
 * the environment has been read). */
void ltx_stats_init(void);

/*
 * ltx_stats_collect: the totals of every descriptor ever created into *sum
 * (commits_ro exact where counted, else derived), the number of threads
 * that took one (sum->threads) also into *threads, and the abort sites of all
 * threads merged by (pc, kind) into sites[0, max), most frequent first. Returns
 * the number of sites.  Takes the descriptor registry lock; not for signal
 * handlers.
 */
unsigned ltx_stats_collect(struct ltx_stats *sum, uint64_t *threads,
			   struct ltx_stats_site *sites, unsigned max);

/*
 * ltx_stats_collect_all: the same, with the threads' conflict lines merged
 * by line into t->lines[0, t->max_lines), most conflicts first, the rest
 * counted in sum->lines_dropped (the statistics segment's source).
 */
void ltx_stats_collect_all(struct ltx_stats *sum, uint64_t *threads,
			   struct ltx_stats_tables *t);

#endif /* LTX_TX_STATS_H */
