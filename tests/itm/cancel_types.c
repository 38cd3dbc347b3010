/* SPDX-License-Identifier: MIT */
/* -fgnu-tm test: a cancel undoes x += k of every scalar type (RfW, WaW). */
#include <complex.h>
#include <string.h>

#include "itm-test.h"

#define ITERS 3000

/*
 * Each thread adds k to a variable of every scalar type GCC has a barrier
 * for (1 to 8-byte integers, float, double, long double and their complex
 * forms, a 16-byte vector), and a __transaction_cancel, one transaction
 * in three, must undo it: for a global, x += k compiles to a
 * read-for-write and a write-after-write (_ITM_RfWU1 ... _ITM_WaWE).  After
 * each transaction every field must equal a plain model's.  ltx only: GCC 12's
 * libitm keeps the cancelled additions in its serial mode, its default
 * for a lone thread (memops_model.c says why).
 */
typedef float v4f __attribute__((vector_size(16)));

struct all {
	unsigned char u1;
	unsigned short u2;
	unsigned int u4;
	unsigned long u8;
	float f;
	double d;
	long double e;
	float complex cf;
	double complex cd;
	long double complex ce;
	v4f m128;
} __attribute__((aligned(64)));

/* Thread 0's variables are one global, which GCC reads for write and
 * writes after write (_ITM_RfW*, _ITM_WaW*); the others' are indexed,
 * which it reads and writes plainly (_ITM_R*, _ITM_W*). */
static struct all first, vars[64];

#define ADD_ALL(s, k)                                                          \
	do {                                                                   \
		(s).u1 += (k);                                                 \
		(s).u2 += (k);                                                 \
		(s).u4 += (k);                                                 \
		(s).u8 += (k);                                                 \
		(s).f += (k);                                                  \
		(s).d += (k);                                                  \
		(s).e += (k);                                                  \
		(s).cf += (k);                                                 \
		(s).cd += (k);                                                 \
		(s).ce += (k);                                                 \
		(s).m128 += (float)(k);                                        \
	} while (0)

/* The same additions, plainly. */
static void add_plain(struct all *s, int k)
{
	ADD_ALL(*s, k);
}

static int same(const struct all *a, const struct all *b)
{
	return a->u1 == b->u1 && a->u2 == b->u2 && a->u4 == b->u4 &&
	       a->u8 == b->u8 && a->f == b->f && a->d == b->d && a->e == b->e &&
	       a->cf == b->cf && a->cd == b->cd && a->ce == b->ce &&
	       memcmp(&a->m128, &b->m128, 16) == 0;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	const struct all *g = id == 0 ? &first : &vars[id];
	struct all model;

	memset(&model, 0, sizeof(model));
	for (int i = 1; i <= ITERS; i++) {
		int cancel = i % 3 == 0, k = i % 5 + 1;

		if (id == 0) {
			__transaction_atomic
			{
				ADD_ALL(first, k);
				if (cancel)
					__transaction_cancel;
			}
		} else {
			__transaction_atomic
			{
				ADD_ALL(vars[id], k);
				if (cancel)
					__transaction_cancel;
			}
		}
		if (!cancel)
			add_plain(&model, k);
		CHECK(same(g, &model));
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = nthreads_arg(argc, argv);

	run_threads(n, worker);
	printf("cancel_types: %d threads: ok\n", n);
	return 0;
}
