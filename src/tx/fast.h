/* SPDX-License-Identifier: MIT */
/* The fast paths of LT, LTX, ST and COMMIT, inlined into both front ends. */
#ifndef LTX_TX_FAST_H
#define LTX_TX_FAST_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>

#include "cd/invisible.h"
#include "cd/orec.h"
#include "cd/wset.h"
#include "tx/desc.h"
#include "tx/serial.h"
#include "tx/tx.h"

_Static_assert(TM__OREC_LOCKED == LTX_OREC_LOCKED,
	       "<ltx/inline.h>'s lock bit differs from ltx's");

/*
 * The common case of each operation, in the invisible mode: a live
 * transaction (or an idle descriptor, which begins one here), an unlocked
 * line no newer than the snapshot, room in the logs.  Each returns false
 * for anything else, and the caller runs the complete operation
 * (tx/tx.h).  The conflict-detection steps are cd/invisible.h's; the
 * transaction layer adds its begin.
 */

/*
 * Begin a transaction without leaving the fast path: the descriptor is idle
 * in this mode (status LTX_IDLE, never the boot descriptor's LTX_IDLE_SLOW;
 * ltx_tx_fast_begin_idle: the caller has seen it so).  The limit is armed
 * before status turns ACTIVE, so a signal handler that dooms the
 * transaction (it checks status, then clears limit) is never undone.
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_begin_idle(struct ltx_tx *tx)
{
	ltx_inv_arm(&tx->cd);
	tx->cause = 0;
	/* Release: pairs with tm_free's acquire load of tx_id (tx/mem.c),
	 * which then knows the previous transaction's reads are over.  One
	 * add to memory (arch/arch.h): only this thread writes tx_id. */
	ltx_owner_add(&tx->tx_id, 1);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* Release: pairs with tm_free's acquire load of status, which then
	 * reads this transaction's tx_id. */
	__atomic_store_n(&tx->status, LTX_ACTIVE, __ATOMIC_RELEASE);
	/* The light side of tm_free's and the serial token's asymmetric
	 * fence (rt/fence.h): no later load moves above the status store. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (ltx_unlikely(ltx_serial_may_block())) {
		/* An exclusive transaction may run: take the begin back
		 * (status, then the count, as tx.c's step_back) and let the
		 * slow path's begin wait for it. */
		tx->cd.limit = 0;
		__atomic_store_n(&tx->status, LTX_IDLE, __ATOMIC_RELEASE);
		ltx_owner_add(&tx->tx_id, (uint64_t)-1);
		return false;
	}
	return true;
}

static inline __attribute__((always_inline)) bool
ltx_tx_fast_begin(struct ltx_tx *tx)
{
	if (ltx_unlikely(ltx_int_differs(&tx->status, LTX_IDLE)))
		return false;
	return ltx_tx_fast_begin_idle(tx);
}

/*
 * LT of the aligned word at addr: a line new to the transaction (beginning
 * it on an idle descriptor), or, in a live one, a word it stored (read
 * after write, the common case: ltx_inv_load_single; the orec's lock bit
 * puts its value above every limit; the other cases are
 * ltx_tx_load_shared's, out of line, so that their answer does not share
 * registers with this path's).  On begin, the orec was read before the
 * transaction announced itself; it is not read again before the word:
 * ltx_inv_read reads it again after the word, which is after the status
 * store and the token's load, and that is the read tm_free's grace
 * periods need (a line freed by a tm_free that did not see this
 * transaction shows its new version there, tx/mem.c), and v < limit then
 * holds for both reads.  *seen is the orec value read (for
 * ltx_tx_load_shared: a line of the transaction's own is not looked up
 * again).
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_load_as(struct ltx_tx *tx, const void *addr, uint64_t *out,
		    uintptr_t *seen, bool any)
{
	struct ltx_cd *cd = &tx->cd;
	uintptr_t *orec = ltx_orec_of(cd, addr);
	uintptr_t v = __atomic_load_n(orec, __ATOMIC_ACQUIRE);

	*seen = v;
	if (ltx_unlikely(v >= cd->limit)) {
		/* One test tells the two apart: only an idle descriptor
		 * begins, and its write set is empty.  A misaligned load
		 * does not begin here (the byte path begins). */
		if (ltx_int_differs(&tx->status, LTX_IDLE))
			return ltx_inv_load_single(cd, seen, addr, out);
		if ((any && ltx_unlikely(ltx_misaligned_word(addr))) ||
		    !ltx_tx_fast_begin_idle(tx) || v >= cd->limit)
			return false;
	} else if (any && ltx_unlikely(ltx_misaligned_word(addr))) {
		return false;
	}
	return ltx_inv_read(cd, orec, v, addr, out);
}

