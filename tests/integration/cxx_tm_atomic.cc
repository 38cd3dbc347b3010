// SPDX-License-Identifier: MIT
// TM_ATOMIC in C++ must not compile: tests/integration/cxx-check.sh
// expects the compiler to stop at the line marked below with a message that
// names TM_ATOMIC(3).
#include <ltx/tm.h>

#include <string>

static tm_word_t count;

int main()
{
	std::string s("a destructor a restart would skip");

	TM_ATOMIC { // cxx-check: the error is here
		tm_st(&count, tm_lt(&count) + s.size());
	}
	return 0;
}
