/* SPDX-License-Identifier: MIT */
/* Access interface: plain loads and stores, no synchronization (1 thread). */
#define BENCH_ACCESS_NAME "seq"
#define TX_SAFE
#define LOAD(lv)     (lv)
#define LOADX(lv)    (lv)
#define STORE(lv, v) ((lv) = (v))
#define TX_BEGIN(w)  do {
#define TX_END(w)                                                              \
	}                                                                      \
	while (0)
#define TX_RESTART(w)                                                          \
	bench_fatal("ltxbench: uninstrumented code read an impossible value")
