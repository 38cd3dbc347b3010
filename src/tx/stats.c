/* SPDX-License-Identifier: MIT */
/* Statistics: per-thread counters, abort sites, totals, tm_stats_get. */
#define _GNU_SOURCE /* dl_iterate_phdr */
#pragma GCC visibility push(default)
#include <ltx/tm.h>
#pragma GCC visibility pop

#include <errno.h>
#include <stddef.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "rt/config.h"
#include "rt/statseg.h"
#include "rt/wait.h"
#include "tx/stats.h"
#include "tx/tx.h"

/*
 * What it costs.  Statistics off: the counters that always existed
 * (commits_rw, aborts, causes, backoff) and nothing else; read-only commits
 * are derived (rt/stats.h).  Statistics on: each descriptor has the slow
 * bit LTX_SLOW_STATS set (ltx_stats_arm), which makes tm_commit's
 * fast-path test fail, so every commit reaches ltx_tx_commit, which counts
 * it with its histograms; aborts note their site.  No other hot path
 * changes, and nothing here is shared between threads but the seqlock
 * generation each owner bumps.
 */

/* Read-only commits of an idle descriptor that did not count them: begun
 * is the transactions begun since its counters were reset. */
static uint64_t derived_ro(uint64_t begun, const struct ltx_stats *s,
			   bool in_progress)
{
	uint64_t done = s->commits_rw + s->aborts + (in_progress ? 1 : 0);

	return begun > done ? begun - done : 0;
}

#define MERGE_MAX 256

/*
 * The threads' sites and lines merged: one merge at a time (the refresh
 * thread, the exit handler), in static buffers under merge_lock, so the
 * refresh thread allocates nothing every 100 ms.  A fork child
 * reinitializes the lock (at_fork_child), which a thread of its parent may
 * have held.
 */
static pthread_mutex_t merge_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ltx_stats_site merge_buf[MERGE_MAX];
static struct ltx_stats_line merge_lines[MERGE_MAX];

/*
 * A child of fork: set when statistics were on, so that the child's first
 * use of ltx creates its own segment (its parent's is left alone).
 */
static bool child_pending;

static void child_first_use(void)
{
	if (ltx_unlikely(__atomic_load_n(&child_pending, __ATOMIC_RELAXED)) &&
	    __atomic_exchange_n(&child_pending, false, __ATOMIC_RELAXED))
		ltx_statseg_start(ltx_stats_collect_all);
}

/* Make tx count what LTX_STATS asks for now. */
static void arm(struct ltx_tx *tx)
{
	int level = __atomic_load_n(&ltx_config.stats, __ATOMIC_RELAXED);

	if (level == tx->stats_on)
		return;
	if (level == LTX_STATS_OFF) {
		tx->slow &= ~LTX_SLOW_STATS;
		tx->stats_on = 0;
		return;
	}
	if (tx->sites == NULL) {
		tx->sites = calloc(LTX_STATS_SITES, sizeof(*tx->sites));
		if (tx->sites == NULL)
			return; /* no memory: this thread stays uncounted */
	}
	if (tx->lines == NULL) {
		tx->lines = calloc(1, sizeof(*tx->lines));
		if (tx->lines == NULL)
			return;
		tx->lines->doom.cls = LTX_CONFLICT_UNKNOWN;
	}
	/* Every commit takes the full path, which counts it. */
	tx->slow |= LTX_SLOW_STATS;
	/* From now on read-only commits are counted, not derived. */
	ltx_stats_write_begin(tx);
	tx->stats.commits_ro =
		derived_ro(tx->tx_id - tx->stats_id0, &tx->stats, false);
	ltx_stats_write_end(tx);
	tx->stats_on = level;
}

void ltx_stats_arm(struct ltx_tx *tx)
{
	child_first_use();
	/* One more thread that uses ltx: counted per take, so a descriptor
	 * handed from an exited thread to a new one counts both, and a
	 * handler twin (never taken) none. */
	ltx_stats_write_begin(tx);
	tx->stats.threads++;
	ltx_stats_write_end(tx);
	arm(tx);
}

