/* SPDX-License-Identifier: MIT */
/* ltx public API: the LT/LTX/ST/VALIDATE/COMMIT transactional-memory ISA in C.
 */
#ifndef LTX_TM_H
#define LTX_TM_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The calls a transaction makes per operation go straight through the GOT
 * where the compiler can (GCC's noplt: no PLT stub, one jump less per
 * call; the function is bound when the program loads).
 */
#ifndef TM__NOPLT
#if defined(__has_attribute)
#if __has_attribute(noplt)
#define TM__NOPLT __attribute__((noplt))
#endif
#endif
#endif
#ifndef TM__NOPLT
#define TM__NOPLT
#endif

/* One machine word, the unit of tm_lt/tm_ltx/tm_st. */
typedef uintptr_t tm_word_t;

/*
 * Abort causes, as returned by tm_status().  Bits 0-5 keep Intel RTM's
 * layout (EAX after an XBEGIN abort) so masks written for RTM read the same;
 * ltx's own causes start at bit 6.  Bits 24-31 carry a code: the signal
 * number for TM_ABORT_SIGNAL and TM_ABORT_FAULT.
 */
#define TM_ABORT_EXPLICIT     (1u << 0) /* tm_abort() was called */
#define TM_ABORT_RETRY	      (1u << 1) /* the transaction may succeed on retry */
#define TM_ABORT_CONFLICT     (1u << 2) /* another transaction held a line */
#define TM_ABORT_CAPACITY     (1u << 3) /* the transaction cache overflowed */
#define TM_ABORT_DEBUG	      (1u << 4) /* reserved (RTM layout) */
#define TM_ABORT_NESTED	      (1u << 5) /* reserved (RTM layout) */
#define TM_ABORT_SIGNAL	      (1u << 6) /* a signal was delivered in the tx */
#define TM_ABORT_FAULT	      (1u << 7) /* a doomed tx faulted (SIGSEGV...) */
#define TM_ABORT_VALIDATE     (1u << 8) /* a line read changed (invisible mode) */
#define TM_ABORT_NOMEM	      (1u << 9) /* no memory for the tx's logs */
#define TM_ABORT_CODE(status) (((status) >> 24) & 0xffu)

/* Transactional operations (the article's LT, LTX, ST). */

/*
 * tm_lt: LT, a shared transactional load of the aligned word at addr.
 * Starts a transaction if none is in progress.  If the line is held by
 * another transaction the load fails silently: the transaction is doomed
 * and this and every later load in it return 0 without reading memory.
 */
tm_word_t tm_lt(const void *addr) TM__NOPLT;

/* tm_ltx: LTX, an exclusive transactional load (the line is taken in E). */
tm_word_t tm_ltx(const void *addr) TM__NOPLT;

/* tm_st: ST, a buffered transactional store of one aligned word. */
void tm_st(void *addr, tm_word_t val) TM__NOPLT;

/* Sized forms: any naturally aligned 1, 2, 4 or 8 byte object. */
uint8_t tm_lt_u8(const void *addr) TM__NOPLT;
uint16_t tm_lt_u16(const void *addr) TM__NOPLT;
uint32_t tm_lt_u32(const void *addr) TM__NOPLT;
uint64_t tm_lt_u64(const void *addr) TM__NOPLT;
uint8_t tm_ltx_u8(const void *addr) TM__NOPLT;
uint16_t tm_ltx_u16(const void *addr) TM__NOPLT;
uint32_t tm_ltx_u32(const void *addr) TM__NOPLT;
uint64_t tm_ltx_u64(const void *addr) TM__NOPLT;
void tm_st_u8(void *addr, uint8_t val) TM__NOPLT;
void tm_st_u16(void *addr, uint16_t val) TM__NOPLT;
void tm_st_u32(void *addr, uint32_t val) TM__NOPLT;
void tm_st_u64(void *addr, uint64_t val) TM__NOPLT;

/* Byte ranges of any size and alignment (structs, strings). */
void tm_lt_bytes(void *dst, const void *src, size_t n) TM__NOPLT;
void tm_st_bytes(void *dst, const void *src, size_t n) TM__NOPLT;

