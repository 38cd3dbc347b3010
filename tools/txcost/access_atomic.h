/* SPDX-License-Identifier: MIT */
/*
 * Access interface for txcost: ltxbench's ltx interface (access_ltx.h) with
 * each transaction a TM_ATOMIC block, as a program written on ltx's public
 * API has it: the block's begin, restart point, commit and scope cleanup
 * all run inside the workload's operation.  A TX_RESTART (a doomed
 * transaction read a value no consistent snapshot holds) restarts the
 * block; a live one reading it breaks opacity, which is fatal.
 */
#include "../ltxbench/access_ltx.h"

#undef BENCH_ACCESS_NAME
#undef TX_BEGIN
#undef TX_END
#undef TX_RESTART

#define BENCH_ACCESS_NAME "ltx-atomic"
#define TX_BEGIN(w)	  TM_ATOMIC {
#define TX_END(w)                                                              \
	}                                                                      \
	(w)->commits++
#define TX_RESTART(w)                                                          \
	do {                                                                   \
		if (tm_validate())                                             \
			bench_fatal("txcost: a live ltx transaction read "     \
				    "an impossible value (opacity broken)");   \
		(w)->aborts++;                                                 \
		tm_retry();                                                    \
	} while (0)
