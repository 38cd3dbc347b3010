/* SPDX-License-Identifier: MIT */
/*
 * tm_free's grace periods and their heavy fences (tx/mem.c): sealed
 * batches share one fence (membarrier), run once four batches wait for
 * it or reclamation has been tried eight times since the last one, when
 * another thread lives (alone, a thread fences each batch); the batches
 * it frees go back one at a time; a transaction running at the fence
 * keeps every batch it fenced.
 * White-box: it counts the fences (rt/fence.h).
 */
#include <ltx/tm.h>

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "rt/fence.h"
#include "ltx-test.h"

/* tx/mem.c's batch: 256 blocks (the blocks here are small). */
#define BATCH 256

static uint64_t fences(void)
{
	return __atomic_load_n(&ltx_fence_heavy_calls, __ATOMIC_RELAXED);
}

static uint64_t pending(void)
{
	struct tm_mem_stats s;

	ck_assert_int_eq(tm_mem_stats(&s), 0);
	return s.pending_blocks;
}

/* n transactions, each freeing one block allocated by an earlier one. */
static void free_blocks(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		void *p = tm_malloc(16);

		ck_assert_ptr_nonnull(p);
		ck_assert(tm_commit());
		tm_free(p);
		ck_assert(tm_commit());
	}
}

/* n more blocks allocated in transactions of their own, kept. */
static void *kept[8 * BATCH];
static unsigned nkept;

static void alloc_and_keep(unsigned n)
{
	ck_assert_uint_le(nkept + n, 8 * BATCH);
	for (unsigned i = 0; i < n; i++) {
		kept[nkept] = tm_malloc(16);
		ck_assert_ptr_nonnull(kept[nkept]);
		nkept++;
		ck_assert(tm_commit());
	}
}

static void drop_kept(void)
{
	while (nkept != 0)
		tm_free(kept[--nkept]);
	tm_mem_flush();
}

/*
 * Another live thread with a descriptor (idle between its steps): with
 * it the fences are shared; a thread alone fences each batch.
 */
static struct ltx_test_peer other;
static tm_word_t shared;

static void peer_touch(void *arg)
{
	(void)arg;
	(void)tm_lt(&shared);
	ck_assert(tm_commit());
}

static void other_start(void)
{
	ltx_test_peer_start(&other);
	ltx_test_peer_run(&other, peer_touch, NULL);
}

/* Start from nothing pending (earlier tests' frees released). */
static void settle(void)
{
	tm_mem_flush();
	ck_assert_uint_eq(pending(), 0);
}

START_TEST(test_four_batches_share_one_fence)
{
	uint64_t f0;

	other_start();
	settle();
	f0 = fences();
	/* Three sealed batches wait for their fence: nothing is released,
	 * though no other thread could read a block. */
	free_blocks(3 * BATCH);
	ck_assert_uint_eq(fences(), f0);
	ck_assert_uint_eq(pending(), 3 * BATCH);
	free_blocks(BATCH - 1);
	ck_assert_uint_eq(fences(), f0);
	/* The fourth seal runs one fence for all four.  Alone in the
	 * process, all four may go; one does at once, and the others one
	 * by one as reclamation is tried again (here every 256
	 * allocations), not all together into the allocator's cache. */
	free_blocks(1);
	ck_assert_uint_eq(fences(), f0 + 1);
	ck_assert_uint_eq(pending(), 3 * BATCH);
	/* (The first try after a seal releases nothing: the seal did.) */
	alloc_and_keep(BATCH);
	ck_assert_uint_eq(pending(), 3 * BATCH);
	alloc_and_keep(BATCH);
	ck_assert_uint_eq(pending(), 2 * BATCH);
	alloc_and_keep(BATCH);
	ck_assert_uint_eq(pending(), BATCH);
	alloc_and_keep(BATCH);
	ck_assert_uint_eq(pending(), 0);
	ck_assert_uint_eq(fences(), f0 + 1);
	drop_kept();
	ltx_test_peer_stop(&other);
}
END_TEST