/*
 * tm_validate: VALIDATE.  Returns true if the transaction can still commit
 * (or if none is in progress).  Returns false if it was doomed: it is then
 * aborted, the backoff delay has been applied, and the next transactional
 * operation starts a new transaction.
 */
bool tm_validate(void) TM__NOPLT;

/*
 * tm_commit: COMMIT.  Returns true if the transaction's stores were
 * published atomically (or if none was in progress); false if it aborted
 * (backoff applied).  Either way the transaction is over.
 */
bool tm_commit(void) TM__NOPLT;

/* tm_abort: abort the current transaction now, discarding its stores. */
void tm_abort(void);

/*
 * tm_status: the TM_ABORT_* bits of this thread's transaction: of the
 * current one if it is doomed, else of the last one that ended (0 if it
 * committed).
 */
unsigned tm_status(void);

/* tm_in_transaction: true while a transaction (live or doomed) is open. */
bool tm_in_transaction(void);

/*
 * Configuration.  tm_config_set applies one LTX_* setting by name, with the
 * same syntax as the environment ("LTX_BACKOFF", "exp:min=64,max=4096").
 * Returns 0, or -1 with errno EINVAL (bad name or value, nothing changed)
 * or EBUSY (the setting can only change before other threads use ltx).
 * tm_config_get writes the setting's current value into buf.
 */
int tm_config_set(const char *name, const char *value);
int tm_config_get(const char *name, char *buf, size_t len);

/*
 * Statistics (see tm_stats_get(3) and ltxstat(1)).  The totals of every
 * thread that used ltx, exited threads included.  Histogram bucket 0
 * counts the value 0, bucket b > 0 the values in [2^(b-1), 2^b), the last
 * bucket everything larger.  Histograms, conflict kinds and exact
 * read-only commits of running threads need LTX_STATS=1 (or stacks).
 */
#define TM_STATS_CAUSES 16 /* abort_cause[b]: aborts with bit b set */
#define TM_STATS_HIST	16

struct tm_stats {
	size_t size;	     /* in: sizeof(struct tm_stats); out: filled */
	uint64_t threads;    /* threads that used ltx */
	uint64_t commits;    /* committed transactions */
	uint64_t commits_ro; /* ... that wrote no line */
	uint64_t commits_rw; /* ... that wrote */
	uint64_t aborts;     /* aborted transactions (each try counts) */
	uint64_t abort_cause[TM_STATS_CAUSES]; /* by TM_ABORT_* bit */
	uint64_t conflicts_read;	       /* LT found the line held */
	uint64_t conflicts_write;	       /* LTX/ST found the line held */
	uint64_t conflicts_upgrade;	       /* ... and had read it with LT */
	uint64_t retries_hist[TM_STATS_HIST];  /* failed tries per commit */
	uint64_t reads_hist[TM_STATS_HIST];    /* LT loads per commit */
	uint64_t writes_hist[TM_STATS_HIST];   /* lines written per commit */
	uint64_t backoff_cycles; /* cycle-counter ticks spent backing off */
	uint64_t irrevocable;	 /* irrevocable runs */
	uint64_t serial;	 /* serial runs */
	uint64_t bus_t_read;	 /* faithful mode: emulated T_READ requests */
	uint64_t bus_t_rfo;	 /* ... T_RFO requests */
	uint64_t bus_busy;	 /* ... BUSY answers */
	uint64_t bus_writeback;	 /* ... write-backs */
};

/*
 * tm_stats_get: the process's transaction statistics.  Set out->size to
 * sizeof(*out) first: a program built against an older, smaller struct
 * gets the fields it knows.  Each thread's figures are a consistent
 * snapshot of that thread (never an abort without its cause).  Returns 0,
 * or -1 with errno EINVAL (out NULL or out->size too small).
 */
int tm_stats_get(struct tm_stats *out);

