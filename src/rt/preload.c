/* SPDX-License-Identifier: MIT */
/* What libltx.so alone interposes: the longjmp family, C's personality. */
#define _GNU_SOURCE
/*
 * This file defines longjmp and __longjmp_chk themselves; with
 * _FORTIFY_SOURCE (Debian's and Fedora's default flags) <setjmp.h> would
 * redirect longjmp to __longjmp_chk and the assembler would see the
 * latter defined twice.
 */
#undef _FORTIFY_SOURCE
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "rt/jump.h"
#include "rt/unwind.h"

/*
 * This file is compiled into the shared library only (src/Makefile.am:
 * libltx_la_SOURCES; libtool defines PIC for the shared objects, and the
 * static archive's copy is empty): a static program must keep libc's
 * longjmp and libgcc's personality routine, whose real versions cannot be
 * found from a static binary.  Its functions replace the weak defaults of
 * rt/jump.c and rt/unwind.c (which do nothing).
 */
#ifdef PIC
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unwind.h>

#define EXPORT __attribute__((visibility("default")))

typedef void (*jump_fn)(struct __jmp_buf_tag *, int);

/* Set once by ltx_jump_init, before any thread can jump (the
 * constructor); read without synchronization afterwards. */
static jump_fn real_longjmp, real__longjmp, real_siglongjmp, real_longjmp_chk;
static void (*hook)(uintptr_t sp);

/* The stack pointer a setjmp buffer restores, if this libc's layout is
 * the one arch/ knows (checked on a buffer of our own). */
static __attribute__((noinline)) int sp_reading_works(void)
{
	jmp_buf b;
	uintptr_t here = (uintptr_t)__builtin_frame_address(0), sp;

	if (setjmp(b) != 0)
		return 0;
	sp = ltx_jmpbuf_sp(b);
	/* setjmp saved its caller's (our) stack pointer: within our frame. */
	return sp <= here && here - sp < 4096;
}

static jump_fn find(const char *name, const char *version)
{
	jump_fn f = (jump_fn)dlvsym(RTLD_NEXT, name, version);

	if (f == NULL) {
		fprintf(stderr, "ltx: cannot find libc's %s\n", name);
		abort();
	}
	return f;
}

void ltx_jump_init(void (*h)(uintptr_t sp))
{
	real_longjmp = find("longjmp", "GLIBC_2.2.5");
	real__longjmp = find("_longjmp", "GLIBC_2.2.5");
	real_siglongjmp = find("siglongjmp", "GLIBC_2.2.5");
	real_longjmp_chk = find("__longjmp_chk", "GLIBC_2.11");
	if (sp_reading_works())
		hook = h;
}

void ltx_longjmp_unhooked(void *env, int val)
{
	real_longjmp(env, val);
	__builtin_unreachable();
}

static void before(struct __jmp_buf_tag *env)
{
	if (hook != NULL)
		hook(ltx_jmpbuf_sp(env));
}

EXPORT __attribute__((noreturn)) void longjmp(struct __jmp_buf_tag env[1],
					      int val)
{
	before(env);
	real_longjmp(env, val);
	__builtin_unreachable();
}

EXPORT __attribute__((noreturn)) void _longjmp(struct __jmp_buf_tag env[1],
					       int val)
{
	before(env);
	real__longjmp(env, val);
	__builtin_unreachable();
}

EXPORT __attribute__((noreturn)) void siglongjmp(struct __jmp_buf_tag env[1],
						 int val)
{
	before(env);
	real_siglongjmp(env, val);
	__builtin_unreachable();
}

EXPORT __attribute__((noreturn)) void __longjmp_chk(struct __jmp_buf_tag env[1],
						    int val)
{
	before(env);
	real_longjmp_chk(env, val);
	__builtin_unreachable();
}

/* ---- the personality routine (rt/unwind.h) ---- */

typedef _Unwind_Reason_Code (*personality_fn)(int, _Unwind_Action,
					      _Unwind_Exception_Class,
					      struct _Unwind_Exception *,
					      struct _Unwind_Context *);

/* libgcc's functions, from libgcc_s itself: libltx also links libunwind,
 * whose _Unwind_* functions take another context. */
static personality_fn real_personality;
static _Unwind_Word (*get_cfa)(struct _Unwind_Context *);

/* libgcc's routines, resolved once (they never change once found). */
static int resolve(void)
{
	void *h;

	if (__atomic_load_n(&real_personality, __ATOMIC_ACQUIRE) != NULL)
		return 1;
	h = dlopen("libgcc_s.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (h == NULL)
		h = dlopen("libgcc_s.so.1", RTLD_LAZY);
	if (h == NULL)
		return 0;
	get_cfa = (_Unwind_Word(*)(struct _Unwind_Context *))dlsym(
		h, "_Unwind_GetCFA");
	if (get_cfa == NULL)
		return 0;
	/* Release: the helpers above are set before the routine shows. */
	__atomic_store_n(
		&real_personality,
		(personality_fn)dlvsym(h, "__gcc_personality_v0", "GCC_3.3.1"),
		__ATOMIC_RELEASE);
	return real_personality != NULL;
}

__attribute__((visibility("default"))) _Unwind_Reason_Code
__gcc_personality_v0(int version, _Unwind_Action actions,
		     _Unwind_Exception_Class cls, struct _Unwind_Exception *exc,
		     struct _Unwind_Context *ctx)
{
	_Unwind_Reason_Code rc;

	if (!resolve()) {
		fprintf(stderr, "ltx: cannot find libgcc_s's "
				"__gcc_personality_v0 to unwind with\n");
		abort();
	}
	rc = real_personality(version, actions, cls, exc, ctx);
	if (rc == _URC_INSTALL_CONTEXT && (actions & _UA_CLEANUP_PHASE)) {
		/* libgcc's CFA of the context: the frame's stack pointer at
		 * its call site, which its landing pad runs with. */
		ltx_unwind_sp = get_cfa(ctx);
	}
	return rc;
}

#endif /* PIC */
