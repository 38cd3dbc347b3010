/* SPDX-License-Identifier: MIT */
/* libitm ABI: allocation in transactions (malloc family, C++ new/delete). */
#include <malloc.h>
#include <stdlib.h>

#include "itm/itm.h"
#include "itm/libitm.h"
#include "tx/mem.h"

/*
 * Memory allocated in a transaction is freed if it rolls back; memory
 * freed in one is freed only when it commits.  After an ITM_INSTR commit
 * the blocks go to ltx's transactional reclamation (tx/mem.c): each is
 * released, with its own allocator's function, once every transaction
 * that was running at the commit has ended, so none of them can still
 * read it, and the committing thread waits for nobody.  (If there is no
 * memory to track them, it waits for the concurrent ITM transactions to
 * end, ltx_itm_quiesce, and releases them itself.)  The serial modes run
 * alone and release at commit; an irrevocable transaction that cannot
 * cancel, at once.
 *
 * The C++ clones call libstdc++'s operators through weak references, so
 * that C programs need no libstdc++; GCC emits them only into C++ code,
 * which has libstdc++ loaded.
 */
enum alloc_kind {
	KIND_FREE,	   /* free() */
	KIND_DELETE,	   /* operator delete(void *) */
	KIND_DELETE_ARRAY, /* operator delete[](void *) */
	KIND_DELETE_SIZED, /* operator delete(void *, size_t) */
};

extern void *_Znwm(size_t) __attribute__((weak));
extern void *_Znam(size_t) __attribute__((weak));
extern void *_ZnwmRKSt9nothrow_t(size_t, const void *) __attribute__((weak));
extern void *_ZnamRKSt9nothrow_t(size_t, const void *) __attribute__((weak));
extern void _ZdlPv(void *) __attribute__((weak));
extern void _ZdaPv(void *) __attribute__((weak));
extern void _ZdlPvm(void *, size_t) __attribute__((weak));


static void release_free(void *ptr, size_t size)
{
	(void)size;
	free(ptr);
}

static void release_delete(void *ptr, size_t size)
{
	(void)size;
	_ZdlPv(ptr);
}

static void release_delete_array(void *ptr, size_t size)
{
	(void)size;
	_ZdaPv(ptr);
}

static void release_delete_sized(void *ptr, size_t size)
{
	_ZdlPvm(ptr, size);
}

/* How to release a block of each kind (size: for sized delete only). */
static void (*const release_fn[])(void *, size_t) = {
	[KIND_FREE] = release_free,
	[KIND_DELETE] = release_delete,
	[KIND_DELETE_ARRAY] = release_delete_array,
	[KIND_DELETE_SIZED] = release_delete_sized,
};

void ltx_itm_free_now(void *ptr, size_t size, unsigned kind)
{
	release_fn[kind](ptr, size);
}

void ltx_itm_alloc_commit(struct ltx_itm_thread *t, bool concurrent)
{
	size_t n = t->allocs_len, i;
	bool quiesced = false;

	if (!concurrent) {
		ltx_itm_alloc_finish(t, 0, true);
		return;
	}
	t->allocs_len = 0;
	for (i = 0; i < n; i++) {
		const struct ltx_itm_alloc *a = &t->allocs[i];
		/* The size release needs, else one for the figures. */
		size_t size = a->kind == KIND_DELETE_SIZED ? a->size
			      : a->kind == KIND_FREE	   ? malloc_usable_size(a->ptr)
							   : 0;

		if (!a->on_commit ||
		    ltx_mem_defer_foreign(a->ptr, size, release_fn[a->kind]))
			continue;
		if (!quiesced) {
			ltx_itm_quiesce(t);
			quiesced = true;
		}
		ltx_itm_free_now(a->ptr, a->size, a->kind);
	}
}