/*
 * Restartable blocks, retry and irrevocability: see TM_ATOMIC(3) and
 * tm_irrevocable(3).
 *
 *	TM_ATOMIC {
 *		tm_word_t a = tm_lt(&from->balance);
 *		tm_st(&from->balance, a - n);
 *		tm_st(&to->balance, tm_lt(&to->balance) + n);
 *	}
 *
 * The body runs as one transaction, committed at the end of the block; if
 * the transaction aborts (a conflict, a signal, a fault caused by
 * inconsistent data) the body runs again from the top, until it commits.
 * Inside, tm_retry() restarts the block and tm_abort() leaves it (jumping
 * past it, its stores discarded).  Local variables of the enclosing
 * function that the body modifies have indeterminate values after a
 * restart unless they are volatile, as after longjmp(3).  A TM_ATOMIC
 * inside another runs as part of the outer transaction (flat nesting).
 * Leaving the body with break, continue, return or goto commits the
 * transaction (restarting the block if that fails); leaving it with
 * longjmp is not allowed.  C only (not C++: the restart skips destructors).
 */
/*
 * The restart point, one of three kinds (TM__JMP_KIND, which the block
 * tells the library):
 *  2: x86-64 (LP64) with GCC or Clang: tm__block_enter, which is the block's
 *     begin and its setjmp in one call (returns_twice: the compiler keeps
 *     nothing in registers across it but what it saves, the callee-saved
 *     registers and the stack pointer; no signal mask, no pointer
 *     mangling);
 *  1: GCC's and Clang's builtin setjmp elsewhere;
 *  0: setjmp(3) where neither can serve (other compilers;
 *     AddressSanitizer, whose longjmp interceptor must see every jump).
 * The library jumps back with the matching longjmp.
 */
#if defined(__SANITIZE_ADDRESS__)
#define TM__JMP_KIND 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TM__JMP_KIND 0
#endif
#endif
#if !defined(TM__JMP_KIND) && defined(__GNUC__) && defined(__x86_64__) &&      \
	!defined(__ILP32__)
#define TM__JMP_KIND 2
#elif !defined(TM__JMP_KIND) && defined(__GNUC__)
#define TM__JMP_KIND 1
#elif !defined(TM__JMP_KIND)
#define TM__JMP_KIND 0
#endif
#if TM__JMP_KIND == 2
typedef void *tm__jmp_buf[7]; /* api/atomic-x86_64.S */
#elif TM__JMP_KIND == 1
typedef void *tm__jmp_buf[5];
#define TM__SETJMP(b) __builtin_setjmp(b)
#else
typedef jmp_buf tm__jmp_buf;
#define TM__SETJMP(b) setjmp(b)
#endif

struct tm__atomic {
	void *tm__link[2];   /* ltx's checkpoint (private) */
	int tm__state;	     /* private (kinds 0 and 1: 0 once over) */
	int tm__kind;	     /* private: TM__JMP_KIND */
	tm__jmp_buf tm__buf; /* the restart point */
};

struct tm__atomic *tm__atomic_begin(struct tm__atomic *a, int kind);
void tm__atomic_end(struct tm__atomic *a);
void tm__atomic_restarted(struct tm__atomic *a);
void tm__atomic_left(struct tm__atomic *a);

#if TM__JMP_KIND == 2
/* Through the GOT (TM__NOPLT): these are called per block. */
void *tm__block_enter(struct tm__atomic *a)
	__attribute__((returns_twice)) TM__NOPLT;
void tm__block_end(struct tm__atomic *a) TM__NOPLT;
void tm__block_left(struct tm__atomic *a);
#endif

/* Scope exit: nothing to do after the loop ended the block; out of line
 * only when the body was left early (break, return, goto, an unwind).
 * Always inlined: the library looks at where it is called from. */
static inline __attribute__((always_inline)) void
tm__atomic_cleanup(struct tm__atomic *a)
{
	if (__builtin_expect(a->tm__state != 0, 0))
		tm__atomic_left(a);
}

#ifdef __cplusplus
/*
 * C++: refused where it is used, with a message, rather than compiled: a
 * restart would longjmp over the destructors of the block's objects.
 */
