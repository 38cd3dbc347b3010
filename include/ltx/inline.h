/* SPDX-License-Identifier: MIT */
/* LTX_INLINE: the common case of tm_lt/tm_lt_u64 compiled into the caller. */
#ifndef LTX_INLINE_H
#define LTX_INLINE_H

/*
 * Defining LTX_INLINE before including <ltx/tm.h> makes tm_lt(), tm_lt_u64()
 * and TM_LT() of an 8-byte lvalue run the common cases of a shared load in
 * the caller, without a call: a live transaction's load of an unowned line no
 * newer than its snapshot (with room in the read set), a load of a word
 * the transaction stored (read after write), and the first load of a
 * transaction (an idle descriptor begins one).  The library takes
 * everything else.  It is what liburcu's _LGPL_SOURCE is to liburcu: the
 * program then depends on the layout of ltx's per-thread state, which is
 * why the thread-local symbol carries a version (tm__self_v4; the serial
 * token's, tm__serial_v4, with it): a libltx with another layout has no
 * such symbol, and the program fails to load instead of misbehaving.
 * x86-64 with GCC or Clang only.
 *
 * The code is the library's fast path (src/tx/fast.h ltx_tx_fast_load,
 * with src/cd/invisible.h and ltx_tx_fast_begin): read the line's
 * ownership record, compare it with the transaction's limit (which also
 * fails for no transaction, a doomed one, the visible mode, a locked or
 * newer line), load the word, check the record again, log the record.
 */

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The first line of ltx's per-thread descriptor (struct ltx_tx,
 * src/tx/desc.h, which checks that the mirrors here agree with ltx's):
 * what every load reads. */
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

/* A write-set entry (struct ltx_wentry, src/cd/cd.h): a line the
 * transaction holds; TM__SINGLE in flags when its one store so far is
 * the aligned word at single_addr, whose value is single_val (without
 * it, single_addr is an address no load asks for). */
struct tm__wentry {
	uint64_t data[8];
	uint64_t mask;
	uintptr_t line;
	uintptr_t *orec;
	uintptr_t old_version;
	uint32_t flags;
	uint32_t next;
	uint32_t head;
	uint32_t owner;
	uintptr_t single_addr;
	uint64_t single_val;
};

/* The descriptor's first two lines: the second is what read after write
 * and a begin read too. */
struct tm__head {
	struct tm__hot hot;
	const struct tm__wentry *ws_next;
	const struct tm__wentry *ws_end;
	const struct tm__wentry *ws_base;
	uintptr_t **rs_base;
	uintptr_t snapshot;
	uintptr_t ws_key;
	uintptr_t ws_span;
};

#define TM__SINGLE	4
#define TM__OREC_LOCKED ((uintptr_t)1 << 63) /* src/cd/orec.h */
#define TM__IDLE	0
#define TM__ACTIVE	1
#define TM__SERIAL_EXCL 1 /* src/tx/serial.h */
/* Where the descriptor keeps cause (TM_ABORT_* bits while doomed), which
 * a begin clears: past the two lines above (src/tx/desc.h checks it). */
#define TM__CAUSE_OFFSET 212

/* <ltx/tm.h>, which includes this header, defines TM__NOPLT; the
 * library's own include of it (src/tx/desc.h) needs no attribute. */
#ifndef TM__NOPLT
#define TM__NOPLT
#endif

/* The library's tm_lt of the aligned word at addr once the inline code
 * has read v from its ownership record and found it at or above the limit
 * of a descriptor that is not idle; flipped is v ^ TM__OREC_LOCKED
 * (src/api/api.c). */
uint64_t tm__lt_seen_v4(const void *addr, uintptr_t flipped) TM__NOPLT;

#if !defined(LTX_INTERNAL) && defined(__x86_64__) && defined(__GNUC__) &&      \
	defined(__GCC_ASM_FLAG_OUTPUTS__)
extern __thread struct tm__head *tm__self_v4
	__attribute__((tls_model("initial-exec")));
extern uintptr_t tm__serial_v4;