void ltx_itm_alloc_record(struct ltx_itm_thread *t, void *ptr, size_t size,
			  unsigned kind, bool on_commit)
{
	if (t->allocs_len == t->allocs_cap) {
		size_t cap = t->allocs_cap ? 2 * t->allocs_cap : 32;
		struct ltx_itm_alloc *p = realloc(t->allocs, cap * sizeof(*p));

		if (p == NULL)
			ltx_itm_fatal("no memory for the allocation log");
		t->allocs = p;
		t->allocs_cap = cap;
	}
	t->allocs[t->allocs_len++] = (struct ltx_itm_alloc){
		ptr, size, (uint8_t)kind, (uint8_t)on_commit
	};
}

void ltx_itm_alloc_finish(struct ltx_itm_thread *t, size_t from,
			  bool committed)
{
	size_t n = t->allocs_len;

	t->allocs_len = from;
	for (size_t i = from; i < n; i++)
		if (t->allocs[i].on_commit == committed)
			ltx_itm_free_now(t->allocs[i].ptr, t->allocs[i].size,
					 t->allocs[i].kind);
}

/* Whether the caller's transaction might still roll back. */
static bool revocable(const struct ltx_itm_thread *t)
{
	return t != NULL && t->depth != 0 &&
	       (t->mode != ITM_SERIAL_IRR || t->nests_len != 0);
}

static void *allocated(void *p, unsigned kind)
{
	struct ltx_itm_thread *t = ltx_itm_self;

	if (p != NULL && revocable(t))
		ltx_itm_alloc_record(t, p, 0, kind, false);
	return p;
}

static void release(void *p, size_t size, unsigned kind)
{
	struct ltx_itm_thread *t = ltx_itm_self;

	if (p == NULL)
		return;
	if (!revocable(t)) {
		ltx_itm_free_now(p, size, kind);
		return;
	}
	ltx_itm_alloc_record(t, p, size, kind, true);
	t->frees_pending = true;
}

static void *need(void *(*fn)(size_t), size_t size)
{
	if (fn == NULL)
		ltx_itm_fatal("C++ allocation without libstdc++");
	return fn(size);
}

#pragma GCC visibility push(default)

void *_ITM_malloc(size_t size)
{
	return allocated(malloc(size), KIND_FREE);
}

void *_ITM_calloc(size_t nmemb, size_t size)
{
	return allocated(calloc(nmemb, size), KIND_FREE);
}

void _ITM_free(void *ptr)
{
	release(ptr, 0, KIND_FREE);
}

void *_ZGTtnwm(size_t size)
{
	return allocated(need(_Znwm, size), KIND_DELETE);
}

void *_ZGTtnam(size_t size)
{
	return allocated(need(_Znam, size), KIND_DELETE_ARRAY);
}

void *_ZGTtnwmRKSt9nothrow_t(size_t size, const void *nt)
{
	if (_ZnwmRKSt9nothrow_t == NULL)
		ltx_itm_fatal("C++ allocation without libstdc++");
	return allocated(_ZnwmRKSt9nothrow_t(size, nt), KIND_DELETE);
}

void *_ZGTtnamRKSt9nothrow_t(size_t size, const void *nt)
{
	if (_ZnamRKSt9nothrow_t == NULL)
		ltx_itm_fatal("C++ allocation without libstdc++");
	return allocated(_ZnamRKSt9nothrow_t(size, nt), KIND_DELETE_ARRAY);
}

void _ZGTtdlPv(void *ptr)
{
	release(ptr, 0, KIND_DELETE);
}

void _ZGTtdaPv(void *ptr)
{
	release(ptr, 0, KIND_DELETE_ARRAY);
}

void _ZGTtdlPvRKSt9nothrow_t(void *ptr, const void *nt)
{
	(void)nt;
	release(ptr, 0, KIND_DELETE);
}

void _ZGTtdaPvRKSt9nothrow_t(void *ptr, const void *nt)
{
	(void)nt;
	release(ptr, 0, KIND_DELETE_ARRAY);
}

void _ZGTtdlPvm(void *ptr, size_t size)
{
	release(ptr, size, KIND_DELETE_SIZED);
}

void _ZGTtdlPvmRKSt9nothrow_t(void *ptr, size_t size, const void *nt)
{
	(void)nt;
	release(ptr, size, KIND_DELETE_SIZED);
}

#pragma GCC visibility pop