#if __cplusplus >= 201103L
#define TM_ATOMIC                                                              \
	static_assert(false, "TM_ATOMIC is C only: in C++ its restart would "  \
			     "longjmp over destructors; see TM_ATOMIC(3)");
#else
#define TM_ATOMIC TM_ATOMIC_is_C_only_see_TM_ATOMIC_3;
#endif
#elif TM__JMP_KIND == 2
/* Scope exit of an x86-64 block: tm__b is NULL once the loop is over
 * (the compiler knows it there, and drops the test), else the body was
 * left early. */
static inline __attribute__((always_inline)) void
tm__block_cleanup(struct tm__atomic **b)
{
	if (__builtin_expect(*b != NULL, 0))
		tm__block_left(*b);
}

/*
 * One call per block (in the declaration) begins it and is its restart
 * point: it returns non-NULL to run the body, NULL to skip it (after
 * tm_abort(), or where no transaction can run), and a restart returns
 * from it again, the failed transaction already ended.  tm__b holds the
 * block while the body runs: not the block's state in memory, so the
 * loop reads nothing back.  end commits the block (a failed commit
 * restarts it, so end returns only when the block is over), and
 * tm__b = NULL then ends the loop without a test.  No initializer
 * zero-fills the block: begin sets what is read.
 */
#define TM_ATOMIC                                                              \
	for (struct tm__atomic tm__a,                                          \
	     *tm__b __attribute__((cleanup(tm__block_cleanup))) =              \
		     tm__block_enter(&tm__a) != NULL ? &tm__a : NULL;          \
	     tm__b != NULL; tm__block_end(&tm__a), tm__b = NULL)
#else
/*
 * One begin per block (in the declaration: tm__b only holds what it
 * returns); end commits the block and sets its state to 0, or after a
 * restart lets the loop run the body again.  The restart point is taken
 * in the loop's body, so that a restart lands here: restarted() ends the
 * failed transaction and the loop runs the body again (or leaves it,
 * after tm_abort()).  No initializer zero-fills the block: begin sets
 * what is read.  The macro's variables live in memory (no register copy
 * for the jump back to clobber).
 */
#define TM_ATOMIC                                                              \
	for (struct tm__atomic tm__a                                           \
	     __attribute__((cleanup(tm__atomic_cleanup))),                     \
	     *tm__b[1] __attribute__((unused)) = { tm__atomic_begin(           \
		     &tm__a, TM__JMP_KIND) };                                  \
	     tm__a.tm__state != 0; tm__atomic_end(&tm__a))                     \
		if (TM__SETJMP(tm__a.tm__buf) != 0)                            \
			tm__atomic_restarted(&tm__a);                          \
		else
#endif

/*
 * tm_retry: abort the transaction (TM_ABORT_EXPLICIT|TM_ABORT_RETRY) and
 * apply backoff; inside TM_ATOMIC, restart the block (never returns).
 */
void tm_retry(void);

/*
 * tm_irrevocable: make the current transaction irrevocable (beginning one
 * if none is open): it becomes the only one that can commit updates until
 * it ends, and it never aborts from then on, so it may do I/O and system
 * calls.  Returns true if it is now irrevocable; false if it was doomed
 * (inside TM_ATOMIC the block then restarts instead of returning).
 */
bool tm_irrevocable(void);

/*
 * tm_on_commit, tm_on_abort: run fn(arg) once the current transaction has
 * committed, or once it has aborted (beginning a transaction if none is
 * open, as tm_lt would).  Commit handlers run in the order registered,
 * abort handlers in the reverse order, after the transaction is over:
 * outside it, with its lines released (a handler may run transactions of
 * its own).  Inside TM_ATOMIC, a restart runs the failed attempt's abort
 * handlers and forgets its commit handlers, and a nested block's handlers
 * belong to the outermost one's transaction.  Returns 0, or -1 with errno
 * EINVAL (fn is NULL) or ENOMEM (no memory to record it, or more than 8
 * in a signal handler's transaction, which never allocates); the
 * transaction goes on as before.  In a doomed transaction an abort
 * handler is still recorded; a commit handler is not, and 0 is returned:
 * it could never run.
 */
