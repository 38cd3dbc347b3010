/* SPDX-License-Identifier: MIT */
/* Statistics: tm_stats_get counts, and the segment reader on bad input. */
#include <ltx/tm.h>
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "cd/conflict.h"
#include "ltx-test.h"
#include "rt/peek.h"
#include "rt/statseg.h"
#include "tx/stats.h"

static tm_word_t cell;

START_TEST(test_stats_count_commits_and_explicit_aborts)
{
	struct tm_stats a = { .size = sizeof(a) }, b = { .size = sizeof(b) };

	ck_assert_int_eq(tm_stats_get(&a), 0);
	for (int i = 0; i < 10; i++) {
		tm_st(&cell, (tm_word_t)i);
		ck_assert(tm_commit());
	}
	for (int i = 0; i < 5; i++) {
		(void)tm_lt(&cell);
		ck_assert(tm_commit());
	}
	for (int i = 0; i < 3; i++) {
		tm_st(&cell, 1);
		tm_abort();
	}
	ck_assert_int_eq(tm_stats_get(&b), 0);
	ck_assert_uint_eq(b.commits_rw - a.commits_rw, 10);
	ck_assert_uint_eq(b.commits_ro - a.commits_ro, 5);
	ck_assert_uint_eq(b.commits - a.commits, 15);
	ck_assert_uint_eq(b.aborts - a.aborts, 3);
	ck_assert_uint_eq(b.abort_cause[0] - a.abort_cause[0], 3);
	ck_assert_uint_eq(b.size, sizeof(b));
}
END_TEST

static pthread_barrier_t all_started;

static void *one_transaction(void *arg)
{
	tm_st(&cell, 1);
	ck_assert(tm_commit());
	if (arg != NULL)
		pthread_barrier_wait(&all_started);
	return NULL;
}

/*
 * threads counts the threads that ran transactions: not the descriptors
 * (a thread that exits gives its descriptor to the next one, and each has
 * a twin for its signal handlers), so 4 threads at once and then 3 one
 * after another are 7, whatever the pool did.
 */
START_TEST(test_stats_threads_count_threads_that_ran_transactions)
{
	struct tm_stats a = { .size = sizeof(a) }, b = { .size = sizeof(b) };
	pthread_t t[4];

	ck_assert_int_eq(tm_stats_get(&a), 0);
	pthread_barrier_init(&all_started, NULL, 4);
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, one_transaction, &all_started);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&all_started);
	for (int i = 0; i < 3; i++) {
		pthread_create(&t[0], NULL, one_transaction, NULL);
		pthread_join(t[0], NULL);
	}
	ck_assert_int_eq(tm_stats_get(&b), 0);
	ck_assert_uint_eq(b.threads - a.threads, 7);
	ck_assert_uint_eq(b.commits_rw - a.commits_rw, 7);
}
END_TEST

/*
 * With statistics on, every abort falls in exactly one row: tm_abort and
 * tm_retry are explicit, an overflowing transaction cache is capacity,
 * and the rows add up to the aborts.
 */
static volatile int stats_started;

/* Starts the export with a cancel pending: the start must be whole, and
 * the cancel acted on after it. */
static void *start_with_cancel_pending(void *arg)
{
	(void)arg;
	pthread_cancel(pthread_self()); /* deferred: pending */
	if (tm_config_set("LTX_STATS", "1") == 0)
		stats_started = 1;
	pthread_testcancel();
	return NULL;
}

/* The start makes cancellation points holding the segment's lock: a
 * thread cancelled there left the lock held, and the next start (or the
 * exit's summary) waited for ever. */
START_TEST(test_stats_start_is_whole_with_a_cancel_pending)
{
	pthread_t t;
	void *ret;

	ck_assert_int_eq(tm_config_set("LTX_STATS_FILE", "/dev/null"), 0);
	ck_assert_int_eq(
		pthread_create(&t, NULL, start_with_cancel_pending, NULL), 0);
	ck_assert_int_eq(pthread_join(t, &ret), 0);
	ck_assert_msg(stats_started,
		      "the thread was cancelled inside the statistics' start");
	ck_assert_msg(ret == PTHREAD_CANCELED, "the cancel was lost");
	/* The lock is free: stop and start again. */
	ck_assert_int_eq(tm_config_set("LTX_STATS", "0"), 0);
	ck_assert_int_eq(tm_config_set("LTX_STATS", "1"), 0);
}
END_TEST

