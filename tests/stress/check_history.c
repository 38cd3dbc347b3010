/* SPDX-License-Identifier: MIT */
/* History checker: random concurrent histories must be serializable, opaque. */
#define _GNU_SOURCE
#include <ltx/tm.h>

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ltx-test.h"

/*
 * Many threads (more than cores) run random transactions of LT, LTX and ST
 * on a few shared words, with random spins and yields between operations,
 * and log what each transaction read and wrote.  Every store writes a value
 * that no other store writes (thread id << 40 | sequence number), so every
 * value read names exactly one writer; each word starts at a value of its
 * own (thread 0).  Every write is preceded by an LTX of the word, so each
 * committed write records the version it overwrote, which gives the version
 * order of each word as a chain.
 *
 * After the run the checker builds the conflict graph (Adya's direct
 * serialization graph with the version order known): nodes are the
 * committed transactions and, for opacity, the aborted ones (as read-only
 * transactions: their writes were never published, but what they read while
 * live must fit a serialization too); edges are
 *   WR  writer of a version -> every transaction that read it (WW edges are
 *       WR edges here: each writer read the version it overwrote),
 *   RW  reader of a version -> the writer of the next version.
 * It fails on
 *   - a read of a value that no committed transaction wrote (an aborted or
 *     intermediate value leaked, or garbage), on the wrong word or not;
 *   - two committed writers of one version (a lost update);
 *   - a cycle (a history that no serial order explains), printed;
 *   - inside one transaction: a read that does not return its own earlier
 *     store, or a word read twice with two values, or a load that returned 0
 *     (doomed) in a transaction that then committed.
 * A doomed transaction's loads return 0, and no store writes 0, so nonzero
 * values were read while the transaction was live.
 */

#define NWORDS	   8
#define NTHREADS   8
#define MAX_OPS	   6
#define TID_SHIFT  40
#define SEQ_MASK   (((uint64_t)1 << TID_SHIFT) - 1)
#define WORD_SHIFT 56
#define VALUE_MASK (((uint64_t)1 << WORD_SHIFT) - 1)
#define LOG_WORDS  (1u << 20) /* per thread and round: 8 MiB */

#define VAL(tid, seq) (((uint64_t)(tid) << TID_SHIFT) | (seq))
#define VAL_TID(v)    ((unsigned)((v) >> TID_SHIFT))
#define VAL_SEQ(v)    ((v)&SEQ_MASK)

/* Log record header: reads, writes, committed. */
#define HDR(nr, nw, c)                                                         \
	((uint64_t)(nr) | (uint64_t)(nw) << 8 | (uint64_t)(c) << 16)
#define HDR_NR(h)	 ((unsigned)((h)&0xff))
#define HDR_NW(h)	 ((unsigned)(((h) >> 8) & 0xff))
#define HDR_COMMITTED(h) ((unsigned)(((h) >> 16) & 1))

struct run_cfg {
	const char *mode;      /* LTX_MODE */
	const char *backoff;   /* LTX_BACKOFF, or NULL for the default */
	const char *orec_bits; /* LTX_OREC_BITS, or NULL */
	unsigned words_per_line;
};

struct worker {
	pthread_t thread;
	unsigned tid; /* 1..NTHREADS */
	uint64_t rng;
	uint64_t *log;
	size_t len;
	uint64_t seq; /* last sequence number used */
	unsigned long commits, aborts;
};

/* The shared words: NWORDS words spread over lines as configured. */
static uint64_t space[NWORDS * 8] __attribute__((aligned(64)));
static uint64_t *words[NWORDS];

static int stop_flag;

/* The first violations of each kind, for the failure message. */
enum kind { IN_TX, OPACITY, LOST_UPDATE, CYCLE, NKINDS };

static const char *const kind_name[NKINDS] = {
	"inconsistent reads inside a transaction",
	"reads of values no committed transaction wrote",
	"lost updates",
	"cycles",
};

#define REPORT_PER_KIND 3

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static char report[16384];
static size_t report_len;
static unsigned long violations, kind_count[NKINDS];

