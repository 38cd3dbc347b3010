/* SPDX-License-Identifier: MIT */
/* libitm ABI: load/store barriers, undo logging, memcpy/memmove/memset. */
#include <ltx/tm.h>

#include <string.h>

#include "tx/access.h"
#include "tx/fast.h"
#include "itm/itm.h"
#include "itm/libitm.h"

LTX_SIZED_COPIES_BEGIN

/*
 * In an ITM_INSTR transaction a load is LT (LTX for read-for-write) and a
 * store is ST; the hints RaR/RaW/WaR/WaW change nothing for ltx.  A
 * naturally aligned object of 1, 2, 4 or 8 bytes takes the inline fast
 * path of the tm_* API; any other (long double, complex, vectors,
 * misaligned, straddling two lines) goes word by word through the same
 * operations, so each byte is read or written exactly as asked.  Stores to
 * this thread's own stack are direct (stack_store says why), and so are
 * stores to an exception object the transaction is building or handling
 * (eh.c); loads of either through ltx read memory, so they see them.
 *
 * In the serial modes the transaction runs alone: memory is accessed
 * directly, and stores are undo-logged while the transaction can still
 * cancel (t->log_writes).
 */

static struct ltx_itm_thread *thread(void)
{
	struct ltx_itm_thread *t = ltx_itm_state();

	return t != NULL ? t : ltx_itm_thread_get();
}

/* A doomed ltx transaction restarts at once: see itm.c. */
static inline void check_doom(struct ltx_itm_thread *t)
{
	if (ltx_unlikely(__atomic_load_n(&ltx_self->status, __ATOMIC_RELAXED) ==
			 LTX_DOOMED))
		ltx_itm_restart(t);
}

static __attribute__((noinline)) uint64_t
slow_load_word(struct ltx_itm_thread *t, const void *a, bool excl)
{
	uint64_t x = ltx_tx_load(ltx_self, a, excl);

	check_doom(t);
	return x;
}

static __attribute__((noinline)) void
slow_store(struct ltx_itm_thread *t, void *a, uint64_t val, unsigned size)
{
	ltx_tx_store(ltx_self, a, val, size);
	check_doom(t);
}

static __attribute__((noinline)) void load_bytes(struct ltx_itm_thread *t,
						 void *dst, const void *src,
						 size_t n, bool excl)
{
	ltx_access_load_bytes(dst, src, n, excl);
	check_doom(t);
}

/* Whether [a, a + n) lies on this thread's stack. */
static inline bool on_stack(const void *a, size_t n)
{
	const struct ltx_tx *tx = ltx_self;
	uintptr_t p = (uintptr_t)a, span = tx->stack_span;

	return p - tx->stack_lo < span && p + n - tx->stack_lo <= span;
}

/*
 * A store to this thread's stack is direct.  Buffering it would be wrong
 * both ways: GCC reads the locals of the function that began the
 * transaction directly (it knows them thread-private), so a store made
 * through a pointer in a callee must reach memory now; and the frames
 * below the begin are dead at commit, so writing buffered values back
 * then would clobber reused stack.  Locals that outlive the transaction
 * (at or above the begin's CFA) are undo-logged for a rollback; the dead
 * frames below it need no undo.
 */
static __attribute__((noinline)) void
stack_store(struct ltx_itm_thread *t, void *dst, const void *src, size_t n)
{
	if ((uintptr_t)dst + n > t->jb.cfa)
		ltx_itm_log(t, dst, n);
	memmove(dst, src, n);
}

/* Whether a store goes straight to an exception object the transaction
 * is building or handling (eh.c says why). */
static inline bool eh_private(struct ltx_itm_thread *t, const void *dst,
			      size_t n)
{
	return ltx_unlikely(t->eh_objs_len != 0) &&
	       ltx_itm_eh_private(t, dst, n);
}

static __attribute__((noinline)) void
store_bytes(struct ltx_itm_thread *t, void *dst, const void *src, size_t n)
{
	if (on_stack(dst, n)) {
		stack_store(t, dst, src, n);
		return;
	}
	if (eh_private(t, dst, n)) {
		memmove(dst, src, n);
		return;
	}
	ltx_access_store_bytes(dst, src, n);
	check_doom(t);
}

static __attribute__((noinline)) void
serial_load(struct ltx_itm_thread *t, void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
}

