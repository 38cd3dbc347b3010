/* SPDX-License-Identifier: MIT */
/* libitm ABI: C++ exceptions thrown, caught or in flight in transactions. */
#include <stddef.h>
#include <unwind.h>

#include "itm/itm.h"
#include "itm/libitm.h"
#include "rt/array.h"
#include "tx/tx.h"

/*
 * GCC routes the exception runtime calls made in a transaction through
 * these wrappers, which count what a rollback must clean up: an exception
 * allocated but not thrown yet, catches not ended, and the exception in
 * flight when _ITM_commitTransactionEH had to restart.  libstdc++ does the
 * cleanup (__cxa_tm_cleanup, CXXABI_TM_1).  Weak references: plain C
 * programs run without libstdc++, and never reach these.
 */
extern void *__cxa_allocate_exception(size_t) __attribute__((weak));
extern void __cxa_free_exception(void *) __attribute__((weak));
extern void __cxa_throw(void *, void *, void (*)(void *))
	__attribute__((weak, noreturn));
extern void *__cxa_begin_catch(void *) __attribute__((weak));
extern void __cxa_end_catch(void) __attribute__((weak));
extern void __cxa_tm_cleanup(void *, void *, unsigned) __attribute__((weak));
extern void _Unwind_DeleteException(struct _Unwind_Exception *)
	__attribute__((weak));

static void need(const void *fn)
{
	if (fn == NULL)
		ltx_itm_fatal("C++ exception hook without libstdc++");
}

/*
 * Exception objects.  An exception thrown in a transaction is allocated
 * by it (_ITM_cxa_allocate_exception) and built by its instrumented code,
 * and the C++ runtime then reads and writes it directly: __cxa_throw and
 * the unwinder (its header), the personality routine (type matching; an
 * upcast to a virtual base reads the object's vtable), libstdc++'s
 * transactional std::logic_error and std::runtime_error constructors
 * (they copy the object in with _ITM_memcpyRnWt, then store the message
 * pointer directly), and the catch, in the transaction or after
 * _ITM_commitTransactionEH.  Were the transaction's stores to the object
 * buffered, as its stores to shared memory are, the runtime would read
 * stale bytes, the commit would write older bytes over the runtime's own,
 * and for an object caught and freed inside the transaction, it would
 * write into freed memory.  So, as under libitm (which writes in place),
 * the barriers store to the object directly: nobody else can see it
 * before the exception leaves the transaction, and a rollback destroys
 * it (__cxa_tm_cleanup, _Unwind_DeleteException), so nothing needs
 * undoing.  The same reasoning makes stores to the thread's stack direct
 * (barrier.c).
 *
 * An object is written directly from its allocation until it is thrown,
 * and again while a catch of it in the transaction is open (the handler
 * may write it; the last catch to end frees it, unless it was rethrown).
 * Otherwise -- memory reused after the object was freed, say -- a store
 * there is an ordinary transactional one.  The barriers' inline fast path
 * must not buffer a store to the object either: the object's lines are
 * taken in E when it is allocated, and that path only takes free lines,
 * so it declines them; no byte of the object is ever dirty in the write
 * set, and the commit releases the lines leaving the object as the
 * runtime wrote it.  The records belong to one ltx transaction
 * (eh_tx_id): a commit or a restart begins a new one, which starts with
 * none.
 */

/* Forget the records of an earlier transaction. */
static void eh_sync(struct ltx_itm_thread *t)
{
	uint64_t id = ltx_self->tx_id;

	if (t->eh_tx_id != id) {
		t->eh_objs_len = 0;
		t->eh_catches_len = 0;
		t->eh_tx_id = id;
		ltx_itm_set_path(t);
	}
}

/* The newest record of the object at obj, or NULL. */
static struct ltx_itm_eh_obj *eh_find(struct ltx_itm_thread *t, uintptr_t obj)
{
	for (size_t i = t->eh_objs_len; i-- > 0;)
		if (t->eh_objs[i].lo == obj && t->eh_objs[i].size != 0)
			return &t->eh_objs[i];
	return NULL;
}

bool ltx_itm_eh_private(struct ltx_itm_thread *t, const void *addr, size_t size)
{
	uintptr_t a = (uintptr_t)addr;

	eh_sync(t);
	/* Newest first: memory freed and allocated again is the new one's. */
	for (size_t i = t->eh_objs_len; i-- > 0;) {
		const struct ltx_itm_eh_obj *o = &t->eh_objs[i];

		if (a - o->lo < o->size && size <= o->size - (a - o->lo))
			return !o->thrown || o->catches != 0;
	}
	return false;
}

/*
 * Take the lines of a new exception object in E (see above): an LTX of a
 * word of the object in each line.  A conflict there dooms the
 * transaction, which restarts, as at any barrier (the object is then
 * cxa_unthrown, and the rollback frees it).
 */
static void eh_take_lines(struct ltx_itm_thread *t, uintptr_t lo, size_t size)
{
	uintptr_t a = lo & ~(uintptr_t)(sizeof(uint64_t) - 1), end = lo + size;

	while (a < end) {
		(void)ltx_tx_load(ltx_self, (const void *)a, true);
		if (__atomic_load_n(&ltx_self->status, __ATOMIC_RELAXED) ==
		    LTX_DOOMED)
			ltx_itm_restart(t);
		a = (a & ~(uintptr_t)LTX_LINE_MASK) + LTX_LINE_SIZE;
	}
}

