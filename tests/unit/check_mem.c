/* SPDX-License-Identifier: MIT */
/* Transactional allocation: tm_malloc/tm_free and safe reclamation. */
#define _GNU_SOURCE
#include <ltx/tm.h>

#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ltx-test.h"

static struct tm_mem_stats stats(void)
{
	struct tm_mem_stats s;

	ck_assert_int_eq(tm_mem_stats(&s), 0);
	return s;
}

/* Blocks returned by tm_malloc and not yet released to the allocator. */
static int64_t live_blocks(void)
{
	struct tm_mem_stats s = stats();

	return (int64_t)(s.alloc_blocks - s.freed_blocks);
}

static void set(const char *name, const char *value)
{
	ck_assert_int_eq(tm_config_set(name, value), 0);
}

START_TEST(test_tm_malloc_leaves_program_malloc_alone)
{
	Dl_info info;
	void *p = tm_malloc(100), *q;

	ck_assert_ptr_nonnull(p);
	memset(p, 1, 100);
	/* jemalloc was loaded privately: none of its names is global, and
	 * the program's malloc is still the one it had. */
	ck_assert_ptr_null(dlsym(RTLD_DEFAULT, "mallocx"));
	ck_assert_ptr_null(dlsym(RTLD_DEFAULT, "sdallocx"));
	ck_assert_int_ne(dladdr(dlsym(RTLD_DEFAULT, "malloc"), &info), 0);
	ck_assert_ptr_null(strstr(info.dli_fname, "jemalloc"));
	ck_assert_ptr_null(strstr(info.dli_fname, "libltx"));
	q = malloc(10);
	free(q);
	tm_free(p);
}
END_TEST

START_TEST(test_calloc_zeroes_and_aligned_alloc_aligns)
{
	unsigned char *p = tm_calloc(100, 10);
	void *q = tm_aligned_alloc(4096, 100);

	ck_assert_ptr_nonnull(p);
	for (int i = 0; i < 1000; i++)
		ck_assert_int_eq(p[i], 0);
	ck_assert_ptr_nonnull(q);
	ck_assert_uint_eq((uintptr_t)q % 4096, 0);
	tm_free(p);
	tm_free(q);
	errno = 0;
	ck_assert_ptr_null(tm_calloc(SIZE_MAX / 2, 3));
	ck_assert_int_eq(errno, ENOMEM);
	errno = 0;
	ck_assert_ptr_null(tm_aligned_alloc(48, 100));
	ck_assert_int_eq(errno, EINVAL);
	tm_free(NULL);
}
END_TEST

static uintptr_t slot;

START_TEST(test_alloc_in_aborted_transaction_is_released)
{
	int64_t before;
	void *p, *q, *r;

	tm_free(tm_malloc(1)); /* load the allocator */
	tm_mem_flush();
	before = live_blocks();
	(void)tm_lt(&slot); /* begin */
	p = tm_malloc(64);
	q = tm_calloc(4, 100);
	r = tm_aligned_alloc(256, 1000);
	ck_assert(p && q && r);
	ck_assert_uint_eq((uintptr_t)r % 256, 0);
	tm_st(&slot, (uintptr_t)p);
	ck_assert_int_eq(live_blocks(), before + 3);
	tm_abort();
	ck_assert_int_eq(live_blocks(), before);
	ck_assert_uint_eq(tm_lt(&slot), 0);
	ck_assert(tm_commit());
	/* LeakSanitizer also checks, at exit, that nothing leaked. */
}
END_TEST

START_TEST(test_alloc_in_committed_transaction_is_kept)
{
	int64_t before;
	long *p;

	tm_free(tm_malloc(1));
	tm_mem_flush();
	before = live_blocks();
	(void)tm_lt(&slot);
	p = tm_malloc(sizeof(*p));
	*p = 7;
	tm_st(&slot, (uintptr_t)p);
	ck_assert(tm_commit());
	ck_assert_ptr_eq((void *)slot, p);
	ck_assert_int_eq(*p, 7);
	ck_assert_int_eq(live_blocks(), before + 1);
	tm_free(p);
	slot = 0;
	/* Alone in the process: nothing can read it, the flush frees it. */
	tm_mem_flush();
	ck_assert_int_eq(live_blocks(), before);
	ck_assert_uint_eq(stats().pending_blocks, 0);
}
END_TEST