/* Did this transaction read (LT) addr's line before?  Asks the mode
 * (tm_line_state): the invisible mode's read set knows orecs, the
 * visible mode's line directory knows lines. */
static bool read_before(struct ltx_tx *tx, const void *addr)
{
	return TM_LINE_MESI(ltx_tx_line_state(tx, addr)) == 'S';
}

static struct ltx_stats_site *find_site(struct ltx_tx *tx, uintptr_t pc,
					int kind)
{
	for (unsigned i = 0; i < LTX_STATS_SITES; i++) {
		struct ltx_stats_site *s = &tx->sites[i];

		if (s->count != 0 && s->pc == pc && s->kind == (uint32_t)kind)
			return s;
	}
	return NULL;
}

/*
 * libltx's own code: the executable segment of the shared object holding
 * this function.  Empty when libltx is linked into the program itself
 * (white-box tests): sites are then taken as given.
 */
static uintptr_t self_lo, self_hi;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t me = (uintptr_t)&ltx_stats_doom;

	(void)size;
	(void)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + p->p_vaddr;

		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X) || me < lo ||
		    me - lo >= p->p_memsz)
			continue;
		if (info->dlpi_name != NULL && info->dlpi_name[0] != '\0') {
			self_lo = lo;
			self_hi = lo + p->p_memsz;
		}
		return 1;
	}
	return 0;
}

static void find_self_once(void)
{
	dl_iterate_phdr(find_self, NULL);
}

static bool inside_ltx(uintptr_t pc)
{
	return pc - self_lo < self_hi - self_lo;
}

/*
 * Walk this thread's stack with libunwind's unw_backtrace (never from a
 * signal handler: dooms by signals are not noted): the first frame outside
 * libltx (or pc, if it is one) is the site, and with stacks on, the frames
 * after it are kept as its callers, innermost first.
 */
static uintptr_t unwind_site(struct ltx_tx *tx, uintptr_t pc, bool stack)
{
	void *buf[LTX_STATS_STACK + 16];
	int n = unw_backtrace(buf, (int)(sizeof(buf) / sizeof(buf[0])));
	int i;

	for (i = 0; i < n; i++) {
		uintptr_t f = (uintptr_t)buf[i];

		if (pc != 0 ? f == pc : !inside_ltx(f))
			break;
	}
	if (i == n)
		return pc;
	pc = (uintptr_t)buf[i];
	for (i++; stack && i < n && tx->doom_nstack < LTX_STATS_STACK; i++)
		tx->doom_stack[tx->doom_nstack++] = (uintptr_t)buf[i];
	return pc;
}

/* The cd whose id is id (a LTX_CD_HELD_OWNER note's holder), or NULL.
 * Descriptors are never freed, ids never reused, and an id is set before
 * the descriptor is published (tx.c, new_descriptor).  Not by slot: a
 * handler twin has none until it needs one, and the owner word names the
 * id (cd/visible.c, me). */
static const struct ltx_cd *cd_of_id(uintptr_t id)
{
	for (struct ltx_tx *t = ltx_tx_registry(); t != NULL; t = t->next_all)
		if (t->cd.id == id)
			return &t->cd;
	return NULL;
}

/*
 * Classify the conflict that dooms tx now (cd/conflict.h), while the
 * holder may still hold the line: a conflict found by an LT, LTX or ST
 * that the mode noted.  Anything else (a read found newer, a doom by
 * another transaction) is unknown.
 */
static void classify_doom(struct ltx_tx *tx, int kind, unsigned cause)
{
	struct ltx_cd_conflict *n = &tx->cd.conflict;
	struct ltx_conflict *k = &tx->lines->doom;

	if ((cause & TM_ABORT_CONFLICT) && !(cause & TM_ABORT_VALIDATE) &&
	    (kind == LTX_SITE_READ || kind == LTX_SITE_WRITE ||
	     kind == LTX_SITE_UPGRADE) &&
	    n->held != 0) {
		ltx_cd_conflict_classify(k, n,
					 n->held == LTX_CD_HELD_OWNER
						 ? cd_of_id(n->holder)
						 : NULL);
	} else {
		memset(k, 0, sizeof(*k));
		k->cls = LTX_CONFLICT_UNKNOWN;
	}
	n->held = 0; /* used */
}

