/* SPDX-License-Identifier: MIT */
/* Write-set helpers shared by the modes: buffering, merging, write-back. */
#ifndef LTX_CD_WSET_H
#define LTX_CD_WSET_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "arch/arch.h"
#include "cd/cd.h"

/* Turn a LTX_WENTRY_SINGLE entry into the general form (data, mask). */
static inline void ltx_wset_expand(struct ltx_wentry *w)
{
	if (ltx_unlikely(w->flags & LTX_WENTRY_SINGLE)) {
		unsigned off = (unsigned)(w->single_addr & LTX_LINE_MASK);

		w->data[off >> 3] = w->single_val;
		w->mask = (uint64_t)0xff << off;
		w->flags &= ~LTX_WENTRY_SINGLE;
		w->single_addr = LTX_WENTRY_NO_SINGLE;
	}
}

/* Has the transaction stored to this entry's line? */
static inline bool ltx_wset_dirty(const struct ltx_wentry *w)
{
	return (w->flags & LTX_WENTRY_SINGLE) || w->mask != 0;
}

/* Put the low size bytes of val into the entry's XABORT copy. */
static inline __attribute__((always_inline)) void
ltx_wset_buffer(struct ltx_wentry *w, const void *addr, uint64_t val,
		unsigned size)
{
	unsigned off = (unsigned)((uintptr_t)addr & LTX_LINE_MASK);
	uint64_t bytes = (1u << size) - 1; /* size 8: 0xff */

	memcpy((char *)w->data + off, &val, size); /* little-endian */
	w->mask |= bytes << off;
}

/*
 * ltx_wset_byte_masks[d]: the 8-byte mask whose byte b is 0xff where bit b
 * of d is set (wset.c): one load turns a word's 8 dirty bits into the
 * bytes to take from the entry.
 */
extern const uint64_t ltx_wset_byte_masks[256];

static inline uint64_t ltx_wset_byte_mask(unsigned dirty)
{
	return ltx_wset_byte_masks[dirty & 0xff];
}

/*
 * addr's word as this transaction sees it: memory under its dirty bytes,
 * merged a word at a time.  The caller holds the line in E, so memory
 * cannot change under it; the acquire load (ltx_load_word: the whole word
 * around a sized object) pairs with the release stores of the previous
 * owner's write-back.
 */
static inline __attribute__((always_inline)) uint64_t
ltx_wset_merged_word(const struct ltx_wentry *w, const void *addr)
{
	uint64_t x = ltx_load_word((const uint64_t *)addr);
	unsigned i = (unsigned)(((uintptr_t)addr & LTX_LINE_MASK) >> 3);
	unsigned dirty = (unsigned)(w->mask >> (i * 8)) & 0xffu;
	uint64_t keep;

	if (dirty == 0)
		return x;
	if (dirty == 0xff)
		return w->data[i];
	keep = ltx_wset_byte_mask(dirty);
	return (x & ~keep) | (w->data[i] & keep);
}

/*
 * ltx_wset_write_back_as's uncommon case (wset.c): a line with a word
 * not dirty whole.
 */
void ltx_wset_write_back_parts(const struct ltx_wentry *w, uint64_t m);

/*
 * Write the dirty bytes m of w back to memory with release stores (they
 * pair with the acquire loads of readers that then check the line's
 * ownership record).  Most often one aligned word was stored (one ST to
 * the line); else, usually every dirty word is dirty whole (ST of aligned
 * words): then each byte of the mask is 0x00 or 0xff, which spreading the
 * low bit of each byte reproduces, and the words are stored whole.
 * Otherwise each word with a dirty byte is written whole or in parts
 * (ltx_wset_write_back_parts), or, with bytes set (a fast path that must
 * save no register for a call), byte by byte.
 */
static inline __attribute__((always_inline)) void
ltx_wset_write_back_as(const struct ltx_wentry *w, uint64_t m, bool bytes)
{
	assert(m != 0);
	const uint64_t low_bits = 0x0101010101010101ull;
	uint64_t *line = (uint64_t *)w->line;
	unsigned first = (unsigned)__builtin_ctzll(m);
	uint64_t words = m & low_bits;

	if (ltx_likely((m >> first) == 0xff && (first & 7) == 0)) {
		__atomic_store_n(&line[first >> 3], w->data[first >> 3],
				 __ATOMIC_RELEASE);
		return;
	}
	if (words * 0xff == m) {
		do {
			unsigned i = (unsigned)__builtin_ctzll(words) >> 3;

			__atomic_store_n(&line[i], w->data[i],
					 __ATOMIC_RELEASE);
			words &= words - 1;
		} while (words != 0);
		return;
	}
	if (!bytes) {
		ltx_wset_write_back_parts(w, m);
		return;
	}
	do {
		unsigned b = (unsigned)__builtin_ctzll(m);

		__atomic_store_n((uint8_t *)line + b,
				 ((const uint8_t *)w->data)[b],
				 __ATOMIC_RELEASE);
		m &= m - 1;
	} while (m != 0);
}

/* ltx_wset_write_back_as with parts: the commits' loops over entries. */
static inline void ltx_wset_write_back(const struct ltx_wentry *w, uint64_t m)
{
	ltx_wset_write_back_as(w, m, false);
}

/*
 * ltx_wset_grow: double the write set (entries copied, nothing else
 * changed).  The old set is not freed but returned in *old, for a caller
 * whose orecs still point into it (the caller frees it), or freed if old
 * is NULL.  Returns false when out of memory, and always for a
 * descriptor that must not allocate (a signal handler's).
 */
bool ltx_wset_grow(struct ltx_cd *cd, void **old);

/* ltx_wset_grow_done: a caller that took *old from ltx_wset_grow has put
 * its orecs right and freed it (the move is over for signal handlers). */
void ltx_wset_grow_done(struct ltx_cd *cd);

/* ltx_rset_grow: double the read set.  Returns false when out of memory
 * or not allowed to allocate. */
bool ltx_rset_grow(struct ltx_cd *cd);

#endif /* LTX_CD_WSET_H */
