/* SPDX-License-Identifier: MIT */
/*
 * The lock-free implementations where one is standard: Treiber's stack
 * (R. K. Treiber, "Systems Programming: Coping with Parallelism", IBM RJ
 * 5118, 1986) with a generation counter against ABA, and an atomic
 * fetch-and-add counter for counter and hm93-counting.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

struct lf_node {
	struct lf_node *next;
	long id;
};

/*
 * Synchronization: top and gen change together by one 16-byte
 * compare-and-swap (lock cmpxchg16b, a full barrier), so a pop that read
 * top, then top->next, fails if any push or pop happened in between even
 * when the same node is back on top (the generation differs).  The two
 * halves are read by relaxed loads: a torn pair only makes the CAS fail.
 * Nodes are never freed, so reading a stale node's next is harmless.
 */
struct lf_lifo {
	struct lf_node *top __attribute__((aligned(16)));
	unsigned long gen;
	struct lf_node *nodes;
	long n;
};

static bool cas16(struct lf_lifo *s, struct lf_node *old_top,
		  unsigned long old_gen, struct lf_node *new_top,
		  unsigned long new_gen)
{
	bool ok;

	__asm__ __volatile__("lock cmpxchg16b %1"
			     : "=@ccz"(ok), "+m"(*(unsigned __int128 *)s),
			       "+a"(old_top), "+d"(old_gen)
			     : "b"(new_top), "c"(new_gen)
			     : "memory");
	return ok;
}

static struct bench_state *lf_lifo_setup(const struct bench_params *p,
					 struct bench_worker *w, long nthreads)
{
	struct lf_lifo *s = bench_alloc(w, sizeof(*s));

	s->n = p->size;
	s->nodes = bench_alloc(w, (size_t)s->n * sizeof(*s->nodes));
	for (long i = 0; i < s->n; i++) {
		s->nodes[i].id = i;
		s->nodes[i].next = s->top;
		s->top = &s->nodes[i];
	}
	return (struct bench_state *)s;
}

static long lf_lifo_op(struct bench_state *st, const struct bench_params *p,
		       struct bench_worker *w)
{
	struct lf_lifo *s = (struct lf_lifo *)st;
	struct lf_node *n, *next;
	unsigned long gen;

	do {
		gen = __atomic_load_n(&s->gen, __ATOMIC_RELAXED);
		n = __atomic_load_n(&s->top, __ATOMIC_RELAXED);
		if (n == NULL)
			return 0;
		next = __atomic_load_n(&n->next, __ATOMIC_RELAXED);
	} while (!cas16(s, n, gen, next, gen + 1));
	do {
		gen = __atomic_load_n(&s->gen, __ATOMIC_RELAXED);
		next = __atomic_load_n(&s->top, __ATOMIC_RELAXED);
		__atomic_store_n(&n->next, next, __ATOMIC_RELAXED);
	} while (!cas16(s, next, gen, n, gen + 1));
	return 1;
}

static bool lf_lifo_check(struct bench_state *st, const struct bench_params *p,
			  struct bench_worker *w, long nthreads, char *msg,
			  size_t len)
{
	struct lf_lifo *s = (struct lf_lifo *)st;
	char *seen = calloc((size_t)s->n, 1);
	long count = 0;

	for (struct lf_node *n = s->top; n != NULL; n = n->next) {
		if (n < s->nodes || n >= s->nodes + s->n || count > s->n ||
		    seen[n->id]++) {
			snprintf(msg, len,
				 "the stack holds a node twice, a "
				 "cycle or a foreign node");
			return false;
		}
		count++;
	}
	free(seen);
	if (count != s->n) {
		snprintf(msg, len, "%ld of %ld elements lost", s->n - count,
			 s->n);
		return false;
	}
	return true;
}

struct lf_counter {
	long value __attribute__((aligned(BENCH_CACHELINE)));
};

static struct bench_state *lf_counter_setup(const struct bench_params *p,
					    struct bench_worker *w,
					    long nthreads)
{
	return bench_alloc(w, sizeof(struct lf_counter));
}

static long lf_counter_op(struct bench_state *st, const struct bench_params *p,
			  struct bench_worker *w)
{
	struct lf_counter *s = (struct lf_counter *)st;

	/* Only atomicity matters; pthread_join orders it before the check. */
	__atomic_fetch_add(&s->value, 1, __ATOMIC_RELAXED);
	return 1;
}

static bool lf_counter_check(struct bench_state *st,
			     const struct bench_params *p,
			     struct bench_worker *w, long nthreads, char *msg,
			     size_t len)
{
	struct lf_counter *s = (struct lf_counter *)st;
	long ops = 0;

	for (long t = 0; t < nthreads; t++)
		ops += w[t].ops;
	if (s->value != ops) {
		snprintf(msg, len, "the counter is %ld after %ld increments",
			 s->value, ops);
		return false;
	}
	return true;
}

static const struct bench_workload lf_lifo = {
	.name = "lifo",
	.describe = "Treiber stack, 16-byte CAS with a generation",
	.defaults = { .size = 64, .range = 0, .update = 100 },
	.setup = lf_lifo_setup,
	.op = lf_lifo_op,
	.check = lf_lifo_check,
};

static const struct bench_workload lf_counter = {
	.name = "counter",
	.describe = "atomic fetch-and-add",
	.defaults = { .size = 1, .range = 0, .update = 100 },
	.setup = lf_counter_setup,
	.op = lf_counter_op,
	.check = lf_counter_check,
};

static const struct bench_workload lf_counting = {
	.name = "hm93-counting",
	.describe = "atomic fetch-and-add",
	.defaults = { .size = 1, .range = 0, .update = 100 },
	.setup = lf_counter_setup,
	.op = lf_counter_op,
	.check = lf_counter_check,
};

const struct bench_workload *const bench_lockfree_workloads[] = {
	&lf_lifo,
	&lf_counter,
	&lf_counting,
	NULL,
};