void ltx_stats_doom(struct ltx_tx *tx, int kind, uintptr_t pc, const void *addr,
		    unsigned cause)
{
	bool stacks = tx->stats_on == LTX_STATS_STACKS;
	struct ltx_stats_site *s;

	child_first_use();
	pthread_once(&self_once, find_self_once);
	if (kind == LTX_SITE_WRITE && addr != NULL &&
	    (cause & TM_ABORT_CONFLICT) && read_before(tx, addr))
		kind = LTX_SITE_UPGRADE;
	classify_doom(tx, kind, cause);
	tx->doom_kind = kind;
	tx->doom_nstack = 0;
	if (self_hi != 0 && (pc == 0 || inside_ltx(pc))) {
		/* Not a call site in the program: find it. */
		pc = unwind_site(tx, 0, stacks);
	} else if (stacks && pc != 0) {
		/* Rate limit: a stack on a site's 1st, 2nd, 4th... abort. */
		s = find_site(tx, pc, kind);
		if (s == NULL || (s->count & (s->count + 1)) == 0)
			unwind_site(tx, pc, true);
	}
	tx->doom_pc = pc;
}

/* The one row of an abort (rt/stats.h): the first that applies. */
static unsigned abort_row(unsigned cause, int kind)
{
	if (cause & TM_ABORT_EXPLICIT)
		return LTX_ABORT_EXPLICIT;
	if (cause & TM_ABORT_SIGNAL)
		return LTX_ABORT_SIGNAL;
	if (cause & TM_ABORT_NOMEM)
		return LTX_ABORT_NOMEM;
	if (cause & TM_ABORT_CAPACITY)
		return LTX_ABORT_CAPACITY;
	/* Doomed at a site of its own: what found the conflict. */
	switch (kind) {
	case LTX_SITE_READ:
		return LTX_ABORT_CONFLICT_LT;
	case LTX_SITE_WRITE:
		return LTX_ABORT_CONFLICT_ST;
	case LTX_SITE_UPGRADE:
		return LTX_ABORT_UPGRADE;
	case LTX_SITE_VALIDATE:
		return LTX_ABORT_VALIDATE;
	case LTX_SITE_COMMIT:
		return LTX_ABORT_COMMIT;
	default:
		break;
	}
	/* No site: another transaction (an irrevocable one, or the serial
	 * token's holder) doomed it. */
	if (cause & TM_ABORT_CONFLICT)
		return LTX_ABORT_DOOMED;
	if (cause & TM_ABORT_FAULT)
		return LTX_ABORT_FAULT;
	return LTX_ABORT_OTHER;
}

/* The rows of aborts caused by a conflict: each has a class. */
static bool conflict_row(unsigned row)
{
	return row == LTX_ABORT_CONFLICT_LT || row == LTX_ABORT_CONFLICT_ST ||
	       row == LTX_ABORT_UPGRADE || row == LTX_ABORT_VALIDATE ||
	       row == LTX_ABORT_COMMIT || row == LTX_ABORT_DOOMED;
}

/*
 * Count the conflict k on its line in tx's table: the line's entry, else
 * a free one, else the one with the fewest conflicts, whose count goes to
 * lines_dropped (so the table and lines_dropped add up to the conflicts
 * that had a line, and a hot line, once in, stays).
 */
