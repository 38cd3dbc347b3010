/* SPDX-License-Identifier: MIT */
/* Transactional allocation: tm_malloc/tm_free and deferred reclamation. */
#include <ltx/tm.h>

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cd/cd.h"
#include "rt/alloc.h"
#include "rt/array.h"
#include "rt/config.h"
#include "rt/fence.h"
#include "rt/wait.h"
#include "tx/fast.h"
#include "tx/mem.h"
#include "tx/tx.h"

/*
 * The problem (the article, after Figure 8.3): a thread pops and frees an
 * element while another, whose transaction is doomed, still dereferences
 * it.  ltx makes the fix cheap as follows.
 *
 * 1. tm_free in a transaction takes every line of the block in E, as a
 *    store would, and marks it LTX_WENTRY_BUMP so that at commit each of
 *    its orecs gets the commit version even though no byte is stored
 *    (cd/invisible.c, released_version).  The free is thus a transactional
 *    write of the whole block: it conflicts with any transaction holding a
 *    line of it, and after the commit any transaction with an older
 *    snapshot that touches the block is doomed by the new version before
 *    it loads a byte of it, so no transaction commits having used a freed
 *    block.  The block is handed to reclamation by a commit action
 *    (ltx_tx_add_action); an abort forgets the free.
 *
 * 2. What the versions cannot cover: a transaction that checked a line's
 *    orec before the bump and loads the memory later, and code that reads
 *    through a pointer obtained in a transaction before it validates (the
 *    article's pop reads res->c plainly).  Both run inside a transaction
 *    that was already running when the free committed.  So a freed block
 *    is released only when every transaction that was running at that
 *    moment has ended: a grace period, per batch of blocks.
 *
 * Grace periods without a fence on the begin path.  Each descriptor
 * counts its transactions in tx_id and shows whether one is running in
 * status.  A thread's freed blocks gather in a batch, sealed at 256
 * blocks or 256 KiB, after every free in it committed.  For sealed
 * batches the thread runs the heavy side of an asymmetric fence
 * (membarrier, rt/fence.h), then records, for every other descriptor in
 * a transaction, its tx_id.  A batch may be released when each recorded
 * descriptor is idle or has a new tx_id.  One fence serves every batch
 * sealed since the last: it is run once FENCE_GROUP batches wait for
 * it, or reclamation has been tried FENCE_AGE times since the last
 * fence, or sooner when memory is short (the limit, tm_mem_flush, thread
 * exit) or the thread is the only one (its fence interrupts nobody).  A
 * fence later than the seal is as good as one at it: the transactions
 * that were running at the frees and still are at the fence are
 * recorded, those that ended are over, and those that begin after the
 * fence see the frees.
 *
 * Synchronization (Dekker through membarrier): a beginning transaction
 * stores tx_id, then status ACTIVE (release), then (compiler barrier
 * only) loads orecs and data.  The freer stores the bumped versions
 * (commit), runs the heavy fence, then loads status (acquire) and tx_id.
 * Either the reader's status store is visible to the scan, and the reader
 * is waited for, or its loads come after the fence and see the bumped
 * versions and the committed unlink, and it never reaches the block.  For
 * this the invisible mode's first load re-reads its orec after the status
 * store (cd/invisible.h).  The release stores of status (idle) and tx_id
 * pair with the acquire loads of the expiry check: once the check sees a
 * descriptor idle or on a later transaction, the loads of the transaction
 * it waited for are over.
 *
 * Only transactions count, not threads: a thread outside a transaction,
 * stalled or not, delays nothing, and no thread ever waits for another
 * (reclamation is tried when a batch is sealed, by tm_mem_flush, and
 * every RECLAIM_EVERY allocations while batches are pending).  A thread
 * stalled inside a transaction keeps the batches sealed during it; they
 * stay pending (reported in the statistics, and counted in
 * limit_exceeded when they exceed LTX_MEM_LIMIT) and are released when it
 * moves on.  A thread that exits leaves its pending batches to the
 * others (an orphan list that the next reclaiming thread adopts).
 *
 * Visible mode (strict two-phase locking, TLRW style): the same E
 * acquisition of every line makes the free wait for no reader, because a
 * reader announces S before it loads and a requester loses: while the
 * freer holds E no reader can load the block, and a reader that holds S
 * on the line it got the pointer from made the unlinking E fail.  After
 * the commit no transaction can be reading the block, and doomed readers
 * load nothing, so the block could be released at commit.  It still goes
 * through the grace period here (correct in every mode) until the visible
 * mode is tested with it.
 */

/* 256: each fence is a membarrier, an IPI to every CPU running the
 * process; with a fence per batch of 64, intset-rbtree under -fgnu-tm
 * lost 12% at 2 threads to it.  Four batches share a fence (at most 1
 * MiB waits for it, per thread): vacation under -fgnu-tm at 2 threads
 * spent ~4% of its time in the fences when each batch had its own.
 * FENCE_AGE reclamation tries (a seal or RECLAIM_EVERY allocations each)
 * bound how long a batch waits for its fence when frees are few. */
#define BATCH_BLOCKS  256
#define BATCH_BYTES   ((size_t)256 << 10)
#define RECLAIM_EVERY 256
#define FENCE_GROUP   4
#define FENCE_AGE     8

struct block {
	void *p;
	size_t size; /* usable size, for sdallocx (foreign: for release) */
	/* NULL: a block of ltx's allocator; else how to release a foreign
	 * one (ltx_mem_defer_foreign) */
	void (*release)(void *p, size_t size);
};

/* A transaction that may still read the blocks of a batch. */
struct waiter {
	const struct ltx_tx *tx;
	uint64_t tx_id;
};

struct batch {
	struct batch *next;
	unsigned n;	     /* blocks */
	unsigned check;	     /* n at which to look at sealing (open) */
	unsigned nwait;	     /* waiters still running */
	bool fenced;	     /* sealed, and its waiters recorded */
	size_t bytes;	     /* sum of the blocks' sizes */
	struct waiter *wait; /* malloc'd; NULL if none */
	struct block blocks[BATCH_BLOCKS];
};

