/* SPDX-License-Identifier: MIT */
/* The conflict-detection interface: one module per mode behind one table. */
#ifndef LTX_CD_CD_H
#define LTX_CD_CD_H

#include <stdbool.h>
#include <stdint.h>

#include "tx/desc.h"

/*
 * What a conflict-detection mode provides to the transaction layer.  Every
 * operation is called on the calling thread's own descriptor, for a live
 * transaction (status LTX_ACTIVE), from outside signal handlers.  An
 * operation that finds the transaction cannot go on returns a non-zero
 * TM_ABORT_* cause instead of dooming it itself; the transaction layer dooms
 * it and calls release.  The hot paths of the default mode are inlined into
 * the API (cd/invisible.h); these are the complete, out-of-line versions.
 */
struct ltx_cd_ops {
	const char *name;
	/* begin: start a transaction (take a snapshot, arm the fast path). */
	void (*begin)(struct ltx_tx *tx);
	/* load: LT (excl false) or LTX (excl true) of the aligned word at
	 * addr.  On failure sets *cause and returns 0. */
	uint64_t (*load)(struct ltx_tx *tx, const void *addr, bool excl,
			 unsigned *cause);
	/* store: ST of the low size bytes of val to addr (size 1, 2, 4 or 8,
	 * addr aligned to size).  Returns 0 or a cause. */
	unsigned (*store)(struct ltx_tx *tx, void *addr, uint64_t val,
			  unsigned size);
	/* validate: 0 if the transaction can still commit, else a cause. */
	unsigned (*validate)(struct ltx_tx *tx);
	/* commit: publish the write set atomically; 0, or a cause (the
	 * transaction is then still holding its lines: call release). */
	unsigned (*commit)(struct ltx_tx *tx);
	/* release: drop every line held and empty the read and write sets,
	 * publishing nothing.  Idempotent. */
	void (*release)(struct ltx_tx *tx);
	/* valid_now: whether a live transaction's reads all still hold.
	 * Called from the fault handler on the owner's thread, at any
	 * instruction: loads only, no allocation, no lock.  NULL: the mode
	 * only knows what status says (the fault sandbox then treats a live
	 * transaction as valid). */
	bool (*valid_now)(const struct ltx_tx *tx);
	/* make_irrevocable: called with tx->irrevocable set (the serial
	 * token held): make every line tx read so far safe from other
	 * commits (take it), and from now on never doom tx on a conflict
	 * (wait for the holder to let go: it is not irrevocable, so it
	 * never waits itself).  0, or a cause if a read already changed or
	 * is held (no waiting: tx may hold lines its holder waits for). */
	unsigned (*make_irrevocable)(struct ltx_tx *tx);
	/* line_state: tm_line_state() of addr for the live transaction,
	 * packed by LTX_LINE_STATE. */
	unsigned (*line_state)(struct ltx_tx *tx, const void *addr);
};

/* A tm_line_state() value: slot state TM_* and MESI letter. */
#define LTX_LINE_STATE(slot, mesi) \
	((unsigned)(slot) | ((unsigned)(mesi) << 8))

extern const struct ltx_cd_ops ltx_cd_invisible;
extern const struct ltx_cd_ops ltx_cd_visible;

/* The operations of mode (enum ltx_mode). */
const struct ltx_cd_ops *ltx_cd_ops_of(int mode);

#endif /* LTX_CD_CD_H */
