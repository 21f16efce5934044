/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The per-uid quota on the trace directory (trace-dir-bytes-per-uid):
 * what one user's programs may keep on the trace disk, so that a flood
 * fills that user's share, not the disk every other user and root
 * trace to (issue 25: one user wrote 12 GB in 12 s).
 *
 * DESIGN
 *
 * What a uid holds is measured two ways, added: the bytes its session
 * directories in the trace directory held at the last scan, and the
 * bytes the writers wrote for its sessions since that scan began
 * (quota_written(), from each chunk's books: exact and at once).  The
 * scan, every QUOTA_SCAN_NS on the files thread, learns what the
 * writers cannot: traces of earlier runs (the index knows their
 * directories and uids) and traces the user deleted.  Bytes written
 * while a scan runs may be counted twice until the next one: the
 * measure errs towards the quota.  Session directories are the
 * daemon's (owned by its user), so a uid's are found through the
 * sessions and the index, never by owner.
 *
 * A uid over its quota has its sessions' events counted as lost to
 * the write error EDQUOT ("Disk quota exceeded") instead of written:
 * the drain still empties their rings, so its programs never block,
 * and every event is accounted for.  Writing resumes once a scan finds
 * it under QUOTA_RESUME_PCT of the quota (its traces deleted, or the
 * quota raised).  Root and the daemon's own user have no quota, as no
 * other per-uid limit.  0, the default, is a quarter of the file system
 * that holds the trace directory.
 *
 * Loop thread, but for the scan's work().
 */
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "dclock.h"
#include "index.h"
#include "intake.h"
#include "limits.h"
#include "log.h"
#include "outdir.h"
#include "quota.h"
#include "session.h"

#define QUOTA_SCAN_NS		(10ull * 1000000000u)
#define QUOTA_RESUME_PCT	90

/* A uid with sessions, or with traces in the trace directory. */
struct quota_uid {
	struct quota_uid *next;
	uid_t		 uid;
	uint64_t	 scanned;	/* its directories, at the last scan */
	uint64_t	 written;	/* by the writers, since start */
	uint64_t	 mark;		/* written, when that scan began */
	uint64_t	 next_mark;	/* written, when the running one began */
	int		 over;		/* its events are not written */
};

/* One directory to measure, and what it held. */
struct quota_dir {
	uid_t		 uid;
	char		*path;
	uint64_t	 bytes;
};

/*
 * The scan: QUOTA_SCAN_SLICE directories a job, the next job queued by
 * done(), so that the files thread's other work takes turns with it.
 * Its jobs are queued as QUOTA_SCAN_UID's, not root's: root's own
 * sessions' metadata does not wait for them either.
 */
#define QUOTA_SCAN_SLICE	256
#define QUOTA_SCAN_UID		((uid_t)-2)

struct scan_job {
	struct intake_job j;
	struct quota_dir *dirs;
	size_t		 n, cap, next;	/* dirs[next..n) are left */
	char		*prefix;	/* the trace directory, "/" ended */
};

static struct {
	struct quota_uid *uids;
	uint64_t	 fs_quarter;	/* of the trace directory's file system */
	uint64_t	 next_scan;	/* ns, CLOCK_MONOTONIC */
	int		 scanning;
} qt;

static struct quota_uid *
quota_find(uid_t uid, int create)
{
	struct quota_uid *q;

	for (q = qt.uids; q != NULL; q = q->next)
		if (q->uid == uid)
			return q;
	if (!create || (q = calloc(1, sizeof(*q))) == NULL)
		return NULL;
	q->uid = uid;
	q->next = qt.uids;
	qt.uids = q;
	return q;
}

/* A uid's quota in bytes now. */
uint64_t
quota_limit(void)
{
	uint64_t l = cfg.limit[LIMIT_TRACE_BYTES];

	return l != 0 ? l : qt.fs_quarter;
}

static uint64_t
quota_held(const struct quota_uid *q)
{
	return q->scanned + (q->written - q->mark);
}

static void
quota_sessions_publish(uid_t uid)
{
	struct session *s;

	TAILQ_FOREACH(s, &sessions, entry)
		if (s->uid == uid)
			session_quota_changed(s);
}

static void
quota_check(struct quota_uid *q)
{
	uint64_t held = quota_held(q), limit = quota_limit();

	if (limit == 0 || limits_privileged(q->uid))
		return;
	if (!q->over && held > limit) {
		q->over = 1;
		log_warnx("uid %u: its sessions hold %llu MiB in the trace "
		    "directory %s, over its quota of %llu MiB "
		    "(trace-dir-bytes-per-uid%s): their events are counted "
		    "as lost ('Disk quota exceeded') until it holds less "
		    "than %d %% of it: delete its traces, or raise the quota "
		    "in traced.conf(5) or with traced --set "
		    "trace-dir-bytes-per-uid=BYTES", (unsigned)q->uid,
		    (unsigned long long)(held >> 20), outdir_path(),
		    (unsigned long long)(limit >> 20),
		    cfg.limit[LIMIT_TRACE_BYTES] == 0 ? ", by default a "
		    "quarter of the file system" : "", QUOTA_RESUME_PCT);
		quota_sessions_publish(q->uid);
	} else if (q->over && held <= limit / 100 * QUOTA_RESUME_PCT) {
		q->over = 0;
		log_info("uid %u: its sessions hold %llu MiB in the trace "
		    "directory, under its quota of %llu MiB again: their "
		    "events are written again", (unsigned)q->uid,
		    (unsigned long long)(held >> 20),
		    (unsigned long long)(limit >> 20));
		quota_sessions_publish(q->uid);
	}
}

/* Is uid over its quota (its events are not to be written)? */
int
quota_over(uid_t uid)
{
	struct quota_uid *q = quota_find(uid, 0);

	return q != NULL && q->over;
}

/* The writers wrote 'bytes' for a session of uid. */
void
quota_written(uid_t uid, uint64_t bytes)
{
	struct quota_uid *q;

	if (bytes == 0 || limits_privileged(uid) ||
	    (q = quota_find(uid, 1)) == NULL)
		return;
	q->written += bytes;
	if (!q->over)
		quota_check(q);
}

/*
 * The trace directory is new (start, trace-file set, reload): the
 * default quota follows its file system, and it is scanned soon.
 */
void
quota_trace_dir_changed(void)
{
	struct statvfs sv;

	if (fstatvfs(outdir_fd(), &sv) == 0)
		qt.fs_quarter = (uint64_t)sv.f_blocks * sv.f_frsize / 4;
	qt.next_scan = 0;
}

/* ---- the scan ------------------------------------------------------- */

/* The bytes the files of directory fd use, and of its subdirectories
 * 'depth' levels down. */
static uint64_t
quota_du(int fd, int depth)
{
	struct dirent *e;
	struct stat st;
	uint64_t bytes = 0;
	DIR *d;
	int sub;

	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ==
		    -1)
			continue;
		if (S_ISREG(st.st_mode))
			bytes += (uint64_t)st.st_blocks * 512;
		else if (S_ISDIR(st.st_mode) && depth > 0 &&
		    (sub = openat(dirfd(d), e->d_name, O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) != -1)
			bytes += quota_du(sub, depth - 1);
	}
	closedir(d);
	return bytes;
}

