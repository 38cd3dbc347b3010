/* SPDX-License-Identifier: MIT */
/* The public tm_* functions: the hot paths inlined, the rest delegated. */
/* The library is built with -fvisibility=hidden; the API is what shows. */
#pragma GCC visibility push(default)
#include <ltx/tm.h>
#pragma GCC visibility pop

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tx/access.h"
#include "cd/orec.h"
#include "tx/fast.h"
#include "rt/alloc.h"
#include "rt/config.h"
#include "tx/stats.h"
#include "tx/tx.h"

/* A misaligned LT goes byte by byte (it may straddle two lines). */
static __attribute__((noinline)) uint64_t load_misaligned(const void *addr)
{
	return ltx_access_load_sized(addr, sizeof(tm_word_t), false);
}

/* tm_lt and tm_lt_u64: the alignment test is off the read-after-write
 * path (ltx_tx_fast_load_any). */
static inline __attribute__((always_inline)) uint64_t
lt_word_as(const void *addr, bool any)
{
	struct ltx_tx *tx = ltx_self;
	uintptr_t v;
	uint64_t x;

	if (ltx_tx_fast_load_as(tx, addr, &x, &v, any))
		return x;
	if (any && ltx_unlikely((uintptr_t)addr & LTX_WORD_MASK))
		return load_misaligned(addr);
	return ltx_tx_load_shared(addr, tx, v);
}

static inline __attribute__((always_inline)) uint64_t lt_word(const void *addr)
{
	return lt_word_as(addr, true);
}

tm_word_t tm_lt(const void *addr)
{
	return (tm_word_t)lt_word(addr);
}

/* Exported for <ltx/inline.h>, which declares it (flipped: the orec value
 * it saw with the lock bit flipped, which it has at hand). */
__attribute__((visibility("default"))) uint64_t
tm__lt_seen_v4(const void *addr, uintptr_t flipped)
{
	return ltx_tx_load_shared(addr, ltx_self, flipped ^ LTX_OREC_LOCKED);
}

/* A misaligned LTX goes byte by byte (it may straddle two lines). */
static __attribute__((noinline)) uint64_t load_misaligned_excl(const void *addr)
{
	return ltx_access_load_sized(addr, sizeof(tm_word_t), true);
}

/* tm_ltx's slow path, addr first as tm_ltx has it: the fast path keeps
 * addr where it came, with no copy to pass it second. */
static __attribute__((noinline)) uint64_t load_excl_slow(const void *addr,
							 struct ltx_tx *tx)
{
	return ltx_tx_load(tx, addr, true);
}

/* tm_ltx and tm_ltx_u64: the alignment test is made where the word is
 * read, after the orec's (ltx_tx_fast_load_excl_any). */
static inline __attribute__((always_inline)) uint64_t
ltx_word_as(const void *addr, bool any)
{
	struct ltx_tx *tx = ltx_self;
	uint64_t x;

	if (ltx_tx_fast_load_excl_as(tx, addr, &x, any))
		return x;
	if (any && ltx_unlikely((uintptr_t)addr & LTX_WORD_MASK))
		return load_misaligned_excl(addr);
	return load_excl_slow(addr, tx);
}

static inline __attribute__((always_inline)) uint64_t ltx_word(const void *addr)
{
	return ltx_word_as(addr, true);
}

tm_word_t tm_ltx(const void *addr)
{
	return (tm_word_t)ltx_word(addr);
}

/* A misaligned store goes byte by byte (it may straddle two lines). */
static __attribute__((noinline)) void store_misaligned(void *addr, uint64_t val,
						       unsigned size)
{
	ltx_access_store_bytes(addr, &val, size);
}

void tm_st(void *addr, tm_word_t val)
{
	if (ltx_unlikely((uintptr_t)addr & LTX_WORD_MASK))
		store_misaligned(addr, val, sizeof(val));
	else
		ltx_access_store_sized(addr, val, sizeof(val));
}

uint8_t tm_lt_u8(const void *addr)
{
	return (uint8_t)ltx_access_load_sized(addr, 1, false);
}