START_TEST(test_stats_each_abort_in_exactly_one_row)
{
	static tm_word_t lines[4][8] __attribute__((aligned(64)));
	struct ltx_stats a, b;
	uint64_t threads, rows = 0;

	ck_assert_int_eq(tm_config_set("LTX_STATS", "1"), 0);
	ck_assert_int_eq(tm_config_set("LTX_STATS_FILE", "/dev/null"), 0);
	ltx_stats_collect(&a, &threads, NULL, 0);
	for (int i = 0; i < 3; i++) {
		tm_st(&cell, 1);
		tm_abort();
	}
	tm_st(&cell, 2);
	tm_retry();
	ck_assert_int_eq(tm_config_set("LTX_CAPACITY", "2"), 0);
	for (int i = 0; i < 2; i++) {
		for (int k = 0; k < 4; k++)
			tm_st(&lines[k][0], 1);
		ck_assert(!tm_commit());
	}
	ck_assert_int_eq(tm_config_set("LTX_CAPACITY", "unlimited"), 0);
	ltx_stats_collect(&b, &threads, NULL, 0);
	ck_assert_uint_eq(b.aborts - a.aborts, 6);
	ck_assert_uint_eq(b.aborts_by[LTX_ABORT_EXPLICIT] -
				  a.aborts_by[LTX_ABORT_EXPLICIT],
			  4);
	ck_assert_uint_eq(b.aborts_by[LTX_ABORT_CAPACITY] -
				  a.aborts_by[LTX_ABORT_CAPACITY],
			  2);
	for (unsigned r = 0; r < LTX_ABORT_ROWS; r++)
		rows += b.aborts_by[r] - a.aborts_by[r];
	ck_assert_uint_eq(rows, 6);
}
END_TEST

/*
 * Conflict classes (issue 19), step by step, so that each conflict has a
 * known holder in a known state: a holder thread takes its word's line
 * (LTX, and ST unless told not to) and waits; this thread then accesses
 * its own word and is doomed; the holder goes on (stores, if it had not
 * yet, and commits) when told; this thread's tm_commit then fails, which
 * counts the abort.  Each case must add exactly one abort, to its class,
 * and count it on this thread's line.
 */
struct holder {
	tm_word_t *word;
	bool store_first; /* ST before the requester comes */
	bool store_later; /* ST after it, before committing */
	tm_word_t v;	  /* what the holder's LTX read */
};

/* The holder's steps (the step harness, common/ltx-test.h). */
static void hold_line(void *arg)
{
	struct holder *h = arg;

	h->v = tm_ltx(h->word);
	if (h->store_first)
		tm_st(h->word, h->v + 1);
}

static void release_line(void *arg)
{
	struct holder *h = arg;

	if (h->store_later)
		tm_st(h->word, h->v + 1);
	ck_assert(tm_commit());
}

static const struct ltx_stats_line *line_of(const struct ltx_stats_tables *t,
					    const void *addr)
{
	for (unsigned i = 0; i < t->nlines; i++)
		if (t->lines[i].line == ((uintptr_t)addr & ~(uintptr_t)63))
			return &t->lines[i];
	return NULL;
}

/*
 * One conflict: the holder on theirs, then an LTX and ST of mine.  Returns
 * the class its abort was counted in (checking that it was one abort,
 * counted on mine's line).  The holder stores before the conflict
 * (store_first) or after it (store_later); the abort is counted after the
 * holder went on, or (abort_first) while it still holds the line.
 */