static void count_line(struct ltx_tx *tx, const struct ltx_conflict *k)
{
	struct ltx_stats_line *t = tx->lines->line, *l = NULL, *least = t;

	for (unsigned i = 0; i < LTX_STATS_LINES && l == NULL; i++) {
		if (t[i].line == k->line)
			l = &t[i];
		else if (least->line != 0 &&
			 (t[i].line == 0 ||
			  ltx_stats_line_total(&t[i]) <
				  ltx_stats_line_total(least)))
			least = &t[i];
	}
	if (l == NULL) {
		l = least;
		tx->stats.lines_dropped += ltx_stats_line_total(l);
		memset(l, 0, sizeof(*l));
		l->line = k->line;
	}
	l->count[k->cls]++;
	ltx_stats_line_part(l, k->mine);
	ltx_stats_line_part(l, k->theirs);
	if (k->cls == LTX_CONFLICT_ALIAS) {
		uint64_t bits = k->bits != 0 ? k->bits : LTX_STATS_NEVER;

		l->other = k->other;
		if (bits > l->bits)
			l->bits = bits;
	}
}

/* Pending aborts looked at again this many times stay unknown. */
#define PEND_LOOKS 16

/*
 * Look at the pending aborts' holder again (final: for the last time;
 * spare: a look that does not count against PEND_LOOKS); if it has stored
 * into the line since, move them from unknown to their class, in the
 * totals and on their line if the table still has it.  Inside a write
 * section (tx/stats.h).
 */
static void look_pending(struct ltx_tx *tx, bool final, bool spare)
{
	struct ltx_stats_lines *ls = tx->lines;
	struct ltx_conflict *p = &ls->pend;
	uint64_t n = ls->npend;

	if (n == 0)
		return;
	ltx_cd_conflict_again(p);
	if (p->again && !final && (spare || ++ls->pend_looks < PEND_LOOKS))
		return;
	ls->npend = 0;
	if (p->cls == LTX_CONFLICT_UNKNOWN ||
	    tx->stats.conflict_class[LTX_CONFLICT_UNKNOWN] < n)
		return;
	tx->stats.conflict_class[LTX_CONFLICT_UNKNOWN] -= n;
	tx->stats.conflict_class[p->cls] += n;
	for (unsigned i = 0; i < LTX_STATS_LINES; i++) {
		struct ltx_stats_line *l = &ls->line[i];

		if (l->line == p->line && l->count[LTX_CONFLICT_UNKNOWN] >= n) {
			l->count[LTX_CONFLICT_UNKNOWN] -= n;
			l->count[p->cls] += n;
			ltx_stats_line_part(l, p->theirs);
			break;
		}
	}
}

/* Keep k, counted unknown, to look at again: with the pending aborts if
 * it has their holder and line, else in their place. */
static void defer(struct ltx_tx *tx, const struct ltx_conflict *k)
{
	struct ltx_stats_lines *ls = tx->lines;
	const struct ltx_conflict *p = &ls->pend;

	if (ls->npend != 0 && p->line == k->line && p->mine == k->mine &&
	    p->note.held == k->note.held && p->note.holder == k->note.holder) {
		ls->npend++;
		return;
	}
	look_pending(tx, true, false);
	ls->pend = *k;
	ls->npend = 1;
	ls->pend_looks = 0;
}

/* The class of the abort of a transaction a conflict doomed. */
static void count_conflict(struct ltx_tx *tx)
{
	struct ltx_conflict *k = &tx->lines->doom;

	/* The holder had taken the line but stored nothing yet: it may
	 * have by now. */
	if (k->again)
		ltx_cd_conflict_again(k);
	tx->stats.conflict_class[k->cls]++;
	if (k->line != 0)
		count_line(tx, k);
	if (k->again)
		defer(tx, k);
	else
		look_pending(tx, false, false);
}

