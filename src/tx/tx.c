/* SPDX-License-Identifier: MIT */
/* Transaction life cycle and the per-thread descriptor registry. */
#include <ltx/tm.h>

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cd/cd.h"
#include "cd/lines.h"
#include "cd/invisible.h"
#include "cd/orec.h"
#include "cd/visible.h"
#include "rt/hash.h"
#include "rt/array.h"
#include "rt/backoff.h"
#include "rt/config.h"
#include "rt/wait.h"
#include "tx/alone.h"
#include "tx/serial.h"
#include "tx/stats.h"
#include "tx/fast.h"
#include "tx/mem.h"
#include "tx/tx.h"

/* tm_on_commit/tm_on_abort handlers a signal handler's descriptor has
 * room for: it never allocates (cd.no_alloc), so room is made with it. */
#define HANDLER_ACTIONS 8

__thread struct ltx_tx *ltx_self
	__attribute__((tls_model("initial-exec"), visibility("default"))) =
		&ltx_boot_tx;

static uintptr_t boot_orecs[1];

/*
 * The checkpoint of ltx_boot_tx and ltx_refuse_tx, which are never in a
 * block: not NULL, so that the begin of an x86-64 TM_ATOMIC block finds
 * them by the one test it makes for a block inside another
 * (api/atomic.c).  Nothing restarts to it: no transaction of theirs is
 * ever doomed, and what looks at a checkpoint to restart, leave or abort
 * (ltx_tx_abort, tx/signal.c's sandbox and on_jump) sets them aside first.
 */
static struct ltx_checkpoint static_checkpoint;

struct ltx_tx ltx_boot_tx = {
	.status = LTX_IDLE_SLOW,
	.slow = LTX_SLOW_STATIC,
	.cd = { .orecs = boot_orecs, .orec_mul = LTX_OREC_MUL },
	.checkpoint = &static_checkpoint,
};

static uintptr_t refuse_orecs[1];

struct ltx_tx ltx_refuse_tx = {
	.status = LTX_IDLE_SLOW,
	.slow = LTX_SLOW_STATIC,
	.cd = { .orecs = refuse_orecs,
		.orec_mul = LTX_OREC_MUL,
		.no_alloc = 1 },
	.checkpoint = &static_checkpoint,
};

/*
 * At load time: the settings from the environment, the statistics export
 * they ask for, and what a signal does to a transaction.  Here, in the
 * engine, because every front end links it: a program linked with libltx.a
 * that calls only GCC's libitm ABI pulls in no tm_* object, and its LTX_*
 * settings were once ignored (tests/integration/static-link.sh).
 */
__attribute__((constructor)) static void tx_load(void)
{
	ltx_config_from_env();
	ltx_stats_init();
	ltx_tx_signals_init();
}

/* What a transaction on ltx_refuse_tx reports. */
#define REFUSE_CAUSE (TM_ABORT_SIGNAL | TM_ABORT_CAPACITY)

/*
 * Registry of descriptors.  Synchronization: registry_lock guards the list
 * and every in_use flag; it is taken only when a thread creates or gives
 * back its descriptor and by ltx_tx_foreach, never on a transactional path.
 */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ltx_tx *registry;
/* Threads that hold a descriptor of their own (handler twins are not
 * counted): read without the lock by ltx_tx_other_threads (tx.h). */
unsigned ltx_tx_live_threads;
static uint32_t next_id;
static pthread_key_t exit_key;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_error;

/*
 * Spare descriptors, for the transactions of signal handlers on threads
 * that have none of their own.  Taking a thread's descriptor locks the
 * registry and allocates, which a handler must not do: the signal may
 * have interrupted malloc on that very thread (seen: a deadlock on the
 * heap's lock, tests/unit/check_signal.c).  So such a handler borrows a
 * spare at its first operation (ltx_tx_self) and gives it back when it
 * returns or is left by a jump (tx/signal.c, handler_over).  Spares are
 * made outside handlers: when the program installs a handler
 * (ltx_tx_make_spares, from rt/signal.c's sigaction) and with the first
 * descriptor a thread takes; the orec table may come later (table_init),
 * so that LTX_OREC_BITS can still be set.  A handler that finds no spare
 * (installed in a handler, or no memory) takes the thread's descriptor
 * there as before.  A spare is a handler descriptor (no_alloc, never
 * irrevocable, no serial fallback; a handler interrupting its handler
 * gets ltx_refuse_tx) whose parent is ltx_boot_tx (idle, no stack), so
 * that every test that tells a handler descriptor by its parent holds for
 * it as for a thread's twin.  While borrowed it counts as a live thread,
 * as a taken descriptor does (the serial token's drain must see its
 * transactions).
 *
 * Synchronization: spares[] and the descriptors are written, under the
 * registry lock, before nspares is published (release; the borrower's
 * acquire load).  A borrower claims spare i by a CAS of spare_busy[i]
 * from 0 (acquire), which pairs with the release store of 0 that gives it
 * back after its last transaction has ended: async-signal-safe, no lock.
 * When every spare is out, a borrower waits for one: the holders are
 * handlers of other threads (a handler inside a borrower's handler is
 * refused, and a thread borrows only with signals blocked), which never
 * wait for a thread that has no descriptor.
 */
#define SPARES 2
static struct ltx_tx *spares[SPARES];
static int spare_busy[SPARES];
static unsigned nspares;

static const struct ltx_cd_ops *ops(const struct ltx_tx *tx)
{
	return ltx_cd_ops_of(tx->mode);
}

/* Status is also written by this thread's signal handlers: atomics. */
static int load_status(const struct ltx_tx *tx)
{
	return __atomic_load_n(&tx->status, __ATOMIC_RELAXED);
}

/* Release: pairs with tm_free's acquire loads of status (tx/mem.c): the
 * reads of a transaction that ends are over, and the tx_id of one that
 * begins is stored, before the new status is seen. */
static void store_status(struct ltx_tx *tx, int status)
{
	__atomic_store_n(&tx->status, status, __ATOMIC_RELEASE);
}

/*
 * Idle, in the settings' mode (desc.h, the idle states): LTX_IDLE where
 * transactions may begin on the fast paths (the invisible mode with no
 * capacity limit: cd/invisible.c), LTX_IDLE_VISIBLE in the visible mode
 * with none (only a transaction that runs alone skips the slow path's
 * begin), else LTX_IDLE_SLOW.  Worked out from the settings when they can
 * change (the first descriptor, tm_config_set of LTX_MODE or
 * LTX_CAPACITY), which only happens while a single thread uses ltx and
 * is in no transaction, so a plain int does, and every transaction ends
 * in the settings it began in.
 */
static int idle_now = LTX_IDLE;

static void settings_changed(void)
{
	if (ltx_config.capacity != 0)
		idle_now = LTX_IDLE_SLOW;
	else if (ltx_config.mode == LTX_MODE_VISIBLE)
		idle_now = LTX_IDLE_VISIBLE;
	else
		idle_now = LTX_IDLE;
}

static int idle_status(void)
{
	return idle_now;
}

/*
 * Set the idle descriptor tx for the settings: its mode and capacity
 * limit as begin() would set them, then the idle state that says how its
 * next transaction begins (desc.h).  Status goes to LTX_IDLE_SLOW first:
 * a signal handler that runs a transaction on tx meanwhile (tx is a
 * handler descriptor) begins it by begin(), which sets the same fields
 * from the settings.
 */
static void rearm(struct ltx_tx *tx)
{
	store_status(tx, LTX_IDLE_SLOW);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	tx->mode = ltx_config.mode;
	tx->cd.capacity = ltx_config.capacity;
	tx->cd.counted = 0; /* a fast begin leaves it as it is */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	store_status(tx, idle_status());
}

/* Serial fallback: after LTX_SERIAL_AFTER consecutive aborts, the next
 * transaction of this thread begins irrevocably (not in handlers). */
static bool serial_due(const struct ltx_tx *tx)
{
	unsigned k =
		__atomic_load_n(&ltx_config.serial_after, __ATOMIC_RELAXED);

	return k != 0 && tx->consec_aborts >= k && tx->parent == NULL;
}

