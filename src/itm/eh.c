/* SPDX-License-Identifier: MIT */
/* libitm ABI: C++ exceptions thrown, caught or in flight in transactions. */
#include <stddef.h>

#include "itm/itm.h"
#include "itm/libitm.h"

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
extern void _Unwind_DeleteException(void *) __attribute__((weak));

static void need(const void *fn)
{
	if (fn == NULL)
		ltx_itm_fatal("C++ exception hook without libstdc++");
}

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
}

#pragma GCC visibility push(default)

void *_ITM_cxa_allocate_exception(size_t size)
{
	struct ltx_itm_thread *t = ltx_itm_thread_get();
	void *e;

	need((const void *)__cxa_allocate_exception);
	e = __cxa_allocate_exception(size);
	t->cxa_unthrown = e;
	return e;
}

void _ITM_cxa_free_exception(void *obj)
{
	struct ltx_itm_thread *t = ltx_itm_thread_get();

	need((const void *)__cxa_free_exception);
	if (t->cxa_unthrown == obj)
		t->cxa_unthrown = NULL;
	__cxa_free_exception(obj);
}

void _ITM_cxa_throw(void *obj, void *tinfo, void (*dest)(void *))
{
	struct ltx_itm_thread *t = ltx_itm_thread_get();

	need((const void *)__cxa_throw);
	t->cxa_unthrown = NULL;
	__cxa_throw(obj, tinfo, dest);
}

void *_ITM_cxa_begin_catch(void *exc)
{
	struct ltx_itm_thread *t = ltx_itm_thread_get();

	need((const void *)__cxa_begin_catch);
	t->cxa_catch_count++;
	return __cxa_begin_catch(exc);
}

void _ITM_cxa_end_catch(void)
{
	struct ltx_itm_thread *t = ltx_itm_thread_get();

	need((const void *)__cxa_end_catch);
	if (t->cxa_catch_count != 0)
		t->cxa_catch_count--;
	__cxa_end_catch();
}

#pragma GCC visibility pop
