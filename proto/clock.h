/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Which clock traced timestamps use.  The TSC costs about a third of
 * the vDSO clock_gettime() here, so it is used wherever it is invariant
 * (constant rate, not stopping in deep C-states: CPUID 0x80000007
 * EDX bit 8), unless TRACED_CLOCK=monotonic says otherwise.  libtraced
 * and the daemon decide with this same function, so every process of a
 * boot uses one clock and their traces merge.  The daemon calibrates
 * the TSC against CLOCK_MONOTONIC and describes it in the CTF metadata.
 * Proto: pure, any thread.
 */
#ifndef TRACED_PROTO_CLOCK_H
#define TRACED_PROTO_CLOCK_H

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* 1 if the TSC runs at a constant rate and never stops. */
static inline int
traced_tsc_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
	{
		unsigned a, b, c, d;

		if (__get_cpuid(0x80000007, &a, &b, &c, &d) &&
		    (d & (1u << 8)) != 0)
			return 1;
	}
#endif
	return 0;
}

/* 1 if this process should timestamp with the TSC. */
static inline int
traced_clock_use_tsc(void)
{
	/* secure_getenv(): a setuid program ignores its caller's wish. */
	const char *env = secure_getenv("TRACED_CLOCK");

	if (env != NULL && strcmp(env, "monotonic") == 0)
		return 0;
	return traced_tsc_invariant();
}

#endif /* TRACED_PROTO_CLOCK_H */