START_TEST(test_free_in_aborted_transaction_keeps_block)
{
	long *p = tm_malloc(sizeof(*p));
	int64_t before;

	tm_mem_flush();
	before = live_blocks();
	(void)tm_lt(&slot);
	tm_free(p);
	tm_abort();
	*p = 3; /* still ours: ASan would object otherwise */
	ck_assert_int_eq(*p, 3);
	tm_mem_flush();
	ck_assert_int_eq(live_blocks(), before);
	ck_assert_uint_eq(stats().pending_blocks, 0);
	tm_free(p);
}
END_TEST

/*
 * The article's problem, made deterministic: a reader takes the top of a
 * stack with LT and validates; a freer pops that element and frees it
 * (committing); the reader, now doomed but not knowing it, dereferences
 * the element as the article's pop does (plainly) and transactionally.
 * The block must not be released before the reader's transaction ends
 * (AddressSanitizer would report the plain read), the transactional read
 * must fail without reading, and the reader must not commit.
 *
 * In the visible mode the pop cannot happen under the reader: the
 * reader's LT holds top's line shared, so the freer's LTX of it fails
 * (the requester loses) and the freer's transaction is doomed.  The
 * reader then reads the element, intact, and commits; the freer's next
 * try pops and frees it, and with no transaction left to wait for, the
 * block is released at the next flush.  Each test runs in both modes
 * (loop tests, _i as ltx_test_modes), whatever LTX_MODE says.
 */
struct elem {
	long value;
	struct elem *next;
};

static struct elem *top;
static struct elem *reader_res;
static long plain_value, tm_value;
static bool reader_committed;

/* The reader's steps (the step harness, common/ltx-test.h): take the top,
 * then, once the freer has committed, dereference it. */
static void reader_takes_top(void *arg)
{
	reader_res = (struct elem *)tm_lt(&top);
	ck_assert(tm_validate());
}

static void reader_dereferences_it(void *arg)
{
	struct elem *res = reader_res;

	plain_value = res->value; /* as the article's pop reads res->c */
	tm_value = (long)tm_lt(&res->value);
	reader_committed = tm_commit();
}

/* The test, the pop's free by tm_free or (sized) tm_free_sized, in
 * ltx_test_modes[mode]. */
static void doomed_reader_never_sees_freed_block(bool sized, int mode)
{
	struct elem *a = tm_malloc(sizeof(*a)), *b = tm_malloc(sizeof(*b));
	struct elem *res;
	uint64_t freed, pending;
	struct ltx_test_peer reader;
	bool visible = strcmp(ltx_test_modes[mode], "visible") == 0;

	tm_mem_flush(); /* CK_FORK=no: earlier tests' frees */
	pending = stats().pending_blocks;
	b->value = 2;
	b->next = NULL;
	a->value = 1;
	a->next = b;
	top = a;
	ltx_test_peer_start(&reader);
	ltx_test_peer_run(&reader, reader_takes_top, NULL);

	if (visible) {
		/* The reader holds top's line in S: the pop fails. */
		ck_assert_ptr_null((void *)tm_ltx(&top));
		ck_assert(!tm_commit());
		ck_assert_uint_eq(tm_status() & TM_ABORT_CONFLICT,
				  TM_ABORT_CONFLICT);
		ltx_test_peer_run(&reader, reader_dereferences_it, NULL);
		ltx_test_peer_stop(&reader);
		ck_assert_int_eq(plain_value, 1);
		ck_assert_int_eq(tm_value, 1);
		ck_assert(reader_committed);
	}

	/* Pop a and free it, in one transaction. */
	res = (struct elem *)tm_ltx(&top);
	ck_assert_ptr_eq(res, a);
	tm_st(&top, tm_lt(&res->next));
	if (sized)
		tm_free_sized(res, sizeof(*res));
	else
		tm_free(res);
	ck_assert(tm_commit());
	freed = stats().freed_blocks;
	tm_mem_flush();
	if (!visible) {
		/* The reader's transaction is running: a must wait for it. */
		ck_assert_uint_eq(stats().pending_blocks, pending + 1);
		ck_assert_uint_eq(stats().freed_blocks, freed);

		ltx_test_peer_run(&reader, reader_dereferences_it, NULL);
		ltx_test_peer_stop(&reader);
		ck_assert_int_eq(plain_value, 1);
		/* doomed: the load read nothing */
		ck_assert_int_eq(tm_value, 0);
		ck_assert(!reader_committed);
		tm_mem_flush();
	}
	ck_assert_uint_eq(stats().pending_blocks, pending);
	ck_assert_uint_eq(stats().freed_blocks, freed + 1);
	tm_free(b);
	top = NULL;
}

