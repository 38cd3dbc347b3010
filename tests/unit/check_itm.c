/* SPDX-License-Identifier: MIT */
/* The libitm ABI called directly: states, rollback, bulk copies, clones. */
#include <check.h>
#include <ltx/tm.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ltx/tm.h>

#include "itm/libitm.h"
#include "ltx-test.h"

/* Declared here as GCC's code declares them (they are generated). */
uint64_t _ITM_RU8(const uint64_t *p);
void _ITM_WU8(uint64_t *p, uint64_t v);
void _ITM_LU8(const uint64_t *p);
void _ITM_memcpyRtWt(void *dst, const void *src, size_t n);
void _ITM_memmoveRtWt(void *dst, const void *src, size_t n);
void _ITM_memsetW(void *dst, int c, size_t n);
typedef long v2 __attribute__((vector_size(16)));
v2 _ITM_RM128(const v2 *p);
void _ITM_WM128(v2 *p, v2 v);

#define PR_INSTR    0x01u
#define PR_UNINSTR  0x02u
#define PR_NO_ABORT 0x08u
#define A_INSTR	    0x01u
#define A_UNINSTR   0x02u
#define A_RESTORE   0x08u
#define A_ABORT	    0x10u

/* Each test runs in its own process (CK_FORK): choose the path first. */
static void instrumented_only(void)
{
	/* The setting is read from the environment once, at load time. */
	ck_assert_int_eq(tm_config_set("LTX_ITM_SERIAL", "never"), 0);
}

START_TEST(test_outside_a_transaction_state_is_neutral)
{
	ck_assert_int_eq(_ITM_inTransaction(), outsideTransaction);
	ck_assert_uint_eq(_ITM_getTransactionId(), _ITM_noTransactionId);
	ck_assert(_ITM_versionCompatible(_ITM_VERSION_NO));
	ck_assert(!_ITM_versionCompatible(_ITM_VERSION_NO + 1));
	ck_assert_ptr_nonnull(_ITM_libraryVersion());
}
END_TEST

START_TEST(test_cancel_returns_again_with_abort_and_undoes_everything)
{
	static uint64_t shared;
	volatile uint64_t private_word = 5;
	volatile int entries = 0;
	uint32_t a;

	if (_i == 1)
		instrumented_only();
	shared = 1;
	a = _ITM_beginTransaction(PR_INSTR | PR_UNINSTR);
	entries++;
	if (!(a & A_ABORT)) {
		ck_assert_uint_eq(a & (A_INSTR | A_UNINSTR), A_INSTR);
		ck_assert_int_eq(_ITM_inTransaction(), inRetryableTransaction);
		ck_assert_uint_gt(_ITM_getTransactionId(),
				  _ITM_noTransactionId);
		_ITM_WU8(&shared, 2);
		ck_assert_uint_eq(_ITM_RU8(&shared), 2);
		_ITM_LU8((const uint64_t *)&private_word);
		private_word = 9;
		_ITM_abortTransaction(userAbort);
	}
	ck_assert_int_eq(entries, 2);
	ck_assert_uint_eq(a, A_ABORT | A_RESTORE);
	ck_assert_uint_eq(shared, 1);
	ck_assert_uint_eq(private_word, 5);
	ck_assert_int_eq(_ITM_inTransaction(), outsideTransaction);
}
END_TEST

/* A nested transaction that may cancel makes an ltx transaction restart
 * (closed nesting runs serially): the restart must restore the logged
 * thread-private memory and return with a_restoreLiveVariables. */
START_TEST(test_restart_restores_logged_memory)
{
	static uint64_t shared;
	volatile uint64_t private_word = 5;
	volatile int entries = 0;
	volatile uint32_t second = 0;
	uint32_t a;

	instrumented_only();
	a = _ITM_beginTransaction(PR_INSTR | PR_UNINSTR | PR_NO_ABORT);
	if (entries++ == 0) {
		_ITM_LU8((const uint64_t *)&private_word);
		private_word = 9;
		_ITM_WU8(&shared, 3);
		_ITM_beginTransaction(PR_INSTR); /* restarts the outer one */
		ck_abort_msg("a cancellable nested begin did not restart");
	}
	second = a;
	ck_assert_uint_eq(private_word, 5);
	ck_assert_uint_eq(second & A_RESTORE, A_RESTORE);
	ck_assert_uint_eq(shared, 0); /* the buffered store was dropped */
	_ITM_commitTransaction();
	ck_assert_int_eq(entries, 2);
}
END_TEST

/*
 * GCC stores to a local of the function that began the transaction with a
 * barrier (a callee's pointer, or an inlined one) and then reads it
 * directly, even with memcpy: a store barrier to this thread's stack must
 * reach memory at once, and be undone if the transaction is cancelled.
 */
