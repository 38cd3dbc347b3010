/* SPDX-License-Identifier: MIT */
/* The workloads compiled against the ltx access interface (tm_*). */
#include "access_ltx.h"
#define BENCH_WORKLOADS bench_ltx_workloads
#include "workloads.h"
