/* SPDX-License-Identifier: MIT */
/* ltxstat-test.sh's program: aborts at three sites, two in one function. */
#include <ltx/tm.h>

static tm_word_t cell;

/* Two sites in one function: told apart only by their offsets when the
 * program has no line information. */
__attribute__((noinline, noclone)) static void two_sites(int n)
{
	for (int i = 0; i < n; i++) {
		tm_st(&cell, 1);
		tm_abort();
	}
	for (int i = 0; i < n + 2; i++) {
		tm_st(&cell, 2);
		tm_abort();
	}
}

__attribute__((noinline, noclone)) static void one_site(void)
{
	tm_st(&cell, 3);
	tm_abort();
}

int main(void)
{
	two_sites(3); /* 3 aborts at the first site, 5 at the second */
	one_site();
	tm_st(&cell, 4);
	return tm_commit() ? 0 : 1;
}
