/* SPDX-License-Identifier: MIT */
/* Visible mode: LT takes a line shared, LTX/ST exclusive; requester loses. */
#include <ltx/tm.h>

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "cd/cd.h"
#include "cd/conflict.h"
#include "cd/lines.h"
#include "cd/orec.h"
#include "cd/visible.h"
#include "cd/wset.h"
#include "rt/config.h"
#include "rt/hash.h"
#include "rt/wait.h"

/*
 * The faithful emulation of the article's bus (section 8.2.4): a line a
 * transaction reads with LT is marked shared in its bytelock (MESI S, the
 * reader byte or the unslotted count); a line it takes with LTX or ST is
 * owned (E, and M once stored).  Conflicts are decided when they happen
 * and the requester loses: a T_READ (LT) of a line another transaction
 * owns fails, a T_RFO (LTX/ST, or the S -> E upgrade) of a line another
 * live transaction has read or owns fails, and the failing transaction is
 * doomed; the holder never notices.  No read ever needs validating later,
 * so tm_validate is O(1): it only looks at the doomed status.
 *
 * Unlike TLRW this mode never waits (the article's BUSY answer is final)
 * and it buffers stores in the write set (the XABORT copies) until commit,
 * like the invisible mode, so memory is the XCOMMIT copy and an aborted
 * transaction never wrote anything.
 *
 * The descriptor's directory (cd/lines.h) answers "do I hold this line in
 * S/E already" without touching shared memory; only the first access to a
 * line, the emulated bus request, touches its bytelock.  Lines hashing to
 * one bytelock share its state, as lines mapping to one set of a real
 * cache would share a victim: a false conflict, never a missed one.
 *
 * Synchronization (the argument is Dekker's, as in TLRW):
 *
 *   reader (LT)                        writer (LTX/ST)
 *   xchg(reader[me], 1)      seq_cst   CAS(owner, 0, me)       seq_cst
 *   load(owner)              seq_cst   load(reader words,      seq_cst
 *                                           unslotted)
 *
 * Each side stores, then loads the other side's word, all in the single
 * total order of seq_cst operations, so at least one side sees the other:
 * a reader and a writer cannot both go on believing the line is theirs
 * (both may fail, when they race: then both are doomed, as two requests
 * that the article's bus would have serialized; backoff separates them).
 * The unslotted count takes part the same way through a seq_cst
 * fetch-add.  On x86-64 the xchg and the lock cmpxchg are the fences and
 * the seq_cst loads are plain movs: a read costs one locked instruction
 * on a byte of its own, and no compare-and-swap.
 *
 * The writer reads the reader bytes as whole words while readers store
 * single bytes: mixed-size atomics, outside the C11 model but coherent on
 * every CPU ltx supports (x86-64 only: see configure.ac), as in TLRW and
 * ck_bytelock.
 *
 * Irrevocable transactions (cd.h, make_irrevocable): lines read are held
 * in S and lines written in E from the first access, so becoming
 * irrevocable takes nothing more.  From then on a conflict does not fail
 * it, and it waits only for a holder that is committing (the progress
 * rule of DESIGN.md; ltx_cd_holder, cd.h): a live holder in its way,
 * owner or reader, is doomed, and a doomed one is not waited for.  A
 * doomed transaction never reaches its commit point, so it writes nothing
 * back, and its loads return 0 from its doom on (the transaction layer
 * checks after each load), so the irrevocable one may write the line
 * under a doomed reader's mark.  A doomed owner's word is taken by CAS
 * (take_owner), between ltx_cd_take_begin and ltx_cd_take_end (cd.h says
 * why the word cannot be a later, live, transaction's by then); the
 * former owner's release is a CAS from its own word, which then fails.
 * For a read, a doomed owner is simply ignored: it writes nothing, and
 * the reader's mark, set first, stops any later writer.  Waiting, the
 * irrevocable transaction keeps its own mark, so that no later writer can
 * take the line from under it.
 *
 * Data: a writer's commit writes back its dirty bytes with release
 * stores, then releases the owner word with a release store; a reader's
 * seq_cst load of owner == 0 (also an acquire) therefore sees all of
 * them.  A reader releases its byte with a release store, and the writer
 * loads the bytes with seq_cst (acquire) loads, so every load the reader
 * made happens before the writer's later write-back: a reader never sees
 * bytes of a transaction that took the line after it.
 */

