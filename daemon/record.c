/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * What the index keeps of the live sessions: the session layer's
 * writer of index rows (index.h, struct index_writer).
 *
 * Each session notes what the index must hear (index_dirty, the
 * per-event counts the pipeline reports); every INDEX_BATCH_MS, and
 * when an info command asks, the sessions that changed are written in
 * one transaction: the session, its threads with their losses by cause,
 * its stream files and the event counts that moved.  A session that
 * ends is written at once, with how it ended; a commit that failed has
 * everything written again by the next batch.  Its executable and
 * command line are read from /proc when it connects, before the
 * process can be gone.
 *
 * What the index knows of a session that ended is also written into
 * its trace directory, as the file traced/process (doc/DESIGN.md; in a
 * sub-directory, which CTF readers skip, as they would not a file
 * beside the streams), so that
 * readers of the directory alone (tracectl export --format uftrace's
 * info) have the command line, the times and the exit status:
 *
 *	traced-process 1
 *	pid 352
 *	comm lua
 *	exe /usr/bin/lua5.4
 *	cmdline lua5.4 fib.lua 30
 *	started_ns 1795966791192001719	(CLOCK_REALTIME: connected)
 *	ended_ns 1795966791292001719	(its last ring drained)
 *	how exited
 *	exit_status 0			(only when the process said it)
 *
 * one "key value" a line, values printable, keys in this order.  It is
 * written on the files thread, beside and renamed over, like the
 * metadata.
 *
 * Loop thread only.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dclock.h"
#include "index.h"
#include "intake.h"
#include "log.h"
#include "pdesc.h"
#include "recorder.h"
#include "session.h"
#include "text.h"

#define RECORD_CMDLINE_MAX	4096	/* bytes of /proc/PID/cmdline kept */

static void	record_lost(void *arg);
static int	record_flush(void *arg);

static const struct index_writer record_writer = {
	.flush = record_flush,
	.lost = record_lost,
};

/* The index writes the live sessions through this file.  Once. */
void
record_init(void)
{
	index_set_writer(&record_writer);
}

/* Every live session back to "write everything" after a lost commit. */
static void
record_lost(void *arg)
{
	struct session *s;

	(void)arg;
	TAILQ_FOREACH(s, &sessions, entry) {
		s->index_dirty = 1;
		if (s->ev_written != NULL)
			memset(s->ev_written, 0,
			    s->nev_counts * sizeof(*s->ev_written));
	}
}

static const char *
record_ring_state(const struct session *s, const struct sring *r)
{
	if (r->quarantined)
		return "refused";
	if (r->finished)
		return "finished";
	return s->closing ? "closed" : "active";
}

/* Provider, event name and id of class number 'cls' of a session. */
static const struct sprov *
record_event_of(const struct session *s, uint32_t cls, const char **name,
    uint32_t *id)
{
	uint32_t i;

	for (i = 0; i < s->nprovs; i++) {
		const struct sprov *p = s->provs[i];

		if (cls >= p->cls && cls - p->cls < p->nevents) {
			*name = p->d->tf.events[cls - p->cls].name;
			*id = p->id_base + (cls - p->cls);
			return p;
		}
	}
	return NULL;
}

/*
 * Write a session, its threads, drops, streams and the per-event counts
 * that changed, in the open transaction.  'ended' is 0 while it runs.
 * 0 or -1.
 */
static int
record_write(struct session *s, uint64_t now, uint64_t ended)
{
	struct index_session row;
	struct index_thread t;
	struct index_stream m;
	struct index_event e;
	const struct sprov *p;
	const struct sring *r;
	const char *base;
	uint32_t i;
	int c;

	memset(&row, 0, sizeof(row));
	row.lost = s->lost_disconnected;
	TAILQ_FOREACH(r, &s->rings, entry) {
		row.events += r->events;
		for (c = 0; c < TRACED_DROP_NCAUSES; c++)
			row.lost += r->lost[c];
	}
	base = strrchr(s->exe, '/');
	row.id = s->id;
	row.pid = s->pid;
	row.uid = s->uid;
	row.gid = s->gid;
	row.comm = s->comm;
	row.name = s->exe[0] != '\0' ? (base != NULL ? base + 1 : s->exe) :
	    s->comm;
	row.exe = s->exe[0] != '\0' ? s->exe : NULL;
	row.cmdline = s->cmdline;
	row.clock = s->welcomed ? dclock_get(s->clock)->name : NULL;
	row.dir = s->dir;
	row.started = s->started;
	row.ended = ended;
	row.how = s->how;
	row.has_exit = s->has_exit;
	row.exit_status = s->exit_status;
	row.lost_before_connect = s->lost_disconnected;
	if (index_put_session(&row, now) == -1)
		return -1;

	TAILQ_FOREACH(r, &s->rings, entry) {
		memset(&t, 0, sizeof(t));
		t.ring = r->index;
		t.tid = r->tid;
		t.ring_size = traced_ring_size(r->order);
		t.events = r->events;
		t.bytes = r->bytes;
		t.lost_records = r->lost_records;
		memcpy(t.lost, r->lost, sizeof(t.lost));
		t.state = record_ring_state(s, r);
		if (index_put_thread(s->id, &t) == -1)
			return -1;
		if (r->stream_path == NULL)
			continue;
		m.ring = r->index;
		m.tid = r->tid;
		m.path = r->stream_path;
		m.seen = now;
		if (index_put_stream(s->id, &m) == -1)
			return -1;
	}

	for (i = 0; i < s->nev_counts; i++) {
		if (s->ev_counts[i] == s->ev_written[i])
			continue;
		if ((p = record_event_of(s, i, &e.name, &e.id)) == NULL)
			continue;
		e.provider = p->name;
		e.count = s->ev_counts[i];
		if (index_put_event(s->id, &e) == -1)
			return -1;
		s->ev_written[i] = s->ev_counts[i];
	}
	s->index_dirty = 0;
	return 0;
}

