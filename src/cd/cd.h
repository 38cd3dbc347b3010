/* SPDX-License-Identifier: MIT */
/* Conflict detection: cd's part of the descriptor, and one ops table. */
#ifndef LTX_CD_CD_H
#define LTX_CD_CD_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/arch.h"
#include "rt/stats.h"

/*
 * Race windows a test can stop a thread in (tests/unit/check_take_race.c
 * compiles the runtime again with LTX_TEST_HOOKS; compiled out otherwise):
 *   fast_read  a fast path has found a line its own and not yet read
 *              memory under it (cd/invisible.h, tx/fast.h);
 *   vis_rfo    the visible mode's T_RFO has taken a line's owner word and
 *              not yet looked at its readers (cd/visible.c, write_lock).
 * In each, an irrevocable transaction may doom the thread's transaction
 * and take the line.  The test program defines the hook pointers.
 */
#ifdef LTX_TEST_HOOKS
extern void (*ltx_test_fast_read_hook)(const void *addr);
extern void (*ltx_test_vis_rfo_hook)(const void *addr);
#define LTX_TEST_HOOK(name, addr)                                              \
	do {                                                                   \
		if (ltx_test_##name##_hook != NULL)                            \
			ltx_test_##name##_hook(addr);                          \
	} while (0)
#else
#define LTX_TEST_HOOK(name, addr) ((void)0)
#endif

/*
 * Read-set entry of the invisible mode: the orec of a line read (the
 * visible mode: the bytelock marked).  No version is kept: a line read at
 * a version <= snapshot that changes later gets a version above the
 * snapshot of that moment (see invisible.c), so "orec still <= snapshot"
 * is the whole validity test.
 */
struct ltx_rentry {
	uintptr_t *orec;
};

/*
 * Write-set entry: one line held in E, with its XABORT copy.  data holds
 * the bytes stored by ST; mask has bit i set when byte i of the line is
 * dirty.  Memory itself is the XCOMMIT copy: it is not touched before the
 * commit point, and at commit only dirty bytes are written back, so bytes of
 * the line that the transaction did not store are never clobbered.
 *
 * Several lines can hash to one orec.  The first entry to take the orec
 * (the head) records it in orec and the version it replaced in old_version;
 * later entries on the same orec have orec == NULL and are chained from the
 * head through next (indices + 1 into the write set; 0 ends the chain).
 * owner lets an irrevocable transaction that finds the orec locked learn
 * whose lock it is (the progress rule, invisible.c).
 */
struct ltx_wentry {
	uint64_t data[8];      /* XABORT copy of the line (dirty bytes) */
	uint64_t mask;	       /* dirty-byte mask */
	uintptr_t line;	       /* address of the line */
	uintptr_t *orec;       /* orec taken by this entry, or NULL */
	uintptr_t old_version; /* head only: the orec's value before */
	/* flags first: link's low half (little-endian), so that a link of
	 * flags alone (LTX_WENTRY_LONE_*) is a small immediate to compare
	 * with, not a 64-bit constant to load first. */
	union {
		struct {
			uint32_t flags; /* LTX_WENTRY_* */
			uint32_t next;	/* next entry on this orec, index + 1 */
		};
		uint64_t link; /* 0: a lone head, the common case */
	};
	uint32_t head;	       /* chained entries: index of the head */
	uint32_t owner;	       /* the id of the cd whose write set this is
				* (ltx_cd.id): set when the set is made or
				* grown, never by the fast paths */
	uintptr_t single_addr; /* LTX_WENTRY_SINGLE: the word stored...
				* (else LTX_WENTRY_NO_SINGLE) */
	uint64_t single_val;   /* ...and its value (data, mask unused) */
};

_Static_assert(sizeof(struct ltx_wentry) == 128, "write-set entry size");

/* The orec must get a new version at commit even if no byte is dirty. */
#define LTX_WENTRY_BUMP 1u
/* A later entry on an orec held by an earlier one (orec is NULL). */
#define LTX_WENTRY_CHAINED 2u
/*
 * The line's only store so far is one aligned word, made by the fast path:
 * it is in single_addr/single_val, and data and mask are stale.  Commit
 * writes it back with one store; anything else that needs the bytes calls
 * ltx_wset_expand() first.  The common ST costs no mask arithmetic, and
 * its commit no mask loop.
 */
#define LTX_WENTRY_SINGLE 4u
/*
 * single_addr of an entry without LTX_WENTRY_SINGLE: an address no load
 * asks for (misaligned, and above user space), so that single_addr ==
 * addr alone says the entry is LTX_WENTRY_SINGLE with addr's word
 * (ltx_inv_load_single).  Every place that makes an entry, or takes the
 * flag off one, stores it: ltx_inv_lock, lock_orec, chain_entry and
 * take_held (invisible.c), the visible mode's entries, ltx_wset_expand.
 * ltx_inv_first_store, the only place that sets the flag, sets
 * single_addr with it.
 */
#define LTX_WENTRY_NO_SINGLE (~(uintptr_t)0)
/*
 * A head that an irrevocable transaction took from a doomed holder
 * (invisible.c): the holder may still run, unaware, with a snapshot up
 * to the take, so the orec must come back with a version above that
 * snapshot however the taker ends (BUMP is set too, for its commit).
 */
#define LTX_WENTRY_TAKEN 8u
/* The link of a lone head (next 0) with flags f. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define LTX_WENTRY_LINK_OF(f) ((uint64_t)(f) << 32)
#else
#define LTX_WENTRY_LINK_OF(f) ((uint64_t)(f))
#endif
/* link of a lone head whose one store is a LTX_WENTRY_SINGLE word. */
#define LTX_WENTRY_LONE_SINGLE LTX_WENTRY_LINK_OF(LTX_WENTRY_SINGLE)
/* link of a lone head taken by tm_free: a new version, whatever is stored. */
#define LTX_WENTRY_LONE_BUMP LTX_WENTRY_LINK_OF(LTX_WENTRY_BUMP)

struct ltx_line; /* cd/lines.h */

/*
 * A conflict as the requester found it (issue 19), noted by the mode where
 * it finds the line held, on that failing path only (cd/conflict.h), and
 * read by the transaction layer's statistics when they classify it.
 */
struct ltx_cd_conflict {
	uintptr_t addr;	  /* the requester's access (its first byte) */
	uint32_t size;	  /* its bytes: an LT or LTX counts its word */
	uint32_t held;	  /* LTX_CD_HELD_*: what stood in the way, 0: none */
	uintptr_t holder; /* ENTRY: the orec's lock word; OWNER: the
			   * owner's cd id (ltx_cd.id) */
};

/*
 * struct ltx_cd: what conflict detection knows of a transaction -- its
 * read set, write set, snapshot and limit, its line directory -- and
 * nothing else of the descriptor it is part of (struct ltx_tx, tx/desc.h,
 * which owns the transaction's life cycle and writes the fields marked
 * "tx" below).
 *
 * The first fields are what the fast paths read.  limit is their key:
 * while a transaction is live in the invisible mode it is snapshot + 1,
 * and an orec value below it is an unlocked line no newer than the
 * snapshot; in every other case (no transaction, doomed, visible mode, a
 * counted or irrevocable transaction, line locked -- a locked orec has
 * bit 63 set -- or too new) limit is 0 or the orec value is above it, and
 * the operation takes the slow path.  One compare covers all.
 *
 * Synchronization: written by the owning thread only, except limit,
 * which its signal handlers clear (relaxed atomics) to doom the
 * transaction; the shared state is the orecs and bytelocks it takes.
 */
struct ltx_cd {
	/* hot: read by the fast paths (and <ltx/inline.h>) */
	uintptr_t limit;
	uintptr_t *orecs;
	uintptr_t orec_mask; /* (table size - 1) * sizeof(orec): see orec.h */
	uint64_t orec_mul;   /* LTX_OREC_MUL, as a memory operand for imul */
	struct ltx_rentry *rs_next;
	struct ltx_rentry *rs_end;
	struct ltx_wentry *ws_next;
	struct ltx_wentry *ws_end;
	struct ltx_wentry *ws_base;

	/* warm: slow paths */
	struct ltx_rentry *rs_base;
	uintptr_t snapshot; /* global clock value the reads are valid at */
	/*
	 * The write set's allocation as the orecs see it (ltx_cd_ws_bounds):
	 * a locked orec value v points into [ws_base, ws_end) exactly when
	 * v - ws_key < ws_span (ws_key is ws_base with the lock bit, bytes
	 * in ws_span), one compare for read after write
	 * (ltx_inv_load_single).  ws_span 0: no write set.
	 */
	uintptr_t ws_key;
	uintptr_t ws_span;
	/* tx: the transaction holds the serial token, never fails on a
	 * conflict, takes every line it reads and waits for holders
	 * (make_irrevocable) */
	int irrevocable;
	int no_alloc;	   /* tx: a signal handler's: never allocate */
	int slot;	   /* tx: small thread id (visible mode's reader byte,
			    * LTX_VIS_SLOTS of them), from ltx_cd_take_slot;
			    * -1: none yet, the visible mode's begin takes one
			    * (a transaction begun without it, tx/alone.h,
			    * reads as a thread without a byte does) */
	uint32_t id;	   /* tx: names the descriptor for good (never reused):
			    * the holder of a line (write-set entries, the
			    * visible mode's owner words) */
	int counted;	   /* invisible: every operation takes the slow path,
			    * which keeps the directory (capacity limit) */
	int resizing;	   /* a log is being moved (wset.c): a signal handler
			    * must not walk the logs then (release_held) */
	uint32_t capacity; /* tx: LTX_CAPACITY in slots; 0: none */
	uint32_t slots;	   /* slots the transaction holds */

	/*
	 * The transaction-cache directory (cd/lines.h): the lines of the
	 * current transaction's data set, kept by the visible mode always and
	 * by the invisible mode on its counted path.
	 */
	struct ltx_line *lines;
	uint32_t lines_mask;  /* table size - 1; 0 before the first use */
	uint32_t lines_used;  /* entries of the current epoch */
	uint32_t lines_epoch; /* entries of older epochs are free */

	/* tx: the record the emulated bus requests are counted in (the
	 * descriptor's statistics: plain increments by the owning thread) */
	struct ltx_stats *stats;

	/* The last conflict found (written on failing paths only). */
	struct ltx_cd_conflict conflict;
};

/*
 * What a conflict-detection mode provides to the transaction layer.  Every
 * operation is called on the calling thread's own cd, for a live
 * transaction, from outside signal handlers.  An operation that finds the
 * transaction cannot go on returns a non-zero TM_ABORT_* cause instead of
 * failing it itself; the transaction layer dooms it and calls release.
 * The hot paths of the default mode are inlined (cd/invisible.h); these
 * are the complete, out-of-line versions.
 */
struct ltx_cd_ops {
	/* begin: start a transaction (snapshot, arm the fast path). */
	void (*begin)(struct ltx_cd *cd);
	/* load: LT (excl false) or LTX (excl true) of the aligned word at
	 * addr.  On failure sets *cause and returns 0. */
	uint64_t (*load)(struct ltx_cd *cd, const void *addr, bool excl,
			 unsigned *cause);
	/* store: ST of the low size bytes of val to addr (size 1, 2, 4 or 8,
	 * addr aligned to size).  Returns 0 or a cause. */
	unsigned (*store)(struct ltx_cd *cd, void *addr, uint64_t val,
			  unsigned size);
	/* validate: 0 if the transaction can still commit, else a cause. */
	unsigned (*validate)(struct ltx_cd *cd);
	/*
	 * Commit in two halves, around the commit point (which the
	 * transaction layer owns: a signal may have doomed the transaction
	 * until then).  prepare: make sure the transaction can commit (the
	 * reads still hold) and fix its commit time; 0, or a cause (the
	 * transaction still holds its lines: call release).  publish: write
	 * the write set back, release every line, empty the logs; it cannot
	 * fail.  *ts carries the commit time from one to the other.
	 */
	unsigned (*prepare)(struct ltx_cd *cd, uintptr_t *ts);
	void (*publish)(struct ltx_cd *cd, uintptr_t ts);
	/* release: drop every line held and empty the read and write sets,
	 * publishing nothing.  Idempotent, and it lets go of nothing that
	 * release_held let go of already. */
	void (*release)(struct ltx_cd *cd);
	/* release_held: from a signal handler on the owning thread, whose
	 * transaction it has just doomed: let go of every line held now --
	 * the one an interrupted operation has just taken included -- and
	 * touch nothing else (the logs, the directory: the interrupted code
	 * may be updating them; the next slow path's release empties them).
	 * Loads and stores of the lines' lock words only. */
	void (*release_held)(struct ltx_cd *cd);
	/* valid_now: whether a live transaction's reads all still hold.
	 * Called from the fault handler on the owner's thread, at any
	 * instruction: loads only, no allocation, no lock.  NULL: the mode
	 * only knows what status says (the fault sandbox then treats a live
	 * transaction as valid). */
	bool (*valid_now)(const struct ltx_cd *cd);
	/* make_irrevocable: called with cd->irrevocable set (the serial
	 * token held): make every line read so far safe from other commits
	 * (take it), and from now on never fail on a conflict (doom a live
	 * holder and take its line, wait only for one that is committing:
	 * ltx_cd_holder below).  0, or a cause if a read already changed or
	 * is held. */
	unsigned (*make_irrevocable)(struct ltx_cd *cd);
	/* line_state: tm_line_state() of addr for the live transaction,
	 * packed by LTX_LINE_STATE. */
	unsigned (*line_state)(struct ltx_cd *cd, const void *addr);
	/* bump_line: the line holding addr, held in E, gets a new version at
	 * commit even if no byte of it is stored (tm_free: readers with an
	 * older snapshot must not trust it any more); NULL where a line held
	 * in E keeps every reader out anyway (visible). */
	void (*bump_line)(struct ltx_cd *cd, const void *addr);
};

/*
 * Progress (DESIGN.md): an irrevocable transaction does not wait for a
 * line's holder unless the holder is committing; it dooms a live holder
 * and takes the line.  cd knows a holder only by its cd id (a write-set
 * entry's owner, a bytelock's owner word) or its reader slot; the
 * transaction layer, which owns the holders' status, answers through
 * ltx_cd_holder, which it sets once before any transaction runs.
 *
 * ltx_cd_holder(self, kind, which): the holder named by which (kind
 * LTX_HOLDER_ID: a cd id; LTX_HOLDER_SLOT: a reader slot;
 * LTX_HOLDER_UNSLOTTED: every transaction but self's without a reader
 * byte), as seen by self, the irrevocable transaction.  A live holder is
 * doomed (it can no longer reach its commit point) and the answer is
 * LTX_HOLDER_AGAIN.  Returns LTX_HOLDER_GONE if it is doomed (or, for
 * LTX_HOLDER_UNSLOTTED, all of them are): its lines may be taken;
 * LTX_HOLDER_BUSY if it is committing: wait, it lets go in bounded time;
 * LTX_HOLDER_AGAIN otherwise (just doomed, or no longer holding the
 * line): look at the line again.
 */
enum ltx_holder {
	LTX_HOLDER_GONE,
	LTX_HOLDER_BUSY,
	LTX_HOLDER_AGAIN,
};
#define LTX_HOLDER_ID	     0
#define LTX_HOLDER_SLOT	     1
#define LTX_HOLDER_UNSLOTTED 2
extern enum ltx_holder (*ltx_cd_holder)(const struct ltx_cd *self, int kind,
					uint32_t which);

/*
 * Taking a doomed holder's line (invisible.c, visible.c).  The taker reads
 * the lock word, asks ltx_cd_holder, and, told the holder is doomed, swaps
 * its own lock in with a CAS from the word it read, all between
 * ltx_cd_take_begin and ltx_cd_take_end; the section never waits.  A lock
 * word names a holder, not one of its transactions: the CAS must not take
 * a lock of the holder's next, live, transaction that happens to reuse the
 * same word.  So:
 *  - a transaction that ends doomed (or aborted) stores its idle status
 *    with seq_cst, then calls ltx_cd_take_wait before it can begin
 *    another: a holder the taker saw doomed stays in that transaction
 *    until the taker's CAS is done.  (Dekker: the taker stores its mark,
 *    then loads the holder's status, both seq_cst; the holder stores its
 *    status, then loads the mark.  Either the taker sees the holder gone
 *    and looks again, or the holder waits for the taker's release store
 *    of 0.)  The holder's own release of its locks is a CAS from its word,
 *    so it never undoes a take;
 *  - a write set that grows repoints its locks, issues a seq_cst fence,
 *    and frees its old block only after ltx_cd_take_wait (the same pair,
 *    with the repointing as the holder's store and the taker's seq_cst
 *    load of the lock word as its load), so the taker never reads a freed
 *    entry.
 * One irrevocable transaction runs at a time (the serial token), so one
 * mark suffices; a handler interrupting the taker on its own thread does
 * not wait for it.
 */
void ltx_cd_take_begin(void);
void ltx_cd_take_end(void);
void ltx_cd_take_wait(void);

/* A tm_line_state() value: slot state TM_* and MESI letter. */
#define LTX_LINE_STATE(slot, mesi) ((unsigned)(slot) | ((unsigned)(mesi) << 8))

extern const struct ltx_cd_ops ltx_cd_invisible;
extern const struct ltx_cd_ops ltx_cd_visible;

/* The operations of mode (enum ltx_mode). */
const struct ltx_cd_ops *ltx_cd_ops_of(int mode);

/*
 * ltx_cd_init: make cd's logs and directory (before its first
 * transaction; a descriptor that must never allocate later, in signal
 * handlers, gets them all now); cd->id must be set.  stats is where bus
 * requests are counted. Returns false when out of memory (nothing is left
 * allocated).
 */
bool ltx_cd_init(struct ltx_cd *cd, struct ltx_stats *stats);

/*
 * ltx_cd_take_slot: a new reader slot (cd->slot), never given before.
 * Lock-free and async-signal-safe: a handler's descriptor takes its own
 * when a handler first runs a visible-mode transaction.
 */
int ltx_cd_take_slot(void);

/*
 * ltx_cd_ws_bounds: set ws_key and ws_span from ws_base and ws_end, after
 * the write set is made or moved (by its thread, between its operations).
 */
void ltx_cd_ws_bounds(struct ltx_cd *cd);

/* ltx_cd_attach: point cd at the orec table (which exists by then). */
void ltx_cd_attach(struct ltx_cd *cd);

/*
 * In the child of a fork, only the forking thread runs: the transactions
 * of every other thread are gone mid-flight, and the lines they held must
 * be free (DESIGN.md, Every way out of a transaction).  The transaction
 * layer, which knows whose they were and how far they got, calls, from
 * its pthread_atfork child handler (single-threaded; no lock taken, no
 * allocation):
 *  - ltx_cd_fork_finish(cd, mode) for each gone transaction past its
 *    commit point (in mode, enum ltx_mode): write back what it had not
 *    written yet (its lines may be half written), so that the commit it
 *    had decided is whole;
 *  - ltx_cd_fork_free(keep, nkeep), once: free every line (orec, owner
 *    word, reader mark) held by a cd not in keep[] (the forking thread's),
 *    in both modes' tables.  A freed orec gets a new version: data that a
 *    finished commit wrote is newer than any snapshot taken before;
 *  - ltx_cd_fork_forget(cd) for each gone cd: empty its logs without
 *    touching shared memory, for whichever thread takes it next.
 */
void ltx_cd_fork_finish(struct ltx_cd *cd, int mode);
void ltx_cd_fork_free(struct ltx_cd *const *keep, unsigned nkeep);
void ltx_cd_fork_forget(struct ltx_cd *cd);

#endif /* LTX_CD_CD_H */
