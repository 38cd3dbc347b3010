// SPDX-License-Identifier: MIT
// The public headers compile as C++ (g++ -Wall -Wextra -pedantic, C++11
// and later: tests/cxx-check.sh) and their functions and macros work on
// C++ types.  TM_ATOMIC is C only: tests/cxx_tm_atomic.cc must not compile.
#include <ltx/isa.h>
#include <ltx/tm.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

static long counter;
static int *ptr;
static unsigned short half;
static char bytes[24];

static int handled;

static void handler(void *arg)
{
	handled += *static_cast<int *>(arg);
}

static int fail(const char *what)
{
	std::fprintf(stderr, "cxx_headers: %s\n", what);
	return 1;
}

int main()
{
	static int target;
	long v;
	char buf[64];
	struct tm_stats st;
	struct tm_mem_stats ms;
	struct tm_bus_stats bs;

	do {
		v = TM_LTX(counter);
		TM_ST(counter, v + 1);
		TM_ST(ptr, &target);
		TM_ST(half, (unsigned short)(TM_LT(half) + 2));
		tm_st_bytes(bytes, "transactional", 14);
	} while (!tm_commit());
	do {
		ST(&counter, LTX(counter) + 1);
		if (!VALIDATE())
			continue;
	} while (!COMMIT());
	if (counter != 2 || ptr != &target || half != 2 ||
	    std::strcmp(bytes, "transactional") != 0)
		return fail("wrong result");

	tm_lt(&counter);
	ABORT();
	if (tm_status() != TM_ABORT_EXPLICIT || tm_in_transaction() ||
	    TM_ABORT_CODE(tm_status()) != 0)
		return fail("ABORT() did not abort");

	long *p = static_cast<long *>(tm_malloc(sizeof(long)));
	if (p == NULL)
		return fail("tm_malloc failed");
	tm_st(p, 7);
	unsigned s = tm_line_state(p);
	if (TM_LINE_TX(s) != TM_XABORT || TM_LINE_MESI(s) != 'M')
		return fail("tm_line_state of a stored line");
	if (!tm_irrevocable() || !tm_commit() || *p != 7)
		return fail("irrevocable commit");
	tm_free(p);
	static int one = 1, ten = 10;
	if (tm_on_commit(handler, &one) != 0 ||
	    tm_on_abort(handler, &ten) != 0 || !tm_commit() || handled != 1)
		return fail("tm_on_commit or tm_on_abort");
	if (tm_mem_stats(&ms) != 0 || tm_mem_flush() != 0 ||
	    tm_bus_stats(&bs) != 0)
		return fail("tm_mem_stats, tm_mem_flush or tm_bus_stats");

	if (tm_config_get("LTX_MODE", buf, sizeof(buf)) != 0)
		return fail("tm_config_get");
	if (tm_config_set("LTX_NO_SUCH_SETTING", "1") != -1 || errno != EINVAL)
		return fail("tm_config_set accepted a bad name");
	std::memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	if (tm_stats_get(&st) != 0 || st.commits < 4)
		return fail("tm_stats_get");
	return 0;
}
