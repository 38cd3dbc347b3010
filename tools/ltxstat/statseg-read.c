/* SPDX-License-Identifier: MIT */
/* The segment reader of the library (src/rt), built into ltxstat too. */
#include "rt/statseg-read.c"