static inline __attribute__((always_inline)) bool
ltx_tx_fast_load(struct ltx_tx *tx, const void *addr, uint64_t *out,
		 uintptr_t *seen)
{
	return ltx_tx_fast_load_as(tx, addr, out, seen, false);
}

/*
 * ltx_tx_fast_load of the word at addr, aligned or not (tm_lt): false for
 * a misaligned addr, which the caller then loads byte by byte.  The test
 * of alignment is made where the word would be read, not first: the orec
 * of any address may be read (a misaligned one only picks an orec to look
 * at), and read after write needs no test (ltx_inv_load_single: a
 * misaligned addr never equals single_addr), so that path costs none.  A
 * caller that gets false must test alignment before using *seen as the
 * aligned word's (ltx_tx_load_shared).
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_load_any(struct ltx_tx *tx, const void *addr, uint64_t *out,
		     uintptr_t *seen)
{
	return ltx_tx_fast_load_as(tx, addr, out, seen, true);
}

/* The write-set entry of a line newly taken in E, or NULL. */
static inline __attribute__((always_inline)) struct ltx_wentry *
ltx_tx_fast_acquire(struct ltx_tx *tx, const void *addr)
{
	struct ltx_cd *cd = &tx->cd;
	uintptr_t *orec = ltx_orec_of(cd, addr);
	uintptr_t v = __atomic_load_n(orec, __ATOMIC_RELAXED);

	if (ltx_unlikely(v >= cd->limit) &&
	    (!ltx_tx_fast_begin(tx) || v >= cd->limit))
		return NULL;
	return ltx_inv_lock(cd, orec, v, addr);
}

