/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * What libtraced says on standard error: debug output, only when
 * TRACED_DEBUG is set, and the one exception to its silence,
 * lib_warnx(), for a setting in the environment that it refuses (the
 * user asked for something the library will not do, and must hear it).
 * Formats into a stack buffer and writes it with one write(2), keeping
 * errno, so it may run anywhere.  lib_write_line() is that writer,
 * shared with the log backend (log.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

int lib_debug;

/*
 * Format 'fmt' after the 'n' bytes already in buf (a prefix) and write
 * the line, with a newline, to stderr with one write(2) (retried if a
 * signal or a short write cuts it).  A line longer than size - 1 bytes
 * is cut and ends with "...".  Keeps errno.
 */
void
lib_write_line(char *buf, size_t size, size_t n, const char *fmt,
    va_list ap)
{
	int saved_errno = errno, m;
	size_t len, off;
	ssize_t w;

	if (n >= size - 1)
		n = 0;
	m = vsnprintf(buf + n, size - n - 1, fmt, ap);
	len = n + (m > 0 ? (size_t)m : 0);
	if (len > size - 2) {
		len = size - 2;
		memcpy(buf + len - 3, "...", 3);
	}
	buf[len++] = '\n';
	for (off = 0; off < len; off += (size_t)w) {
		w = write(STDERR_FILENO, buf + off, len - off);
		if (w == -1 && errno == EINTR)
			w = 0;
		else if (w <= 0)
			break;
	}
	errno = saved_errno;
}

static void
lib_vsay(const char *fmt, va_list ap)
{
	char buf[1024];
	int n;

	n = snprintf(buf, sizeof(buf), "libtraced[%d]: ", (int)getpid());
	lib_write_line(buf, sizeof(buf), n > 0 ? (size_t)n : 0, fmt, ap);
}

void
lib_debugx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lib_vsay(fmt, ap);
	va_end(ap);
}

/*
 * Called at most once per setting, when the library starts, never on
 * the tracing path.
 */
void
lib_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lib_vsay(fmt, ap);
	va_end(ap);
}
