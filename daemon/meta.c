/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * A session's trace directory and its metadata:
 *
 *   <trace-dir>/<comm>-<pid>-<session>/metadata, stream-<tid>
 *
 * The directory is made on the session's first provider, ring or
 * MODULE (a process that connects and leaves without describing
 * anything leaves nothing behind).  Each directory a session writes is
 * a trace of its own, with its own uuid.  'trace-file set' moves every
 * session to a new directory under the new trace directory
 * (sessions_trace_dir_set()); a directory deleted while tracing is
 * noticed within a second, what was written there counted as lost
 * ("deleted"), and the session goes on in a new one.
 *
 * The metadata file describes the session's providers.  A stream must
 * never hold an event its metadata does not describe, or the session
 * would be unreadable while info trace counted its events as written:
 * so the metadata is written (on the files thread: formatting it
 * costs as much as its events) before the pipeline may read the
 * session's rings, and each new provider is appended before its events
 * are; meanwhile they wait in the rings.  What the pipeline may do is
 * published in the session's feed (session_drain_publish()).  A
 * metadata file that cannot be written (a full disk) is tried again
 * every 100 ms; once the process is gone, for SESSION_META_GRACE_NS,
 * after which its events are counted as lost to the write error.
 *
 * Loop thread only, but the jobs' work().
 */
#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "ctf.h"
#include "dclock.h"
#include "fsdir.h"
#include "func.h"
#include "index.h"
#include "intake.h"
#include "quota.h"
#include "recorder.h"
#include "limits.h"
#include "log.h"
#include "outdir.h"
#include "pdesc.h"
#include "session.h"
#include "text.h"

static void	session_drain_publish(struct session *s);

static void
sanitize_name(char *dst, size_t size, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < size && src[i] != '\0'; i++) {
		unsigned char c = (unsigned char)src[i];

		dst[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		    c == '-' ? (char)c : '_';
	}
	dst[i] = '\0';
	if (i == 0 || dst[0] == '.')
		snprintf(dst, size, "unknown");
}

/* The classes of providers [from, to) of s, for the CTF writer. */
static struct ctf_event_class *
session_classes(const struct session *s, uint32_t from, uint32_t to,
    size_t *n)
{
	struct ctf_event_class *cls;
	uint32_t i, k;
	size_t total = 0;

	for (i = from; i < to; i++)
		total += s->provs[i]->nevents;
	if ((cls = calloc(total + 1, sizeof(*cls))) == NULL)
		return NULL;
	*n = 0;
	for (i = from; i < to; i++)
		for (k = 0; k < s->provs[i]->nevents; k++) {
			cls[*n].id = s->provs[i]->id_base + k;
			cls[*n].provider = s->provs[i]->name;
			cls[*n].ev = &s->provs[i]->d->tf.events[k];
			(*n)++;
		}
	return cls;
}

/*
 * Writing a session's metadata, on the files thread: formatting it is
 * as long as its events.  The job holds a descriptor of the session's
 * directory of its own; the classes point into the session's providers,
 * which the session keeps (s->intake_out) until done() ran.
 */
struct meta_job {
	struct intake_job j;
	struct session	*s;
	uint64_t	 gen;		/* s->meta_gen at submit */
	int		 dirfd;		/* dup'ed */
	int		 full;		/* the whole file, else an append */
	uint32_t	 upto;		/* providers described once done */
	struct ctf_trace_info info;	/* full only */
	struct ctf_event_class *cls;	/* owned */
	size_t		 ncls;
	int		 err;		/* 0 done, else errno */
};

/* The whole file, written beside and renamed over.  0 or an errno. */
static int
meta_write_full(struct meta_job *mj, const char *text, size_t len)
{
	int fd, err = 0;

	/* Both names are in the session's directory, which only the
	 * daemon can write, and never followed.  A reader never sees
	 * half a file. */
	(void)unlinkat(mj->dirfd, ".metadata.tmp", 0);
	fd = openat(mj->dirfd, ".metadata.tmp", O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd == -1)
		return errno;
	errno = ENOSPC;
	if (write(fd, text, len) != (ssize_t)len || fsync(fd) == -1)
		err = errno;
	close(fd);
	if (err == 0 && renameat(mj->dirfd, ".metadata.tmp", mj->dirfd,
	    "metadata") == -1)
		err = errno;
	if (err != 0)
		(void)unlinkat(mj->dirfd, ".metadata.tmp", 0);
	return err;
}