static __attribute__((noinline)) void
serial_store(struct ltx_itm_thread *t, void *dst, const void *src, size_t n)
{
	if (t->log_writes)
		ltx_itm_log(t, dst, n);
	memmove(dst, src, n);
}

/* LT or LTX of the aligned word at a, for the slow paths: the inline
 * cases first (a fresh line, read after write), then the full one. */
static inline __attribute__((always_inline)) uint64_t
load_word(struct ltx_itm_thread *t, const void *a, bool excl)
{
	uint64_t x;

	if (ltx_tx_fast_load_open(ltx_self, a, excl, false, &x))
		return x;
	return slow_load_word(t, a, excl);
}

/* ST of the aligned word at a off the stack, for the slow paths. */
static inline __attribute__((always_inline)) void
store_word(struct ltx_itm_thread *t, void *a, uint64_t x)
{
	if (ltx_tx_fast_store_open(ltx_self, a, x, 8))
		return;
	slow_store(t, a, x, 8);
}

/*
 * Everything but the fast path of an ITM_INSTR transaction.  16 bytes
 * aligned to 8 (two longs or pointers side by side, which GCC loads and
 * stores as one vector) go as two words.
 */
static __attribute__((noinline)) void read_slow(void *dst, const void *src,
						size_t size, bool excl)
{
	struct ltx_itm_thread *t = thread();
	uintptr_t p = (uintptr_t)src;

	if (t->mode != ITM_INSTR) {
		serial_load(t, dst, src, size);
		return;
	}
	if (size <= 8 && (p & (size - 1)) == 0) {
		uint64_t x = slow_load_word(
			t, (const void *)(p & ~LTX_WORD_MASK), excl);

		x >>= (p & LTX_WORD_MASK) * 8;
		memcpy(dst, &x, size); /* little-endian */
		return;
	}
	if (size == 16 && (p & LTX_WORD_MASK) == 0) {
		uint64_t x[2];

		x[0] = load_word(t, src, excl);
		x[1] = load_word(t, (const char *)src + 8, excl);
		memcpy(dst, x, sizeof(x));
		return;
	}
	load_bytes(t, dst, src, size, excl);
}

/* read_slow of an object of at most 8 bytes, returned in the low bytes. */
static __attribute__((noinline)) uint64_t
read_slow_small(const void *src, size_t size, bool excl)
{
	uint64_t x = 0;

	read_slow(&x, src, size, excl);
	return x;
}

static __attribute__((noinline)) void write_slow(void *dst, const void *src,
						 size_t size)
{
	struct ltx_itm_thread *t = thread();
	uintptr_t p = (uintptr_t)dst;

	if (t->mode != ITM_INSTR) {
		serial_store(t, dst, src, size);
		return;
	}
	/* Direct (store_bytes says how): a store to the stack, or to an
	 * exception object the transaction is building or handling. */
	if (on_stack(dst, size) || eh_private(t, dst, size)) {
		store_bytes(t, dst, src, size);
		return;
	}
	if (size <= 8 && (p & (size - 1)) == 0) {
		uint64_t x = 0;

		memcpy(&x, src, size);
		slow_store(t, dst, x, (unsigned)size);
		return;
	}
	if (size == 16 && (p & LTX_WORD_MASK) == 0) {
		uint64_t x[2];

		memcpy(x, src, sizeof(x));
		store_word(t, dst, x[0]);
		store_word(t, (char *)dst + 8, x[1]);
		return;
	}
	store_bytes(t, dst, src, size);
}

#ifndef NDEBUG
/* Debug builds: the descriptor's copy agrees with the state it copies
 * (itm.h, ltx_itm_set_path). */
static bool path_agrees(const struct ltx_tx *tx)
{
	const struct ltx_itm_thread *t = tx->frontend;

	if (t == NULL)
		return tx->itm_path == 0;
	return tx->itm_path ==
	       ((t->mode > ITM_INSTR ? LTX_ITM_PATH_DIRECT : 0) |
		(t->eh_objs_len != 0 ? LTX_ITM_PATH_EH : 0));
}
#endif

/*
 * Whether the thread's GCC transaction runs in a serial mode, where it
 * accesses memory directly.  Within a barrier the state is the current
 * thread's: the transaction's begin made it fresh.
 */
static inline __attribute__((always_inline)) bool
serial_mode(const struct ltx_tx *tx)
{
	assert(path_agrees(tx));
	/* The mode's copy in the descriptor (itm.h, ltx_itm_set_path):
	 * one test of a line the transaction's begin wrote, not a chain
	 * of two loads through the frontend pointer. */
	return (tx->itm_path & LTX_ITM_PATH_DIRECT) != 0;
}

