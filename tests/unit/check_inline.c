/* SPDX-License-Identifier: MIT */
/* <ltx/inline.h>'s begin in the caller: what the library's begin does. */
#include <ltx/tm.h>

#include <check.h>
#include <pthread.h>
#include <stdint.h>

#include "ltx-test.h"
#include "inline-serial.h"

#ifndef LTX_INLINE
#error "check_inline is built with LTX_INLINE"
#endif

static uint64_t word[8] __attribute__((aligned(64)));

/* Every idle tm_lt below begins inline: the count of transactions goes up
 * by one per transaction, and the transaction is live. */
START_TEST(test_inline_begin_counts_and_opens_a_transaction)
{
	uint64_t id;

	ck_assert_uint_eq(tm_lt(&word[0]), 0); /* the descriptor exists */
	ck_assert(tm_commit());
	id = inline_serial_tx_id();
	word[1] = 11;
	ck_assert_uint_eq(tm_lt(&word[1]), 11);
	ck_assert(tm_in_transaction());
	ck_assert_uint_eq(inline_serial_tx_id(), id + 1);
	tm_st(&word[2], 12);
	ck_assert_uint_eq(tm_lt(&word[2]), 12);
	ck_assert(tm_commit());
	ck_assert(!tm_in_transaction());
	ck_assert_uint_eq(tm_lt(&word[2]), 12);
	ck_assert_uint_eq(inline_serial_tx_id(), id + 2);
	tm_abort();
	ck_assert_uint_eq(tm_lt(&word[1]), 11); /* after an abort too */
	ck_assert_uint_eq(inline_serial_tx_id(), id + 3);
	ck_assert(tm_commit());
}
END_TEST

/*
 * An exclusive transaction (GCC's serial mode) holds the token: a
 * transaction that begins inline must wait for it, and then read what it
 * wrote directly, without any orec telling.
 */
static void take_token(void *arg)
{
	(void)arg;
	ck_assert_uint_eq(tm_lt(&word[0]), 0); /* the descriptor exists */
	ck_assert(tm_commit());
	ck_assert(inline_serial_take_exclusive());
}

static void write_and_give_back(void *arg)
{
	(void)arg;
	__atomic_store_n(&word[3], 42, __ATOMIC_RELAXED);
	inline_serial_give_back();
}

/* The loader: a thread with a descriptor (its first transaction, on the
 * slow path, made it), idle when the token is taken, then loading. */
static pthread_barrier_t ready, taken;

static void *first_load(void *arg)
{
	uint64_t *out = arg;

	ck_assert_uint_eq(tm_lt(&word[0]), 0);
	ck_assert(tm_commit());
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&taken);
	*out = tm_lt(&word[3]); /* begins inline, finds the token */
	ck_assert(tm_commit());
	return NULL;
}

START_TEST(test_inline_begin_waits_for_an_exclusive_transaction)
{
	struct ltx_test_peer holder;
	pthread_t loader;
	uint64_t seen = 0;

	word[3] = 1;
	ck_assert_int_eq(pthread_barrier_init(&ready, NULL, 2), 0);
	ck_assert_int_eq(pthread_barrier_init(&taken, NULL, 2), 0);
	ltx_test_peer_start(&holder);
	ck_assert_int_eq(pthread_create(&loader, NULL, first_load, &seen), 0);
	pthread_barrier_wait(&ready);
	ltx_test_peer_run(&holder, take_token, NULL);
	pthread_barrier_wait(&taken);
	ltx_test_peer_run(&holder, write_and_give_back, NULL);
	ck_assert_int_eq(pthread_join(loader, NULL), 0);
	ck_assert_uint_eq(seen, 42);
	ltx_test_peer_stop(&holder);
	pthread_barrier_destroy(&ready);
	pthread_barrier_destroy(&taken);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("inline");
	TCase *tc = tcase_create("begin");

	tcase_add_test(tc, test_inline_begin_counts_and_opens_a_transaction);
	tcase_add_test(tc,
		       test_inline_begin_waits_for_an_exclusive_transaction);
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
