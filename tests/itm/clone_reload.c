/* SPDX-License-Identifier: MIT */
/* -fgnu-tm test: clone tables that come and go while lookups run. */
#include <dlfcn.h>
#include <string.h>

#include "itm-test.h"

/*
 * clone_reload THREADS PLUGIN.so [ROUNDS]
 *
 * THREADS-1 threads move money between two accounts with transactions
 * that call transaction_safe functions through pointers (a clone lookup
 * each), nonstop, while the main thread loads PLUGIN.so (built with
 * -fgnu-tm: its crtbegin.o registers its clone table, dlclose
 * deregisters it) ROUNDS times, and each time calls its plugin_add
 * through a pointer in a transaction.  A lookup that misses a registered
 * table is fatal; one that finds a stale clone would corrupt the totals;
 * a table freed under a lookup crashes (under ASan, reports).
 */
static long account[2] = { 1000000, 0 };
static long plugged;
static volatile int stop;

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

static void *mover(void *arg)
{
	unsigned long seed = 4321 + (unsigned long)arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		unsigned long r = next_rand(&seed);
		safe_op *op = ops[r & 1];
		long a, b;

		__transaction_atomic {
			op((long)(r >> 40) % 100);
		}
		__transaction_atomic {
			a = account[0];
			b = account[1];
		}
		CHECK(a + b == 1000000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = nthreads_arg(argc, argv);
	long rounds = argc > 3 ? atol(argv[3]) : 200;
	pthread_t t[64];

	CHECK(argc > 2 && rounds > 0);
	for (long i = 1; i < n; i++)
		CHECK(pthread_create(&t[i], NULL, mover, (void *)i) == 0);
	for (long r = 0; r < rounds; r++) {
		void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
		plugin_fn *add;
		long got;

		if (h == NULL) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 1;
		}
		add = (plugin_fn *)dlsym(h, "plugin_add");
		CHECK(add != NULL);
		__transaction_atomic {
			got = add(&plugged, 1);
		}
		CHECK(got == r + 1);
		CHECK(dlclose(h) == 0);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 1; i < n; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	CHECK(account[0] + account[1] == 1000000 && plugged == rounds);
	printf("clone_reload: %d threads: ok\n", n);
	return 0;
}
