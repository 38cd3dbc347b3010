/* SPDX-License-Identifier: MIT */
/* LT/LTX/ST of any size and alignment, for both front ends (tm_*, libitm). */
#ifndef LTX_TX_ACCESS_H
#define LTX_TX_ACCESS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "tx/fast.h"
#include "tx/tx.h"

/*
 * The fast paths of tx/fast.h with the transaction layer's slow paths
 * behind them.  Every function here works on the calling thread's
 * descriptor and has the tm_* semantics (a doomed transaction loads 0).
 */
#define LTX_WORD_MASK ((uintptr_t)sizeof(uint64_t) - 1)

/* LT or LTX of the aligned word at a: the fast path, else the full one. */
static inline __attribute__((always_inline)) uint64_t
ltx_access_load_word(const void *a, bool excl)
{
	struct ltx_tx *tx = ltx_self;
	uint64_t x;

	if (excl) {
		if (ltx_tx_fast_load_excl(tx, a, &x))
			return x;
		return ltx_tx_load(tx, a, true);
	}
	if (ltx_tx_fast_load(tx, a, &x))
		return x;
	return ltx_tx_load_shared(tx, a);
}

/* ST of size bytes at a (aligned to size). */
static inline __attribute__((always_inline)) void
ltx_access_store_sized(void *a, uint64_t val, unsigned size)
{
	struct ltx_tx *tx = ltx_self;

	if (ltx_tx_fast_store(tx, a, val, size))
		return;
	ltx_tx_store(tx, a, val, size);
}

/* Any n bytes at src, one aligned word at a time (a doomed tx reads 0s). */
static inline void ltx_access_load_bytes(void *dst, const void *src, size_t n,
					 bool excl)
{
	uintptr_t p = (uintptr_t)src;
	char *d = dst;

	while (n > 0) {
		uintptr_t word = p & ~LTX_WORD_MASK;
		size_t off = p - word, k = sizeof(uint64_t) - off;
		uint64_t x = ltx_access_load_word((const void *)word, excl);

		if (k > n)
			k = n;
		memcpy(d, (const char *)&x + off, k);
		d += k;
		p += k;
		n -= k;
	}
}

static inline void ltx_access_store_bytes(void *dst, const void *src, size_t n)
{
	uintptr_t p = (uintptr_t)dst;
	const char *s = src;

	while (n > 0) {
		uint64_t x;

		if ((p & LTX_WORD_MASK) == 0 && n >= sizeof(x)) {
			memcpy(&x, s, sizeof(x));
			ltx_access_store_sized((void *)p, x, sizeof(x));
			p += sizeof(x);
			s += sizeof(x);
			n -= sizeof(x);
		} else {
			ltx_access_store_sized((void *)p, (uint8_t)*s, 1);
			p++;
			s++;
			n--;
		}
	}
}

/* A naturally aligned sub-word object: extract it from its word.  Inlined
 * into each caller (tm_lt_u64 and the others, with constant size and
 * excl): out of line, every TM_LT of a long paid a second call and the
 * tests of size and excl. */
static inline __attribute__((always_inline)) uint64_t
ltx_access_load_sized(const void *a, unsigned size, bool excl)
{
	uintptr_t p = (uintptr_t)a;
	uint64_t x;

	if (ltx_unlikely(p & (size - 1))) {
		x = 0;
		ltx_access_load_bytes(&x, a, size, excl);
		return x;
	}
	/* The shift in each branch: with one tail shared by LT and LTX the
	 * compiler moved LT's word through a second register and back. */
	if (excl) {
		x = ltx_access_load_word((const void *)(p & ~LTX_WORD_MASK),
					 true);
		return x >> ((p & LTX_WORD_MASK) * 8);
	}
	x = ltx_access_load_word((const void *)(p & ~LTX_WORD_MASK), false);
	return x >> ((p & LTX_WORD_MASK) * 8);
}

#endif /* LTX_TX_ACCESS_H */