void ltx_stats_abort(struct ltx_tx *tx, unsigned cause)
{
	unsigned row = abort_row(cause, tx->doom_kind);
	struct ltx_stats_site *s;

	tx->stats.aborts_by[row]++;
	if (conflict_row(row))
		count_conflict(tx);
	memset(&tx->lines->doom, 0, sizeof(tx->lines->doom));
	tx->lines->doom.cls = LTX_CONFLICT_UNKNOWN;

	if (cause & TM_ABORT_CONFLICT) {
		if (tx->doom_kind == LTX_SITE_READ)
			tx->stats.conflicts_read++;
		else if (tx->doom_kind == LTX_SITE_WRITE)
			tx->stats.conflicts_write++;
		else if (tx->doom_kind == LTX_SITE_UPGRADE)
			tx->stats.conflicts_upgrade++;
	}
	s = find_site(tx, tx->doom_pc, tx->doom_kind);
	for (unsigned i = 0; s == NULL && i < LTX_STATS_SITES; i++)
		if (tx->sites[i].count == 0) {
			s = &tx->sites[i];
			s->pc = tx->doom_pc;
			s->kind = (uint32_t)tx->doom_kind;
			s->cause = 0;
			s->nstack = 0;
		}
	if (s == NULL) {
		tx->stats.sites_dropped++;
	} else {
		s->count++;
		s->cause |= cause;
		if (tx->doom_nstack != 0) {
			memcpy(s->stack, tx->doom_stack,
			       tx->doom_nstack * sizeof(s->stack[0]));
			s->nstack = tx->doom_nstack;
		}
	}
	tx->doom_kind = LTX_SITE_OTHER;
	tx->doom_pc = 0;
	tx->doom_nstack = 0;
}

void ltx_stats_commit(struct ltx_tx *tx, uint64_t nr, uint64_t nw)
{
	unsigned retried = ltx_stats_bucket(tx->consec_aborts);

	child_first_use();
	ltx_stats_write_begin(tx);
	if (nw != 0)
		tx->stats.commits_rw++;
	else
		tx->stats.commits_ro++;
	tx->stats.retries_hist[retried]++;
	tx->stats.reads_hist[ltx_stats_bucket(nr)]++;
	tx->stats.writes_hist[ltx_stats_bucket(nw)]++;
	/* The first commit after aborts: their holders have stored since,
	 * most likely.  And every commit while some are pending, a spare
	 * look (quick commits must not use up the holder's time): the holder
	 * may have been taking the line again (LTX) at the last look, and
	 * this thread may abort no more. */
	if (ltx_unlikely(retried != 0 || tx->lines->npend != 0))
		look_pending(tx, false, retried == 0);
	ltx_stats_write_end(tx);
}

void ltx_stats_thread_end(struct ltx_tx *tx)
{
	struct ltx_stats_lines *ls = tx->lines;

	if (ls == NULL || ls->npend == 0)
		return;
	/* PEND_LOOKS more looks, a yield apart: the holder is likely still
	 * running, between taking the line and storing into it. */
	ls->pend_looks = 0;
	while (ls->npend != 0) {
		ltx_stats_write_begin(tx);
		look_pending(tx, false, false);
		ltx_stats_write_end(tx);
		if (ls->npend != 0)
			ltx_yield();
	}
}

/*
 * The child of a fork counts what it does itself: every descriptor's
 * counters and sites are cleared (the threads of the others do not exist
 * in the child; the calling thread's is its only one), and a descriptor
 * that a thread of the parent was updating at the fork - its generation
 * odd, and no one left to make it even - is made readable, so that no
 * reader in the child waits for it.  The tm_malloc figures are state, not
 * history: they stay.  Runs in the child before fork returns, with no
 * other thread; walks the registry without its lock (ltx_tx_registry),
 * which a thread of the parent may have held at the fork.
 */
