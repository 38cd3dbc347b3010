/* SPDX-License-Identifier: MIT */
/* The workloads compiled against the mutex access interface. */
#include "access_mutex.h"
#define BENCH_WORKLOADS bench_mutex_workloads
#include "workloads.h"