/* src/arch/x86_64.h's ltx_int_differs, ltx_word_bits_set and
 * ltx_owner_add: one instruction each, with a memory operand. */
static inline __attribute__((always_inline)) bool tm__int_differs(const int *p,
								  int v)
{
	bool differs;

	__asm__ __volatile__("cmpl %2, %1"
			     : "=@ccne"(differs)
			     : "m"(*p), "ir"(v));
	return differs;
}

static inline __attribute__((always_inline)) bool
tm__word_bits_set(const uintptr_t *p, uintptr_t mask)
{
	bool set;

	__asm__ __volatile__("testq %2, %1"
			     : "=@ccnz"(set)
			     : "m"(*p), "er"(mask));
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return set;
}

static inline __attribute__((always_inline)) void tm__owner_add(uint64_t *p,
								uint64_t d)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__asm__ __volatile__("addq %1, %0" : "+m"(*p) : "er"(d));
}

/*
 * tm_lt of the word at addr; aligned (a constant) says that addr is known
 * to be a multiple of 8: TM_LT of an lvalue whose type has 8-byte
 * alignment, which C places at such an address (a packed member's
 * alignment is 1), so the test of alignment is left out.  site (a
 * constant, __COUNTER__) differs from one use to the next, so that the
 * compiler does not merge two loads made on two branches into one behind
 * an extra jump (a tree walk's left and right child).
 */
