/* SPDX-License-Identifier: MIT */
/*
 * The fast paths' reads of a line the transaction holds, against an
 * irrevocable transaction that takes the line (invisible mode; the
 * visible mode has no fast path).
 *
 * An irrevocable transaction W that finds a line held by a live
 * transaction R dooms R and takes the line (the progress rule of
 * DESIGN.md, cd/invisible.c).  R may be inside a fast path at that moment,
 * between finding the line its own and reading memory under it.  If R
 * then read memory, it would see W's bytes as if it still held the line:
 * a live transaction reading a word twice with two values, which
 * check_history once saw under ASan ("word read twice in a live
 * transaction").  The runtime is built here with a hook in that window
 * (LTX_TEST_FAST_READ_HOOK): R stops in it while W takes the line, writes
 * the word and commits.  R's load must then return the word as R had it
 * before W (from 0x0303, the old value) or fail (0), never anything of
 * W's (0x0707), and R must not commit.
 */
#include <check.h>
#include <ltx/tm.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "itm/libitm.h"
#include "ltx-test.h"

/* Declared here as GCC's code declares them (they are generated). */
uint64_t _ITM_RfWU8(const uint64_t *p);
void _ITM_WU8(uint64_t *p, uint64_t v);

#define PR_INSTR   0x01u
#define PR_UNINSTR 0x02u

#define OLD_VALUE 0x0303u
#define W_VALUE	  0x0707u

void (*ltx_test_fast_read_hook)(const void *addr);

static tm_word_t line[8] __attribute__((aligned(64)));
static tm_word_t elsewhere[8] __attribute__((aligned(64)));
static sem_t in_window, w_done;
static __thread bool armed;	/* R's next fast-path read stops */
static volatile int hook_stops; /* how often R stopped */

/* R, in the window: let W run to its commit, then go on. */
static void stop_in_window(const void *addr)
{
	(void)addr;
	if (!armed)
		return;
	armed = false;
	hook_stops++;
	sem_post(&in_window);
	while (sem_wait(&w_done) != 0)
		;
}

enum how {
	RAW_WORD, /* tm_st of word 0, tm_lt of word 1 (a lone word kept aside)
		   */
	RAW_BYTE, /* tm_st_u8 of word 0, tm_lt of word 1 (bytes and mask) */
	RAW_SAME, /* tm_st_u8 of word 1, tm_lt of word 1 (merged with memory) */
	LTX_NEW,  /* tm_ltx of word 1 on a line new to R */
	ITM_RFW,  /* GCC's read-for-write barrier of word 1 */
	NHOW
};

struct holder {
	enum how how;
	uint64_t seen;	/* R's read of word 1 in the window */
	bool committed; /* R's tm_commit, for the tm_* cases */
	int runs;	/* R's attempts, for the GCC case */
};

static void *holder(void *arg)
{
	struct holder *r = arg;

	switch (r->how) {
	case RAW_WORD:
		tm_st(&line[0], 99);
		break;
	case RAW_BYTE:
		tm_st_u8(&line[0], 5);
		break;
	case RAW_SAME:
		tm_st_u8(&line[1], 5);
		break;
	case LTX_NEW:
		/* A first operation elsewhere: a thread's first transaction
		 * begins on the slow path. */
		(void)tm_lt(&elsewhere[0]);
		break;
	default:
		break;
	}
	if (r->how == ITM_RFW) {
		volatile int runs = 0;
		uint64_t x;

		(void)_ITM_beginTransaction(PR_INSTR | PR_UNINSTR);
		runs++;
		armed = runs == 1;
		x = _ITM_RfWU8(&line[1]);
		armed = false;
		if (runs == 1)
			r->seen = x;
		_ITM_WU8(&line[2], x);
		_ITM_commitTransaction();
		r->runs = runs;
		return NULL;
	}
	armed = true;
	r->seen = r->how == LTX_NEW ? tm_ltx(&line[1]) : tm_lt(&line[1]);
	armed = false;
	r->committed = tm_commit();
	return NULL;
}

START_TEST(test_fast_read_of_a_taken_line_never_sees_the_taker)
{
	struct holder r = { .how = (enum how)_i };
	uint64_t expect;
	pthread_t t;

	ck_assert_int_eq(tm_config_set("LTX_MODE", "invisible"), 0);
	/* GCC transactions instrumented, not run serially. */
	ck_assert_int_eq(tm_config_set("LTX_ITM_SERIAL", "never"), 0);
	line[0] = 0;
	line[1] = OLD_VALUE;
	line[2] = 0;
	ltx_test_fast_read_hook = stop_in_window;
	ck_assert_int_eq(sem_init(&in_window, 0, 0), 0);
	ck_assert_int_eq(sem_init(&w_done, 0, 0), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, holder, &r), 0);
	while (sem_wait(&in_window) != 0)
		;
	/* W: R holds the line and is inside its read. */
	ck_assert(tm_irrevocable());
	tm_st(&line[1], W_VALUE);
	ck_assert(tm_commit());
	sem_post(&w_done);
	ck_assert_int_eq(pthread_join(t, NULL), 0);

	ck_assert_int_eq(hook_stops, 1);
	/* R's own byte over the old value, for RAW_SAME. */
	expect = r.how == RAW_SAME ? (OLD_VALUE & ~0xffu) | 5 : OLD_VALUE;
	ck_assert_msg(r.seen == expect || r.seen == 0,
		      "R read %#lx after W took the line and wrote %#x "
		      "(R's value before: %#lx)",
		      (unsigned long)r.seen, W_VALUE, (unsigned long)expect);
	ck_assert_uint_eq(line[1], W_VALUE);
	if (r.how == ITM_RFW) {
		/* Doomed: it ran again, and then read W's value. */
		ck_assert_int_eq(r.runs, 2);
		ck_assert_uint_eq(line[2], W_VALUE);
	} else {
		ck_assert(!r.committed);
		ck_assert_uint_eq(line[0], 0);
	}
	sem_destroy(&in_window);
	sem_destroy(&w_done);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fast_read_race");
	TCase *tc = tcase_create("fast_read_race");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc,
			    test_fast_read_of_a_taken_line_never_sees_the_taker,
			    0, NHOW);
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
