/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Logging for traced, OpenBSD style: log_warn adds strerror(errno),
 * log_warnx does not, fatal/fatalx exit.  Every line goes to stderr
 * whole, in the order logged: by the log thread once log_start() ran
 * (lines copied into its buffer under a lock), else by the thread that
 * logs it, with one write(2).  Under systemd (JOURNAL_STREAM set)
 * lines carry "<N>" priority prefixes that journald turns into levels;
 * otherwise they carry the time.
 */
#include <sys/stat.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
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

static int log_thread_running(void);

/*
 * The log file of a daemon in the background is kept to LOG_FILE_MAX
 * and one older file: the newest lines win.  (Under systemd, journald
 * keeps the log and its own retention.)  The log thread, after it
 * wrote; without it, the loop thread now and then.
 */
static void
log_rotate_now(void)
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

void
log_rotate_check(void)
{
	if (!log_thread_running())
		log_rotate_now();
}

/* The prefix of a line of priority prio into buf: its length. */
static size_t
log_prefix(char *buf, size_t size, int prio)
{
	int m;

	if (log_journal) {
		m = snprintf(buf, size, "<%d>", prio);
	} else {
		struct timespec ts;
		struct tm tm;

		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		m = (int)strftime(buf, size, "%Y-%m-%d %H:%M:%S ", &tm);
		m += snprintf(buf + m, size - (size_t)m, "traced: ");
	}
	return m > 0 ? (size_t)m : 0;
}

/*
 * The writer thread.  A write(2) to the log can wait: a file's write
 * is held back while the machine has too many dirty pages (another
 * user's dd made the loop thread wait 2.8 s for one line, measured),
 * and journald can fall behind.  So once log_start() ran, a line is
 * copied into a buffer under a lock and this thread writes it: no
 * thread of the daemon waits for the disk to log.  When the buffer is
 * full the line is dropped and counted, and the count is logged when
 * there is room again.  fatal() and log_stop() write what is left
 * themselves.
 */
#define LOG_BUF_SIZE	(256u << 10)

static struct {
	pthread_mutex_t	 lock;
	pthread_cond_t	 cond;
	char		*buf;		/* LOG_BUF_SIZE bytes */
	size_t		 len;		/* under lock: bytes to write */
	uint64_t	 dropped;	/* under lock: lines not kept */
	int		 running, stop;
	int		 joining;	/* under lock: a thread joins it */
	pthread_t	 thread;
} lt = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static void
log_write_all(const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = write(STDERR_FILENO, p, n);
		if (w <= 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;		/* nowhere to say it */
		p += w;
		n -= (size_t)w;
	}
}

/* Move what the buffer holds out, and write it.  Called and returns
 * with lt.lock held. */
static void
log_flush_locked(char *out)
{
	size_t n = lt.len;
	uint64_t dropped = lt.dropped;
	char line[160];
	int m;

	if (out != lt.buf)
		memcpy(out, lt.buf, n);
	lt.len = 0;
	lt.dropped = 0;
	pthread_mutex_unlock(&lt.lock);
	log_write_all(out, n);
	if (dropped > 0) {
		n = log_prefix(line, sizeof(line), LOG_WARNING);
		m = snprintf(line + n, sizeof(line) - n, "%llu log lines "
		    "dropped: they came faster than the log took them\n",
		    (unsigned long long)dropped);
		if (m > 0 && (size_t)m < sizeof(line) - n)
			log_write_all(line, n + (size_t)m);
	}
	log_rotate_now();
	pthread_mutex_lock(&lt.lock);
}

static void *
log_main(void *arg)
{
	char *out = arg;

	pthread_mutex_lock(&lt.lock);
	for (;;) {
		while (!lt.stop && lt.len == 0 && lt.dropped == 0)
			pthread_cond_wait(&lt.cond, &lt.lock);
		if (lt.len == 0 && lt.dropped == 0)
			break;		/* stopping, all written */
		log_flush_locked(out);
	}
	pthread_mutex_unlock(&lt.lock);
	return NULL;
}

/*
 * From now on, lines are written by a thread of their own.  After the
 * daemon forked into the background.  0, or -1 (lines are then written
 * by the thread that logs them, as before).
 */
static void log_atexit(void);

int
log_start(void)
{
	static char *out;
	static int atexit_done;
	sigset_t all, old;
	int rc;

	if (lt.running)
		return 0;
	if (lt.buf == NULL && ((lt.buf = malloc(LOG_BUF_SIZE)) == NULL ||
	    (out = malloc(LOG_BUF_SIZE)) == NULL)) {
		free(lt.buf);
		lt.buf = NULL;
		return -1;
	}
	lt.stop = 0;
	/* Signals are the loop's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&lt.thread, NULL, log_main, out);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return -1;
	pthread_setname_np(lt.thread, "traced-log");
	if (!atexit_done)
		atexit_done = atexit(log_atexit) == 0;
	pthread_mutex_lock(&lt.lock);
	lt.running = 1;
	pthread_mutex_unlock(&lt.lock);
	return 0;
}

/*
 * Stop the thread, which writes what it holds first, and wait for it
 * (unless it is the caller, or another thread already waits); then
 * write whatever is still held here.  Lines logged meanwhile are
 * written by their threads.
 */
static void
log_stop_and_write(void)
{
	int join = 0;

	pthread_mutex_lock(&lt.lock);
	lt.stop = 1;
	if (lt.running && !lt.joining &&
	    !pthread_equal(pthread_self(), lt.thread)) {
		lt.joining = join = 1;
		pthread_cond_signal(&lt.cond);
	}
	pthread_mutex_unlock(&lt.lock);
	if (join) {
		pthread_join(lt.thread, NULL);
		pthread_mutex_lock(&lt.lock);
		lt.running = lt.joining = 0;
		pthread_mutex_unlock(&lt.lock);
	}
	pthread_mutex_lock(&lt.lock);
	if (lt.len > 0 || lt.dropped > 0)
		log_flush_locked(lt.buf);
	pthread_mutex_unlock(&lt.lock);
}

/* Write what is left and stop the thread.  At exit. */
void
log_stop(void)
{
	log_stop_and_write();
}

static int
log_thread_running(void)
{
	int running;

	pthread_mutex_lock(&lt.lock);
	running = lt.running && !lt.stop;
	pthread_mutex_unlock(&lt.lock);
	return running;
}

/* Hand a line to the thread; 0, or -1 if there is none (write it). */
static int
log_queue(const char *line, size_t n)
{
	pthread_mutex_lock(&lt.lock);
	if (!lt.running || lt.stop) {
		pthread_mutex_unlock(&lt.lock);
		return -1;
	}
	if (LOG_BUF_SIZE - lt.len >= n) {
		memcpy(lt.buf + lt.len, line, n);
		lt.len += n;
	} else
		lt.dropped++;
	pthread_cond_signal(&lt.cond);
	pthread_mutex_unlock(&lt.lock);
	return 0;
}

/* fatal(): the lines before it first, then it, by this thread. */
static void
log_fatal_write(const char *line, size_t n)
{
	log_stop_and_write();
	log_write_all(line, n);
}

/* exit() without log_stop() (a second signal): what is left. */
static void
log_atexit(void)
{
	log_stop_and_write();
}

static void
log_vwrite(int prio, const char *fmt, va_list ap, const char *err)
{
	char buf[1024];
	size_t n;
	int m;

	n = log_prefix(buf, sizeof(buf), prio);
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
	if (prio == LOG_CRIT)
		log_fatal_write(buf, n);
	else if (log_queue(buf, n) == -1)
		log_write_all(buf, n);
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