/*
 * Write every dirty session now, in one transaction (the index
 * commits it).  0 or -1.
 */
static int
record_flush(void *arg)
{
	struct session *s;
	uint64_t now = now_ns(CLOCK_REALTIME);

	(void)arg;
	TAILQ_FOREACH(s, &sessions, entry) {
		if (!s->index_dirty || s->dirfd == -1)
			continue;
		if (index_begin() == -1)
			return -1;
		if (record_write(s, now, 0) == -1) {
			index_failed("writing sessions");
			return -1;
		}
	}
	return 0;
}

/*
 * A session was accepted: note its executable (readlink /proc/PID/exe)
 * and command line (/proc/PID/cmdline, arguments quoted where needed and
 * joined by spaces, at most RECORD_CMDLINE_MAX bytes).  Either may be
 * unreadable (another user's process, or one already gone): it stays
 * unknown.  The session reaches the index with the next batch.
 */
void
record_start(struct session *s)
{
	char path[64], *out;
	char buf[RECORD_CMDLINE_MAX > PATH_MAX ? RECORD_CMDLINE_MAX : PATH_MAX];
	ssize_t n;
	size_t i, o, start;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)s->pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = '\0';
		text_clean(buf, (size_t)n);
		if ((size_t)n < sizeof(s->exe))
			memcpy(s->exe, buf, (size_t)n + 1);
		else	/* keep the file name whole */
			snprintf(s->exe, sizeof(s->exe), "...%s",
			    buf + n - (sizeof(s->exe) - 4));
	}

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)s->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd != -1 ? read(fd, buf, RECORD_CMDLINE_MAX) : -1;
	if (fd != -1)
		close(fd);
	/* Quoted, one argument may take up to 4 bytes per byte, + " ...". */
	if (n > 0 && (out = malloc((size_t)n * 4 + 8)) != NULL) {
		o = 0;
		for (start = 0; start < (size_t)n; start = i + 1) {
			int quote = 0;

			for (i = start; i < (size_t)n && buf[i] != '\0'; i++)
				if (strchr(" \t\"'\\$`*?[]{}()<>|&;#~!", buf[i])
				    != NULL)
					quote = 1;
			if (o > 0)
				out[o++] = ' ';
			if (i == start)
				quote = 1;	/* an empty argument */
			if (quote)
				out[o++] = '\'';
			for (; start < i; start++) {
				if (quote && buf[start] == '\'') {
					memcpy(out + o, "'\\''", 4);
					o += 4;
				} else
					out[o++] = buf[start];
			}
			if (quote)
				out[o++] = '\'';
		}
		if (n == RECORD_CMDLINE_MAX) {
			memcpy(out + o, " ...", 4);
			o += 4;
		}
		out[o] = '\0';
		text_clean(out, o);
		free(s->cmdline);
		s->cmdline = out;
	}
	s->index_dirty = 1;
	(void)index_ready();	/* the batch timer runs from now on */
}

/* Something about s changed (HELLO, a ring, a new directory). */
void
record_changed(struct session *s)
{
	s->index_dirty = 1;
}

/*
 * A drain of one of s's rings came back: add its events per class (n
 * pairs, only the classes it saw) to the session's and mark it for the
 * next batch.
 */
void
record_counts(struct session *s, const struct cls_count *counts, uint32_t n)
{
	uint64_t *c, *w;
	uint32_t i, want = s->nclasses;

	s->index_dirty = 1;
	if (n > 0 && want > s->nev_counts) {
		c = reallocarray(s->ev_counts, want, sizeof(*c));
		if (c == NULL)
			return;
		s->ev_counts = c;
		w = reallocarray(s->ev_written, want, sizeof(*w));
		if (w == NULL)
			return;
		s->ev_written = w;
		memset(c + s->nev_counts, 0,
		    (want - s->nev_counts) * sizeof(*c));
		memset(w + s->nev_counts, 0,
		    (want - s->nev_counts) * sizeof(*w));
		s->nev_counts = want;
	}
	for (i = 0; i < n; i++)
		if (counts[i].cls < s->nev_counts)
			s->ev_counts[counts[i].cls] += counts[i].n;
}