static void violation(enum kind kind, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&report_lock);
	violations++;
	if (kind_count[kind]++ < REPORT_PER_KIND &&
	    report_len < sizeof(report) - 256) {
		va_start(ap, fmt);
		report_len +=
			(size_t)vsnprintf(report + report_len,
					  sizeof(report) - report_len, fmt, ap);
		va_end(ap);
		if (report_len < sizeof(report) - 1) {
			report[report_len++] = '\n';
			report[report_len] = '\0';
		}
	}
	pthread_mutex_unlock(&report_lock);
}

/* Append the count of each kind of violation to the report. */
static void summarize(void)
{
	for (unsigned k = 0; k < NKINDS; k++)
		if (kind_count[k] > 0 && report_len < sizeof(report) - 128)
			report_len += (size_t)snprintf(
				report + report_len,
				sizeof(report) - report_len, "%lu %s\n",
				kind_count[k], kind_name[k]);
}

static uint64_t next_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static void random_delay(struct worker *wk)
{
	uint64_t r = next_rand(&wk->rng);

	switch (r % 8) {
	case 0:
		sched_yield();
		break;
	case 1:
		for (unsigned i = (unsigned)(r >> 8) % 256; i > 0; i--)
			__asm__ __volatile__("" ::: "memory");
		break;
	default:
		break;
	}
}

/* One random transaction, logged.  Returns false when the log is full. */
static bool run_one(struct worker *wk)
{
	struct {
		bool seen, written;
		uint64_t ext, cur;
	} st[NWORDS];
	unsigned nops = 1 + (unsigned)(next_rand(&wk->rng) % MAX_OPS);
	bool doomed = false, ended = false, committed = false;
	unsigned nr = 0, nw = 0;
	uint64_t *rec;

	if (wk->len + 1 + 3 * NWORDS > LOG_WORDS)
		return false;
	memset(st, 0, sizeof(st));
	for (unsigned op = 0; op < nops; op++) {
		uint64_t r = next_rand(&wk->rng);
		unsigned w = (unsigned)(r % NWORDS),
			 kind = (unsigned)(r >> 8) % 4;
		uint64_t x;

		/* kinds 0, 1: LT; 2: LTX; 3: LTX then ST (read-modify-write) */
		x = kind < 2 ? tm_lt(words[w]) : tm_ltx(words[w]);
		if (x == 0) {
			doomed = true;
			break;
		}
		if (st[w].written) {
			if (x != st[w].cur)
				violation(
					IN_TX,
					"thread %u: word %u read %#llx after "
					"storing %#llx in the same transaction",
					wk->tid, w, (unsigned long long)x,
					(unsigned long long)st[w].cur);
		} else if (st[w].seen) {
			if (x != st[w].ext)
				violation(IN_TX,
					  "thread %u: word %u read twice in a "
					  "live "
					  "transaction: %#llx then %#llx",
					  wk->tid, w,
					  (unsigned long long)st[w].ext,
					  (unsigned long long)x);
		} else {
			st[w].seen = true;
			st[w].ext = x;
		}
		if (kind == 3) {
			st[w].cur = VAL(wk->tid, ++wk->seq);
			st[w].written = true;
			tm_st(words[w], st[w].cur);
		}
		random_delay(wk);
		if ((r >> 16) % 4 == 0 && !tm_validate()) {
			ended = true;
			break;
		}
	}
	if (!ended) {
		committed = tm_commit();
		if (committed && doomed)
			violation(
				IN_TX,
				"thread %u: a load returned 0 (doomed) but the "
				"transaction committed",
				wk->tid);
	}
	if (committed)
		wk->commits++;
	else
		wk->aborts++;
	rec = wk->log + wk->len;
	for (unsigned w = 0; w < NWORDS; w++)
		if (st[w].seen)
			rec[1 + nr++] = (uint64_t)w << WORD_SHIFT | st[w].ext;
	if (committed)
		for (unsigned w = 0; w < NWORDS; w++)
			if (st[w].written) {
				rec[1 + nr + 2 * nw] =
					(uint64_t)w << WORD_SHIFT | st[w].ext;
				rec[2 + nr + 2 * nw] = st[w].cur;
				nw++;
			}
	if (nr == 0 && nw == 0)
		return true; /* doomed at once: nothing to check */
	rec[0] = HDR(nr, nw, committed);
	wk->len += 1 + nr + 2 * nw;
	return true;
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;

	while (!__atomic_load_n(&stop_flag, __ATOMIC_RELAXED))
		if (!run_one(wk))
			break;
	return NULL;
}

