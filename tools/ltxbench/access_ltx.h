/* SPDX-License-Identifier: MIT */
/*
 * Access interface: ltx's tm_* functions.  A transaction begins at its first
 * load; TX_END commits and, if the commit fails (backoff already applied),
 * runs the body again.  A doomed transaction's loads return 0, so the
 * workloads call TX_RESTART when they read a value that a consistent
 * snapshot cannot hold (a NULL where a sentinel must be); a live
 * transaction reading one would break opacity, which is reported loudly.
 */
#include <ltx/tm.h>

#define BENCH_ACCESS_NAME "ltx"
#define TX_SAFE
#define LOAD(lv)     TM_LT(lv)
#define LOADX(lv)    TM_LTX(lv)
#define STORE(lv, v) TM_ST(lv, v)
#define TX_BEGIN(w)                                                            \
	do {                                                                   \
		__label__ tx_retry;                                            \
	tx_retry:                                                              \
		do {
#define TX_END(w)                                                              \
	}                                                                      \
	while (0)                                                              \
		;                                                              \
	if (!tm_commit()) {                                                    \
		(w)->aborts++;                                                 \
		goto tx_retry;                                                 \
	}                                                                      \
	(w)->commits++;                                                        \
	}                                                                      \
	while (0)
#define TX_RESTART(w)                                                          \
	do {                                                                   \
		if (tm_validate())                                             \
			bench_fatal("ltxbench: a live ltx transaction read "   \
				    "an impossible value (opacity broken)");   \
		(w)->aborts++;                                                 \
		goto tx_retry;                                                 \
	} while (0)
