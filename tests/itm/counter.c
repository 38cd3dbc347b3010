/* SPDX-License-Identifier: MIT */
/* -fgnu-tm test: shared counters of every integer and float size. */
#include <stdint.h>

#include "itm-test.h"

#define ITERS 20000

static struct {
	uint64_t u64;
	uint32_t u32;
	uint16_t u16;
	uint8_t u8;
	double d;
	float f;
	long double e;
} c;

/* Two words that must always be equal. */
static long pair[2];

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		long a, b;

		__transaction_atomic
		{
			c.u64++;
			c.u32 += 3;
			c.u16++;
			c.u8++;
			c.d += 1.0;
			c.f += 1.0f;
			c.e += 1.0L;
			pair[0]++;
			pair[1] = pair[0];
		}
		__transaction_atomic
		{
			a = pair[0];
			b = pair[1];
		}
		CHECK(a == b);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = nthreads_arg(argc, argv);
	uint64_t total = (uint64_t)n * ITERS;

	run_threads(n, worker);
	CHECK(c.u64 == total);
	CHECK(c.u32 == (uint32_t)(3 * total));
	CHECK(c.u16 == (uint16_t)total);
	CHECK(c.u8 == (uint8_t)total);
	CHECK(c.d == (double)total);
	CHECK(c.f == (float)total);
	CHECK(c.e == (long double)total);
	CHECK(pair[0] == (long)total && pair[1] == (long)total);
	printf("counter: %d threads, %llu increments: ok\n", n,
	       (unsigned long long)total);
	return 0;
}
