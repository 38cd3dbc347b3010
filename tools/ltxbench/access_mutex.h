/* SPDX-License-Identifier: MIT */
/* Access interface: one global pthread mutex around every operation. */
#include <pthread.h>

#define BENCH_ACCESS_NAME "mutex"
static pthread_mutex_t bench_global_mutex = PTHREAD_MUTEX_INITIALIZER;

#define TX_SAFE
#define LOAD(lv)     (lv)
#define LOADX(lv)    (lv)
#define STORE(lv, v) ((lv) = (v))
#define TX_BEGIN(w)                                                            \
	do {                                                                   \
		pthread_mutex_lock(&bench_global_mutex);                       \
		do {
#define TX_END(w)                                                              \
	}                                                                      \
	while (0)                                                              \
		;                                                              \
	pthread_mutex_unlock(&bench_global_mutex);                             \
	}                                                                      \
	while (0)
#define TX_RESTART(w)                                                          \
	bench_fatal("ltxbench: code under a mutex read an impossible value")
