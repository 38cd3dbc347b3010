/* SPDX-License-Identifier: MIT */
/* Conflict-detection mode table. */
#include "cd/cd.h"

const struct ltx_cd_ops *ltx_cd_ops_of(int mode)
{
	return mode == LTX_MODE_VISIBLE ? &ltx_cd_visible : &ltx_cd_invisible;
}