/* A block allocated or freed by the running transaction: always one of
 * ltx's allocator. */
struct entry {
	void *p;
	size_t size; /* asked for or usable (sdallocx takes either); 0: look
		      * it up (an aligned block) */
};

/* The blocks allocated or freed by the running transaction. */
struct log {
	struct entry *b;
	size_t n, cap;
};

struct ltx_mem_thread {
	struct log allocs, frees;
	/* allocs.cap and frees.cap with the jemalloc backend, 0 with libc:
	 * the fast paths' bounds (one compare for room and backend). */
	size_t allocs_fast, frees_fast;
	struct batch *open;  /* filling: frees committed, not yet sealed */
	struct batch *first; /* sealed, waiting for their grace period */
	/* batches in first not fenced yet, and reclamation tries since
	 * the last fence */
	unsigned unfenced, since_fence;
	bool sealed_since; /* a batch was sealed since the last
			    * allocations' try (reclaim) */
	/* allocations since the last reclaim (counted while first != NULL:
	 * a transaction's at its end, others as they are made) */
	unsigned since_reclaim;
};

/*
 * Process-wide.  Synchronization: orphans is a stack of batch chains,
 * pushed with a release CAS and taken whole with an acquire exchange
 * (pairs with the push: the batches' contents are visible).  The counters
 * are relaxed: figures only, and the limit check tolerates a stale value.
 */
static struct batch *orphans;
static uint64_t orphan_bytes, orphan_blocks;
static uint64_t sealed_bytes, peak_sealed_bytes, limit_exceeded;

#ifdef LTX_DEBUG
/*
 * Debug builds: the set of live blocks, so that tm_free of a pointer that
 * did not come from tm_malloc, or of a block already freed, is reported
 * (jemalloc gives no safe way to tell: sallocx of a foreign pointer is
 * undefined).  A mutex-guarded chained hash table: debug builds only.
 */
struct live_block {
	struct live_block *next;
	void *p;
};

