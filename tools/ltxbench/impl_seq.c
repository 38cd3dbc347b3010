/* SPDX-License-Identifier: MIT */
/* The workloads compiled against the seq access interface. */
#include "access_seq.h"
#define BENCH_WORKLOADS bench_seq_workloads
#include "workloads.h"