void ltx_tx_mode_changed(void)
{
	struct ltx_tx *tx = ltx_self;

	settings_changed();
	if (tx == &ltx_boot_tx)
		return;
	if (ltx_status_idle(load_status(tx)))
		rearm(tx);
	/* Its handler descriptor too, which only this thread uses. */
	if (tx->handler_tx != NULL &&
	    ltx_status_idle(load_status(tx->handler_tx)))
		rearm(tx->handler_tx);
}

static void run_actions(struct ltx_tx *tx, bool committed);
static void end_serial(struct ltx_tx *tx);
static void end_mem(struct ltx_tx *tx, bool committed);

/*
 * The end of a transaction that did not commit: idle, then let an
 * irrevocable transaction that may be taking one of its lines finish
 * before another begins (cd.h, ltx_cd_take_begin; seq_cst: the holder's
 * store of that Dekker pair).  Release as well, as every end of a
 * transaction (store_status).
 */
static void end_aborted(struct ltx_tx *tx, int idle)
{
	__atomic_store_n(&tx->status, idle, __ATOMIC_SEQ_CST);
	ltx_cd_take_wait();
}

/*
 * What a transaction doomed by another thread reports: an irrevocable
 * transaction took a line it held (the progress rule).  Such a doom sets
 * no cause (another thread must not write it: it is the owner's), so a
 * doomed descriptor with no cause was doomed that way.
 */
#define TAKEN_CAUSE (TM_ABORT_CONFLICT | TM_ABORT_RETRY)

static unsigned doomed_cause(const struct ltx_tx *tx)
{
	unsigned cause = __atomic_load_n(&tx->cause, __ATOMIC_RELAXED);

	return cause != 0 ? cause : TAKEN_CAUSE;
}

/*
 * Progress (DESIGN.md): an irrevocable transaction dooms a live
 * transaction in its way.  The doom is a CAS of status from ACTIVE to
 * DOOMED; the victim's own commit point is a CAS from ACTIVE to
 * COMMITTING (commit_point), so exactly one of them wins: a doomed
 * transaction never commits, and a committing one is never doomed (the
 * irrevocable one waits for it, a bounded wait).  Seq_cst: the taker's
 * reasoning in cd.h and cd/visible.c reads statuses in that order.  The
 * victim notices at its next slow path or commit (cd.limit, which only
 * its own thread writes, is left alone: its fast paths fail on any line
 * the irrevocable transaction takes or writes), and its loads return 0
 * from then on (ltx_tx_load_at checks after each load).
 */
static bool doom_remote(struct ltx_tx *d)
{
	int expect = LTX_ACTIVE;

	return __atomic_compare_exchange_n(&d->status, &expect, LTX_DOOMED,
					   false, __ATOMIC_SEQ_CST,
					   __ATOMIC_RELAXED);
}

/* The state of d's transaction for ltx_cd_holder: dooming a live one. */
static enum ltx_holder holder_state(struct ltx_tx *d)
{
	switch (__atomic_load_n(&d->status, __ATOMIC_SEQ_CST)) {
	case LTX_ACTIVE:
		(void)doom_remote(d);
		return LTX_HOLDER_AGAIN; /* whatever won, look again */
	case LTX_DOOMED:
		return LTX_HOLDER_GONE;
	case LTX_COMMITTING:
		return LTX_HOLDER_BUSY;
	default:
		return LTX_HOLDER_AGAIN; /* ended meanwhile */
	}
}

/*
 * ltx_cd_holder (cd.h), for the irrevocable transaction self.  Lock-free:
 * the registry only grows, and descriptors are never freed; a handler
 * descriptor is a holder like any other (its thread's main descriptor is
 * not the caller: that thread is in the handler).
 */
static enum ltx_holder holder(const struct ltx_cd *self, int kind,
			      uint32_t which)
{
	enum ltx_holder all = LTX_HOLDER_GONE;

	for (struct ltx_tx *d = ltx_tx_registry(); d != NULL; d = d->next_all) {
		if (&d->cd == self)
			continue;
		switch (kind) {
		case LTX_HOLDER_ID:
			if (d->cd.id == which)
				return holder_state(d);
			break;
		case LTX_HOLDER_SLOT:
			if (__atomic_load_n(&d->cd.slot, __ATOMIC_RELAXED) ==
			    (int)which)
				return holder_state(d);
			break;
		default:
			/* Without a reader byte: every such transaction. */
			if ((unsigned)__atomic_load_n(&d->cd.slot,
						      __ATOMIC_RELAXED) <
			    LTX_VIS_SLOTS)
				break;
			if (holder_state(d) == LTX_HOLDER_BUSY)
				all = LTX_HOLDER_BUSY;
			break;
		}
	}
	/* A holder by id or slot not found: it let go and was reused. */
	return kind == LTX_HOLDER_UNSLOTTED ? all : LTX_HOLDER_AGAIN;
}

static void thread_exit(void *arg)
{
	struct ltx_tx *tx = arg;
	sigset_t all;

	/*
	 * No handler runs on this thread any more, now or after: blocked
	 * here, its signals stay blocked until the thread is gone (glibc
	 * blocks them itself a little later, in the thread's final
	 * stages).  A handler that ran after the release below would find
	 * ltx_self back at ltx_boot_tx, and its transactions would take a
	 * descriptor (registry_lock, maybe malloc) and make the GCC front
	 * end's state (malloc) inside a signal handler: a deadlock if the
	 * signal had interrupted the release (registry_lock held), or
	 * libc's own teardown holding the heap's lock (seen: a SIGALRM
	 * handler's GCC transaction landing in __libc_thread_freeres).  A
	 * process-directed signal goes to another thread; one sent to this
	 * thread is lost with it, as it would be a moment later.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	/* A thread that ends (or is cancelled) inside a transaction aborts
	 * it, so none of its lines stays owned. */
	if (!ltx_status_idle(load_status(tx))) {
		ops(tx)->release(&tx->cd);
		tx->cd.limit = 0;
		tx->cause = 0;
		end_aborted(tx, LTX_IDLE_SLOW);
		end_serial(tx);
		end_mem(tx, false);
		run_actions(tx, false);
	}
	if (tx->stats_on)
		ltx_stats_thread_end(tx);
	tx->checkpoint = NULL;
	ltx_mem_thread_exit(tx);
	ltx_self = &ltx_boot_tx;
	pthread_mutex_lock(&registry_lock);
	tx->in_use = 0;
	pthread_mutex_unlock(&registry_lock);
	__atomic_fetch_sub(&ltx_tx_live_threads, 1, __ATOMIC_RELEASE);
}

/*
 * fork (DESIGN.md, Every way out of a transaction): the child runs only
 * the forking thread.  Every other thread's transaction is gone with its
 * thread: its lines must be free in the child, and every registry must
 * hold the forking thread alone.  The registry lock is taken across the
 * fork, so that the child gets the registry whole and the lock free.
 * The child handler runs single-threaded, and takes no lock and allocates
 * nothing:
 *  - a transaction past its commit point finishes its write-back (the
 *    commit was decided); every other one is aborted;
 *  - every line held by another thread's descriptor is freed (in both
 *    modes' tables), and those descriptors are idle, their logs and
 *    actions forgotten (tm_free's grace periods then wait for none of
 *    them), and back in the pool, unless they are handler twins;
 *  - the live-thread count is the forking thread's, and the serial token,
 *    if another thread held it, is free.
 * The forking thread's own transaction, if any, goes on (on either of
 * its descriptors: fork may be called from a signal handler).
 */
static void fork_prepare(void)
{
	pthread_mutex_lock(&registry_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&registry_lock);
}

static bool fork_kept(const struct ltx_tx *d, const struct ltx_tx *me)
{
	return me != NULL && (d == me || d == me->handler_tx);
}