/* The new classes appended; a failed append is cut back.  0 or errno. */
static int
meta_append(struct meta_job *mj, const char *text, size_t len)
{
	struct stat st;
	int fd, err = 0;

	fd = openat(mj->dirfd, "metadata", O_WRONLY | O_APPEND | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1)
		return errno;
	if (fstat(fd, &st) == -1) {
		err = errno;
		close(fd);
		return err;
	}
	errno = ENOSPC;
	if (write(fd, text, len) != (ssize_t)len || fdatasync(fd) == -1) {
		err = errno;
		(void)!ftruncate(fd, st.st_size);
	}
	close(fd);
	return err;
}

static void
meta_work(struct intake_job *j)
{
	struct meta_job *mj = (struct meta_job *)j;
	char *text;
	long len;

	errno = ENOMEM;
	len = mj->full ? ctf_metadata(&mj->info, mj->cls, mj->ncls, &text) :
	    ctf_metadata_events(mj->cls, mj->ncls, &text);
	if (len < 0) {
		mj->err = errno != 0 ? errno : ENOMEM;
		return;
	}
	mj->err = mj->full ? meta_write_full(mj, text, (size_t)len) :
	    meta_append(mj, text, (size_t)len);
	free(text);
}

static void
meta_done(struct intake_job *j)
{
	struct meta_job *mj = (struct meta_job *)j;
	struct session *s = mj->s;

	intake_close(mj->dirfd, mj->j.uid);	/* maybe deleted */
	free(mj->cls);
	s->intake_out--;
	s->meta_job_out = 0;
	if (mj->gen == s->meta_gen) {	/* else: another directory now */
		if (mj->err == 0) {
			if (s->meta_errno != 0)
				log_info("session %u: metadata of %s written "
				    "after all; its events are written again",
				    s->id, s->dir);
			s->meta_written = 1;
			s->meta_provs = mj->upto;
			s->meta_errno = 0;
		} else {
			if (s->meta_errno != mj->err) {
				errno = mj->err;
				log_warn("session %u: cannot write the "
				    "metadata of %s (tried again every 100 ms; "
				    "until then the events it does not "
				    "describe wait in their rings)", s->id,
				    s->dir);
			}
			s->meta_errno = mj->err;
		}
	}
	free(mj);
	/* More providers meanwhile, or a new directory: again (after a
	 * failure, the housekeeping timer does).  Then the rings that waited
	 * are drained, or the session ends (either may free s). */
	if (!session_meta_ready(s) && s->meta_errno == 0)
		(void)session_metadata_sync(s);
	if (s->meta_waiting && s->meta_errno == 0)
		session_meta_retry(s);
	else
		session_check_done(s);
}

/*
 * Bring the metadata of s up to date with its providers: the whole file
 * the first time in a directory, then what is new, on the files
 * thread.  Until it is, the events it does not describe stay in the
 * rings (session_drain_publish()): a stream must never hold events its
 * metadata does not describe, or the session would be unreadable while
 * info trace counted its events as written.  On failure the
 * housekeeping timer tries again.  Returns 0 when
 * it is up to date, -1 when not yet (a job is out, or could not be
 * made).  Loop thread.
 */
