/* SPDX-License-Identifier: MIT */
/* Conflict-detection mode table. */
#include "cd/cd.h"

const struct ltx_cd_ops *ltx_cd_ops_of(int mode)
{
	switch (mode) {
	default:
		return &ltx_cd_invisible;
	}
}