/* ---- the checker ---- */

struct vinfo {
	int32_t writer; /* committed transaction that wrote it, or -1 */
	int32_t over;	/* committed tx that overwrote it, or -1 */
};

struct graph {
	size_t n;	      /* nodes */
	const uint64_t **rec; /* node -> log record */
	unsigned *thread;     /* node -> thread id */
	struct vinfo *vals[NTHREADS + 1];
	uint64_t nvals[NTHREADS + 1];
	size_t *first; /* CSR: out-edges of i are dst[first[i]..first[i+1]) */
	uint32_t *dst;
};

static struct vinfo *lookup(struct graph *g, uint64_t v)
{
	unsigned t = VAL_TID(v);
	uint64_t s = VAL_SEQ(v);

	if (t > NTHREADS || s == 0 || s > g->nvals[t])
		return NULL;
	return &g->vals[t][s];
}

/* Does the committed transaction i write v to word w? */
static bool writes_value(struct graph *g, size_t i, unsigned w, uint64_t v)
{
	const uint64_t *r = g->rec[i];
	unsigned nr = HDR_NR(r[0]), nw = HDR_NW(r[0]);

	for (unsigned j = 0; j < nw; j++)
		if (r[2 + nr + 2 * j] == v &&
		    r[1 + nr + 2 * j] >> WORD_SHIFT == w)
			return true;
	return false;
}

/* The version v of word w (committed or initial), or NULL if none. */
static struct vinfo *version(struct graph *g, unsigned w, uint64_t v)
{
	struct vinfo *vi;

	if (VAL_TID(v) == 0)
		return VAL_SEQ(v) == w + 1 ? &g->vals[0][w + 1] : NULL;
	vi = lookup(g, v);
	if (vi == NULL || vi->writer < 0 ||
	    !writes_value(g, (size_t)vi->writer, w, v))
		return NULL;
	return vi;
}

static void describe(struct graph *g, size_t i, char *buf, size_t len)
{
	const uint64_t *r = g->rec[i];
	unsigned nr = HDR_NR(r[0]), nw = HDR_NW(r[0]);
	size_t k;

	k = (size_t)snprintf(buf, len, "T%zu (thread %u, %s) reads", i,
			     g->thread[i],
			     HDR_COMMITTED(r[0]) ? "committed" : "aborted");
	for (unsigned j = 0; j < nr && k < len; j++)
		k += (size_t)snprintf(
			buf + k, len - k, " w%u=%#llx",
			(unsigned)(r[1 + j] >> WORD_SHIFT),
			(unsigned long long)(r[1 + j] & VALUE_MASK));
	if (nw > 0 && k < len)
		k += (size_t)snprintf(buf + k, len - k, " writes");
	for (unsigned j = 0; j < nw && k < len; j++)
		k += (size_t)snprintf(
			buf + k, len - k, " w%u=%#llx",
			(unsigned)(r[1 + nr + 2 * j] >> WORD_SHIFT),
			(unsigned long long)r[2 + nr + 2 * j]);
}

/* Print the cycle stack[from..top] as a violation. */
static void report_cycle(struct graph *g, const uint32_t *stack, size_t from,
			 size_t top)
{
	char *buf = malloc(8192), line[512];
	size_t k = 0;

	if (buf == NULL)
		return;
	k += (size_t)snprintf(
		buf, 8192, "cycle in the conflict graph (not serializable):");
	for (size_t i = from; i <= top && k < 8192; i++) {
		describe(g, stack[i], line, sizeof(line));
		k += (size_t)snprintf(buf + k, 8192 - k, "\n  %s ->", line);
	}
	if (k < 8192)
		snprintf(buf + k, 8192 - k, "\n  (back to T%u)", stack[from]);
	violation(CYCLE, "%s", buf);
	free(buf);
}

