/* SPDX-License-Identifier: MIT */
/*
 * txcost-whole: ltxbench's integer sets and bank on one thread, arranged so
 * that callgrind can count the instructions of whole transactions.
 *
 * The workloads are ltxbench's own (workloads.h), compiled against one
 * access interface: seq (plain loads and stores), ltx (ltxbench's tm_*
 * interface: the first load begins the transaction, tm_commit ends it) or
 * atomic (the same with each transaction a TM_ATOMIC block); each with or
 * without LTX_INLINE.  Every operation is one call of the workload's op,
 * exactly as ltxbench's loop makes it, but made from a function named after
 * the kind of operation it will do (txcost_lookup, txcost_insert,
 * txcost_remove, txcost_transfer, txcost_total), which the driver knows
 * beforehand by drawing from a copy of the worker's generator.  The
 * inclusive cost of the call arc from txcost_KIND to the op, divided by its
 * call count, is then the whole operation: drawing the key, the transaction
 * (begin, every access, commit, block bookkeeping) and the op's counters;
 * nothing but the loop is left out.  tools/txcost/whole.sh reads the arcs.
 *
 * usage: txcost-whole N [WORKLOAD[:SIZE[:RANGE]]...]
 * Each workload runs with ltxbench's defaults (SIZE and RANGE, when given,
 * replace them as ltxbench's --size and --range do) and seed 1: setup,
 * N / 10 operations uncounted, N counted, then the workload's invariant
 * check.  Prints "WORKLOAD params SIZE RANGE UPDATE", one line per kind:
 * "WORKLOAD KIND CALLS DONE", DONE being the lookups that found their key,
 * the inserts that inserted, the removes that removed, the totals taken;
 * then "WORKLOAD aborts N".
 */
#include <errno.h>

#if defined(TXCOST_SEQ)
#include "../ltxbench/access_seq.h"
#elif defined(TXCOST_ATOMIC)
#include "access_atomic.h"
/* The workloads set locals in a block and read them after it, which a
 * restart (a longjmp) may clobber; GCC says so where TM_ATOMIC uses
 * setjmp(3).  One thread never restarts, and the figures are of blocks
 * that ran once; a restart would show as an abort in the output. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wclobbered"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#else
#include "../ltxbench/access_ltx.h"
#endif
#define BENCH_WORKLOADS txcost_workloads
#include "../ltxbench/workloads.h"

enum { K_LOOKUP, K_INSERT, K_REMOVE, K_TRANSFER, K_TOTAL, K_N };

static const char *const kind_name[K_N] = {
	"lookup", "insert", "remove", "transfer", "total",
};

/* Aborted tries so far: ltx's own count (a TM_ATOMIC block restarts
 * without the workload seeing it). */
static long aborts_so_far(const struct bench_worker *w)
{
#ifdef TXCOST_SEQ
	return w->aborts;
#else
	struct tm_stats st = { .size = sizeof(st) };

	if (tm_stats_get(&st) != 0)
		bench_fatal("txcost: tm_stats_get failed");
	return (long)st.aborts;
#endif
}

typedef long (*op_fn)(struct bench_state *, const struct bench_params *,
		      struct bench_worker *);

static long calls[K_N];

/*
 * One counting function per kind.  Each touches its own counter, so that
 * no two are identical (the compiler would fold them into one symbol), and
 * the empty asm after the call keeps it from being a tail jump (callgrind
 * records an arc for a call).
 */
#define COUNTING(kind, k)                                                      \
	static __attribute__((noinline)) long txcost_##kind(                   \
		op_fn op, struct bench_state *s, const struct bench_params *p, \
		struct bench_worker *w)                                        \
	{                                                                      \
		long n = op(s, p, w);                                          \
		__asm__ __volatile__("" : "+r"(n));                            \
		calls[k]++;                                                    \
		return n;                                                      \
	}
COUNTING(lookup, K_LOOKUP)
COUNTING(insert, K_INSERT)
COUNTING(remove, K_REMOVE)
COUNTING(transfer, K_TRANSFER)
COUNTING(total, K_TOTAL)

/* The kind of w's next operation, drawn as the op will draw it. */
static int next_kind(const struct bench_workload *wl,
		     const struct bench_params *p, const struct bench_worker *w)
{
	struct bench_worker peek = *w;
	long key;

	if (strcmp(wl->name, "bank") == 0)
		return bench_rand_below(&peek, 100) < p->update ? K_TRANSFER
								: K_TOTAL;
	switch (intset_pick(&peek, p, &key)) {
	case INTSET_INSERT:
		return K_INSERT;
	case INTSET_REMOVE:
		return K_REMOVE;
	default:
		return K_LOOKUP;
	}
}

