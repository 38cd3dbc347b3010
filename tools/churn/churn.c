/* SPDX-License-Identifier: MIT */
/*
 * Churn benchmark: threads insert into and delete from a sorted linked
 * list of about SIZE elements, in transactions, allocating nodes with
 * tm_malloc/tm_free (safe reclamation) or with malloc/free (the same
 * transactions, but a deleted node is freed at once: unsafe, as the
 * article says, for doomed readers).  Each run is a child process, so its
 * peak RSS is its own; the medians of RUNS runs are printed.
 *
 * usage: churn [-t THREADS] [-n SIZE] [-d SECONDS] [-r RUNS]
 *              [-m tm|malloc|both]
 */
#include <ltx/tm.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct node {
	long key;
	struct node *next;
};

static struct node head = { .key = -1 };
static long nthreads = 2, size = 1024, runs = 5;
static double seconds = 1.0;
static int use_tm;
static volatile int stop;

static void *node_alloc(void)
{
	return use_tm ? tm_malloc(sizeof(struct node))
		      : malloc(sizeof(struct node));
}

static struct node *find(long key, struct node **prevp)
{
	struct node *prev = &head, *cur = (struct node *)tm_lt(&head.next);

	while (cur != NULL && (long)tm_lt(&cur->key) < key) {
		prev = cur;
		cur = (struct node *)tm_lt(&cur->next);
	}
	*prevp = prev;
	return cur;
}

static void insert(long key)
{
	for (;;) {
		struct node *prev, *cur = find(key, &prev), *n;

		if (cur != NULL && (long)tm_lt(&cur->key) == key) {
			if (tm_commit())
				return;
			continue;
		}
		n = node_alloc(); /* inside the transaction */
		n->key = key;
		n->next = cur;
		tm_st(&prev->next, (uintptr_t)n);
		if (tm_commit())
			return;
		if (!use_tm)
			free(n); /* tm_malloc's block went with the abort */
	}
}

static void delete (long key)
{
	for (;;) {
		struct node *prev, *cur = find(key, &prev);

		if (cur == NULL || (long)tm_lt(&cur->key) != key) {
			if (tm_commit())
				return;
			continue;
		}
		tm_st(&prev->next, tm_lt(&cur->next));
		if (use_tm)
			tm_free(cur);
		if (tm_commit()) {
			if (!use_tm)
				free(cur); /* unsafe: others may read it */
			return;
		}
	}
}

struct worker {
	pthread_t thread;
	unsigned seed;
	long ops;
};

static void *run(void *arg)
{
	struct worker *w = arg;

	while (!stop) {
		long key = rand_r(&w->seed) % (2 * size);

		if (rand_r(&w->seed) & 1)
			insert(key);
		else
			delete (key);
		w->ops++;
	}
	return NULL;
}

struct result {
	double ops_per_s;
	long max_rss_kb;
	unsigned long long peak_pending;
};

static struct result trial(int tm)
{
	struct worker w[64];
	struct timespec t0, t1;
	struct result r = { 0 };
	struct rusage ru;
	long ops = 0;

	use_tm = tm;
	for (long k = 0; k < 2 * size; k += 2)
		insert(k);
	for (long i = 0; i < nthreads; i++) {
		w[i] = (struct worker){ .seed = 42u + (unsigned)i };
		pthread_create(&w[i].thread, NULL, run, &w[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	usleep((useconds_t)(seconds * 1e6));
	stop = 1;
	for (long i = 0; i < nthreads; i++) {
		pthread_join(w[i].thread, NULL);
		ops += w[i].ops;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r.ops_per_s = (double)ops / ((double)(t1.tv_sec - t0.tv_sec) +
				     (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	getrusage(RUSAGE_SELF, &ru);
	r.max_rss_kb = ru.ru_maxrss;
	if (tm) {
		struct tm_mem_stats s;

		tm_mem_stats(&s);
		r.peak_pending = s.peak_pending_bytes;
	}
	return r;
}

/*
 * One trial in a child process (fresh heap, its own peak RSS).  Returns
 * false if the child died: the malloc/free variant can, when a doomed
 * reader follows a pointer out of a node freed (and reused) under it.
 */
static bool trial_in_child(int tm, struct result *out)
{
	struct result r = { 0 };
	int fd[2], status;
	pid_t pid;

	if (pipe(fd) != 0 || (pid = fork()) < 0) {
		perror("churn");
		exit(1);
	}
	if (pid == 0) {
		r = trial(tm);
		if (write(fd[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	if (read(fd[0], &r, sizeof(r)) != sizeof(r))
		r.ops_per_s = -1;
	close(fd[0]);
	waitpid(pid, &status, 0);
	if (r.ops_per_s < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return false;
	*out = r;
	return true;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, long n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	const char *mode = "both";
	double ops[2][101], rss[2][101], pend[101];
	long crashed[2] = { 0, 0 };
	int opt;

	while ((opt = getopt(argc, argv, "t:n:d:r:m:")) != -1) {
		switch (opt) {
		case 't':
			nthreads = atol(optarg);
			break;
		case 'n':
			size = atol(optarg);
			break;
		case 'd':
			seconds = atof(optarg);
			break;
		case 'r':
			runs = atol(optarg);
			break;
		case 'm':
			mode = optarg;
			break;
		default:
			fprintf(stderr, "usage: churn [-t THREADS] [-n SIZE] "
					"[-d SECONDS] [-r RUNS] "
					"[-m tm|malloc|both]\n");
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > 64 || size < 1 || runs < 1 ||
	    runs > 101 || seconds <= 0) {
		fprintf(stderr, "churn: bad argument\n");
		return 2;
	}
	/* Interleave the variants so that drifting load hits both alike. */
	for (long i = 0; i < runs; i++) {
		for (int tm = 0; tm < 2; tm++) {
			struct result r;

			if ((tm && strcmp(mode, "malloc") == 0) ||
			    (!tm && strcmp(mode, "tm") == 0))
				continue;
			while (!trial_in_child(tm, &r)) {
				if (++crashed[tm] > 10 * runs) {
					fprintf(stderr, "churn: trials keep "
							"failing\n");
					return 1;
				}
			}
			ops[tm][i] = r.ops_per_s;
			rss[tm][i] = (double)r.max_rss_kb;
			if (tm)
				pend[i] = (double)r.peak_pending;
		}
	}
	printf("churn: %ld threads, list of %ld, %.1f s x %ld runs "
	       "(medians)\n",
	       nthreads, size, seconds, runs);
	if (strcmp(mode, "tm") != 0)
		printf("malloc/free     %12.0f ops/s  peak RSS %6.0f KiB  "
		       "trials crashed %ld (rerun)\n",
		       median(ops[0], runs), median(rss[0], runs), crashed[0]);
	if (strcmp(mode, "malloc") != 0)
		printf("tm_malloc/free  %12.0f ops/s  peak RSS %6.0f KiB  "
		       "peak pending %.0f B  trials crashed %ld\n",
		       median(ops[1], runs), median(rss[1], runs),
		       median(pend, runs), crashed[1]);
	if (strcmp(mode, "both") == 0)
		printf("malloc/tm ratio %12.2f\n",
		       median(ops[0], runs) / median(ops[1], runs));
	return 0;
}
