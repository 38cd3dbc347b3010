// SPDX-License-Identifier: MIT
// The public headers compile as C++ and the macros work on C++ types.
#include <ltx/isa.h>
#include <ltx/tm.h>

#include <cstdio>

static long counter;
static int *ptr;

int main()
{
	static int target;
	long v;

	do {
		v = TM_LTX(counter);
		TM_ST(counter, v + 1);
		TM_ST(ptr, &target);
	} while (!tm_commit());
	do {
		ST(&counter, LTX(counter) + 1);
	} while (!COMMIT());
	if (counter != 2 || ptr != &target) {
		std::fprintf(stderr, "cxx_headers: wrong result\n");
		return 1;
	}
	return 0;
}
