/* SPDX-License-Identifier: MIT */
/* Visible mode under contention: Figure 8.4's LIFO and a bank with audits. */
#include <ltx/isa.h>

#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bank.h"
#include "lifo.h"
#include "ltx-test.h"

/* The article's LIFO (Figure 8.4, common/lifo.h). */
static struct lifo lifo;

#define LIFO_OPS 3000

/* Push the elements it holds, pop as many back (any thread's), 3 times.
 * Returns 1 if a pop found the stack empty (an element was lost). */
static void *lifo_worker(void *arg)
{
	struct lifo_elem **held = arg;

	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < LIFO_OPS; i++)
			lifo_push(&lifo, held[i]);
		for (int i = 0; i < LIFO_OPS; i++) {
			held[i] = lifo_pop(&lifo);
			if (held[i] == NULL)
				return (void *)1;
		}
	}
	return NULL;
}

/*
 * No element lost or duplicated: every pop finds an element (as many are
 * pushed as popped), and at the end the elements the threads hold are
 * every element exactly once, and the stack is empty.
 */
START_TEST(test_lifo_loses_and_duplicates_nothing)
{
	int nthreads = 1 << (_i + 1); /* 2, 4, 8 */
	long n = (long)nthreads * LIFO_OPS;
	struct lifo_elem *pool = calloc((size_t)n, sizeof(*pool));
	struct lifo_elem **held = calloc((size_t)n, sizeof(*held));
	char *seen = calloc((size_t)n, 1);
	pthread_t t[8];

	ck_assert_int_eq(tm_config_set("LTX_MODE", "visible"), 0);
	lifo.top = NULL;
	for (long i = 0; i < n; i++) {
		pool[i].d = i;
		held[i] = &pool[i];
	}
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, lifo_worker, held + i * LIFO_OPS);
	for (int i = 0; i < nthreads; i++) {
		void *r;

		pthread_join(t[i], &r);
		ck_assert_msg(r == NULL, "a pop found the stack empty");
	}
	ck_assert_ptr_null(lifo.top);
	for (long i = 0; i < n; i++) {
		long d = held[i]->d;

		ck_assert_msg(!seen[d], "element %ld held twice", d);
		seen[d] = 1;
	}
	free(pool);
	free(held);
	free(seen);
}
END_TEST

/* ---- Bank: transfers by LTX/ST, audits by LT in read-only
 * transactions that check the total before they commit. ---- */

#define ACCOUNTS 32
#define INITIAL	 1000

static struct bank bank;
static int transfers_per_thread = 2000;
static int stop;

static void *bank_worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;

	for (int i = 0; i < transfers_per_thread; i++) {
		int from = rand_r(&seed) % ACCOUNTS;
		int to = rand_r(&seed) % ACCOUNTS;
		long amount = rand_r(&seed) % 50;

		if (from == to)
			continue;
		bank_transfer(&bank, (unsigned)from, (unsigned)to,
			      (tm_word_t)amount, false);
	}
	return NULL;
}

/* Audits that VALIDATE true with a wrong total: must stay 0 (a live
 * transaction in the visible mode sees one consistent state). */
static void *auditor(void *arg)
{
	long *bad = arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		tm_word_t sum;

		if (bank_audit_read(&bank, &sum) && sum != bank_expected(&bank))
			(*bad)++;
		(void)COMMIT();
	}
	return NULL;
}

static void run_bank(int nthreads)
{
	pthread_t t[64], a;
	long bad = 0;

	ck_assert_int_eq(tm_config_set("LTX_MODE", "visible"), 0);
	bank_open(&bank, ACCOUNTS, INITIAL);
	stop = 0;
	pthread_create(&a, NULL, auditor, &bad);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, bank_worker,
			       (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(a, NULL);
	ck_assert_uint_eq(bank_total(&bank), (tm_word_t)ACCOUNTS * INITIAL);
	ck_assert_int_eq(bad, 0);
}

START_TEST(test_bank_total_is_conserved)
{
	run_bank(1 << (_i + 1)); /* 2, 4, 8 */
}
END_TEST

/* More threads than reader bytes: the unslotted counter takes over. */
START_TEST(test_bank_with_more_threads_than_reader_slots)
{
	transfers_per_thread = 100;
	run_bank(60);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("visible_stress");
	TCase *tc = tcase_create("stress");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_lifo_loses_and_duplicates_nothing, 0, 3);
	tcase_add_loop_test(tc, test_bank_total_is_conserved, 0, 3);
	tcase_add_test(tc, test_bank_with_more_threads_than_reader_slots);
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
