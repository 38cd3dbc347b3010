// SPDX-License-Identifier: MIT
// -fgnu-tm test (C++): new/delete and exceptions thrown out of transactions.
#include <cstring>
#include <stdexcept>

#include "itm-test.h"

#define ITERS 2000

extern "C" const char *_ITM_libraryVersion(void);

/*
 * An exception leaving an atomic transaction commits it (GCC calls
 * _ITM_commitTransactionEH on the way out), so every increment made before
 * a throw stays; objects made with new in one transaction and deleted in
 * another (operator new and sized delete clones) must balance.
 *
 * The exception object itself is built by the transaction and read by the
 * C++ runtime directly, before and after the commit: each kind of object
 * below must reach its catch intact.  A pointer, whose stale value would
 * be the previous throw's; std::logic_error and std::runtime_error, built
 * by libstdc++'s transactional constructors (part with barriers, part
 * with direct stores), whose what() must be the message thrown; a class
 * with a virtual base, which the personality routine can only upcast by
 * reading the object's vtable.  Under ltx only (libitm's instrumented
 * mode crashes on it), a catch inside the transaction as well: the
 * handler writes the caught object and rethrows it out of the
 * transaction, or the object is caught, read and freed inside it.
 */
static long counter, live_objects;
static int *slot[64];

struct Cell {
	long v;
};
static Cell cells[64][16];

struct VBase {
	long v;
	VBase(long x) : v(x)
	{
	}
	virtual ~VBase()
	{
	}
};
struct Left : virtual VBase {
	long l;
	Left(long x) : VBase(x), l(x + 1)
	{
	}
};
struct Right : virtual VBase {
	long r;
	Right(long x) : VBase(x), r(x + 2)
	{
	}
};
struct Diamond : Left, Right {
	long d;
	Diamond(long x) : VBase(x), Left(x), Right(x), d(x + 3)
	{
	}
};

static const char *const messages[4] = {
	"a logic error", "runtime", "a somewhat longer message, past 16 bytes",
	"!"
};

static bool under_ltx;

/* strlen, callable in a transaction. */
__attribute__((transaction_safe)) static long length(const char *s)
{
	long n = 0;

	while (s[n] != 0)
		n++;
	return n;
}

/* Whether a Diamond caught as its virtual base b is the one made of i. */
static bool diamond_ok(VBase &b, long i, long extra)
{
	Diamond *d = dynamic_cast<Diamond *>(&b);

	return b.v == i && d != nullptr && d->l == i + 1 && d->r == i + 2 &&
	       d->d == i + 3 + extra;
}

/* What each thread saw (not locals: the transactions' begins return
 * twice, and locals changed between would be clobbered). */
static struct tally {
	long caught, bad_ptr, bad_logic, bad_runtime, bad_vbase, bad_inside;
} tallies[64];

static void *worker(void *arg)
{
	long id = (long)arg;
	struct tally *r = &tallies[id];

	for (int i = 0; i < ITERS; i++) {
		Cell *want = &cells[id][i % 16];
		const char *msg = messages[i % 4];

		__transaction_atomic
		{
			slot[id] = new int(i);
			live_objects++;
		}
		__transaction_atomic
		{
			delete slot[id];
			slot[id] = nullptr;
			live_objects--;
		}
		try {
			__transaction_atomic
			{
				counter++;
				if (counter > 0)
					throw 42;
			}
		} catch (int v) {
			r->caught += v == 42;
		}
		try {
			__transaction_atomic
			{
				counter++;
				if (counter > 0)
					throw want;
			}
		} catch (Cell *p) {
			r->bad_ptr += p != want;
		}
		try {
			__transaction_atomic
			{
				counter++;
				if (counter > 0)
					throw std::logic_error(msg);
			}
		} catch (std::logic_error &e) {
			r->bad_logic += strcmp(e.what(), msg) != 0;
		}
		try {
			__transaction_atomic
			{
				counter++;
				if (counter > 0)
					throw std::runtime_error(msg);
			}
		} catch (std::exception &e) {
			r->bad_runtime += strcmp(e.what(), msg) != 0;
		}
		try {
			__transaction_atomic
			{
				counter++;
				if (counter > 0)
					throw Diamond(i);
			}
		} catch (VBase &b) {
			r->bad_vbase += !diamond_ok(b, i, 0);
		}
		if (!under_ltx) {
			__transaction_atomic
			{
				counter += 2; /* what the two below add */
			}
			continue;
		}
		try {
			__transaction_atomic
			{
				try {
					counter++;
					if (counter > 0)
						throw Diamond(i);
				} catch (Diamond &d) {
					d.d += 100;
					throw;
				}
			}
		} catch (VBase &b) {
			r->bad_inside += !diamond_ok(b, i, 100);
		}
		Cell *got = nullptr;
		long msg_len = 0;
		__transaction_atomic
		{
			try {
				counter++;
				if (counter > 0)
					throw want;
			} catch (Cell *p) {
				got = p;
			}
			try {
				if (counter > 0)
					throw std::runtime_error(msg);
			} catch (std::runtime_error &e) {
				/* Not virtual: libstdc++ registers no
				 * clone table for an indirect call. */
				msg_len = length(e.std::runtime_error::what());
			}
		}
		r->bad_inside += got != want || msg_len != length(msg);
	}
	CHECK(r->caught == ITERS);
	CHECK(r->bad_ptr == 0);
	CHECK(r->bad_logic == 0);
	CHECK(r->bad_runtime == 0);
	CHECK(r->bad_vbase == 0);
	CHECK(r->bad_inside == 0);
	return nullptr;
}

int main(int argc, char **argv)
{
	int n = nthreads_arg(argc, argv);

	under_ltx = strncmp(_ITM_libraryVersion(), "ltx", 3) == 0;
	run_threads(n, worker);
	CHECK(counter == (long)n * ITERS * 7);
	CHECK(live_objects == 0);
	printf("exceptions: %d threads: ok\n", n);
	return 0;
}
