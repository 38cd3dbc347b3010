/* SPDX-License-Identifier: MIT */
/* libitm ABI: allocation in transactions (malloc family, C++ new/delete). */
#include <malloc.h>
#include <stdlib.h>

#include "itm/itm.h"
#include "itm/libitm.h"
#include "rt/signal.h"
#include "tx/mem.h"

/*
 * Memory allocated in a transaction is freed if it rolls back; memory
 * freed in one is freed only when it commits.  Both are actions of the
 * ltx transaction (tx.h): an abort action frees an allocation, a commit
 * action hands a freed block to ltx's transactional reclamation
 * (tx/mem.c), which releases it, with its own allocator's function, once
 * every transaction that was running at that commit has ended, so none of
 * them can still read it, and the committing thread waits for nobody.
 * Nothing here touches a block the transaction allocated and keeps: once
 * the transaction has committed, another thread may have freed it.
 *
 * Closed nesting unwinds the actions of a cancelled nested transaction
 * (itm.c).  Outside a transaction, or in one that can no longer roll
 * back, an allocation is just made; a free in the latter is deferred as
 * well (a doomed transaction elsewhere may still hold the pointer).
 *
 * The C++ clones call libstdc++'s operators through weak references, so
 * that C programs need no libstdc++; GCC emits them only into C++ code,
 * which has libstdc++ loaded.
 *
 * Every call into the allocator is marked as ltx's own (LTX_OWN, rt/signal.h):
 * it may wait in the kernel for a lock, in a transaction that holds the
 * serial token, and a signal that lands there must wait for the token to
 * be given back, as in ltx's other waits; the program sees no EINTR from
 * an allocator anyway.  But for the throwing operator new: an exception
 * would leave the mark set (this C code runs no cleanup when unwound).
 */
extern void *_Znwm(size_t) __attribute__((weak));
extern void *_Znam(size_t) __attribute__((weak));
extern void *_ZnwmRKSt9nothrow_t(size_t, const void *) __attribute__((weak));
extern void *_ZnamRKSt9nothrow_t(size_t, const void *) __attribute__((weak));
extern void _ZdlPv(void *) __attribute__((weak));
extern void _ZdaPv(void *) __attribute__((weak));

/* Each allocator's release, as an abort action and for reclamation. */
static void free_block(void *ptr)
{
	LTX_OWN_VOID(free(ptr));
}

static void delete_block(void *ptr)
{
	LTX_OWN_VOID(_ZdlPv(ptr));
}

static void delete_array(void *ptr)
{
	LTX_OWN_VOID(_ZdaPv(ptr));
}

static void release_free(void *ptr, size_t size)
{
	(void)size;
	LTX_OWN_VOID(free(ptr));
}

static void release_delete(void *ptr, size_t size)
{
	(void)size;
	LTX_OWN_VOID(_ZdlPv(ptr));
}

static void release_delete_array(void *ptr, size_t size)
{
	(void)size;
	LTX_OWN_VOID(_ZdaPv(ptr));
}

/*
 * Commit actions: the free takes effect, through the grace period.  The
 * block is still the transaction's (nobody else frees it before this
 * runs), so its size can be asked for the figures.  Sized delete is
 * released unsized: the size is only a hint to the allocator.
 */
static void defer_free(void *ptr)
{
	ltx_mem_free_foreign(ptr, malloc_usable_size(ptr), release_free);
}

static void defer_delete(void *ptr)
{
	ltx_mem_free_foreign(ptr, 0, release_delete);
}

static void defer_delete_array(void *ptr)
{
	ltx_mem_free_foreign(ptr, 0, release_delete_array);
}

/* A block allocated: freed again if the transaction rolls back. */
static void *allocated(void *p, void (*undo)(void *))
{
	struct ltx_itm_thread *t = ltx_itm_state();

	if (p != NULL && ltx_itm_revocable(t))
		ltx_itm_on_end(t, undo, p, false);
	return p;
}

/* A block freed in a transaction: released after it commits. */
static void release(void *p, void (*now)(void *), void (*defer)(void *))
{
	struct ltx_itm_thread *t = ltx_itm_state();

	if (p == NULL)
		return;
	if (t == NULL || t->depth == 0) {
		now(p);
		return;
	}
	ltx_itm_on_end(t, defer, p, true);
}

static void *need(void *(*fn)(size_t), size_t size)
{
	if (fn == NULL)
		ltx_itm_fatal("C++ allocation without libstdc++");
	return fn(size); /* not marked: it may throw through here */
}

static void need_delete(const void *fn)
{
	if (fn == NULL)
		ltx_itm_fatal("C++ deallocation without libstdc++");
}

#pragma GCC visibility push(default)

void *_ITM_malloc(size_t size)
{
	return allocated(LTX_OWN(malloc(size)), free_block);
}

void *_ITM_calloc(size_t nmemb, size_t size)
{
	return allocated(LTX_OWN(calloc(nmemb, size)), free_block);
}

void _ITM_free(void *ptr)
{
	release(ptr, free_block, defer_free);
}

void *_ZGTtnwm(size_t size)
{
	return allocated(need(_Znwm, size), delete_block);
}

void *_ZGTtnam(size_t size)
{
	return allocated(need(_Znam, size), delete_array);
}

void *_ZGTtnwmRKSt9nothrow_t(size_t size, const void *nt)
{
	if (_ZnwmRKSt9nothrow_t == NULL)
		ltx_itm_fatal("C++ allocation without libstdc++");
	return allocated(LTX_OWN(_ZnwmRKSt9nothrow_t(size, nt)), delete_block);
}

void *_ZGTtnamRKSt9nothrow_t(size_t size, const void *nt)
{
	if (_ZnamRKSt9nothrow_t == NULL)
		ltx_itm_fatal("C++ allocation without libstdc++");
	return allocated(LTX_OWN(_ZnamRKSt9nothrow_t(size, nt)), delete_array);
}

void _ZGTtdlPv(void *ptr)
{
	need_delete((const void *)_ZdlPv);
	release(ptr, delete_block, defer_delete);
}

void _ZGTtdaPv(void *ptr)
{
	need_delete((const void *)_ZdaPv);
	release(ptr, delete_array, defer_delete_array);
}

void _ZGTtdlPvRKSt9nothrow_t(void *ptr, const void *nt)
{
	(void)nt;
	_ZGTtdlPv(ptr);
}

void _ZGTtdaPvRKSt9nothrow_t(void *ptr, const void *nt)
{
	(void)nt;
	_ZGTtdaPv(ptr);
}

void _ZGTtdlPvm(void *ptr, size_t size)
{
	(void)size;
	_ZGTtdlPv(ptr);
}

void _ZGTtdlPvmRKSt9nothrow_t(void *ptr, size_t size, const void *nt)
{
	(void)size;
	(void)nt;
	_ZGTtdlPv(ptr);
}

#pragma GCC visibility pop