START_TEST(test_stores_to_own_stack_are_visible_at_once_and_undone)
{
	volatile uint64_t local = 1;
	/* 16 bytes (two words, one vector barrier), as GCC stores two longs
	 * side by side. */
	volatile v2 pair = { 7, 8 };
	volatile int entries = 0;
	uint64_t copy;
	long two[2];
	v2 back;
	uint32_t a;

	if (_i == 1)
		instrumented_only();
	a = _ITM_beginTransaction(PR_INSTR | PR_UNINSTR);
	if (entries++ == 0) {
		_ITM_WU8((uint64_t *)&local, 42);
		memcpy(&copy, (const void *)&local, sizeof(copy));
		ck_assert_uint_eq(copy, 42);
		ck_assert_uint_eq(_ITM_RU8((const uint64_t *)&local), 42);
		_ITM_WM128((v2 *)&pair, (v2){ 40, 41 });
		memcpy(two, (const void *)&pair, sizeof(two));
		ck_assert(two[0] == 40 && two[1] == 41);
		back = _ITM_RM128((const v2 *)&pair);
		ck_assert(back[0] == 40 && back[1] == 41);
		_ITM_abortTransaction(userAbort);
	}
	ck_assert_uint_eq(a & A_ABORT, A_ABORT);
	ck_assert_uint_eq(local, 1);
	memcpy(two, (const void *)&pair, sizeof(two));
	ck_assert(two[0] == 7 && two[1] == 8);
}
END_TEST

/*
 * The same, on a thread that took a descriptor another thread left: its
 * ABI state is made fresh for it, stack bounds included.  (An idle thread
 * takes the stack the first one left, so the second gets another.)  The
 * old code kept the first thread's bounds, and buffered the store.
 */
static uint64_t seen_on_stack;

static void *store_to_own_stack(void *arg)
{
	volatile uint64_t local = 1;
	uint64_t copy;

	(void)arg;
	_ITM_beginTransaction(PR_INSTR | PR_UNINSTR | PR_NO_ABORT);
	_ITM_WU8((uint64_t *)&local, 42);
	memcpy(&copy, (const void *)&local, sizeof(copy));
	_ITM_commitTransaction();
	seen_on_stack = copy;
	return NULL;
}

static volatile int idle_stop;

static void *idle(void *arg)
{
	while (!idle_stop)
		usleep(1000);
	return arg;
}