/*
 * A store of an aligned object of at most 8 bytes to this thread's stack
 * (stack_store says why it is direct), without the slow path's detour:
 * the dead frames below the begin take it as is, the live ones are
 * undo-logged first while the transaction can roll back (ITM_INSTR, or a
 * serial mode that logs).  Returns false if the thread has no state.
 */
static inline __attribute__((always_inline)) bool
stack_store_word(struct ltx_tx *tx, void *dst, const void *src, size_t size)
{
	struct ltx_itm_thread *t = tx->frontend;

	if (ltx_unlikely(t == NULL))
		return false;
	if ((uintptr_t)dst + size > t->jb.cfa &&
	    (t->mode == ITM_INSTR || t->log_writes))
		ltx_itm_log_small(t, dst, size);
	memcpy(dst, src, size);
	return true;
}

/* The same in a serial mode, off the stack: undo-logged while the
 * transaction can still cancel (serial_store).  Returns false if the
 * transaction is not serial. */
static inline __attribute__((always_inline)) bool
serial_store_word(struct ltx_tx *tx, void *dst, const void *src, size_t size)
{
	struct ltx_itm_thread *t = tx->frontend;

	if (!serial_mode(tx))
		return false;
	if (t->log_writes)
		ltx_itm_log_small(t, dst, size);
	memcpy(dst, src, size);
	return true;
}

/*
 * Whether the transaction has exception objects, whose lines it holds (eh.c)
 * but writes directly: the slow path then picks between them and the rest
 * (ltx_tx_fast_store_open would buffer a store to a line held).
 */
static inline __attribute__((always_inline)) bool
eh_objects(const struct ltx_tx *tx)
{
	/* The state's eh_objs_len != 0, as its copy in the descriptor
	 * (itm.h, ltx_itm_set_path). */
	assert(path_agrees(tx));
	return ltx_unlikely(tx->itm_path & LTX_ITM_PATH_EH);
}

/*
 * The fast paths: a naturally aligned object of at most 8 bytes, or 16
 * bytes aligned to 8 (two words), off this thread's stack for a store, in
 * the ltx transaction of an ITM_INSTR one;
 * a load or store of a line the transaction has already written (read
 * after write, and a later store to it: its write-set entry, found
 * through the orec); a store to its stack; in a serial mode, a plain
 * load, and a store after its undo record; the rest, including whatever
 * ltx's inline paths decline, goes to the slow paths above, which start
 * over from the mode.  The descriptor is all the fast paths need to
 * know: while a GCC transaction runs, its ltx transaction is open (begun
 * at _ITM_beginTransaction), so they never begin one.  Its limit is 0 in
 * the serial modes (it runs alone), and while it is doomed or counted: a
 * zero limit skips the instrumented paths before any orec is hashed (one
 * test more for an instrumented access, half the cost of a serial one),
 * and one test of the GCC mode picks the direct access.
 */
static inline __attribute__((always_inline)) void
read_one(void *dst, const void *src, size_t size, bool excl)
{
	struct ltx_tx *tx = ltx_self;
	uintptr_t p = (uintptr_t)src;

	if (size <= 8 && (p & (size - 1)) == 0 &&
	    ltx_likely(tx->cd.limit != 0)) {
		/* (For 8 bytes the compiler cannot tell that p is the word.) */
		const void *word =
			size == 8 ? src : (const void *)(p & ~LTX_WORD_MASK);
		uint64_t x;

		if (ltx_likely(
			    ltx_tx_fast_load_open(tx, word, excl, true, &x))) {
			if (size < 8)
				x >>= (p & LTX_WORD_MASK) * 8;
			memcpy(dst, &x, size); /* little-endian */
			return;
		}
	}
	if (serial_mode(tx)) {
		memcpy(dst, src, size);
		return;
	}
	if (size <= 8) {
		/* src first and the object returned: the fast path keeps
		 * src where it came, and the call is a tail call. */
		uint64_t x = read_slow_small(src, size, excl);

		memcpy(dst, &x, size); /* little-endian */
		return;
	}
	read_slow(dst, src, size, excl);
}

/* read_one, and two words aligned to 8 as two words: two longs or pointers
 * side by side, which GCC loads as one vector, each by the path of a word.
 * (Not read_one calling itself: unoptimized, GCC cannot inline that.) */
