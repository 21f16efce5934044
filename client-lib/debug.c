/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Debug output of libtraced, on only when TRACED_DEBUG is set: the
 * library never prints otherwise.  Formats into a stack buffer and
 * writes it with one write(2), keeping errno, so it may run anywhere.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

int lib_debug;

void
lib_debugx(const char *fmt, ...)
{
	char buf[512];
	int saved_errno = errno, n, m;
	va_list ap;

	n = snprintf(buf, sizeof(buf), "libtraced[%d]: ", (int)getpid());
	if (n < 0 || (size_t)n >= sizeof(buf))
		n = 0;
	va_start(ap, fmt);
	m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	n += m;
	if ((size_t)n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	(void)!write(STDERR_FILENO, buf, (size_t)n);
	errno = saved_errno;
}
