/* SPDX-License-Identifier: MIT */
/* Unwinding: the landing pad the unwinder last entered (see unwind.h). */
#include "rt/unwind.h"

/* Written by libltx.so's personality routine (rt/preload.c); 0 in the
 * static library, where nothing writes it. */
__thread uintptr_t ltx_unwind_sp __attribute__((tls_model("initial-exec")));
