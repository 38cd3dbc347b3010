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
 * Why transactions aborted, in rows: each abort is counted in exactly one,
 * the first that applies in this order (tx/stats.c, ltx_stats_abort), so
 * the rows add up to the aborts.  R(ID, key, label): LTX_ABORT_<ID>, the
 * JSON key, the summary's label.  An abort's TM_ABORT_* bits (abort_cause,
 * where an abort may have several) and the site where the transaction was
 * doomed decide its row.
 */
#define LTX_ABORT_ROWS_LIST(R)                                                 \
	R(EXPLICIT, explicit, "tm_abort or tm_retry")                          \
	R(SIGNAL, signal, "a signal landed")                                   \
	R(NOMEM, nomem, "no memory for the logs")                              \
	R(CAPACITY, capacity, "capacity (LTX_CAPACITY)")                       \
	R(CONFLICT_LT, conflict_lt, "conflict found by LT")                    \
	R(CONFLICT_ST, conflict_st, "conflict found by LTX/ST")                \
	R(UPGRADE, upgrade, "upgrade: LTX/ST after LT")                        \
	R(VALIDATE, validate, "failed VALIDATE")                               \
	R(COMMIT, commit, "failed COMMIT")                                     \
	R(DOOMED, doomed, "doomed by another tx")                              \
	R(FAULT, fault, "fault while doomed")                                  \
	R(OTHER, other, "other")

/*
 * Why a conflict happened (issue 19), for the aborts in the conflict rows
 * (CONFLICT_LT to DOOMED): each such abort is in exactly one class, so the
 * classes add up to those rows.  C(ID, key, label): LTX_CONFLICT_<ID>, the
 * JSON key, the summary's label.
 *   TRUE     the two transactions' bytes of the line overlap, and one of
 *            them wrote them (the other's dirty bytes were seen);
 *   FALSE    the same line, disjoint bytes: padding or alignment fixes it;
 *   ALIAS    two different lines that share one ownership record (the
 *            visible mode: one bytelock): LTX_OREC_BITS fixes it;
 *   UNKNOWN  the rest: the holder's bytes were not known (a line read by
 *            LT in the visible mode, taken by LTX and not yet stored, a
 *            read found newer at validation, a doom by another tx...).
 */
#define LTX_CONFLICT_CLASSES_LIST(C)                                           \
	C(TRUE, true_sharing, "true sharing")                                  \
	C(FALSE, false_sharing, "false sharing")                               \
	C(ALIAS, aliasing, "orec aliasing")                                    \
	C(UNKNOWN, unknown, "unknown")

#define LTX_CONFLICT_ID_(id, key, label) LTX_CONFLICT_##id,
enum ltx_conflict_class {
	LTX_CONFLICT_CLASSES_LIST(LTX_CONFLICT_ID_) LTX_CONFLICT_N_
};
#define LTX_CONFLICT_CLASSES 4 /* a number, for the segment's names */
_Static_assert(LTX_CONFLICT_CLASSES == LTX_CONFLICT_N_, "LTX_CONFLICT_CLASSES");

#define LTX_ABORT_ROW_ID_(id, key, label) LTX_ABORT_##id,
enum ltx_abort_row { LTX_ABORT_ROWS_LIST(LTX_ABORT_ROW_ID_) LTX_ABORT_N_ };
#define LTX_ABORT_ROWS 12 /* a number, for the segment's names */
_Static_assert(LTX_ABORT_ROWS == LTX_ABORT_N_, "LTX_ABORT_ROWS");