static void run(const struct bench_workload *wl, long size, long range, long n)
{
	static struct bench_worker w; /* aligned by its type */
	struct bench_params p = wl->defaults;
	struct bench_state *s;
	long before[K_N], stat[3], aborts, done[K_N] = { 0 };
	char msg[256] = "";

	memset(&w, 0, sizeof(w));
	if (size >= 0)
		p.size = size;
	if (range >= 0)
		p.range = range;
	printf("%s params %ld %ld %ld\n", wl->name, p.size, p.range, p.update);
	p.seed = 1;
	/* ltxbench's thread 0 with --seed 1 (run.c). */
	w.nthreads = 1;
	w.rng = (p.seed + 1) * 0x9e3779b97f4a7c15ULL;
	s = wl->setup(&p, &w, 1);
	for (long i = 0; i < n / 10; i++)
		wl->op(s, &p, &w);
	memcpy(before, calls, sizeof(before));
	memcpy(stat, w.stat, sizeof(stat));
	aborts = aborts_so_far(&w);
	for (long i = 0; i < n; i++) {
		switch (next_kind(wl, &p, &w)) {
		case K_LOOKUP:
			txcost_lookup(wl->op, s, &p, &w);
			break;
		case K_INSERT:
			txcost_insert(wl->op, s, &p, &w);
			break;
		case K_REMOVE:
			txcost_remove(wl->op, s, &p, &w);
			break;
		case K_TRANSFER:
			txcost_transfer(wl->op, s, &p, &w);
			break;
		default:
			txcost_total(wl->op, s, &p, &w);
			break;
		}
	}
	/* Successes among the counted operations: the sets count found lookups,
	 * done inserts and removes in stat[2], [0], [1]; bank counts its
	 * totals in stat[0], and every transfer is done. */
	if (strcmp(wl->name, "bank") == 0) {
		done[K_TRANSFER] = calls[K_TRANSFER] - before[K_TRANSFER];
		done[K_TOTAL] = w.stat[0] - stat[0];
	} else {
		done[K_INSERT] = w.stat[0] - stat[0];
		done[K_REMOVE] = w.stat[1] - stat[1];
		done[K_LOOKUP] = w.stat[2] - stat[2];
	}
	if (!wl->check(s, &p, &w, 1, msg, sizeof(msg)))
		bench_fatal("txcost: %s: INVARIANT BROKEN: %s", wl->name, msg);
	for (int k = 0; k < K_N; k++)
		if (calls[k] != before[k])
			printf("%s %s %ld %ld\n", wl->name, kind_name[k],
			       calls[k] - before[k], done[k]);
	printf("%s aborts %ld\n", wl->name, aborts_so_far(&w) - aborts);
}

/* "NAME[:SIZE[:RANGE]]": the workload, and its size and range or -1. */
static const struct bench_workload *parse(const char *arg, long *size,
					  long *range)
{
	const char *colon = strchr(arg, ':');
	size_t len = colon != NULL ? (size_t)(colon - arg) : strlen(arg);
	const struct bench_workload *wl = NULL;
	char *end;

	for (const struct bench_workload *const *t = txcost_workloads;
	     *t != NULL; t++)
		if (strlen((*t)->name) == len &&
		    strncmp((*t)->name, arg, len) == 0)
			wl = *t;
	if (wl == NULL || (strncmp(wl->name, "intset-", 7) != 0 &&
			   strcmp(wl->name, "bank") != 0)) {
		fprintf(stderr,
			"txcost-whole: no workload %.*s (the integer "
			"sets and bank are)\n",
			(int)len, arg);
		exit(2);
	}
	*size = *range = -1;
	if (colon != NULL) {
		bool set = strncmp(wl->name, "intset-", 7) == 0;

		errno = 0;
		*size = strtol(colon + 1, &end, 10);
		if (set && *end == ':')
			*range = strtol(end + 1, &end, 10);
		else if (set)
			*range = wl->defaults.range;
		if (errno != 0 || *end != '\0' || *size < 1 ||
		    *size > (1L << 26) ||
		    (set && (*range < *size || *range > (1L << 30)))) {
			fprintf(stderr,
				"txcost-whole: bad %s: want NAME:SIZE "
				"(1 to 2^26) or, for a set, "
				"NAME:SIZE[:RANGE], SIZE <= RANGE <= "
				"2^30\n",
				arg);
			exit(2);
		}
	}
	return wl;
}

int main(int argc, char **argv)
{
	static const char *const all[] = {
		"intset-list", "intset-rbtree", "intset-skiplist",
		"intset-hash", "bank",		NULL,
	};
	const char *const *names = all;
	char *end;
	long n;

	if (argc < 2 || (n = strtol(argv[1], &end, 10)) < 10 || *end != '\0' ||
	    n > 100000000) {
		fprintf(stderr, "usage: txcost-whole N(10-100000000) "
				"[WORKLOAD[:SIZE[:RANGE]]...]\n");
		return 2;
	}
	if (argc > 2)
		names = (const char *const *)argv + 2;
	/* Every argument is checked before any workload runs. */
	for (const char *const *a = names; *a != NULL; a++) {
		long size, range;

		parse(*a, &size, &range);
	}
	for (; *names != NULL; names++) {
		long size, range;
		const struct bench_workload *wl = parse(*names, &size, &range);

		run(wl, size, range, n);
	}
	return 0;
}
