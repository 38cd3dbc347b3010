/* SPDX-License-Identifier: MIT */
/* ltxbench: what workloads, implementations and the runner share. */
#ifndef LTXBENCH_BENCH_H
#define LTXBENCH_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_CACHELINE	  64
#define BENCH_MAX_THREADS 256

/* A workload's parameters; -1 means "the workload's default". */
struct bench_params {
	long size;   /* initial elements (intsets, bank accounts, dlist) */
	long range;  /* keys are drawn from [0, range) */
	long update; /* percent of operations that write */
	uint64_t seed;
};

/*
 * One thread's state.  Counters are written only by their thread while it
 * runs and read by the runner after pthread_join, so they need no atomics;
 * the struct is cache-line aligned so that threads never share a line.
 */
struct bench_worker {
	uint64_t rng; /* xorshift64 state */
	long id, nthreads;
	long ops;	      /* operations completed */
	long commits, aborts; /* transactions (TM implementations only) */
	long stat[4];	      /* workload's own counters (inserts...) */
	void *priv;	      /* workload's per-thread data */
	void *priv_run;	      /* the runner's */
	/* Per-thread bump allocator: nodes are never freed during a run. */
	char *arena, *arena_end;
} __attribute__((aligned(BENCH_CACHELINE * 2)));

/* The shared state of one workload instance. */
struct bench_state;

/*
 * A workload compiled against one implementation's access interface.
 * setup runs single-threaded before the threads start; op runs one
 * operation in a worker and returns how many completed (0 when it found
 * nothing to do: an empty queue, a full buffer); check runs after the
 * threads have joined and returns false, with a message in msg, if the
 * workload's invariant broke.
 */
struct bench_workload {
	const char *name;
	const char *describe;
	struct bench_params defaults;
	struct bench_state *(*setup)(const struct bench_params *p,
				     struct bench_worker *w, long nthreads);
	long (*op)(struct bench_state *s, const struct bench_params *p,
		   struct bench_worker *w);
	bool (*check)(struct bench_state *s, const struct bench_params *p,
		      struct bench_worker *w, long nthreads, char *msg,
		      size_t len);
};

/* An implementation: a name and the workloads it provides (NULL-ended). */
struct bench_impl {
	const char *name;
	const struct bench_workload *const *workloads;
	/* Called in the child before any thread starts; NULL or a reason. */
	const char *(*prepare)(void);
	bool single_thread_only;
	bool counts_aborts;
	/* Run by the gnu-tm helper: 1 with GCC's libitm, 2 with ltx preloaded,
	 * 3 with libitm's ml_wt method forced. */
	int external;
};

/* The workloads of each access interface (NULL-ended). */
extern const struct bench_workload *const bench_seq_workloads[];
extern const struct bench_workload *const bench_ltx_workloads[];
extern const struct bench_workload *const bench_ltx_inline_workloads[];
extern const struct bench_workload *const bench_mutex_workloads[];
extern const struct bench_workload *const bench_spin_workloads[];
extern const struct bench_workload *const bench_lockfree_workloads[];
extern const struct bench_workload *const bench_gnutm_workloads[];

const struct bench_workload *bench_find_workload(const struct bench_impl *im,
						 const char *name);

/* xorshift64*: a fast per-thread PRNG (Marsaglia 2003; Vigna 2016). */
static inline uint64_t bench_rand(struct bench_worker *w)
{
	uint64_t x = w->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	w->rng = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* A uniform integer in [0, n). */
static inline long bench_rand_below(struct bench_worker *w, long n)
{
	return (long)((bench_rand(w) >> 11) % (uint64_t)n);
}

/* bench_alloc: n zeroed bytes, cache-line aligned, from w's arena. */
void *bench_alloc(struct bench_worker *w, size_t n);

/* bench_fatal: print a loud message and exit(1): an invariant broke. */
void bench_fatal(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));

/* One measured run. */
struct bench_result {
	long ops, commits, aborts;
	double seconds;
};

/*
 * bench_run: run workload wl of impl im with nthreads threads for seconds,
 * then check its invariant (exit(1) with a message if it broke).
 * Returns 0, or 3 with why set when the implementation is unavailable.
 */
int bench_run(const struct bench_impl *im, const struct bench_workload *wl,
	      const struct bench_params *p, long nthreads, double seconds,
	      struct bench_result *r, const char **why);

/* bench_child_main: run once and print "ok OPS SECONDS COMMITS ABORTS". */
int bench_child_main(const struct bench_impl *im, const char *workload,
		     const struct bench_params *p, long nthreads,
		     double seconds);

#endif /* LTXBENCH_BENCH_H */
