/* SPDX-License-Identifier: MIT */
/*
 * txcost-calls: one thread runs each of a set of small transactions N times,
 * each transaction in a function of its own (a probe), so that callgrind's
 * call arcs give per-call inclusive costs: the probe's (its whole body) and
 * those of the ltx calls it makes (tm_commit, tm_malloc, tm_free,
 * tm_free_sized, tm_lt,
 * the block's begin and end).  tools/txcost/calls.sh reads the arcs, divides by
 * the call counts and prints the table.
 *
 *   valgrind --tool=callgrind --toggle-collect=measure ./txcost-calls N
 *
 * Built twice: out of line, and with LTX_INLINE, where the loads that the
 * figures are about are made through load_probe, a function holding only
 * the inlined tm_lt, so that its inclusive cost is what the load costs in
 * the caller (plus load_probe's ret).  Every probe runs a few times before
 * measure() (outside the counted region), so first-use costs (the
 * descriptor, the allocator's caches) are not counted.
 */
#include <ltx/tm.h>

#include <stdio.h>
#include <stdlib.h>

/* Stores to an external object are never optimized away. */
tm_word_t txcost_sink;

static tm_word_t lines[4][8] __attribute__((aligned(64)));
/* Blocks allocated and not yet freed. */
#define BLOCKS 64
static void *blocks[BLOCKS];

#define NOINLINE __attribute__((noinline))
/* After a call, so that the call is not a tail jump (callgrind records
 * the arc of a call, and the probe's own frame stays what it is). */
#define KEEP(v) __asm__ __volatile__("" : "+r"(v))

#ifdef LTX_INLINE
/* The inlined tm_lt and nothing else: its cost in a caller. */
NOINLINE tm_word_t load_probe(const tm_word_t *a)
{
	return tm_lt(a);
}
#define LOAD1(a) load_probe(a)
#else
#define LOAD1(a) tm_lt(a)
#endif

/* A read-only TM_ATOMIC block of one tm_lt: the block whole. */
NOINLINE void probe_block_ro(const tm_word_t *a)
{
	TM_ATOMIC {
		txcost_sink = tm_lt(a);
	}
}

/* The same without TM_ATOMIC: one tm_lt, then tm_commit. */
NOINLINE void probe_lt_commit(const tm_word_t *a)
{
	bool ok;

	txcost_sink = tm_lt(a);
	ok = tm_commit();
	KEEP(ok);
}

/* A first load: the one that begins the transaction. */
NOINLINE void probe_first(const tm_word_t *a)
{
	tm_word_t v = LOAD1(a);

	KEEP(v);
	txcost_sink = v;
	tm_commit();
}

/* A load of the word the transaction has just written. */
NOINLINE void probe_raw(tm_word_t *a)
{
	tm_word_t v;

	tm_st(a, 1);
	v = LOAD1(a);
	KEEP(v);
	txcost_sink = v;
	tm_commit();
}

/* tm_commit of an update of one line, of two lines. */
NOINLINE void probe_commit1(tm_word_t *a)
{
	bool ok;

	tm_st(a, 1);
	ok = tm_commit();
	KEEP(ok);
}

NOINLINE void probe_commit2(tm_word_t *a, tm_word_t *b)
{
	bool ok;

	tm_st(a, 1);
	tm_st(b, 2);
	ok = tm_commit();
	KEEP(ok);
}

/* TM_ATOMIC blocks storing to one line, to two lines. */
NOINLINE void probe_block_upd1(tm_word_t *a)
{
	TM_ATOMIC {
		tm_st(a, 1);
	}
}

NOINLINE void probe_block_upd2(tm_word_t *a, tm_word_t *b)
{
	TM_ATOMIC {
		tm_st(a, 1);
		tm_st(b, 2);
	}
}

