/* SPDX-License-Identifier: MIT */
/* libitm ABI: the TM clone tables (transaction_safe versions of functions). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "itm/itm.h"
#include "itm/libitm.h"
#include "rt/fence.h"
#include "rt/wait.h"
#include "tx/tx.h"

/*
 * Each executable and DSO built with -fgnu-tm has a .tm_clone_table of
 * {original, clone} pairs, which its crtbegin.o registers (possibly before
 * ltx's own constructors run: everything here is statically initialized)
 * and deregisters at exit or dlclose.  An indirect call in a transaction
 * asks for the clone of its target (_ITM_getTMCloneSafe), often once per
 * node a search visits (a comparator called through a pointer), so a
 * lookup must cost next to nothing and take no lock.
 *
 * Lookups go, in order, to
 *   - the descriptor's cache (struct ltx_itm_clones in itm.h): a small
 *     direct-mapped table of recent answers, valid while its gen equals
 *     the global one; a hit is a handful of instructions;
 *   - the index: every registered pair, copied into one array sorted by
 *     original, binary-searched without a lock; the answer goes into the
 *     cache.
 * The tables change only when a library comes or goes.  The writer (under
 * table_lock, which lookups never take) builds a new index, publishes it
 * by a pointer swap, bumps gen, and frees the old index once no lookup
 * can still be reading it.
 *
 * Synchronization: read-copy-update with per-reader flags, as liburcu's
 * membarrier flavour (Desnoyers et al., "User-Level Implementations of
 * Read-Copy Update", IEEE TPDS 23(2), 2012, section 3.2):
 *   reader: busy++ ; compiler fence ; load index ... ; busy-- (release)
 *   writer: store index (release) ; gen++ (release) ; ltx_fence_heavy() ;
 *           wait until busy == 0 for every descriptor ; free old index
 * The heavy fence pairs with the reader's compiler fence (rt/fence.h):
 * either the writer's scan sees busy != 0 and waits, or the reader's load
 * of index comes after the fence and sees the new one.  busy counts, so
 * that a signal handler's lookup nested in the thread's own is harmless;
 * a handler's transactions run on their own descriptor (tx/signal.c), so
 * no two contexts ever fill one cache.  A reader loads gen before index
 * (both acquire; the writer stores index before gen, both release), so
 * the entries it tags with gen g come from g's index or a newer one; a
 * cache whose gen is not the current one is flushed at its next miss.
 */
struct clone_pair {
	void *orig;
	void *clone;
};

struct clone_index {
	size_t n;
	struct clone_pair pairs[];
};

/* A registered table, as crtbegin.o passed it. */
struct clone_table {
	const struct clone_pair *pairs;
	size_t n;
	struct clone_table *next;
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct clone_table *tables; /* guarded by table_lock */

/* What every lookup reads, on a line of its own (written only when a
 * library comes or goes). */
static struct {
	uint64_t gen; /* caches start at 0: their first lookup misses */
	struct clone_index *index;
	char pad[LTX_LINE_SIZE - sizeof(uint64_t) - sizeof(void *)];
} published __attribute__((aligned(LTX_LINE_SIZE))) = { 1, NULL, { 0 } };

static int by_orig(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct clone_pair *)a)->orig;
	uintptr_t y = (uintptr_t)((const struct clone_pair *)b)->orig;

	return x < y ? -1 : x > y;
}