static void at_fork_child(void)
{
	struct ltx_tx *me = ltx_self != &ltx_boot_tx ? ltx_self : NULL;

	merge_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	for (struct ltx_tx *tx = ltx_tx_registry(); tx != NULL;
	     tx = tx->next_all) {
		struct ltx_stats kept = tx->stats;
		bool mine = tx == me || (me != NULL && tx == me->handler_tx);

		if (!mine)
			tx->stats_gen += tx->stats_gen & 1;
		memset(&tx->stats, 0, sizeof(tx->stats));
		tx->stats.mem_pending_bytes = kept.mem_pending_bytes;
		tx->stats.mem_pending_blocks = kept.mem_pending_blocks;
		tx->stats.mem_freed_blocks = kept.mem_freed_blocks;
		tx->stats.mem_alloc_blocks = kept.mem_alloc_blocks;
		/* The transaction in progress, if any, is the child's. */
		tx->stats_id0 =
			tx->tx_id - (ltx_status_idle(tx->status) ? 0 : 1);
		if (tx->sites != NULL)
			memset(tx->sites, 0,
			       LTX_STATS_SITES * sizeof(*tx->sites));
		if (tx->lines != NULL) {
			memset(tx->lines, 0, sizeof(*tx->lines));
			tx->lines->doom.cls = LTX_CONFLICT_UNKNOWN;
		}
	}
	if (me != NULL)
		me->stats.threads = 1;
	child_pending = ltx_config.stats != LTX_STATS_OFF;
}

static void hook_fork_once(void)
{
	pthread_atfork(NULL, NULL, at_fork_child);
}

void ltx_stats_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, hook_fork_once);
	if (ltx_config.stats != LTX_STATS_OFF)
		ltx_statseg_start(ltx_stats_collect_all);
}

void ltx_stats_changed(void)
{
	/* A thread without a descriptor is armed when it takes one. */
	if (ltx_self != &ltx_boot_tx)
		arm(ltx_self);
	ltx_stats_init();
}

/* Copy n words that their owner may be writing (relaxed loads). */
static void copy_words(void *dst, const void *src, size_t bytes)
{
	uint64_t *d = dst;
	const uint64_t *s = src;

	for (size_t i = 0; i < bytes / sizeof(uint64_t); i++)
		d[i] = __atomic_load_n(&s[i], __ATOMIC_RELAXED);
}

/*
 * A consistent copy of one descriptor's counters and sites (seqlock read;
 * see rt/stats.h).  Gives up waiting after many tries (a writer preempted
 * inside its few instructions) and keeps the last copy.
 */
