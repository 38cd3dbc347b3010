/* SPDX-License-Identifier: MIT */
/* Transactional allocation: tm_malloc/tm_free and deferred reclamation. */
#ifndef LTX_TX_MEM_H
#define LTX_TX_MEM_H

#include <stdbool.h>
#include <stddef.h>

struct ltx_tx;
struct tm_mem_stats;

/*
 * ltx_mem_alloc: a block of size bytes aligned to align (0: default),
 * zeroed if zero.  Inside a transaction it is given back if the
 * transaction aborts.  NULL with errno ENOMEM on failure.
 */
void *ltx_mem_alloc(size_t size, size_t align, bool zero);

/* ltx_mem_malloc: tm_malloc, ltx_mem_alloc(size, 0, false) faster. */
void *ltx_mem_malloc(size_t size);

/*
 * ltx_mem_free: tm_free.  The block is released to the allocator once the
 * free is committed and no transaction that might read it can exist.
 */
void ltx_mem_free(void *p);

/*
 * ltx_mem_free_sized: tm_free_sized.  ltx_mem_free with the size given to
 * tm_malloc or tm_calloc (0: look it up), checked in debug builds.
 */
void ltx_mem_free_sized(void *p, size_t size);

/*
 * ltx_mem_free_foreign: p, a block of another allocator, was freed by a
 * transaction of the calling thread that has committed (the libitm layer's
 * _ITM_free and C++ delete).  release(p, size) is called once every
 * transaction that was running at that commit has ended: the grace period
 * of tm_free's blocks, in the same batches (or, if there is no memory to
 * track the block, waited for here).  size is passed to release and
 * counted in the figures (0 if unknown).  Not in a transaction.
 */
void ltx_mem_free_foreign(void *p, size_t size,
			  void (*release)(void *, size_t));

/*
 * ltx_mem_end: the transaction of tx that allocated or freed (slow bit
 * LTX_SLOW_MEM) is over: committed, or aborted.  Called by tx.c once the
 * transaction has ended.
 */
void ltx_mem_end(struct ltx_tx *tx, bool committed);

/* ltx_mem_flush: tm_mem_flush. */
void ltx_mem_flush(void);

/* ltx_mem_stats: tm_mem_stats. */
void ltx_mem_stats(struct tm_mem_stats *out);

/*
 * ltx_mem_thread_exit: the thread owning tx ends: release what can be
 * released, hand the rest to the other threads, destroy its cache.
 */
void ltx_mem_thread_exit(struct ltx_tx *tx);

/*
 * ltx_mem_fork_child: in the child of a fork, tx's thread is gone with its
 * transaction: forget what that transaction allocated and freed (the
 * allocations stay, unreachable: its commit cannot happen, and its abort
 * action is not run in another thread's name).  Its pending batches stay
 * with the descriptor, for the next thread that takes it.  No lock, no
 * allocation.
 */
void ltx_mem_fork_child(struct ltx_tx *tx);

#endif /* LTX_TX_MEM_H */