/*
 * LTX of the aligned word at addr.  The word is read before the lock is
 * taken, not after: once the line is ours, an irrevocable transaction may
 * still doom us, take it and write it back (the progress rule,
 * cd/invisible.c), so a read after the lock could see its bytes.  Read
 * between the acquire load of the orec at v and the CAS from v, the word
 * is the data of version v: a commit in between would have changed the
 * orec, and the CAS (a release: the read stays before it) would fail.
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_load_excl_as(struct ltx_tx *tx, const void *addr, uint64_t *out,
			 bool any)
{
	struct ltx_cd *cd = &tx->cd;
	uintptr_t *orec = ltx_orec_of(cd, addr);
	uintptr_t v = __atomic_load_n(orec, __ATOMIC_ACQUIRE);
	struct ltx_wentry *w;
	uint64_t x;

	if (ltx_unlikely(v >= cd->limit) &&
	    (!ltx_tx_fast_begin(tx) || v >= cd->limit))
		return false;
	if (any && ltx_unlikely(ltx_misaligned_word(addr)))
		return false;
	x = ltx_load_word((const uint64_t *)addr);
	w = ltx_inv_lock(cd, orec, v, addr);
	if (ltx_unlikely(w == NULL))
		return false;
	LTX_TEST_FAST_READ(addr);
	w->mask = 0;
	*out = x;
	return true;
}

static inline __attribute__((always_inline)) bool
ltx_tx_fast_load_excl(struct ltx_tx *tx, const void *addr, uint64_t *out)
{
	return ltx_tx_fast_load_excl_as(tx, addr, out, false);
}

/*
 * ltx_tx_fast_load_excl of the word at addr, aligned or not (tm_ltx):
 * false for a misaligned addr, tested where the word would be read (the
 * orec of any address may be read; a begin before the test is the one
 * the caller's byte path would make).
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_load_excl_any(struct ltx_tx *tx, const void *addr, uint64_t *out)
{
	return ltx_tx_fast_load_excl_as(tx, addr, out, true);
}

/*
 * tm_free's LTX of a word of a line of the block: the line taken in E on
 * the fast path, its new entry marked to get a new version at commit
 * (LTX_WENTRY_BUMP: readers with an older snapshot must not trust the
 * freed block).  False for the slow path (and its mode's bump_line).
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_take_bumped(struct ltx_tx *tx, const void *addr)
{
	struct ltx_wentry *w = ltx_tx_fast_acquire(tx, addr);

	if (ltx_unlikely(w == NULL))
		return false;
	w->mask = 0;
	w->link = LTX_WENTRY_LONE_BUMP;
	return true;
}

/*
 * ST of the low size bytes of val to addr (aligned to size): a line new to
 * the transaction (beginning it on an idle descriptor), or one it holds
 * alone already (after LTX, or a first ST: the orec's lock bit puts its
 * value above every limit), one hash and one read of the orec for both.
 * A live transaction has limit != 0; an idle descriptor, a doomed or
 * counted transaction has 0, and only the idle one begins here.
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_store(struct ltx_tx *tx, void *addr, uint64_t val, unsigned size)
{
	struct ltx_cd *cd = &tx->cd;
	uintptr_t *orec = ltx_orec_of(cd, addr);
	uintptr_t v = __atomic_load_n(orec, __ATOMIC_RELAXED);
	struct ltx_wentry *w;

	if (ltx_unlikely(v >= cd->limit)) {
		if (cd->limit != 0)
			return ltx_inv_store_owned(cd, v, addr, val, size);
		if (!ltx_tx_fast_begin(tx) || v >= cd->limit)
			return false;
	}
	w = ltx_inv_lock(cd, orec, v, addr);
	if (ltx_unlikely(w == NULL))
		return false;
	ltx_inv_first_store(w, addr, val, size);
	return true;
}

/*
 * LT (LTX if excl) of the aligned word at addr for a front end whose
 * transaction is already open (the libitm barriers: _ITM_beginTransaction
 * began it), so no begin is tried: a line new to the transaction, or one
 * it has written (read after write), with one hash and one read of the
 * orec for both.  Returns false for anything else.  armed: the caller
 * saw limit != 0 (a live transaction of the fast paths) before the call,
 * so read after write does not test it again (one load and test less):
 * limit turns 0 under the caller only when a signal handler dooms the
 * transaction, and the answer for a doomed transaction is thrown away
 * (an entry that its lock word named is still in the write set, which
 * only the next slow path empties).
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_load_open(struct ltx_tx *tx, const void *addr, bool excl,
		      bool armed, uint64_t *out)
{
	struct ltx_cd *cd = &tx->cd;
	uintptr_t *orec = ltx_orec_of(cd, addr);
	uintptr_t v = __atomic_load_n(orec, __ATOMIC_ACQUIRE);
	struct ltx_wentry *w;
	uint64_t x;

	if (ltx_likely(v < cd->limit)) {
		if (!excl)
			return ltx_inv_read(cd, orec, v, addr, out);
		/* Read before the lock is taken, as in ltx_tx_fast_load_excl:
		 * once the line is ours an irrevocable transaction may doom
		 * us, take it and write it. */
		x = ltx_load_word((const uint64_t *)addr);
		w = ltx_inv_lock(cd, orec, v, addr);
		if (ltx_unlikely(w == NULL))
			return false;
		LTX_TEST_FAST_READ(addr);
		w->mask = 0;
		*out = x;
		return true;
	}
	return (armed || cd->limit != 0) &&
	       ltx_inv_load_owned(cd, v, addr, out);
}

/* ST of the low size bytes of val to addr (aligned to size), the same
 * way: a new line, or one the transaction holds alone already. */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_store_open(struct ltx_tx *tx, void *addr, uint64_t val,
		       unsigned size)
{
	struct ltx_cd *cd = &tx->cd;
	uintptr_t *orec = ltx_orec_of(cd, addr);
	uintptr_t v = __atomic_load_n(orec, __ATOMIC_RELAXED);
	struct ltx_wentry *w;

	if (ltx_likely(v < cd->limit)) {
		w = ltx_inv_lock(cd, orec, v, addr);
		if (ltx_unlikely(w == NULL))
			return false;
		ltx_inv_first_store(w, addr, val, size);
		return true;
	}
	return cd->limit != 0 && ltx_inv_store_owned(cd, v, addr, val, size);
}