#define BUSY_CAUSE   (TM_ABORT_CONFLICT | TM_ABORT_RETRY)
#define NOMEM_CAUSE  (TM_ABORT_NOMEM | TM_ABORT_CAPACITY)
#define READER_WORDS (LTX_VIS_SLOTS / 8)

static struct ltx_bytelock *table;
static uintptr_t table_mask; /* (table size - 1) * sizeof(bytelock) */
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

/* The table is made on first use, as large as LTX_OREC_BITS says or the
 * largest that can be mapped; pages cost memory only once touched. */
static void table_init(void)
{
	for (unsigned bits = ltx_config.orec_bits; bits >= LTX_OREC_BITS_MIN;
	     bits--) {
		size_t size = sizeof(struct ltx_bytelock) << bits;
		void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
			       0);

		if (p != MAP_FAILED) {
			table_mask = (((uintptr_t)1 << bits) - 1) *
				     sizeof(struct ltx_bytelock);
			/* Pairs with the acquire loads in table_ready. */
			__atomic_store_n(&table, (struct ltx_bytelock *)p,
					 __ATOMIC_RELEASE);
			return;
		}
	}
}

/*
 * Whether the table is there, made now if it was not: by a transaction's
 * begin (vis_begin), or by its first line request if it began without
 * vis_begin (one that runs alone, tx/alone.h).  False if it cannot be
 * mapped.  Acquire: pairs with the release store in table_init.
 */
