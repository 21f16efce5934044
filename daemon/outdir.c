/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Where traces go: the trace directory, and the daemon-wide state of
 * its output.
 *
 * The directory is opened and checked once (fsdir.c), and every
 * session makes its directory through its descriptor, so the name made
 * is in the directory that was checked.  'tracectl trace-file set'
 * moves it, and is remembered across restarts in
 * <state-dir>/trace-dir (unless --trace-dir says otherwise); 'set
 * default' forgets it.  A trace directory deleted while tracing is
 * made again (outdir_check()); what the sessions had written there is
 * counted as lost by them (meta.c), and the total kept here for the
 * flush that must not say "on disk" (outdir_deleted()).
 *
 * Also kept here, for every session: whether output is paused
 * (trace-file off: every event off, rules kept) and the flush
 * generation a 'trace-file flush' waits for.
 *
 * Moving the sessions themselves is theirs to do (meta.c,
 * sessions_trace_dir_set()); this file only knows directories.
 * Loop thread only, but for the file that keeps the trace directory
 * across restarts, written on the files thread.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsdir.h"
#include "index.h"
#include "intake.h"
#include "log.h"
#include "outdir.h"
#include "text.h"

#define TRACE_DIR_FILE	"trace-dir"	/* in the state directory */

static struct {
	int		 fd;		/* the trace directory; -1: none */
	char		*path;		/* owned: where traces go now */
	char		*dflt;		/* owned: without 'trace-file set' */
	int		 state_dirfd;	/* borrowed: the state directory */
	const char	*state_dir;	/* borrowed: its path, for messages */
	int		 paused;	/* trace-file off */
	uint64_t	 flush_gen;	/* the latest trace-file flush */
	uint64_t	 deleted;	/* events written, then deleted with
					   their directory */
	int		 failing;	/* cannot make it again: said */
} od = { .fd = -1, .state_dirfd = -1 };

/*
 * Keep the directory of 'tracectl trace-file set' for the next start
 * (path), or forget it (NULL): <state-dir>/trace-dir, one line, made
 * beside, fsync()ed and renamed over.  Logged on failure.  On the
 * files thread (outdir_remember()): behind another user's writes the
 * fsync took 1.7 s, and on the loop thread every client and tracectl
 * waited for it.
 */
static void
outdir_remember_now(const char *path)
{
	int fd;

	if (path == NULL) {
		if (unlinkat(od.state_dirfd, TRACE_DIR_FILE, 0) == -1 &&
		    errno != ENOENT)
			log_warn("%s/%s", od.state_dir, TRACE_DIR_FILE);
		return;
	}
	(void)unlinkat(od.state_dirfd, TRACE_DIR_FILE ".tmp", 0);
	fd = openat(od.state_dirfd, TRACE_DIR_FILE ".tmp", O_WRONLY |
	    O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd == -1 || dprintf(fd, "%s\n", path) < 0 || fsync(fd) == -1 ||
	    renameat(od.state_dirfd, TRACE_DIR_FILE ".tmp", od.state_dirfd,
	    TRACE_DIR_FILE) == -1)
		log_warn("%s/%s: the trace directory will not be kept at a "
		    "restart", od.state_dir, TRACE_DIR_FILE);
	if (fd != -1)
		close(fd);
}

struct remember_job {
	struct intake_job j;
	char		*path;		/* owned; NULL: forget */
};

static void
remember_work(struct intake_job *j)
{
	outdir_remember_now(((struct remember_job *)j)->path);
}

static void
remember_done(struct intake_job *j)
{
	free(((struct remember_job *)j)->path);
	free(j);
}

/*
 * outdir_remember_now(path) on the files thread, as a job of the
 * daemon's own (uid 0): those run in the order given, so the last
 * 'trace-file set' is the one kept.  Without the thread (not started,
 * or stopping), here.
 */
static void
outdir_remember(const char *path)
{
	struct remember_job *rj = NULL;

	if (!intake_accepting() || (rj = calloc(1, sizeof(*rj))) == NULL ||
	    (path != NULL && (rj->path = strdup(path)) == NULL)) {
		free(rj);
		outdir_remember_now(path);
		return;
	}
	rj->j.uid = 0;
	rj->j.files = 1;
	rj->j.work = remember_work;
	rj->j.done = remember_done;
	intake_submit(&rj->j);
}

/*
 * The directory 'tracectl trace-file set' gave before the last restart,
 * into buf, or NULL.
 */
static const char *
outdir_remembered(char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = openat(od.state_dirfd, TRACE_DIR_FILE, O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1)
		return NULL;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 1 || buf[0] != '/')
		return NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/*
 * Open the trace directory at start: the one 'trace-file set' chose
 * before a restart, unless the command line gave one
 * (keep_configured), else 'configured', made if missing.  'dflt' is
 * where 'trace-file set default' goes back to.  The state directory
 * (its descriptor and path) must stay open meanwhile.  0, or -1 with
 * the reason in err.
 */
