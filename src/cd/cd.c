/* SPDX-License-Identifier: MIT */
/* Conflict detection: the mode table, cd's logs and directory. */
#include <stdlib.h>
#include <string.h>

#include "cd/cd.h"
#include "cd/lines.h"
#include "cd/orec.h"
#include "rt/config.h"
#include "rt/hash.h"

/* Initial log sizes; both double on demand (outside the fast path). */
#define READ_SET_INITIAL 1024
#define WRITE_SET_INITIAL 64

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
		return false;
	}
	cd->rs_next = cd->rs_base;
	cd->rs_end = cd->rs_base + READ_SET_INITIAL;
	cd->ws_next = cd->ws_base;
	cd->ws_end = cd->ws_base + WRITE_SET_INITIAL;
	cd->orec_mul = LTX_HASH_MUL;
	cd->stats = stats;
	return true;
}

void ltx_cd_attach(struct ltx_cd *cd)
{
	cd->orecs = ltx_orec_table;
	cd->orec_mask = ltx_orec_mask;
	cd->orec_mul = LTX_HASH_MUL;
}
