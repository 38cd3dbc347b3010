/* SPDX-License-Identifier: MIT */
/* Growing the read and write sets, and writing back a partly dirty word
 * (outside every fast path). */
#include <stdlib.h>
#include <string.h>

#include "cd/wset.h"
#include "rt/array.h"

/* Byte b of MASK(d) is 0xff if bit b of d is set (see wset.h). */
#define BYTE(d, b) ((((d) >> (b)) & 1) ? (uint64_t)0xff << (8 * (b)) : 0)
#define MASK(d)                                                                \
	(BYTE(d, 0) | BYTE(d, 1) | BYTE(d, 2) | BYTE(d, 3) | BYTE(d, 4) |      \
	 BYTE(d, 5) | BYTE(d, 6) | BYTE(d, 7))
#define MASK4(d)  MASK(d), MASK((d) + 1), MASK((d) + 2), MASK((d) + 3)
#define MASK16(d) MASK4(d), MASK4((d) + 4), MASK4((d) + 8), MASK4((d) + 12)
#define MASK64(d)                                                              \
	MASK16(d), MASK16((d) + 16), MASK16((d) + 32), MASK16((d) + 48)

const uint64_t ltx_wset_byte_masks[256] = { MASK64(0), MASK64(64), MASK64(128),
					    MASK64(192) };

/*
 * Write the dirty bytes d (a byte mask, not 0 nor 0xff) of word i of w's
 * line back: each aligned half or quarter of the word that is dirty whole
 * in one store (what a store of an int or a short left), the other bytes
 * one by one.  Never a byte that is not dirty: the bytes beside them may
 * be another thread's, written outside transactions.
 */
static void write_part(const struct ltx_wentry *w, unsigned i, unsigned d)
{
	char *dst = (char *)w->line + i * 8;
	const char *src = (const char *)&w->data[i];

	do {
		unsigned b = (unsigned)__builtin_ctz(d);

		if ((b & 3) == 0 && ((d >> b) & 0xf) == 0xf) {
			uint32_t x;

			memcpy(&x, src + b, sizeof(x));
			__atomic_store_n((uint32_t *)(dst + b), x,
					 __ATOMIC_RELEASE);
			d &= ~(0xfu << b);
		} else if ((b & 1) == 0 && ((d >> b) & 3) == 3) {
			uint16_t x;

			memcpy(&x, src + b, sizeof(x));
			__atomic_store_n((uint16_t *)(dst + b), x,
					 __ATOMIC_RELEASE);
			d &= ~(3u << b);
		} else {
			__atomic_store_n((uint8_t *)(dst + b), (uint8_t)src[b],
					 __ATOMIC_RELEASE);
			d &= d - 1;
		}
	} while (d != 0);
}

/* Every word of the line with a dirty byte, whole or in parts (wset.h). */
void ltx_wset_write_back_parts(const struct ltx_wentry *w, uint64_t m)
{
	const uint64_t low_bits = 0x0101010101010101ull;
	uint64_t *line = (uint64_t *)w->line;
	/* Bit 8i of words: some byte of word i is dirty.  After the shifts
	 * by 4, 2 and 1, bit 8i is the or of bits 8i to 8i + 7 of m and of
	 * no other (bits of the next byte reach only the bits above 8i). */
	uint64_t words = m | (m >> 4);

	words |= words >> 2;
	words |= words >> 1;
	words &= low_bits;
	while (words != 0) {
		unsigned b = (unsigned)__builtin_ctzll(words);
		unsigned d = (unsigned)(m >> b) & 0xffu;

		if (d == 0xff)
			__atomic_store_n(&line[b >> 3], w->data[b >> 3],
					 __ATOMIC_RELEASE);
		else
			write_part(w, b >> 3, d);
		words &= words - 1;
	}
}

/*
 * Synchronization with the owner's signal handlers: while a log moves, its
 * three pointers disagree; resizing is set around the move (compiler
 * barriers: the handler runs on this thread), and release_held then
 * leaves the logs alone (the next slow path's release lets go of them).
 */
static void begin_resize(struct ltx_cd *cd)
{
	__atomic_store_n(&cd->resizing, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static void end_resize(struct ltx_cd *cd)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&cd->resizing, 0, __ATOMIC_RELAXED);
}

bool ltx_rset_grow(struct ltx_cd *cd)
{
	size_t cap = (size_t)(cd->rs_end - cd->rs_base);
	size_t used = (size_t)(cd->rs_next - cd->rs_base);
	bool ok;

	if (cd->no_alloc)
		return false;
	begin_resize(cd);
	ok = LTX_ARRAY_RESERVE(&cd->rs_base, &cap, used, used + 1, 1);
	if (ok) {
		cd->rs_next = cd->rs_base + used;
		cd->rs_end = cd->rs_base + cap;
	}
	end_resize(cd);
	return ok;
}

bool ltx_wset_grow(struct ltx_cd *cd, void **old)
{
	size_t cap = (size_t)(cd->ws_end - cd->ws_base);
	size_t used = (size_t)(cd->ws_next - cd->ws_base);
	bool ok;

	if (cd->no_alloc)
		return false;
	begin_resize(cd);
	ok = ltx_array_reserve((void **)&cd->ws_base, &cap, used, used + 1,
			       sizeof(*cd->ws_base), 1, LTX_LINE_SIZE, old);
	if (ok) {
		cd->ws_next = cd->ws_base + used;
		cd->ws_end = cd->ws_base + cap;
		ltx_cd_ws_bounds(cd);
		/* The copied entries keep theirs (cd.h, owner). */
		for (struct ltx_wentry *w = cd->ws_next; w < cd->ws_end; w++)
			w->owner = cd->id;
	}
	/* The invisible mode repoints its orecs before it frees the old
	 * set; until then release_held would not recognize our locks. */
	if (!ok || old == NULL)
		end_resize(cd);
	return ok;
}

void ltx_wset_grow_done(struct ltx_cd *cd)
{
	end_resize(cd);
}