/*
 * The statistics record, each field once: from this list come struct
 * ltx_stats (each thread's counters in its descriptor, and the process
 * totals), the counters of the statistics segment (laid out in the list's
 * order; the segment carries the list's names, LTX_STATS_NAMES, so a reader
 * built from another list refuses it: rt/statseg.h), the names ltxstat
 * prints, the merge of the threads' counters and the copy into the public
 * struct tm_stats (tx/stats.c, where a static check ties that struct to
 * this list).  Adding a counter is one line here, and its increments.
 *
 * X(name, dim, abi, show, what):
 *   name  the field: tx->stats.name, tm_stats.name, the JSON key
 *   dim   empty for one counter, [N] for an array of N
 *   abi   TM: also in the public struct tm_stats, at the place it has in
 *         this list among the TM and SUM fields (so a new public field goes
 *         at the end of both); LTX: internal (the segment and ltxstat);
 *         SUM: in struct tm_stats only, worked out from the stored fields
 *         by LTX_STATS_SUM_<name>(c)
 *   show  OWN: ltxstat's summary prints it in a layout of its own; LINE: the
 *         summary prints it as "count  what" when it is not 0; JSON: only
 *         --json prints it; NONE: nothing prints it
 *   what  what it counts (the summary's label, and the docs' wording)
 *
 * Synchronization: only the owning thread writes a descriptor's fields,
 * with plain increments, inside the seqlock of tx/stats.h where fields go
 * together (an abort and its cause); readers in other threads copy them
 * with relaxed loads and the seqlock.
 *
 * Read-only commits are not counted on their (fast) path while statistics
 * are off: they are then the transactions begun (struct ltx_tx.tx_id) less
 * commits_rw, less aborts, less the one in progress if any.  Fields marked
 * "stats on" are counted only while LTX_STATS is on (struct ltx_tx.stats_on),
 * in slow paths.
 */
#define LTX_STATS_FIELDS(X)                                                    \
	X(threads, , TM, OWN, "threads that used ltx")                         \
	X(commits, , SUM, OWN, "committed transactions")                       \
	X(commits_ro, , TM, OWN, "commits that wrote no line")                 \
	X(commits_rw, , TM, OWN, "commits that wrote a line")                  \
	X(aborts, , TM, OWN, "aborted transactions (each try counts)")         \
	X(abort_cause, [LTX_STATS_CAUSES], TM, JSON,                           \
	  "aborts by TM_ABORT_* bit (an abort may have several)")              \
	X(conflicts_read, , TM, JSON, "LT found the line held (stats on)")     \
	X(conflicts_write, , TM, JSON,                                         \
	  "LTX/ST found the line held (stats on)")                             \
	X(conflicts_upgrade, , TM, JSON,                                       \
	  "LTX/ST found a line it had read held (stats on)")                   \
	X(retries_hist, [LTX_STATS_HIST], TM, OWN,                             \
	  "failed tries per commit (stats on)")                                \
	X(reads_hist, [LTX_STATS_HIST], TM, OWN,                               \
	  "LT loads per commit (stats on)")                                    \
	X(writes_hist, [LTX_STATS_HIST], TM, OWN,                              \
	  "lines written per commit (stats on)")                               \
	X(backoff_cycles, , TM, OWN, "cycle-counter ticks spent backing off")  \
	X(irrevocable, , TM, OWN, "transactions made irrevocable")             \
	X(serial, , TM, OWN, "... of them by LTX_SERIAL_AFTER")                \
	X(bus_t_read, , TM, OWN, "bus T_READ requests (LT of a new line)")     \
	X(bus_t_rfo, , TM, OWN, "bus T_RFO requests (LTX/ST of a new line)")   \
	X(bus_busy, , TM, OWN, "bus BUSY answers")                             \
	X(bus_writeback, , TM, OWN, "lines written back at commit")            \
	X(aborts_by, [LTX_ABORT_ROWS], LTX, OWN,                               \
	  "aborts by reason, each in one row (LTX_ABORT_ROWS_LIST; stats on)") \
	X(sites_dropped, , LTX, OWN, "aborts at sites not kept")               \
	X(conflict_class, [LTX_CONFLICT_CLASSES], LTX, OWN,                    \
	  "aborts of the conflict rows by class (LTX_CONFLICT_CLASSES_LIST; "  \
	  "stats on)")                                                         \
	X(lines_dropped, , LTX, OWN,                                           \
	  "... of them on lines the line tables did not keep")                 \
	X(mem_pending_bytes, , LTX, NONE,                                      \
	  "bytes freed by tm_free, not yet released")                          \
	X(mem_pending_blocks, , LTX, NONE, "the blocks of mem_pending_bytes")  \
	X(mem_freed_blocks, , LTX, NONE, "blocks released to the allocator")   \
	X(mem_alloc_blocks, , LTX, NONE,                                       \
	  "blocks returned by tm_malloc and friends")                          \
	X(backoff_scaled, , LTX, LINE, "backoffs in wider windows")

/* SUM fields, from the stored ones of c (a struct ltx_stats pointer). */
#define LTX_STATS_SUM_commits(c) ((c)->commits_ro + (c)->commits_rw)

