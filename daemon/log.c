/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Logging for traced, OpenBSD style: log_warn adds strerror(errno),
 * log_warnx does not, fatal/fatalx exit.  Every line goes to stderr
 * with one write(2), so lines of different threads never mix.  Under
 * systemd (JOURNAL_STREAM set) lines carry "<N>" priority prefixes
 * that journald turns into levels; otherwise they carry the time.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "traced.h"

int log_verbose;
static int log_journal;

void
log_init(int foreground)
{
	(void)foreground;
	log_journal = getenv("JOURNAL_STREAM") != NULL;
}

static void
log_vwrite(int prio, const char *fmt, va_list ap, const char *err)
{
	char buf[1024];
	size_t n = 0;
	int m;

	if (log_journal) {
		m = snprintf(buf, sizeof(buf), "<%d>", prio);
	} else {
		struct timespec ts;
		struct tm tm;

		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		m = (int)strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S ",
		    &tm);
		m += snprintf(buf + m, sizeof(buf) - (size_t)m, "traced: ");
	}
	n = m > 0 ? (size_t)m : 0;
	m = vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	if (m > 0)
		n += (size_t)m;
	if (n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	if (err != NULL) {
		m = snprintf(buf + n, sizeof(buf) - n, ": %s", err);
		if (m > 0)
			n += (size_t)m;
		if (n > sizeof(buf) - 2)
			n = sizeof(buf) - 2;
	}
	buf[n++] = '\n';
	(void)!write(STDERR_FILENO, buf, n);
}

void
log_warn(const char *fmt, ...)
{
	const char *err = strerror(errno);
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_WARNING, fmt, ap, err);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_WARNING, fmt, ap, NULL);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_INFO, fmt, ap, NULL);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	if (!log_verbose)
		return;
	va_start(ap, fmt);
	log_vwrite(LOG_DEBUG, fmt, ap, NULL);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	const char *err = strerror(errno);
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_CRIT, fmt, ap, err);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_CRIT, fmt, ap, NULL);
	va_end(ap);
	exit(1);
}