static unsigned one_conflict(tm_word_t *theirs, tm_word_t *mine,
			     bool store_first, bool store_later,
			     bool abort_first)
{
	static struct ltx_stats_line la[LTX_STATSEG_LINES];
	static struct ltx_stats_line lb[LTX_STATSEG_LINES];
	struct ltx_stats_tables ta = { .lines = la, .max_lines = 32 };
	struct ltx_stats_tables tb = { .lines = lb, .max_lines = 32 };
	struct holder h = { .word = theirs,
			    .store_first = store_first,
			    .store_later = store_later };
	const struct ltx_stats_line *before, *after;
	struct ltx_stats a, b;
	uint64_t threads, n = 0, on_line = 0;
	unsigned cls = LTX_CONFLICT_CLASSES;
	struct ltx_test_peer holder;

	ltx_stats_collect_all(&a, &threads, &ta);
	ltx_test_peer_start(&holder);
	ltx_test_peer_run(&holder, hold_line, &h);
	tm_st(mine, tm_ltx(mine) + 1); /* doomed: the line is held */
	if (abort_first)
		ck_assert(!tm_commit());
	ltx_test_peer_run(&holder, release_line, &h);
	ltx_test_peer_stop(&holder);
	if (!abort_first)
		ck_assert(!tm_commit());
	ltx_stats_collect_all(&b, &threads, &tb);
	ck_assert_uint_eq(b.aborts - a.aborts, 1);
	before = line_of(&ta, mine);
	after = line_of(&tb, mine);
	ck_assert_ptr_nonnull(after);
	for (unsigned k = 0; k < LTX_CONFLICT_CLASSES; k++) {
		uint64_t d = b.conflict_class[k] - a.conflict_class[k];
		uint64_t dl = after->count[k] - (before ? before->count[k] : 0);

		ck_assert_uint_eq(d, dl);
		if (d != 0)
			cls = k;
		n += d;
		on_line += dl;
	}
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(on_line, 1);
	return cls;
}

static void classify_cases(void)
{
	static _Alignas(64) tm_word_t line[8], other[8], more[2][8];
	static struct ltx_stats_line ll[LTX_STATSEG_LINES];
	struct ltx_stats_tables t = { .lines = ll, .max_lines = 32 };
	const struct ltx_stats_line *l;
	struct ltx_stats a, b;
	uint64_t threads;

	ck_assert_int_eq(tm_config_set("LTX_STATS", "1"), 0);
	ck_assert_int_eq(tm_config_set("LTX_STATS_FILE", "/dev/null"), 0);
	/* The same word, stored: true sharing. */
	ck_assert_uint_eq(one_conflict(&line[0], &line[0], true, false, false),
			  LTX_CONFLICT_TRUE);
	/* Another word of the line: false sharing. */
	ck_assert_uint_eq(one_conflict(&line[1], &line[0], true, false, false),
			  LTX_CONFLICT_FALSE);
	ck_assert_uint_eq(one_conflict(&line[0], &line[7], true, false, false),
			  LTX_CONFLICT_FALSE);
	/* Taken by LTX only when the conflict was found, stored before the
	 * abort was counted: looked at again, false sharing. */
	ck_assert_uint_eq(one_conflict(&line[1], &line[0], false, true, false),
			  LTX_CONFLICT_FALSE);
	/* Never stored: its bytes are not known, and not guessed (each
	 * case on a line of its own: the aborts whose holder had stored
	 * nothing are looked at again as long as it holds their line). */
	ck_assert_uint_eq(
		one_conflict(&more[0][1], &more[0][0], false, false, false),
		LTX_CONFLICT_UNKNOWN);
	ck_assert_uint_eq(
		one_conflict(&more[1][0], &more[1][0], false, false, false),
		LTX_CONFLICT_UNKNOWN);
	/* Counted while the holder had stored nothing yet: unknown until
	 * this thread's next commit, which finds what the holder stored
	 * since and moves the abort to its class, on its line too. */
	ck_assert_uint_eq(one_conflict(&line[1], &line[0], false, true, true),
			  LTX_CONFLICT_UNKNOWN);
	ltx_stats_collect_all(&a, &threads, &t);
	l = line_of(&t, line);
	ck_assert_ptr_nonnull(l);
	ck_assert_uint_ge(l->count[LTX_CONFLICT_UNKNOWN], 1);
	tm_st(&other[0], 1);
	ck_assert(tm_commit());
	ltx_stats_collect_all(&b, &threads, &t);
	l = line_of(&t, line);
	ck_assert_ptr_nonnull(l);
	ck_assert_uint_eq(a.conflict_class[LTX_CONFLICT_UNKNOWN] -
				  b.conflict_class[LTX_CONFLICT_UNKNOWN],
			  1);
	ck_assert_uint_eq(b.conflict_class[LTX_CONFLICT_FALSE] -
				  a.conflict_class[LTX_CONFLICT_FALSE],
			  1);
	/* Two parts: this thread's word 0, the holders' word 1 (and 7's
	 * requester's word 7 with word 0 before). */
	ck_assert_uint_eq(l->part[0] | l->part[1] | l->part[2] | l->part[3],
			  0xff000000000000ffull | 0xff00);
}

/* Lines of their own sharing an orec (a bytelock) at 4 bits: aliasing,
 * with the bits that separate them. */
