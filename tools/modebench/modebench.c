/* SPDX-License-Identifier: MIT */
/*
 * modebench: the conflict-detection modes side by side.  Two workloads on
 * shared cache lines, at 1 and 2 threads, each run in the invisible and in
 * the visible mode alternately, RUNS times; the figure is the median.
 *
 *   read-mostly: 90% of transactions LT 8 random lines of 1024 and sum
 *                them; 10% move one unit between 2 random lines (LTX, ST).
 *   write-heavy: every transaction moves one unit between 2 random lines
 *                of 64 (LTX, LTX, ST, ST), like a bank transfer.
 *
 * usage: modebench [TX_PER_THREAD [RUNS]]   (defaults 200000, 5)
 * Prints committed transactions per second (millions) and the aborts per
 * commit of each mode; exits non-zero if a workload's sum changed.
 */
#include <ltx/tm.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LINES 1024

struct line {
	tm_word_t value;
	char pad[64 - sizeof(tm_word_t)];
};

struct workload {
	const char *name;
	int nlines;	/* lines shared by the threads */
	int read_pct;	/* % of read-only transactions */
	int read_lines; /* lines read by one */
};

static const struct workload workloads[] = {
	{ "read-mostly", 1024, 90, 8 },
	{ "write-heavy", 64, 0, 0 },
};

static struct line lines[MAX_LINES] __attribute__((aligned(64)));
static const struct workload *cur;
static long tx_per_thread = 200000;

struct worker {
	pthread_t t;
	unsigned seed;
	long aborts;
	tm_word_t sink;
};

static void *run_worker(void *arg)
{
	struct worker *w = arg;
	unsigned seed = w->seed;

	for (long i = 0; i < tx_per_thread; i++) {
		if ((int)(rand_r(&seed) % 100) < cur->read_pct) {
			int pick[8];

			for (int k = 0; k < cur->read_lines; k++)
				pick[k] = rand_r(&seed) % cur->nlines;
			for (;;) {
				tm_word_t sum = 0;

				for (int k = 0; k < cur->read_lines; k++)
					sum += tm_lt(&lines[pick[k]].value);
				if (tm_commit()) {
					w->sink += sum;
					break;
				}
				w->aborts++;
			}
		} else {
			int a = rand_r(&seed) % cur->nlines;
			int b = (a + 1 + rand_r(&seed) % (cur->nlines - 1)) %
				cur->nlines;

			for (;;) {
				tm_word_t x = tm_ltx(&lines[a].value);
				tm_word_t y = tm_ltx(&lines[b].value);

				tm_st(&lines[a].value, x - 1);
				tm_st(&lines[b].value, y + 1);
				if (tm_commit())
					break;
				w->aborts++;
			}
		}
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One run: returns Mtx/s; adds the aborts per commit to *abort_rate. */
static double run_once(int nthreads, double *abort_rate)
{
	struct worker w[2];
	long aborts = 0;
	double t0, t;

	t0 = now();
	for (int i = 0; i < nthreads; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].seed = (unsigned)(i + 1) * 2654435761u ^ (unsigned)t0;
		pthread_create(&w[i].t, NULL, run_worker, &w[i]);
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(w[i].t, NULL);
		aborts += w[i].aborts;
	}
	t = now() - t0;
	*abort_rate = (double)aborts / ((double)tx_per_thread * nthreads);
	return (double)tx_per_thread * nthreads / t / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	static const char *const modes[] = { "invisible", "visible" };
	int runs = 5, bad = 0;
	double score[2] = { 0, 0 };

	if (argc > 1)
		tx_per_thread = strtol(argv[1], NULL, 10);
	if (argc > 2)
		runs = (int)strtol(argv[2], NULL, 10);
	if (tx_per_thread < 1 || runs < 1 || runs > 99) {
		fprintf(stderr,
			"usage: modebench [TX_PER_THREAD [RUNS(1-99)]]\n");
		return 2;
	}
	printf("modebench: %ld transactions per thread, median of %d runs\n",
	       tx_per_thread, runs);
	printf("%-12s %7s  %12s %8s  %12s %8s  %9s\n", "workload", "threads",
	       "invisible", "aborts", "visible", "aborts", "vis/invis");
	for (size_t wl = 0; wl < sizeof(workloads) / sizeof(workloads[0]);
	     wl++) {
		cur = &workloads[wl];
		for (int nthreads = 1; nthreads <= 2; nthreads++) {
			double mtx[2][99], ab[2][99], med[2], abm[2];

			for (int r = 0; r < runs; r++)
				for (int m = 0; m < 2; m++) {
					tm_word_t sum = 0;

					if (tm_config_set("LTX_MODE",
							  modes[m])) {
						perror("modebench: LTX_MODE");
						return 1;
					}
					mtx[m][r] =
						run_once(nthreads, &ab[m][r]);
					for (int i = 0; i < MAX_LINES; i++)
						sum += lines[i].value;
					bad |= sum != 0; /* transfers keep it */
				}
			for (int m = 0; m < 2; m++) {
				qsort(mtx[m], (size_t)runs, sizeof(double),
				      cmp_double);
				qsort(ab[m], (size_t)runs, sizeof(double),
				      cmp_double);
				med[m] = mtx[m][runs / 2];
				abm[m] = ab[m][runs / 2];
				score[m] += med[m];
			}
			printf("%-12s %7d  %8.3f Mtx/s %8.4f  %8.3f Mtx/s "
			       "%8.4f  %9.2f\n",
			       cur->name, nthreads, med[0], abm[0], med[1],
			       abm[1], med[1] / med[0]);
		}
	}
	printf("sum of medians: invisible %.3f, visible %.3f Mtx/s: %s wins\n",
	       score[0], score[1],
	       score[0] >= score[1] ? "invisible" : "visible");
	if (bad)
		fprintf(stderr, "modebench: a workload's total changed\n");
	return bad;
}