static void read_descriptor(struct ltx_tx *tx, struct ltx_stats *st,
			    struct ltx_stats_site *sites, unsigned *nsites,
			    struct ltx_stats_line *lines, unsigned *nlines)
{
	for (unsigned tries = 0;; tries++) {
		uint64_t g1 = __atomic_load_n(&tx->stats_gen, __ATOMIC_ACQUIRE);
		int status = __atomic_load_n(&tx->status, __ATOMIC_RELAXED);
		uint64_t id = __atomic_load_n(&tx->tx_id, __ATOMIC_RELAXED) -
			      __atomic_load_n(&tx->stats_id0, __ATOMIC_RELAXED);
		int on = __atomic_load_n(&tx->stats_on, __ATOMIC_RELAXED);
		struct ltx_stats_site *ts =
			__atomic_load_n(&tx->sites, __ATOMIC_RELAXED);
		struct ltx_stats_lines *tl =
			__atomic_load_n(&tx->lines, __ATOMIC_RELAXED);

		copy_words(st, &tx->stats, sizeof(*st));
		*nsites = 0;
		if (on && ts != NULL && sites != NULL) {
			copy_words(sites, ts, LTX_STATS_SITES * sizeof(*ts));
			*nsites = LTX_STATS_SITES;
		}
		*nlines = 0;
		if (on && tl != NULL && lines != NULL) {
			copy_words(lines, tl->line, sizeof(tl->line));
			*nlines = LTX_STATS_LINES;
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (!on)
			st->commits_ro =
				derived_ro(id, st, !ltx_status_idle(status));
		if (((g1 & 1) == 0 &&
		     g1 == __atomic_load_n(&tx->stats_gen, __ATOMIC_RELAXED)) ||
		    tries > 10000)
			return;
		if (tries > 100)
			ltx_yield();
	}
}

struct collect {
	struct ltx_stats *sum;
	struct ltx_stats_site *merged; /* MERGE_MAX */
	unsigned nmerged;
	struct ltx_stats_line *lines; /* MERGE_MAX */
	unsigned nlines;
};

static void add_stats(struct ltx_stats *sum, const struct ltx_stats *s)
{
	uint64_t *d = (uint64_t *)sum;
	const uint64_t *a = (const uint64_t *)s;

	_Static_assert(sizeof(*s) % sizeof(uint64_t) == 0, "words only");
	for (size_t i = 0; i < sizeof(*s) / sizeof(uint64_t); i++)
		d[i] += a[i];
}

static void merge_site(struct collect *c, const struct ltx_stats_site *s)
{
	for (unsigned i = 0; i < c->nmerged; i++) {
		struct ltx_stats_site *m = &c->merged[i];

		if (m->pc == s->pc && m->kind == s->kind) {
			m->count += s->count;
			m->cause |= s->cause;
			if (m->nstack == 0 && s->nstack != 0) {
				memcpy(m->stack, s->stack, sizeof(m->stack));
				m->nstack = s->nstack;
			}
			return;
		}
	}
	if (c->nmerged < MERGE_MAX)
		c->merged[c->nmerged++] = *s;
	else
		c->sum->sites_dropped += s->count;
}

/* Add a thread's line to the merged ones (by line). */
static void merge_line(struct collect *c, const struct ltx_stats_line *l)
{
	struct ltx_stats_line *m = NULL;

	for (unsigned i = 0; i < c->nlines && m == NULL; i++)
		if (c->lines[i].line == l->line)
			m = &c->lines[i];
	if (m == NULL && c->nlines == MERGE_MAX) {
		c->sum->lines_dropped += ltx_stats_line_total(l);
		return;
	}
	if (m == NULL) {
		m = &c->lines[c->nlines++];
		memset(m, 0, sizeof(*m));
		m->line = l->line;
	}
	for (unsigned k = 0; k < LTX_CONFLICT_CLASSES; k++)
		m->count[k] += l->count[k];
	for (unsigned p = 0; p < LTX_STATS_PARTS; p++)
		ltx_stats_line_part(m, l->part[p]);
	if (l->other != 0)
		m->other = l->other;
	if (l->bits > m->bits)
		m->bits = l->bits;
}

static void collect_one(struct ltx_tx *tx, void *arg)
{
	struct collect *c = arg;
	struct ltx_stats st;
	struct ltx_stats_site sites[LTX_STATS_SITES];
	struct ltx_stats_line lines[LTX_STATS_LINES];
	unsigned n, nl;

	read_descriptor(tx, &st, c->merged ? sites : NULL, &n,
			c->lines ? lines : NULL, &nl);
	add_stats(c->sum, &st);
	for (unsigned i = 0; i < n; i++)
		if (sites[i].count != 0 && sites[i].nstack <= LTX_STATS_STACK)
			merge_site(c, &sites[i]);
	for (unsigned i = 0; i < nl; i++)
		if (lines[i].line != 0)
			merge_line(c, &lines[i]);
}

static int by_count(const void *a, const void *b)
{
	const struct ltx_stats_site *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

static int by_conflicts(const void *a, const void *b)
{
	uint64_t x = ltx_stats_line_total(a), y = ltx_stats_line_total(b);

	return x < y ? 1 : x > y ? -1 : 0;
}

void ltx_stats_collect_all(struct ltx_stats *sum, uint64_t *threads,
			   struct ltx_stats_tables *t)
{
	struct collect c = { .sum = sum };
	bool merge = (t->sites != NULL && t->max_sites > 0) ||
		     (t->lines != NULL && t->max_lines > 0);

	memset(sum, 0, sizeof(*sum));
	t->nsites = 0;
	t->nlines = 0;
	if (merge) {
		pthread_mutex_lock(&merge_lock);
		if (t->sites != NULL && t->max_sites > 0)
			c.merged = merge_buf;
		if (t->lines != NULL && t->max_lines > 0)
			c.lines = merge_lines;
	}
	/* Without the registry lock, which a thread of the parent may have
	 * held at a fork (this runs at the child's exit too). */
	for (struct ltx_tx *tx = ltx_tx_registry(); tx != NULL;
	     tx = tx->next_all)
		collect_one(tx, &c);
	*threads = sum->threads;
	if (!merge)
		return;
	if (c.merged != NULL) {
		qsort(c.merged, c.nmerged, sizeof(*c.merged), by_count);
		if (c.nmerged > t->max_sites) {
			for (unsigned i = t->max_sites; i < c.nmerged; i++)
				sum->sites_dropped += c.merged[i].count;
			c.nmerged = t->max_sites;
		}
		memcpy(t->sites, c.merged, c.nmerged * sizeof(*t->sites));
		t->nsites = c.nmerged;
	}
	if (c.lines != NULL) {
		qsort(c.lines, c.nlines, sizeof(*c.lines), by_conflicts);
		if (c.nlines > t->max_lines) {
			for (unsigned i = t->max_lines; i < c.nlines; i++)
				sum->lines_dropped +=
					ltx_stats_line_total(&c.lines[i]);
			c.nlines = t->max_lines;
		}
		memcpy(t->lines, c.lines, c.nlines * sizeof(*t->lines));
		t->nlines = c.nlines;
	}
	pthread_mutex_unlock(&merge_lock);
}

unsigned ltx_stats_collect(struct ltx_stats *sum, uint64_t *threads,
			   struct ltx_stats_site *sites, unsigned max)
{
	struct ltx_stats_tables t = { .sites = sites, .max_sites = max };

	ltx_stats_collect_all(sum, threads, &t);
	return t.nsites;
}

/*
 * struct tm_stats is the list's TM and SUM fields (rt/stats.h), in the
 * list's order, after size: a mirror built from the list must have the same
 * size, and each field the same offset and size, so a field added to one
 * and not the other, or moved, fails to compile.
 */
#define MIRROR_MEMBER(name, dim, abi, show, what)                              \
	LTX_STATS_PUBLIC_##abi(uint64_t name dim;)
struct tm_stats_mirror {
	size_t size;
	LTX_STATS_FIELDS(MIRROR_MEMBER)
};
_Static_assert(sizeof(struct tm_stats_mirror) == sizeof(struct tm_stats),
	       "struct tm_stats (ltx/tm.h) and the TM fields of "
	       "LTX_STATS_FIELDS (rt/stats.h) differ");
#define SAME_PLACE(name, dim, abi, show, what)                                 \
	LTX_STATS_PUBLIC_##abi(                                                \
		_Static_assert(                                                \
			offsetof(struct tm_stats_mirror, name) ==              \
					offsetof(struct tm_stats, name) &&     \
				sizeof(((struct tm_stats_mirror *)0)->name) == \
					sizeof(((struct tm_stats *)0)->name),  \
			"struct tm_stats." #name                               \
			" is not where LTX_STATS_FIELDS "                      \
			"puts it: new public fields go at the end of both");)
LTX_STATS_FIELDS(SAME_PLACE)
_Static_assert(TM_STATS_CAUSES == LTX_STATS_CAUSES, "causes");
_Static_assert(TM_STATS_HIST == LTX_STATS_HIST, "buckets");

#define COPY_TM(name) memcpy(&t.name, &s.name, sizeof(t.name));
#define COPY_LTX(name)
#define COPY_SUM(name)			      t.name = LTX_STATS_SUM_##name(&s);
#define TO_PUBLIC(name, dim, abi, show, what) COPY_##abi(name)

int tm_stats_get(struct tm_stats *out)
{
	struct ltx_stats s;
	struct tm_stats t;
	uint64_t threads;
	size_t n;

	if (out == NULL || out->size < offsetof(struct tm_stats, commits_rw)) {
		errno = EINVAL;
		return -1;
	}
	memset(&t, 0, sizeof(t));
	ltx_stats_collect(&s, &threads, NULL, 0);
	LTX_STATS_FIELDS(TO_PUBLIC)
	n = out->size < sizeof(t) ? out->size : sizeof(t);
	t.size = n;
	memcpy(out, &t, n);
	return 0;
}
