/* SPDX-License-Identifier: MIT */
/* Conflict detection: the mode table, cd's logs and directory. */
#include <stdlib.h>
#include <string.h>

#include "cd/cd.h"
#include "cd/invisible.h"
#include "cd/lines.h"
#include "cd/orec.h"
#include "cd/visible.h"
#include "rt/config.h"
#include "rt/hash.h"
#include "rt/wait.h"

/* Initial log sizes; both double on demand (outside the fast path). */
#define READ_SET_INITIAL  1024
#define WRITE_SET_INITIAL 64

/* Until the transaction layer says otherwise, a holder is waited for. */
static enum ltx_holder wait_for_holder(const struct ltx_cd *self, int kind,
				       uint32_t which)
{
	(void)self;
	(void)kind;
	(void)which;
	return LTX_HOLDER_BUSY;
}

enum ltx_holder (*ltx_cd_holder)(const struct ltx_cd *self, int kind,
				 uint32_t which) = wait_for_holder;

/*
 * The taker's mark (cd.h): 0, or the address of its thread's own byte
 * below, which tells a handler on the taker's thread that the mark is its
 * own thread's (it must not wait for code it interrupted).
 */
static uintptr_t taking;
static __thread char taker_here __attribute__((tls_model("initial-exec")));

void ltx_cd_take_begin(void)
{
	/* Seq_cst: ordered before the taker's seq_cst load of the lock
	 * word (the Dekker pair of cd.h). */
	__atomic_store_n(&taking, (uintptr_t)&taker_here, __ATOMIC_SEQ_CST);
}

void ltx_cd_take_end(void)
{
	/* Release: the taker's reads of the holder's entry and its CAS
	 * happen before a waiting holder goes on. */
	__atomic_store_n(&taking, 0, __ATOMIC_RELEASE);
}

void ltx_cd_take_wait(void)
{
	unsigned spins = 0;
	uintptr_t t;

	/* Seq_cst: after the caller's seq_cst releases (or fence). */
	while ((t = __atomic_load_n(&taking, __ATOMIC_SEQ_CST)) != 0 &&
	       t != (uintptr_t)&taker_here)
		ltx_wait_step(&spins);
}

int ltx_cd_take_slot(void)
{
	static int next_slot;

	/* Relaxed: a unique number is all that is asked. */
	return __atomic_fetch_add(&next_slot, 1, __ATOMIC_RELAXED);
}

const struct ltx_cd_ops *ltx_cd_ops_of(int mode)
{
	return mode == LTX_MODE_VISIBLE ? &ltx_cd_visible : &ltx_cd_invisible;
}

bool ltx_cd_init(struct ltx_cd *cd, struct ltx_stats *stats)
{
	cd->rs_base = malloc(READ_SET_INITIAL * sizeof(*cd->rs_base));
	if (posix_memalign((void **)&cd->ws_base, LTX_LINE_SIZE,
			   WRITE_SET_INITIAL * sizeof(*cd->ws_base)))
		cd->ws_base = NULL;
	/* The directory too, for handler descriptors (no_alloc). */
	if (cd->rs_base == NULL || cd->ws_base == NULL || !ltx_lines_init(cd)) {
		free(cd->rs_base);
		free(cd->ws_base);
		cd->rs_base = NULL;
		cd->ws_base = NULL;
		cd->ws_span = 0;
		return false;
	}
	cd->rs_next = cd->rs_base;
	cd->rs_end = cd->rs_base + READ_SET_INITIAL;
	cd->ws_next = cd->ws_base;
	cd->ws_end = cd->ws_base + WRITE_SET_INITIAL;
	ltx_cd_ws_bounds(cd);
	for (struct ltx_wentry *w = cd->ws_base; w < cd->ws_end; w++)
		w->owner = cd->id;
	cd->orec_mul = LTX_OREC_MUL;
	cd->stats = stats;
	return true;
}

/*
 * With the lock bit at bit 63, v ^ LTX_OREC_LOCKED == v - LTX_OREC_LOCKED
 * (mod 2^64), so v ^ LTX_OREC_LOCKED - ws_base == v - ws_key: the entry's
 * offset in the allocation, below ws_span for an address inside it and
 * only then (unsigned).  An unlocked v (bit 63 clear) gives v + 2^63 -
 * ws_base, at least 2^63 - ws_base, above any allocation's size.
 */
void ltx_cd_ws_bounds(struct ltx_cd *cd)
{
	cd->ws_key = (uintptr_t)cd->ws_base ^ LTX_OREC_LOCKED;
	cd->ws_span = (uintptr_t)cd->ws_end - (uintptr_t)cd->ws_base;
}

void ltx_cd_attach(struct ltx_cd *cd)
{
	cd->orecs = ltx_orec_table;
	cd->orec_mask = ltx_orec_mask;
	cd->orec_mul = LTX_OREC_MUL;
}

void ltx_cd_fork_finish(struct ltx_cd *cd, int mode)
{
	if (mode == LTX_MODE_VISIBLE)
		ltx_vis_fork_finish(cd);
	else
		ltx_inv_fork_finish(cd);
}

void ltx_cd_fork_free(struct ltx_cd *const *keep, unsigned nkeep)
{
	/* A gone irrevocable transaction may have been taking a line: its
	 * mark would make every abort in the child wait for ever.  (The
	 * forking thread is not in a take section: it never forks there.) */
	__atomic_store_n(&taking, 0, __ATOMIC_RELAXED);
	ltx_inv_fork_free(keep, nkeep);
	ltx_vis_fork_free(keep, nkeep);
}

void ltx_cd_fork_forget(struct ltx_cd *cd)
{
	cd->rs_next = cd->rs_base;
	cd->ws_next = cd->ws_base;
	cd->limit = 0;
	cd->irrevocable = 0;
	cd->counted = 0;
	ltx_lines_reset(cd);
}