int
session_metadata_sync(struct session *s)
{
	struct meta_job *mj;
	uint32_t from;

	if (s->dirfd == -1)
		return -1;
	if (session_meta_ready(s))
		return 0;
	if (s->meta_job_out)
		return -1;
	if ((mj = calloc(1, sizeof(*mj))) == NULL)
		return -1;
	mj->full = !s->meta_written;
	from = mj->full ? 0 : s->meta_provs;
	mj->cls = session_classes(s, from, s->nprovs, &mj->ncls);
	mj->dirfd = fcntl(s->dirfd, F_DUPFD_CLOEXEC, 0);
	if (mj->cls == NULL || mj->dirfd == -1) {
		if (mj->dirfd != -1)
			close(mj->dirfd);
		free(mj->cls);
		free(mj);
		return -1;
	}
	if (mj->full) {
		memcpy(mj->info.uuid, s->uuid, 16);
		const struct dclock *clk = dclock_get(s->clock);

		memcpy(mj->info.clock_uuid, clk->uuid, 16);
		mj->info.clock_freq = clk->freq;
		mj->info.clock_offset_s = clk->offset_s;
		mj->info.clock_offset = clk->offset;
		mj->info.clock_name = clk->name;
		mj->info.hostname = cfg.hostname;
		mj->info.procname = s->comm;
		mj->info.pid = (int32_t)s->pid;
		mj->info.session = s->id;
	}
	mj->s = s;
	mj->gen = s->meta_gen;
	mj->upto = s->nprovs;
	mj->j.work = meta_work;
	mj->j.done = meta_done;
	mj->j.uid = s->uid;
	mj->j.files = 1;
	s->intake_out++;
	s->meta_job_out = 1;
	intake_submit(&mj->j);
	return -1;
}

/* May the rings of s be drained to its files? */
int
session_meta_ready(const struct session *s)
{
	return s->dirfd != -1 && s->meta_written &&
	    s->meta_provs == s->nprovs;
}

/*
 * Has s waited long enough for its metadata?  Only once its process is
 * gone: for SESSION_META_GRACE_NS after that (its rings hold the
 * events meanwhile: a disk full for a moment loses nothing), or until
 * the daemon stops.  Then its events are counted as lost to the write
 * error, never written where nothing could read them.
 */
static int
session_meta_given_up(const struct session *s)
{
	return sessions_stopping() || (s->closing &&
	    now_ns(CLOCK_MONOTONIC) - s->closed_at > SESSION_META_GRACE_NS);
}

/*
 * A new trace uuid for s (random, RFC 4122 version 4).  Each directory
 * a session writes is a trace of its own, with its own uuid: its
 * packets count from 0, and a reader given the old and the new
 * directory together sees two traces, not one stream whose sequence
 * numbers went back (babeltrace2 called that 2^64 - 3 packets
 * discarded).
 */
void
session_new_uuid(struct session *s)
{
	if (getrandom(s->uuid, sizeof(s->uuid), 0) != sizeof(s->uuid)) {
		uint64_t t = now_ns(CLOCK_REALTIME) ^ ((uint64_t)s->id << 32);

		memcpy(s->uuid, &t, 8);
		memcpy(s->uuid + 8, &s->pid, sizeof(s->pid));
	}
	s->uuid[6] = (uint8_t)((s->uuid[6] & 0x0f) | 0x40);
	s->uuid[8] = (uint8_t)((s->uuid[8] & 0x3f) | 0x80);
}

/*
 * Create the session's directory in the current trace directory and
 * open it: s->dirfd, s->dir.  The trace directory is checked and open
 * (fsdir.c), so the name made is the directory opened.  0 or -1.
 */