static void classify_aliasing(void)
{
	static _Alignas(64) tm_word_t lines[64][8];
	static struct ltx_stats_line ll[LTX_STATSEG_LINES];
	struct ltx_stats_tables t = { .lines = ll, .max_lines = 32 };
	const struct ltx_stats_line *l;
	struct ltx_stats s;
	uint64_t threads;
	unsigned bits = 0;
	int i = 0, j = 0;

	ck_assert_int_eq(tm_config_set("LTX_OREC_BITS", "4"), 0);
	ck_assert_int_eq(tm_config_set("LTX_STATS", "1"), 0);
	ck_assert_int_eq(tm_config_set("LTX_STATS_FILE", "/dev/null"), 0);
	for (i = 0; i < 64 && bits == 0; i++)
		for (j = i + 1; j < 64 && bits == 0; j++) {
			bits = ltx_cd_separating_bits((uintptr_t)lines[i],
						      (uintptr_t)lines[j]);
			if (bits <= 4)
				bits = 0;
		}
	ck_assert_uint_ne(bits, 0);
	i--, j--;
	ck_assert_uint_eq(one_conflict(lines[j], lines[i], true, false, false),
			  LTX_CONFLICT_ALIAS);
	ltx_stats_collect_all(&s, &threads, &t);
	l = line_of(&t, lines[i]);
	ck_assert_ptr_nonnull(l);
	ck_assert_uint_eq(l->other, (uintptr_t)lines[j]);
	ck_assert_uint_eq(l->bits, bits);
	/* Stored or not, the holder's line is another one. */
	ck_assert_uint_eq(one_conflict(lines[j], lines[i], false, false, false),
			  LTX_CONFLICT_ALIAS);
}

START_TEST(test_stats_aliasing_classified_invisible)
{
	classify_aliasing();
}
END_TEST

START_TEST(test_stats_aliasing_classified_visible)
{
	ck_assert_int_eq(tm_config_set("LTX_MODE", "visible"), 0);
	classify_aliasing();
}
END_TEST

START_TEST(test_stats_conflicts_classified_invisible)
{
	classify_cases();
}
END_TEST

START_TEST(test_stats_conflicts_classified_visible)
{
	ck_assert_int_eq(tm_config_set("LTX_MODE", "visible"), 0);
	classify_cases();
}
END_TEST

/* The copy the statistics read other threads' write sets with: memory
 * that is gone (unmapped, or never readable) makes it return false, and
 * neither kills the process nor reaches the program's own SIGSEGV
 * handler. */
static void must_not_run(int sig)
{
	(void)sig;
	abort();
}

START_TEST(test_peek_returns_false_on_memory_that_is_gone)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char buf[256];
	struct sigaction sa = { .sa_handler = must_not_run };

	ck_assert_ptr_ne(p, MAP_FAILED);
	ck_assert_int_eq(sigaction(SIGSEGV, &sa, NULL), 0);
	memset(p, 0x5a, (size_t)page * 2);
	ck_assert(ltx_peek(buf, p + page - 100, sizeof(buf)));
	ck_assert_int_eq(buf[0], 0x5a);
	ck_assert_int_eq(buf[255], 0x5a);
	/* The second page gone: a copy across into it, and one inside. */
	ck_assert_int_eq(munmap(p + page, (size_t)page), 0);
	errno = 1234;
	ck_assert(!ltx_peek(buf, p + page - 100, sizeof(buf)));
	ck_assert(!ltx_peek(buf, p + page, 8));
	ck_assert_int_eq(errno, 1234);
	ck_assert_int_eq(mprotect(p, (size_t)page, PROT_NONE), 0);
	ck_assert(!ltx_peek(buf, p, 8));
	ck_assert(!ltx_peek(buf, NULL, 8));
	/* And it still works, many times (the signal mask came back). */
	ck_assert_int_eq(mprotect(p, (size_t)page, PROT_READ), 0);
	for (int i = 0; i < 1000; i++) {
		ck_assert(ltx_peek(buf, p, 8));
		ck_assert(!ltx_peek(buf, p + page, 8));
	}
	munmap(p, (size_t)page);
}
END_TEST

START_TEST(test_stats_get_rejects_small_size)
{
	struct tm_stats s = { .size = 1 };

	ck_assert_int_eq(tm_stats_get(&s), -1);
	ck_assert_int_eq(tm_stats_get(NULL), -1);
}
END_TEST