/*
 * Out of line (tx.c): ltx_tx_commit_small, the small update commit below,
 * then the work of the slow bits that only come after a commit
 * (LTX_SLOW_AFTER: tm_malloc/tm_free, actions), for a transaction with no
 * other slow bit;
 * ltx_tx_fast_commit_revalidate, its path when another update committed
 * since the snapshot (the reads are checked, then it goes on with ts).
 */
bool ltx_tx_commit_small(struct ltx_tx *tx);
/* The whole COMMIT of a transaction of the fast paths with no slow bit and
 * more than two write-set entries (tx.c). */
bool ltx_tx_commit_many(struct ltx_tx *tx);
bool ltx_tx_fast_commit_revalidate(struct ltx_tx *tx, uintptr_t ts);
/* ltx_tx_commit_small for a transaction it may take (no slow bit but
 * LTX_SLOW_AFTER, live, one or two entries), else false. */
bool ltx_tx_commit_small_checked(struct ltx_tx *tx);
/* ltx_tx_commit_small, ltx_tx_commit_small_checked and the revalidation,
 * then ltx_tx_commit if they return false: the whole COMMIT. */
bool ltx_tx_commit_lone_whole(struct ltx_tx *tx);
bool ltx_tx_commit_small_whole(struct ltx_tx *tx);
bool ltx_tx_commit_revalidate_whole(struct ltx_tx *tx, uintptr_t ts);

/*
 * Where ltx_tx_fast_commit_then goes when the fast path cannot finish:
 * small for a transaction with slow bits or not live (it must check what
 * it can take, and end by the full commit otherwise), lone for one with
 * no slow bit
 * (live, invisible) whose one or two write-set entries are not all lone
 * words (an LTX, a sub-word ST), revalidate when the snapshot must be checked
 * (with the clock value taken), many (if not NULL) for one with no slow bit
 * and more than two entries, full for any other case (NULL: return false,
 * nothing done). Each is called last (a tail call), so that the fast path saves
 * no register; their result is the commit's.  done (if not NULL) runs after a
 * commit the fast path made, inlined (a front end's own end of it). Each gets
 * ctx, the caller's argument to ltx_tx_fast_commit_then, first (a caller passes
 * its own first argument: no register moves).
 */
struct ltx_commit_exits {
	bool (*small)(void *ctx, struct ltx_tx *tx);
	bool (*lone)(void *ctx, struct ltx_tx *tx);
	bool (*revalidate)(void *ctx, struct ltx_tx *tx, uintptr_t ts);
	bool (*full)(void *ctx, struct ltx_tx *tx);
	bool (*many)(void *ctx, struct ltx_tx *tx);
	void (*done)(void *ctx, struct ltx_tx *tx);
};

/* Write one lone entry back and release its orec at ts (a lone single
 * word, or a lone head with its dirty bytes; LTX alone keeps the version,
 * unless tm_free marked it LTX_WENTRY_BUMP).  See ltx_inv_publish for
 * the order. */
static inline __attribute__((always_inline)) void
ltx_tx_fast_publish_one(struct ltx_wentry *w, uintptr_t ts)
{
	uint64_t m;

	if (ltx_likely(w->link == LTX_WENTRY_LONE_SINGLE)) {
		__atomic_store_n((uint64_t *)w->single_addr, w->single_val,
				 __ATOMIC_RELEASE);
		__atomic_store_n(w->orec, ts, __ATOMIC_RELEASE);
		return;
	}
	m = w->mask;
	if (m != 0)
		ltx_wset_write_back_as(w, m, true);
	__atomic_store_n(w->orec, m != 0 || w->link != 0 ? ts : w->old_version,
			 __ATOMIC_RELEASE);
}

/* Whether write-set entry w is a lone one (no chain, no flag but
 * LTX_WENTRY_SINGLE or LTX_WENTRY_BUMP alone): the fast commit takes those
 * only. */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_entry(const struct ltx_wentry *w)
{
	return w->link == LTX_WENTRY_LONE_SINGLE || w->link == 0 ||
	       w->link == LTX_WENTRY_LONE_BUMP;
}

