/* SPDX-License-Identifier: MIT */
/* Statistics: tm_stats_get counts, and the segment reader on bad input. */
#include <ltx/tm.h>
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

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

START_TEST(test_stats_get_rejects_small_size)
{
	struct tm_stats s = { .size = 1 };

	ck_assert_int_eq(tm_stats_get(&s), -1);
	ck_assert_int_eq(tm_stats_get(NULL), -1);
}
END_TEST

/* A valid segment laid out as the writer does, with one site. */
static void make_segment(struct ltx_statseg *s)
{
	ltx_statseg_layout(s, 1);
	s->h.nsites = 1;
	s->sites[0].nframes = 1;
	s->sites[0].frames[0].obj = -1;
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
		"/dev/shm/ltx.42.ab (deleted)", 42, &m));
	ck_assert(m.deleted);
	/* Another pid's, another directory, another file, a bad line. */
	ck_assert(!ltx_statseg_maps_line(
		"7f0000000000-7f000000b000 rw-s 00000000 00:1a 12345 "
		"/dev/shm/ltx.43.ab", 42, &m));
	ck_assert(!ltx_statseg_maps_line(
		"7f0000000000-7f000000b000 rw-s 00000000 00:1a 12345 "
		"/tmp/ltx.42.ab", 42, &m));
	ck_assert(!ltx_statseg_maps_line(
		"7f0000000000-7f000000b000 r-xp 00000000 08:01 777 "
		"/usr/lib/libc.so.6", 42, &m));
	ck_assert(!ltx_statseg_maps_line("garbage /dev/shm/ltx.42", 42, &m));
	ck_assert(!ltx_statseg_maps_line("", 42, &m));
}
END_TEST

/* What the file must be before a byte is read: regular, a segment's
 * size, the process's user's, the inode the process maps. */
START_TEST(test_statseg_file_checks_refuse_what_is_not_the_segment)
{
	struct ltx_statseg_expect e = { .check_owner = true, .uid = 1000,
					.check_inode = true, .major = 0,
					.minor = 26, .ino = 12345 };
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
	ck_assert_int_eq(ltx_statseg_size(s, sizeof(s->h), (uint64_t)16 << 30,
					  &n),
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
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_stats_count_commits_and_explicit_aborts);
	tcase_add_test(tc, test_stats_get_rejects_small_size);
	tcase_add_test(tc, test_stats_each_abort_in_exactly_one_row);
	tcase_add_test(tc,
		       test_stats_threads_count_threads_that_ran_transactions);
	tcase_add_test(tc, test_statseg_parse_accepts_valid_rejects_bad);
	tcase_add_test(tc, test_statseg_names_give_the_pid);
	tcase_add_test(tc, test_statseg_maps_line_finds_the_mapped_segment);
	tcase_add_test(tc,
		       test_statseg_file_checks_refuse_what_is_not_the_segment);
	tcase_add_test(tc, test_statseg_size_comes_from_the_header_capped);
	tcase_add_test(tc, test_statseg_parse_survives_corrupt_segments);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