/* A valid segment laid out as the writer does, with one site and one
 * conflict line. */
static void make_segment(struct ltx_statseg *s)
{
	ltx_statseg_layout(s, 1);
	s->h.nsites = 1;
	s->sites[0].nframes = 1;
	s->sites[0].frames[0].obj = -1;
	s->h.nlines = 1;
	s->lines[0].addr = 0x1000;
	s->lines[0].count[LTX_CONFLICT_FALSE] = 5;
	s->lines[0].part[0] = 0xff;
	s->lines[0].part[1] = 0xff00;
	s->lines[0].obj = -1;
	s->lines[0].other_obj = -1;
}

START_TEST(test_statseg_parse_accepts_valid_rejects_bad)
{
	struct ltx_statseg *s = aligned_alloc(8, sizeof(*s));
	struct ltx_statseg_view v;

	make_segment(s);
	ck_assert_int_eq(ltx_statseg_parse(s, sizeof(*s), &v), LTX_STATSEG_OK);
	ck_assert_int_eq(ltx_statseg_parse(s, sizeof(*s) - 1, &v),
			 LTX_STATSEG_ETRUNC);
	ck_assert_int_eq(ltx_statseg_parse(s, 4, &v), LTX_STATSEG_ETRUNC);
	s->h.version = LTX_STATSEG_VERSION - 1;
	ck_assert_int_eq(ltx_statseg_parse(s, sizeof(*s), &v),
			 LTX_STATSEG_EVERSION);
	/* The same version from a build with another counter list. */
	make_segment(s);
	s->h.fields[3] ^= 1;
	ck_assert_int_eq(ltx_statseg_parse(s, sizeof(*s), &v),
			 LTX_STATSEG_EVERSION);
	make_segment(s);
	s->h.magic ^= 1;
	ck_assert_int_eq(ltx_statseg_parse(s, sizeof(*s), &v),
			 LTX_STATSEG_EMAGIC);
	make_segment(s);
	s->h.sites_off = 0xfffffff0u;
	ck_assert_int_eq(ltx_statseg_parse(s, sizeof(*s), &v),
			 LTX_STATSEG_ECORRUPT);
	make_segment(s);
	s->sites[0].frames[0].obj = 3; /* no such object */
	ck_assert_int_eq(ltx_statseg_parse(s, sizeof(*s), &v),
			 LTX_STATSEG_ECORRUPT);
	make_segment(s);
	memset(s->h.command, 'x', sizeof(s->h.command)); /* no NUL */
	ck_assert_int_eq(ltx_statseg_parse(s, sizeof(*s), &v),
			 LTX_STATSEG_ECORRUPT);
	/* Conflict lines: objects that exist, names that end, a line's
	 * address, bits a table can have, a table inside the segment. */
	make_segment(s);
	s->lines[0].obj = 0; /* no object */
	ck_assert_int_eq(ltx_statseg_parse(s, sizeof(*s), &v),
			 LTX_STATSEG_ECORRUPT);
	make_segment(s);
	s->lines[0].other_obj = -2;
	ck_assert_int_eq(ltx_statseg_parse(s, sizeof(*s), &v),
			 LTX_STATSEG_ECORRUPT);
	make_segment(s);
	memset(s->lines[0].sym[3], 'x', sizeof(s->lines[0].sym[3]));
	ck_assert_int_eq(ltx_statseg_parse(s, sizeof(*s), &v),
			 LTX_STATSEG_ECORRUPT);
	make_segment(s);
	s->lines[0].addr = 0x1008;
	ck_assert_int_eq(ltx_statseg_parse(s, sizeof(*s), &v),
			 LTX_STATSEG_ECORRUPT);
	make_segment(s);
	s->lines[0].bits = 65;
	ck_assert_int_eq(ltx_statseg_parse(s, sizeof(*s), &v),
			 LTX_STATSEG_ECORRUPT);
	make_segment(s);
	s->h.nlines = LTX_STATSEG_LINES + 1;
	ck_assert_int_eq(ltx_statseg_parse(s, sizeof(*s), &v),
			 LTX_STATSEG_ECORRUPT);
	make_segment(s);
	s->h.lines_off = (uint32_t)sizeof(*s) - 8;
	ck_assert_int_eq(ltx_statseg_parse(s, sizeof(*s), &v),
			 LTX_STATSEG_ECORRUPT);
	free(s);
}
END_TEST

