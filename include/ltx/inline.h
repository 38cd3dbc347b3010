/* SPDX-License-Identifier: MIT */
/* LTX_INLINE: the common case of tm_lt/tm_lt_u64 compiled into the caller. */
#ifndef LTX_INLINE_H
#define LTX_INLINE_H

/*
 * Defining LTX_INLINE before including <ltx/tm.h> makes tm_lt() and
 * tm_lt_u64() macros that run the common case of a shared load (a live
 * transaction, an unowned line no newer than its snapshot, room in the
 * read set) in the caller, without a call, and call the library for
 * everything else.  It is what liburcu's _LGPL_SOURCE is to liburcu: the
 * program then depends on the layout of ltx's per-thread state, which is
 * why the thread-local symbol carries a version (tm__self_v2): a libltx
 * with another layout has no such symbol, and the program fails to load
 * instead of misbehaving.  x86-64 with GCC or Clang only.
 *
 * The code is the library's fast path (src/cd/invisible.h): read the
 * line's ownership record, compare it with the transaction's limit (which
 * also fails for no transaction, a doomed one, the visible mode, a locked
 * or newer line), load the word, check the record again, log the record.
 */

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The head of ltx's per-thread descriptor (struct ltx_tx, src/tx/desc.h,
 * which checks that the two agree). */
struct tm__hot {
	int status;
	uint32_t slow;
	uint64_t tx_id;
	uintptr_t limit;
	uintptr_t *orecs;
	uintptr_t orec_mask;
	uint64_t orec_mul;
	uintptr_t **rs_next;
	uintptr_t **rs_end;
};

#if !defined(LTX_INTERNAL) && defined(__x86_64__) && defined(__GNUC__) &&      \
	defined(__GCC_ASM_FLAG_OUTPUTS__)
extern __thread struct tm__hot *tm__self_v2
	__attribute__((tls_model("initial-exec")));

static inline __attribute__((always_inline)) uint64_t
tm__lt_inline(const void *addr)
{
	struct tm__hot *tx = tm__self_v2;
	uintptr_t a = (uintptr_t)addr;
	uintptr_t *orec, v, **r;
	uint64_t x;
	bool changed;

	if (__builtin_expect(a & 7, 0))
		goto out_of_line;
	/* The orec hash of src/rt/hash.h and src/cd/orec.h. */
	orec = (uintptr_t *)((char *)tx->orecs +
			     ((((a >> 6) * tx->orec_mul) >> 29) &
			      tx->orec_mask));
	/* Acquire: pairs with the committer's release of the version. */
	v = __atomic_load_n(orec, __ATOMIC_ACQUIRE);
	if (__builtin_expect(v >= tx->limit, 0))
		goto out_of_line;
	/* Plain movs, kept in order by volatile: the word, then the record
	 * again (an aligned word load never crosses a page). */
	__asm__ __volatile__("movq %1, %0"
			     : "=r"(x)
			     : "m"(*(const uint64_t *)a));
	__asm__ __volatile__("cmpq %2, %1"
			     : "=@ccne"(changed)
			     : "r"(v), "m"(*orec));
	r = tx->rs_next;
	if (__builtin_expect(changed || r == tx->rs_end, 0))
		goto out_of_line;
	*r = orec;
	tx->rs_next = r + 1;
	return x;
out_of_line:
	return (tm_lt)(addr);
}

#define tm_lt(addr)	((tm_word_t)tm__lt_inline(addr))
#define tm_lt_u64(addr) ((uint64_t)tm__lt_inline(addr))
#endif

#ifdef __cplusplus
}
#endif

#endif /* LTX_INLINE_H */