#define LIVE_BUCKETS 4096
static struct live_block *live_table[LIVE_BUCKETS];
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t live_bucket(const void *p)
{
	return (size_t)(((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ull >> 52) %
	       LIVE_BUCKETS;
}

static void live_add(void *p)
{
	struct live_block *l = malloc(sizeof(*l));

	if (l == NULL)
		return; /* untracked: tm_free will not be checked */
	l->p = p;
	pthread_mutex_lock(&live_lock);
	l->next = live_table[live_bucket(p)];
	live_table[live_bucket(p)] = l;
	pthread_mutex_unlock(&live_lock);
}

static bool live_remove(void *p)
{
	struct live_block **pp, *l = NULL;

	pthread_mutex_lock(&live_lock);
	for (pp = &live_table[live_bucket(p)]; *pp != NULL; pp = &(*pp)->next) {
		if ((*pp)->p == p) {
			l = *pp;
			*pp = l->next;
			break;
		}
	}
	pthread_mutex_unlock(&live_lock);
	free(l);
	return l != NULL;
}

static bool live_contains(void *p)
{
	struct live_block *l;

	pthread_mutex_lock(&live_lock);
	for (l = live_table[live_bucket(p)]; l != NULL; l = l->next)
		if (l->p == p)
			break;
	pthread_mutex_unlock(&live_lock);
	return l != NULL;
}

static void report_bad_free(void *p)
{
	fprintf(stderr,
		"ltx: tm_free(%p): not a live block from tm_malloc, "
		"tm_calloc or tm_aligned_alloc (freed twice, or foreign)\n",
		p);
	abort();
}

static void check_and_forget(void *p)
{
	if (!live_remove(p))
		report_bad_free(p);
}
#else
static void live_add(void *p)
{
	(void)p;
}

static bool live_contains(void *p)
{
	(void)p;
	return true;
}

static void report_bad_free(void *p)
{
	(void)p;
}

static void check_and_forget(void *p)
{
	(void)p;
}
#endif

/* tx's memory state, made on first use, or NULL. */
static struct ltx_mem_thread *mem_of(struct ltx_tx *tx)
{
	struct ltx_mem_thread *m = tx->mem;

	if (m == NULL) {
		m = calloc(1, sizeof(*m));
		if (m == NULL)
			return NULL;
		tx->mem = m;
	}
	return m;
}

/* The calling thread's descriptor and memory state, or NULL (ENOMEM). */
static struct ltx_mem_thread *thread_state(struct ltx_tx **txp)
{
	struct ltx_tx *tx;
	struct ltx_mem_thread *m;

	if (ltx_alloc_init() != 0)
		return NULL;
	tx = ltx_tx_self();
	if (tx == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	*txp = tx;
	m = mem_of(tx);
	if (m == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

static inline bool log_push(struct log *l, void *p, size_t size)
{
	if (ltx_unlikely(l->n == l->cap) &&
	    !LTX_ARRAY_RESERVE(&l->b, &l->cap, l->n, l->n + 1, 16))
		return false;
	l->b[l->n++] = (struct entry){ .p = p, .size = size };
	return true;
}

/* Set the fast paths' bounds after a log may have grown. */
static void fast_bounds(struct ltx_mem_thread *m)
{
	bool fast = ltx_alloc_backend == LTX_ALLOC_JEMALLOC;

	m->allocs_fast = fast ? m->allocs.cap : 0;
	m->frees_fast = fast ? m->frees.cap : 0;
}

/* Forget the log; under AddressSanitizer, leaving no copy of its
 * pointers (LeakSanitizer would count a released block as reachable). */
static void log_clear(struct log *l)
{
#if defined(__SANITIZE_ADDRESS__)
	if (l->n != 0)
		memset(l->b, 0, l->n * sizeof(*l->b));
#endif
	l->n = 0;
}

static void release_blocks(struct ltx_tx *tx, struct ltx_mem_thread *m,
			   const struct block *b, size_t n)
{
	/* The backend is fixed: asked once per batch, not per block. */
	if (ltx_likely(ltx_alloc_backend == LTX_ALLOC_JEMALLOC)) {
		for (size_t i = 0; i < n; i++) {
			if (ltx_unlikely(b[i].release != NULL))
				b[i].release(b[i].p, b[i].size);
			else
				ltx_je_sdallocx(b[i].p, b[i].size, 0);
		}
	} else {
		for (size_t i = 0; i < n; i++) {
			if (b[i].release != NULL)
				b[i].release(b[i].p, b[i].size);
			else
				ltx_alloc_free_slow(b[i].p, b[i].size);
		}
	}
	tx->stats.mem_freed_blocks += n;
}

/* Has every transaction that might read the batch's blocks ended? */
static bool expired(struct batch *b)
{
	unsigned i = 0;

	if (!b->fenced)
		return false;
	while (i < b->nwait) {
		const struct ltx_tx *d = b->wait[i].tx;

		/* Acquire: pairs with the release stores of tx_id and status
		 * at begin and end (tx/tx.c, cd/invisible.h). */
		if (__atomic_load_n(&d->tx_id, __ATOMIC_ACQUIRE) !=
			    b->wait[i].tx_id ||
		    ltx_status_idle(
			    __atomic_load_n(&d->status, __ATOMIC_ACQUIRE)))
			b->wait[i] = b->wait[--b->nwait];
		else
			return false;
	}
	return true;
}

static void release_batch(struct ltx_tx *tx, struct ltx_mem_thread *m,
			  struct batch *b)
{
	release_blocks(tx, m, b->blocks, b->n);
	tx->stats.mem_pending_bytes -= b->bytes;
	tx->stats.mem_pending_blocks -= b->n;
	__atomic_sub_fetch(&sealed_bytes, b->bytes, __ATOMIC_RELAXED);
	free(b->wait);
	free(b);
}

/* Take the batches exited threads left; they become ours. */
static void adopt_orphans(struct ltx_tx *tx, struct ltx_mem_thread *m)
{
	struct batch *b, *last;

	if (__atomic_load_n(&orphans, __ATOMIC_RELAXED) == NULL)
		return;
	/* Acquire: pairs with the release CAS in ltx_mem_thread_exit. */
	b = __atomic_exchange_n(&orphans, NULL, __ATOMIC_ACQUIRE);
	if (b == NULL)
		return;
	for (last = b;; last = last->next) {
		tx->stats.mem_pending_bytes += last->bytes;
		tx->stats.mem_pending_blocks += last->n;
		__atomic_sub_fetch(&orphan_bytes, last->bytes,
				   __ATOMIC_RELAXED);
		__atomic_sub_fetch(&orphan_blocks, last->n, __ATOMIC_RELAXED);
		/* (Its thread fenced them, unless memory was short.) */
		if (!last->fenced)
			m->unfenced++;
		if (last->next == NULL)
			break;
	}
	last->next = m->first;
	m->first = b;
}

/*
 * The heavy fence for the sealed batches not fenced yet (see the top of
 * the file), then the record of the transactions running now: every such
 * batch waits for them.  Without memory for a record, a batch stays
 * unfenced, and is fenced by a later call.
 */
static void fence_sealed(struct ltx_tx *tx, struct ltx_mem_thread *m)
{
	struct ltx_tx *head, *d;
	struct waiter *w, *copy;
	struct batch *b;
	unsigned n = 0, nw = 0;
	bool taken = false;

	if (m->unfenced == 0)
		return;
	m->since_fence = 0;
	ltx_fence_heavy();
	head = ltx_tx_registry();
	for (d = head; d != NULL; d = d->next_all)
		n++;
	w = malloc(n * sizeof(*w)); /* n >= 1: tx is in the registry */
	if (w == NULL)
		return;
	for (d = head; d != NULL; d = d->next_all) {
		if (d == tx)
			continue;
		/* Acquire: pairs with the release store of status at begin,
		 * made after the new tx_id was stored. */
		if (ltx_status_idle(
			    __atomic_load_n(&d->status, __ATOMIC_ACQUIRE)))
			continue;
		w[nw++] =
			(struct waiter){ d, __atomic_load_n(&d->tx_id,
							    __ATOMIC_RELAXED) };
	}
	for (b = m->first; b != NULL && m->unfenced != 0; b = b->next) {
		if (b->fenced)
			continue;
		/* The first batch takes w, the others a copy of it. */
		copy = w;
		if (taken) {
			copy = malloc((nw != 0 ? nw : 1) * sizeof(*copy));
			if (copy == NULL)
				continue;
			memcpy(copy, w, nw * sizeof(*copy));
		}
		taken = true;
		b->wait = copy;
		b->nwait = nw;
		b->fenced = true;
		m->unfenced--;
	}
	if (!taken)
		free(w);
}

/*
 * How many ready batches reclaim releases: all of them (tm_mem_flush,
 * thread exit, over the limit), or a steady flow.  A fence ends the grace
 * period of up to FENCE_GROUP batches at once; released together, their
 * blocks would overflow the allocator's thread cache (LTX_ALLOC in
 * tm_malloc(3): 512 blocks of a size), and with nothing released until
 * the next fence, the allocations meanwhile would refill it from the
 * arena.  So a seal releases one ready batch, as many as it seals, and
 * the tries made every RECLAIM_EVERY allocations release one only when no
 * batch was sealed since the last (the thread no longer frees); more only
 * when over FENCE_GROUP - 1 would wait.
 */
enum reclaim_pace { RECLAIM_ALL, RECLAIM_SEAL, RECLAIM_ALLOC };

/* Release ready sealed batches (see reclaim_pace), fencing those that
 * waited FENCE_AGE tries for their fence first. */
static void reclaim(struct ltx_tx *tx, struct ltx_mem_thread *m,
		    enum reclaim_pace pace)
{
	struct batch **pp, *b;
	unsigned ready = 0, release;

	adopt_orphans(tx, m);
	if (m->unfenced != 0 && ++m->since_fence >= FENCE_AGE)
		fence_sealed(tx, m);
	for (b = m->first; b != NULL; b = b->next)
		ready += expired(b);
	release = ready >= FENCE_GROUP ? ready - (FENCE_GROUP - 1) : 0;
	if (pace == RECLAIM_ALL)
		release = ready;
	else if (release == 0 && ready != 0 &&
		 (pace == RECLAIM_SEAL || !m->sealed_since))
		release = 1;
	if (pace == RECLAIM_ALLOC)
		m->sealed_since = false;
	for (pp = &m->first; (b = *pp) != NULL && release != 0;) {
		if (expired(b)) {
			*pp = b->next;
			release_batch(tx, m, b);
			release--;
		} else {
			pp = &b->next;
		}
	}
	m->since_reclaim = 0;
}

/*
 * Seal the open batch: it waits for its fence (fence_sealed, run now if
 * FENCE_GROUP batches wait or the pending bytes exceed the limit), then
 * for the transactions the fence records.  Then try to release what can
 * be.
 */
static void seal(struct ltx_tx *tx, struct ltx_mem_thread *m)
{
	struct batch *b = m->open;
	uint64_t now, peak;
	bool over;

	if (b == NULL || b->n == 0)
		return;
	m->open = NULL;
	b->fenced = false;
	b->nwait = 0;
	b->wait = NULL;
	b->next = m->first;
	m->first = b;
	m->unfenced++;
	m->sealed_since = true;
	now = __atomic_add_fetch(&sealed_bytes, b->bytes, __ATOMIC_RELAXED);
	peak = __atomic_load_n(&peak_sealed_bytes, __ATOMIC_RELAXED);
	while (now > peak && !__atomic_compare_exchange_n(
				     &peak_sealed_bytes, &peak, now, true,
				     __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	over = now > __atomic_load_n(&ltx_config.mem_limit, __ATOMIC_RELAXED);
	/* Alone (a hint: it only picks when), the fence interrupts no
	 * other thread: run it now, and the blocks go back at once. */
	if (m->unfenced >= FENCE_GROUP || over || ltx_tx_alone_hint())
		fence_sealed(tx, m);
	reclaim(tx, m, over ? RECLAIM_ALL : RECLAIM_SEAL);
	if (__atomic_load_n(&sealed_bytes, __ATOMIC_RELAXED) >
	    __atomic_load_n(&ltx_config.mem_limit, __ATOMIC_RELAXED))
		__atomic_add_fetch(&limit_exceeded, 1, __ATOMIC_RELAXED);
}

/*
 * Wait until every transaction running now has ended: the grace period of
 * one block, waited for in place (when there is no memory to track it).
 */
static void quiesce(struct ltx_tx *tx)
{
	ltx_fence_heavy();
	for (struct ltx_tx *d = ltx_tx_registry(); d != NULL; d = d->next_all) {
		/* Acquire: as in expired(). */
		uint64_t id = __atomic_load_n(&d->tx_id, __ATOMIC_ACQUIRE);
		unsigned spins = 0;

		if (d == tx)
			continue;
		while (!ltx_status_idle(
			       __atomic_load_n(&d->status, __ATOMIC_ACQUIRE)) &&
		       __atomic_load_n(&d->tx_id, __ATOMIC_ACQUIRE) == id)
			ltx_wait_step(&spins);
	}
}

/* Release a block of ltx's allocator or a foreign one. */
static void release_now(struct ltx_mem_thread *m, void *p, size_t size,
			void (*release)(void *, size_t))
{
	if (release != NULL)
		release(p, size);
	else
		ltx_alloc_free(p, size);
}

/*
 * Blocks were added to the open batch b: seal it when it is full or holds
 * BATCH_BYTES, or when the pending bytes exceed the limit (looked at
 * every BATCH_BLOCKS / 8 blocks: above the limit, batches are sealed,
 * and reclamation tried, 8 times as often).  b->check is the next count
 * to look at, so that the common case is two compares.
 */
static __attribute__((noinline)) void
seal_due(struct ltx_tx *tx, struct ltx_mem_thread *m, struct batch *b)
{
	if (b->n >= BATCH_BLOCKS || b->bytes >= BATCH_BYTES ||
	    __atomic_load_n(&sealed_bytes, __ATOMIC_RELAXED) + b->bytes >
		    __atomic_load_n(&ltx_config.mem_limit, __ATOMIC_RELAXED)) {
		seal(tx, m);
		return;
	}
	b->check = (b->n / (BATCH_BLOCKS / 8) + 1) * (BATCH_BLOCKS / 8);
}

static inline void maybe_seal(struct ltx_tx *tx, struct ltx_mem_thread *m,
			      struct batch *b)
{
	if (ltx_unlikely(b->n >= b->check) ||
	    ltx_unlikely(b->bytes >= BATCH_BYTES))
		seal_due(tx, m, b);
}

/* A new open batch, or NULL (no memory). */
static struct batch *open_batch(struct ltx_mem_thread *m)
{
	struct batch *b = malloc(sizeof(*b));

	if (b == NULL)
		return NULL;
	b->n = 0;
	b->check = BATCH_BLOCKS / 8;
	b->bytes = 0;
	b->nwait = 0;
	b->fenced = false;
	b->wait = NULL;
	m->open = b;
	return b;
}

/*
 * A committed free: the block joins the open batch.  Returns false,
 * doing nothing, if there is no memory for a batch.
 */
static bool defer(struct ltx_tx *tx, struct ltx_mem_thread *m, void *p,
		  size_t size, void (*release)(void *, size_t))
{
	struct batch *b = m->open;

	/* (A batch is sealed as soon as it is full: maybe_seal.) */
	if (b == NULL) {
		b = open_batch(m);
		if (b == NULL)
			return false;
	}
	b->blocks[b->n++] = (struct block){ p, size, release };
	b->bytes += size;
	tx->stats.mem_pending_bytes += size;
	tx->stats.mem_pending_blocks++;
	maybe_seal(tx, m, b);
	return true;
}

/* Free p after the grace period, or (no memory to track it) wait for the
 * grace period here and release it now. */
static void free_after_grace(struct ltx_tx *tx, struct ltx_mem_thread *m,
			     void *p, size_t size,
			     void (*release)(void *, size_t))
{
	if (m != NULL && defer(tx, m, p, size, release))
		return;
	quiesce(tx);
	release_now(m, p, size, release);
	tx->stats.mem_freed_blocks++;
}

/*
 * The committed frees of a transaction, one at a time: free_after_grace
 * for each (debug builds check each block here).
 */
static __attribute__((noinline)) void committed_frees(struct ltx_tx *tx,
						      struct ltx_mem_thread *m)
{
	for (size_t i = 0; i < m->frees.n; i++) {
		/* Debug builds: the block stops being live only now that its
		 * free has committed (a block freed twice by this
		 * transaction is reported here). */
		check_and_forget(m->frees.b[i].p);
		free_after_grace(tx, m, m->frees.b[i].p, m->frees.b[i].size,
				 NULL);
	}
	log_clear(&m->frees);
}

/* An aborted transaction: its frees are forgotten, its allocations
 * released (no other thread can have seen them: they were only in
 * buffered stores). */
static __attribute__((noinline)) void ended_aborted(struct ltx_tx *tx,
						    struct ltx_mem_thread *m)
{
	log_clear(&m->frees);
	for (size_t i = 0; i < m->allocs.n; i++) {
		void *p = m->allocs.b[i].p;
		size_t size = m->allocs.b[i].size;

		check_and_forget(p);
		ltx_alloc_free(p, size != 0 ? size : ltx_alloc_usable(p));
	}
	tx->stats.mem_freed_blocks += m->allocs.n;
	log_clear(&m->allocs);
}

/*
 * A committed transaction's frees (n of them, n != 0), each logged with
 * its block's size, join the open batch at once when it has room for them
 * all; else (or in debug builds, which check each block) one at a time.
 */
static inline __attribute__((always_inline)) void
frees_to_batch(struct ltx_tx *tx, struct ltx_mem_thread *m, size_t n)
{
	struct batch *b = m->open;
	const struct entry *e = m->frees.b;
	struct block *d;
	size_t bytes = 0;

#ifndef LTX_DEBUG
	if (ltx_unlikely(b == NULL) || ltx_unlikely(n > BATCH_BLOCKS - b->n))
#endif
	{
		committed_frees(tx, m);
		return;
	}
	d = &b->blocks[b->n];
	if (ltx_likely(n == 1)) {
		/* The common case, straight. */
		bytes = e->size;
		*d = (struct block){ e->p, bytes, NULL };
	} else {
		for (size_t i = 0; i < n; i++) {
			d[i] = (struct block){ e[i].p, e[i].size, NULL };
			bytes += e[i].size;
		}
	}
	b->n += (unsigned)n;
	b->bytes += bytes;
	tx->stats.mem_pending_bytes += bytes;
	tx->stats.mem_pending_blocks += n;
	log_clear(&m->frees);
	maybe_seal(tx, m, b);
}

/*
 * ltx_mem_end's uncommon cases: an abort, and batches pending (the
 * transaction's allocations count towards trying reclamation, every
 * RECLAIM_EVERY allocations).
 */
static __attribute__((noinline)) void
mem_end_slow(struct ltx_tx *tx, struct ltx_mem_thread *m, bool committed)
{
	if (m->first != NULL) {
		m->since_reclaim += (unsigned)m->allocs.n;
		if (m->since_reclaim >= RECLAIM_EVERY)
			reclaim(tx, m, RECLAIM_ALLOC);
	}
	if (!committed) {
		ended_aborted(tx, m);
		return;
	}
	log_clear(&m->allocs);
	if (m->frees.n != 0)
		frees_to_batch(tx, m, m->frees.n);
}

/*
 * The transaction that allocated or freed ended (tx.c calls this for the
 * slow bit LTX_SLOW_MEM, after the transaction is over).  Committed: the
 * frees take effect, the allocations are kept.  Aborted: the frees are
 * forgotten, the allocations released.  The common case is a commit with
 * no batch pending.
 */
void ltx_mem_end(struct ltx_tx *tx, bool committed)
{
	struct ltx_mem_thread *m = tx->mem;
	size_t n = m->frees.n;

	if (ltx_unlikely(!committed) || ltx_unlikely(m->first != NULL)) {
		mem_end_slow(tx, m, committed);
		return;
	}
	log_clear(&m->allocs);
	if (n != 0)
		frees_to_batch(tx, m, n);
}

/* Have ltx_mem_end run when the current transaction ends. */
static inline void log_transaction(struct ltx_tx *tx)
{
	tx->slow |= LTX_SLOW_MEM;
}

static int status_of(const struct ltx_tx *tx)
{
	return __atomic_load_n(&tx->status, __ATOMIC_RELAXED);
}

/* The calling thread's memory state when it has one and the backend is
 * loaded (the common case, no call), else thread_state's answer. */
static inline struct ltx_mem_thread *fast_state(struct ltx_tx **txp)
{
	struct ltx_tx *tx = ltx_self;
	struct ltx_mem_thread *m = tx->mem;

	/* A descriptor with memory state was made by thread_state, after
	 * the backend loaded. */
	if (ltx_likely(m != NULL)) {
		*txp = tx;
		return m;
	}
	return thread_state(txp);
}

void *ltx_mem_alloc(size_t size, size_t align, bool zero)
{
	struct ltx_tx *tx;
	struct ltx_mem_thread *m = fast_state(&tx);
	void *p;

	if (ltx_unlikely(m == NULL))
		return NULL;
	/* Whole words, so that tm_free's LTX of a word of each line stays
	 * inside the block (take_lines). */
	if (ltx_unlikely(size > SIZE_MAX - 7)) {
		errno = ENOMEM;
		return NULL;
	}
	size = size == 0 ? 8 : (size + 7) & ~(size_t)7;
	p = ltx_alloc(size, align, zero);
	if (ltx_unlikely(p == NULL)) {
		errno = ENOMEM;
		return NULL;
	}
	tx->stats.mem_alloc_blocks++;
	live_add(p);
	if (!ltx_status_idle(status_of(tx))) {
		/* The size asked for, which sdallocx accepts (anything from
		 * it to the usable size), so that a free of the block by
		 * this transaction, or its abort, need not look the size
		 * up; 0 (look it up) for an aligned block, whose size class
		 * depends on the alignment too. */
		bool logged = log_push(&m->allocs, p, align == 0 ? size : 0);

		fast_bounds(m);
		if (ltx_unlikely(!logged)) {
			/* No memory to log the block: give it back now; the
			 * transaction is doomed (TM_ABORT_NOMEM) if it was
			 * not already. */
			if (status_of(tx) == LTX_ACTIVE)
				ltx_tx_doom(tx,
					    TM_ABORT_NOMEM | TM_ABORT_CAPACITY);
			check_and_forget(p);
			ltx_alloc_free(p, ltx_alloc_usable(p));
			tx->stats.mem_freed_blocks++;
			errno = ENOMEM;
			return NULL;
		}
		/* Counted for reclamation when the transaction ends. */
		log_transaction(tx);
		return p;
	}
	if (ltx_unlikely(m->first != NULL) &&
	    ++m->since_reclaim >= RECLAIM_EVERY)
		reclaim(tx, m, RECLAIM_ALLOC);
	return p;
}

/*
 * tm_malloc: its common case (a thread with memory state, the jemalloc
 * backend, a running transaction whose allocation log has room) costs the
 * jemalloc call and a few stores: one compare tells room and backend
 * (allocs_fast), and the size goes to jemalloc as asked (jemalloc rounds
 * it up, returns NULL for a size it cannot serve, and gives a block for
 * 0; an entry's size 0 means "look it up", and sdallocx takes the asked
 * size).  Reclamation is not tried here: the transaction's allocations
 * are counted for it when it ends (ltx_mem_end).  The log entry is filled
 * before the call, so that only the entry's address lives across it; a
 * failed allocation takes the entry back.  The entry's block pointer is
 * written only after the call, but nothing reads the log meanwhile: it is
 * this thread's own, read only by this thread's tm_free and transaction
 * end, jemalloc calls no code of ltx, and its malloc has no cancellation
 * point (a signal handler may not call tm_malloc or end the transaction
 * from inside it: jemalloc is not async-signal-safe).
 */
#ifndef LTX_DEBUG
/* ltx_mem_malloc's jemalloc call failed: take back the log entry. */
static __attribute__((noinline, cold)) void *malloc_failed(void)
{
	struct ltx_tx *tx = ltx_self;

	tx->mem->allocs.n--;
	tx->stats.mem_alloc_blocks--;
	errno = ENOMEM;
	return NULL;
}
#endif

void *ltx_mem_malloc(size_t size)
{
#ifndef LTX_DEBUG
	struct ltx_tx *tx = ltx_self;
	struct ltx_mem_thread *m = tx->mem;
	struct entry *e;
	size_t n;
	void *p;

	if (ltx_likely(m != NULL) &&
	    ltx_likely((n = m->allocs.n) < m->allocs_fast) &&
	    ltx_likely(status_of(tx) == LTX_ACTIVE)) {
		e = &m->allocs.b[n];
		m->allocs.n = n + 1;
		e->size = size;
		tx->stats.mem_alloc_blocks++;
		log_transaction(tx);
		p = ltx_je_malloc(size);
		if (ltx_unlikely(p == NULL))
			return malloc_failed();
		e->p = p;
		return p;
	}
#endif
	return ltx_mem_alloc(size, 0, false);
}

/*
 * Take every line of [p, p + size) in E, marked to get a new version at
 * commit.  Begins a transaction if none is running.  Returns false if the
 * transaction is doomed.  A line not held yet takes the fast path, which
 * marks its new entry (tx/fast.h); one held already is marked by its mode.
 */
static bool take_lines(struct ltx_tx *tx, void *p, size_t size)
{
	uintptr_t a = (uintptr_t)p; /* word-aligned, as blocks are */
	uintptr_t end = (uintptr_t)p + (size & ~(size_t)7);

	/* LTX of a word of the block in each line: never a byte outside
	 * (blocks are whole words: ltx_mem_alloc). */
	while (a < end) {
		if (!ltx_tx_fast_take_bumped(tx, (const void *)a)) {
			const struct ltx_cd_ops *ops;

			ltx_tx_load(tx, (const void *)a, true);
			if (status_of(tx) != LTX_ACTIVE)
				return false;
			ops = ltx_cd_ops_of(tx->mode);
			if (ops->bump_line != NULL)
				ops->bump_line(&tx->cd, (const void *)a);
		}
		a = (a & ~LTX_LINE_MASK) + LTX_LINE_SIZE;
	}
	return true;
}

/*
 * If the running transaction allocated p (it is in the allocation log),
 * take it out of the log and return a size to give it back with (the
 * size asked for, or its usable size); else 0.  Such a block no other
 * transaction can have seen (it was only in buffered stores), so its
 * free needs no lines and no grace period.  The log is searched newest
 * first: a block is usually freed soon after it is allocated, if at all.
 */
static inline size_t unpublished(struct ltx_mem_thread *m, void *p)
{
	for (size_t i = m->allocs.n; i-- > 0;) {
		if (m->allocs.b[i].p == p) {
			size_t size = m->allocs.b[i].size;

			m->allocs.b[i] = m->allocs.b[--m->allocs.n];
			return ltx_likely(size != 0) ? size
						     : ltx_alloc_usable(p);
		}
	}
	return 0;
}

static __attribute__((noinline)) void free_slow(void *p);

#ifndef LTX_DEBUG
/*
 * ltx_mem_free's block of an earlier transaction whose lines the inline path
 * did not take (more than one line, a line held already, no room in the
 * write set): take them all (as free_slow), then log the free.  p first,
 * where the callers have it (no register moves before the tail call).
 */
static __attribute__((noinline)) void free_lines(void *p, size_t size,
						 struct ltx_tx *tx)
{
	struct ltx_mem_thread *m = tx->mem;

	if (!take_lines(tx, p, size))
		return; /* doomed: the free will not happen */
	/* The log has room: ltx_mem_free saw it, and nothing but this
	 * thread touches it. */
	m->frees.b[m->frees.n++] = (struct entry){ .p = p, .size = size };
	log_transaction(tx);
}
#endif

#ifndef LTX_DEBUG
/*
 * The free of p, a block of an earlier transaction, of size bytes (whole
 * words), when the log of frees has room: its lines in E, marked to get a
 * new version (as in free_slow); a block within one line takes it inline.
 */
static inline __attribute__((always_inline)) void
free_earlier(struct ltx_tx *tx, void *p, size_t size)
{
	struct ltx_mem_thread *m;

	if (ltx_unlikely(((uintptr_t)p & LTX_LINE_MASK) + size >
			 LTX_LINE_SIZE) ||
	    ltx_unlikely(!ltx_tx_fast_take_bumped(tx, p))) {
		free_lines(p, size, tx);
		return;
	}
	/* The line is ours, the log has room (nothing but this thread
	 * touches it). */
	m = tx->mem;
	m->frees.b[m->frees.n++] = (struct entry){ .p = p, .size = size };
	log_transaction(tx);
}

/* The same after the size lookup: a tail call, so that only p lives
 * across the lookup (one register saved) and the descriptor is read
 * again here. */
static __attribute__((noinline)) void free_earlier_self(void *p, size_t size)
{
	free_earlier(ltx_self, p, size);
}
#endif

/*
 * tm_free's and tm_free_sized's common cases, for the jemalloc backend in
 * a running transaction: the block the transaction allocated last (a block
 * is usually freed soon after it is allocated, if at all), and, when the
 * transaction allocated nothing or one other block, a block of an earlier
 * transaction.  size is the block's size in whole words as the caller
 * gave it (tm_free_sized), or 0: look it up.
 * Anything else takes free_slow, which does the same in general.  Only
 * p lives across the size lookup (free_earlier_self), and every other
 * call is a tail call.
 */
static inline __attribute__((always_inline)) void mem_free(void *p, size_t size)
{
#ifndef LTX_DEBUG
	struct ltx_tx *tx = ltx_self;
	struct ltx_mem_thread *m = tx->mem;
	struct entry *e;
	size_t n;

	/* The status as a memory operand of the compare (a relaxed load,
	 * as status_of's): one instruction. */
	if (ltx_unlikely(p == NULL || m == NULL ||
			 ltx_int_differs(&tx->status, LTX_ACTIVE)))
		goto slow;
	n = m->allocs.n;
	if (n != 0) {
		e = &m->allocs.b[n - 1];
		if (e->p == p) {
			/* Unpublished: as in free_slow.  Its entry leaves the
			 * log, so neither commit nor abort sees the block
			 * again.  With the libc backend (allocs_fast 0) the
			 * block is libc's: free_slow.  The logged size is
			 * the one asked for: the caller's is not needed. */
			size = e->size;
			if (size == 0 || m->allocs_fast == 0)
				goto slow;
			m->allocs.n = n - 1;
			tx->stats.mem_freed_blocks++;
			ltx_je_sdallocx(p, size, 0);
			return;
		}
		/* The only block the transaction allocated is another one:
		 * p is a block of an earlier transaction (a transaction that
		 * replaces a block by a new one).  Else free_slow searches
		 * the log. */
		if (n != 1)
			goto slow;
	}
	if (ltx_unlikely(m->frees.n >= m->frees_fast))
		goto slow;
	if (size == 0) {
		free_earlier_self(p, ltx_je_sallocx(p, 0));
		return;
	}
	free_earlier(tx, p, size);
	return;
slow:
#else
	(void)size;
#endif
	free_slow(p);
}

void ltx_mem_free(void *p)
{
	mem_free(p, 0);
}

#ifdef LTX_DEBUG
/*
 * Debug builds: tm_free_sized's size against the block's, for a live block
 * (any other pointer is free_slow's to report).  The size is right when
 * it is in the block's size class (jemalloc: sdallocx then accepts it);
 * with libc, when it is at most the usable size.  A live block is not
 * released under us: a free of it by another transaction has not
 * committed (check_and_forget would have removed it first), and a block
 * is released only after that.
 */
static void check_size(void *p, size_t size)
{
	size_t usable, want;

	if (!ltx_alloc_loaded() || !live_contains(p))
		return;
	usable = ltx_alloc_usable(p);
	want = ltx_alloc_backend == LTX_ALLOC_JEMALLOC ? ltx_je_nallocx(size, 0)
						       : size;
	if (ltx_alloc_backend == LTX_ALLOC_JEMALLOC ? want == usable
						    : want <= usable)
		return;
	fprintf(stderr,
		"ltx: tm_free_sized(%p, %zu): wrong size: the block holds %zu "
		"bytes (size must be the one given to tm_malloc or "
		"tm_calloc)\n",
		p, size, usable);
	abort();
}
#endif

/*
 * tm_free_sized: tm_free with the block's size given, so that the common
 * case looks nothing up.  size in whole words, as blocks are
 * (ltx_mem_alloc): take_lines then covers every byte asked for, and
 * sdallocx takes any size between the one asked for and the usable size,
 * which is the size class of the one asked for.  A size that wraps (a
 * wrong one) becomes 0, which looks the size up.
 */
void ltx_mem_free_sized(void *p, size_t size)
{
#ifdef LTX_DEBUG
	if (p != NULL && size != 0)
		check_size(p, size);
#endif
	size = (size + 7) & ~(size_t)7;
	/* Looked up: tm_free's.  Otherwise mem_free makes no call but tail
	 * calls, and this path needs no frame. */
	if (ltx_unlikely(size == 0)) {
		ltx_mem_free(p);
		return;
	}
	mem_free(p, size);
}

static void free_slow(void *p)
{
	struct ltx_tx *tx;
	struct ltx_mem_thread *m;
	size_t size;
	int st;

	if (p == NULL)
		return;
	/* A thread with memory state has had the backend loaded. */
	if (ltx_unlikely(ltx_self->mem == NULL) && !ltx_alloc_loaded()) {
		fprintf(stderr,
			"ltx: tm_free(%p): tm_malloc was never "
			"called: not a block from tm_malloc\n",
			p);
		abort();
	}
	m = fast_state(&tx);
	if (ltx_unlikely(m == NULL))
		return; /* cannot happen once the backend is loaded */
	st = status_of(tx);
	if (ltx_unlikely(st == LTX_DOOMED))
		return; /* the free will not happen; p may be stale */
	/*
	 * A block this running transaction allocated goes straight back to
	 * the allocator, with no line taken and no size looked up: no other
	 * transaction can hold its address (it was only in this
	 * transaction's buffered stores), and its allocation leaves the log,
	 * so neither a commit nor an abort will see it again.  It is live
	 * (debug builds): a second free of it is not found here.
	 */
	if (m->allocs.n != 0 && !ltx_status_idle(st) &&
	    (size = unpublished(m, p)) != 0) {
		check_and_forget(p);
		ltx_alloc_free(p, size);
		tx->stats.mem_freed_blocks++;
		return;
	}
	/*
	 * Debug builds: a block not live here may also be one whose free by
	 * another transaction has just committed (the lines have a new
	 * version): taking its first line dooms us then.
	 * Only a live transaction or a non-transactional call that gets
	 * past that is freeing a block twice, or a foreign pointer.
	 */
	if (!live_contains(p)) {
		if (st == LTX_ACTIVE && !take_lines(tx, p, 8))
			return;
		report_bad_free(p);
	}
	size = ltx_alloc_usable(p);
	if (ltx_unlikely(ltx_status_idle(st))) {
		/* A transaction of its own, retried until it commits: it
		 * fails only while another transaction holds a line of the
		 * block, which a correct program ends soon. */
		do
			take_lines(tx, p, size);
		while (!ltx_tx_commit(tx));
		check_and_forget(p);
		free_after_grace(tx, m, p, size, NULL);
		return;
	}
	if (!take_lines(tx, p, size))
		return; /* doomed: the free will not happen */
	/* The lines are ours: no other free of p can be under way.  The
	 * block stays live (debug builds) until the free commits. */
	if (ltx_likely(log_push(&m->frees, p, size))) {
		fast_bounds(m);
		log_transaction(tx);
		return;
	}
	if (status_of(tx) == LTX_ACTIVE)
		ltx_tx_doom(tx, TM_ABORT_NOMEM | TM_ABORT_CAPACITY);
}

void ltx_mem_free_foreign(void *p, size_t size, void (*release)(void *, size_t))
{
	struct ltx_tx *tx = ltx_tx_self();

	assert(tx == NULL || ltx_status_idle(status_of(tx)));
	if (tx == NULL) {
		/* No memory for a descriptor: wait in place. */
		quiesce(NULL);
		release(p, size);
		return;
	}
	/* No thread cache is made: this thread may never use ltx's own
	 * allocator (blocks of it adopted from exited threads go back
	 * without one). */
	free_after_grace(tx, mem_of(tx), p, size, release);
}

void ltx_mem_flush(void)
{
	struct ltx_tx *tx;
	struct ltx_mem_thread *m = thread_state(&tx);

	if (m == NULL)
		return;
	seal(tx, m);
	fence_sealed(tx, m);
	reclaim(tx, m, RECLAIM_ALL);
}

void ltx_mem_thread_exit(struct ltx_tx *tx)
{
	struct ltx_mem_thread *m = tx->mem;
	struct batch *last;

	if (m == NULL)
		return;
	seal(tx, m);
	fence_sealed(tx, m);
	reclaim(tx, m, RECLAIM_ALL);
	if (m->open != NULL) {
		/* Could not be sealed (no memory): leak it, never reuse. */
		tx->stats.mem_pending_bytes -= m->open->bytes;
		tx->stats.mem_pending_blocks -= m->open->n;
		m->open = NULL;
	}
	if (m->first != NULL) {
		for (last = m->first;; last = last->next) {
			tx->stats.mem_pending_bytes -= last->bytes;
			tx->stats.mem_pending_blocks -= last->n;
			__atomic_add_fetch(&orphan_bytes, last->bytes,
					   __ATOMIC_RELAXED);
			__atomic_add_fetch(&orphan_blocks, last->n,
					   __ATOMIC_RELAXED);
			if (last->next == NULL)
				break;
		}
		last->next = __atomic_load_n(&orphans, __ATOMIC_RELAXED);
		/* Release: pairs with the acquire exchange in
		 * adopt_orphans. */
		while (!__atomic_compare_exchange_n(
			&orphans, &last->next, m->first, true, __ATOMIC_RELEASE,
			__ATOMIC_RELAXED))
			;
		m->first = NULL;
	}
	free(m->allocs.b);
	free(m->frees.b);
	m->allocs = (struct log){ 0 };
	m->frees = (struct log){ 0 };
	fast_bounds(m);
}

void ltx_mem_fork_child(struct ltx_tx *tx)
{
	struct ltx_mem_thread *m = tx->mem;

	if (m == NULL)
		return;
	log_clear(&m->allocs);
	log_clear(&m->frees);
}

static void add_stats(struct ltx_tx *tx, void *arg)
{
	struct tm_mem_stats *out = arg;
	const struct ltx_stats *s = &tx->stats;

	out->pending_bytes +=
		__atomic_load_n(&s->mem_pending_bytes, __ATOMIC_RELAXED);
	out->pending_blocks +=
		__atomic_load_n(&s->mem_pending_blocks, __ATOMIC_RELAXED);
	out->freed_blocks +=
		__atomic_load_n(&s->mem_freed_blocks, __ATOMIC_RELAXED);
	out->alloc_blocks +=
		__atomic_load_n(&s->mem_alloc_blocks, __ATOMIC_RELAXED);
}

void ltx_mem_stats(struct tm_mem_stats *out)
{
	memset(out, 0, sizeof(*out));
	ltx_tx_foreach(add_stats, out);
	out->pending_bytes += __atomic_load_n(&orphan_bytes, __ATOMIC_RELAXED);
	out->pending_blocks +=
		__atomic_load_n(&orphan_blocks, __ATOMIC_RELAXED);
	out->peak_pending_bytes =
		__atomic_load_n(&peak_sealed_bytes, __ATOMIC_RELAXED);
	out->limit_exceeded =
		__atomic_load_n(&limit_exceeded, __ATOMIC_RELAXED);
}