START_TEST(test_doomed_reader_never_sees_freed_block)
{
	if (ltx_test_use_mode(_i))
		doomed_reader_never_sees_freed_block(false, _i);
}
END_TEST

/* The same with tm_free_sized: the size given spares the lookup, not the
 * grace period. */
START_TEST(test_doomed_reader_never_sees_sized_freed_block)
{
	/* A free by a later transaction first: the free below then finds
	 * the log made and takes tm_free_sized's common path. */
	void *p;

	if (!ltx_test_use_mode(_i))
		return;
	p = tm_malloc(sizeof(struct elem));
	(void)tm_lt(&slot);
	tm_free_sized(p, sizeof(struct elem));
	ck_assert(tm_commit());
	doomed_reader_never_sees_freed_block(true, _i);
}
END_TEST

/*
 * tm_malloc in a transaction passes a size to the allocator as asked: 0
 * gives a block, a size no allocator can serve gives NULL with ENOMEM and
 * leaves the transaction live, 13 gives 13 usable bytes; each goes back
 * with the right size whether the transaction frees it, commits or
 * aborts.
 */
START_TEST(test_odd_sizes_in_a_transaction)
{
	int64_t before;
	char *a, *b, *c;

	/* A free by a later transaction: the frees below find the log made
	 * and take tm_free's common paths. */
	a = tm_malloc(1);
	(void)tm_lt(&slot);
	tm_free(a);
	ck_assert(tm_commit());
	tm_mem_flush();
	before = live_blocks();
	(void)tm_lt(&slot);
	a = tm_malloc(0);
	errno = 0;
	ck_assert_ptr_null(tm_malloc(SIZE_MAX));
	ck_assert_int_eq(errno, ENOMEM);
	b = tm_malloc(13);
	c = tm_malloc(13);
	ck_assert(a && b && c);
	memset(b, 1, 13);
	memset(c, 2, 13);
	tm_free(a); /* not the last allocated */
	tm_free(c); /* the last allocated */
	ck_assert(tm_commit());
	ck_assert_int_eq(live_blocks(), before + 1);
	ck_assert_int_eq(b[12], 1);
	(void)tm_lt(&slot);
	a = tm_malloc(0);
	c = tm_malloc(13);
	ck_assert(a && c);
	tm_abort();
	ck_assert_int_eq(live_blocks(), before + 1);
	/* Replace b by a new block, then free that one alone. */
	(void)tm_lt(&slot);
	c = tm_malloc(13);
	ck_assert_ptr_nonnull(c);
	tm_free(b);
	ck_assert(tm_commit());
	ck_assert_uint_eq(stats().pending_blocks, 1);
	(void)tm_lt(&slot);
	tm_free(c);
	ck_assert(tm_commit());
	tm_mem_flush();
	ck_assert_int_eq(live_blocks(), before);
	ck_assert_uint_eq(stats().pending_blocks, 0);
}
END_TEST

/*
 * A block of several lines, freed by a later transaction than the one
 * that allocated it: every line gets a new version, so a reader with an
 * older snapshot is doomed on its last line as on its first.  In the
 * visible mode the free takes every line in E: a reader holding the last
 * line in S makes it fail (the requester loses), the reader commits what
 * it read, and the freer's next try frees the block.
 */
static char *big;
static uintptr_t big_ref, big_fresh;
static long big_tm_value;
static bool big_reader_committed;

static void big_reader_takes_ref(void *arg)
{
	/* The newest version there is: the snapshot is now, newer than any
	 * version the block's lines had before the free. */
	ck_assert_uint_eq(tm_lt(&big_fresh), 1);
	ck_assert_ptr_eq((void *)tm_lt(&big_ref), big);
	ck_assert(tm_validate());
}

static void big_reader_reads_last_line(void *arg)
{
	big_tm_value = (long)tm_lt((uintptr_t *)(big + 192));
	big_reader_committed = tm_commit();
}

/* The visible mode's reader: the last line in S, then (a second step) its
 * commit. */