/* The summary and the JSON of a segment with a false-sharing line name
 * its parts and give the advice; aliasing names the bits. */
START_TEST(test_statseg_prints_conflict_lines)
{
	struct ltx_statseg *s = aligned_alloc(8, sizeof(*s));
	struct ltx_statseg_view v;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	make_segment(s);
	s->c.conflict_class[LTX_CONFLICT_FALSE] = 5;
	s->c.conflict_class[LTX_CONFLICT_UNKNOWN] = 1;
	s->h.orec_bits = 16;
	s->h.nlines = 2;
	s->lines[1].addr = 0x2040;
	s->lines[1].count[LTX_CONFLICT_ALIAS] = 3;
	s->lines[1].part[0] = 0xff00;
	s->lines[1].other = 0x9000;
	s->lines[1].bits = 19;
	s->lines[1].obj = -1;
	s->lines[1].other_obj = -1;
	ck_assert_int_eq(ltx_statseg_parse(s, sizeof(*s), &v), LTX_STATSEG_OK);
	out = open_memstream(&text, &len);
	ltx_statseg_print(out, &v, NULL, NULL);
	fclose(out);
	ck_assert_ptr_nonnull(strstr(text, "conflict aborts by class (of 6):"));
	ck_assert_ptr_nonnull(strstr(text, "  false sharing  "));
	ck_assert_ptr_nonnull(strstr(text, "bytes 8-15  "));
	ck_assert_ptr_nonnull(strstr(text, "advice: pad or align"));
	ck_assert_ptr_nonnull(
		strstr(text, "advice: raise LTX_OREC_BITS to 19 (now 16)"));
	ck_assert_ptr_nonnull(strstr(text, "aliases with 0x9000 heap"));
	free(text);
	text = NULL;
	out = open_memstream(&text, &len);
	ltx_statseg_print_json(out, &v, NULL, NULL);
	fclose(out);
	ck_assert_ptr_nonnull(strstr(
		text, "\"conflict_classes\":{\"true_sharing\":0,"
		      "\"false_sharing\":5,\"aliasing\":0,\"unknown\":1}"));
	ck_assert_ptr_nonnull(strstr(text, "\"class\":\"false_sharing\""));
	ck_assert_ptr_nonnull(strstr(text, "\"orec_bits_needed\":19"));
	ck_assert_ptr_nonnull(strstr(text, "{\"bytes\":\"8-15\",\"mask\":"
					   "\"0x000000000000ff00\",\"what\":"
					   "\"heap\"}"));
	free(text);
	free(s);
}
END_TEST

/* Segment names: ltx.<pid> or ltx.<pid>.<hex token>, nothing else. */
START_TEST(test_statseg_names_give_the_pid)
{
	ck_assert_int_eq(ltx_statseg_name_pid("ltx.42"), 42);
	ck_assert_int_eq(ltx_statseg_name_pid("ltx.42.0123456789abcdef"), 42);
	ck_assert_int_eq(ltx_statseg_name_pid("ltx.42."), 0);
	ck_assert_int_eq(ltx_statseg_name_pid("ltx.42.xyz"), 0);
	ck_assert_int_eq(ltx_statseg_name_pid("ltx.42.AB"), 0);
	ck_assert_int_eq(ltx_statseg_name_pid("ltx."), 0);
	ck_assert_int_eq(ltx_statseg_name_pid("ltx.-1"), 0);
	ck_assert_int_eq(ltx_statseg_name_pid("ltx.99999999999999999999"), 0);
	ck_assert_int_eq(ltx_statseg_name_pid("sem.ltx.42"), 0);
}
END_TEST

