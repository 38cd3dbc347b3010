/* SPDX-License-Identifier: MIT */
/* The workloads compiled against GCC TM (built with -fgnu-tm). */
#include "access_gnutm.h"
#define BENCH_WORKLOADS bench_gnutm_workloads
#include "workloads.h"