static void fork_child(void)
{
	struct ltx_tx *me = pthread_getspecific(exit_key);
	struct ltx_cd *keep[2];
	unsigned nkeep = 0;
	bool busy = false;
	uintptr_t token = __atomic_load_n(&ltx_serial_token, __ATOMIC_RELAXED);
	struct ltx_tx *token_holder =
		(struct ltx_tx *)(token & ~LTX_SERIAL_EXCL);

	/* A handler's borrowed spare is the forking thread's for now. */
	if (me == NULL && ltx_tx_is_spare(ltx_self))
		me = ltx_self;
	if (me != NULL) {
		keep[nkeep++] = &me->cd;
		if (me->handler_tx != NULL)
			keep[nkeep++] = &me->handler_tx->cd;
	}
	for (struct ltx_tx *d = registry; d != NULL; d = d->next_all) {
		int st = load_status(d);

		if (fork_kept(d, me) || ltx_status_idle(st))
			continue;
		busy = true;
		if (st == LTX_COMMITTING)
			ltx_cd_fork_finish(&d->cd, d->mode);
	}
	if (busy)
		ltx_cd_fork_free(keep, nkeep);
	for (struct ltx_tx *d = registry; d != NULL; d = d->next_all) {
		if (fork_kept(d, me))
			continue;
		ltx_cd_fork_forget(&d->cd);
		d->cause = 0;
		d->nactions = 0;
		d->slow &= ~(LTX_SLOW_ACTIONS | LTX_SLOW_SERIAL | LTX_SLOW_MEM);
		d->checkpoint = NULL;
		/* (A statistics update cut short: tx/stats.c's handler.) */
		ltx_mem_fork_child(d);
		store_status(d, LTX_IDLE_SLOW);
		if (d->parent == NULL)
			d->in_use = 0; /* a twin stays its thread's */
	}
	/* The other borrowers are gone with their threads. */
	for (unsigned i = 0; i < SPARES; i++)
		if (spares[i] != me)
			__atomic_store_n(&spare_busy[i], 0, __ATOMIC_RELAXED);
	if (token_holder != NULL && !fork_kept(token_holder, me))
		__atomic_store_n(&ltx_serial_token, 0, __ATOMIC_RELEASE);
	/* The backoff controller's lock may be a gone thread's. */
	ltx_backoff_adapt_reset(&ltx_backoff_auto);
	/* Signals deferred in the parent stay blocked in the child's mask,
	 * and none is pending here: unblock them. */
	if (ltx_signal_deferred != 0)
		ltx_signal_deliver_deferred();
	__atomic_store_n(&ltx_tx_live_threads, me != NULL ? 1 : 0,
			 __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&registry_lock);
}

/*
 * Once per process, in two steps.  global_init, for the registry: before
 * the first descriptor, and before the spares, which the program's first
 * handler install makes (ltx_tx_make_spares).  table_init, the orec
 * table, whose size LTX_OREC_BITS can be set until then: at the first
 * take, or at the first borrow of a spare, in a signal handler.  There
 * pthread_once runs with the handler's signals blocked, as the visible
 * mode's table_ready does for its table (a handler landing inside it on
 * the same thread would wait for itself), and mmap and write are
 * async-signal-safe.
 */
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static int table_error;

static void global_init(void)
{
	settings_changed();
	ltx_cd_holder = holder;
	if (pthread_key_create(&exit_key, thread_exit) != 0 ||
	    pthread_atfork(fork_prepare, fork_parent, fork_child) != 0)
		init_error = ENOMEM;
}

static void table_init(void)
{
	static const char msg[] = "ltx: cannot map the orec table\n";
	unsigned bits = ltx_config.orec_bits;

	/* Fall back to smaller tables rather than not run at all. */
	while (ltx_orec_init(bits) != 0) {
		if (bits <= LTX_OREC_BITS_MIN) {
			table_error = ENOMEM;
			(void)!write(2, msg, sizeof(msg) - 1);
			return;
		}
		bits--;
	}
	ltx_config.orec_bits = bits;
}

/* The table step, signals blocked by the caller. */
static bool orecs_ready(void)
{
	pthread_once(&table_once, table_init);
	return table_error == 0;
}

/* A new descriptor, in the registry; a thread's own gets a reader slot at
 * once, a handler twin only if a handler ever runs a visible-mode
 * transaction (cd.h, slot): most never do, and reader bytes are few. */
static struct ltx_tx *new_descriptor(bool twin)
{
	struct ltx_tx *tx;

	if (posix_memalign((void **)&tx, LTX_LINE_SIZE, sizeof(*tx)))
		return NULL;
	memset(tx, 0, sizeof(*tx));
	tx->cd.id = next_id++;
	/* Before the registry push: an irrevocable transaction may look up
	 * holders by slot from then on. */
	tx->cd.slot = twin ? -1 : ltx_cd_take_slot();
	/* The logs and the directory now, for handler descriptors too. */
	if (!ltx_cd_init(&tx->cd, &tx->stats)) {
		free(tx);
		return NULL;
	}
	tx->next_all = registry;
	/* Pairs with the acquire load in ltx_tx_registry. */
	__atomic_store_n(&registry, tx, __ATOMIC_RELEASE);
	return tx;
}

struct ltx_tx *ltx_tx_registry(void)
{
	return __atomic_load_n(&registry, __ATOMIC_ACQUIRE);
}

static struct ltx_tx *take_descriptor(void);
static struct ltx_tx *borrow_spare(unsigned n);

/*
 * The thread's descriptor, taken on its first use.  Taking it locks the
 * registry and allocates: a signal handler that began a transaction in
 * the middle would find the thread without one and take it again, or wait
 * for the lock for ever.  So signals wait meanwhile (blocked, then
 * delivered when the descriptor is the thread's: transactions in their
 * handlers get its handler twin).  Once per thread.  A handler on a thread
 * that has none borrows a spare instead (above), for as long as it runs.
 */
struct ltx_tx *ltx_tx_self(void)
{
	struct ltx_tx *tx = ltx_self;
	sigset_t all, saved;
	unsigned n;

	if (tx != &ltx_boot_tx)
		return tx;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &saved);
	tx = ltx_self; /* a handler took it just before the block */
	n = __atomic_load_n(&nspares, __ATOMIC_ACQUIRE);
	if (tx == &ltx_boot_tx && ltx_tx_in_handler() && n != 0) {
		/* Until the handler is over (tx/signal.c). */
		tx = borrow_spare(n);
		if (tx != NULL)
			ltx_self = tx;
	} else if (tx == &ltx_boot_tx) {
		tx = take_descriptor();
	}
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	return tx;
}

/*
 * A new handler descriptor for parent (a thread's main descriptor, or
 * ltx_boot_tx for a spare), under the registry lock: its transactions
 * cannot allocate, so it gets room for a few tm_on_commit/tm_on_abort
 * handlers now.  NULL without memory.
 */
static struct ltx_tx *new_handler_descriptor(struct ltx_tx *parent)
{
	struct ltx_tx *h = new_descriptor(true);

	if (h == NULL)
		return NULL;
	h->in_use = 1; /* for good: never a thread's own */
	h->parent = parent;
	h->cd.no_alloc = 1;
	(void)LTX_ARRAY_RESERVE(&h->actions, &h->actions_cap, 0,
				HANDLER_ACTIONS, HANDLER_ACTIONS);
	ltx_cd_attach(&h->cd);
	rearm(h);
	h->rng = ((uint64_t)(uintptr_t)h * LTX_HASH_MUL) | 1;
	return h;
}

/* The spares not made yet, under the registry lock (after global_init). */
static void make_spares_locked(void)
{
	for (unsigned n = nspares; n < SPARES; n++) {
		struct ltx_tx *s = new_handler_descriptor(&ltx_boot_tx);

		if (s == NULL)
			return; /* no memory: fewer spares */
		spares[n] = s;
		__atomic_store_n(&nspares, n + 1, __ATOMIC_RELEASE);
	}
}

