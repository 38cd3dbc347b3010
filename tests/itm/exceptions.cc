// SPDX-License-Identifier: MIT
// -fgnu-tm test (C++): new/delete and exceptions thrown out of transactions.
#include "itm-test.h"

#define ITERS 2000

/*
 * An exception leaving an atomic transaction commits it (GCC calls
 * _ITM_commitTransactionEH on the way out), so every increment made before
 * a throw stays; objects made with new in one transaction and deleted in
 * another (operator new and sized delete clones) must balance.
 */
static long counter, live_objects;
static int *slot[64];

static void *worker(void *arg)
{
	long id = (long)arg;
	long caught = 0;

	for (int i = 0; i < ITERS; i++) {
		__transaction_atomic {
			slot[id] = new int(i);
			live_objects++;
		}
		__transaction_atomic {
			delete slot[id];
			slot[id] = nullptr;
			live_objects--;
		}
		try {
			__transaction_atomic {
				counter++;
				if (counter > 0)
					throw 42;
			}
		} catch (int v) {
			caught += v == 42;
		}
	}
	CHECK(caught == ITERS);
	return nullptr;
}

int main(int argc, char **argv)
{
	int n = nthreads_arg(argc, argv);

	run_threads(n, worker);
	CHECK(counter == (long)n * ITERS);
	CHECK(live_objects == 0);
	printf("exceptions: %d threads: ok\n", n);
	return 0;
}