/*
 * What an exception's constructor allocates in the transaction (the
 * message of a std::logic_error, which libstdc++'s transactional
 * constructor makes with transactional new) is the transaction's until
 * the throw: freed by its rollback (an abort action), as the object
 * itself, unthrown, is freed without its destructor (__cxa_tm_cleanup).
 * From the throw on, the thrown object owns it, and its destructor frees
 * it: when a catch in the transaction ends, or when the rollback deletes
 * the exception in flight (_Unwind_DeleteException runs the destructor).
 * So the throw drops the abort actions registered since the object's
 * allocation (ltx_tx_actions_keep); else the memory would be freed twice.
 */
void ltx_itm_eh_rollback(struct ltx_itm_thread *t)
{
	if (t->cxa_unthrown != NULL || t->cxa_catch_count != 0) {
		if (__cxa_tm_cleanup != NULL)
			__cxa_tm_cleanup(t->cxa_unthrown, t->eh_in_flight,
					 t->cxa_catch_count);
	} else if (t->eh_in_flight != NULL && _Unwind_DeleteException != NULL) {
		_Unwind_DeleteException(t->eh_in_flight);
	}
	t->cxa_unthrown = NULL;
	t->eh_in_flight = NULL;
	t->cxa_catch_count = 0;
	t->eh_objs_len = 0;
	t->eh_catches_len = 0;
	ltx_itm_set_path(t);
}

#pragma GCC visibility push(default)

void *_ITM_cxa_allocate_exception(size_t size)
{
	struct ltx_itm_thread *t = ltx_itm_thread_get();
	void *e;

	need((const void *)__cxa_allocate_exception);
	e = __cxa_allocate_exception(size);
	t->cxa_unthrown = e;
	eh_sync(t);
	if (!LTX_ARRAY_RESERVE(&t->eh_objs, &t->eh_objs_cap, t->eh_objs_len,
			       t->eh_objs_len + 1, 4))
		ltx_itm_fatal("no memory to record an exception object");
	t->eh_objs[t->eh_objs_len++] = (struct ltx_itm_eh_obj){
		.lo = (uintptr_t)e,
		.size = size ? size : 1,
		.actions = ltx_tx_actions_mark(ltx_self),
	};
	ltx_itm_set_path(t);
	if (t->mode == ITM_INSTR)
		eh_take_lines(t, (uintptr_t)e, size ? size : 1);
	return e;
}

void _ITM_cxa_free_exception(void *obj)
{
	struct ltx_itm_thread *t = ltx_itm_thread_get();

	struct ltx_itm_eh_obj *o;

	need((const void *)__cxa_free_exception);
	if (t->cxa_unthrown == obj)
		t->cxa_unthrown = NULL;
	eh_sync(t);
	o = eh_find(t, (uintptr_t)obj);
	if (o != NULL)
		o->size = 0;
	__cxa_free_exception(obj);
}

void _ITM_cxa_throw(void *obj, void *tinfo, void (*dest)(void *))
{
	struct ltx_itm_thread *t = ltx_itm_thread_get();

	struct ltx_itm_eh_obj *o;

	need((const void *)__cxa_throw);
	t->cxa_unthrown = NULL;
	eh_sync(t);
	o = eh_find(t, (uintptr_t)obj);
	if (o != NULL) {
		o->thrown = true;
		/* It owns what was allocated to build it (see above). */
		if (o->actions <= ltx_tx_actions_mark(ltx_self))
			ltx_tx_actions_keep(ltx_self, o->actions);
	}
	__cxa_throw(obj, tinfo, dest);
}

void *_ITM_cxa_begin_catch(void *exc)
{
	struct ltx_itm_thread *t = ltx_itm_thread_get();

	struct ltx_itm_eh_obj *o;

	need((const void *)__cxa_begin_catch);
	t->cxa_catch_count++;
	/* The thrown object follows the exception's unwind header (the
	 * Itanium C++ ABI's layout; a dependent exception's header is
	 * followed by nothing of ours, and matches no record). */
	eh_sync(t);
	o = eh_find(t, (uintptr_t)((struct _Unwind_Exception *)exc + 1));
	if (!LTX_ARRAY_RESERVE(&t->eh_catches, &t->eh_catches_cap,
			       t->eh_catches_len, t->eh_catches_len + 1, 4))
		ltx_itm_fatal("no memory to record a catch");
	t->eh_catches[t->eh_catches_len++] =
		o != NULL ? (uint32_t)(o - t->eh_objs) + 1 : 0;
	if (o != NULL)
		o->catches++;
	return __cxa_begin_catch(exc);
}

void _ITM_cxa_end_catch(void)
{
	struct ltx_itm_thread *t = ltx_itm_thread_get();

	need((const void *)__cxa_end_catch);
	if (t->cxa_catch_count != 0)
		t->cxa_catch_count--;
	/* Before the end: it may free the object. */
	eh_sync(t);
	if (t->eh_catches_len != 0) {
		uint32_t i = t->eh_catches[--t->eh_catches_len];

		if (i != 0)
			t->eh_objs[i - 1].catches--;
	}
	__cxa_end_catch();
}

#pragma GCC visibility pop