static inline __attribute__((always_inline)) void
read_obj(void *dst, const void *src, size_t size, bool excl)
{
	if (size == 16 && ((uintptr_t)src & LTX_WORD_MASK) == 0) {
		read_one(dst, src, 8, excl);
		read_one((char *)dst + 8, (const char *)src + 8, 8, excl);
		return;
	}
	read_one(dst, src, size, excl);
}

static inline __attribute__((always_inline)) void
write_one(void *dst, const void *src, size_t size)
{
	struct ltx_tx *tx = ltx_self;
	uintptr_t p = (uintptr_t)dst;

	if (size <= 8 && (p & (size - 1)) == 0) {
		uint64_t x = 0;

		if (ltx_unlikely(p - tx->stack_lo < tx->stack_span)) {
			if (stack_store_word(tx, dst, src, size))
				return;
		} else if (ltx_likely(tx->cd.limit != 0) &&
			   ltx_likely(!eh_objects(tx))) {
			memcpy(&x, src, size);
			if (ltx_likely(ltx_tx_fast_store_open(tx, dst, x,
							      (unsigned)size)))
				return;
		} else if (serial_store_word(tx, dst, src, size)) {
			return;
		}
	}
	write_slow(dst, src, size);
}

/* write_one, and two words aligned to 8 as two words, as read_obj (a
 * stack word is undo-logged alone). */
static inline __attribute__((always_inline)) void
write_obj(void *dst, const void *src, size_t size)
{
	if (size == 16 && ((uintptr_t)dst & LTX_WORD_MASK) == 0) {
		write_one(dst, src, 8);
		write_one((char *)dst + 8, (const char *)src + 8, 8);
		return;
	}
	write_one(dst, src, size);
}

#pragma GCC visibility push(default)

#define LOADS(T, S, ATTR)                                                      \
	ATTR T _ITM_R##S(const T *p)                                           \
	{                                                                      \
		T v;                                                           \
		read_obj(&v, p, sizeof(T), false);                             \
		return v;                                                      \
	}                                                                      \
	ATTR T _ITM_RaR##S(const T *p)                                         \
	{                                                                      \
		T v;                                                           \
		read_obj(&v, p, sizeof(T), false);                             \
		return v;                                                      \
	}                                                                      \
	ATTR T _ITM_RaW##S(const T *p)                                         \
	{                                                                      \
		T v;                                                           \
		read_obj(&v, p, sizeof(T), false);                             \
		return v;                                                      \
	}                                                                      \
	ATTR T _ITM_RfW##S(const T *p)                                         \
	{                                                                      \
		T v;                                                           \
		read_obj(&v, p, sizeof(T), true);                              \
		return v;                                                      \
	}

#define STORES(T, S, ATTR)                                                     \
	ATTR void _ITM_W##S(T *p, T v)                                         \
	{                                                                      \
		write_obj(p, &v, sizeof(T));                                   \
	}                                                                      \
	ATTR void _ITM_WaR##S(T *p, T v)                                       \
	{                                                                      \
		write_obj(p, &v, sizeof(T));                                   \
	}                                                                      \
	ATTR void _ITM_WaW##S(T *p, T v)                                       \
	{                                                                      \
		write_obj(p, &v, sizeof(T));                                   \
	}

#define LOGS(T, S, ATTR)                                                       \
	ATTR void _ITM_L##S(const T *p)                                        \
	{                                                                      \
		_ITM_LB(p, sizeof(T));                                         \
	}

#define BARRIERS(T, S, ATTR)                                                   \
	LOADS(T, S, ATTR)                                                      \
	STORES(T, S, ATTR)                                                     \
	LOGS(T, S, ATTR)

#define PLAIN
#define AVX __attribute__((target("avx")))

BARRIERS(uint8_t, U1, PLAIN)
BARRIERS(uint16_t, U2, PLAIN)
BARRIERS(uint32_t, U4, PLAIN)
BARRIERS(uint64_t, U8, PLAIN)
BARRIERS(float, F, PLAIN)
BARRIERS(double, D, PLAIN)
BARRIERS(long double, E, PLAIN)
BARRIERS(float _Complex, CF, PLAIN)
BARRIERS(double _Complex, CD, PLAIN)
BARRIERS(long double _Complex, CE, PLAIN)
BARRIERS(_ITM_TYPE_M64, M64, PLAIN)
BARRIERS(_ITM_TYPE_M128, M128, PLAIN)
BARRIERS(_ITM_TYPE_M256, M256, AVX)

