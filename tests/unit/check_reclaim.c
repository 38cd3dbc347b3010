/* SPDX-License-Identifier: MIT */
/*
 * tm_free's grace periods and their heavy fences (tx/mem.c): sealed
 * batches share one fence (membarrier), run once four batches wait for
 * it or reclamation has been tried eight times since the last one, and
 * a transaction running at the fence keeps every batch it fenced.
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

/* Start from nothing pending (earlier tests' frees released). */
static void settle(void)
{
	tm_mem_flush();
	ck_assert_uint_eq(pending(), 0);
}

START_TEST(test_four_batches_share_one_fence)
{
	uint64_t f0;

	settle();
	f0 = fences();
	/* Three sealed batches wait for their fence: nothing is released,
	 * though no other thread could read a block. */
	free_blocks(3 * BATCH);
	ck_assert_uint_eq(fences(), f0);
	ck_assert_uint_eq(pending(), 3 * BATCH);
	free_blocks(BATCH - 1);
	ck_assert_uint_eq(fences(), f0);
	/* The fourth seal runs one fence for all four, and (alone in the
	 * process) they are released at once. */
	free_blocks(1);
	ck_assert_uint_eq(fences(), f0 + 1);
	ck_assert_uint_eq(pending(), 0);
}
END_TEST

START_TEST(test_a_lone_batch_is_fenced_after_eight_tries)
{
	enum { ALLOCS = 8 * BATCH };
	static void *keep[ALLOCS];
	uint64_t f0;

	settle();
	f0 = fences();
	free_blocks(BATCH); /* one sealed batch, the first try */
	ck_assert_uint_eq(pending(), BATCH);
	/* Allocations alone: reclamation is tried every 256 of them, and
	 * the batch is fenced at the eighth try. */
	for (unsigned i = 0; i < ALLOCS; i++) {
		keep[i] = tm_malloc(16);
		ck_assert_ptr_nonnull(keep[i]);
		ck_assert(tm_commit());
		if (i == 6 * BATCH) {
			ck_assert_uint_eq(fences(), f0);
			ck_assert_uint_eq(pending(), BATCH);
		}
	}
	ck_assert_uint_eq(fences(), f0 + 1);
	ck_assert_uint_eq(pending(), 0);
	for (unsigned i = 0; i < ALLOCS; i++)
		tm_free(keep[i]);
	settle();
}
END_TEST

/* The peer's steps: begin a transaction and leave it running; end it. */
static tm_word_t shared;

static void peer_begin(void *arg)
{
	(void)arg;
	(void)tm_lt(&shared);
}

static void peer_commit(void *arg)
{
	(void)arg;
	ck_assert(tm_commit());
}

START_TEST(test_a_transaction_at_the_fence_keeps_every_batch)
{
	struct ltx_test_peer peer;
	uint64_t f0;

	ltx_test_peer_start(&peer);
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

	settle();
	f0 = fences();
	free_blocks(BATCH + 10); /* a sealed batch and an open one */
	ck_assert_uint_eq(fences(), f0);
	tm_mem_flush();
	ck_assert_uint_eq(fences(), f0 + 1);
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
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
