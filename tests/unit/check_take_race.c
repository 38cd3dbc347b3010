/* SPDX-License-Identifier: MIT */
/*
 * Races with an irrevocable transaction that takes a line from a
 * transaction it dooms (the progress rule of DESIGN.md), each window held
 * open by a hook in a test-only build of the runtime (LTX_TEST_HOOKS,
 * cd/cd.h).
 *
 * fast_read (invisible mode; the visible mode has no fast path).  An
 * irrevocable transaction W that finds a line held by a live transaction
 * R dooms R and takes the line.  R may be inside a fast path at that
 * moment, between finding the line its own and reading memory under it.
 * If R then read memory, it would see W's bytes as if it still held the
 * line: a live transaction reading a word twice with two values, which
 * check_history once saw under ASan ("word read twice in a live
 * transaction").  R stops in the window while W takes the line, writes
 * the word and commits.  R's load must then return the word as R had it
 * before W (from 0x0303, the old value) or fail (0), never anything of
 * W's (0x0707), and R must not commit.
 *
 * vis_rfo (visible mode).  A writer's T_RFO takes the line's owner word
 * by CAS, then looks for readers; finding one, it lets the word go and
 * fails.  Between the two, an irrevocable transaction may doom the writer
 * and take the word from it.  The writer's letting go must then leave the
 * word alone: when it stored 0 there, the irrevocable transaction lost
 * the line while it went on writing it, a third transaction took it too,
 * and both wrote it back (tests/itm/clone.c saw money made and lost).
 */
#include <check.h>
#include <ltx/tm.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
void (*ltx_test_vis_rfo_hook)(const void *addr);

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

/*
 * vis_rfo: R reads the line (S); W's store takes the owner word and stops
 * before looking at the readers; I, irrevocable, dooms W, takes the word,
 * dooms R and goes on; W then sees R's mark and fails.  Once R has let go
 * too, the line must still be I's: X's store must fail, and I's value
 * must be the one left.
 */
static tm_word_t vline[8] __attribute__((aligned(64)));
static sem_t r_read, r_go, w_in_window, w_go;
static __thread bool w_armed;

static void w_stop_in_window(const void *addr)
{
	(void)addr;
	if (!w_armed)
		return;
	w_armed = false;
	hook_stops++;
	sem_post(&w_in_window);
	while (sem_wait(&w_go) != 0)
		;
}

static void *vis_reader(void *arg)
{
	bool *committed = arg;

	(void)tm_lt(&vline[0]);
	sem_post(&r_read);
	while (sem_wait(&r_go) != 0)
		;
	*committed = tm_commit();
	return NULL;
}

static void *vis_writer(void *arg)
{
	bool *committed = arg;

	w_armed = true;
	tm_st(&vline[1], 0x11);
	w_armed = false;
	*committed = tm_commit();
	return NULL;
}

static void *vis_third(void *arg)
{
	bool *committed = arg;

	tm_st(&vline[3], 0x33);
	*committed = tm_commit();
	return NULL;
}

START_TEST(test_vis_rfo_failing_writer_leaves_a_taken_line_alone)
{
	bool r_ok = true, w_ok = true, x_ok = true;
	pthread_t r, w, x;

	ck_assert_int_eq(tm_config_set("LTX_MODE", "visible"), 0);
	memset(vline, 0, sizeof(vline));
	hook_stops = 0;
	ltx_test_vis_rfo_hook = w_stop_in_window;
	ck_assert_int_eq(sem_init(&r_read, 0, 0), 0);
	ck_assert_int_eq(sem_init(&r_go, 0, 0), 0);
	ck_assert_int_eq(sem_init(&w_in_window, 0, 0), 0);
	ck_assert_int_eq(sem_init(&w_go, 0, 0), 0);

	ck_assert_int_eq(pthread_create(&r, NULL, vis_reader, &r_ok), 0);
	while (sem_wait(&r_read) != 0)
		;
	ck_assert_int_eq(pthread_create(&w, NULL, vis_writer, &w_ok), 0);
	while (sem_wait(&w_in_window) != 0)
		;
	/* I: W holds the owner word, R the reader mark. */
	ck_assert(tm_irrevocable());
	tm_st(&vline[2], 0x22);
	sem_post(&w_go); /* W sees R's mark and lets go */
	ck_assert_int_eq(pthread_join(w, NULL), 0);
	sem_post(&r_go); /* R, doomed, lets go of its mark */
	ck_assert_int_eq(pthread_join(r, NULL), 0);
	ck_assert_int_eq(pthread_create(&x, NULL, vis_third, &x_ok), 0);
	ck_assert_int_eq(pthread_join(x, NULL), 0);
	ck_assert(tm_commit());

	ck_assert_int_eq(hook_stops, 1);
	ck_assert_msg(!w_ok, "W committed after I took its line");
	ck_assert_msg(!r_ok, "R committed after I took its line");
	ck_assert_msg(!x_ok, "X took the line while irrevocable I held it "
			     "(W's failure let go of I's owner word)");
	ck_assert_uint_eq(vline[1], 0);
	ck_assert_uint_eq(vline[2], 0x22);
	ck_assert_uint_eq(vline[3], 0);
	ltx_test_vis_rfo_hook = NULL;
	sem_destroy(&r_read);
	sem_destroy(&r_go);
	sem_destroy(&w_in_window);
	sem_destroy(&w_go);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("take_race");
	TCase *tc = tcase_create("fast_read");
	TCase *tv = tcase_create("vis_rfo");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc,
			    test_fast_read_of_a_taken_line_never_sees_the_taker,
			    0, NHOW);
	suite_add_tcase(s, tc);
	tcase_set_timeout(tv, 30);
	tcase_add_test(tv,
		       test_vis_rfo_failing_writer_leaves_a_taken_line_alone);
	suite_add_tcase(s, tv);
	return ltx_test_run(s);
}
