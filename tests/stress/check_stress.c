/* SPDX-License-Identifier: MIT */
/* Stress invariants with more threads than cores: LIFO and bank. */
#include <ltx/tm.h>

#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bank.h"
#include "lifo.h"
#include "ltx-test.h"

/* The article's LIFO (Figure 8.4, common/lifo.h). */
static struct lifo lifo;

#define LIFO_OPS 20000

struct lifo_worker {
	pthread_t t;
	long id;
	struct lifo_elem *elems;
	unsigned char *seen;
	long nthreads;
};

static void *lifo_run(void *arg)
{
	struct lifo_worker *w = arg;

	for (long i = 0; i < LIFO_OPS; i++) {
		struct lifo_elem *e = &w->elems[i];

		e->d = w->id * LIFO_OPS + i;
		lifo_push(&lifo, e);
		/* Every other round pop two, so the stack grows and shrinks. */
		if (i % 2 == 1) {
			for (int k = 0; k < 2; k++) {
				e = lifo_pop(&lifo);
				ck_assert_ptr_nonnull(e);
				w->seen[e->d]++;
			}
		}
	}
	return NULL;
}

/* Every pushed element is popped exactly once: none lost, none twice. */
static void lifo_threads(long n)
{
	struct lifo_worker *w = calloc((size_t)n, sizeof(*w));
	unsigned char *total = calloc((size_t)(n * LIFO_OPS), 1);

	lifo.top = NULL;
	for (long i = 0; i < n; i++) {
		w[i].id = i;
		w[i].nthreads = n;
		w[i].elems = calloc(LIFO_OPS, sizeof(struct lifo_elem));
		w[i].seen = calloc((size_t)(n * LIFO_OPS), 1);
		pthread_create(&w[i].t, NULL, lifo_run, &w[i]);
	}
	for (long i = 0; i < n; i++)
		pthread_join(w[i].t, NULL);
	ck_assert_ptr_null(lifo.top);
	for (long i = 0; i < n; i++)
		for (long k = 0; k < n * LIFO_OPS; k++)
			total[k] += w[i].seen[k];
	for (long k = 0; k < n * LIFO_OPS; k++)
		ck_assert_msg(total[k] == 1, "element %ld popped %d times", k,
			      total[k]);
	for (long i = 0; i < n; i++) {
		free(w[i].elems);
		free(w[i].seen);
	}
	free(w);
	free(total);
}

START_TEST(test_lifo_pops_every_element_exactly_once)
{
	lifo_threads(_i);
}
END_TEST

/* Bank: transfers keep the total; read-only audits see it inside. */
#define ACCOUNTS   32
#define INITIAL	   1000
#define TRANSFERS  50000
#define MIN_AUDITS 8

static struct bank bank;
static int bank_done;
static long bad_audits, audits;

static void *bank_worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;

	/* At least TRANSFERS, and on until the auditor has seen the total
	 * a few times while transfers ran: on a loaded machine it may not
	 * be scheduled before TRANSFERS are done (a runtime that starves it
	 * makes the test time out). */
	for (long i = 0;
	     i < TRANSFERS ||
	     __atomic_load_n(&audits, __ATOMIC_RELAXED) < MIN_AUDITS;
	     i++) {
		int a = rand_r(&seed) % ACCOUNTS, b = rand_r(&seed) % ACCOUNTS;
		long amount = rand_r(&seed) % 50;

		if (a == b)
			continue;
		/* Half of the transfers read the second account shared
		 * first, then upgrade (LT then ST). */
		bank_transfer(&bank, (unsigned)a, (unsigned)b,
			      (tm_word_t)amount, i & 1);
	}
	return NULL;
}

static void *auditor(void *arg)
{
	while (!__atomic_load_n(&bank_done, __ATOMIC_RELAXED)) {
		tm_word_t sum;

		/* VALIDATE first: a doomed transaction's loads are garbage. */
		if (!bank_audit_read(&bank, &sum))
			continue;
		if (sum != bank_expected(&bank))
			__atomic_add_fetch(&bad_audits, 1, __ATOMIC_RELAXED);
		if (tm_commit())
			__atomic_add_fetch(&audits, 1, __ATOMIC_RELAXED);
	}
	return arg;
}

static void bank_threads(long n)
{
	pthread_t t[16], a;

	bank_open(&bank, ACCOUNTS, INITIAL);
	__atomic_store_n(&bank_done, 0, __ATOMIC_RELAXED);
	bad_audits = audits = 0;
	pthread_create(&a, NULL, auditor, NULL);
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, bank_worker, (void *)(i + 1));
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	__atomic_store_n(&bank_done, 1, __ATOMIC_RELAXED);
	pthread_join(a, NULL);
	ck_assert_uint_eq(bank_total(&bank), (tm_word_t)ACCOUNTS * INITIAL);
	ck_assert_int_eq(bad_audits, 0);
	ck_assert_int_ge(audits, MIN_AUDITS);
}

START_TEST(test_bank_conserves_money_and_audits_see_the_total)
{
	bank_threads(_i);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("stress");
	TCase *tc = tcase_create("invariants");

	tcase_set_timeout(tc, 120);
	/* 2, 4 and 8 threads on a 2-core machine: preemption inside
	 * transactions is part of the test. */
	tcase_add_loop_test(tc, test_lifo_pops_every_element_exactly_once, 2,
			    3);
	tcase_add_loop_test(tc, test_lifo_pops_every_element_exactly_once, 4,
			    5);
	tcase_add_loop_test(tc, test_lifo_pops_every_element_exactly_once, 8,
			    9);
	tcase_add_loop_test(
		tc, test_bank_conserves_money_and_audits_see_the_total, 2, 3);
	tcase_add_loop_test(
		tc, test_bank_conserves_money_and_audits_see_the_total, 4, 5);
	tcase_add_loop_test(
		tc, test_bank_conserves_money_and_audits_see_the_total, 8, 9);
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