int tm_on_commit(void (*fn)(void *arg), void *arg);
int tm_on_abort(void (*fn)(void *arg), void *arg);

/*
 * Transactional allocation.  Usable inside and outside transactions.
 * A block from tm_malloc, tm_calloc or tm_aligned_alloc is freed with
 * tm_free only (never free()), and a free() block never with tm_free.
 *
 * Inside a transaction (one begun by an earlier tm_lt/tm_ltx/tm_st): a
 * block allocated by a transaction that aborts is released; tm_free acts
 * as a store to every byte of the block (it conflicts with transactions
 * using it) and takes effect only if the transaction commits.  A freed
 * block is released to the allocator only once no transaction that might
 * still read it is running, so a doomed transaction that still holds a
 * pointer to it never reads freed memory.  Outside a transaction, tm_free
 * is a transaction of its own, and as safe.
 *
 * Returns NULL with errno ENOMEM when out of memory (also when the
 * allocator cannot be loaded: see LTX_ALLOC in ltx(7)); tm_aligned_alloc
 * returns NULL with errno EINVAL if alignment is not a power of two.
 *
 * tm_free_sized is tm_free of a block from tm_malloc or tm_calloc whose
 * size the caller passes (tm_malloc's size, tm_calloc's nmemb * size),
 * which spares looking it up; size 0 looks it up, as tm_free does.  A
 * wrong size, or a block from tm_aligned_alloc, is undefined behaviour
 * (as with C23's free_sized); builds configured with --enable-debug
 * report it and abort.
 */
void *tm_malloc(size_t size) TM__NOPLT;
void *tm_calloc(size_t nmemb, size_t size) TM__NOPLT;
void *tm_aligned_alloc(size_t alignment, size_t size);
void tm_free(void *ptr) TM__NOPLT;
void tm_free_sized(void *ptr, size_t size) TM__NOPLT;

/* Memory waiting for reclamation and blocks handled, process-wide. */
struct tm_mem_stats {
	uint64_t pending_bytes;	     /* freed by tm_free, not yet released */
	uint64_t pending_blocks;     /* the blocks of pending_bytes */
	uint64_t freed_blocks;	     /* released to the allocator */
	uint64_t alloc_blocks;	     /* returned by tm_malloc and friends */
	uint64_t peak_pending_bytes; /* largest pending_bytes seen (sealed) */
	uint64_t limit_exceeded;     /* times pending memory was above
				      * LTX_MEM_LIMIT after reclaiming */
};

/*
 * tm_mem_stats: fill *out (figures of running threads are approximate).
 * tm_mem_flush: release now what the calling thread freed and what exited
 * threads left, as far as running transactions allow; never waits.
 * Both return 0, or -1 with errno EINVAL for a NULL out.
 */
int tm_mem_stats(struct tm_mem_stats *out);
int tm_mem_flush(void);

/*
 * Line state query.  tm_line_state returns, for the calling thread, the
 * state of the cache line holding addr in its transaction cache: the slot
 * state (TM_LINE_TX: TM_EMPTY, TM_NORMAL, TM_XABORT, TM_XCOMMIT) and the
 * MESI state (TM_LINE_MESI: 'I', 'S', 'E' or 'M'), as far as the ownership
 * records know.  A line the transaction read is NORMAL/S; a line it took
 * with LTX is XABORT/E, and XABORT/M once it stored to it (the XCOMMIT
 * partner of such a line is memory itself); any other line, and every line
 * outside a live transaction, is EMPTY/I.  See tm_line_state(3).
 */
#define TM_EMPTY	    0
#define TM_NORMAL	    1
#define TM_XABORT	    2
#define TM_XCOMMIT	    3
#define TM_LINE_TX(state)   ((int)((state)&0xffu))
#define TM_LINE_MESI(state) ((char)(((state) >> 8) & 0xffu))

unsigned tm_line_state(const void *addr);

