/* SPDX-License-Identifier: MIT */
/* -fgnu-tm test: transaction_safe functions called through pointers. */
#include <dlfcn.h>

#include "itm-test.h"

#define ITERS 20000

/*
 * clone THREADS [PLUGIN.so [ROUNDS]]
 *
 * An indirect call in an atomic transaction goes through the TM clone
 * table: the runtime must find each function's instrumented clone
 * (_ITM_getTMCloneSafe), or the updates would not be transactional.
 * THREADS threads move money between two accounts through pointers to
 * transaction_safe functions, ITERS times each.
 *
 * With PLUGIN.so (built with -fgnu-tm: its crtbegin.o registers its clone
 * table, and dlclose deregisters it), THREADS-1 threads move money
 * nonstop while the main thread loads the plugin ROUNDS times (default
 * 200) and each time calls its plugin_add through a pointer in a
 * transaction: clone tables come and go under the lookups.  A lookup
 * that misses a registered table is fatal; one that finds a stale clone
 * corrupts the totals; a table freed under a lookup crashes (under ASan,
 * is reported).
 */
static long account[2] = { 1000000, 0 };
static long plugged;
static volatile int stop;
static int nonstop;

__attribute__((transaction_safe, noinline)) static void move_right(long v)
{
	account[0] -= v;
	account[1] += v;
}

__attribute__((transaction_safe, noinline)) static void move_left(long v)
{
	account[1] -= v;
	account[0] += v;
}

typedef void safe_op(long) __attribute__((transaction_safe));
typedef long plugin_fn(long *, long) __attribute__((transaction_safe));

static safe_op *volatile ops[2] = { move_right, move_left };

static void *worker(void *arg)
{
	unsigned long seed = 7777 + (unsigned long)arg;

	for (int i = 0;
	     nonstop ? !__atomic_load_n(&stop, __ATOMIC_RELAXED) : i < ITERS;
	     i++) {
		unsigned long r = next_rand(&seed);
		safe_op *op = ops[r & 1];
		long a, b;

		__transaction_atomic
		{
			op((long)(r >> 40) % 100);
		}
		__transaction_atomic
		{
			a = account[0];
			b = account[1];
		}
		CHECK(a + b == 1000000);
	}
	return NULL;
}

/* Load, call and unload the plugin rounds times, beside n-1 movers. */
static void reload(int n, const char *plugin, long rounds)
{
	pthread_t t[64];

	nonstop = 1;
	for (long i = 1; i < n; i++)
		CHECK(pthread_create(&t[i], NULL, worker, (void *)i) == 0);
	for (long r = 0; r < rounds; r++) {
		void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
		plugin_fn *add;
		long got;

		if (h == NULL) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			exit(1);
		}
		add = (plugin_fn *)dlsym(h, "plugin_add");
		CHECK(add != NULL);
		__transaction_atomic
		{
			got = add(&plugged, 1);
		}
		CHECK(got == r + 1);
		CHECK(dlclose(h) == 0);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 1; i < n; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	CHECK(plugged == rounds);
}

int main(int argc, char **argv)
{
	int n = nthreads_arg(argc, argv);

	if (argc > 2)
		reload(n, argv[2], argc > 3 ? atol(argv[3]) : 200);
	else
		run_threads(n, worker);
	CHECK(account[0] + account[1] == 1000000);
	printf("clone: %d threads%s: ok\n", n, argc > 2 ? ", reloading" : "");
	return 0;
}
