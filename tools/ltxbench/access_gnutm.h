/* SPDX-License-Identifier: MIT */
/*
 * Access interface: GCC's transactional memory (-fgnu-tm).  The compiler
 * instruments the plain loads and stores of __transaction_atomic blocks into
 * calls of the libitm ABI, served by GCC's libitm or by a preloaded libltx.
 * The TM restarts a transaction itself, so TX_RESTART is never reached.
 */
#define BENCH_ACCESS_NAME "gnutm"
#define TX_SAFE		  __attribute__((transaction_safe))

/* Reached only if a transaction read an impossible value. */
void bench_gnutm_impossible(void) __attribute__((transaction_pure, noreturn));

#define LOAD(lv)     (lv)
#define LOADX(lv)    (lv)
#define STORE(lv, v) ((lv) = (v))
#define TX_BEGIN(w)                                                            \
	do {                                                                   \
		__transaction_atomic                                           \
		{
#define TX_END(w)                                                              \
	}                                                                      \
	(w)->commits++;                                                        \
	}                                                                      \
	while (0)
#define TX_RESTART(w) bench_gnutm_impossible()