static int
session_make_dir(struct session *s)
{
	char name[64], path[PATH_MAX], top[PATH_MAX];
	struct stat st;
	int i, fd;
	/*
	 * A session records (flight recorder) or writes from its first
	 * directory on: a recording one keeps its metadata and function
	 * tables in the recorder's directory, which snapshots copy from,
	 * and writes nothing to the trace directory.
	 */
	int recording = s->dirfd == -1 ? recorder_size() > 0 &&
	    recorder_dirfd() != -1 : s->feed.rec != NULL;
	struct rwindow *w = NULL;

	/* Its window first: without one, it is written as any session. */
	if (recording && s->feed.rec == NULL &&
	    (w = recorder_window_new(s->id, s->uid, s->pid, s->comm,
	    s->clock)) == NULL) {
		log_warnx("session %u: no window in the flight recorder (out "
		    "of memory): it is written to the trace directory",
		    s->id);
		recording = 0;
	}
	snprintf(top, sizeof(top), "%s%s", recording ? cfg.state_dir :
	    outdir_path(), recording ? "/recorder" : "");
	sanitize_name(name, sizeof(name), s->comm);
	for (i = 0; i < 1000; i++) {
		if (i == 0)
			snprintf(path, sizeof(path), "%s-%d-%u", name,
			    (int)s->pid, s->id);
		else
			snprintf(path, sizeof(path), "%s-%d-%u.%d", name,
			    (int)s->pid, s->id, i);
		/* The trace directory's descriptor changes when it is
		 * made again (outdir_check()): asked each time. */
		if (mkdirat(recording ? recorder_dirfd() : outdir_fd(), path,
		    0750) == 0)
			break;
		if (!recording && errno == ENOENT && outdir_check() == 1)
			continue;	/* made again: try there */
		if (errno != EEXIST) {
			log_warn("session %u: mkdir %s/%s", s->id, top, path);
			recorder_window_end(w);
			return -1;
		}
	}
	if (i == 1000) {
		recorder_window_end(w);
		return -1;
	}
	fd = openat(recording ? recorder_dirfd() : outdir_fd(), path,
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 || fstat(fd, &st) == -1 || st.st_uid != geteuid()) {
		log_warn("session %u: open %s/%s", s->id, top, path);
		if (fd != -1)
			close(fd);
		recorder_window_end(w);
		return -1;
	}
	free(s->dir);
	if (asprintf(&s->dir, "%s/%s", top, path) == -1) {
		s->dir = NULL;
		close(fd);
		recorder_window_end(w);
		return -1;
	}
	if (s->dirfd != -1) {
		/* Parked rings' streams end in the old directory. */
		session_unpark_all(s);
		intake_close(s->dirfd, s->uid);	/* it may be deleted */
		session_new_uuid(s);	/* a new directory, a new trace */
	}
	s->dirfd = fd;
	if (s->feed.rec != NULL)
		recorder_window_dir(s->feed.rec, fd, path);
	else if (w != NULL) {
		recorder_window_dir(w, fd, path);
		/* Before its first ring is added (pipeline.h). */
		__atomic_store_n(&s->feed.rec, w, __ATOMIC_RELEASE);
	}
	s->meta_written = 0;
	s->meta_provs = 0;
	s->meta_gen++;
	return 0;
}

/*
 * The session's first ring (its first enabled event) or MODULE
 * (func.c) makes its directory: a process that records nothing leaves
 * nothing behind, no directory, no index row, no log line but a debug
 * one.
 */
int
session_ensure_dir(struct session *s)
{
	if (s->dirfd != -1)
		return 0;
	if (session_make_dir(s) == -1)
		return -1;
	limits_info(s->uid, "session %u: %s[%d] uid %u connected, %s %s", s->id,
	    s->comm, (int)s->pid, (unsigned)s->uid, s->feed.rec != NULL ?
	    "recording in memory, its metadata in" : "tracing to", s->dir);
	record_changed(s);
	return 0;
}

/*
 * Was the session's directory deleted under it (rm -rf of the trace
 * directory, say)?  Then every event written there is gone: count them
 * as lost ("deleted"), say so, and continue in a new directory.  Its
 * rings are not read meanwhile (their events wait there); packets
 * already on their way to the old files count as deleted when they
 * come back (sring_chunk_done()).  While no new directory can be made
 * (the trace directory cannot be made again, outdir_ok 0; the disk is
 * full), it is tried again every SESSION_DIR_RETRY_NS; once the
 * session would give up on its metadata too (its process gone for a
 * while, or the daemon stopping: session_meta_given_up()), what its
 * rings still hold is read and counted as lost to the write error, so
 * that it ends.  Returns the events written off.
 */