/* Iterative DFS; reports the first cycle found.  Returns true if acyclic. */
static bool acyclic(struct graph *g)
{
	uint8_t *color = calloc(g->n, 1);
	uint32_t *stack = malloc(g->n * sizeof(*stack));
	size_t *edge = malloc(g->n * sizeof(*edge));
	bool ok = true;

	ck_assert(color != NULL && stack != NULL && edge != NULL);
	for (size_t root = 0; root < g->n && ok; root++) {
		size_t top = 0;

		if (color[root] != 0)
			continue;
		stack[0] = (uint32_t)root;
		edge[0] = g->first[root];
		color[root] = 1;
		for (;;) {
			uint32_t u = stack[top];

			if (edge[top] == g->first[u + 1]) {
				color[u] = 2;
				if (top == 0)
					break;
				top--;
				continue;
			}
			uint32_t v = g->dst[edge[top]++];

			if (color[v] == 1) {
				size_t from = top;

				while (stack[from] != v)
					from--;
				report_cycle(g, stack, from, top);
				ok = false;
				break;
			}
			if (color[v] == 0) {
				color[v] = 1;
				stack[++top] = v;
				edge[top] = g->first[v];
			}
		}
	}
	free(color);
	free(stack);
	free(edge);
	return ok;
}

static void add_edge(struct graph *g, size_t *fill, uint32_t from, uint32_t to,
		     bool count_only)
{
	if (count_only)
		g->first[from + 1]++;
	else
		g->dst[fill[from]++] = to;
}