/*
 * The small update commit: one or two lone write-set entries.  With a
 * clock value that needs no revalidation (no other update committed
 * since the snapshot) it calls nothing, so it saves no register.  tx.c
 * holds the out-of-line copy that tm_commit and TM_ATOMIC's end reach;
 * prepared is ltx_clock's new value when the caller took it already
 * (after revalidating), 0 otherwise.
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_commit_small(struct ltx_tx *tx, uintptr_t prepared)
{
	struct ltx_cd *cd = &tx->cd;
	struct ltx_wentry *w = cd->ws_base, *end = cd->ws_next;
	uintptr_t ts = prepared;

	if (ts == 0) {
		if (end == w) {
			/* Read-only (with slow bits that come after). */
			cd->rs_next = cd->rs_base;
			cd->limit = 0;
			tx->end_state = 0;
			__atomic_store_n(&tx->status, LTX_IDLE,
					 __ATOMIC_RELEASE);
			return true;
		}
		if (ltx_unlikely(end - w > 2 || !ltx_tx_fast_entry(w) ||
				 (end - w == 2 && !ltx_tx_fast_entry(w + 1))))
			return false;
		/* ltx_inv_prepare; revalidation is the caller's slow path */
		ts = __atomic_add_fetch(&ltx_clock.now, 1, __ATOMIC_ACQ_REL);
		if (ltx_unlikely(ts != cd->snapshot + 1))
			return ltx_tx_fast_commit_revalidate(tx, ts);
	}
	/* The commit point, a CAS as in tx.c commit_point: a signal or an
	 * irrevocable transaction may have doomed us. */
	if (ltx_unlikely(!__atomic_compare_exchange_n(
		    &tx->status, &(int){ LTX_ACTIVE }, LTX_COMMITTING, false,
		    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)))
		return false;
	ltx_tx_fast_publish_one(w, ts);
	if (end - w == 2)
		ltx_tx_fast_publish_one(w + 1, ts);
	/* The next transaction's lazy snapshot (ltx_inv_publish). */
	cd->snapshot = ts;
	cd->ws_next = w;
	cd->rs_next = cd->rs_base;
	cd->limit = 0;
	tx->stats.commits_rw++;
	tx->end_state = 0; /* last_status and consec_aborts */
	/* Release: the commit is over before tm_free sees us idle. */
	__atomic_store_n(&tx->status, LTX_IDLE, __ATOMIC_RELEASE);
	return ltx_tx_committed(tx);
}

/*
 * COMMIT on the fast path (ltx_tx_fast_commit; ltx_tx_fast_commit_ro for
 * a read-only one alone): a transaction of the fast paths (limit != 0:
 * live, invisible, uncounted, not irrevocable) with no slow bit, read-only
 * or with one or two lone write-set entries -- what most transactions
 * are.  The same steps as the full commit (tx.c commit_live with
 * ltx_inv_prepare/ltx_inv_publish), with no mask loop, no action scan and
 * no statistics branch.  Returns false, having done nothing that matters,
 * for everything else (the full commit then runs; a clock value taken and
 * not used is harmless: the clock only has to grow).
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_commit_ro(struct ltx_tx *tx)
{
	struct ltx_cd *cd = &tx->cd;

	if (ltx_unlikely(tx->slow != 0) || ltx_unlikely(cd->limit == 0) ||
	    ltx_unlikely(cd->ws_next != cd->ws_base))
		return false;
	cd->rs_next = cd->rs_base;
	cd->limit = 0;
	/* No slow bit: end_state is 0 already (LTX_SLOW_ABORTED). */
	/* Release: the reads are over before tm_free sees us idle. */
	__atomic_store_n(&tx->status, LTX_IDLE, __ATOMIC_RELEASE);
	return true;
}