uint64_t
session_check_dir(struct session *s, int outdir_ok)
{
	struct sring *r;
	uint64_t gone = 0, now;

	/* A recording session writes nothing there (recorder.c). */
	if (s->dirfd == -1 || s->feed.rec != NULL)
		return 0;
	if (!s->dir_lost) {
		if (fsdir_deleted(s->dirfd) != 1)
			return 0;
		__atomic_store_n(&s->feed.go, 0, __ATOMIC_RELEASE);
		TAILQ_FOREACH(r, &s->rings, entry) {
			r->lost[TRACED_DROP_DELETED] += r->stream_events;
			r->events -= r->stream_events <= r->events ?
			    r->stream_events : r->events;
			gone += r->stream_events;
			r->stream_events = 0;
			r->dead_gen = r->fgen;
		}
		log_warnx("session %u: %s[%d]: its directory %s was deleted "
		    "while tracing: the %llu events written there are gone "
		    "(counted as lost, cause 'deleted'); it continues in a "
		    "new directory", s->id, s->comm, (int)s->pid, s->dir,
		    (unsigned long long)gone);
		s->dir_lost = 1;
		s->dir_retry_at = 0;
	}
	now = now_ns(CLOCK_MONOTONIC);
	if (outdir_ok && now >= s->dir_retry_at) {
		if (session_rotate(s) == 0)
			return gone;
		s->dir_retry_at = now + SESSION_DIR_RETRY_NS;
	}
	if (!s->dir_wait_said) {
		log_warnx("session %u: no new directory can be made in %s "
		    "yet: its events wait in its rings (tried again every "
		    "%u s)", s->id, outdir_path(),
		    (unsigned)(SESSION_DIR_RETRY_NS / 1000000000u));
		s->dir_wait_said = 1;
	}
	if (session_meta_given_up(s) && s->feed.discard_errno == 0) {
		log_warnx("session %u: %s[%d] %s with no directory to write "
		    "in: the events left in its rings are counted as lost "
		    "(cause 'write_error')", s->id, s->comm, (int)s->pid,
		    sessions_stopping() ? "stops" : "ended");
		session_drain_publish(s);
	}
	return gone;
}

/*
 * Continue a session in a new directory under the current trace dir
 * (trace-file set).  Each ring goes on in a new file there once the
 * directory's metadata is written (session_drain_publish()), until
 * then in its old one.
 */
int
session_rotate(struct session *s)
{
	struct sring *r;

	if (session_make_dir(s) == -1)
		return -1;
	s->dir_lost = 0;
	s->dir_wait_said = 0;
	func_session_rotate(s);
	TAILQ_FOREACH(r, &s->rings, entry)
		if (!r->ended)
			r->reopen = 1;
	s->reopen_pending = 1;
	session_meta_want(s);
	record_changed(s);
	return 0;
}

/*
 * Tell the drain thread what it may do with the rings of s, now that
 * its metadata is written (or given up on): read them, validate them
 * against the providers the metadata describes, and write them (or,
 * given up, count their events as lost to the write error: they are
 * never written where nothing could read them).  Rings of a new
 * directory get their new files first.  Until the metadata describes
 * every provider, the events of the newer ones wait in the rings.
 * When nothing changed for the drain thread (a new ring of a session
 * whose metadata is up to date: writeout_add() gave it to the drain
 * thread), nothing is done: a program that starts thousands of
 * threads must not make the drain thread visit every ring for each.
 * Loop thread.
 */