struct procfile_job {
	struct intake_job j;
	int		 dirfd;		/* a dup of the session's */
	uint32_t	 sid;
	size_t		 len;
	char		 text[];
};

static void
procfile_work(struct intake_job *j)
{
	struct procfile_job *pj = (struct procfile_job *)j;
	int dfd, fd;

	if (mkdirat(pj->dirfd, "traced", 0750) == -1 && errno != EEXIST) {
		log_warn("session %u: its traced/ directory", pj->sid);
		return;
	}
	dfd = openat(pj->dirfd, "traced", O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
	if (dfd == -1) {
		log_warn("session %u: its traced/ directory", pj->sid);
		return;
	}
	(void)unlinkat(dfd, ".process.tmp", 0);
	fd = openat(dfd, ".process.tmp", O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd == -1 || write(fd, pj->text, pj->len) != (ssize_t)pj->len) {
		log_warn("session %u: its traced/process file", pj->sid);
		if (fd != -1) {
			close(fd);
			(void)unlinkat(dfd, ".process.tmp", 0);
		}
		close(dfd);
		return;
	}
	close(fd);
	if (renameat(dfd, ".process.tmp", dfd, "process") == -1) {
		log_warn("session %u: rename to traced/process", pj->sid);
		(void)unlinkat(dfd, ".process.tmp", 0);
	}
	close(dfd);
}

static void
procfile_done(struct intake_job *j)
{
	struct procfile_job *pj = (struct procfile_job *)j;

	intake_close(pj->dirfd, pj->j.uid);
	free(pj);
}

/* The traced/process file of s, which ended at 'ended' (see above). */
static void
record_process_file(struct session *s, uint64_t ended)
{
	struct procfile_job *pj;
	char exit_line[32] = "";
	size_t size;
	int n;

	if (s->dirfd == -1 || !intake_accepting())
		return;
	if (s->has_exit)
		snprintf(exit_line, sizeof(exit_line), "exit_status %d\n",
		    s->exit_status);
	size = sizeof(s->comm) + sizeof(s->exe) + (s->cmdline != NULL ?
	    strlen(s->cmdline) : 0) + 256;
	if ((pj = calloc(1, sizeof(*pj) + size)) == NULL)
		return;
	n = snprintf(pj->text, size, "traced-process 1\npid %d\ncomm %s\n"
	    "exe %s\ncmdline %s\nstarted_ns %llu\nended_ns %llu\nhow %s\n%s",
	    (int)s->pid, s->comm, s->exe[0] != '\0' ? s->exe : "?",
	    s->cmdline != NULL ? s->cmdline : "?",
	    (unsigned long long)s->started, (unsigned long long)ended,
	    s->how != NULL ? s->how : "exited", exit_line);
	if (n < 0 || (size_t)n >= size ||
	    (pj->dirfd = fcntl(s->dirfd, F_DUPFD_CLOEXEC, 0)) == -1) {
		free(pj);
		return;
	}
	pj->len = (size_t)n;
	pj->sid = s->id;
	pj->j.uid = s->uid;
	pj->j.files = 1;
	pj->j.work = procfile_work;
	pj->j.done = procfile_done;
	intake_submit(&pj->j);
}

/*
 * s has ended (every ring drained, its books closed): write its final
 * counts and how it ended (s->how, "exited" if not set) now; the
 * transaction commits at the end of this loop turn.  Its directory gets
 * its traced/process file.
 */
void
record_end(struct session *s)
{
	uint64_t now = now_ns(CLOCK_REALTIME);

	record_process_file(s, now);
	if (!index_ready() || index_begin() == -1)
		return;
	if (record_write(s, now, now) == -1)
		index_failed("recording the end of a session");
}

/* Free what this file keeps in a session. */
void
record_free(struct session *s)
{
	free(s->cmdline);
	free(s->ev_counts);
	free(s->ev_written);
	s->cmdline = NULL;
	s->ev_counts = s->ev_written = NULL;
	s->nev_counts = 0;
}

/*
 * A snapshot the flight recorder wrote (recorder.c), into the index
 * beside the sessions it holds: its row id, or 0.  Loop thread.
 */
uint64_t
record_snapshot(const struct snapshot_result *res)
{
	struct index_snapshot row = {
		.time = res->time, .dir = res->dir, .reason = res->reason,
		.sessions = res->sessions, .events = res->events,
		.bytes = res->bytes, .has_uid = !res->any_uid,
		.uid = res->uid,
	};

	return index_snapshot_put(&row);
}