static void big_reader_holds_last_line(void *arg)
{
	big_tm_value = (long)tm_lt((uintptr_t *)(big + 192));
	ck_assert(tm_validate());
}

static void big_reader_commits(void *arg)
{
	big_reader_committed = tm_commit();
}

/*
 * The visible mode's LTX of big_ref failed (failed true): the reader
 * holds only the block's last line, so the two lines share a bytelock.
 * Only a small table makes that likely (LTX_OREC_BITS below the default
 * 16): then the script cannot be run, and the test says so and returns
 * true.  With the default table the failure stands.
 */
static bool orecs_alias(bool failed)
{
	char bits[16];

	if (!failed)
		return false;
	ck_assert_uint_eq(tm_status() & TM_ABORT_CONFLICT, TM_ABORT_CONFLICT);
	ck_assert_int_eq(tm_config_get("LTX_OREC_BITS", bits, sizeof(bits)), 0);
	ck_assert_msg(atoi(bits) < 16,
		      "LTX of a line no one holds failed: a false conflict "
		      "with %s orec bits",
		      bits);
	fprintf(stderr,
		"check_mem: LTX_OREC_BITS=%s: the block's last line "
		"shares a bytelock with big_ref; skipped\n",
		bits);
	ck_assert(!tm_commit()); /* ends the doomed transaction */
	return true;
}

/*
 * The test, the block freed by tm_free or, given size, by tm_free_sized.
 * The reader loads the word at 192, alone in the block's last line when
 * the block starts a line; a size of 197 is not whole words, and the
 * sized free must still take the line of bytes 192 to 196.
 */
static void free_of_several_lines_dooms_older_reader(size_t size, int mode)
{
	struct ltx_test_peer reader;
	uint64_t pending;
	char *spare[64];
	int n = 0;
	bool visible = strcmp(ltx_test_modes[mode], "visible") == 0;

	/* A free by a later transaction first: the free below then finds
	 * the log made and takes tm_free's common path. */
	big = tm_malloc(200);
	(void)tm_lt(&slot);
	tm_free(big);
	ck_assert(tm_commit());
	/* A block that starts a line, if one of 64 does. */
	big = NULL;
	for (n = 0; n < 64 && big == NULL; n++) {
		spare[n] = tm_malloc(size != 0 ? size : 200);
		ck_assert_ptr_nonnull(spare[n]);
		if (((uintptr_t)spare[n] & 63) == 0)
			big = spare[n];
	}
	if (big == NULL)
		big = spare[--n];
	while (n-- > 0)
		if (spare[n] != big)
			tm_free(spare[n]);
	memset(big, 5, size != 0 ? size : 200);
	big_ref = (uintptr_t)big;
	tm_mem_flush();
	pending = stats().pending_blocks;
	tm_st(&big_fresh, 1);
	ck_assert(tm_commit());
	ltx_test_peer_start(&reader);
	if (visible) {
		ltx_test_peer_run(&reader, big_reader_holds_last_line, NULL);
		if (orecs_alias((void *)tm_ltx(&big_ref) != big)) {
			ltx_test_peer_stop(&reader);
			return;
		}
		tm_st(&big_ref, 0);
		if (size != 0)
			tm_free_sized(big, size);
		else
			tm_free(big);
		ck_assert(!tm_commit());
		ck_assert_uint_eq(tm_status() & TM_ABORT_CONFLICT,
				  TM_ABORT_CONFLICT);
		tm_mem_flush();
		ck_assert_uint_eq(stats().pending_blocks, pending);
		ltx_test_peer_run(&reader, big_reader_commits, NULL);
		ltx_test_peer_stop(&reader);
		/* The bytes of the block in that word are 5 (197: the
		 * first five). */
		ck_assert_uint_eq(
			(uint64_t)big_tm_value &
				(size == 197 ? 0xffffffffffu : ~(uint64_t)0),
			(size == 197 ? 0x0505050505u : 0x0505050505050505u));
		ck_assert(big_reader_committed);
	} else {
		ltx_test_peer_run(&reader, big_reader_takes_ref, NULL);
	}
	/* Unlink and free the block, in one transaction. */
	ck_assert_ptr_eq((void *)tm_ltx(&big_ref), big);
	tm_st(&big_ref, 0);
	if (size != 0)
		tm_free_sized(big, size);
	else
		tm_free(big);
	ck_assert(tm_commit());
	tm_mem_flush();
	if (!visible) {
		ck_assert_uint_eq(stats().pending_blocks, pending + 1);
		ltx_test_peer_run(&reader, big_reader_reads_last_line, NULL);
		ltx_test_peer_stop(&reader);
		/* doomed: the load read nothing */
		ck_assert_int_eq(big_tm_value, 0);
		ck_assert(!big_reader_committed);
		tm_mem_flush();
	}
	ck_assert_uint_eq(stats().pending_blocks, pending);
}