static void *search(const struct clone_index *idx, void *fn)
{
	size_t lo = 0, hi;

	if (idx == NULL)
		return NULL;
	hi = idx->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uintptr_t o = (uintptr_t)idx->pairs[mid].orig;

		if (o == (uintptr_t)fn)
			return idx->pairs[mid].clone;
		if (o < (uintptr_t)fn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static inline struct ltx_itm_clone_entry *entry_of(struct ltx_itm_clones *c,
						   void *fn)
{
	return &c->e[((uintptr_t)fn >> 4) & (LTX_ITM_CLONE_CACHE - 1)];
}

/* The cached clone of fn, or NULL. */
static inline void *cached(void *fn)
{
	struct ltx_itm_thread *t = ltx_self->frontend;
	const struct ltx_itm_clone_entry *e;

	if (ltx_unlikely(t == NULL))
		return NULL;
	e = entry_of(&t->clones, fn);
	if (ltx_unlikely(e->orig != fn ||
			 t->clones.gen != __atomic_load_n(&published.gen,
							  __ATOMIC_ACQUIRE)))
		return NULL;
	return e->clone;
}

/* Search the index without a lock, and remember the answer. */
static __attribute__((noinline)) void *lookup(void *fn)
{
	struct ltx_itm_thread *t = ltx_itm_thread_get();
	struct ltx_itm_clones *c = &t->clones;
	uint64_t g;
	void *clone;

	__atomic_store_n(&c->busy,
			 __atomic_load_n(&c->busy, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* see Synchronization */
	g = __atomic_load_n(&published.gen, __ATOMIC_ACQUIRE);
	clone = search(__atomic_load_n(&published.index, __ATOMIC_ACQUIRE), fn);
	/* Release: the index is no longer read once the writer sees 0. */
	__atomic_store_n(&c->busy,
			 __atomic_load_n(&c->busy, __ATOMIC_RELAXED) - 1,
			 __ATOMIC_RELEASE);
	if (c->gen != g) {
		memset(c->e, 0, sizeof(c->e));
		c->gen = g;
	}
	if (clone != NULL) {
		struct ltx_itm_clone_entry *e = entry_of(c, fn);

		e->orig = fn;
		e->clone = clone;
	}
	return clone;
}

static inline void *find_clone(void *fn)
{
	void *clone = cached(fn);

	return ltx_likely(clone != NULL) ? clone : lookup(fn);
}

/* Wait until no lookup reads an index older than the one just published
 * (writer side of Synchronization); table_lock held. */
static void wait_for_readers(void)
{
	ltx_fence_heavy();
	for (struct ltx_tx *d = ltx_tx_registry(); d != NULL; d = d->next_all) {
		struct ltx_itm_thread *t =
			__atomic_load_n(&d->frontend, __ATOMIC_ACQUIRE);
		unsigned spins = 0;

		if (t == NULL)
			continue;
		while (__atomic_load_n(&t->clones.busy, __ATOMIC_ACQUIRE) != 0)
			ltx_wait_step(&spins);
	}
}

/* Build the index of every registered table and publish it; table_lock
 * held. */
static void publish(void)
{
	struct clone_index *idx, *old = published.index;
	size_t n = 0;

	for (const struct clone_table *t = tables; t != NULL; t = t->next)
		n += t->n;
	idx = malloc(sizeof(*idx) + n * sizeof(idx->pairs[0]));
	if (idx == NULL)
		ltx_itm_fatal("no memory for the TM clone tables");
	idx->n = 0;
	for (const struct clone_table *t = tables; t != NULL; t = t->next) {
		memcpy(idx->pairs + idx->n, t->pairs,
		       t->n * sizeof(t->pairs[0]));
		idx->n += t->n;
	}
	qsort(idx->pairs, idx->n, sizeof(idx->pairs[0]), by_orig);
	/* Release: pairs with the readers' acquire loads of index and gen;
	 * the index is complete before either is seen. */
	__atomic_store_n(&published.index, idx, __ATOMIC_RELEASE);
	__atomic_store_n(&published.gen, published.gen + 1, __ATOMIC_RELEASE);
	if (old != NULL) {
		wait_for_readers();
		free(old);
	}
}

#pragma GCC visibility push(default)

void _ITM_registerTMCloneTable(void *table, size_t npairs)
{
	struct clone_table *t = malloc(sizeof(*t));

	if (t == NULL)
		ltx_itm_fatal("no memory to register a TM clone table");
	t->pairs = table;
	t->n = npairs;
	pthread_mutex_lock(&table_lock);
	t->next = tables;
	tables = t;
	publish();
	pthread_mutex_unlock(&table_lock);
}

void _ITM_deregisterTMCloneTable(void *table)
{
	struct clone_table **pp, *gone = NULL;

	pthread_mutex_lock(&table_lock);
	for (pp = &tables; *pp != NULL; pp = &(*pp)->next)
		if ((*pp)->pairs == table) {
			gone = *pp;
			*pp = gone->next;
			break;
		}
	if (gone != NULL)
		publish();
	pthread_mutex_unlock(&table_lock);
	free(gone);
}

void *_ITM_getTMCloneOrIrrevocable(void *fn)
{
	void *clone = find_clone(fn);
	struct ltx_itm_thread *t;

	if (clone != NULL)
		return clone;
	/* No safe version: the original may do anything, so run it alone
	 * and never roll back. */
	t = ltx_itm_state();
	if (t != NULL && t->depth != 0)
		ltx_itm_go_irrevocable(t);
	return fn;
}

void *_ITM_getTMCloneSafe(void *fn)
{
	void *clone = find_clone(fn);

	if (ltx_unlikely(clone == NULL))
		ltx_itm_fatal("indirect call in a transaction to a function "
			      "that is not transaction_safe");
	return clone;
}

#pragma GCC visibility pop
