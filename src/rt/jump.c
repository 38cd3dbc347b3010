/* SPDX-License-Identifier: MIT */
/* Jumps: the defaults where nothing is interposed (see jump.h). */
#include <setjmp.h>

#include "rt/jump.h"

/* libltx.so replaces these (rt/preload.c); the static library keeps them:
 * no hook, and ltx's own jumps are libc's longjmp. */
__attribute__((weak)) void ltx_jump_init(void (*hook)(uintptr_t sp))
{
	(void)hook;
}

__attribute__((weak)) void ltx_longjmp_unhooked(void *env, int val)
{
	longjmp(env, val);
}