static inline __attribute__((always_inline)) uint64_t
tm__lt_inline(const void *addr, bool aligned, int site)
{
	struct tm__head *tx = tm__self_v4;
	uintptr_t a = (uintptr_t)addr;
	uintptr_t *orec, v, limit, **r;
	const struct tm__wentry *w;
	uint64_t x;
	bool changed;

	/* The descriptor of this load (no instruction): where two loads
	 * follow a branch, the compiler may otherwise load the hash's
	 * fields into registers once, before it, instead of using them as
	 * memory operands in each. */
	__asm__ __volatile__("" : "+r"(tx));
	/* The orec hash of src/rt/hash.h and src/cd/orec.h. */
	orec = (uintptr_t *)((char *)tx->hot.orecs +
			     ((((a >> 6) * tx->hot.orec_mul) >> 29) &
			      tx->hot.orec_mask));
	/* Acquire: pairs with the committer's release of the version. */
	v = __atomic_load_n(orec, __ATOMIC_ACQUIRE);
	if (__builtin_expect(v >= tx->hot.limit, 0))
		goto not_below;
	/* The test of alignment where the word is read, as the library's
	 * tm_lt makes it (ltx_tx_fast_load_any): read after write needs
	 * none.  The orec of any address may be read. */
	if (!aligned && __builtin_expect(a & 7, 0))
		goto out_of_line;
read:
	/* Plain movs, kept in order by volatile: the word, then the record
	 * again (an aligned word load never crosses a page).  site is only
	 * a comment in the first; unoptimized (-O0), it is no constant,
	 * and nothing merges two loads. */
#ifdef __OPTIMIZE__
	__asm__ __volatile__("movq %1, %0 # %2"
			     : "=r"(x)
			     : "m"(*(const uint64_t *)a), "i"(site));
#else
	(void)site;
	__asm__ __volatile__("movq %1, %0"
			     : "=r"(x)
			     : "m"(*(const uint64_t *)a));
#endif
	__asm__ __volatile__("cmpq %2, %1"
			     : "=@ccne"(changed)
			     : "r"(v), "m"(*orec));
	r = tx->hot.rs_next;
	if (__builtin_expect(changed || r == tx->hot.rs_end, 0))
		goto out_of_line;
	*r = orec;
	/* One add to memory instead of r + 1 stored back: one
	 * instruction less (the read set is this thread's). */
	__asm__("addq %1, %0" : "+m"(tx->hot.rs_next) : "i"(sizeof(*r)));
	return x;
not_below:
	/* One test tells read after write from a begin: only an idle
	 * descriptor (status TM__IDLE) begins, and its write set is empty.
	 * A misaligned addr is never single_addr (LTX_WENTRY_NO_SINGLE is
	 * no address a load asks for); it leaves on a miss, before the
	 * library's aligned load, and begins in the library. */
	if (tm__int_differs(&tx->hot.status, TM__IDLE)) {
		/*
		 * Read after write (ltx_inv_load_single, src/cd/invisible.h):
		 * the record holds a lock word pointing into our write set's
		 * allocation (one compare: v - ws_key < ws_span) only while
		 * we hold the line; the entry's own word is answered from
		 * it, with no check of memory: it is the transaction's own
		 * data.
		 */
		uintptr_t off = v - tx->ws_key;

		/* On a miss, the library's load from here, with v ^
		 * TM__OREC_LOCKED (off + ws_base, or w: the empty asm keeps
		 * the compiler from keeping a copy of v for it): the line is
		 * not looked up again. */
		if (off >= tx->ws_span) {
			if (!aligned && __builtin_expect(a & 7, 0))
				goto out_of_line;
			__asm__("" : "+r"(off) : : "memory");
			return tm__lt_seen_v4(addr,
					      off + (uintptr_t)tx->ws_base);
		}
		w = (const struct tm__wentry *)((uintptr_t)tx->ws_base + off);
		/* Only an entry with TM__SINGLE has an address there
		 * (src/cd/cd.h, LTX_WENTRY_NO_SINGLE). */
		if (__builtin_expect(w->single_addr == a, 1))
			return w->single_val;
		if (!aligned && __builtin_expect(a & 7, 0))
			goto out_of_line;
		__asm__("" : "+r"(w));
		return tm__lt_seen_v4(addr, (uintptr_t)w);
	}
	/* An idle descriptor begins (ltx_tx_fast_begin, src/tx/fast.h, has
	 * the synchronization argument of each step). */
	if (!aligned && __builtin_expect(a & 7, 0))
		goto out_of_line;
	limit = tx->snapshot + 1;
	tx->hot.limit = limit;
	*(unsigned *)((char *)tx + TM__CAUSE_OFFSET) = 0;
	/* Release: tm_free's grace periods (src/tx/mem.c). */
	tm__owner_add(&tx->hot.tx_id, 1);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&tx->hot.status, TM__ACTIVE, __ATOMIC_RELEASE);
	/* The light side of the asymmetric fence of tm_free and the serial
	 * token: the token and the data are loaded after the status store. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (__builtin_expect(tm__word_bits_set(&tm__serial_v4, TM__SERIAL_EXCL),
			     0)) {
		/* An exclusive transaction may run: take the begin back
		 * and let the library's begin wait for it. */
		tx->hot.limit = 0;
		__atomic_store_n(&tx->hot.status, TM__IDLE, __ATOMIC_RELEASE);
		tm__owner_add(&tx->hot.tx_id, (uint64_t)-1);
		goto out_of_line;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* v, read before the begin, is checked again after the word is
	 * loaded, which is after the status store: that check is the
	 * first load's second read of its record (src/tx/mem.c). */
	if (__builtin_expect(v < limit, 1))
		goto read;
out_of_line:
	return (tm_lt)(addr);
}

#define tm_lt(addr)	((tm_word_t)tm__lt_inline(addr, false, __COUNTER__))
#define tm_lt_u64(addr) ((uint64_t)tm__lt_inline(addr, false, __COUNTER__))
/* TM_LT (<ltx/tm.h>) with an 8-byte lvalue's alignment passed on. */
#define TM__LT_WORD(lv) tm__lt_inline(&(lv), __alignof__(lv) >= 8, __COUNTER__)
#undef TM_LT
#define TM_LT(lv)                                                              \
	__extension__({                                                        \
		TM__SIZE_OK(lv);                                               \
		(__typeof__(lv))(uintptr_t)(sizeof(lv) == 8                    \
						    ? TM__LT_WORD(lv)          \
						    : TM__LOAD(tm_lt,          \
							       tm__lt_word,    \
							       lv));           \
	})
#endif

#ifdef __cplusplus
}
#endif

#endif /* LTX_INLINE_H */