/*
 * Bus accounting: the bus requests the article's hardware would have
 * issued, summed over every thread that used ltx (see tm_bus_stats(3)).
 * Returns 0, or -1 with errno EINVAL if out is NULL.
 */
struct tm_bus_stats {
	uint64_t t_read;     /* T_READ: first LT of a line in a transaction */
	uint64_t t_rfo;	     /* T_RFO: first LTX/ST of a line, or S->E */
	uint64_t busy;	     /* requests (of the two above) that failed */
	uint64_t write_back; /* lines written back by committing transactions */
};

int tm_bus_stats(struct tm_bus_stats *out);

/* Type-generic forms for 1, 2, 4 and 8 byte integers and pointers. */
#define TM__SIZE_OK(lv)                                                        \
	((void)sizeof(char[(sizeof(lv) == 1 || sizeof(lv) == 2 ||              \
			    sizeof(lv) == 4 || sizeof(lv) == 8)                \
				   ? 1                                         \
				   : -1]))

/*
 * tm_lt_u64, tm_ltx_u64 and tm_st_u64 of a word the caller knows to be
 * 8-byte aligned: the same without the test of alignment.  TM_LT, TM_LTX
 * and TM_ST call them for an lvalue whose type has 8-byte alignment,
 * which C places at such an address (a packed member's alignment is 1,
 * and it keeps the test).  Not for direct use: a misaligned addr is
 * undefined behaviour (debug builds of ltx report it).
 */
uint64_t tm__lt_word(const void *addr) TM__NOPLT;
uint64_t tm__ltx_word(const void *addr) TM__NOPLT;
void tm__st_word(void *addr, uint64_t val) TM__NOPLT;

#define TM__LOAD(pfx, word, lv)                                                \
	(sizeof(lv) == 1	? (uint64_t)pfx##_u8(&(lv))                    \
	 : sizeof(lv) == 2	? (uint64_t)pfx##_u16(&(lv))                   \
	 : sizeof(lv) == 4	? (uint64_t)pfx##_u32(&(lv))                   \
	 : __alignof__(lv) >= 8 ? (uint64_t)word(&(lv))                        \
				: (uint64_t)pfx##_u64(&(lv)))

/* TM_LT(lv): LT of the object lv, with lv's type. */
#define TM_LT(lv)                                                              \
	__extension__({                                                        \
		TM__SIZE_OK(lv);                                               \
		(__typeof__(lv))(uintptr_t)TM__LOAD(tm_lt, tm__lt_word, lv);   \
	})

/* TM_LTX(lv): LTX of the object lv, with lv's type. */
#define TM_LTX(lv)                                                             \
	__extension__({                                                        \
		TM__SIZE_OK(lv);                                               \
		(__typeof__(lv))(uintptr_t)TM__LOAD(tm_ltx, tm__ltx_word, lv); \
	})

/* TM_ST(lv, v): ST of v into the object lv; only lv's bytes change. */
#define TM_ST(lv, v)                                                           \
	__extension__({                                                        \
		__typeof__(lv) tm__v = (v);                                    \
		uint64_t tm__w = (uint64_t)(uintptr_t)tm__v;                   \
		TM__SIZE_OK(lv);                                               \
		if (sizeof(lv) == 1)                                           \
			tm_st_u8(&(lv), (uint8_t)tm__w);                       \
		else if (sizeof(lv) == 2)                                      \
			tm_st_u16(&(lv), (uint16_t)tm__w);                     \
		else if (sizeof(lv) == 4)                                      \
			tm_st_u32(&(lv), (uint32_t)tm__w);                     \
		else if (__alignof__(lv) >= 8)                                 \
			tm__st_word(&(lv), tm__w);                             \
		else                                                           \
			tm_st_u64(&(lv), tm__w);                               \
		(void)0;                                                       \
	})

#ifdef __cplusplus
}
#endif

/* LTX_INLINE: compile the common case of tm_lt into the caller (inline.h). */
#ifdef LTX_INLINE
#include <ltx/inline.h>
#endif

#endif /* LTX_TM_H */
