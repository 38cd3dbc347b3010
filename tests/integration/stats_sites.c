/* SPDX-License-Identifier: MIT */
/* ltxstat-test.sh's program: aborts at three sites, two in one function. */
#include <ltx/tm.h>

static tm_word_t cell;

/*
 * Each site must be one call instruction whatever the compiler.  n comes
 * from a volatile, so that no compiler knows it: given the constant 3,
 * GCC made a clone of two_sites for it and clang unrolled its loops, one
 * call per abort.  NOT_LAST keeps tm_abort() out of tail position (a tail
 * jump would report the caller's site).
 */
#define NOT_LAST() __asm__ __volatile__("" ::: "memory")
static volatile int three = 3;

/* Two sites in one function: told apart only by their offsets when the
 * program has no line information. */
__attribute__((noinline)) static void two_sites(int n)
{
	for (int i = 0; i < n; i++) {
		tm_st(&cell, 1);
		tm_abort();
	}
	for (int i = 0; i < n + 2; i++) {
		tm_st(&cell, 2);
		tm_abort();
	}
	NOT_LAST();
}

__attribute__((noinline)) static void one_site(void)
{
	tm_st(&cell, 3);
	tm_abort();
	NOT_LAST();
}

int main(void)
{
	two_sites(three); /* 3 aborts at the first site, 5 at the second */
	one_site();
	tm_st(&cell, 4);
	return tm_commit() ? 0 : 1;
}