/* tm_malloc of 64 bytes inside a transaction that then commits. */
NOINLINE void *probe_malloc(const tm_word_t *a)
{
	void *p;

	txcost_sink = tm_lt(a);
	p = tm_malloc(64);
	KEEP(p);
	if (!tm_commit())
		p = NULL;
	return p;
}

/* tm_free, inside a transaction, of a block an earlier one allocated. */
NOINLINE void probe_free_committed(const tm_word_t *a, void *p)
{
	txcost_sink = tm_lt(a);
	tm_free(p);
	KEEP(p);
	tm_commit();
}

/* The same with tm_free_sized, given tm_malloc's size. */
NOINLINE void probe_free_sized(const tm_word_t *a, void *p)
{
	txcost_sink = tm_lt(a);
	tm_free_sized(p, 64);
	KEEP(p);
	tm_commit();
}

/* tm_free of a block allocated by the same transaction. */
NOINLINE void probe_free_same(const tm_word_t *a)
{
	void *p;

	txcost_sink = tm_lt(a);
	p = tm_malloc(64);
	KEEP(p);
	tm_free(p);
	KEEP(p);
	tm_commit();
}

static inline __attribute__((always_inline)) void run(long n)
{
	for (long i = 0; i < n; i++)
		probe_block_ro(&lines[0][0]);
	for (long i = 0; i < n; i++)
		probe_lt_commit(&lines[0][0]);
	for (long i = 0; i < n; i++)
		probe_first(&lines[0][0]);
	for (long i = 0; i < n; i++)
		probe_raw(&lines[1][0]);
	for (long i = 0; i < n; i++)
		probe_commit1(&lines[1][0]);
	for (long i = 0; i < n; i++)
		probe_commit2(&lines[1][0], &lines[2][0]);
	for (long i = 0; i < n; i++)
		probe_block_upd1(&lines[1][0]);
	for (long i = 0; i < n; i++)
		probe_block_upd2(&lines[1][0], &lines[2][0]);
	/* Each block is freed BLOCKS transactions after the one that
	 * allocated it: the allocator sees a steady state, as in a program
	 * that allocates and frees, not a growing heap. */
	for (long i = 0; i < n + BLOCKS; i++) {
		if (i >= BLOCKS)
			probe_free_committed(&lines[0][0], blocks[i % BLOCKS]);
		if (i < n &&
		    (blocks[i % BLOCKS] = probe_malloc(&lines[0][0])) == NULL) {
			fprintf(stderr, "txcost-calls: tm_malloc failed\n");
			exit(1);
		}
	}
	for (long i = 0; i < n; i++)
		probe_free_same(&lines[0][0]);
	for (long i = 0; i < n + BLOCKS; i++) {
		if (i >= BLOCKS)
			probe_free_sized(&lines[0][0], blocks[i % BLOCKS]);
		/* Allocated outside a transaction: probe_malloc's count
		 * stays N. */
		if (i < n && (blocks[i % BLOCKS] = tm_malloc(64)) == NULL) {
			fprintf(stderr, "txcost-calls: tm_malloc failed\n");
			exit(1);
		}
	}
}

/* The counted region (callgrind --toggle-collect=measure). */
NOINLINE void measure(long n)
{
	run(n);
}

int main(int argc, char **argv)
{
	struct tm_stats st = { .size = sizeof(st) };
	char *end;
	long n;

	if (argc != 2 || (n = strtol(argv[1], &end, 10)) < 1 || *end != '\0' ||
	    n > 10000000) {
		fprintf(stderr, "usage: txcost-calls N(1-10000000)\n");
		return 2;
	}
	run(n < 100 ? n : 100); /* warm up, uncounted */
	tm_mem_flush();
	measure(n);
	/* One thread: no transaction may abort, or the figures mix in
	 * restarts. */
	if (tm_stats_get(&st) != 0 || st.aborts != 0) {
		fprintf(stderr, "txcost-calls: %llu aborted transactions\n",
			(unsigned long long)st.aborts);
		return 1;
	}
	return 0;
}
