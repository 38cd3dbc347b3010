/* SPDX-License-Identifier: MIT */
/* x86-64 restart point of TM_ATOMIC: tm__block_enter and its resume. */

/*
 * struct tm__atomic (<ltx/tm.h>; api/atomic.c checks the offsets) holds
 * the restart point: the stack pointer at offset 8 (the caller's rsp once
 * enter has returned, which is also the checkpoint's sp: struct
 * ltx_checkpoint heads the block; stored with LTX_CHECKPOINT_BARE, bit 0,
 * set: the block's checkpoint has no ops), the rest at offset 24 (tm__buf):
 *   0 rbx   8 rbp  16 r12  24 r13  32 r14  40 r15  48 rip (enter's return)
 *
 * tm__block_enter is declared returns_twice, so the compiler keeps nothing
 * but the SysV callee-saved registers across it, as across setjmp: those
 * and the stack pointer are the whole restart point.  It saves them, then
 * begins the block: the outermost one (the descriptor has no checkpoint)
 * forgets the last unwind (rt/unwind.h, ltx_unwind_forget) and takes the
 * checkpoint, and keeps the descriptor in the block (its checkpoint's
 * ops, unused: a bare checkpoint) for the block's end; any other case is
 * ltx_block_begin_slow's (api/atomic.c),
 * whose return is enter's.  Its answer: non-NULL (the descriptor) to run
 * the body, NULL to skip it.  Saving in the block itself, not in a copy:
 * the block's frame outlives every restart of it.  No endbr64: the
 * library is not built for indirect-branch tracking (neither is itm's
 * checkpoint), and every instruction here is paid per block.
 *
 * Synchronization: the descriptor's checkpoint is written by its own
 * thread only (tx/desc.h); a signal handler that reads it runs on this
 * thread, between two instructions, and sees it NULL or this block.
 */
#include "api/atomic-offsets.h"

#define SP 8
#define BUF 24

	.text
	.globl	tm__block_enter
	.type	tm__block_enter, @function
	.p2align 4
tm__block_enter:
	.cfi_startproc
	movq	%rbx, BUF+0(%rdi)
	movq	%rbp, BUF+8(%rdi)
	movq	%r12, BUF+16(%rdi)
	movq	%r13, BUF+24(%rdi)
	movq	%r14, BUF+32(%rdi)
	movq	%r15, BUF+40(%rdi)
	leaq	9(%rsp), %rax		/* 8(%rsp) | LTX_CHECKPOINT_BARE */
	movq	%rax, SP(%rdi)
	movq	(%rsp), %rax
	movq	%rax, BUF+48(%rdi)
	movq	tm__self_v4@gottpoff(%rip), %rax	/* ltx_self */
	movq	%fs:(%rax), %rax
	cmpq	$0, LTX_TX_CHECKPOINT(%rax)
	jne	1f
	movq	ltx_unwind_sp@gottpoff(%rip), %rdx
	movq	$0, %fs:(%rdx)
	movq	%rax, 0(%rdi)		/* the block's descriptor (atomic.c) */
	movq	%rdi, LTX_TX_CHECKPOINT(%rax)
	ret
1:	movq	%rax, %rsi
	jmp	ltx_block_begin_slow
	.cfi_endproc
	.size	tm__block_enter, .-tm__block_enter

/*
 * ltx_atomic_resume(struct tm__atomic *a): return from the
 * tm__block_enter call that saved a's restart point once more.  Noreturn.
 * The stack is put back as it was at that call, with its return address
 * pushed again, and the callee-saved registers restored; then
 * ltx_atomic_landed(a) runs as if enter had tail-called it (it ends the
 * failed transaction outside any signal handler), and its return is
 * enter's.  a lives in the block's frame, above the restored stack
 * pointer: the push cannot overwrite it.
 */
	.globl	ltx_atomic_resume
	.hidden	ltx_atomic_resume
	.type	ltx_atomic_resume, @function
	.p2align 4
ltx_atomic_resume:
	.cfi_startproc
	movq	SP(%rdi), %rax
	leaq	-1(%rax), %rsp		/* LTX_CHECKPOINT_BARE off */
	pushq	BUF+48(%rdi)
	movq	BUF+0(%rdi), %rbx
	movq	BUF+8(%rdi), %rbp
	movq	BUF+16(%rdi), %r12
	movq	BUF+24(%rdi), %r13
	movq	BUF+32(%rdi), %r14
	movq	BUF+40(%rdi), %r15
	jmp	ltx_atomic_landed
	.cfi_endproc
	.size	ltx_atomic_resume, .-ltx_atomic_resume

	.section .note.GNU-stack, "", @progbits
