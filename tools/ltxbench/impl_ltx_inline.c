/* SPDX-License-Identifier: MIT */
/* The workloads against ltx's tm_* with LTX_INLINE: the common LT runs in
 * the caller (<ltx/inline.h>). */
#define LTX_INLINE
#include "access_ltx.h"
#define BENCH_WORKLOADS bench_ltx_inline_workloads
#include "workloads.h"
