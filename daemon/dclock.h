/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The daemon's clocks (dclock.c): now, in nanoseconds of a POSIX clock
 * or in the ticks a session stamps its events with, and the clocks a
 * session's metadata may describe (CLOCK_MONOTONIC and, where it is
 * invariant, the TSC, calibrated once at start).  Daemon-internal;
 * dclock_setup() once at start, the rest from any thread.
 */
#ifndef TRACED_DAEMON_DCLOCK_H
#define TRACED_DAEMON_DCLOCK_H

#include <stdint.h>
#include <time.h>

#define DCLOCK_MONO	0
#define DCLOCK_TSC	1

/* A clock as CTF describes it: realtime = offset_s + (offset + t) / freq. */
struct dclock {
	const char	*name;		/* "monotonic", "tsc" */
	uint8_t		 uuid[16];	/* per boot: sessions merge */
	uint64_t	 freq;		/* ticks per second */
	int64_t		 offset_s;
	uint64_t	 offset;	/* ticks */
};

void	dclock_setup(void);
const struct dclock *dclock_get(int dclock);
int	dclock_have_tsc(void);
uint64_t now_ns(int clock);
uint64_t now_ticks(int dclock);

#endif /* TRACED_DAEMON_DCLOCK_H */