static bool table_ready(void)
{
	sigset_t all, saved;

	if (ltx_likely(__atomic_load_n(&table, __ATOMIC_ACQUIRE) != NULL))
		return true;
	/*
	 * Signals blocked while this thread is inside pthread_once: a
	 * handler that ran a transaction there would call pthread_once
	 * again from inside it and wait for ever for itself (the first
	 * visible transactions of a process whose handlers use them;
	 * tests/itm handler_exit, tests/stress/vis_first_signal.c).  A
	 * handler on another thread waits for this one, which finishes.
	 * Only until the table exists; pthread_sigmask is
	 * async-signal-safe, so a handler's transaction may come here too.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &saved);
	pthread_once(&table_once, table_init);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	return __atomic_load_n(&table, __ATOMIC_ACQUIRE) != NULL;
}

/* Line address -> bytelock: the orec hash (cd/orec.h), scaled by 64. */
static struct ltx_bytelock *lock_of(uintptr_t line)
{
	return (struct ltx_bytelock
			*)((char *)table +
			   ltx_hash_index(ltx_hash_line(line, LTX_OREC_MUL),
					  32 - LTX_LINE_SHIFT, table_mask));
}

/* Whether p is the address of a bytelock of the table (its owner word). */
static bool in_table(uintptr_t p)
{
	uintptr_t t = (uintptr_t)__atomic_load_n(&table, __ATOMIC_RELAXED);

	return t != 0 && p - t <= table_mask &&
	       ((p - t) & (sizeof(struct ltx_bytelock) - 1)) == 0;
}

/* The owner word of cd's transaction: its id (not its slot, which only
 * readers need), + 1. */
static uintptr_t me(const struct ltx_cd *cd)
{
	return (uintptr_t)cd->id + 1;
}

/* The cd id that the owner word owner (not 0) names: me's inverse.  A
 * holder is named by its id to ltx_cd_holder and in a conflict's note. */
static uint32_t owner_id(uintptr_t owner)
{
	return (uint32_t)(owner - 1);
}

/*
 * Progress, for a read by an irrevocable transaction: whether it must
 * wait for the owner of lock (seen as owner, not 0 nor us): no if it is
 * doomed (dooming it first if it is live).
 */
static bool owner_in_way(const struct ltx_cd *cd, uintptr_t owner,
			 unsigned *spins)
{
	switch (ltx_cd_holder(cd, LTX_HOLDER_ID, owner_id(owner))) {
	case LTX_HOLDER_GONE:
		return false;
	case LTX_HOLDER_BUSY:
		ltx_wait_step(spins);
		return true;
	default:
		return true; /* look again */
	}
}

static bool slotted(const struct ltx_cd *cd)
{
	return (unsigned)cd->slot < LTX_VIS_SLOTS;
}

/*
 * T_READ: mark lock shared by us.  Returns 0, or BUSY_CAUSE if another
 * transaction owns it (our mark is then taken back), or NOMEM_CAUSE.
 */
static unsigned read_lock(struct ltx_cd *cd, struct ltx_bytelock *lock)
{
	uintptr_t owner;
	unsigned spins = 0;

	if (cd->rs_next == cd->rs_end && !ltx_rset_grow(cd))
		return NOMEM_CAUSE;
	if (slotted(cd)) {
		uint8_t *mine = &lock->reader[cd->slot];

		/* Already marked (another line on this lock): no writer can
		 * have taken it since but an irrevocable one, which doomed us
		 * first; the transaction layer's status check after the load
		 * then throws the value away (ltx_tx_load_at). */
		if (__atomic_load_n(mine, __ATOMIC_RELAXED))
			return 0;
		/* Named before the mark: a signal handler landing right after
		 * it finds what to clear (release_held). */
		cd->rs_next->orec = (uintptr_t *)lock;
		__atomic_exchange_n(mine, 1, __ATOMIC_SEQ_CST);
		owner = __atomic_load_n(&lock->owner, __ATOMIC_SEQ_CST);
		while (cd->irrevocable && owner != 0 && owner != me(cd)) {
			if (!owner_in_way(cd, owner, &spins))
				break;
			owner = __atomic_load_n(&lock->owner, __ATOMIC_SEQ_CST);
		}
		if (owner != 0 && owner != me(cd) && !cd->irrevocable) {
			/* We loaded nothing under the mark: relaxed. */
			__atomic_store_n(mine, 0, __ATOMIC_RELAXED);
			ltx_cd_conflict_held(cd, LTX_CD_HELD_OWNER,
					     owner_id(owner));
			return BUSY_CAUSE;
		}
	} else {
		__atomic_fetch_add(&lock->unslotted, 1, __ATOMIC_SEQ_CST);
		owner = __atomic_load_n(&lock->owner, __ATOMIC_SEQ_CST);
		while (cd->irrevocable && owner != 0 && owner != me(cd)) {
			if (!owner_in_way(cd, owner, &spins))
				break;
			owner = __atomic_load_n(&lock->owner, __ATOMIC_SEQ_CST);
		}
		if (owner != 0 && owner != me(cd) && !cd->irrevocable) {
			__atomic_fetch_sub(&lock->unslotted, 1,
					   __ATOMIC_RELAXED);
			ltx_cd_conflict_held(cd, LTX_CD_HELD_OWNER,
					     owner_id(owner));
			return BUSY_CAUSE;
		}
	}
	cd->rs_next->orec = (uintptr_t *)lock;
	cd->rs_next++;
	return 0;
}

/* How many of the unslotted count on lock are this (unslotted) thread's:
 * one per read-set entry on it. */
static uint32_t own_unslotted(const struct ltx_cd *cd,
			      const struct ltx_bytelock *lock)
{
	uint32_t n = 0;

	for (const struct ltx_rentry *r = cd->rs_base; r < cd->rs_next; r++)
		if (r->orec == (const uintptr_t *)lock)
			n++;
	return n;
}

/* Whether a transaction other than cd's holds lock in S (just after it
 * took the owner word: see the synchronization note). */
static bool others_read(const struct ltx_cd *cd,
			const struct ltx_bytelock *lock)
{
	const uint64_t *words = (const uint64_t *)lock->reader;
	uint64_t own_bits = 0;
	unsigned own_word = READER_WORDS;

	if (__atomic_load_n(&lock->unslotted, __ATOMIC_SEQ_CST) !=
	    (slotted(cd) ? 0 : own_unslotted(cd, lock)))
		return true;
	if (slotted(cd)) {
		own_word = (unsigned)cd->slot / 8;
		own_bits = (uint64_t)0xff << ((cd->slot % 8) * 8);
	}
	for (unsigned i = 0; i < READER_WORDS; i++) {
		uint64_t w = __atomic_load_n(&words[i], __ATOMIC_SEQ_CST);

		if (i == own_word)
			w &= ~own_bits; /* our own S: an upgrade */
		if (w != 0)
			return true;
	}
	return false;
}

/*
 * Progress: readers in the way of an irrevocable transaction that holds
 * lock's owner word.  A live reader is doomed, a doomed one ignored, a
 * committing one waited for.  A reader that marks the line after our
 * owner word was stored sees it and fails (the Dekker pair above); one
 * whose mark we see, we see in the transaction that made it or a later
 * one (our seq_cst load of the mark is an acquire of its seq_cst store,
 * made after its status turned ACTIVE).  Unslotted readers cannot be told
 * apart: every live transaction without a reader byte is doomed.
 * Returns true while one must be waited for.
 */
static bool readers_in_way(const struct ltx_cd *cd,
			   const struct ltx_bytelock *lock)
{
	if (__atomic_load_n(&lock->unslotted, __ATOMIC_SEQ_CST) !=
		    (slotted(cd) ? 0 : own_unslotted(cd, lock)) &&
	    ltx_cd_holder(cd, LTX_HOLDER_UNSLOTTED, 0) == LTX_HOLDER_BUSY)
		return true;
	for (unsigned s = 0; s < LTX_VIS_SLOTS; s++) {
		enum ltx_holder h;

		if ((int)s == cd->slot)
			continue;
		while (__atomic_load_n(&lock->reader[s], __ATOMIC_SEQ_CST) &&
		       (h = ltx_cd_holder(cd, LTX_HOLDER_SLOT, s)) !=
			       LTX_HOLDER_GONE)
			if (h == LTX_HOLDER_BUSY)
				return true;
	}
	return false;
}

/*
 * Progress: take lock's owner word, held by another transaction, for an
 * irrevocable one (see the top).  Returns true once it is ours; false to
 * look again (after a wait step if the owner is committing).
 */
static bool take_owner(const struct ltx_cd *cd, struct ltx_bytelock *lock,
		       unsigned *spins)
{
	enum ltx_holder held = LTX_HOLDER_AGAIN;
	uintptr_t owner;
	bool taken = false;

	ltx_cd_take_begin();
	/* Seq_cst: the taker's load of the Dekker pair (cd.h). */
	owner = __atomic_load_n(&lock->owner, __ATOMIC_SEQ_CST);
	if (owner != 0 && owner != me(cd))
		held = ltx_cd_holder(cd, LTX_HOLDER_ID, owner_id(owner));
	if (held == LTX_HOLDER_GONE)
		taken = __atomic_compare_exchange_n(
			&lock->owner, &owner, me(cd), false, __ATOMIC_SEQ_CST,
			__ATOMIC_RELAXED);
	ltx_cd_take_end();
	if (held == LTX_HOLDER_BUSY)
		ltx_wait_step(spins);
	return taken;
}

/*
 * Let go of an owner word that is ours unless it was taken from us: a CAS
 * from our word, never a plain store, for an irrevocable transaction may
 * have doomed us and taken it (take_owner), and a store of 0 would free
 * the line under it while it writes it (tests/unit/check_take_race.c,
 * vis_rfo).  Seq_cst: pairs with the next owner's CAS and with readers'
 * seq_cst loads of the owner word.
 */
static void let_go(const struct ltx_cd *cd, uintptr_t *owner)
{
	uintptr_t mine = me(cd);

	(void)__atomic_compare_exchange_n(owner, &mine, 0, false,
					  __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

/*
 * T_RFO: take lock in E for a new write-set entry for line (made here).
 * Returns the entry, or NULL with *cause set: BUSY_CAUSE if another
 * transaction owns the lock or holds it shared, NOMEM_CAUSE.
 */
static struct ltx_wentry *write_lock(struct ltx_cd *cd, uintptr_t line,
				     unsigned *cause)
{
	struct ltx_bytelock *lock = lock_of(line);
	uintptr_t expect = 0;
	struct ltx_wentry *w;
	bool taken = false;
	unsigned spins = 0;

	if (cd->ws_next == cd->ws_end && !ltx_wset_grow(cd, NULL)) {
		*cause = NOMEM_CAUSE;
		return NULL;
	}
	/* Named before the CAS, for release_held (see read_lock). */
	cd->ws_next->orec = &lock->owner;
	/* Owned already (another line on it): no reader got in since (an
	 * irrevocable taker would have changed the word). */
	if (__atomic_load_n(&lock->owner, __ATOMIC_RELAXED) != me(cd)) {
		while (!__atomic_compare_exchange_n(
			&lock->owner, &expect, me(cd), false, __ATOMIC_SEQ_CST,
			__ATOMIC_RELAXED)) {
			if (!cd->irrevocable) {
				ltx_cd_conflict_held(cd, LTX_CD_HELD_OWNER,
						     owner_id(expect));
				*cause = BUSY_CAUSE;
				return NULL;
			}
			if (take_owner(cd, lock, &spins))
				break;
			expect = 0;
		}
		LTX_TEST_HOOK(vis_rfo, (const void *)line);
		/* Irrevocable: keep the owner word, clear readers out of the
		 * way (new ones see the owner and fail). */
		if (cd->irrevocable) {
			while (readers_in_way(cd, lock))
				ltx_wait_step(&spins);
		} else if (others_read(cd, lock)) {
			/* Nothing was written under it; since our CAS it
			 * may have been taken from us. */
			let_go(cd, &lock->owner);
			ltx_cd_conflict_held(cd, LTX_CD_HELD_READERS, 0);
			*cause = BUSY_CAUSE;
			return NULL;
		}
		taken = true;
	}
	w = cd->ws_next++;
	w->line = line;
	w->orec = taken ? &lock->owner : NULL; /* who releases it */
	w->old_version = 0;
	w->mask = 0;
	w->link = 0;
	w->single_addr = LTX_WENTRY_NO_SINGLE;
	return w;
}

/* The directory's entry for line, or where it goes; NULL: no table yet. */
static inline struct ltx_line *probe(const struct ltx_cd *cd, uintptr_t line)
{
	return ltx_likely(cd->lines_mask != 0) ? ltx_lines_probe(cd, line)
					       : NULL;
}

/*
 * The write-set entry of addr's line, taking it in E (charging slots and
 * counting the request) unless this transaction has it already.
 */
static struct ltx_wentry *take(struct ltx_cd *cd, const void *addr,
			       unsigned *cause)
{
	uintptr_t line = (uintptr_t)addr & ~LTX_LINE_MASK;
	struct ltx_line *e = probe(cd, line);
	struct ltx_wentry *w;

	if (ltx_likely(e != NULL && ltx_lines_held(cd, e) &&
		       (e->state & LTX_LINE_EXCL)))
		return cd->ws_base + e->widx;
	if (!table_ready()) {
		*cause = NOMEM_CAUSE;
		return NULL;
	}
	*cause = ltx_lines_charge_new(cd, e, line, true, &e);
	if (*cause != 0)
		return NULL;
	w = write_lock(cd, line, cause);
	if (w == NULL) {
		if (*cause == BUSY_CAUSE)
			cd->stats->bus_busy++;
		ltx_cd_conflict_access(cd, addr, 8);
		return NULL;
	}
	e->state |= LTX_LINE_EXCL;
	e->widx = (uint32_t)(w - cd->ws_base);
	return w;
}

static void vis_begin(struct ltx_cd *cd)
{
	(void)table_ready(); /* a request says if it failed */
	/* A handler's descriptor: its slot on its first transaction here
	 * (relaxed store: an irrevocable transaction elsewhere may look up
	 * holders by slot, cd.h). */
	if (ltx_unlikely(cd->slot < 0))
		__atomic_store_n(&cd->slot, ltx_cd_take_slot(),
				 __ATOMIC_RELAXED);
	cd->limit = 0; /* no fast path: every operation comes here */
	cd->counted = 0;
}

static uint64_t vis_load(struct ltx_cd *cd, const void *addr, bool excl,
			 unsigned *cause)
{
	uintptr_t line = (uintptr_t)addr & ~LTX_LINE_MASK;
	struct ltx_line *e;
	struct ltx_wentry *w;

	if (excl) {
		w = take(cd, addr, cause);
		return w != NULL ? ltx_wset_merged_word(w, addr) : 0;
	}
	e = probe(cd, line);
	if (ltx_likely(e != NULL && ltx_lines_held(cd, e))) {
		if (e->state & LTX_LINE_EXCL)
			return ltx_wset_merged_word(cd->ws_base + e->widx,
						    addr);
		/* Held in S: only an irrevocable transaction can change it
		 * under us, after dooming us (the caller checks). */
		return ltx_load_word((const uint64_t *)addr);
	}
	if (!table_ready()) {
		*cause = NOMEM_CAUSE;
		return 0;
	}
	*cause = ltx_lines_charge_new(cd, e, line, false, &e);
	if (*cause != 0)
		return 0;
	*cause = read_lock(cd, lock_of(line));
	if (*cause != 0) {
		if (*cause == BUSY_CAUSE)
			cd->stats->bus_busy++;
		ltx_cd_conflict_access(cd, addr, 8);
		return 0;
	}
	e->state |= LTX_LINE_READ;
	/* Ordered after the seq_cst load of the owner word (see the top). */
	return ltx_load_word((const uint64_t *)addr);
}

static unsigned vis_store(struct ltx_cd *cd, void *addr, uint64_t val,
			  unsigned size)
{
	unsigned cause = 0;
	struct ltx_wentry *w = take(cd, addr, &cause);

	if (w != NULL)
		ltx_wset_buffer(w, addr, val, size);
	else
		ltx_cd_conflict_access(cd, addr, size); /* not the word */
	return cause;
}

/* Nothing to check: a conflict dooms the requester when it happens. */
static unsigned vis_validate(struct ltx_cd *cd)
{
	return 0;
}

/*
 * Let go of the owner word of entry w.  After a commit (committed) the
 * owner words are still ours: nobody takes a committing transaction's
 * lines.  Otherwise release_held may have let go of it already, and an
 * irrevocable transaction may have taken it (let_go).  The release store
 * pairs with the next owner's CAS and with readers' seq_cst loads of the
 * owner word.
 */
static void unlock_owner(const struct ltx_cd *cd, const struct ltx_wentry *w,
			 bool committed)
{
	if (w->orec == NULL)
		return;
	if (committed)
		__atomic_store_n(w->orec, 0, __ATOMIC_RELEASE);
	else
		let_go(cd, w->orec);
}

/* Clear our reader byte on the lock of read-set entry r (idempotent).
 * Pairs with a writer's loads of the reader words: our loads of the line
 * happen before its write-back. */
static void unmark_reader(const struct ltx_cd *cd, const struct ltx_rentry *r)
{
	struct ltx_bytelock *lock = (struct ltx_bytelock *)r->orec;

	__atomic_store_n(&lock->reader[cd->slot], 0, __ATOMIC_RELEASE);
}

/* Let go of every line: owners first, then reader marks. */
static void release_locks(struct ltx_cd *cd, bool committed)
{
	for (struct ltx_wentry *w = cd->ws_base; w < cd->ws_next; w++)
		unlock_owner(cd, w, committed);
	for (struct ltx_rentry *r = cd->rs_base; r < cd->rs_next; r++) {
		if (slotted(cd))
			unmark_reader(cd, r);
		else
			__atomic_fetch_sub(
				&((struct ltx_bytelock *)r->orec)->unslotted, 1,
				__ATOMIC_RELEASE);
	}
	cd->rs_next = cd->rs_base;
	cd->ws_next = cd->ws_base;
	ltx_lines_reset(cd);
}

/* Nothing to check before the commit point: every line is held. */
static unsigned vis_prepare(struct ltx_cd *cd, uintptr_t *ts)
{
	return 0;
}

/* COMMIT: write the dirty bytes back while every line is still held. */
static void vis_publish(struct ltx_cd *cd, uintptr_t ts)
{
	for (struct ltx_wentry *w = cd->ws_base; w < cd->ws_next; w++)
		if (w->mask != 0) {
			ltx_wset_write_back(w, w->mask);
			cd->stats->bus_writeback++;
		}
	release_locks(cd, true);
}

static void vis_release(struct ltx_cd *cd)
{
	release_locks(cd, false);
}

/*
 * From a signal handler (cd.h): let go of the owner words and reader bytes
 * held, and of the next entry's if an interrupted operation has just taken
 * it (the lock paths name it first).  An unslotted thread's read counts
 * are left to the next release: a count cannot be taken back twice.
 */
static void vis_release_held(struct ltx_cd *cd)
{
	struct ltx_wentry *w, *wn = cd->ws_next;
	struct ltx_rentry *r, *rn = cd->rs_next;

	if (__atomic_load_n(&cd->resizing, __ATOMIC_RELAXED))
		return;
	for (w = cd->ws_base; w < wn; w++)
		unlock_owner(cd, w, false);
	/* The next entries may never have been used: their pointers are
	 * trusted only if they point at a lock of the table. */
	if (wn < cd->ws_end && in_table((uintptr_t)wn->orec))
		unlock_owner(cd, wn, false);
	if (!slotted(cd))
		return;
	for (r = cd->rs_base; r < rn; r++)
		unmark_reader(cd, r);
	if (rn < cd->rs_end && in_table((uintptr_t)rn->orec))
		unmark_reader(cd, rn);
}

/* Every line read or written is held already: nothing to take. */
static unsigned vis_make_irrevocable(struct ltx_cd *cd)
{
	return 0;
}

static unsigned vis_line_state(struct ltx_cd *cd, const void *addr)
{
	struct ltx_line *e =
		ltx_lines_find(cd, (uintptr_t)addr & ~LTX_LINE_MASK);

	if (e == NULL || e->state == 0)
		return LTX_LINE_STATE(TM_EMPTY, 'I');
	if (e->state & LTX_LINE_EXCL)
		return LTX_LINE_STATE(TM_XABORT,
				      cd->ws_base[e->widx].mask ? 'M' : 'E');
	return LTX_LINE_STATE(TM_NORMAL, 'S');
}

/*
 * Fork (cd.h): the gone transaction cd was past its commit point: write
 * back its dirty lines whose lock it still owns (it releases owner words
 * only after its whole write-back).
 */
void ltx_vis_fork_finish(struct ltx_cd *cd)
{
	if (table == NULL)
		return;
	for (struct ltx_wentry *w = cd->ws_base; w < cd->ws_next; w++)
		if (w->mask != 0 && __atomic_load_n(&lock_of(w->line)->owner,
						    __ATOMIC_RELAXED) == me(cd))
			ltx_wset_write_back(w, w->mask);
}

/* Whether the owner word o, or the reader slot s, is a kept cd's. */
static bool kept_owner(struct ltx_cd *const *keep, unsigned nkeep, uintptr_t o)
{
	for (unsigned i = 0; i < nkeep; i++)
		if (me(keep[i]) == o)
			return true;
	return false;
}

static bool kept_slot(struct ltx_cd *const *keep, unsigned nkeep, unsigned s)
{
	for (unsigned i = 0; i < nkeep; i++)
		if (keep[i]->slot == (int)s)
			return true;
	return false;
}

/*
 * Fork (cd.h): clear every owner word and reader mark that is not a kept
 * cd's, and count the unslotted readers again from the kept read sets.
 * The whole table is scanned (a thread may have been stopped between its
 * mark and its log's update); a word is stored only if it changes, so
 * that the child does not copy every page of the table.
 */
void ltx_vis_fork_free(struct ltx_cd *const *keep, unsigned nkeep)
{
	size_t n;

	if (table == NULL)
		return;
	n = table_mask / sizeof(struct ltx_bytelock) + 1;
	for (size_t i = 0; i < n; i++) {
		struct ltx_bytelock *lock = &table[i];
		uintptr_t o = __atomic_load_n(&lock->owner, __ATOMIC_RELAXED);

		if (o != 0 && !kept_owner(keep, nkeep, o))
			__atomic_store_n(&lock->owner, 0, __ATOMIC_RELEASE);
		for (unsigned s = 0; s < LTX_VIS_SLOTS; s++)
			if (__atomic_load_n(&lock->reader[s],
					    __ATOMIC_RELAXED) &&
			    !kept_slot(keep, nkeep, s))
				__atomic_store_n(&lock->reader[s], 0,
						 __ATOMIC_RELEASE);
		if (__atomic_load_n(&lock->unslotted, __ATOMIC_RELAXED) != 0)
			__atomic_store_n(&lock->unslotted, 0, __ATOMIC_RELAXED);
	}
	for (unsigned i = 0; i < nkeep; i++)
		if (!slotted(keep[i]))
			for (const struct ltx_rentry *r = keep[i]->rs_base;
			     r < keep[i]->rs_next; r++)
				__atomic_fetch_add(
					&((struct ltx_bytelock *)r->orec)
						 ->unslotted,
					1, __ATOMIC_RELAXED);
}

const struct ltx_cd_ops ltx_cd_visible = {
	.begin = vis_begin,
	.load = vis_load,
	.store = vis_store,
	.validate = vis_validate,
	.prepare = vis_prepare,
	.publish = vis_publish,
	.release = vis_release,
	.release_held = vis_release_held,
	/* valid_now: NULL, a live transaction's reads always hold */
	.make_irrevocable = vis_make_irrevocable,
	.line_state = vis_line_state,
};