/* Pick fields by their abi column: STORED (in struct ltx_stats), PUBLIC (in
 * struct tm_stats); and by their show column: JSON, LINE. */
#define LTX_STATS_STORED_TM(x)	x
#define LTX_STATS_STORED_LTX(x) x
#define LTX_STATS_STORED_SUM(x)
#define LTX_STATS_PUBLIC_TM(x) x
#define LTX_STATS_PUBLIC_LTX(x)
#define LTX_STATS_PUBLIC_SUM(x) x
#define LTX_STATS_JSON_OWN(x)	x
#define LTX_STATS_JSON_LINE(x)	x
#define LTX_STATS_JSON_JSON(x)	x
#define LTX_STATS_JSON_NONE(x)
#define LTX_STATS_LINE_OWN(x)
#define LTX_STATS_LINE_LINE(x) x
#define LTX_STATS_LINE_JSON(x)
#define LTX_STATS_LINE_NONE(x)

#define LTX_STATS_MEMBER_(name, dim, abi, show, what)                          \
	LTX_STATS_STORED_##abi(uint64_t name dim;)

/* A thread's counters, or the process totals: 64-bit words only. */
struct ltx_stats {
	LTX_STATS_FIELDS(LTX_STATS_MEMBER_)
};

#define LTX_STATS_STR_(x)  #x
#define LTX_STATS_XSTR_(x) LTX_STATS_STR_(x)
#define LTX_STATS_NAME_(name, dim, abi, show, what)                            \
	LTX_STATS_STORED_##abi(#name LTX_STATS_XSTR_(dim) ",")

/* The stored fields' names and dimensions, in order:
 * "threads,commits_ro,...,abort_cause[16],...,". */
#define LTX_STATS_NAMES LTX_STATS_FIELDS(LTX_STATS_NAME_)

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

/*
 * The lines that conflicts were found on (issue 19): each thread keeps its
 * LTX_STATS_LINES hottest, the segment the process's LTX_STATSEG_LINES.
 * A part is a set of bytes of the line that one side of a conflict used
 * (bit i: byte i); parts that overlap are merged, so disjoint parts are
 * data that different transactions use apart (false sharing), one part
 * data they share.
 */
#define LTX_STATS_LINES 16 /* per thread */
#define LTX_STATS_PARTS 4

struct ltx_stats_line {
	uintptr_t line;			      /* its address (0: free) */
	uint64_t count[LTX_CONFLICT_CLASSES]; /* conflict aborts by class */
	uint64_t part[LTX_STATS_PARTS];	      /* byte masks, 0: unused */
	uintptr_t other; /* ALIAS: a line that shares its record, or 0 */
	uint64_t bits;	 /* ALIAS: the LTX_OREC_BITS that separates the
			  * lines that aliased with it (the largest seen);
			  * LTX_STATS_NEVER: none up to the maximum; 0: no
			  * aliasing seen */
};

#define LTX_STATS_NEVER 64

/* All conflict aborts counted on a line. */
static inline uint64_t ltx_stats_line_total(const struct ltx_stats_line *l)
{
	uint64_t n = 0;

	for (unsigned c = 0; c < LTX_CONFLICT_CLASSES; c++)
		n += l->count[c];
	return n;
}

/* Add the bytes m to the parts of l: into the part they overlap (merging
 * the parts they join), else into a free one, else into the last. */
static inline void ltx_stats_line_part(struct ltx_stats_line *l, uint64_t m)
{
	unsigned i, free_at = LTX_STATS_PARTS;

	if (m == 0)
		return;
	for (i = 0; i < LTX_STATS_PARTS; i++) {
		if (l->part[i] == 0) {
			if (free_at == LTX_STATS_PARTS)
				free_at = i;
		} else if (l->part[i] & m) {
			m |= l->part[i];
			l->part[i] = 0;
			if (free_at == LTX_STATS_PARTS || free_at > i)
				free_at = i;
		}
	}
	l->part[free_at < LTX_STATS_PARTS ? free_at : LTX_STATS_PARTS - 1] |= m;
}

/* What a collection of the threads' tables returns (tx/stats.h): up to
 * max_sites abort sites and max_lines lines, most frequent first; either
 * array may be NULL. */
struct ltx_stats_tables {
	struct ltx_stats_site *sites;
	unsigned max_sites, nsites;
	struct ltx_stats_line *lines;
	unsigned max_lines, nlines;
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
