/* SPDX-License-Identifier: MIT */
/* The workloads compiled against the spin access interface. */
#include "access_spin.h"
#define BENCH_WORKLOADS bench_spin_workloads
#include "workloads.h"
