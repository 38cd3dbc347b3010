/* SPDX-License-Identifier: MIT */
/* libitm ABI: the TM clone tables (transaction_safe versions of functions). */
#include <pthread.h>
#include <stdlib.h>

#include "itm/itm.h"
#include "itm/libitm.h"

/*
 * Each executable and DSO built with -fgnu-tm has a .tm_clone_table of
 * {original, clone} pairs, which its crtbegin.o registers (possibly before
 * ltx's own constructors run: everything here is statically initialized)
 * and deregisters at exit or dlclose.  A table is sorted in place (it is
 * writable) and binary-searched.
 *
 * Synchronization: table_lock guards the list; lookups take it too, which
 * is fine because indirect calls of unknown functions in transactions are
 * rare next to the barriers.
 */
struct clone_pair {
	void *orig;
	void *clone;
};

struct clone_table {
	struct clone_pair *pairs;
	size_t n;
	struct clone_table *next;
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct clone_table *tables;

static int by_orig(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct clone_pair *)a)->orig;
	uintptr_t y = (uintptr_t)((const struct clone_pair *)b)->orig;

	return x < y ? -1 : x > y;
}

static void *find_clone(void *fn)
{
	struct clone_pair key = { fn, NULL };
	void *clone = NULL;

	pthread_mutex_lock(&table_lock);
	for (struct clone_table *t = tables; t != NULL && clone == NULL;
	     t = t->next) {
		struct clone_pair *p = bsearch(&key, t->pairs, t->n,
					       sizeof(key), by_orig);

		if (p != NULL)
			clone = p->clone;
	}
	pthread_mutex_unlock(&table_lock);
	return clone;
}

#pragma GCC visibility push(default)

void _ITM_registerTMCloneTable(void *table, size_t npairs)
{
	struct clone_table *t = malloc(sizeof(*t));

	if (t == NULL)
		ltx_itm_fatal("no memory to register a TM clone table");
	t->pairs = table;
	t->n = npairs;
	qsort(t->pairs, npairs, sizeof(*t->pairs), by_orig);
	pthread_mutex_lock(&table_lock);
	t->next = tables;
	tables = t;
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

	if (clone == NULL)
		ltx_itm_fatal("indirect call in a transaction to a function "
			      "that is not transaction_safe");
	return clone;
}

#pragma GCC visibility pop