START_TEST(test_a_thread_taking_a_left_descriptor_has_its_own_stack)
{
	pthread_t t, idler;

	instrumented_only();
	ck_assert_int_eq(pthread_create(&t, NULL, store_to_own_stack, NULL), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_uint_eq(seen_on_stack, 42);
	ck_assert_int_eq(pthread_create(&idler, NULL, idle, NULL), 0);
	seen_on_stack = 0;
	ck_assert_int_eq(pthread_create(&t, NULL, store_to_own_stack, NULL), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	idle_stop = 1;
	ck_assert_int_eq(pthread_join(idler, NULL), 0);
	ck_assert_uint_eq(seen_on_stack, 42);
}
END_TEST

/* One committed transaction around one bulk operation. */
static void tx_memcpy(void *d, const void *s, size_t n)
{
	_ITM_beginTransaction(PR_INSTR | PR_NO_ABORT);
	_ITM_memcpyRtWt(d, s, n);
	_ITM_commitTransaction();
}

static void tx_memmove(void *d, const void *s, size_t n)
{
	_ITM_beginTransaction(PR_INSTR | PR_NO_ABORT);
	_ITM_memmoveRtWt(d, s, n);
	_ITM_commitTransaction();
}

static void tx_memset(void *d, int c, size_t n)
{
	_ITM_beginTransaction(PR_INSTR | PR_NO_ABORT);
	_ITM_memsetW(d, c, n);
	_ITM_commitTransaction();
}

static unsigned char *guarded; /* two pages between guard pages */
static long page;

static unsigned char *map_guarded(void)
{
	unsigned char *p;

	page = sysconf(_SC_PAGESIZE);
	p = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(p != MAP_FAILED);
	ck_assert_int_eq(mprotect(p, page, PROT_NONE), 0);
	ck_assert_int_eq(mprotect(p + 3 * page, page, PROT_NONE), 0);
	return p + page; /* two pages, guards on both sides */
}

/*
 * Copies of every length up to 300 and a long one, from a source that
 * ends at a guard page into a destination that ends at the other one, in
 * a committed transaction: every byte arrives, no byte around changes.
 */
START_TEST(test_bulk_copies_are_exact_up_to_guard_pages)
{
	static const size_t lens[] = { 0,  1,  7,   8,	 9,    63,
				       64, 65, 255, 300, 4095, 8000 };
	unsigned char *src, *dst;

	if (_i == 1)
		instrumented_only();
	guarded = map_guarded();
	src = guarded; /* first page */
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		size_t max = (size_t)page - 64,
		       n = lens[k] > max ? max : lens[k];
		unsigned char *d, *s = src + page - n;

		dst = guarded + 2 * page - n; /* ends at the top guard */
		for (long i = 0; i < page; i++) {
			src[i] = (unsigned char)(i * 7 + k);
			guarded[page + i] = 0xee;
		}
		d = dst;
		tx_memcpy(d, s, n);
		ck_assert(memcmp(d, s, n) == 0);
		for (unsigned char *q = d - 64; q < d; q++)
			ck_assert_uint_eq(*q, 0xee);

		tx_memset(d, 0x5a, n);
		for (size_t i = 0; i < n; i++)
			ck_assert_uint_eq(d[i], 0x5a);
		for (unsigned char *q = d - 64; q < d; q++)
			ck_assert_uint_eq(*q, 0xee);
	}
}
END_TEST

START_TEST(test_memmove_handles_overlap_both_ways)
{
	unsigned char buf[600], want[600];

	if (_i == 1)
		instrumented_only();
	for (int dir = 0; dir < 2; dir++) {
		for (int i = 0; i < 600; i++)
			buf[i] = want[i] = (unsigned char)i;
		if (dir == 0) {
			memmove(want + 3, want, 500);
			tx_memmove(buf + 3, buf, 500);
		} else {
			memmove(want, want + 3, 500);
			tx_memmove(buf, buf + 3, 500);
		}
		ck_assert(memcmp(buf, want, sizeof(buf)) == 0);
	}
}
END_TEST

static int unsafe_fn(int x)
{
	return x + 1;
}

static int safe_fn(int x)
{
	return x + 2;
}

static int safe_clone(int x)
{
	return x + 3;
}

START_TEST(test_clone_table_finds_clones_or_goes_irrevocable)
{
	static void *table[2][2];
	void *f;

	table[0][0] = (void *)safe_fn;
	table[0][1] = (void *)safe_clone;
	table[1][0] = (void *)safe_clone;
	table[1][1] = (void *)safe_clone; /* like a transaction_pure fn */
	instrumented_only();
	_ITM_registerTMCloneTable(table, 2);
	_ITM_beginTransaction(PR_INSTR | PR_NO_ABORT);
	f = _ITM_getTMCloneSafe((void *)safe_fn);
	ck_assert_ptr_eq(f, (void *)safe_clone);
	ck_assert_int_eq(_ITM_inTransaction(), inRetryableTransaction);
	f = _ITM_getTMCloneOrIrrevocable((void *)unsafe_fn);
	ck_assert_ptr_eq(f, (void *)unsafe_fn);
	ck_assert_int_eq(_ITM_inTransaction(), inIrrevocableTransaction);
	_ITM_commitTransaction();
	_ITM_deregisterTMCloneTable(table);
	ck_assert_int_eq(_ITM_inTransaction(), outsideTransaction);
}
END_TEST

static char order[8];
static int norder;

static void note(void *arg)
{
	order[norder++] = *(const char *)arg;
}

START_TEST(test_user_actions_run_in_order_on_commit_reversed_on_abort)
{
	static const char a = 'a', b = 'b', c = 'c', d = 'd';
	volatile int entries = 0;
	uint32_t r;

	if (_i == 1)
		instrumented_only();
	_ITM_beginTransaction(PR_INSTR | PR_NO_ABORT);
	_ITM_addUserCommitAction(note, _ITM_noTransactionId, (void *)&a);
	_ITM_addUserUndoAction(note, (void *)&d);
	_ITM_addUserCommitAction(note, _ITM_noTransactionId, (void *)&b);
	ck_assert_int_eq(norder, 0);
	_ITM_commitTransaction();
	ck_assert_int_eq(norder, 2);
	ck_assert(memcmp(order, "ab", 2) == 0);
	norder = 0;
	r = _ITM_beginTransaction(PR_INSTR);
	if (entries++ == 0) {
		_ITM_addUserUndoAction(note, (void *)&c);
		_ITM_addUserCommitAction(note, _ITM_noTransactionId,
					 (void *)&a);
		_ITM_addUserUndoAction(note, (void *)&d);
		_ITM_abortTransaction(userAbort);
	}
	ck_assert_uint_eq(r & A_ABORT, A_ABORT);
	ck_assert_int_eq(norder, 2);
	ck_assert(memcmp(order, "dc", 2) == 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("itm");
	TCase *tc = tcase_create("abi");

	tcase_add_test(tc, test_outside_a_transaction_state_is_neutral);
	/* Loop index 0: the default paths; 1: LTX_ITM_SERIAL=never. */
	tcase_add_loop_test(
		tc, test_cancel_returns_again_with_abort_and_undoes_everything,
		0, 2);
	tcase_add_test(tc, test_restart_restores_logged_memory);
	tcase_add_loop_test(
		tc, test_stores_to_own_stack_are_visible_at_once_and_undone, 0,
		2);
	tcase_add_test(
		tc, test_a_thread_taking_a_left_descriptor_has_its_own_stack);
	tcase_add_loop_test(tc, test_bulk_copies_are_exact_up_to_guard_pages, 0,
			    2);
	tcase_add_loop_test(tc, test_memmove_handles_overlap_both_ways, 0, 2);
	tcase_add_test(tc, test_clone_table_finds_clones_or_goes_irrevocable);
	tcase_add_loop_test(
		tc, test_user_actions_run_in_order_on_commit_reversed_on_abort,
		0, 2);
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
