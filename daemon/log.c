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
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define LOG_FILE_MAX	(16u << 20)	/* traced.log, then traced.log.1 */

int log_verbose;
static int log_journal;
static int log_dirfd = -1;		/* the file's directory, if a file */
static const char *log_dir;		/* borrowed: its path, for people */

/*
 * Log to stderr, with journald's "<N>" priority prefixes when stderr
 * is the journal.  JOURNAL_STREAM says so, but it is inherited: a
 * daemon started from a shell inside a service would prefix lines
 * going to a terminal or a file.  It is kept only when stderr is the
 * stream it names (device:inode, systemd.exec(5)).  At start, and
 * again when stderr changes.
 */
void
log_init(void)
{
	const char *v = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (v != NULL && (sscanf(v, "%llu:%llu", &dev, &ino) != 2 ||
	    fstat(STDERR_FILENO, &st) == -1 ||
	    (unsigned long long)st.st_dev != dev ||
	    (unsigned long long)st.st_ino != ino))
		unsetenv("JOURNAL_STREAM");
	log_journal = getenv("JOURNAL_STREAM") != NULL;
}

/* Open traced.log in the directory dirfd (path dir).  fd or -1. */
static int
log_file_open(int dirfd)
{
	return openat(dirfd, "traced.log", O_WRONLY | O_CREAT | O_APPEND |
	    O_NOFOLLOW | O_CLOEXEC, 0640);
}

/*
 * From now on, log to <dir>/traced.log (dirfd, borrowed: it stays
 * open): a daemon in the background.  'say' (or NULL) is written to
 * the old stderr once the file is open, and not if it cannot be.  0,
 * or -1 (errno).
 */
int
log_to_file(int dirfd, const char *dir, const char *say)
{
	int fd;

	if ((fd = log_file_open(dirfd)) == -1)
		return -1;
	if (say != NULL)
		fputs(say, stderr);
	dup2(fd, STDERR_FILENO);
	close(fd);
	log_dirfd = dirfd;
	log_dir = dir;
	log_init();		/* stderr is a file now */
	return 0;
}

/*
 * The log file of a daemon in the background is kept to LOG_FILE_MAX
 * and one older file: the newest lines win.  (Under systemd, journald
 * keeps the log and its own retention.)  Loop thread, now and then.
 */
void
log_rotate_check(void)
{
	struct stat st;
	int fd;

	if (log_dirfd == -1 || fstat(STDERR_FILENO, &st) == -1 ||
	    st.st_size < LOG_FILE_MAX)
		return;
	if (renameat(log_dirfd, "traced.log", log_dirfd,
	    "traced.log.1") == -1)
		return;
	if ((fd = log_file_open(log_dirfd)) == -1)
		return;
	dup2(fd, STDERR_FILENO);
	close(fd);
	log_info("log continued from %s/traced.log.1 (kept to %u MiB and one "
	    "older file)", log_dir, LOG_FILE_MAX >> 20);
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