/* /proc/PID/maps lines: only a segment of that pid, with its inode. */
START_TEST(test_statseg_maps_line_finds_the_mapped_segment)
{
	struct ltx_statseg_mapping m;

	ck_assert(ltx_statseg_maps_line(
		"7f0000000000-7f000000b000 rw-s 00000000 00:1a 12345     "
		"          /dev/shm/ltx.42.0123456789abcdef\n",
		42, &m));
	ck_assert_str_eq(m.path, "/dev/shm/ltx.42.0123456789abcdef");
	ck_assert_uint_eq(m.ino, 12345);
	ck_assert_uint_eq(m.major, 0);
	ck_assert_uint_eq(m.minor, 0x1a);
	ck_assert(!m.deleted);
	ck_assert(ltx_statseg_maps_line(
		"7f0000000000-7f000000b000 rw-s 00000000 00:1a 12345 "
		"/dev/shm/ltx.42.ab (deleted)",
		42, &m));
	ck_assert(m.deleted);
	/* Another pid's, another directory, another file, a bad line. */
	ck_assert(!ltx_statseg_maps_line(
		"7f0000000000-7f000000b000 rw-s 00000000 00:1a 12345 "
		"/dev/shm/ltx.43.ab",
		42, &m));
	ck_assert(!ltx_statseg_maps_line(
		"7f0000000000-7f000000b000 rw-s 00000000 00:1a 12345 "
		"/tmp/ltx.42.ab",
		42, &m));
	ck_assert(!ltx_statseg_maps_line(
		"7f0000000000-7f000000b000 r-xp 00000000 08:01 777 "
		"/usr/lib/libc.so.6",
		42, &m));
	ck_assert(!ltx_statseg_maps_line("garbage /dev/shm/ltx.42", 42, &m));
	ck_assert(!ltx_statseg_maps_line("", 42, &m));
}
END_TEST

/* What the file must be before a byte is read: regular, a segment's
 * size, the process's user's, the inode the process maps. */
START_TEST(test_statseg_file_checks_refuse_what_is_not_the_segment)
{
	struct ltx_statseg_expect e = { .check_owner = true,
					.uid = 1000,
					.check_inode = true,
					.major = 0,
					.minor = 26,
					.ino = 12345 };
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_mode = S_IFREG | 0600;
	st.st_size = sizeof(struct ltx_statseg);
	st.st_uid = 1000;
	st.st_ino = 12345;
	st.st_dev = makedev(0, 26);
	ck_assert_int_eq(ltx_statseg_check_file(&st, &e), LTX_STATSEG_OK);
	ck_assert_int_eq(ltx_statseg_check_file(&st, NULL), LTX_STATSEG_OK);
	st.st_uid = 1001;
	ck_assert_int_eq(ltx_statseg_check_file(&st, &e), LTX_STATSEG_EOWNER);
	st.st_uid = 1000;
	st.st_ino = 12346;
	ck_assert_int_eq(ltx_statseg_check_file(&st, &e), LTX_STATSEG_EINODE);
	st.st_ino = 12345;
	st.st_dev = makedev(0, 27);
	ck_assert_int_eq(ltx_statseg_check_file(&st, &e), LTX_STATSEG_EINODE);
	st.st_dev = makedev(0, 26);
	st.st_size = (off_t)16 << 30;
	ck_assert_int_eq(ltx_statseg_check_file(&st, &e), LTX_STATSEG_ETOOBIG);
	st.st_size = 3;
	ck_assert_int_eq(ltx_statseg_check_file(&st, &e), LTX_STATSEG_ETRUNC);
	st.st_size = sizeof(struct ltx_statseg);
	st.st_mode = S_IFIFO | 0600;
	ck_assert_int_eq(ltx_statseg_check_file(&st, &e), LTX_STATSEG_ENOTREG);
	st.st_mode = S_IFDIR | 0700;
	ck_assert_int_eq(ltx_statseg_check_file(&st, &e), LTX_STATSEG_ENOTREG);
}
END_TEST

/* The bytes to read come from the header, capped, never the file size. */
START_TEST(test_statseg_size_comes_from_the_header_capped)
{
	struct ltx_statseg *s = aligned_alloc(8, sizeof(*s));
	struct ltx_statseg_view v;
	size_t n = 0;

	make_segment(s);
	ck_assert_int_eq(
		ltx_statseg_size(s, sizeof(s->h), (uint64_t)16 << 30, &n),
		LTX_STATSEG_OK);
	ck_assert_uint_eq(n, sizeof(*s));
	ck_assert_int_eq(ltx_statseg_size(s, sizeof(s->h), sizeof(*s) - 1, &n),
			 LTX_STATSEG_ETRUNC);
	ck_assert_int_eq(ltx_statseg_size(s, 10, sizeof(*s), &n),
			 LTX_STATSEG_ETRUNC);
	s->h.size = (uint64_t)16 << 30;
	ck_assert_int_eq(ltx_statseg_size(s, sizeof(s->h), s->h.size, &n),
			 LTX_STATSEG_ETOOBIG);
	s->h.magic = 0;
	ck_assert_int_eq(ltx_statseg_size(s, sizeof(s->h), sizeof(*s), &n),
			 LTX_STATSEG_EMAGIC);
	/* The header's pid must be the process asked for. */
	make_segment(s);
	ck_assert_int_eq(ltx_statseg_parse(s, sizeof(*s), &v), LTX_STATSEG_OK);
	ck_assert_int_eq(ltx_statseg_check_pid(&v, 1), LTX_STATSEG_OK);
	ck_assert_int_eq(ltx_statseg_check_pid(&v, 2), LTX_STATSEG_EPID);
	free(s);
}
END_TEST

