/* SPDX-License-Identifier: MIT */
/* -fgnu-tm test: a block malloc'd in a transaction, freed by another thread. */
#include <malloc.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include "itm-test.h"

/*
 * alloc_handoff [THREADS [ROUNDS]] (THREADS 1 or even; ROUNDS 500)
 *
 * Threads work in pairs, each pair around one shared slot.  The producer,
 * in each transaction, frees OLD blocks it allocated earlier, then
 * mallocs a new block, stamps it and publishes it in the slot.  The
 * consumer takes the block out of the slot in a transaction, checks the
 * stamp, frees it outside any transaction, then mallocs and frees a block
 * of the same size.  So the moment the producer's transaction commits,
 * its new block may be freed -- and its memory returned to the system:
 * blocks are above the mmap threshold, which is fixed (mallopt), so
 * every free unmaps one.  A runtime that touches a block after the
 * transaction that published it has committed faults here, or under ASan
 * reports a use after free: ltx's allocation log once asked
 * malloc_usable_size of every block it logged at the end of the commit,
 * the new one after the 64 frees (issue 18).  The old blocks are large
 * (64 KiB, from the heap), so that handing their frees to the grace
 * periods fills reclamation batches, which widens that window even on a
 * loaded machine.
 *
 * Invariants: every block arrives once, in order, with its stamp intact
 * and its tail pattern whole (the transaction's stores all reached it);
 * each pair hands over ROUNDS blocks.  With one thread, it plays both
 * roles in turn.
 */
#define OLD	       64
#define OLD_SIZE       (64 * 1024)
#define BLOCK_SIZE     (256 * 1024)
#define MMAP_THRESHOLD (128 * 1024)
#define MAGIC	       0x6c7478686e646f66ULL

struct block {
	uint64_t magic;
	long seq;
	unsigned char tail[56]; /* set in the transaction too */
};

struct pair {
	struct block *slot;
	long published;
	long taken;
	void *old[OLD];
	int nold;
	long bad;
} __attribute__((aligned(64)));

static struct pair pairs[32];
static long rounds = 500;

/* Fill the producer's stock of old blocks (outside transactions). */
static void restock(struct pair *p)
{
	while (p->nold < OLD) {
		p->old[p->nold] = malloc(OLD_SIZE);
		CHECK(p->old[p->nold] != NULL);
		p->nold++;
	}
}

/* One producer transaction; returns whether it published a block. */
static int produce(struct pair *p)
{
	int done = 0;

	restock(p);
	__transaction_atomic
	{
		for (int i = 0; i < OLD; i++)
			free(p->old[i]);
		p->nold = 0;
		if (p->slot == NULL) {
			struct block *b = malloc(BLOCK_SIZE);

			if (b != NULL) {
				b->magic = MAGIC;
				b->seq = p->published + 1;
				memset(b->tail, (int)(b->seq & 0xff),
				       sizeof(b->tail));
				p->slot = b;
				p->published++;
				done = 1;
			}
		}
	}
	return done;
}

/* One consumer step; returns whether it took a block. */
static int consume(struct pair *p)
{
	struct block *b;
	void *again;

	__transaction_atomic
	{
		b = p->slot;
		if (b != NULL)
			p->slot = NULL;
	}
	if (b == NULL)
		return 0;
	if (b->magic != MAGIC || b->seq != p->taken + 1)
		p->bad++;
	for (size_t i = 0; i < sizeof(b->tail); i++)
		if (b->tail[i] != (unsigned char)(b->seq & 0xff))
			p->bad++;
	p->taken++;
	free(b);
	again = malloc(BLOCK_SIZE);
	CHECK(again != NULL);
	memset(again, 0xa5, 64);
	free(again);
	return 1;
}

/*
 * Wait, outside transactions, until the slot is empty (want_empty) or
 * full: spinning first, so that the consumer frees a block as soon as
 * possible after the commit that published it (the window the bug needs),
 * then yielding, for a loaded machine.  The peek is only a hint: the
 * transactions decide.
 */
static void wait_slot(struct pair *p, int want_empty)
{
	for (unsigned spins = 0;; spins++) {
		void *b = __atomic_load_n(&p->slot, __ATOMIC_RELAXED);

		if ((b == NULL) == want_empty)
			return;
		if (spins >= 2000) {
			sched_yield();
			spins = 0;
		}
	}
}

static void *producer(void *arg)
{
	struct pair *p = &pairs[(long)arg / 2];

	while (p->published < rounds)
		if (!produce(p))
			wait_slot(p, 1);
	return NULL;
}

static void *consumer(void *arg)
{
	struct pair *p = &pairs[(long)arg / 2];

	while (p->taken < rounds)
		if (!consume(p))
			wait_slot(p, 0);
	return NULL;
}

static void *worker(void *arg)
{
	return ((long)arg & 1) ? consumer(arg) : producer(arg);
}

static void *alone(void *arg)
{
	struct pair *p = &pairs[0];

	while (p->taken < rounds) {
		if (p->published < rounds)
			(void)produce(p);
		(void)consume(p);
	}
	return arg;
}

int main(int argc, char **argv)
{
	int n = nthreads_arg(argc, argv);

	if (argc > 2)
		rounds = atol(argv[2]);
	CHECK(rounds > 0);
	CHECK(n == 1 || n % 2 == 0);
	/* A fixed threshold: glibc would otherwise raise it at the first
	 * free and serve later blocks from the heap.  A sanitizer's
	 * allocator refuses it, and reports any use after free itself. */
	if (mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) != 1)
		fprintf(stderr, "alloc_handoff: mallopt refused; relying on "
				"the allocator to catch a use after free\n");
	run_threads(n, n == 1 ? alone : worker);
	for (int i = 0; i < (n == 1 ? 1 : n / 2); i++) {
		struct pair *p = &pairs[i];

		CHECK(p->bad == 0);
		CHECK(p->published == rounds && p->taken == rounds);
		CHECK(p->slot == NULL);
		for (int k = 0; k < p->nold; k++)
			free(p->old[k]);
	}
	printf("alloc_handoff: %d threads: ok\n", n);
	return 0;
}