static void
scan_work(struct intake_job *j)
{
	struct scan_job *sj = (struct scan_job *)j;
	size_t end = sj->next + QUOTA_SCAN_SLICE;
	int fd;

	if (end > sj->n)
		end = sj->n;
	for (; sj->next < end; sj->next++) {
		fd = open(sj->dirs[sj->next].path, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		/* A session directory and its functions/ */
		sj->dirs[sj->next].bytes = fd == -1 ? 0 : quota_du(fd, 1);
	}
}

static void
scan_free(struct scan_job *sj)
{
	size_t i;

	for (i = 0; i < sj->n; i++)
		free(sj->dirs[i].path);
	free(sj->dirs);
	free(sj->prefix);
	free(sj);
}

static void
scan_done(struct intake_job *j)
{
	struct scan_job *sj = (struct scan_job *)j;
	struct quota_uid *q;
	size_t i;

	if (sj->next < sj->n && intake_accepting()) {
		intake_submit(&sj->j);		/* the next slice */
		return;
	}
	for (q = qt.uids; q != NULL; q = q->next)
		q->scanned = 0;
	for (i = 0; i < sj->n; i++)
		if ((q = quota_find(sj->dirs[i].uid, 1)) != NULL)
			q->scanned += sj->dirs[i].bytes;
	for (q = qt.uids; q != NULL; q = q->next) {
		q->mark = q->next_mark;
		quota_check(q);
	}
	scan_free(sj);
	qt.scanning = 0;
	qt.next_scan = now_ns(CLOCK_MONOTONIC) + QUOTA_SCAN_NS;
}

/* Add dir (of uid) to the scan, if it is in the trace directory. */
static void
scan_add(void *arg, uid_t uid, const char *dir)
{
	struct scan_job *sj = arg;
	struct quota_dir *d;
	size_t len = strlen(sj->prefix);

	if (limits_privileged(uid) || strncmp(dir, sj->prefix, len) != 0 ||
	    strchr(dir + len, '/') != NULL)
		return;
	if (sj->n == sj->cap) {
		size_t cap = sj->cap == 0 ? 64 : sj->cap * 2;

		if ((d = reallocarray(sj->dirs, cap, sizeof(*d))) == NULL)
			return;
		sj->dirs = d;
		sj->cap = cap;
	}
	if ((sj->dirs[sj->n].path = strdup(dir)) == NULL)
		return;
	sj->dirs[sj->n].uid = uid;
	sj->dirs[sj->n].bytes = 0;
	sj->n++;
}

/*
 * Now and then (the loop's timer): measure what each uid's session
 * directories hold, on the files thread.  Loop thread.
 */
void
quota_tick(void)
{
	struct scan_job *sj;
	struct quota_uid *q;
	struct session *s;
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	if (qt.scanning || now < qt.next_scan || !intake_accepting() ||
	    outdir_fd() == -1)
		return;
	if (qt.fs_quarter == 0)
		quota_trace_dir_changed();
	if ((sj = calloc(1, sizeof(*sj))) == NULL ||
	    asprintf(&sj->prefix, "%s/", outdir_path()) == -1) {
		free(sj);
		qt.next_scan = now + QUOTA_SCAN_NS;
		return;
	}
	TAILQ_FOREACH(s, &sessions, entry)
		if (s->dir != NULL)
			scan_add(sj, s->uid, s->dir);
	(void)index_ended_dirs(scan_add, sj);
	for (q = qt.uids; q != NULL; q = q->next)
		q->next_mark = q->written;
	sj->j.uid = QUOTA_SCAN_UID;
	sj->j.files = 1;
	sj->j.work = scan_work;
	sj->j.done = scan_done;
	qt.scanning = 1;
	intake_submit(&sj->j);
}

/*
 * For 'tracectl info trace': each uid with a quota that holds
 * something in the trace directory, its bytes, and whether it is over.
 */
void
quota_foreach(void (*cb)(void *, uid_t, uint64_t, int), void *arg)
{
	const struct quota_uid *q;

	for (q = qt.uids; q != NULL; q = q->next)
		if (!limits_privileged(q->uid) && quota_held(q) > 0)
			cb(arg, q->uid, quota_held(q), q->over);
}

void
quota_fini(void)
{
	struct quota_uid *q;

	while ((q = qt.uids) != NULL) {
		qt.uids = q->next;
		free(q);
	}
}
