/* SPDX-License-Identifier: MIT */
/* ltxbench's runner: one timed, checked run of a workload in this process. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#define ARENA_CHUNK ((size_t)4 << 20)

void bench_fatal(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void *bench_alloc(struct bench_worker *w, size_t n)
{
	char *p;

	n = (n + BENCH_CACHELINE - 1) & ~(size_t)(BENCH_CACHELINE - 1);
	if (n == 0)
		n = BENCH_CACHELINE;
	if (w->arena == NULL || (size_t)(w->arena_end - w->arena) < n) {
		size_t chunk = n > ARENA_CHUNK ? n : ARENA_CHUNK;

		/* aligned_alloc memory is not zeroed; calloc is, and aligns
		 * large chunks to pages. */
		p = calloc(1, chunk + BENCH_CACHELINE);
		if (p == NULL)
			bench_fatal("ltxbench: out of memory");
		p = (char *)(((uintptr_t)p + BENCH_CACHELINE - 1) &
			     ~(uintptr_t)(BENCH_CACHELINE - 1));
		w->arena = p;
		w->arena_end = p + chunk;
	}
	p = w->arena;
	w->arena += n;
	return p;
}

const struct bench_workload *bench_find_workload(const struct bench_impl *im,
						 const char *name)
{
	for (const struct bench_workload *const *wl = im->workloads;
	     wl != NULL && *wl != NULL; wl++)
		if (strcmp((*wl)->name, name) == 0)
			return *wl;
	return NULL;
}

struct run {
	const struct bench_workload *wl;
	const struct bench_params *p;
	struct bench_state *state;
	pthread_barrier_t start;
	int stop;
};

static void *worker_main(void *arg)
{
	struct bench_worker *w = arg;
	struct run *r = w->priv_run;
	long ops = 0;

	pthread_barrier_wait(&r->start);
	/* Relaxed: the stop flag only has to be seen eventually; the counters
	 * reach the runner through pthread_join. */
	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		long n = r->wl->op(r->state, r->p, w);

		/* Nothing to do (a full FIFO, an empty list): let the thread
		 * that can make progress run, should it share our CPU. */
		if (n == 0)
			sched_yield();
		ops += n;
	}
	w->ops = ops;
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int bench_run(const struct bench_impl *im, const struct bench_workload *wl,
	      const struct bench_params *p, long nthreads, double seconds,
	      struct bench_result *res, const char **why)
{
	struct bench_worker *w;
	pthread_t *tid;
	struct run r = { .wl = wl, .p = p };
	struct timespec ts;
	char msg[256] = "";
	double t0;

	if (im->prepare != NULL && (*why = im->prepare()) != NULL)
		return 3;
	w = aligned_alloc(BENCH_CACHELINE * 2, (size_t)nthreads * sizeof(*w));
	tid = calloc((size_t)nthreads, sizeof(*tid));
	if (w == NULL || tid == NULL)
		bench_fatal("ltxbench: out of memory");
	memset(w, 0, (size_t)nthreads * sizeof(*w));
	for (long t = 0; t < nthreads; t++) {
		w[t].id = t;
		w[t].nthreads = nthreads;
		w[t].rng = (p->seed + (uint64_t)t + 1) * 0x9e3779b97f4a7c15ULL;
		if (w[t].rng == 0)
			w[t].rng = 1;
		w[t].priv_run = &r;
	}
	r.state = wl->setup(p, w, nthreads);
	w[0].commits = w[0].aborts = 0;
	pthread_barrier_init(&r.start, NULL, (unsigned)nthreads + 1);
	for (long t = 0; t < nthreads; t++) {
		int err = pthread_create(&tid[t], NULL, worker_main, &w[t]);

		if (err != 0)
			bench_fatal("ltxbench: pthread_create: %s",
				    strerror(err));
	}
	pthread_barrier_wait(&r.start);
	t0 = now();
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	for (long t = 0; t < nthreads; t++)
		pthread_join(tid[t], NULL);
	res->seconds = now() - t0;
	res->ops = res->commits = res->aborts = 0;
	for (long t = 0; t < nthreads; t++) {
		res->ops += w[t].ops;
		res->commits += w[t].commits;
		res->aborts += w[t].aborts;
	}
	/* Test hook: miscount one operation and one insert, so that the
	 * checks of counters, integer sets and the FIFO must fail. */
	if (getenv("LTXBENCH_TEST_MISCOUNT") != NULL) {
		w[0].ops++;
		w[0].stat[0]++;
	}
	if (!wl->check(r.state, p, w, nthreads, msg, sizeof(msg)))
		bench_fatal("ltxbench: %s on %s with %ld threads: INVARIANT "
			    "BROKEN: %s",
			    wl->name, im->name, nthreads, msg);
	pthread_barrier_destroy(&r.start);
	free(tid);
	free(w);
	return 0;
}

int bench_child_main(const struct bench_impl *im, const char *workload,
		     const struct bench_params *p, long nthreads,
		     double seconds)
{
	const struct bench_workload *wl = bench_find_workload(im, workload);
	struct bench_result res;
	const char *why = NULL;
	int rc;

	if (wl == NULL) {
		printf("na %s has no %s workload\n", im->name, workload);
		return 3;
	}
	rc = bench_run(im, wl, p, nthreads, seconds, &res, &why);
	if (rc == 3) {
		printf("na %s\n", why);
		return 3;
	}
	/* "checked" says the invariant was verified after the run. */
	printf("ok %ld %.6f %ld %ld checked\n", res.ops, res.seconds,
	       res.commits, res.aborts);
	return 0;
}
