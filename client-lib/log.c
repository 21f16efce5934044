/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The log backend's printer, and the clock of the fast path compiled in
 * strict ISO C.  traced_log() is what the code tracegen writes for
 * --backends log calls when an event is on: QEMU's log backend, one
 * line per event on stderr, "TID@SECONDS.MICROSECONDS:NAME FORMATTED".
 * The line is built on the stack and written with one write(2), so
 * lines of different threads do not mix and no stdio lock is taken.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* Longest line printed; a longer one is cut and ends with "...". */
#define LOG_LINE_MAX	4096

void
traced_log(const char *fmt, ...)
{
	char buf[LOG_LINE_MAX + 1];
	struct timespec ts;
	int saved_errno = errno, n;
	va_list ap;

	clock_gettime(CLOCK_REALTIME, &ts);
	n = snprintf(buf, sizeof(buf), "%d@%lld.%06ld:", (int)gettid(),
	    (long long)ts.tv_sec, ts.tv_nsec / 1000);
	errno = saved_errno;
	va_start(ap, fmt);
	lib_write_line(buf, sizeof(buf), n > 0 ? (size_t)n : 0, fmt, ap);
	va_end(ap);
}

uint64_t
traced_clock_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
