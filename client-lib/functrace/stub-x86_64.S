/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The two ways into function tracing from a traced program (x86-64,
 * System V ABI).
 *
 * ft_entry_stub is what a patched site calls, through the trampoline
 * near its object (patch.c): the site is the first instruction of the
 * function (after endbr64, if any), so on entry
 *
 *	[rsp]		the end of the site, inside the traced function
 *	[rsp + 8]	the traced function's return address: its slot
 *
 * It keeps every register that can carry an argument (rdi, rsi, rdx,
 * rcx, r8, r9, rax for varargs, r10 for a static chain) and calls
 * ft_enter(site end, slot), which may replace the return address in the
 * slot with ft_exit_stub.  A traced function that returns then lands in
 * ft_exit_stub with rsp = slot + 8: it keeps the return registers (rax,
 * rdx) and jumps wherever ft_exit(slot) says the function was to
 * return.
 *
 * The C side is built with -mgeneral-regs-only, so it leaves vector and
 * x87 registers alone.  While a tracer of the program's own is on
 * (ft_full), its callbacks may use them: both stubs then save the whole
 * x87/SSE state with fxsave and realign the stack.
 *
 * ft_exit_stub has no caller to unwind to: its CFI says the return
 * address is undefined, so an unwinder (a backtrace, pthread_exit's
 * forced unwind) stops there instead of reading garbage.  The nop in
 * front of it puts the address an unwinder looks up (return address
 * minus one) inside that CFI.
 */
#if defined(__x86_64__)

	.text

	.globl	ft_entry_stub
	.hidden	ft_entry_stub
	.type	ft_entry_stub, @function
	.p2align 4
ft_entry_stub:
	.cfi_startproc
	cmpb	$0, ft_full(%rip)
	jne	.Lentry_full
	pushq	%rax
	.cfi_adjust_cfa_offset 8
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	pushq	%rdx
	.cfi_adjust_cfa_offset 8
	pushq	%rcx
	.cfi_adjust_cfa_offset 8
	pushq	%r8
	.cfi_adjust_cfa_offset 8
	pushq	%r9
	.cfi_adjust_cfa_offset 8
	pushq	%r10
	.cfi_adjust_cfa_offset 8
	movq	64(%rsp), %rdi		/* the site's end */
	leaq	72(%rsp), %rsi		/* the return address slot */
	call	ft_enter
	popq	%r10
	.cfi_adjust_cfa_offset -8
	popq	%r9
	.cfi_adjust_cfa_offset -8
	popq	%r8
	.cfi_adjust_cfa_offset -8
	popq	%rcx
	.cfi_adjust_cfa_offset -8
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	popq	%rax
	.cfi_adjust_cfa_offset -8
	ret

.Lentry_full:
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	pushq	%rax
	pushq	%rdi
	pushq	%rsi
	pushq	%rdx
	pushq	%rcx
	pushq	%r8
	pushq	%r9
	pushq	%r10
	andq	$-64, %rsp
	subq	$512, %rsp
	fxsave64 (%rsp)
	movq	8(%rbp), %rdi
	leaq	16(%rbp), %rsi
	call	ft_enter
	fxrstor64 (%rsp)
	leaq	-64(%rbp), %rsp
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rcx
	popq	%rdx
	popq	%rsi
	popq	%rdi
	popq	%rax
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	ft_entry_stub, . - ft_entry_stub

	.globl	ft_exit_stub
	.hidden	ft_exit_stub
	.type	ft_exit_stub, @function
	.p2align 4
	.cfi_startproc
	.cfi_undefined rip
	nop
ft_exit_stub:
	cmpb	$0, ft_full(%rip)
	jne	.Lexit_full
	pushq	%rax
	pushq	%rdx
	leaq	8(%rsp), %rdi		/* the slot: rsp on arrival - 8 */
	call	ft_exit
	movq	%rax, %r11
	popq	%rdx
	popq	%rax
	jmp	*%r11

.Lexit_full:
	pushq	%rbp
	movq	%rsp, %rbp
	pushq	%rax
	pushq	%rdx
	andq	$-64, %rsp
	subq	$512, %rsp
	fxsave64 (%rsp)
	movq	%rbp, %rdi		/* the slot: rbp = rsp on arrival - 8 */
	call	ft_exit
	movq	%rax, %r11
	fxrstor64 (%rsp)
	leaq	-16(%rbp), %rsp
	popq	%rdx
	popq	%rax
	popq	%rbp
	jmp	*%r11
	.cfi_endproc
	.size	ft_exit_stub, . - ft_exit_stub

	/*
	 * Calls out of the hot path into code built without
	 * -mgeneral-regs-only (the ring's slow paths, libc): with the
	 * argument and return registers xmm0-7 kept, which that code may
	 * use (glibc's memset does).  ft_fp_call(fn, a, b, c) returns
	 * fn(a, b, c).
	 */
	.globl	ft_fp_call
	.hidden	ft_fp_call
	.type	ft_fp_call, @function
	.p2align 4
ft_fp_call:
	.cfi_startproc
	subq	$136, %rsp
	.cfi_adjust_cfa_offset 136
	movdqu	%xmm0, 0(%rsp)
	movdqu	%xmm1, 16(%rsp)
	movdqu	%xmm2, 32(%rsp)
	movdqu	%xmm3, 48(%rsp)
	movdqu	%xmm4, 64(%rsp)
	movdqu	%xmm5, 80(%rsp)
	movdqu	%xmm6, 96(%rsp)
	movdqu	%xmm7, 112(%rsp)
	movq	%rdi, %rax
	movq	%rsi, %rdi
	movq	%rdx, %rsi
	movq	%rcx, %rdx
	call	*%rax
	movdqu	0(%rsp), %xmm0
	movdqu	16(%rsp), %xmm1
	movdqu	32(%rsp), %xmm2
	movdqu	48(%rsp), %xmm3
	movdqu	64(%rsp), %xmm4
	movdqu	80(%rsp), %xmm5
	movdqu	96(%rsp), %xmm6
	movdqu	112(%rsp), %xmm7
	addq	$136, %rsp
	.cfi_adjust_cfa_offset -136
	ret
	.cfi_endproc
	.size	ft_fp_call, . - ft_fp_call

#endif /* __x86_64__ */

	.section .note.GNU-stack, "", @progbits