START_TEST(test_free_of_several_lines_dooms_older_reader)
{
	if (ltx_test_use_mode(_i))
		free_of_several_lines_dooms_older_reader(0, _i);
}
END_TEST

START_TEST(test_sized_free_of_several_lines_dooms_older_reader)
{
	if (!ltx_test_use_mode(_i))
		return;
	free_of_several_lines_dooms_older_reader(200, _i);
	free_of_several_lines_dooms_older_reader(197, _i);
}
END_TEST

/*
 * tm_free_sized follows tm_free's rules: NULL does nothing, size 0 looks
 * the size up; a block the transaction allocated goes back at once, one
 * of an earlier transaction when the free commits (not if it aborts);
 * outside a transaction it is a transaction of its own.
 */
START_TEST(test_free_sized_follows_free_rules)
{
	int64_t before;
	char *a, *b, *c;

	tm_free_sized(NULL, 0);
	tm_free_sized(NULL, 16);
	tm_mem_flush();
	before = live_blocks();
	a = tm_malloc(13);
	b = tm_calloc(3, 40);
	ck_assert(a && b);
	ck_assert_int_eq(live_blocks(), before + 2);
	(void)tm_lt(&slot);
	c = tm_malloc(100);
	ck_assert_ptr_nonnull(c);
	tm_free_sized(c, 100); /* allocated by this transaction */
	ck_assert_int_eq(live_blocks(), before + 2);
	tm_free_sized(a, 13);
	tm_free_sized(b, 3 * 40);
	tm_abort(); /* the frees are forgotten */
	memset(a, 1, 13);
	memset(b, 2, 120);
	(void)tm_lt(&slot);
	tm_free_sized(a, 0); /* looked up */
	tm_free_sized(b, 120);
	ck_assert(tm_commit());
	tm_mem_flush();
	ck_assert_int_eq(live_blocks(), before);
	ck_assert_uint_eq(stats().pending_blocks, 0);
	a = tm_malloc(0);
	ck_assert_ptr_nonnull(a);
	tm_free_sized(a, 0); /* outside a transaction */
	tm_mem_flush();
	ck_assert_int_eq(live_blocks(), before);
}
END_TEST

/*
 * A block the transaction freed is still its own to read: the load
 * answers memory's word, not a word that an aborted transaction stored
 * there through the same write-set entry (which tm_free's fast path
 * takes again for the block's line).
 */
START_TEST(test_read_of_a_block_the_transaction_freed)
{
	uint64_t *p = tm_malloc(64);

	ck_assert_ptr_nonnull(p);
	p[0] = 9;
	(void)tm_lt(&slot);
	tm_free(tm_malloc(8)); /* the log is made */
	ck_assert(tm_commit());
	(void)tm_lt(&slot);
	tm_st(&p[0], 5);
	tm_abort();
	(void)tm_lt(&slot);
	tm_free_sized(p, 64);
	ck_assert_uint_eq(tm_lt(&p[0]), 9);
	ck_assert(tm_commit());
}
END_TEST

/* A sorted linked list of tm_malloc'd nodes, with a sentinel head. */
struct node {
	long key;
	struct node *next;
	char payload[240]; /* 256-byte nodes: a leak shows quickly */
};

static struct node list_head = { .key = -1 };

/* Find the first node with key >= key; *prevp gets its predecessor. */
static struct node *list_find(long key, struct node **prevp)
{
	struct node *prev = &list_head;
	struct node *cur = (struct node *)tm_lt(&list_head.next);

	while (cur != NULL && (long)tm_lt(&cur->key) < key) {
		prev = cur;
		cur = (struct node *)tm_lt(&cur->next);
	}
	*prevp = prev;
	return cur;
}

