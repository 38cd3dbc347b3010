/* SPDX-License-Identifier: MIT */
/* ltx_peek (rt/peek.h): a copy whose only load may fault, and its fixup. */
#define _GNU_SOURCE /* REG_RIP */
#include <stdint.h>
#include <ucontext.h>

#include "rt/peek.h"

/*
 * bool ltx_peek(void *dst, const void *src, size_t n): rdi, rsi, rdx.  The
 * copy is the one instruction at ltx_peek_copy; a fault there (the source
 * unmapped under it) is turned by ltx_peek_fixup into a jump to
 * ltx_peek_fault, which returns false.  rep movsb resumes where it stopped
 * after any other interruption, so only a fault ends it early.  In
 * assembly (x86-64 only, as ltx: configure.ac) so that the faulting
 * instruction is known, and no sanitizer instruments the racy load.
 */
__asm__(".text\n"
	".globl ltx_peek\n"
	".hidden ltx_peek\n"
	".type ltx_peek, @function\n"
	".p2align 4\n"
	"ltx_peek:\n"
	".cfi_startproc\n"
	"	endbr64\n"
	"	movq %rdx, %rcx\n"
	"ltx_peek_copy:\n"
	"	rep movsb\n"
	"	movl $1, %eax\n"
	"	ret\n"
	"ltx_peek_fault:\n"
	"	xorl %eax, %eax\n"
	"	ret\n"
	".cfi_endproc\n"
	".size ltx_peek, .-ltx_peek\n");

/* The labels inside it: the copy, and its way out at a fault. */
extern const char ltx_peek_copy[] __asm__("ltx_peek_copy");
extern const char ltx_peek_fault[] __asm__("ltx_peek_fault");

bool ltx_peek_fixup(void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *rip = &uc->uc_mcontext.gregs[REG_RIP];

	if (*rip != (greg_t)(uintptr_t)ltx_peek_copy)
		return false;
	/* The signal mask comes back with the handler's return. */
	*rip = (greg_t)(uintptr_t)ltx_peek_fault;
	return true;
}
