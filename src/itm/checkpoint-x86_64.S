/* SPDX-License-Identifier: MIT */
/* x86-64 checkpoint of the libitm ABI: _ITM_beginTransaction and its restart. */

/*
 * struct ltx_itm_jmpbuf (itm.h), 64 bytes:
 *   0 cfa (the caller's rsp after begin returns)   8 rbx   16 rbp
 *  24 r12  32 r13  40 r14  48 r15  56 rip (begin's return address)
 *
 * GCC declares _ITM_beginTransaction returns_twice and expects only the
 * SysV callee-saved registers to survive it, like setjmp: rax is the action
 * word, everything else caller-saved is dead across the call.  The C part
 * (ltx_itm_begin) copies the record into the thread's state, because this
 * stack copy dies when begin returns.
 */

	.text
	.globl	_ITM_beginTransaction
	.type	_ITM_beginTransaction, @function
	.p2align 4
_ITM_beginTransaction:
	.cfi_startproc
	endbr64
	leaq	8(%rsp), %rax		/* cfa: rsp once we have returned */
	subq	$72, %rsp		/* 64-byte record, rsp 16-aligned */
	.cfi_adjust_cfa_offset 72
	movq	%rax, 0(%rsp)
	movq	%rbx, 8(%rsp)
	movq	%rbp, 16(%rsp)
	movq	%r12, 24(%rsp)
	movq	%r13, 32(%rsp)
	movq	%r14, 40(%rsp)
	movq	%r15, 48(%rsp)
	movq	72(%rsp), %rax		/* our return address */
	movq	%rax, 56(%rsp)
	movq	%rsp, %rsi		/* edi still holds the properties */
	call	ltx_itm_begin
	addq	$72, %rsp
	.cfi_adjust_cfa_offset -72
	ret
	.cfi_endproc
	.size	_ITM_beginTransaction, .-_ITM_beginTransaction

/*
 * ltx_itm_longjmp(uint32_t actions, const struct ltx_itm_jmpbuf *jb):
 * return from the _ITM_beginTransaction call that saved jb once more, with
 * actions in eax.  Noreturn.  jb lives in the thread's state, not on the
 * stack being unwound, so reading it after moving rsp is safe.
 */
	.globl	ltx_itm_longjmp
	.hidden	ltx_itm_longjmp
	.type	ltx_itm_longjmp, @function
	.p2align 4
ltx_itm_longjmp:
	.cfi_startproc
	endbr64
	movl	%edi, %eax
	movq	8(%rsi), %rbx
	movq	16(%rsi), %rbp
	movq	24(%rsi), %r12
	movq	32(%rsi), %r13
	movq	40(%rsi), %r14
	movq	48(%rsi), %r15
	movq	0(%rsi), %rsp
	jmp	*56(%rsi)
	.cfi_endproc
	.size	ltx_itm_longjmp, .-ltx_itm_longjmp

	.section .note.GNU-stack, "", @progbits
