/* SPDX-License-Identifier: MIT */
/*
 * opt-levels.sh's program, built at every optimization level, with and
 * without LTX_INLINE: the header's paths as a program compiled that way
 * runs them.  Four threads (more than the machine's cores) add to two
 * words, one in TM_ATOMIC blocks and one in tm_lt/tm_commit retry loops,
 * read back what they stored by every load form (read after write), and
 * count in a misaligned 8-byte word that moves between two places of a
 * byte buffer; the totals must come out exact.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <ltx/tm.h>

#define THREADS 4
#define ROUNDS	20000

static uint64_t words[8] __attribute__((aligned(64)));
static tm_word_t counter __attribute__((aligned(64)));
/* Bytes 3..10 and 67..74: a count at a misaligned address, in one of two
 * places (the other holds 0); each transaction adds one and moves it. */
static unsigned char buf[128] __attribute__((aligned(64)));
static volatile int bad;
static pthread_barrier_t start;

/* The block in a function of its own: nothing of the caller's lives
 * across its restart point (TM_ATOMIC(3), the setjmp rule).  Returns
 * whether the committed run read back another value than it stored. */
static int atomic_add(void)
{
	volatile int wrong; /* written in the block, read after it */

	TM_ATOMIC {
		uint64_t a = TM_LT(words[0]);

		wrong = 0;
		TM_ST(words[0], a + 1);
		/* Read after write, by each load form. */
		if (TM_LT(words[0]) != a + 1 || tm_lt(&words[0]) != a + 1 ||
		    tm_lt_u64(&words[0]) != a + 1)
			wrong = 1;
		TM_ST(words[1], TM_LT(words[1]) + 2);
	}
	return wrong;
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start); /* all at once: they conflict */
	for (int i = 0; i < ROUNDS; i++) {
		int wrong = 0;

		if (atomic_add())
			bad = 1;
		for (;;) {
			unsigned char *to = &buf[(i & 1) ? 3 : 67];
			unsigned char *other = &buf[(i & 1) ? 67 : 3];
			uint64_t v = tm_lt_u64(&buf[3]) + tm_lt_u64(&buf[67]);
			tm_word_t c = tm_lt(&counter);

			wrong = 0;
			tm_st_u64(to, v + 1);
			tm_st_u64(other, 0);
			tm_st(&counter, c + 1);
			if (tm_lt(&counter) != c + 1 ||
			    tm_lt_u64(to) != v + 1 || tm_lt_u64(other) != 0)
				wrong = 1;
			if (tm_commit())
				break;
		}
		if (wrong)
			bad = 1;
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	uint64_t a, b, total = (uint64_t)THREADS * ROUNDS;

	pthread_barrier_init(&start, NULL, THREADS);
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0) {
			perror("pthread_create");
			return 2;
		}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	memcpy(&a, &buf[3], 8);
	memcpy(&b, &buf[67], 8);
	if (bad || words[0] != total || words[1] != 2 * total ||
	    counter != total || a + b != total || (a != 0 && b != 0)) {
		fprintf(stderr,
			"wrong: read after write %s; words %llu %llu, "
			"counter %llu, moved value %llu+%llu (want %llu)\n",
			bad ? "wrong" : "right", (unsigned long long)words[0],
			(unsigned long long)words[1],
			(unsigned long long)counter, (unsigned long long)a,
			(unsigned long long)b, (unsigned long long)total);
		return 1;
	}
	printf("ok: %llu transactions of each kind\n",
	       (unsigned long long)total);
	return 0;
}
