/* SPDX-License-Identifier: MIT */
/* The allocator behind tm_malloc: jemalloc loaded privately, or libc. */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <jemalloc/jemalloc.h> /* the MALLOCX_* flag encodings only */

#include "arch/arch.h"
#include "rt/alloc.h"
#include "rt/config.h"

#if defined(__SANITIZE_ADDRESS__)
#define BUILT_WITH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BUILT_WITH_ASAN 1
#endif
#endif
#ifndef BUILT_WITH_ASAN
#define BUILT_WITH_ASAN 0
#endif

/*
 * The private copy's entry points (src/rt/jemalloc.syms renames them; the
 * header is used for the MALLOCX_* flag encodings only).
 */
void *ltx_je_calloc(size_t n, size_t size);
void *ltx_je_mallocx(size_t size, int flags);
int ltx_je_mallctl(const char *name, void *old, size_t *oldlen, void *new,
		   size_t newlen);

/*
 * The private copy's options (read when it starts; MALLOC_CONF still
 * overrides them).  tm_free's blocks come back to jemalloc in bursts: a
 * batch of up to 256 blocks at the end of its grace period (tx/mem.c).
 * With jemalloc's default thread cache (for 64-byte blocks 128 slots) a
 * burst overflows the cache, which flushes half of itself to the arena,
 * and the allocations that follow refill it from there: about 24
 * instructions more per tm_malloc.  Eight slabs' worth of slots, at most
 * 512, hold a whole batch of the small sizes.  The cost is memory a
 * thread's cache may hold, which jemalloc's incremental cache GC trims
 * when a size goes unused.
 */
const char *ltx_je_malloc_conf =
	"lg_tcache_nslots_mul:3,tcache_nslots_small_max:512";

/*
 * Synchronization: ltx_alloc_backend is written once, inside pthread_once,
 * before any block exists; every later reader runs after ltx_alloc_init
 * returned (pthread_once orders it), or holds a block that could only come from
 * it.
 */
int ltx_alloc_backend = -1; /* enum ltx_alloc_backend; -1: not loaded */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static bool asan_present(void)
{
	return BUILT_WITH_ASAN || dlsym(RTLD_DEFAULT, "__asan_init") != NULL;
}

/* The private copy starts on its first call (its constructor is dropped:
 * src/Makefile.am); make that call now, where failing can be reported. */
static bool load_jemalloc(void)
{
	void *p = ltx_je_malloc(1);

	if (p == NULL) {
		fprintf(stderr, "ltx: tm_malloc: jemalloc cannot start; set "
				"LTX_ALLOC=libc\n");
		return false;
	}
	ltx_je_sdallocx(p, 1, 0);
	return true;
}

static void init(void)
{
	int want = ltx_config.alloc;

	if (want == LTX_ALLOC_JEMALLOC && asan_present()) {
		fprintf(stderr, "ltx: LTX_ALLOC=jemalloc is not usable under "
				"AddressSanitizer; using libc\n");
		want = LTX_ALLOC_LIBC;
	}
	if (want == LTX_ALLOC_AUTO)
		want = asan_present() ? LTX_ALLOC_LIBC : LTX_ALLOC_JEMALLOC;
	if (want == LTX_ALLOC_JEMALLOC && !load_jemalloc())
		return;
	ltx_alloc_backend = want;
}

int ltx_alloc_init(void)
{
	pthread_once(&init_once, init);
	if (ltx_alloc_backend < 0) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

bool ltx_alloc_loaded(void)
{
	return __atomic_load_n(&ltx_alloc_backend, __ATOMIC_RELAXED) >= 0;
}

void *ltx_alloc_slow(size_t size, size_t align, bool zero)
{
	void *p;

	if (ltx_likely(ltx_alloc_backend == LTX_ALLOC_JEMALLOC)) {
		/* The plain entry points: jemalloc's fast path. */
		if (ltx_likely(align == 0))
			return zero ? ltx_je_calloc(1, size)
				    : ltx_je_malloc(size);
		return ltx_je_mallocx(size, MALLOCX_ALIGN(align) |
						    (zero ? MALLOCX_ZERO : 0));
	}
	if (align > sizeof(max_align_t)) {
		if (posix_memalign(&p, align, size) != 0)
			return NULL;
		if (zero)
			__builtin_memset(p, 0, size);
		return p;
	}
	return zero ? calloc(1, size) : malloc(size);
}

size_t ltx_alloc_usable(const void *p)
{
	if (ltx_alloc_backend == LTX_ALLOC_JEMALLOC)
		return ltx_je_sallocx(p, 0);
	return malloc_usable_size((void *)p);
}

void ltx_alloc_free_slow(void *p, size_t size)
{
	if (ltx_likely(ltx_alloc_backend == LTX_ALLOC_JEMALLOC))
		ltx_je_sdallocx(p, size, 0);
	else
		free(p);
}