uint16_t tm_lt_u16(const void *addr)
{
	return (uint16_t)ltx_access_load_sized(addr, 2, false);
}

uint32_t tm_lt_u32(const void *addr)
{
	return (uint32_t)ltx_access_load_sized(addr, 4, false);
}

/* As tm_lt (a misaligned one goes byte by byte there too). */
uint64_t tm_lt_u64(const void *addr)
{
	return lt_word(addr);
}

uint8_t tm_ltx_u8(const void *addr)
{
	return (uint8_t)ltx_access_load_sized(addr, 1, true);
}

uint16_t tm_ltx_u16(const void *addr)
{
	return (uint16_t)ltx_access_load_sized(addr, 2, true);
}

uint32_t tm_ltx_u32(const void *addr)
{
	return (uint32_t)ltx_access_load_sized(addr, 4, true);
}

/* As tm_ltx. */
uint64_t tm_ltx_u64(const void *addr)
{
	return ltx_word(addr);
}

#define STORE_SIZED(name, type)                                                \
	void name(void *addr, type val)                                        \
	{                                                                      \
		if (ltx_unlikely((uintptr_t)addr & (sizeof(type) - 1)))        \
			store_misaligned(addr, val, sizeof(type));             \
		else                                                           \
			ltx_access_store_sized(addr, val, sizeof(type));       \
	}

STORE_SIZED(tm_st_u8, uint8_t)
STORE_SIZED(tm_st_u16, uint16_t)
STORE_SIZED(tm_st_u32, uint32_t)
STORE_SIZED(tm_st_u64, uint64_t)

/*
 * The word forms TM_LT, TM_LTX and TM_ST call for an lvalue whose type has
 * 8-byte alignment (<ltx/tm.h>): tm_lt_u64, tm_ltx_u64 and tm_st_u64
 * without the test of alignment.  A misaligned addr is the caller's
 * undefined behaviour (C's, for such an lvalue); debug builds stop on it.
 */
#ifdef LTX_DEBUG
static void check_word(const void *addr, const char *fn)
{
	if (((uintptr_t)addr & LTX_WORD_MASK) == 0)
		return;
	fprintf(stderr,
		"ltx: %s(%p): a misaligned address for an 8-byte-aligned "
		"type (a pointer cast to one?)\n",
		fn, addr);
	abort();
}
#else
#define check_word(addr, fn) ((void)0)
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_THREAD__)
#define LTX_LT_WORD_SPLIT 1 /* tm__lt_word's own fast path (below) */
#endif

#ifdef LTX_LT_WORD_SPLIT
/*
 * tm__lt_word's orec at or above the limit (read after write, a begin, a
 * newer or locked line), out of line so that its fast path keeps the hash
 * to itself: tm_lt's path of an aligned word, from the start.
 */
static __attribute__((noinline)) uint64_t lt_word_above(const void *addr)
{
	return lt_word_as(addr, false);
}
#endif

uint64_t tm__lt_word(const void *addr)
{
#ifdef LTX_LT_WORD_SPLIT
	struct ltx_tx *tx = ltx_self;
	struct ltx_cd *cd = &tx->cd;
	uintptr_t *orec = ltx_orec_of(cd, addr);
	uintptr_t v = __atomic_load_n(orec, __ATOMIC_ACQUIRE);
	struct ltx_rentry *r;
	/* The word is loaded straight into the return register: left to
	 * itself GCC loads it elsewhere and moves it (or keeps &tx->cd in
	 * a register), one instruction more than tm_lt's fast path. */
	register uint64_t x __asm__("rax");

	check_word(addr, "TM_LT");
	if (ltx_unlikely(v >= cd->limit))
		return lt_word_above(addr);
	/* ltx_inv_read: the word (ltx_load_word's mov), the orec again,
	 * the read logged. */
	__asm__ __volatile__("movq %1, %0"
			     : "=r"(x)
			     : "m"(*(const uint64_t *)addr));
	if (ltx_unlikely(ltx_word_changed(orec, v)))
		return ltx_tx_load_shared(addr, tx, v);
	r = cd->rs_next;
	if (ltx_unlikely(r == cd->rs_end))
		return ltx_tx_load_shared(addr, tx, v);
	r->orec = orec;
	LTX_BUMP(cd->rs_next, sizeof(*r));
	return x;
#else
	check_word(addr, "TM_LT");
	return lt_word_as(addr, false);
#endif
}

