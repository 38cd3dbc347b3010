/* SPDX-License-Identifier: MIT */
/*
 * conflict-lines.sh's program: two threads update counters in one of three
 * ways, so that every conflict between them has one known class (issue 19).
 *
 * usage: conflict_lines true|false|alias ITERATIONS
 *   true   both increment the same word                   (true sharing)
 *   false  each its own word of one 64-byte line          (false sharing)
 *   alias  each a word of its own line, the two lines sharing an orec at
 *          the LTX_OREC_BITS in effect (choose a small one) (aliasing)
 * Prints the address of each thread's word and, for alias, the
 * LTX_OREC_BITS that would separate the two lines; exits 1 if a counter is
 * wrong at the end (an update lost).
 */
#include <ltx/tm.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cd/orec.h" /* ltx_orec_at: which lines share an orec */

#define LINES 256

static _Alignas(64) tm_word_t shared_word;
static _Alignas(64) tm_word_t one_line[8];
static _Alignas(64) tm_word_t many[LINES][8];

static tm_word_t *word[2];
static long iterations;
static int started;

static void *worker(void *arg)
{
	tm_word_t *p = word[(uintptr_t)arg];

	/* Start together, so that the two really overlap. */
	__atomic_fetch_add(&started, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&started, __ATOMIC_SEQ_CST) < 2)
		;
	for (long i = 0; i < iterations; i++) {
		do {
			tm_word_t v = tm_ltx(p);

			tm_st(p, v + 1);
		} while (!tm_commit());
	}
	return NULL;
}

/* The orec of addr at bits (ltx_orec_at's formula, any table base). */
static uintptr_t orec_index(const void *addr, unsigned bits)
{
	uintptr_t mask = (((uintptr_t)1 << bits) - 1) * sizeof(uintptr_t);

	return (uintptr_t)ltx_orec_at((uintptr_t *)sizeof(uintptr_t), mask,
				      LTX_OREC_MUL, addr);
}

/* Two lines of many[] on one orec at bits; prints the bits that would
 * separate them. */
static int pick_aliasing(unsigned bits)
{
	for (int i = 0; i < LINES; i++)
		for (int j = i + 1; j < LINES; j++) {
			unsigned sep;

			if (orec_index(many[i], bits) !=
			    orec_index(many[j], bits))
				continue;
			for (sep = bits + 1; sep <= LTX_OREC_BITS_MAX; sep++)
				if (orec_index(many[i], sep) !=
				    orec_index(many[j], sep))
					break;
			if (sep > LTX_OREC_BITS_MAX)
				continue; /* never apart: not this pair */
			word[0] = many[i];
			word[1] = many[j];
			printf("separating bits: %u\n", sep);
			return 0;
		}
	return -1;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	char buf[16];
	unsigned bits;
	int ok = 1;

	if (argc != 3 || (iterations = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: conflict_lines true|false|alias N\n");
		return 2;
	}
	if (tm_config_get("LTX_OREC_BITS", buf, sizeof(buf)) != 0)
		return 2;
	bits = (unsigned)atoi(buf);
	if (strcmp(argv[1], "true") == 0) {
		word[0] = word[1] = &shared_word;
	} else if (strcmp(argv[1], "false") == 0) {
		word[0] = &one_line[0];
		word[1] = &one_line[1];
	} else if (strcmp(argv[1], "alias") == 0) {
		if (pick_aliasing(bits) != 0) {
			fprintf(stderr,
				"no two lines share an orec at %u bits\n",
				bits);
			return 2;
		}
	} else {
		fprintf(stderr, "conflict_lines: unknown case %s\n", argv[1]);
		return 2;
	}
	printf("words: %p %p\n", (void *)word[0], (void *)word[1]);
	/* A transaction of the main thread first, as a program setting up
	 * its data would run: its descriptor and its handler twin (which has
	 * no reader slot) come first, so that no worker's descriptor id is
	 * its reader slot, and a holder looked up by the one for the other
	 * (the visible mode's owner word) is found wrong or not at all. */
	do {
		tm_st(word[0], tm_lt(word[0]));
	} while (!tm_commit());
	for (uintptr_t i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
			return 2;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (word[0] == word[1])
		ok = *word[0] == (tm_word_t)(2 * iterations);
	else
		ok = *word[0] == (tm_word_t)iterations &&
		     *word[1] == (tm_word_t)iterations;
	if (!ok) {
		fprintf(stderr, "conflict_lines: an update was lost\n");
		return 1;
	}
	return 0;
}