static void check_history(struct worker *wk, unsigned nthreads)
{
	struct graph g;
	size_t n = 0, node, nedges = 0;
	size_t *fill;

	memset(&g, 0, sizeof(g));
	/* vals[0]: the initial versions, VAL(0, w + 1) for word w */
	g.nvals[0] = NWORDS;
	g.vals[0] = malloc((NWORDS + 1) * sizeof(struct vinfo));
	ck_assert(g.vals[0] != NULL);
	for (unsigned w = 0; w <= NWORDS; w++)
		g.vals[0][w].writer = g.vals[0][w].over = -1;
	for (unsigned t = 0; t < nthreads; t++)
		for (size_t p = 0; p < wk[t].len;
		     p += 1 + HDR_NR(wk[t].log[p]) + 2 * HDR_NW(wk[t].log[p]))
			n++;
	g.n = n;
	g.rec = malloc((n + 1) * sizeof(*g.rec));
	g.thread = malloc((n + 1) * sizeof(*g.thread));
	g.first = calloc(n + 2, sizeof(*g.first));
	ck_assert(g.rec != NULL && g.thread != NULL && g.first != NULL);
	node = 0;
	for (unsigned t = 0; t < nthreads; t++) {
		unsigned tid = wk[t].tid;

		g.nvals[tid] = wk[t].seq;
		g.vals[tid] = malloc((wk[t].seq + 1) * sizeof(struct vinfo));
		ck_assert(g.vals[tid] != NULL);
		for (uint64_t s = 0; s <= wk[t].seq; s++)
			g.vals[tid][s].writer = g.vals[tid][s].over = -1;
		for (size_t p = 0; p < wk[t].len;
		     p += 1 + HDR_NR(wk[t].log[p]) + 2 * HDR_NW(wk[t].log[p])) {
			g.rec[node] = wk[t].log + p;
			g.thread[node] = tid;
			node++;
		}
	}

	/* Who wrote each committed value. */
	for (size_t i = 0; i < n; i++) {
		const uint64_t *r = g.rec[i];
		unsigned nr = HDR_NR(r[0]), nw = HDR_NW(r[0]);

		for (unsigned j = 0; j < nw; j++) {
			struct vinfo *vi = lookup(&g, r[2 + nr + 2 * j]);

			ck_assert(vi != NULL && vi->writer == -1);
			vi->writer = (int32_t)i;
		}
	}
	/* Version order: each committed write names the version it replaced. */
	for (size_t i = 0; i < n; i++) {
		const uint64_t *r = g.rec[i];
		unsigned nr = HDR_NR(r[0]), nw = HDR_NW(r[0]);

		for (unsigned j = 0; j < nw; j++) {
			unsigned w =
				(unsigned)(r[1 + nr + 2 * j] >> WORD_SHIFT);
			uint64_t prev = r[1 + nr + 2 * j] & VALUE_MASK;
			struct vinfo *vi;
			char a[512], b[512];

			vi = version(&g, w, prev);
			if (vi == NULL)
				continue; /* reported as a read below */
			if (vi->over >= 0) {
				describe(&g, (size_t)vi->over, a, sizeof(a));
				describe(&g, i, b, sizeof(b));
				violation(LOST_UPDATE,
					  "lost update: two committed "
					  "transactions overwrote w%u=%#llx:\n"
					  "  %s\n  %s",
					  w, (unsigned long long)prev, a, b);
				continue;
			}
			vi->over = (int32_t)i;
		}
	}
	/* Opacity of single reads, and the edges (counted, then filled). */
	fill = malloc((n + 1) * sizeof(*fill));
	ck_assert(fill != NULL);
	for (int pass = 0; pass < 2; pass++) {
		bool count_only = pass == 0;

		for (size_t i = 0; i < n; i++) {
			const uint64_t *r = g.rec[i];
			unsigned nr = HDR_NR(r[0]);

			for (unsigned j = 0; j < nr; j++) {
				unsigned w = (unsigned)(r[1 + j] >> WORD_SHIFT);
				uint64_t v = r[1 + j] & VALUE_MASK;
				struct vinfo *vi;
				char a[512];

				vi = version(&g, w, v);
				if (vi == NULL) {
					if (count_only) {
						describe(&g, i, a, sizeof(a));
						violation(
							OPACITY,
							"opacity: read of "
							"w%u=%#llx"
							", which no committed "
							"transaction wrote:\n  "
							"%s",
							w,
							(unsigned long long)v,
							a);
					}
					continue;
				}
				if (vi->writer >= 0 && (size_t)vi->writer != i)
					add_edge(&g, fill, (uint32_t)vi->writer,
						 (uint32_t)i, count_only);
				if (vi->over >= 0 && (size_t)vi->over != i)
					add_edge(&g, fill, (uint32_t)i,
						 (uint32_t)vi->over,
						 count_only);
			}
		}
		if (count_only) {
			for (size_t i = 0; i < n; i++)
				g.first[i + 1] += g.first[i];
			nedges = g.first[n];
			g.dst = malloc((nedges + 1) * sizeof(*g.dst));
			ck_assert(g.dst != NULL);
			memcpy(fill, g.first, (n + 1) * sizeof(*fill));
		}
	}
	acyclic(&g);
	fprintf(stderr, "  history: %zu transactions, %zu edges\n", n, nedges);
	free(fill);
	free(g.dst);
	free(g.first);
	free(g.rec);
	free(g.thread);
	for (unsigned t = 0; t <= NTHREADS; t++)
		free(g.vals[t]);
}

static void set_or_fail(const char *name, const char *value)
{
	if (value == NULL)
		return;
	ck_assert_msg(tm_config_set(name, value) == 0, "%s=%s: %s", name, value,
		      strerror(errno));
}

/* Run and check rounds until seconds have passed (or, if until_violation,
 * until a violation is found).  Returns the number of violations. */