int
outdir_init(int state_dirfd, const char *state_dir, const char *configured,
    int keep_configured, const char *dflt, char *err, size_t errsize)
{
	char kept[PATH_MAX];

	od.state_dirfd = state_dirfd;
	od.state_dir = state_dir;
	outdir_set_default(dflt);
	if (!keep_configured && outdir_remembered(kept, sizeof(kept)) !=
	    NULL && strcmp(kept, configured) != 0) {
		od.fd = fsdir_open(kept, FSDIR_CREATE_NONE, 0750, err,
		    errsize);
		if (od.fd != -1) {
			log_info("traces go to %s, as 'tracectl trace-file "
			    "set' said before the restart ('trace-file set "
			    "default' goes back to %s)", kept, configured);
			if ((od.path = strdup(kept)) == NULL)
				return text_errf(err, errsize, "out of memory");
			return 0;
		}
		log_warnx("'trace-file set' said %s before the restart, but "
		    "%s: traces go to %s", kept, err, configured);
	}
	od.fd = fsdir_open(configured, FSDIR_CREATE_ALL, 0750, err, errsize);
	if (od.fd == -1)
		return -1;
	if ((od.path = strdup(configured)) == NULL)
		return text_errf(err, errsize, "out of memory");
	return 0;
}

/*
 * Where traces go without 'trace-file set' (the command line's, the
 * configuration file's, or the mode's default), as main.c says at
 * start and on SIGHUP.
 */
void
outdir_set_default(const char *dflt)
{
	char *p = strdup(dflt);

	if (p == NULL) {
		log_warn("trace directory default");
		return;
	}
	free(od.dflt);
	od.dflt = p;
}

const char *
outdir_default(void)
{
	return od.dflt != NULL ? od.dflt : "";
}

/*
 * Move the trace output to 'path' ('how': "set", "default", "reload"):
 * open and check it (fsdir.c; its last component is made if missing,
 * and *created says so when not NULL).  'set' is kept across restarts,
 * 'default' forgets that.  The sessions are not moved: the caller does
 * that (sessions_trace_dir_set()).  Returns 0, or -1 with the reason in
 * err and the output where it was.
 */
int
outdir_set(const char *path, const char *how, int *created, char *err,
    size_t errsize)
{
	struct stat st;
	char *p;
	int fd, missing;

	/* Resolved against the daemon's working directory, a remembered
	 * path would mean another directory at a restart (outdir_remembered()).
	 * The command line's or the configuration's (default, reload) is
	 * the user's own, resolved as at start. */
	if (path[0] != '/' && strcmp(how, "set") == 0)
		return text_errf(err, errsize, "'%s' is relative: give an "
		    "absolute path", path);
	missing = lstat(path, &st) == -1 && errno == ENOENT;
	fd = fsdir_open(path, FSDIR_CREATE_LAST, 0750, err, errsize);
	if (fd == -1)
		return -1;
	if (created != NULL)
		*created = missing;
	if (strcmp(how, "set") == 0)
		outdir_remember(path);
	else if (strcmp(how, "default") == 0)
		outdir_remember(NULL);
	if ((p = strdup(path)) == NULL) {
		close(fd);
		return text_errf(err, errsize, "out of memory");
	}
	free(od.path);
	od.path = p;
	if (od.fd != -1)
		close(od.fd);
	od.fd = fd;
	od.failing = 0;		/* a new directory: its loss is news */
	(void)index_trace_dir_set(path, how);	/* logs its failure */
	log_info("trace output now goes to %s (%s)", path, how);
	return 0;
}

/*
 * Was the trace directory deleted while tracing?  Files made in a
 * deleted directory are written and lost, silently, so it is made
 * again (and checked, as at start: no symlink planted in its place is
 * followed).  Returns 1 if it was made again, 0 if it was there, -1 if
 * it is gone and cannot be made (logged once).
 */
int
outdir_check(void)
{
	char err[PATH_MAX + 256];
	int fd;

	if (fsdir_deleted(od.fd) != 1)
		return 0;
	fd = fsdir_open(od.path, FSDIR_CREATE_ALL, 0750, err, sizeof(err));
	if (fd == -1) {
		if (!od.failing)
			log_warnx("the trace directory %s was deleted and "
			    "cannot be made again: %s; events wait in the "
			    "rings", od.path, err);
		od.failing = 1;
		return -1;
	}
	log_warnx("the trace directory %s was deleted while tracing; made "
	    "it again", od.path);
	od.failing = 0;
	intake_close(od.fd, 0);		/* deleted: its last close waits */
	od.fd = fd;
	return 1;
}

/* The trace directory's descriptor: sessions make theirs in it. */
int
outdir_fd(void)
{
	return od.fd;
}

/* Where traces go now. */
const char *
outdir_path(void)
{
	return od.path != NULL ? od.path : "";
}

/* Is output paused (trace-file off)? */
int
outdir_paused(void)
{
	return od.paused;
}

/* Pause output (on), or resume it; the caller updates the sessions. */
void
outdir_pause(int on)
{
	od.paused = on != 0;
}

/* The latest flush generation. */
uint64_t
outdir_flush_gen(void)
{
	return od.flush_gen;
}

/* A new flush: its generation, which every ring is to reach. */
uint64_t
outdir_flush_next(void)
{
	return ++od.flush_gen;
}

/* 'events' written were deleted with their directory since. */
void
outdir_deleted_add(uint64_t events)
{
	od.deleted += events;
}

/* Events deleted with their directory since the daemon started. */
uint64_t
outdir_deleted(void)
{
	return od.deleted;
}

/* At exit. */
void
outdir_fini(void)
{
	if (od.fd != -1)
		close(od.fd);
	od.fd = -1;
	free(od.path);
	free(od.dflt);
	od.path = od.dflt = NULL;
}