/*
 * _ITM_LB: thread-private memory the transaction will write directly;
 * save it so a rollback can put it back.  An irrevocable transaction
 * never rolls back, unless a nested one may cancel.
 */
void _ITM_LB(const void *addr, size_t size)
{
	struct ltx_itm_thread *t = thread();

	if (t->depth == 0 || size == 0 ||
	    (t->mode == ITM_SERIAL_IRR && !t->log_writes))
		return;
	ltx_itm_log(t, addr, size);
}

#pragma GCC visibility pop

/*
 * Bulk copies: the transactional side (t) through the barriers' byte
 * paths, the other (n) directly, in chunks so that any length works with
 * a bounded buffer.  memmove copies the chunks from the end when the
 * destination lies above an overlapping source.
 */
#define CHUNK 256

static void bulk_read(void *dst, const void *src, size_t n, bool tx)
{
	struct ltx_itm_thread *t = thread();

	if (!tx || t->mode != ITM_INSTR)
		memcpy(dst, src, n);
	else
		load_bytes(t, dst, src, n, false);
}

static void bulk_write(void *dst, const void *src, size_t n, bool tx)
{
	struct ltx_itm_thread *t = thread();

	if (!tx)
		memcpy(dst, src, n);
	else if (t->mode != ITM_INSTR)
		serial_store(t, dst, src, n);
	else
		store_bytes(t, dst, src, n);
}

static void copy(void *dst, const void *src, size_t n, bool rtx, bool wtx,
		 bool move)
{
	unsigned char buf[CHUNK];
	uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
	bool backward = move && d > s && d - s < n;

	if (n == 0)
		return;
	if (move && rtx != wtx && (d - s < n || s - d < n))
		ltx_itm_fatal("memmove between overlapping transactional and "
			      "non-transactional memory");
	if (!backward) {
		for (size_t off = 0; off < n; off += CHUNK) {
			size_t k = n - off < CHUNK ? n - off : CHUNK;

			bulk_read(buf, (const char *)src + off, k, rtx);
			bulk_write((char *)dst + off, buf, k, wtx);
		}
		return;
	}
	for (size_t end = n; end > 0;) {
		size_t k = end < CHUNK ? end : CHUNK;

		end -= k;
		bulk_read(buf, (const char *)src + end, k, rtx);
		bulk_write((char *)dst + end, buf, k, wtx);
	}
}

#pragma GCC visibility push(default)

#define COPY(R, W, rtx, wtx)                                                   \
	void _ITM_memcpy##R##W(void *dst, const void *src, size_t n)           \
	{                                                                      \
		copy(dst, src, n, rtx, wtx, false);                            \
	}                                                                      \
	void _ITM_memmove##R##W(void *dst, const void *src, size_t n)          \
	{                                                                      \
		copy(dst, src, n, rtx, wtx, true);                             \
	}

#define COPY_TO_ALL(R, rtx)                                                    \
	COPY(R, Wt, rtx, true)                                                 \
	COPY(R, WtaR, rtx, true)                                               \
	COPY(R, WtaW, rtx, true)

COPY(Rn, Wt, false, true)
COPY(Rn, WtaR, false, true)
COPY(Rn, WtaW, false, true)
COPY(Rt, Wn, true, false)
COPY(RtaR, Wn, true, false)
COPY(RtaW, Wn, true, false)
COPY_TO_ALL(Rt, true)
COPY_TO_ALL(RtaR, true)
COPY_TO_ALL(RtaW, true)

static void set(void *dst, int c, size_t n)
{
	unsigned char buf[CHUNK];

	memset(buf, c, n < CHUNK ? n : CHUNK);
	for (size_t off = 0; off < n; off += CHUNK) {
		size_t k = n - off < CHUNK ? n - off : CHUNK;

		bulk_write((char *)dst + off, buf, k, true);
	}
}

void _ITM_memsetW(void *dst, int c, size_t n)
{
	set(dst, c, n);
}

void _ITM_memsetWaR(void *dst, int c, size_t n)
{
	set(dst, c, n);
}

void _ITM_memsetWaW(void *dst, int c, size_t n)
{
	set(dst, c, n);
}

#pragma GCC visibility pop

LTX_SIZED_COPIES_END