static unsigned long run_rounds(const struct run_cfg *cfg, double seconds,
				bool until_violation)
{
	struct timespec t0, now;
	unsigned long commits = 0, aborts = 0;
	unsigned rounds = 0;
	struct worker wk[NTHREADS];

	set_or_fail("LTX_BACKOFF", cfg->backoff);
	set_or_fail("LTX_OREC_BITS", cfg->orec_bits);
	for (unsigned i = 0; i < NWORDS; i++)
		words[i] = &space[(i / cfg->words_per_line) * 8 +
				  i % cfg->words_per_line];
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(wk, 0, sizeof(wk));
	for (unsigned t = 0; t < NTHREADS; t++) {
		wk[t].log = malloc(LOG_WORDS * sizeof(uint64_t));
		ck_assert(wk[t].log != NULL);
	}
	do {
		double slice = seconds < 2.0 ? seconds : 2.0;
		struct timespec d = { (time_t)slice,
				      (long)((slice - (time_t)slice) * 1e9) };

		for (unsigned i = 0; i < NWORDS; i++)
			*words[i] = VAL(0, i + 1);
		stop_flag = 0;
		for (unsigned t = 0; t < NTHREADS; t++) {
			wk[t].tid = t + 1;
			wk[t].rng = 0x9e3779b97f4a7c15ull * (t + 1) +
				    (uint64_t)t0.tv_nsec + rounds;
			wk[t].len = 0;
			wk[t].seq = 0;
			ck_assert(pthread_create(&wk[t].thread, NULL,
						 worker_main, &wk[t]) == 0);
		}
		nanosleep(&d, NULL);
		__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
		for (unsigned t = 0; t < NTHREADS; t++) {
			pthread_join(wk[t].thread, NULL);
			commits += wk[t].commits;
			aborts += wk[t].aborts;
			wk[t].commits = wk[t].aborts = 0;
		}
		check_history(wk, NTHREADS);
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (!(until_violation && violations > 0) &&
		 (now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9 <
			 seconds);
	for (unsigned t = 0; t < NTHREADS; t++)
		free(wk[t].log);
	summarize();
	fprintf(stderr,
		"history mode=%s backoff=%s orec_bits=%s words/line=%u: "
		"%u rounds, %lu commits, %lu aborts, %lu violations\n",
		cfg->mode, cfg->backoff ? cfg->backoff : "default",
		cfg->orec_bits ? cfg->orec_bits : "default",
		cfg->words_per_line, rounds, commits, aborts, violations);
	return violations;
}

static double seconds_per_case(double dflt)
{
	const char *s = getenv("LTX_HISTORY_SECONDS");

	return s != NULL && atof(s) > 0 ? atof(s) : dflt;
}

/* Set the mode; false if this build has no such mode. */
static bool use_mode(const char *mode)
{
	return tm_config_set("LTX_MODE", mode) == 0;
}

#ifndef HISTORY_EXPECT_VIOLATION

static const struct run_cfg cases[] = {
	{ "invisible", NULL, NULL, 1 },
	{ "invisible", "spin:n=256", NULL, 4 },
	{ "invisible", "yield", "4", 1 }, /* 16 orecs: lines share orecs */
	{ "invisible", "none", NULL, 2 },
	{ "visible", NULL, NULL, 1 },
	{ "visible", "none", NULL, 4 },
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

START_TEST(test_random_histories_are_serializable_and_opaque)
{
	const struct run_cfg *cfg = &cases[_i];

	if (!use_mode(cfg->mode)) {
		fprintf(stderr, "history mode=%s: not in this build, skipped\n",
			cfg->mode);
		return;
	}
	run_rounds(cfg, seconds_per_case(1.5), false);
	ck_assert_msg(violations == 0, "%lu violations:\n%s", violations,
		      report);
}
END_TEST

#else /* a build whose runtime skips read validation */

START_TEST(test_checker_detects_broken_read_validation)
{
	const struct run_cfg cfg = { "invisible", "none", NULL, 1 };

	ck_assert(use_mode(cfg.mode));
	run_rounds(&cfg, seconds_per_case(20.0), true);
	fprintf(stderr, "violations reported by the checker:\n%s", report);
	ck_assert_msg(violations > 0,
		      "the checker found no violation in a runtime built "
		      "with LTX_TEST_BREAK_READ_VALIDATION");
}
END_TEST

#endif

int main(void)
{
	Suite *s = suite_create("history");
	TCase *tc = tcase_create("history");

#ifndef HISTORY_EXPECT_VIOLATION
	tcase_add_loop_test(tc,
			    test_random_histories_are_serializable_and_opaque,
			    0, (int)NCASES);
	tcase_set_timeout(tc, 120 + 4 * seconds_per_case(1.5));
#else
	tcase_add_test(tc, test_checker_detects_broken_read_validation);
	tcase_set_timeout(tc, 120 + 4 * seconds_per_case(20.0));
#endif
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