static bool list_insert(long key)
{
	for (;;) {
		struct node *prev, *cur = list_find(key, &prev), *n;

		if (cur != NULL && (long)tm_lt(&cur->key) == key) {
			if (tm_commit())
				return false;
			continue;
		}
		n = tm_malloc(sizeof(*n));
		ck_assert_ptr_nonnull(n);
		n->key = key;
		n->next = cur;
		tm_st(&prev->next, (uintptr_t)n);
		if (tm_commit())
			return true;
	}
}

static bool list_delete(long key)
{
	for (;;) {
		struct node *prev, *cur = list_find(key, &prev);

		if (cur == NULL || (long)tm_lt(&cur->key) != key) {
			if (tm_commit())
				return false;
			continue;
		}
		tm_st(&prev->next, tm_lt(&cur->next));
		tm_free(cur);
		if (tm_commit())
			return true;
	}
}

/* Check the list is sorted; return its length. */
static long list_check(void)
{
	long n = 0, last = -1;

	for (struct node *c = list_head.next; c != NULL; c = c->next, n++) {
		ck_assert_int_gt(c->key, last);
		last = c->key;
	}
	return n;
}

static void list_clear(void)
{
	struct node *c = list_head.next, *next;

	list_head.next = NULL;
	for (; c != NULL; c = next) {
		next = c->next;
		tm_free(c);
	}
}

#define KEYS 128

struct churn {
	pthread_t thread;
	unsigned seed;
	long ops, inserted, deleted;
};

static void *churn(void *arg)
{
	struct churn *c = arg;

	for (long i = 0; i < c->ops; i++) {
		long key = rand_r(&c->seed) % KEYS;

		if (rand_r(&c->seed) & 1)
			c->inserted += list_insert(key);
		else
			c->deleted += list_delete(key);
	}
	return NULL;
}

static void run_churn(struct churn *c, int n, long ops)
{
	for (int i = 0; i < n; i++) {
		c[i] = (struct churn){ .seed = 1234u + (unsigned)i,
				       .ops = ops };
		pthread_create(&c[i].thread, NULL, churn, &c[i]);
	}
	for (int i = 0; i < n; i++)
		pthread_join(c[i].thread, NULL);
}

START_TEST(test_list_churn_keeps_memory_bounded)
{
	const int threads[] = { 2, 4, 8 };
	const long ops = 20000;
	long all_deleted = 0;

	int64_t base;

	tm_free(tm_malloc(1));
	tm_mem_flush();
	ck_assert_uint_eq(stats().pending_blocks, 0);
	base = live_blocks(); /* CK_FORK=no: earlier tests' blocks */
	for (unsigned t = 0; t < 3; t++) {
		struct churn c[8];
		long size = list_check(), deleted = 0;
		struct tm_mem_stats s;

		run_churn(c, threads[t], ops);
		for (int i = 0; i < threads[t]; i++) {
			size += c[i].inserted - c[i].deleted;
			deleted += c[i].deleted;
		}
		ck_assert_int_eq(list_check(), size);
		/* Every thread has exited, none is in a transaction: all
		 * that was freed can be released now. */
		tm_mem_flush();
		s = stats();
		ck_assert_uint_eq(s.pending_blocks, 0);
		ck_assert_int_eq(live_blocks(), base + size);
		ck_assert_int_gt(deleted, 1000);
		all_deleted += deleted;
	}
	/*
	 * Reclamation runs as the threads go: what waits at once depends on
	 * how long a thread is preempted inside a transaction, not on how
	 * much is freed.  Releasing only at the end (or never) would make
	 * the peak the last round's frees, more than half of them all.
	 */
	ck_assert_uint_le(stats().peak_pending_bytes,
			  (uint64_t)all_deleted * sizeof(struct node) / 2);
	list_clear();
	tm_mem_flush();
	ck_assert_int_eq(live_blocks(), base);
}
END_TEST

/*
 * A thread stalls inside a transaction while others churn: they make
 * progress (they finish), but nothing they free is released while the
 * stalled transaction could read it; it all is once it ends.  The stalled
 * thread's steps (the step harness, common/ltx-test.h): it reads the list
 * head, then stays in its transaction until told to end it.
 */
static void stall_begin(void *arg)
{
	(void)tm_lt(&list_head.next);
}

static void stall_end(void *arg)
{
	tm_commit();
}