/*
 * The update half of ltx_tx_fast_commit: one or two write-set entries
 * (n bytes of them, n != 0), each a lone aligned word (LTX_WENTRY_LONE_SINGLE:
 * the common ST), in a transaction with no slow bit.  No loop, no mask, no
 * flag but the one compare per entry, no statistics branch, and no call
 * unless another update committed since the snapshot.  Everything else
 * goes to ltx_tx_commit_small, out of line.  The steps and their orders are
 * those of ltx_tx_fast_commit_small (and of tx.c's commit_live with
 * ltx_inv_prepare, commit_point and ltx_inv_publish):
 *   - the clock's fetch-add (acq_rel) comes after every line was locked
 *     (the CASs of ltx_inv_lock, made earlier in program order and
 *     acquire: nothing moves above them), so a reader that sees a
 *     version >= ts sees the lock first;
 *   - the snapshot still holds when no other update took a clock value
 *     since it was taken (old == snapshot): nothing to revalidate;
 *   - the commit point is a CAS of status (seq_cst), against a signal
 *     handler or an irrevocable transaction dooming us (doom_remote);
 *   - each word is stored (release) before its orec is released at ts
 *     (release), which pairs with the readers' acquire loads of the orec.
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_commit_nwords(struct ltx_tx *tx, struct ltx_wentry *w, bool two,
			  const struct ltx_commit_exits *out, void *ctx)
{
	struct ltx_cd *cd = &tx->cd;
	uintptr_t old, ts;

	if (ltx_unlikely(w->link != LTX_WENTRY_LONE_SINGLE) ||
	    (two && ltx_unlikely(w[1].link != LTX_WENTRY_LONE_SINGLE)))
		return out->lone(ctx, tx);
	old = __atomic_fetch_add(&ltx_clock.now, 1, __ATOMIC_ACQ_REL);
	ts = old + 1;
	if (ltx_unlikely(old != cd->snapshot))
		return out->revalidate(ctx, tx, ts);
	if (ltx_unlikely(!__atomic_compare_exchange_n(
		    &tx->status, &(int){ LTX_ACTIVE }, LTX_COMMITTING, false,
		    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)))
		return out->full != NULL && out->full(ctx, tx);
	__atomic_store_n((uint64_t *)w->single_addr, w->single_val,
			 __ATOMIC_RELEASE);
	__atomic_store_n(w->orec, ts, __ATOMIC_RELEASE);
	if (two) {
		__atomic_store_n((uint64_t *)w[1].single_addr, w[1].single_val,
				 __ATOMIC_RELEASE);
		__atomic_store_n(w[1].orec, ts, __ATOMIC_RELEASE);
	}
	/* The next transaction's lazy snapshot (ltx_inv_publish). */
	cd->snapshot = ts;
	cd->ws_next = w;
	cd->rs_next = cd->rs_base;
	cd->limit = 0;
	tx->stats.commits_rw++;
	/* No slow bit: end_state is 0 already (LTX_SLOW_ABORTED). */
	/* Release: the commit is over before tm_free sees us idle. */
	__atomic_store_n(&tx->status, LTX_IDLE, __ATOMIC_RELEASE);
	if (out->done != NULL)
		out->done(ctx, tx);
	return ltx_tx_committed(tx);
}

/* One entry or two, each path straight (n: their size in bytes, not 0). */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_commit_words(struct ltx_tx *tx, struct ltx_wentry *w, uintptr_t n,
			 const struct ltx_commit_exits *out, void *ctx)
{
	if (ltx_likely(n == sizeof(*w)))
		return ltx_tx_fast_commit_nwords(tx, w, false, out, ctx);
	if (ltx_likely(n == 2 * sizeof(*w)))
		return ltx_tx_fast_commit_nwords(tx, w, true, out, ctx);
	/* More than two: the caller's own exit for them, else its full one
	 * (NULL: false, nothing done). */
	if (out->many != NULL)
		return out->many(ctx, tx);
	return out->full != NULL && out->full(ctx, tx);
}

/*
 * COMMIT of a transaction with no slow bit, live in the invisible mode
 * (status LTX_ACTIVE, hence limit != 0): read-only, or
 * ltx_tx_fast_commit_words; out's exits for everything else.
 * ltx_tx_fast_commit: the fast path, or false with nothing done (the caller
 * then runs ltx_tx_commit); ltx_tx_commit_inline: the whole COMMIT
 * (ltx_tx_commit's result), every call out a tail call.
 */