/*
 * Fuzz: random bytes over random fields of a valid segment, and random
 * lengths.  The parser must either refuse it or accept a view whose every
 * pointer and count stays inside the buffer (printed to /dev/null, which
 * reads every field it points to; ASan or valgrind catch any overrun).
 */
START_TEST(test_statseg_parse_survives_corrupt_segments)
{
	struct ltx_statseg *s = aligned_alloc(8, sizeof(*s));
	FILE *null = fopen("/dev/null", "w");
	unsigned seed = 12345;
	int ok = 0;

	ck_assert_ptr_nonnull(null);
	for (int round = 0; round < 20000; round++) {
		struct ltx_statseg_view v;
		unsigned char *p = (unsigned char *)s;
		size_t len = sizeof(*s);
		int flips = 1 + rand_r(&seed) % 8;

		make_segment(s);
		for (int f = 0; f < flips; f++) {
			/* Mostly the header, where the offsets are. */
			size_t at = (size_t)rand_r(&seed) %
				    (rand_r(&seed) % 4 ? 160 : len);
			p[at] = (unsigned char)rand_r(&seed);
		}
		if (rand_r(&seed) % 4 == 0)
			len = (size_t)rand_r(&seed) % (sizeof(*s) + 1) & ~7u;
		if (ltx_statseg_parse(s, len, &v) != LTX_STATSEG_OK)
			continue;
		ok++;
		ck_assert((const char *)v.c + sizeof(*v.c) <=
			  (const char *)s + len);
		ck_assert((const char *)(v.sites + v.nsites) <=
			  (const char *)s + len);
		ck_assert((const char *)(v.objs + v.nobjs) <=
			  (const char *)s + len);
		ck_assert((const char *)(v.lines + v.nlines) <=
			  (const char *)s + len);
		ltx_statseg_print(null, &v, NULL, NULL);
		ltx_statseg_print_json(null, &v, NULL, NULL);
	}
	ck_assert_int_gt(ok, 0); /* harmless flips are still accepted */
	fclose(null);
	free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("stats");
	TCase *tc = tcase_create("core");

	/* Every abort here is counted as scripted: no serial fallback,
	 * whatever LTX_SERIAL_AFTER says (a doomed requester's next
	 * transaction would run irrevocably, dooming a holder, or commit a
	 * transaction a test has made fail). */
	if (tm_config_set("LTX_SERIAL_AFTER", "0") != 0) {
		perror("check_stats: LTX_SERIAL_AFTER=0");
		return EXIT_FAILURE;
	}

	tcase_add_test(tc, test_stats_count_commits_and_explicit_aborts);
	tcase_add_test(tc, test_stats_get_rejects_small_size);
	tcase_add_test(tc, test_peek_returns_false_on_memory_that_is_gone);
	tcase_add_test(tc, test_stats_conflicts_classified_invisible);
	tcase_add_test(tc, test_stats_conflicts_classified_visible);
	tcase_add_test(tc, test_stats_aliasing_classified_invisible);
	tcase_add_test(tc, test_stats_aliasing_classified_visible);
	tcase_add_test(tc, test_stats_each_abort_in_exactly_one_row);
	tcase_add_test(tc, test_stats_start_is_whole_with_a_cancel_pending);
	tcase_add_test(tc,
		       test_stats_threads_count_threads_that_ran_transactions);
	tcase_add_test(tc, test_statseg_parse_accepts_valid_rejects_bad);
	tcase_add_test(tc, test_statseg_prints_conflict_lines);
	tcase_add_test(tc, test_statseg_names_give_the_pid);
	tcase_add_test(tc, test_statseg_maps_line_finds_the_mapped_segment);
	tcase_add_test(tc,
		       test_statseg_file_checks_refuse_what_is_not_the_segment);
	tcase_add_test(tc, test_statseg_size_comes_from_the_header_capped);
	tcase_add_test(tc, test_statseg_parse_survives_corrupt_segments);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
