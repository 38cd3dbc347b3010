/* SPDX-License-Identifier: MIT */
/* The library's naming of abort sites (src/rt), built into ltxstat too. */
#include "rt/statseg-sym.c"