static inline __attribute__((always_inline)) bool
ltx_tx_fast_commit_then(struct ltx_tx *tx, const struct ltx_commit_exits *out,
			void *ctx)
{
	struct ltx_cd *cd = &tx->cd;
	struct ltx_wentry *w = cd->ws_base;
	uintptr_t n;

	/* Live with no slow bit, hence limit != 0 (LTX_SLOW_UNARMED): one
	 * test.  Else slow bits, or not live (idle: nothing was begun;
	 * doomed): small, which checks for what it can take (a live
	 * transaction of the fast paths with only LTX_SLOW_AFTER bits; not
	 * one that is idle or unarmed, whose limit is 0, nor a doomed update,
	 * whose commit point fails) and goes on to the full commit. */
	if (ltx_unlikely(ltx_word_changed((const uintptr_t *)&tx->status_slow,
					  LTX_LIVE_PLAIN)))
		return out->small(ctx, tx);
	/* limit 0 only if a signal handler doomed it since the test (it
	 * clears limit, then sets status DOOMED): a read-only commit then
	 * ends it as committed all the same (its reads were valid at the
	 * snapshot), an update's commit point fails. */
	assert(cd->limit != 0 ||
	       __atomic_load_n(&tx->status, __ATOMIC_RELAXED) != LTX_ACTIVE);
	/* Read-only: one compare with the write set's end in memory (read
	 * again on the update path, which needs it). */
	if (ltx_unlikely(ltx_word_changed((const uintptr_t *)&cd->ws_next,
					  (uintptr_t)w))) {
		n = (uintptr_t)cd->ws_next - (uintptr_t)w;
		return ltx_tx_fast_commit_words(tx, w, n, out, ctx);
	}
	/* Read-only: every read was valid at the snapshot when made. */
	cd->rs_next = cd->rs_base;
	cd->limit = 0;
	/* No slow bit: end_state is 0 already (LTX_SLOW_ABORTED). */
	/* Release: the reads are over before tm_free sees us idle. */
	__atomic_store_n(&tx->status, LTX_IDLE, __ATOMIC_RELEASE);
	if (out->done != NULL)
		out->done(ctx, tx);
	return true;
}

/* The exits of ltx_tx_fast_commit and ltx_tx_commit_inline. */
static inline __attribute__((always_inline)) bool
ltx_tx_exit_small(void *ctx, struct ltx_tx *tx)
{
	(void)ctx;
	return ltx_tx_commit_small_checked(tx);
}

static inline __attribute__((always_inline)) bool
ltx_tx_exit_lone(void *ctx, struct ltx_tx *tx)
{
	(void)ctx;
	return ltx_tx_commit_small(tx);
}

static inline __attribute__((always_inline)) bool
ltx_tx_exit_lone_whole(void *ctx, struct ltx_tx *tx)
{
	(void)ctx;
	return ltx_tx_commit_lone_whole(tx);
}

static inline __attribute__((always_inline)) bool
ltx_tx_exit_revalidate(void *ctx, struct ltx_tx *tx, uintptr_t ts)
{
	(void)ctx;
	return ltx_tx_fast_commit_revalidate(tx, ts);
}

static inline __attribute__((always_inline)) bool
ltx_tx_exit_small_whole(void *ctx, struct ltx_tx *tx)
{
	(void)ctx;
	return ltx_tx_commit_small_whole(tx);
}

static inline __attribute__((always_inline)) bool
ltx_tx_exit_revalidate_whole(void *ctx, struct ltx_tx *tx, uintptr_t ts)
{
	(void)ctx;
	return ltx_tx_commit_revalidate_whole(tx, ts);
}

static inline __attribute__((always_inline)) bool
ltx_tx_exit_full(void *ctx, struct ltx_tx *tx)
{
	(void)ctx;
	return ltx_tx_commit(tx);
}

static inline __attribute__((always_inline)) bool
ltx_tx_exit_many(void *ctx, struct ltx_tx *tx)
{
	(void)ctx;
	return ltx_tx_commit_many(tx);
}

static inline __attribute__((always_inline)) bool
ltx_tx_fast_commit(struct ltx_tx *tx)
{
	static const struct ltx_commit_exits out = {
		.small = ltx_tx_exit_small,
		.lone = ltx_tx_exit_lone,
		.revalidate = ltx_tx_exit_revalidate,
	};

	return ltx_tx_fast_commit_then(tx, &out, NULL);
}

static inline __attribute__((always_inline)) bool
ltx_tx_commit_inline(struct ltx_tx *tx)
{
	static const struct ltx_commit_exits out = {
		.small = ltx_tx_exit_small_whole,
		.lone = ltx_tx_exit_lone_whole,
		.revalidate = ltx_tx_exit_revalidate_whole,
		.full = ltx_tx_exit_full,
		.many = ltx_tx_exit_many,
	};

	return ltx_tx_fast_commit_then(tx, &out, NULL);
}

#endif /* LTX_TX_FAST_H */