uint64_t tm__ltx_word(const void *addr)
{
	check_word(addr, "TM_LTX");
	return ltx_word_as(addr, false);
}

void tm__st_word(void *addr, uint64_t val)
{
	check_word(addr, "TM_ST");
	ltx_access_store_sized(addr, val, sizeof(val));
}

void tm_lt_bytes(void *dst, const void *src, size_t n)
{
	ltx_access_load_bytes(dst, src, n, false);
}

void tm_st_bytes(void *dst, const void *src, size_t n)
{
	ltx_access_store_bytes(dst, src, n);
}

bool tm_validate(void)
{
	return ltx_tx_validate(ltx_self);
}

bool tm_commit(void)
{
	return ltx_tx_commit_inline(ltx_self);
}

void tm_abort(void)
{
	ltx_tx_abort(ltx_self);
}

/* Both as errno-style functions: -1 with errno set, as tm_config_set. */
static int on_end(void (*fn)(void *), void *arg, bool on_commit)
{
	int err = ltx_tx_on_end(ltx_self, fn, arg, on_commit);

	if (err == 0)
		return 0;
	errno = err;
	return -1;
}

int tm_on_commit(void (*fn)(void *arg), void *arg)
{
	return on_end(fn, arg, true);
}

int tm_on_abort(void (*fn)(void *arg), void *arg)
{
	return on_end(fn, arg, false);
}

unsigned tm_status(void)
{
	return ltx_tx_status(ltx_self);
}

bool tm_in_transaction(void)
{
	return !ltx_status_idle(
		__atomic_load_n(&ltx_self->status, __ATOMIC_RELAXED));
}

unsigned tm_line_state(const void *addr)
{
	return ltx_tx_line_state(ltx_self, addr);
}

int tm_bus_stats(struct tm_bus_stats *out)
{
	struct ltx_stats s;
	uint64_t threads;

	if (out == NULL) {
		errno = EINVAL;
		return -1;
	}
	(void)ltx_stats_collect(&s, &threads, NULL, 0);
	out->t_read = s.bus_t_read;
	out->t_rfo = s.bus_t_rfo;
	out->busy = s.bus_busy;
	out->write_back = s.bus_writeback;
	return 0;
}

int tm_config_set(const char *name, const char *value)
{
	const struct ltx_setting *s = name ? ltx_config_find(name) : NULL;

	if (s == NULL || value == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (s->when == LTX_SETTING_STARTUP &&
	    (tm_in_transaction() || ltx_tx_other_threads() != 0 ||
	     (strcmp(s->name, "LTX_OREC_BITS") == 0 && ltx_orec_ready()) ||
	     (strcmp(s->name, "LTX_ALLOC") == 0 && ltx_alloc_loaded()))) {
		errno = EBUSY;
		return -1;
	}
	if (ltx_config_apply(s, value) != NULL) {
		errno = EINVAL;
		return -1;
	}
	if (strcmp(s->name, "LTX_MODE") == 0 ||
	    strcmp(s->name, "LTX_CAPACITY") == 0)
		ltx_tx_mode_changed();
	if (strcmp(s->name, "LTX_STATS") == 0)
		ltx_stats_changed();
	return 0;
}

int tm_config_get(const char *name, char *buf, size_t len)
{
	const struct ltx_setting *s = name ? ltx_config_find(name) : NULL;
	char tmp[128];

	if (s == NULL || buf == NULL) {
		errno = EINVAL;
		return -1;
	}
	s->format(&ltx_config, tmp, sizeof(tmp));
	if (strlen(tmp) >= len) {
		errno = ERANGE;
		return -1;
	}
	memcpy(buf, tmp, strlen(tmp) + 1);
	return 0;
}