void ltx_tx_make_spares(void)
{
	sigset_t all, saved;

	if (__atomic_load_n(&nspares, __ATOMIC_ACQUIRE) == SPARES)
		return;
	pthread_once(&init_once, global_init);
	if (init_error)
		return;
	/* As take_descriptor: no handler runs while the lock is held. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &saved);
	pthread_mutex_lock(&registry_lock);
	make_spares_locked();
	pthread_mutex_unlock(&registry_lock);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

/*
 * One of the n spares made, for a handler on a thread without a
 * descriptor (see spares above), signals blocked by the caller; NULL if
 * the orec table cannot be made.  Set for the settings of now and the
 * table, as a take sets a thread's descriptor.
 */
static struct ltx_tx *borrow_spare(unsigned n)
{
	unsigned spins = 0;

	if (!orecs_ready())
		return NULL;
	for (;;) {
		for (unsigned i = 0; i < n; i++) {
			struct ltx_tx *s = spares[i];
			int expect = 0;

			if (__atomic_load_n(&spare_busy[i], __ATOMIC_RELAXED) ||
			    !__atomic_compare_exchange_n(
				    &spare_busy[i], &expect, 1, false,
				    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
				continue;
			/* Another thread's, for the front ends (desc.h); made
			 * before the orec table, maybe. */
			s->takes++;
			ltx_cd_attach(&s->cd);
			rearm(s);
			s->checkpoint = NULL;
			/* As a take: the Dekker pair of tx/serial.h. */
			__atomic_fetch_add(&ltx_tx_live_threads, 1,
					   __ATOMIC_SEQ_CST);
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			return s;
		}
		ltx_wait_step(&spins);
	}
}

bool ltx_tx_is_spare(const struct ltx_tx *tx)
{
	return tx->parent == &ltx_boot_tx;
}

void ltx_tx_give_back_spare(struct ltx_tx *tx)
{
	for (unsigned i = 0; i < SPARES; i++)
		if (spares[i] == tx) {
			__atomic_fetch_sub(&ltx_tx_live_threads, 1,
					   __ATOMIC_RELEASE);
			__atomic_store_n(&spare_busy[i], 0, __ATOMIC_RELEASE);
			return;
		}
}

static struct ltx_tx *take_descriptor(void)
{
	struct ltx_tx *tx;

	pthread_once(&init_once, global_init);
	if (init_error || !orecs_ready())
		return NULL;
	pthread_mutex_lock(&registry_lock);
	for (tx = registry; tx != NULL; tx = tx->next_all)
		if (!tx->in_use)
			break;
	if (tx == NULL)
		tx = new_descriptor(false);
	if (tx != NULL) {
		tx->in_use = 1;
		/* A new thread: the front ends' state for the last one (its
		 * stack, say) is stale (desc.h, takes). */
		tx->takes++;
		if (tx->handler_tx != NULL)
			tx->handler_tx->takes++;
	}
	/* Its twin for signal handlers, made now: handlers cannot malloc;
	 * or the one it has, idle since its last thread, set for the
	 * settings of now. */
	if (tx != NULL && tx->handler_tx != NULL &&
	    ltx_status_idle(load_status(tx->handler_tx)))
		rearm(tx->handler_tx);
	if (tx != NULL && tx->handler_tx == NULL)
		tx->handler_tx = new_handler_descriptor(tx);
	make_spares_locked();
	pthread_mutex_unlock(&registry_lock);
	if (tx == NULL)
		return NULL;
	ltx_cd_attach(&tx->cd);
	tx->cd.limit = 0;
	tx->cause = 0;
	tx->end_state = 0;
	rearm(tx); /* tm_free reads its status (tx/mem.c) */
	tx->checkpoint = NULL;
	tx->rng = ((uint64_t)(uintptr_t)tx * LTX_HASH_MUL) ^ ltx_cycles();
	if (tx->rng == 0)
		tx->rng = 1;
	pthread_setspecific(exit_key, tx);
	ltx_self = tx;
	/* Seq_cst, then a full fence, before this thread's first begin: the
	 * exclusive taker's side of the Dekker pair (tx/serial.h). */
	__atomic_fetch_add(&ltx_tx_live_threads, 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	ltx_stats_arm(tx);
	return tx;
}

unsigned ltx_tx_other_threads_now(void)
{
	unsigned n = __atomic_load_n(&ltx_tx_live_threads, __ATOMIC_SEQ_CST);
	unsigned mine = ltx_self != &ltx_boot_tx;

	return n > mine ? n - mine : 0;
}

unsigned ltx_tx_other_threads(void)
{
	unsigned n = __atomic_load_n(&ltx_tx_live_threads, __ATOMIC_RELAXED);
	unsigned mine = ltx_self != &ltx_boot_tx; /* a twin: its parent */

	return n > mine ? n - mine : 0;
}

void ltx_tx_foreach(void (*fn)(struct ltx_tx *tx, void *arg), void *arg)
{
	pthread_mutex_lock(&registry_lock);
	for (struct ltx_tx *tx = registry; tx != NULL; tx = tx->next_all)
		fn(tx, arg);
	pthread_mutex_unlock(&registry_lock);
}

/*
 * The commit point of an update: a signal handler may have doomed the
 * transaction at any instruction up to here, and so may an irrevocable
 * transaction on another thread (each only flips status from ACTIVE to
 * DOOMED): honour it now.  A CAS, so that a doom from another thread and
 * this commit cannot both win (doom_remote).  From LTX_COMMITTING on it is
 * too late, the transaction commits, and a signal handler leaves it alone
 * (the fault sandbox too: a fault while writing back is a real bug);
 * another thread's irrevocable transaction waits for it.  Seq_cst: the
 * other side of doom_remote's.  (A load and a store would also let a
 * signal land between them: its doom releases the lines, and the
 * write-back would then publish into lines that others had taken.)
 */
static bool commit_point(struct ltx_tx *tx)
{
	int expect = LTX_ACTIVE;

	return ltx_likely(__atomic_compare_exchange_n(
		&tx->status, &expect, LTX_COMMITTING, false, __ATOMIC_SEQ_CST,
		__ATOMIC_RELAXED));
}

/*
 * Whether an exclusive transaction (tx/serial.h) keeps tx from beginning:
 * the token is held exclusive by another thread.  A handler descriptor
 * whose thread was interrupted while committing goes on: the holder is
 * still draining (it waits for that commit, so for this handler) and
 * starts only after this transaction has ended.
 */
static bool serial_blocks(const struct ltx_tx *tx)
{
	/* Acquire: as ltx_serial_may_block's (tx/serial.h). */
	uintptr_t t = __atomic_load_n(&ltx_serial_token, __ATOMIC_ACQUIRE);

	if (!(t & LTX_SERIAL_EXCL) || (t & ~LTX_SERIAL_EXCL) == (uintptr_t)tx)
		return false;
	return tx->parent == NULL || load_status(tx->parent) != LTX_COMMITTING;
}

/*
 * A transaction that announced itself found an exclusive one running:
 * take the announcement back (status idle; the count as it was, so that
 * no transaction is counted that never ran), and let the caller wait.
 * Release: as at every end, pairs with the drain's and tm_free's loads.
 */
static void step_back(struct ltx_tx *tx)
{
	tx->cd.limit = 0;
	store_status(tx, idle_status());
	__atomic_store_n(&tx->tx_id, tx->tx_id - 1, __ATOMIC_RELEASE);
}

/* Wait, idle, while an exclusive transaction keeps tx from beginning. */
static void wait_serial(struct ltx_tx *tx)
{
	unsigned spins = 0;

	while (serial_blocks(tx))
		ltx_wait_step(&spins);
}

/*
 * Begin: the mode's begin arms limit first, then status turns ACTIVE, so a
 * signal handler that dooms the transaction (it checks status == ACTIVE,
 * then clears limit) cannot have its doom overwritten.  Then the token
 * load of the Dekker pair in tx/serial.h.  A transaction due for the
 * serial fallback takes the token before it begins, while it can still
 * wait for it (it holds nothing yet).
 */
static void begin(struct ltx_tx *tx)
{
	bool serial = ltx_unlikely(serial_due(tx)) && !tx->cd.irrevocable;

	if (serial)
		ltx_serial_acquire(tx);
	for (;;) {
		tx->mode = ltx_config.mode;
		tx->cause = 0;
		/* Release: as in ltx_tx_fast_begin (tx/fast.h). */
		__atomic_store_n(&tx->tx_id, tx->tx_id + 1, __ATOMIC_RELEASE);
		tx->cd.capacity = ltx_config.capacity;
		ops(tx)->begin(&tx->cd);
		/* Not armed (the visible mode, a capacity limit): the fast
		 * commits must leave it to the full one (desc.h). */
		if (tx->cd.limit == 0)
			tx->slow |= LTX_SLOW_UNARMED;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		store_status(tx, LTX_ACTIVE);
		/* The light side of tm_free's and the serial token's
		 * asymmetric fence (rt/fence.h). */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (ltx_likely(!serial_blocks(tx)))
			break;
		step_back(tx);
		wait_serial(tx);
	}
	if (ltx_unlikely(tx->cd.irrevocable)) {
		/* Holds nothing yet: make_irrevocable cannot fail. */
		(void)ops(tx)->make_irrevocable(&tx->cd);
		tx->slow |= LTX_SLOW_SERIAL;
		ltx_stats_write_begin(tx);
		tx->stats.irrevocable++;
		if (serial)
			tx->stats.serial++;
		ltx_stats_write_end(tx);
	}
}

void ltx_tx_begin(struct ltx_tx *tx)
{
	if (ltx_status_idle(load_status(tx)))
		begin(tx);
}

/* begin() out of line, so that ltx_tx_begin_alone's common case saves
 * no register. */
static __attribute__((noinline)) void begin_general(struct ltx_tx *tx)
{
	begin(tx);
}

bool ltx_tx_begin_alone(struct ltx_tx *tx)
{
	int st = load_status(tx);

	/* The count read first as a hint, so that threads that are not
	 * alone never write the token's line for nothing. */
	if (ltx_unlikely(!ltx_status_idle(st)) ||
	    ltx_unlikely(tx->slow & LTX_SLOW_STATIC) || !ltx_tx_alone_hint() ||
	    ltx_unlikely(!ltx_serial_try_exclusive(tx)))
		return false;
	if (ltx_unlikely(!ltx_tx_alone_with_token())) {
		/* Nothing was done under it: give it back. */
		ltx_serial_release(tx);
		return false;
	}
	/* Other settings: the general begin, as ltx_tx_begin_exclusive's
	 * after its drain. */
	if (ltx_likely(ltx_tx_idle_held(st)))
		ltx_tx_fast_begin_held(tx);
	else
		begin_general(tx);
	return true;
}

void ltx_tx_begin_exclusive(struct ltx_tx *tx)
{
	assert(ltx_status_idle(load_status(tx)));
	ltx_serial_acquire_exclusive(tx);
	if (ltx_tx_idle_held(load_status(tx)) && ltx_tx_alone_with_token()) {
		ltx_tx_fast_begin_held(tx);
		return;
	}
	ltx_serial_drain(tx);
	begin(tx);
}

bool ltx_tx_become_exclusive(struct ltx_tx *tx)
{
	uintptr_t ts = 0;
	unsigned cause;

	if (load_status(tx) != LTX_ACTIVE || tx->parent != NULL)
		return false;
	if (ltx_serial_exclusive(tx))
		return true;
	if (!ltx_serial_try_exclusive(tx))
		return false;
	/* Every other transaction ends (none waits for our lines: only an
	 * irrevocable one would, and we hold the token). */
	ltx_serial_drain(tx);
	/* Publish what the transaction did so far; from here on nobody
	 * runs beside it, so it goes on alone as one transaction. */
	cause = ops(tx)->prepare(&tx->cd, &ts);
	if (cause == 0 && !commit_point(tx))
		cause = doomed_cause(tx);
	if (cause != 0) {
		ltx_serial_release(tx);
		ltx_tx_doom(tx, cause);
		return false;
	}
	ops(tx)->publish(&tx->cd, ts);
	store_status(tx, LTX_ACTIVE);
	(void)ops(tx)->make_irrevocable(&tx->cd); /* holds nothing now */
	tx->slow |= LTX_SLOW_SERIAL;
	ltx_stats_write_begin(tx);
	tx->stats.irrevocable++;
	ltx_stats_write_end(tx);
	return true;
}

/* Room for one more action (a handler's descriptor never allocates). */
static bool action_room(struct ltx_tx *tx)
{
	return tx->nactions < tx->actions_cap ||
	       (!tx->cd.no_alloc &&
		LTX_ARRAY_RESERVE(&tx->actions, &tx->actions_cap, tx->nactions,
				  tx->nactions + 1, 16));
}

bool ltx_tx_add_action(struct ltx_tx *tx, void (*fn)(void *), void *arg,
		       bool on_commit)
{
	if (!action_room(tx)) {
		ltx_tx_doom(tx, TM_ABORT_NOMEM | TM_ABORT_CAPACITY);
		return false;
	}
	tx->actions[tx->nactions++] =
		(struct ltx_action){ fn, arg, on_commit ? 1 : 0 };
	tx->slow |= LTX_SLOW_ACTIONS;
	return true;
}

static struct ltx_tx *live(struct ltx_tx *tx);

int ltx_tx_on_end(struct ltx_tx *tx, void (*fn)(void *), void *arg,
		  bool on_commit)
{
	if (fn == NULL)
		return EINVAL;
	if (tx == &ltx_boot_tx)
		tx = ltx_tx_self();
	if (tx == NULL || tx == &ltx_refuse_tx)
		return ENOMEM; /* no descriptor */
	/* A registration is an operation of the transaction: on an idle
	 * descriptor it begins one (live).  In a doomed one it restarts
	 * nothing, so that no handler is lost for a side effect the caller
	 * made before registering it: the abort handler is recorded (the
	 * transaction can only abort), the commit handler is not (it could
	 * never run). */
	if (ltx_status_idle(load_status(tx)) && live(tx) == NULL &&
	    load_status(tx) != LTX_DOOMED)
		return ENOMEM;
	if (load_status(tx) == LTX_DOOMED && on_commit)
		return 0;
	/* Room first, so that no memory leaves the transaction as it was
	 * (ltx_tx_add_action would doom it): the caller decides; a
	 * TM_ATOMIC block doomed for it would only fail again. */
	if (!action_room(tx))
		return ENOMEM;
	(void)ltx_tx_add_action(tx, fn, arg, on_commit); /* has room */
	return 0;
}

/*
 * Run the actions for how the transaction ended, and forget them all.  The
 * transaction is over, and an action may run a transaction of its own:
 * no restart point applies to what it does (the checkpoint is out of
 * reach meanwhile), and the list is out of reach too (a transaction run
 * by an action that registers actions gets a list of its own).
 */
static void run_actions(struct ltx_tx *tx, bool committed)
{
	struct ltx_checkpoint *cp = tx->checkpoint;
	struct ltx_action *a = tx->actions;
	size_t n = tx->nactions, cap = tx->actions_cap;

	tx->nactions = 0;
	tx->slow &= ~LTX_SLOW_ACTIONS;
	tx->checkpoint = NULL;
	tx->actions = NULL;
	tx->actions_cap = 0;
	if (committed) {
		for (size_t i = 0; i < n; i++)
			if (a[i].on_commit)
				a[i].fn(a[i].arg);
	} else {
		for (size_t i = n; i-- > 0;)
			if (!a[i].on_commit)
				a[i].fn(a[i].arg);
	}
	tx->checkpoint = cp;
	if (tx->nactions != 0) {
		/* An action left a transaction of its own open, with actions
		 * of its own (tm_on_commit in a commit handler): that list is
		 * the one that stays; this one is done. */
		free(a);
		return;
	}
	free(tx->actions); /* a nested transaction's, if any: all run */
	tx->actions = a;
	tx->actions_cap = cap;
}

size_t ltx_tx_actions_mark(const struct ltx_tx *tx)
{
	return tx->nactions;
}

void ltx_tx_actions_unwind(struct ltx_tx *tx, size_t mark)
{
	size_t n = tx->nactions;

	tx->nactions = mark;
	if (mark == 0)
		tx->slow &= ~LTX_SLOW_ACTIONS;
	for (size_t i = n; i-- > mark;)
		if (!tx->actions[i].on_commit)
			tx->actions[i].fn(tx->actions[i].arg);
}

void ltx_tx_actions_keep(struct ltx_tx *tx, size_t mark)
{
	size_t kept = mark;

	for (size_t i = mark; i < tx->nactions; i++)
		if (tx->actions[i].on_commit)
			tx->actions[kept++] = tx->actions[i];
	tx->nactions = kept;
	if (kept == 0)
		tx->slow &= ~LTX_SLOW_ACTIONS;
}

/*
 * An irrevocable transaction must not fail: it has run for real, I/O
 * included, and TM_ATOMIC would run it (and the I/O) again.  The one way
 * an operation of it can fail is memory running out for its logs (each
 * line it takes needs a write-set entry, and its stores are buffered so
 * that tm_abort can still drop them).  It can then neither go on nor be
 * undone: say so and stop the process.
 */
static __attribute__((noreturn, cold)) void irrevocable_out_of_memory(void)
{
	static const char msg[] =
		"ltx: out of memory in an irrevocable transaction, which can "
		"neither go on nor be undone: aborting\n";

	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	abort();
}

void ltx_tx_doom(struct ltx_tx *tx, unsigned cause)
{
	assert(cause != 0 && tx != &ltx_boot_tx && tx != &ltx_refuse_tx);
	if (ltx_unlikely(tx->cd.irrevocable) && (cause & TM_ABORT_NOMEM))
		irrevocable_out_of_memory();
	tx->cd.limit = 0;
	tx->cause |= cause;
	store_status(tx, LTX_DOOMED);
	/* Let go of the lines now: nobody waits on a doomed transaction. */
	ops(tx)->release(&tx->cd);
}

/* The transaction is over: give the serial token back if it holds it. */
static void end_serial(struct ltx_tx *tx)
{
	if (ltx_unlikely(tx->slow & LTX_SLOW_SERIAL)) {
		tx->slow &= ~LTX_SLOW_SERIAL;
		ltx_serial_release(tx);
	}
}

/* The transaction is over: settle what it allocated and freed. */
static void end_mem(struct ltx_tx *tx, bool committed)
{
	if (ltx_unlikely(tx->slow & LTX_SLOW_MEM)) {
		tx->slow &= ~LTX_SLOW_MEM;
		ltx_mem_end(tx, committed);
	}
}

/* End a doomed or aborted transaction; back off if it failed by itself. */
static void finish_abort(struct ltx_tx *tx, unsigned cause, bool backoff)
{
	ops(tx)->release(&tx->cd);
	tx->cd.limit = 0;
	tx->last_status = cause;
	/* And consec_aborts, below; the transaction is over (desc.h). */
	tx->slow = (tx->slow | LTX_SLOW_ABORTED) & ~LTX_SLOW_UNARMED;
	tx->cause = 0;
	/* Counted before the status turns idle (see ltx_stats_read). */
	ltx_stats_write_begin(tx);
	tx->stats.aborts++;
	for (unsigned b = 0; b < LTX_STATS_CAUSES; b++)
		if (cause & (1u << b))
			tx->stats.abort_cause[b]++;
	if (ltx_unlikely(tx->stats_on))
		ltx_stats_abort(tx, cause);
	ltx_stats_write_end(tx);
	end_aborted(tx, idle_status());
	end_serial(tx);
	end_mem(tx, false);
	if (ltx_unlikely(tx->nactions != 0))
		run_actions(tx, false);
	if (backoff) {
		uint64_t spent;
		unsigned shift;

		tx->consec_aborts++;
		/* Route the next begin through begin(), which goes serial. */
		if (ltx_unlikely(serial_due(tx)))
			store_status(tx, LTX_IDLE_SLOW);
		/* The auto policy's measure: the global clock, one tick per
		 * update transaction that reaches its commit (the visible
		 * mode has none). */
		spent = ltx_backoff_delay(
			&ltx_config.backoff, tx->consec_aborts, &tx->rng,
			tx->mode == LTX_MODE_INVISIBLE ? &ltx_clock.now : NULL,
			&shift);
		ltx_stats_write_begin(tx);
		tx->stats.backoff_cycles += spent;
		if (shift != 0)
			tx->stats.backoff_scaled++;
		ltx_stats_write_end(tx);
	}
}

/* Inside a restartable block: resume at its checkpoint (never returns). */
static void restart(struct ltx_tx *tx, unsigned cause)
{
	struct ltx_checkpoint *cp = tx->checkpoint;

	ltx_checkpoint_ops(cp)->restart(cp, cause);
	abort(); /* a checkpoint's restart must not return */
}

void ltx_tx_rollback(struct ltx_tx *tx)
{
	int st = load_status(tx);

	if (!ltx_status_idle(st))
		finish_abort(tx,
			     st == LTX_DOOMED ? doomed_cause(tx) : tx->cause,
			     true);
}

/* Make tx live: create it, begin, or report it doomed (NULL). */
static struct ltx_tx *live(struct ltx_tx *tx)
{
	if (tx == &ltx_boot_tx) {
		tx = ltx_tx_self();
		if (tx == NULL)
			return NULL;
	}
	if (ltx_unlikely(tx == &ltx_refuse_tx))
		return NULL;
	switch (load_status(tx)) {
	case LTX_IDLE:
	case LTX_IDLE_SLOW:
	case LTX_IDLE_VISIBLE:
		begin(tx);
		/* A serial begin may have found the snapshot stale. */
		if (ltx_unlikely(load_status(tx) != LTX_ACTIVE))
			return live(tx);
		return tx;
	case LTX_ACTIVE:
		return tx;
	default:
		/* Doomed, perhaps by a signal handler that could not let go of
		 * the lines itself: release them now (idempotent). */
		ops(tx)->release(&tx->cd);
		if (tx->checkpoint != NULL) {
			finish_abort(tx, doomed_cause(tx), true);
			restart(tx, tx->last_status | TM_ABORT_RETRY);
		}
		return NULL;
	}
}

uint64_t ltx_tx_load_at(struct ltx_tx *tx, const void *addr, bool excl,
			uintptr_t pc)
{
	unsigned cause = 0;
	uint64_t x;

	tx = live(tx);
	if (tx == NULL)
		return 0;
	/* Live, or doomed since by a signal handler. */
	assert(load_status(tx) == LTX_ACTIVE || load_status(tx) == LTX_DOOMED);
	x = ops(tx)->load(&tx->cd, addr, excl, &cause);
	if (ltx_unlikely(cause != 0)) {
		if (ltx_unlikely(tx->stats_on))
			ltx_stats_doom(tx,
				       excl ? LTX_SITE_WRITE : LTX_SITE_READ,
				       pc, addr, cause);
		ltx_tx_doom(tx, cause);
		return 0;
	}
	/*
	 * Doomed meanwhile, perhaps by an irrevocable transaction that has
	 * taken the line and written it: the value is not to be trusted.
	 * The load of x is an acquire of that transaction's write-back, which
	 * it makes after its seq_cst doom: had x come from it, this load would
	 * see the doom.  From here on the fast paths, the read-only commit's
	 * included, must not go on as if nothing happened: disarm them, as
	 * every doom does (the mode's load may have re-armed them).
	 */
	if (ltx_unlikely(__atomic_load_n(&tx->status, __ATOMIC_ACQUIRE) !=
			 LTX_ACTIVE)) {
		__atomic_store_n(&tx->cd.limit, 0, __ATOMIC_RELAXED);
		return 0;
	}
	return x;
}

uint64_t ltx_tx_load_shared(const void *addr, struct ltx_tx *tx, uintptr_t v)
{
	struct ltx_cd *cd = &tx->cd;
	uint64_t x;

	/* limit != 0: a live, uncounted transaction (ltx_inv_load_owned).
	 * v was read by this thread in this load: if it is our lock word,
	 * load_owned checks it again after reading memory. */
	if (cd->limit != 0 && ltx_inv_load_owned(cd, v, addr, &x))
		return x;
	return ltx_tx_load_at(tx, addr, false,
			      (uintptr_t)__builtin_return_address(0));
}

uint64_t ltx_tx_load(struct ltx_tx *tx, const void *addr, bool excl)
{
	return ltx_tx_load_at(tx, addr, excl,
			      (uintptr_t)__builtin_return_address(0));
}

__attribute__((noinline)) void ltx_tx_store_at(struct ltx_tx *tx, void *addr,
					       uint64_t val, unsigned size,
					       uintptr_t pc)
{
	unsigned cause;

	tx = live(tx);
	if (tx == NULL)
		return;
	assert(load_status(tx) == LTX_ACTIVE || load_status(tx) == LTX_DOOMED);
	cause = ops(tx)->store(&tx->cd, addr, val, size);
	if (ltx_unlikely(cause != 0)) {
		if (ltx_unlikely(tx->stats_on))
			ltx_stats_doom(tx, LTX_SITE_WRITE, pc, addr, cause);
		ltx_tx_doom(tx, cause);
	}
}

void ltx_tx_store(struct ltx_tx *tx, void *addr, uint64_t val, unsigned size)
{
	/* ST to a line already held (LTX then ST): no need for the rest.
	 * Inlined per size, so that no register is saved on this path. */
	if (ltx_likely(tx->mode == LTX_MODE_INVISIBLE)) {
		switch (size) {
		case 8:
			if (ltx_inv_fast_store_owned(&tx->cd, addr, val, 8))
				return;
			break;
		case 4:
			if (ltx_inv_fast_store_owned(&tx->cd, addr, val, 4))
				return;
			break;
		case 2:
			if (ltx_inv_fast_store_owned(&tx->cd, addr, val, 2))
				return;
			break;
		default:
			if (ltx_inv_fast_store_owned(&tx->cd, addr, val, 1))
				return;
			break;
		}
	}
	ltx_tx_store_at(tx, addr, val, size,
			(uintptr_t)__builtin_return_address(0));
}

/*
 * The end of a VALIDATE or COMMIT that found the transaction doomed:
 * abort it (with backoff), then restart it at its checkpoint if it has
 * one (TM_ATOMIC, a GCC transaction); else report false.
 */
static __attribute__((noinline, cold)) bool failed(struct ltx_tx *tx)
{
	finish_abort(tx, doomed_cause(tx), true);
	if (tx->checkpoint != NULL)
		restart(tx, tx->last_status | TM_ABORT_RETRY);
	return false;
}

bool ltx_tx_validate(struct ltx_tx *tx)
{
	unsigned cause;

	if (ltx_unlikely(tx == &ltx_refuse_tx))
		return false;
	switch (load_status(tx)) {
	case LTX_IDLE:
	case LTX_IDLE_SLOW:
	case LTX_IDLE_VISIBLE:
		return true;
	case LTX_ACTIVE:
		cause = ops(tx)->validate(&tx->cd);
		if (cause == 0)
			return true;
		if (ltx_unlikely(tx->stats_on))
			ltx_stats_doom(tx, LTX_SITE_VALIDATE, 0, NULL, cause);
		ltx_tx_doom(tx, cause);
		break;
	default:
		break;
	}
	return failed(tx);
}

/*
 * With statistics on, a read-only commit of the fast paths, counted with
 * its histograms in one write section.  Returns false (nothing done) for
 * any other transaction.
 */
static bool commit_counted_read_only(struct ltx_tx *tx)
{
	uint64_t nr = (uint64_t)(tx->cd.rs_next - tx->cd.rs_base);

	if (tx->slow != LTX_SLOW_STATS || !ltx_inv_end_read_only(&tx->cd))
		return false;
	ltx_stats_write_begin(tx);
	tx->stats.commits_ro++;
	tx->stats.retries_hist[ltx_stats_bucket(tx->consec_aborts)]++;
	tx->stats.reads_hist[ltx_stats_bucket(nr)]++;
	tx->stats.writes_hist[0]++;
	ltx_stats_write_end(tx);
	tx->end_state = 0;
	store_status(tx, LTX_IDLE); /* it had limit != 0: the invisible mode */
	return true;
}

/*
 * The end of a commit with slow bits: count it with its histograms
 * (statistics), give the serial token back, run the commit actions.
 */
static __attribute__((noinline)) void
committed_slow(struct ltx_tx *tx, bool wrote, uint64_t nr, uint64_t nw)
{
	/* An exclusive one wrote memory directly: an update. */
	if (ltx_serial_exclusive(tx) && nw == 0) {
		nw = 1;
		wrote = true;
	}
	if (tx->slow & LTX_SLOW_STATS)
		ltx_stats_commit(tx, nr, nw);
	else if (wrote)
		tx->stats.commits_rw++;
	tx->end_state = 0;
	tx->slow &= ~(LTX_SLOW_ABORTED | LTX_SLOW_UNARMED);
	store_status(tx, idle_status());
	end_serial(tx);
	/* After the token is given back (ltx_tx_committed). */
	(void)ltx_tx_committed(tx);
	end_mem(tx, true);
	if (tx->slow & LTX_SLOW_ACTIONS)
		run_actions(tx, true);
}

/*
 * COMMIT of a live transaction: publish it, or doom it (false).  plain:
 * the caller knows tx has no slow bit, and this copy of it leaves out
 * what only slow bits need.
 */
static inline __attribute__((always_inline)) bool commit_live(struct ltx_tx *tx,
							      bool plain)
{
	bool inv = tx->mode == LTX_MODE_INVISIBLE;
	bool wrote = tx->cd.ws_next != tx->cd.ws_base;
	uint64_t nr = 0, nw = 0;
	uintptr_t ts = 0;
	unsigned cause;

	if (!plain && ltx_unlikely(tx->slow & LTX_SLOW_STATS)) {
		nr = (uint64_t)(tx->cd.rs_next - tx->cd.rs_base);
		nw = (uint64_t)(tx->cd.ws_next - tx->cd.ws_base);
	}
	/* The default mode's halves inlined: no indirect calls. */
	cause = inv ? ltx_inv_prepare(&tx->cd, &ts)
		    : ops(tx)->prepare(&tx->cd, &ts);
	if (cause == 0 && wrote && !commit_point(tx))
		cause = doomed_cause(tx);
	if (ltx_unlikely(cause != 0)) {
		if (ltx_unlikely(tx->stats_on))
			ltx_stats_doom(tx, LTX_SITE_COMMIT, 0, NULL, cause);
		ltx_tx_doom(tx, cause);
		return false;
	}
	if (ltx_likely(inv))
		ltx_inv_publish(&tx->cd, ts); /* disarms the fast paths */
	else
		ops(tx)->publish(&tx->cd, ts);
	if (!plain) {
		committed_slow(tx, wrote, nr, nw);
		return true;
	}
	if (wrote)
		tx->stats.commits_rw++;
	/* No slow bit: end_state is 0 already (LTX_SLOW_ABORTED). */
	store_status(tx, idle_status());
	return !wrote || ltx_tx_committed(tx);
}

bool ltx_tx_commit(struct ltx_tx *tx)
{
	if (ltx_unlikely(tx == &ltx_refuse_tx))
		return false;
	switch (load_status(tx)) {
	case LTX_IDLE:
	case LTX_IDLE_SLOW:
	case LTX_IDLE_VISIBLE:
		return true;
	case LTX_ACTIVE:
		/* Each way a copy of its own: no slow bit, the common case,
		 * or the bits' work (statistics' own read-only commit). */
		if (ltx_likely(tx->slow == 0)) {
			if (commit_live(tx, true))
				return true;
		} else if ((tx->slow == LTX_SLOW_STATS &&
			    commit_counted_read_only(tx)) ||
			   commit_live(tx, false)) {
			return true;
		}
		break;
	default:
		break;
	}
	return failed(tx);
}

/*
 * The fast commit's exit for more than two write-set entries (tx/fast.h):
 * the transaction is of the fast paths (limit != 0: invisible, uncounted,
 * not irrevocable) with no slow bit, so ltx_tx_commit's status switch and
 * slow-bit tests would only find that again.  Its status may no longer be
 * ACTIVE (an irrevocable transaction dooms without touching limit): the
 * commit point's CAS in commit_live finds that, and the transaction ends
 * as ltx_tx_commit ends a doomed one.
 */
bool ltx_tx_commit_many(struct ltx_tx *tx)
{
	if (ltx_likely(commit_live(tx, true)))
		return true;
	return failed(tx);
}

bool ltx_tx_commit_exclusive(struct ltx_tx *tx)
{
	struct ltx_cd *cd = &tx->cd;

	/*
	 * Nothing logged (it read and wrote memory directly), no slow bit
	 * but the token's, still live, not on the invisible mode's counted
	 * path: committed_slow's work alone, as an update (it wrote memory
	 * directly).  A holder of the token exclusive is never doomed (no
	 * other transaction runs, and a signal leaves an irrevocable one
	 * alone: tx/signal.c), and neither mode has anything to prepare or
	 * publish for empty logs: the invisible one only resets what is
	 * reset below (ltx_inv_prepare, ltx_inv_publish); the visible one
	 * checks nothing (vis_prepare) and holds no line, for every line it
	 * takes is in a log, so its directory (cd/lines.h) is empty too and
	 * publish would release nothing and reset nothing.
	 */
	if (ltx_unlikely(tx->slow != LTX_SLOW_SERIAL) ||
	    ltx_unlikely(load_status(tx) != LTX_ACTIVE) ||
	    cd->ws_next != cd->ws_base || cd->rs_next != cd->rs_base ||
	    ltx_unlikely(cd->counted) ||
	    ltx_unlikely(!ltx_serial_exclusive(tx)))
		return ltx_tx_commit(tx);
	assert(cd->lines_used == 0 && cd->slots == 0);
	cd->limit = 0;
	tx->stats.commits_rw++;
	tx->end_state = 0;
	/* Release, then the token's release: as committed_slow and
	 * end_serial, so a transaction that begins once the token is free
	 * sees this one over. */
	store_status(tx, idle_status());
	tx->slow = 0;
	ltx_serial_release(tx);
	return true;
}

void ltx_tx_abort(struct ltx_tx *tx)
{
	int st;

	/* ltx_refuse_tx, or ltx_boot_tx (no transaction, no block). */
	if (ltx_unlikely(tx->slow & LTX_SLOW_STATIC))
		return;
	st = load_status(tx);
	if (ltx_unlikely(tx->stats_on) && st == LTX_ACTIVE)
		ltx_stats_doom(tx, LTX_SITE_OTHER, 0, NULL, TM_ABORT_EXPLICIT);
	if (!ltx_status_idle(st))
		finish_abort(tx,
			     (st == LTX_DOOMED ? doomed_cause(tx) : 0) |
				     TM_ABORT_EXPLICIT,
			     false);
	else if (tx->checkpoint != NULL) {
		tx->last_status = TM_ABORT_EXPLICIT;
		tx->slow |= LTX_SLOW_ABORTED;
	}
	/* In a restartable block, tm_abort() leaves the block. */
	if (tx->checkpoint != NULL)
		restart(tx, TM_ABORT_EXPLICIT);
}

/* After a fast commit: the work of its slow bits (LTX_SLOW_AFTER). */
static __attribute__((noinline)) bool committed_after(struct ltx_tx *tx)
{
	uint32_t slow = tx->slow;

	/* end_mem's steps, its bit cleared with LTX_SLOW_ABORTED's (the
	 * commit cleared end_state) in one store. */
	tx->slow = slow & ~(LTX_SLOW_MEM | LTX_SLOW_ABORTED);
	if (ltx_unlikely(slow & LTX_SLOW_MEM))
		ltx_mem_end(tx, true);
	if (tx->slow & LTX_SLOW_ACTIONS)
		run_actions(tx, true);
	return true;
}

bool ltx_tx_commit_small(struct ltx_tx *tx)
{
	if (!ltx_tx_fast_commit_small(tx, 0))
		return false;
	if (ltx_unlikely(tx->slow != 0))
		return committed_after(tx);
	return true;
}

__attribute__((noinline)) bool ltx_tx_fast_commit_revalidate(struct ltx_tx *tx,
							     uintptr_t ts)
{
	if (!ltx_inv_reads_valid(&tx->cd))
		return false; /* the full commit dooms it */
	return ltx_tx_fast_commit_small(tx, ts);
}

bool ltx_tx_commit_small_checked(struct ltx_tx *tx)
{
	return (tx->slow & ~LTX_SLOW_AFTER) == 0 && tx->cd.limit != 0 &&
	       tx->cd.ws_next - tx->cd.ws_base <= 2 && ltx_tx_commit_small(tx);
}

bool ltx_tx_commit_lone_whole(struct ltx_tx *tx)
{
	return ltx_tx_commit_small(tx) || ltx_tx_commit(tx);
}

bool ltx_tx_commit_small_whole(struct ltx_tx *tx)
{
	return ltx_tx_commit_small_checked(tx) || ltx_tx_commit(tx);
}

bool ltx_tx_commit_revalidate_whole(struct ltx_tx *tx, uintptr_t ts)
{
	return ltx_tx_fast_commit_revalidate(tx, ts) || ltx_tx_commit(tx);
}

void ltx_tx_leave_block(struct ltx_tx *tx)
{
	struct ltx_checkpoint *cp = tx->checkpoint;
	int st = load_status(tx);

	/* No restart from here on: the block is gone. */
	tx->checkpoint = NULL;
	if (st == LTX_ACTIVE && tx->cd.irrevocable)
		(void)ltx_tx_commit(tx); /* done in place: cannot be undone */
	else if (!ltx_status_idle(st))
		finish_abort(tx,
			     (st == LTX_DOOMED ? doomed_cause(tx) : 0) |
				     TM_ABORT_EXPLICIT,
			     false);
	if (cp != NULL && ltx_checkpoint_ops(cp)->left != NULL)
		ltx_checkpoint_ops(cp)->left(cp);
}

void ltx_tx_retry(struct ltx_tx *tx)
{
	tx = live(tx);
	if (tx == NULL)
		return; /* was doomed: ended (and restarted if in a block) */
	ltx_tx_doom(tx, TM_ABORT_EXPLICIT | TM_ABORT_RETRY);
	finish_abort(tx, tx->cause, true);
	if (tx->checkpoint != NULL)
		restart(tx, tx->last_status | TM_ABORT_RETRY);
}

bool ltx_tx_irrevocable(struct ltx_tx *tx)
{
	unsigned spins = 0, cause;
	bool holds;

	if (ltx_unlikely(tx == &ltx_refuse_tx))
		return false;
	if (load_status(tx) != LTX_ACTIVE)
		return false;
	if (tx->cd.irrevocable)
		return true;
	if (tx->parent != NULL) {
		/* A handler cannot wait for the transaction it interrupted. */
		ltx_tx_doom(tx, TM_ABORT_SIGNAL);
		return false;
	}
	/*
	 * Holding lines, waiting for the token could deadlock with its
	 * holder waiting for them: give up instead.  (Lines read hold
	 * nothing in the invisible mode; in the visible one they are held.)
	 * Live, waiting for an exclusive holder would deadlock too: it
	 * waits for us to end.  Give up and begin again: begin waits idle.
	 */
	holds = tx->cd.ws_next != tx->cd.ws_base ||
		(tx->mode == LTX_MODE_VISIBLE &&
		 tx->cd.rs_next != tx->cd.rs_base);
	while (!ltx_serial_try(tx)) {
		if (holds ||
		    (__atomic_load_n(&ltx_serial_token, __ATOMIC_RELAXED) &
		     LTX_SERIAL_EXCL)) {
			ltx_tx_doom(tx, TM_ABORT_CONFLICT | TM_ABORT_RETRY);
			return false;
		}
		ltx_wait_step(&spins);
	}
	/*
	 * Doomed before the token was ours, by an irrevocable transaction
	 * that took a line of ours (doom_remote)?  None can since: the token
	 * is ours, and its acquire pairs with the previous holder's release,
	 * made after its dooms.
	 */
	cause = load_status(tx) != LTX_ACTIVE
			? doomed_cause(tx)
			: ops(tx)->make_irrevocable(&tx->cd);
	if (cause != 0) {
		ltx_serial_release(tx); /* it never was irrevocable */
		ltx_tx_doom(tx, cause);
		return false;
	}
	tx->slow |= LTX_SLOW_SERIAL; /* released however it ends */
	ltx_stats_write_begin(tx);
	tx->stats.irrevocable++;
	ltx_stats_write_end(tx);
	return true;
}

unsigned ltx_tx_line_state(struct ltx_tx *tx, const void *addr)
{
	if (load_status(tx) != LTX_ACTIVE)
		return LTX_LINE_STATE(TM_EMPTY, 'I');
	return ops(tx)->line_state(&tx->cd, addr);
}

unsigned ltx_tx_status(const struct ltx_tx *tx)
{
	if (ltx_unlikely(tx == &ltx_refuse_tx))
		return REFUSE_CAUSE;
	if (load_status(tx) == LTX_DOOMED)
		return doomed_cause(tx);
	return tx->last_status;
}
