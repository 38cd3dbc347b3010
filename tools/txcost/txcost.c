/* SPDX-License-Identifier: MIT */
/*
 * txcost: a fixed sequence of transactions for counting instructions with
 * valgrind --tool=callgrind.  Each transaction does K operations of one
 * kind on K distinct cache lines (the calls are unrolled, so no loop
 * overhead is counted), then commits.  The cost of one operation is
 * (Ir(K) - Ir(0)) / (N * K), with Ir counted inside run() only:
 *
 *   valgrind --tool=callgrind --toggle-collect=run ./txcost lt 16 10000
 *
 * usage: txcost lt|ltx|st|ltxst|lt1 K N   (K in 0, 1, 2, 4, 8, 16)
 * ltxst: tm_ltx then tm_st of the same word (read-modify-write).
 * lt1: one tm_lt and tm_commit per transaction, K ignored.
 */
#include <ltx/tm.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tm_word_t lines[16][8] __attribute__((aligned(64)));

#define OP2(op, i)  op(i) op(i + 1)
#define OP4(op, i)  OP2(op, i) OP2(op, i + 2)
#define OP8(op, i)  OP4(op, i) OP4(op, i + 4)
#define OP16(op, i) OP8(op, i) OP8(op, i + 8)
#define LT(i)	    sum += tm_lt(&lines[i][0]);
#define LTX(i)	    sum += tm_ltx(&lines[i][0]);
#define ST(i)	    tm_st(&lines[i][0], n);
#define LTXST(i)    tm_st(&lines[i][0], tm_ltx(&lines[i][0]) + 1);

#define RUN_K(op)                                                              \
	switch (k) {                                                           \
	case 0:                                                                \
		for (long n = 0; n < iters; n++)                               \
			ok += tm_commit();                                     \
		break;                                                         \
	case 1:                                                                \
		for (long n = 0; n < iters; n++) {                             \
			op(0) ok += tm_commit();                               \
		}                                                              \
		break;                                                         \
	case 2:                                                                \
		for (long n = 0; n < iters; n++) {                             \
			OP2(op, 0) ok += tm_commit();                          \
		}                                                              \
		break;                                                         \
	case 4:                                                                \
		for (long n = 0; n < iters; n++) {                             \
			OP4(op, 0) ok += tm_commit();                          \
		}                                                              \
		break;                                                         \
	case 8:                                                                \
		for (long n = 0; n < iters; n++) {                             \
			OP8(op, 0) ok += tm_commit();                          \
		}                                                              \
		break;                                                         \
	default:                                                               \
		for (long n = 0; n < iters; n++) {                             \
			OP16(op, 0) ok += tm_commit();                         \
		}                                                              \
		break;                                                         \
	}

static volatile tm_word_t sink;

__attribute__((noinline)) long run(const char *kind, int k, long iters)
{
	tm_word_t sum = 0;
	long ok = 0;

	if (strcmp(kind, "lt") == 0) {
		RUN_K(LT)
	} else if (strcmp(kind, "ltx") == 0) {
		RUN_K(LTX)
	} else if (strcmp(kind, "st") == 0) {
		RUN_K(ST)
	} else if (strcmp(kind, "ltxst") == 0) {
		RUN_K(LTXST)
	} else {
		for (long n = 0; n < iters; n++) {
			sum += tm_lt(&lines[0][0]);
			ok += tm_commit();
		}
	}
	sink = sum;
	return ok;
}

int main(int argc, char **argv)
{
	long iters, ok;
	int k;

	if (argc != 4 || (k = atoi(argv[2])) < 0 || k > 16 ||
	    (iters = atol(argv[3])) < 1) {
		fprintf(stderr,
			"usage: txcost lt|ltx|st|ltxst|lt1 K(0-16) N\n");
		return 2;
	}
	/* Warm up: create the descriptor and touch the lines' orecs. */
	run(argv[1], 16, 10);
	ok = run(argv[1], k, iters);
	return ok == iters ? 0 : 1;
}