START_TEST(test_a_lone_batch_is_fenced_after_eight_tries)
{
	uint64_t f0;

	other_start();
	settle();
	f0 = fences();
	free_blocks(BATCH); /* one sealed batch, the first try */
	ck_assert_uint_eq(pending(), BATCH);
	/* Allocations alone: reclamation is tried every 256 of them, and
	 * the batch is fenced at the eighth try. */
	alloc_and_keep(6 * BATCH);
	ck_assert_uint_eq(fences(), f0);
	ck_assert_uint_eq(pending(), BATCH);
	alloc_and_keep(2 * BATCH);
	ck_assert_uint_eq(fences(), f0 + 1);
	ck_assert_uint_eq(pending(), 0);
	drop_kept();
	settle();
	ltx_test_peer_stop(&other);
}
END_TEST

/* The peer's steps: begin a transaction and leave it running; end it. */

static void peer_begin(void *arg)
{
	(void)arg;
	(void)tm_lt(&shared);
}

/*
 * Its end: committed, or, in the visible mode only, doomed by a false
 * conflict: the 512 blocks freed while it runs lie on ~128 lines, one of
 * which may share the bytelock of its one read (about 1 run in 500 with
 * the default table, nearly every run with LTX_OREC_BITS=4), and the
 * freer that loses there falls back to an irrevocable free, which dooms
 * it.  Either way it has ended, which is what the test is about.  (In the
 * invisible mode a read-only transaction commits at its snapshot.)
 */
static void peer_commit(void *arg)
{
	char mode[16];

	(void)arg;
	if (tm_commit())
		return;
	ck_assert_uint_eq(tm_status() & TM_ABORT_CONFLICT, TM_ABORT_CONFLICT);
	ck_assert_int_eq(tm_config_get("LTX_MODE", mode, sizeof(mode)), 0);
	ck_assert_str_eq(mode, "visible");
}

START_TEST(test_a_transaction_at_the_fence_keeps_every_batch)
{
	struct ltx_test_peer peer;
	uint64_t f0;

	ltx_test_peer_start(&peer);
	ltx_test_peer_run(&peer, peer_touch, NULL); /* its descriptor */
	settle();
	f0 = fences();
	/* Two batches sealed before the peer's transaction begins, two
	 * after: the fence finds it running, and all four wait for it. */
	free_blocks(2 * BATCH);
	ltx_test_peer_run(&peer, peer_begin, NULL);
	free_blocks(2 * BATCH);
	ck_assert_uint_eq(fences(), f0 + 1);
	ck_assert_uint_eq(pending(), 4 * BATCH);
	tm_mem_flush();
	ck_assert_uint_eq(pending(), 4 * BATCH);
	/* Once it ends, the next try releases them. */
	ltx_test_peer_run(&peer, peer_commit, NULL);
	tm_mem_flush();
	ck_assert_uint_eq(pending(), 0);
	ltx_test_peer_stop(&peer);
}
END_TEST

START_TEST(test_flush_fences_what_waits)
{
	uint64_t f0;

	other_start();
	settle();
	f0 = fences();
	free_blocks(BATCH + 10); /* a sealed batch and an open one */
	ck_assert_uint_eq(fences(), f0);
	tm_mem_flush();
	ck_assert_uint_eq(fences(), f0 + 1);
	ck_assert_uint_eq(pending(), 0);
	ltx_test_peer_stop(&other);
}
END_TEST

START_TEST(test_a_thread_alone_fences_each_batch)
{
	uint64_t f0;

	settle();
	f0 = fences();
	/* Its fence interrupts nobody: each batch has its own, and goes
	 * back to the allocator at once. */
	free_blocks(BATCH);
	ck_assert_uint_eq(fences(), f0 + 1);
	ck_assert_uint_eq(pending(), 0);
	free_blocks(BATCH);
	ck_assert_uint_eq(fences(), f0 + 2);
	ck_assert_uint_eq(pending(), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("reclaim");
	TCase *tc = tcase_create("reclaim");

	tcase_add_test(tc, test_four_batches_share_one_fence);
	tcase_add_test(tc, test_a_lone_batch_is_fenced_after_eight_tries);
	tcase_add_test(tc, test_a_transaction_at_the_fence_keeps_every_batch);
	tcase_add_test(tc, test_flush_fences_what_waits);
	tcase_add_test(tc, test_a_thread_alone_fences_each_batch);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
