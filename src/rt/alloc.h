/* SPDX-License-Identifier: MIT */
/* The allocator behind tm_malloc: jemalloc loaded privately, or libc. */
#ifndef LTX_RT_ALLOC_H
#define LTX_RT_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Backends (struct ltx_config.alloc, LTX_ALLOC). */
enum ltx_alloc_backend {
	LTX_ALLOC_AUTO = 0,	/* jemalloc, or libc under AddressSanitizer */
	LTX_ALLOC_JEMALLOC = 1, /* a dedicated arena of a private jemalloc */
	LTX_ALLOC_LIBC = 2,	/* the program's malloc (sanitizers see it) */
};

/* Default of LTX_MEM_LIMIT: freed bytes allowed to wait for reclamation. */
#define LTX_MEM_LIMIT_DEFAULT ((uint64_t)64 << 20)

/*
 * The jemalloc backend is a private copy of jemalloc linked into libltx:
 * Debian builds jemalloc without a prefix, so linking -ljemalloc would
 * replace the program's malloc, and libjemalloc.so.2 cannot be loaded
 * privately with dlopen(RTLD_LOCAL) either (its initial-exec TLS does not
 * fit glibc's static TLS surplus: "cannot allocate memory in static TLS
 * block").  So the build copies jemalloc's PIC archive with every public
 * name prefixed ltx_je_ (rt/jemalloc.syms) and links it in, hidden by the
 * version script: the program's malloc is untouched.  Every arena of that
 * copy is therefore tm_malloc's alone, so its plain entry points serve
 * (malloc, sdallocx with no flags): they take jemalloc's fast path
 * through the calling thread's own cache, which jemalloc flushes when the
 * thread exits.  (Flags naming an arena or an explicit cache miss that
 * fast path: about 136 instructions instead of about 20.)
 *
 * AddressSanitizer does not see mallocx, so under ASan (detected at build
 * or run time) the automatic choice is libc, whose frees ASan checks.
 */

/*
 * ltx_alloc_init: set up the backend chosen by LTX_ALLOC, once per
 * process.  Not for signal handlers.  Returns 0, or -1 with errno ENOMEM
 * when it cannot be set up (reported once on stderr).
 */
int ltx_alloc_init(void);

/* ltx_alloc_loaded: whether the backend is chosen (LTX_ALLOC is then fixed). */
bool ltx_alloc_loaded(void);

/* The backend chosen (enum ltx_alloc_backend; -1 before ltx_alloc_init):
 * written once, before any block exists. */
extern int ltx_alloc_backend;

/* The private jemalloc's plain entry points (rt/jemalloc.syms). */
void *ltx_je_malloc(size_t size);
void ltx_je_sdallocx(void *p, size_t size, int flags);
size_t ltx_je_sallocx(const void *p, int flags);
size_t ltx_je_nallocx(size_t size, int flags);

void *ltx_alloc_slow(size_t size, size_t align, bool zero);
void ltx_alloc_free_slow(void *p, size_t size);

/*
 * ltx_alloc: size bytes (size >= 1) aligned to align (a power of two, 0 for
 * the default), zeroed if zero.  NULL when out of memory.  The common case
 * (jemalloc, no alignment, not zeroed) is one call into its fast path.
 */
static inline void *ltx_alloc(size_t size, size_t align, bool zero)
{
	if (__builtin_expect(ltx_alloc_backend == LTX_ALLOC_JEMALLOC &&
				     align == 0 && !zero,
			     1))
		return ltx_je_malloc(size);
	return ltx_alloc_slow(size, align, zero);
}

/* ltx_alloc_usable: the usable size of a block from ltx_alloc. */
size_t ltx_alloc_usable(const void *p);

/* ltx_alloc_free: give back a block of usable size size. */
static inline void ltx_alloc_free(void *p, size_t size)
{
	if (__builtin_expect(ltx_alloc_backend == LTX_ALLOC_JEMALLOC, 1))
		ltx_je_sdallocx(p, size, 0);
	else
		ltx_alloc_free_slow(p, size);
}

#endif /* LTX_RT_ALLOC_H */