static void
session_drain_publish(struct session *s)
{
	struct sring *r;
	int err = 0, reopened = 0;

	if (s->dir_lost) {
		/* No directory: its rings wait for one (session_check_dir()),
		 * until the session gives up; then what they hold, of every
		 * provider, is read and counted as lost. */
		if (!session_meta_given_up(s))
			return;
		err = ENOENT;
	} else if (session_meta_ready(s)) {
		if (s->reopen_pending) {
			TAILQ_FOREACH(r, &s->rings, entry)
				if (r->reopen && !r->ended)
					(void)sring_open_stream(r);
			s->reopen_pending = 0;
			reopened = 1;
		}
		/* Its uid is over its quota (quota.c): counted, not
		 * written. */
		if (quota_over(s->uid) && s->feed.rec == NULL)
			err = EDQUOT;
	} else if (session_meta_given_up(s))
		err = s->meta_errno != 0 ? s->meta_errno : EIO;
	else
		return;
	if (!reopened && s->feed.go && s->feed.tab == s->feed.newest &&
	    s->feed.discard_errno == err)
		return;
	__atomic_store_n(&s->feed.discard_errno, err, __ATOMIC_RELEASE);
	__atomic_store_n(&s->feed.tab, s->feed.newest, __ATOMIC_RELEASE);
	__atomic_store_n(&s->feed.go, 1, __ATOMIC_RELEASE);
	writeout_drain_all(0);
}

/* Its uid went over its quota, or under it again (quota.c). */
void
session_quota_changed(struct session *s)
{
	session_drain_publish(s);
}

/*
 * s has something new for its metadata (a provider, a ring, a new
 * directory): bring it up to date, and until it is, let the drain
 * timer retry (session_meta_retry()).  Loop thread.
 */
void
session_meta_want(struct session *s)
{
	if (session_metadata_sync(s) == 0)
		session_drain_publish(s);
	else
		s->meta_waiting = 1;
}

/*
 * The housekeeping timer: a session whose rings waited for its metadata gets
 * them drained once it is written (or, its process gone, once it gave
 * up waiting).  May free s.
 */
void
session_meta_retry(struct session *s)
{
	if (!s->meta_waiting)
		return;
	if (!session_meta_ready(s) && session_metadata_sync(s) == -1 &&
	    !session_meta_given_up(s))
		return;
	s->meta_waiting = 0;
	session_drain_publish(s);
	session_check_done(s);
}

/*
 * The housekeeping timer: sessions whose rings wait for their metadata
 * try again (and may end, and be freed).
 */
void
sessions_meta_retry(void)
{
	struct session *s, *next;

	for (s = TAILQ_FIRST(&sessions); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (s->meta_waiting)
			session_meta_retry(s);	/* may free s */
	}
}

/*
 * Were the trace directory, or a session's directory in it, deleted
 * while tracing?  The trace directory is made again (outdir_check()),
 * each session whose directory went continues in a new one once one
 * can be made there, and what they had written is counted as lost
 * (outdir_deleted()).
 */
void
sessions_check_dirs(void)
{
	struct session *s;
	int ok = outdir_check() != -1;

	TAILQ_FOREACH(s, &sessions, entry)
		outdir_deleted_add(session_check_dir(s, ok));
}

/* A session whose events wait for a directory (session_check_dir()). */
const struct session *
sessions_dir_lost(void)
{
	const struct session *s;

	TAILQ_FOREACH(s, &sessions, entry)
		if (s->dir_lost && s->feed.discard_errno == 0)
			return s;
	return NULL;
}

/*
 * Move the trace output to 'path' (outdir_set(); 'how': "set",
 * "default", "reload"), then every session continues in a new
 * directory there.  Returns 0, or -1 with the reason in err: the
 * output stayed where it was, or some sessions could not move.
 */
int
sessions_trace_dir_set(const char *path, const char *how, int *created,
    char *err, size_t errsize)
{
	struct session *s;
	int failed = 0;

	if (outdir_set(path, how, created, err, errsize) == -1)
		return -1;
	quota_trace_dir_changed();
	TAILQ_FOREACH(s, &sessions, entry)
		if (!s->closing && s->dirfd != -1 && s->feed.rec == NULL &&
		    session_rotate(s) == -1) {
			log_warnx("session %u could not move to %s", s->id,
			    path);
			failed++;
		}
	if (failed > 0)
		return text_errf(err, errsize, "%d session%s could not move "
		    "to %s (see the daemon's log)", failed, failed == 1 ?
		    "" : "s", path);
	return 0;
}
