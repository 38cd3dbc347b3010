/* SPDX-License-Identifier: MIT */
/* Per-thread transaction counters (plain increments by the owning thread). */
#ifndef LTX_RT_STATS_H
#define LTX_RT_STATS_H

#include <stdint.h>

/* Number of TM_ABORT_* bits counted separately. */
#define LTX_STATS_CAUSES 16

/*
 * Histogram buckets (issue 6): bucket 0 counts the value 0, bucket b > 0
 * the values in [2^(b-1), 2^b), the last bucket everything above.
 */
#define LTX_STATS_HIST 16

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

	/* ---- statistics and ltxstat (issue 6): counted only while
	 * LTX_STATS is on (struct ltx_tx.stats_on), in slow paths ---- */
	uint64_t commits_ro;	   /* exact while counted; else derived */
	uint64_t conflicts_read;    /* LT found the line held by another */
	uint64_t conflicts_write;   /* LTX/ST found the line held */
	uint64_t conflicts_upgrade; /* ... a line this transaction had read */
	uint64_t irrevocable;	   /* transactions made irrevocable */
	uint64_t serial;	   /* ... of them by LTX_SERIAL_AFTER */
	uint64_t sites_dropped;	   /* aborts whose site table was full */
	uint64_t retries_hist[LTX_STATS_HIST]; /* failed tries per commit */
	uint64_t reads_hist[LTX_STATS_HIST];   /* LT loads per commit */
	uint64_t writes_hist[LTX_STATS_HIST];  /* lines in E per commit */

	/* the faithful (visible) mode's emulated bus requests, and the
	 * invisible mode's on its counted path (cd/lines.h, LTX_CAPACITY);
	 * BUSY in both modes.  Plain increments by the owning thread outside
	 * the seqlock: each is one word, and none is tied to another. */
	uint64_t bus_t_read;	/* T_READ: shared requests (LT) */
	uint64_t bus_t_rfo;	/* T_RFO: exclusive requests (LTX/ST) */
	uint64_t bus_busy;	/* BUSY answers */
	uint64_t bus_writeback; /* lines written back at commit */
	/* tm_malloc/tm_free (tx/mem.c); a block counts where it is handled */
	uint64_t mem_pending_bytes;  /* freed by tm_free, not yet released */
	uint64_t mem_pending_blocks; /* the blocks of mem_pending_bytes */
	uint64_t mem_freed_blocks;   /* released to the allocator */
	uint64_t mem_alloc_blocks;   /* returned by tm_malloc and friends */
};

/* ---- statistics and ltxstat (issue 6) ---- */

/* Abort sites: what the failing access was (struct ltx_stats_site.kind). */
enum ltx_site_kind {
	LTX_SITE_OTHER = 0,   /* no access to blame (signal, tm_abort...) */
	LTX_SITE_READ = 1,    /* LT */
	LTX_SITE_WRITE = 2,   /* LTX or ST */
	LTX_SITE_UPGRADE = 3, /* LTX or ST of a line read by LT before */
	LTX_SITE_VALIDATE = 4,
	LTX_SITE_COMMIT = 5,
};

#define LTX_STATS_SITES 16 /* per thread */
#define LTX_STATS_STACK 8  /* frames kept per site (LTX_STATS=stacks) */

/* One abort site of one thread: the PC of the tm_* caller. */
struct ltx_stats_site {
	uintptr_t pc;
	uint32_t kind;	/* enum ltx_site_kind */
	uint32_t cause; /* TM_ABORT_* bits seen at this site (OR) */
	uint64_t count;
	uint32_t nstack;
	uintptr_t stack[LTX_STATS_STACK]; /* callers, innermost first */
};

/* LTX_STATS: 0 off, 1 counters and sites, 2 also call stacks. */
enum ltx_stats_level {
	LTX_STATS_OFF = 0,
	LTX_STATS_ON = 1,
	LTX_STATS_STACKS = 2,
};

/* The bucket of value v (see LTX_STATS_HIST). */
static inline unsigned ltx_stats_bucket(uint64_t v)
{
	unsigned b = v == 0 ? 0 : 64 - (unsigned)__builtin_clzll(v);

	return b < LTX_STATS_HIST ? b : LTX_STATS_HIST - 1;
}

#endif /* LTX_RT_STATS_H */