START_TEST(test_stalled_transaction_delays_reclamation_not_progress)
{
	struct churn c[4];
	struct tm_mem_stats s;
	uint64_t pending;
	int64_t base;
	long size = 0, deleted = 0;
	struct ltx_test_peer stalled;

	set("LTX_MEM_LIMIT", "64k");
	tm_mem_flush();
	pending = stats().pending_blocks;
	base = live_blocks(); /* CK_FORK=no: earlier tests' blocks */
	for (long k = 0; k < KEYS; k += 2)
		list_insert(k);
	ltx_test_peer_start(&stalled);
	ltx_test_peer_run(&stalled, stall_begin, NULL);

	run_churn(c, 4, 4000); /* progress: they all finish */
	size = KEYS / 2;
	for (int i = 0; i < 4; i++) {
		size += c[i].inserted - c[i].deleted;
		deleted += c[i].deleted;
	}
	tm_mem_flush();
	s = stats();
	/* Every node deleted during the stall is still pending, and the
	 * excess over LTX_MEM_LIMIT was reported. */
	ck_assert_int_gt(deleted, 0);
	ck_assert_uint_eq(s.pending_blocks, pending + (uint64_t)deleted);
	ck_assert_uint_gt(s.limit_exceeded, 0);
	/* Only allocations undone by aborts were released meanwhile. */
	ck_assert_int_eq(live_blocks(), base + size + deleted);

	ltx_test_peer_run(&stalled, stall_end, NULL);
	ltx_test_peer_stop(&stalled);
	tm_mem_flush();
	ck_assert_uint_eq(stats().pending_blocks, 0);
	ck_assert_int_eq(live_blocks(), base + size);
	ck_assert_int_eq(list_check(), size);
	list_clear();
	tm_mem_flush();
	ck_assert_int_eq(live_blocks(), base);
	set("LTX_MEM_LIMIT", "64m");
}
END_TEST

#ifdef LTX_DEBUG
START_TEST(test_double_free_is_reported)
{
	void *p = tm_malloc(16);

	tm_free(p);
	tm_free(p);
}
END_TEST

START_TEST(test_wrong_size_is_reported)
{
	void *p = tm_malloc(16);

	tm_free_sized(p, 4096);
}
END_TEST

START_TEST(test_foreign_pointer_is_reported)
{
	void *p = malloc(16);

	tm_free(tm_malloc(16));
	tm_free(p);
}
END_TEST
#endif

int main(void)
{
	Suite *s = suite_create("mem");
	TCase *tc = tcase_create("core");
	TCase *stress = tcase_create("stress");

	tcase_add_test(tc, test_tm_malloc_leaves_program_malloc_alone);
	tcase_add_test(tc, test_calloc_zeroes_and_aligned_alloc_aligns);
	tcase_add_test(tc, test_alloc_in_aborted_transaction_is_released);
	tcase_add_test(tc, test_alloc_in_committed_transaction_is_kept);
	tcase_add_test(tc, test_free_in_aborted_transaction_keeps_block);
	tcase_add_loop_test(tc, test_doomed_reader_never_sees_freed_block, 0,
			    LTX_TEST_NMODES);
	tcase_add_test(tc, test_odd_sizes_in_a_transaction);
	tcase_add_loop_test(tc, test_free_of_several_lines_dooms_older_reader,
			    0, LTX_TEST_NMODES);
	tcase_add_loop_test(tc, test_doomed_reader_never_sees_sized_freed_block,
			    0, LTX_TEST_NMODES);
	tcase_add_loop_test(tc,
			    test_sized_free_of_several_lines_dooms_older_reader,
			    0, LTX_TEST_NMODES);
	tcase_add_test(tc, test_free_sized_follows_free_rules);
	tcase_add_test(tc, test_read_of_a_block_the_transaction_freed);
#ifdef LTX_DEBUG
	tcase_add_test_raise_signal(tc, test_double_free_is_reported, SIGABRT);
	tcase_add_test_raise_signal(tc, test_foreign_pointer_is_reported,
				    SIGABRT);
	tcase_add_test_raise_signal(tc, test_wrong_size_is_reported, SIGABRT);
#endif
	suite_add_tcase(s, tc);
	tcase_set_timeout(stress, 120);
	tcase_add_test(stress, test_list_churn_keeps_memory_bounded);
	tcase_add_test(
		stress,
		test_stalled_transaction_delays_reclamation_not_progress);
	suite_add_tcase(s, stress);
	return ltx_test_run(s);
}
