/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Client sessions: one per connected traced process.  Accepts on
 * client.sock, takes pid and uid from SO_PEERCRED, validates every
 * message with wire_decode(), and keeps for each session its providers
 * (parsed descriptions, state arrays), its rings (mapped from the fds the
 * client passed) and its CTF directory:
 *
 *   <trace-dir>/<comm>-<pid>-<session>/metadata, stream-<tid>
 *
 * A client that sends anything invalid is disconnected with a log line
 * saying why; what it already committed is still drained.  On EOF the
 * session drains every ring to its end, closes its streams and is
 * freed once the last job is back.  The index (index.c) hears of each
 * session when it starts, when it changes and when it ends, with how:
 * "exited" (EOF), "disconnected" (we dropped it) or "daemon-stopped".
 * Loop thread only.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <linux/magic.h>

#include "ctf.h"
#include "ringsize.h"
#include "func.h"
#include "text.h"
#include "traced.h"

#define CLIENT_MSG_BUF	TRACED_MSG_MAX

static void session_read_cb(int fd, short what, void *arg);
static void session_eof(struct session *s);
static void session_meta_want(struct session *s);
static void session_drain_publish(struct session *s);

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
 * Writing a session's metadata, on the intake thread: formatting it is
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

	close(mj->dirfd);
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
 * the first time in a directory, then what is new, on the intake
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
		memcpy(mj->info.clock_uuid, td->clk[s->clock].uuid, 16);
		mj->info.clock_freq = td->clk[s->clock].freq;
		mj->info.clock_offset_s = td->clk[s->clock].offset_s;
		mj->info.clock_offset = td->clk[s->clock].offset;
		mj->info.clock_name = td->clk[s->clock].name;
		mj->info.hostname = td->hostname;
		mj->info.procname = s->comm;
		mj->info.pid = (int32_t)s->pid;
		mj->info.session = s->id;
	}
	mj->s = s;
	mj->gen = s->meta_gen;
	mj->upto = s->nprovs;
	mj->j.work = meta_work;
	mj->j.done = meta_done;
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
int
session_meta_given_up(const struct session *s)
{
	return td->stopping || (s->closing &&
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
static void
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

static void	session_unpark_all(struct session *);

/*
 * Create the session's directory in the current trace directory and
 * open it: s->dirfd, s->dir.  The trace directory is checked and open
 * (fsdir.c), so the name made is the directory opened.  0 or -1.
 */
static int
session_make_dir(struct session *s)
{
	char name[64], path[PATH_MAX];
	struct stat st;
	int i, fd;

	sanitize_name(name, sizeof(name), s->comm);
	for (i = 0; i < 1000; i++) {
		if (i == 0)
			snprintf(path, sizeof(path), "%s-%d-%u", name,
			    (int)s->pid, s->id);
		else
			snprintf(path, sizeof(path), "%s-%d-%u.%d", name,
			    (int)s->pid, s->id, i);
		if (mkdirat(td->trace_dirfd, path, 0750) == 0)
			break;
		if (errno == ENOENT && trace_dir_check(0) == 1)
			continue;	/* made again: try there */
		if (errno != EEXIST) {
			log_warn("session %u: mkdir %s/%s", s->id,
			    td->cfg.trace_dir, path);
			return -1;
		}
	}
	if (i == 1000)
		return -1;
	fd = openat(td->trace_dirfd, path, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 || fstat(fd, &st) == -1 || st.st_uid != geteuid()) {
		log_warn("session %u: open %s/%s", s->id, td->cfg.trace_dir,
		    path);
		if (fd != -1)
			close(fd);
		return -1;
	}
	free(s->dir);
	if (asprintf(&s->dir, "%s/%s", td->cfg.trace_dir, path) == -1) {
		s->dir = NULL;
		close(fd);
		return -1;
	}
	if (s->dirfd != -1) {
		/* Parked rings' streams end in the old directory. */
		session_unpark_all(s);
		close(s->dirfd);
		session_new_uuid(s);	/* a new directory, a new trace */
	}
	s->dirfd = fd;
	s->meta_written = 0;
	s->meta_provs = 0;
	s->meta_gen++;
	return 0;
}

/*
 * The session's first provider, ring or MODULE (func.c) makes its
 * directory: a process that connects and leaves without describing
 * anything leaves nothing behind, no directory, no index row, no log
 * line but a debug one.
 */
int
session_ensure_dir(struct session *s)
{
	if (s->dirfd != -1)
		return 0;
	if (session_make_dir(s) == -1)
		return -1;
	limits_info(s->uid, "session %u: %s[%d] uid %u connected, tracing to "
	    "%s", s->id, s->comm, (int)s->pid, (unsigned)s->uid, s->dir);
	index_session_changed(s);
	return 0;
}

static int	sring_new_file(struct sring *, char **);

/*
 * Open a ring's stream file in its session's directory: the first one
 * (the ring is new, not yet draining), or the next one after trace-file
 * set, which its writer switches to before its next packet.  Returns 0
 * or -1.
 */
int
sring_open_stream(struct sring *r)
{
	char *path;
	int fd;

	if ((fd = sring_new_file(r, &path)) == -1)
		return -1;
	/* The writer writes this file's packets with this file's trace. */
	r->fgen++;
	r->stream_events = 0;
	r->parts = 1;
	r->reopen = 0;
	if (!r->draining)
		stream_start(&r->st, fd, r->s->uuid, r->fgen);	/* ours */
	else
		writeout_stream_next(r, fd, r->s->uuid, r->fgen);
	free(r->stream_path);
	r->stream_path = path;
	return 0;
}

/*
 * The next part of r's stream file, for the writer to go on in when
 * the current one is full (stream-max-size).  A failure leaves the
 * stream where it is, said once per ring.  Loop thread.
 */
void
sring_cut_stream(struct sring *r)
{
	char *path;
	int fd;

	if (r->ended || r->s->dirfd == -1)
		return;
	if ((fd = sring_new_file(r, &path)) == -1) {
		r->parts++;		/* not again for this part */
		return;
	}
	r->parts++;
	writeout_stream_part(r, fd, td->cfg.limit[LIMIT_STREAM_SIZE]);
	free(r->stream_path);
	r->stream_path = path;
	index_session_changed(r->s);
}

/*
 * A new file for r's stream in its session's directory, the first free
 * one of stream-TID, stream-TID.1, ...: its descriptor and path, or -1
 * (said, and r->write_errno set).
 */
static int
sring_new_file(struct sring *r, char **pathp)
{
	char name[64], *path;
	int fd = -1, i;

	for (i = 0; i < 100000; i++) {
		if (i == 0)
			snprintf(name, sizeof(name), "stream-%d", (int)r->tid);
		else
			snprintf(name, sizeof(name), "stream-%d.%d",
			    (int)r->tid, i);
		fd = openat(r->s->dirfd, name, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0640);
		if (fd != -1 || errno != EEXIST)
			break;
	}
	if (fd == -1) {
		log_warn("session %u: %s/%s", r->s->id, r->s->dir, name);
		r->write_errno = errno;
		return -1;
	}
	if (asprintf(&path, "%s/%s", r->s->dir, name) == -1) {
		close(fd);
		r->write_errno = ENOMEM;
		return -1;
	}
	*pathp = path;
	return fd;
}

/*
 * Was the session's directory deleted under it (rm -rf of the trace
 * directory, say)?  Then every event written there is gone: count them
 * as lost ("deleted"), say so, and continue in a new directory.  Its
 * rings are not read meanwhile (their events wait there); packets
 * already on their way to the old files count as deleted when they
 * come back (writeout.c).  Returns the events written off.
 */
uint64_t
session_check_dir(struct session *s)
{
	struct sring *r;
	uint64_t gone = 0;

	if (s->dirfd == -1 || fsdir_deleted(s->dirfd) != 1)
		return 0;
	__atomic_store_n(&s->drain_go, 0, __ATOMIC_RELEASE);
	TAILQ_FOREACH(r, &s->rings, entry) {
		r->lost[TRACED_DROP_DELETED] += r->stream_events;
		r->events -= r->stream_events <= r->events ?
		    r->stream_events : r->events;
		gone += r->stream_events;
		r->stream_events = 0;
		r->dead_gen = r->fgen;
	}
	log_warnx("session %u: %s[%d]: its directory %s was deleted while "
	    "tracing: the %llu events written there are gone (counted as "
	    "lost, cause 'deleted'); it continues in a new directory",
	    s->id, s->comm, (int)s->pid, s->dir, (unsigned long long)gone);
	if (session_rotate(s) == -1)
		log_warnx("session %u: no new directory in %s: its events wait "
		    "in its rings", s->id, td->cfg.trace_dir);
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
	func_session_rotate(s);
	TAILQ_FOREACH(r, &s->rings, entry)
		if (!r->ended)
			r->reopen = 1;
	s->reopen_pending = 1;
	session_meta_want(s);
	index_session_changed(s);
	return 0;
}

/* Ring numbers below this are found in an array, the others in a list. */
#define SESSION_BY_INDEX_MAX	(UINT32_C(1) << 20)

/*
 * The ring numbered 'index' of s, or NULL.  A process numbers its rings
 * 0, 1, 2...: an array finds them (a program with thousands of threads
 * sends a NOTIFY for each), which holds every ring whose number it
 * covers; a number far beyond is looked for in the list.
 */
struct sring *
session_ring(struct session *s, uint32_t index)
{
	struct sring *r;

	if (index < s->nby_index)
		return s->by_index[index];
	TAILQ_FOREACH(r, &s->rings, entry)
		if (r->index == index)
			return r;
	return NULL;
}

/* Note where ring r is, for session_ring().  0, or -1 (ENOMEM). */
static int
session_ring_index(struct session *s, struct sring *r)
{
	struct sring **a, *o;
	uint32_t n;

	/*
	 * Far out, or past what the array may hold (a client chooses the
	 * numbers; a program numbers its rings one after the other): the
	 * list will do.  Every number below nby_index is in the array.
	 */
	if (r->index >= s->nby_index &&
	    (r->index >= s->nby_index + 1024 ||
	    r->index >= SESSION_BY_INDEX_MAX))
		return 0;
	if (r->index >= s->nby_index) {
		n = r->index + 1 > 2 * s->nby_index ? r->index + 1 :
		    2 * s->nby_index;
		if (n > SESSION_BY_INDEX_MAX)
			n = SESSION_BY_INDEX_MAX;
		a = reallocarray(s->by_index, n, sizeof(*a));
		if (a == NULL)
			return -1;
		memset(a + s->nby_index, 0, (n - s->nby_index) * sizeof(*a));
		/* Rings far out before may be in range now: the array
		 * must hold every ring whose number it covers. */
		TAILQ_FOREACH(o, &s->rings, entry)
			if (o->index >= s->nby_index && o->index < n)
				a[o->index] = o;
		s->by_index = a;
		s->nby_index = n;
	}
	s->by_index[r->index] = r;
	return 0;
}

/* Send a message to the client (the pool's rings: session_spare_send()). */
void
session_send(struct session *s, const void *msg, size_t len)
{
	if (s->fd == -1)
		return;
	if (send(s->fd, msg, len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)len)
		log_debug("session %u: send: %s", s->id, strerror(errno));
}

/*
 * Set the state bytes of every event of a session from the rules (all
 * zero while paused).
 */
void
session_update_state(struct session *s)
{
	uint32_t i, k;

	for (i = 0; i < s->nprovs; i++) {
		struct sprov *p = s->provs[i];
		/* Computed once per rule change for all who share it. */
		const uint8_t *rule = pdesc_states(p->d);
		/* The process's own rules win over those (state.c). */
		const struct ptable *t = state_ptable(s, p->index);

		for (k = 0; k < p->nevents; k++) {
			int pon = state_ptable_on(s, t, k);
			uint8_t on = !td->paused && (pon >= 0 ? pon : rule[k]);

			if (p->state[k] != on)
				__atomic_store_n(&p->state[k], on,
				    __ATOMIC_RELAXED);
		}
	}
}

/*
 * The process's name as the kernel has it (/proc/PID/comm, PID from
 * SO_PEERCRED), not as its HELLO says: a client may call itself "sshd"
 * in a message.  (A process can still rename itself, with prctl(); the
 * uid shown beside the name is the kernel's.)  The message's name
 * serves only when /proc cannot tell.  Either way it is made printable
 * UTF-8 here, once (text_escape()).
 */
static void
session_comm(struct session *s, const char *said)
{
	char path[64], buf[64];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)s->pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n > 0) {
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
	} else
		snprintf(buf, sizeof(buf), "%.*s", TRACED_COMM_MAX - 1, said);
	text_escape(s->comm, sizeof(s->comm), buf);
	if (s->comm[0] == '\0')
		snprintf(s->comm, sizeof(s->comm), "pid%d", (int)s->pid);
}

static int
session_hello(struct session *s, const struct traced_msg_hello *m)
{
	struct traced_msg_welcome w;
	char said[TRACED_COMM_MAX];

	if (s->welcomed) {
		limits_logx(s->uid, "session %u: second HELLO", s->id);
		return -1;
	}
	memcpy(said, m->comm, sizeof(said));
	said[sizeof(said) - 1] = '\0';
	session_comm(s, said);
	s->lost_disconnected = m->lost_disconnected;
	if (m->flags & TRACED_HELLO_TSC) {
		if (!td->have_tsc) {
			limits_logx(s->uid, "session %u: %s[%d] timestamps "
			    "with the TSC, which this daemon could not "
			    "calibrate; refusing it (run it with "
			    "TRACED_CLOCK=monotonic)", s->id, s->comm,
			    (int)s->pid);
			return -1;
		}
		s->clock = DCLOCK_TSC;
	}
	s->welcomed = 1;
	memset(&w, 0, sizeof(w));
	wire_hdr_init(&w.hdr, TRACED_MSG_WELCOME, sizeof(w));
	w.version = TRACED_PROTOCOL_VERSION;
	w.session = s->id;
	w.clock = s->clock == DCLOCK_TSC ? TRACED_CLOCK_TSC :
	    TRACED_CLOCK_MONOTONIC;
	w.ring_order = s->ring_order = td->cfg.ring_order;
	w.paused = (uint32_t)td->paused;
	session_send(s, &w, sizeof(w));
	log_debug("session %u: %s[%d] uid %u said hello", s->id, s->comm,
	    (int)s->pid, (unsigned)s->uid);
	if (s->lost_disconnected > 0)
		limits_info(s->uid, "session %u: %s[%d] lost %llu events "
		    "while no daemon ran", s->id, s->comm, (int)s->pid,
		    (unsigned long long)s->lost_disconnected);
	return 0;
}

/*
 * Check a memfd the client passed before mapping it: a regular file,
 * not hugetlbfs, with need_seals (F_SEAL_SHRINK, F_SEAL_WRITE) and at
 * least 'size' bytes.  0, or -1 with the reason in *why.
 */
int
check_client_fd(int fd, size_t size, int need_seals, const char **why)
{
	struct statfs sfs;
	struct stat st;
	int seals;

	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		*why = "not a memfd";
		return -1;
	}
	/*
	 * A hugetlbfs memfd takes a punched hole even when sealed against
	 * shrinking, and our next store there needs a huge page from a
	 * pool that may be empty: SIGBUS in the daemon.
	 */
	if (fstatfs(fd, &sfs) == -1 || sfs.f_type == HUGETLBFS_MAGIC) {
		*why = "hugetlbfs memfd (a hole punched in it could fault "
		    "the daemon)";
		return -1;
	}
	seals = fcntl(fd, F_GET_SEALS);
	if (seals == -1) {
		*why = "not a sealable memfd";
		return -1;
	}
	if ((need_seals & F_SEAL_SHRINK) && !(seals & F_SEAL_SHRINK)) {
		*why = "memfd not sealed against shrinking";
		return -1;
	}
	if ((need_seals & F_SEAL_WRITE) && !(seals & F_SEAL_WRITE)) {
		*why = "memfd not sealed against writing";
		return -1;
	}
	if ((uint64_t)st.st_size < size) {
		*why = "memfd smaller than announced";
		return -1;
	}
	return 0;
}

/* Answer a PROVIDER: status 0, or a negative errno when refused. */
static void
session_provider_ack(struct session *s, uint32_t index, int status)
{
	struct traced_msg_provider_ack ack;

	memset(&ack, 0, sizeof(ack));
	wire_hdr_init(&ack.hdr, TRACED_MSG_PROVIDER_ACK, sizeof(ack));
	ack.index = index;
	ack.status = status;
	session_send(s, &ack, sizeof(ack));
}

/*
 * A provider refused for a limit: its events must stay off, whatever
 * an earlier daemon left in its state bytes, or the process would
 * trace events this daemon cannot read.  The state memfd is the
 * process's; clear it if it is one we could map.
 */
static void
session_provider_silence(int state_fd, uint32_t nevents)
{
	const char *why;
	size_t size = ((size_t)nevents + 4095) / 4096 * 4096;
	uint8_t *state;

	if (nevents == 0 || check_client_fd(state_fd, size, F_SEAL_SHRINK,
	    &why) == -1)
		return;
	state = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
	    state_fd, 0);
	if (state == MAP_FAILED)
		return;
	memset(state, 0, nevents);
	munmap(state, size);
}

/*
 * Refuse a provider for a limit (why): the session and its other
 * providers go on, its events are switched off, its ids skipped.
 */
static void
session_provider_refuse(struct session *s, const struct traced_msg_provider *m,
    const char *name, int state_fd, const char *why)
{
	limits_logx(s->uid, "session %u: %s[%d]: provider %s refused: %s",
	    s->id, s->comm, (int)s->pid, name, why);
	s->refused_providers++;
	session_provider_silence(state_fd, m->nevents);
	session_provider_ack(s, m->index, -EDQUOT);
	s->next_prov = m->index + 1;
	s->next_id = m->id_base + m->nevents;
}

/*
 * Add provider m, described by d (a reference, given to the session),
 * with its state array on state_fd.  Its event ids are charged already.
 * Returns 0, or -1 (logged; d released, the ids given back): the client
 * is to be disconnected.
 */
static int
session_provider_add(struct session *s, const struct traced_msg_provider *m,
    struct pdesc *d, int state_fd)
{
	struct sprov *p, **np;
	struct evtab *et;
	const char *why = NULL;
	uint32_t nr, k;

	if (d->tf.nevents != m->nevents) {
		limits_logx(s->uid, "session %u: provider %s announces %u "
		    "events and describes %zu", s->id, d->name, m->nevents,
		    d->tf.nevents);
		goto fail;
	}
	if (!state_session_provider_ok(s, m->index, m->nevents)) {
		limits_logx(s->uid, "session %u: provider %s: its process's "
		    "rules were sent for a provider of another size", s->id,
		    d->name);
		goto fail;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL)
		goto fail;
	p->d = d;
	p->index = m->index;
	p->id_base = m->id_base;
	p->nevents = m->nevents;
	p->cls = s->nclasses;
	snprintf(p->name, sizeof(p->name), "%s", d->name);
	/*
	 * The state memfd is the process's: sealed against shrinking, so
	 * that our stores into it can never fault, and writable.  F_SEAL_
	 * WRITE (the description's memfd passed twice, say) fails the
	 * mapping.
	 */
	p->state_size = ((size_t)m->nevents + 4095) / 4096 * 4096;
	if (p->state_size > 0) {
		if (check_client_fd(state_fd, p->state_size, F_SEAL_SHRINK,
		    &why) == -1) {
			limits_logx(s->uid, "session %u: provider %s: state "
			    "array: %s", s->id, p->name, why);
			goto fail_p;
		}
		p->state = mmap(NULL, p->state_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, state_fd, 0);
		if (p->state == MAP_FAILED) {
			p->state = NULL;
			limits_logx(s->uid, "session %u: provider %s: cannot "
			    "map its state array writable: %s", s->id,
			    p->name, strerror(errno));
			goto fail_p;
		}
	}

	/* A new table, one range longer. */
	nr = s->evtab != NULL ? s->evtab->nranges : 0;
	et = calloc(1, sizeof(*et) + (nr + 1) * sizeof(et->ranges[0]));
	p->fixed = calloc(m->nevents + 1, sizeof(*p->fixed));
	np = reallocarray(s->provs, s->nprovs + 1, sizeof(*np));
	if (et == NULL || p->fixed == NULL || np == NULL) {
		free(p->fixed);
		free(et);
		if (np != NULL)
			s->provs = np;
		if (p->state != NULL)
			munmap(p->state, p->state_size);
		goto fail_p;
	}
	s->provs = np;
	for (k = 0; k < m->nevents; k++) {
		const struct tevents_event *ev = &d->tf.events[k];
		uint32_t a, size = TRACED_REC_HDR_SIZE;

		/* Integers only: their record has one possible size. */
		for (a = 0; a < ev->nargs && size != 0; a++)
			size = ev->args[a].cls == TEVENTS_STRING ? 0 :
			    size + 8;
		p->fixed[k] = size;
	}
	if (nr > 0)
		memcpy(et->ranges, s->evtab->ranges, nr * sizeof(et->ranges[0]));
	et->ranges[nr].first = m->id_base - TRACED_EVENT_ID_BASE;
	et->ranges[nr].n = m->nevents;
	et->ranges[nr].cls = p->cls;
	et->ranges[nr].ev = d->tf.events;
	et->ranges[nr].fixed = p->fixed;
	et->nranges = nr + 1;
	et->nclasses = p->cls + m->nevents;
	/*
	 * The drain thread may still walk with the old table: it stays.
	 * This one is what tells it that the new provider's events are
	 * to wait for their metadata, not refused (drain.c).
	 */
	et->older = s->evtab;
	__atomic_store_n(&s->evtab, et, __ATOMIC_RELEASE);
	s->provs[s->nprovs++] = p;
	s->nclasses += m->nevents;
	s->next_prov = m->index + 1;
	s->next_id = m->id_base + m->nevents;

	session_update_state(s);
	if (session_ensure_dir(s) == 0)
		session_meta_want(s);	/* on the intake thread */
	session_provider_ack(s, m->index, 0);
	log_debug("session %u: provider %s, %u events", s->id, p->name,
	    p->nevents);
	return 0;
fail_p:
	free(p);
fail:
	pdesc_put(d);
	limits_put(s->uid, LIMIT_EVENT_IDS, m->nevents, 0);
	return -1;
}

/*
 * A description to parse, on the intake thread; meanwhile the session's
 * socket is not read, so its messages keep their order.
 */
struct parse_job {
	struct intake_job j;
	struct session	*s;		/* kept: s->intake_out */
	struct traced_msg_provider m;
	char		 name[TRACED_NAME_MAX];
	char		 fname[128];
	void		*desc;		/* mapped, desc_len bytes */
	size_t		 desc_len;
	int		 state_fd;	/* dup'ed */
	struct pdesc	*d;		/* result, not shared yet */
	char		 err[512];
};

static void
parse_work(struct intake_job *j)
{
	struct parse_job *pj = (struct parse_job *)j;

	pj->d = pdesc_parse(pj->s->uid, pj->name, pj->desc != NULL ?
	    pj->desc : "", pj->desc_len, pj->fname, pj->err,
	    sizeof(pj->err));
}

static void
parse_done(struct intake_job *j)
{
	struct parse_job *pj = (struct parse_job *)j;
	struct session *s = pj->s;
	struct pdesc *d = pj->d;
	char err[512];

	if (pj->desc != NULL)
		munmap(pj->desc, pj->desc_len);
	s->intake_out--;
	if (s->fd == -1) {
		/* Gone meanwhile (or the daemon stops). */
		pdesc_free(d);
		limits_put(s->uid, LIMIT_EVENT_IDS, pj->m.nevents, 0);
	} else if (d == NULL) {
		limits_logx(s->uid, "session %u: %s[%d]: bad provider "
		    "description: %s; disconnecting it", s->id, s->comm,
		    (int)s->pid, pj->err);
		limits_put(s->uid, LIMIT_EVENT_IDS, pj->m.nevents, 0);
		s->how = "disconnected";
	} else if ((d = pdesc_adopt(d, err, sizeof(err))) == NULL) {
		limits_put(s->uid, LIMIT_EVENT_IDS, pj->m.nevents, 0);
		session_provider_refuse(s, &pj->m, pj->name, pj->state_fd, err);
	} else if (session_provider_add(s, &pj->m, d, pj->state_fd) == -1)
		s->how = "disconnected";
	close(pj->state_fd);
	session_job_done(s);		/* may free s */
	free(pj);
}

/*
 * An intake job of s is done (s->intake_out lowered): read its next
 * message, or end it if it is to be disconnected (s->how), or free it if
 * it ended meanwhile.  May free s.  Loop thread.
 */
void
session_job_done(struct session *s)
{
	if (s->fd != -1 && s->how == NULL)
		event_add(s->ev, NULL);		/* read it again */
	else if (s->fd != -1)
		session_eof(s);
	else
		session_check_done(s);
}

static int
session_provider(struct session *s, const struct traced_msg_provider *m,
    int fd, int state_fd)
{
	struct parse_job *pj;
	struct pdesc *d;
	const char *why = NULL;
	char err[512], name[TRACED_NAME_MAX];
	uint64_t held, cost;
	void *desc;

	memcpy(name, m->name, sizeof(name));
	name[sizeof(name) - 1] = '\0';
	/* Gaps are a provider unloaded before this connection. */
	if (!s->welcomed || m->index < s->next_prov ||
	    m->id_base < s->next_id || m->id_base > TRACED_EVENT_ID_MAX ||
	    m->nevents > TRACED_EVENT_ID_MAX - m->id_base) {
		limits_logx(s->uid, "session %u: provider %s out of order: "
		    "number %u, event ids from %u; expected at least %u and "
		    "%u, and %u events below id %u", s->id, name, m->index,
		    m->id_base, s->next_prov, s->next_id, m->nevents,
		    TRACED_EVENT_ID_MAX);
		return -1;
	}
	if (pdesc_precheck(name, m->desc_size, err, sizeof(err)) == -1 ||
	    check_client_fd(fd, m->desc_size, F_SEAL_SHRINK | F_SEAL_WRITE,
	    &why) == -1) {
		limits_logx(s->uid, "session %u: provider %s: %s", s->id, name,
		    why != NULL ? why : err);
		return -1;
	}
	/* Limits: a refusal keeps the session and its other providers. */
	if (s->nprovs >= td->cfg.limit[LIMIT_PROVIDERS]) {
		snprintf(err, sizeof(err), "session %u has %u providers, its "
		    "%s limit (raise it in traced.conf(5))", s->id, s->nprovs,
		    config_limit_name(LIMIT_PROVIDERS));
		session_provider_refuse(s, m, name, state_fd, err);
		return 0;
	}
	/*
	 * A session describes at most events-per-session events (what a
	 * reader spends on its metadata grows faster than that), and its
	 * ids span no more: one id of 2^24 - 1 is refused, a gap (a
	 * plugin unloaded) within the span costs nothing.
	 */
	if ((uint64_t)s->nclasses + m->nevents >
	    td->cfg.limit[LIMIT_SESSION_EVENTS] ||
	    (uint64_t)m->id_base + m->nevents - TRACED_EVENT_ID_BASE >
	    td->cfg.limit[LIMIT_SESSION_EVENTS]) {
		snprintf(err, sizeof(err), "session %u would describe %llu "
		    "events with ids up to %u, past its %s limit (%llu; raise "
		    "it in traced.conf(5))", s->id,
		    (unsigned long long)s->nclasses + m->nevents,
		    m->id_base + m->nevents - 1,
		    config_limit_name(LIMIT_SESSION_EVENTS),
		    (unsigned long long)td->cfg.limit[LIMIT_SESSION_EVENTS]);
		session_provider_refuse(s, m, name, state_fd, err);
		return 0;
	}
	if (limits_take(s->uid, LIMIT_EVENT_IDS, m->nevents, 0, err,
	    sizeof(err)) == -1) {
		session_provider_refuse(s, m, name, state_fd, err);
		return 0;
	}
	desc = m->desc_size > 0 ? mmap(NULL, m->desc_size, PROT_READ,
	    MAP_SHARED, fd, 0) : NULL;
	if (desc == MAP_FAILED) {
		log_warn("session %u: mapping a provider", s->id);
		limits_put(s->uid, LIMIT_EVENT_IDS, m->nevents, 0);
		return -1;
	}
	/* Described before by this uid: shared, no parsing. */
	if ((d = pdesc_lookup(s->uid, name, desc != NULL ? desc : "",
	    m->desc_size)) != NULL) {
		if (desc != NULL)
			munmap(desc, m->desc_size);
		return session_provider_add(s, m, d, state_fd);
	}
	/* Refused before the cost of parsing if it could not fit. */
	held = limits_held(s->uid, LIMIT_EVENT_CLASSES);
	cost = m->nevents > 0 ? m->nevents : 1;
	if (held + cost > td->cfg.limit[LIMIT_EVENT_CLASSES]) {
		if (desc != NULL)
			munmap(desc, m->desc_size);
		limits_put(s->uid, LIMIT_EVENT_IDS, m->nevents, 0);
		snprintf(err, sizeof(err), "uid %u holds %llu of its %s limit "
		    "(%llu), and this provider describes %u more (raise it "
		    "in traced.conf(5))", (unsigned)s->uid,
		    (unsigned long long)held,
		    config_limit_name(LIMIT_EVENT_CLASSES),
		    (unsigned long long)td->cfg.limit[LIMIT_EVENT_CLASSES],
		    m->nevents);
		session_provider_refuse(s, m, name, state_fd, err);
		return 0;
	}
	if ((pj = calloc(1, sizeof(*pj))) == NULL ||
	    (pj->state_fd = fcntl(state_fd, F_DUPFD_CLOEXEC, 0)) == -1) {
		free(pj);
		if (desc != NULL)
			munmap(desc, m->desc_size);
		limits_put(s->uid, LIMIT_EVENT_IDS, m->nevents, 0);
		return -1;
	}
	pj->s = s;
	pj->m = *m;
	memcpy(pj->name, name, sizeof(pj->name));
	snprintf(pj->fname, sizeof(pj->fname), "%s[%d]:%s", s->comm,
	    (int)s->pid, name);
	pj->desc = desc;
	pj->desc_len = m->desc_size;
	pj->j.work = parse_work;
	pj->j.done = parse_done;
	s->intake_out++;
	event_del(s->ev);	/* its next messages wait for this one */
	intake_submit(&pj->j);
	return 0;
}

/*
 * Descriptors a ring holds: its memfd and its stream file (a third, the
 * next file, only for a while after trace-file set or a stream-max-size
 * part opened ahead: the reserve covers those).
 */
#define RING_FDS	2

/*
 * Finished rings a session keeps with their stream open, for the
 * library to give to new threads (as many as it keeps: conn.c).
 */
#define RING_PARKED_MAX	16

/*
 * Threads a session keeps books of one by one (info trace, the index):
 * a THREAD record costs its client 24 bytes of ring, and each thread
 * costs the daemon an sring and an index row.  Past this, the threads
 * that take a ring in-band are counted together, as thread 0.
 */
#define SESSION_THREADS_MAX	16384

/*
 * Stop holding a ring: its mapping, its memfd, its stream file and its
 * charge.  Only once no other thread has it (its END came back, or it
 * never went to the drain thread).  Its counts stay for info trace and
 * the index.
 */
/* Take r off its session's parked list, if it is on it. */
static void
sring_unpark(struct sring *r)
{
	if (!r->parked)
		return;
	TAILQ_REMOVE(&r->s->parked, r, pentry);
	r->parked = 0;
	r->s->nparked--;
}

static void
sring_release(struct sring *r)
{
	sring_unpark(r);
	if (r->hdr == NULL)
		return;
	if (r->st.fd != -1)
		close(r->st.fd);
	r->st.fd = -1;
	if (r->next_fd != -1)
		close(r->next_fd);
	r->next_fd = -1;
	close(r->ring_fd);
	r->ring_fd = -1;
	munmap(r->hdr, TRACED_RING_HDR_SIZE);
	r->hdr = NULL;
	limits_put(r->s->uid, LIMIT_RINGS, 1, RING_FDS);
	limits_put(r->s->uid, LIMIT_RING_BYTES, r->charged, 0);
	r->charged = 0;
}

/*
 * Stop keeping the parked rings of s: their streams end where they
 * are (a new directory, or descriptors needed for new rings).
 */
static void
session_unpark_all(struct session *s)
{
	struct sring *r;

	while ((r = TAILQ_FIRST(&s->parked)) != NULL)
		sring_release(r);
}

/*
 * The daemon is done with a ring (its END came back).  One whose thread
 * exited is parked, its stream file left open: the library gives the
 * ring to one of its next new threads (proto/ring.h, Reuse), and the
 * daemon gives the stream to one of the session's next new rings
 * (session_add_ring()), so that a program that starts thread after
 * thread costs neither a file nor a mapping per thread (RING_PARKED_MAX
 * per session, the oldest let go first).  Others give their memory and
 * their place under the limits back now, not when the process ends (a
 * long-lived process may start and end thousands of threads).
 */
void
sring_finished(struct sring *r)
{
	struct session *s = r->s;

	if (r->hdr != NULL && r->finished && !r->quarantined &&
	    !s->closing && r->st.fd != -1 && r->next_fd == -1 &&
	    !r->reopen && r->write_errno == 0 && r->dead_gen < r->fgen &&
	    s->dirfd != -1) {
		if (s->nparked >= RING_PARKED_MAX)
			sring_release(TAILQ_FIRST(&s->parked));
		TAILQ_INSERT_TAIL(&s->parked, r, pentry);
		r->parked = 1;
		s->nparked++;
		return;
	}
	sring_release(r);
}

/*
 * May a ring whose header says 'since' go on in the stream of the
 * parked ring p?  Its records are all stamped at or after 'since', and
 * CTF streams go forward in time: if p's stream ends at or before it.
 */
static int
sring_parked_fits(const struct sring *p, uint64_t since)
{
	return since != 0 && p->last_ts <= since;
}

/*
 * The parked ring of s that is the memfd 'st' (the library gave that
 * ring to a new thread), if it may go on in its stream; else NULL.
 */
static struct sring *
session_parked_memfd(struct session *s, const struct stat *st,
    uint32_t max_order)
{
	struct sring *p;

	TAILQ_FOREACH(p, &s->parked, pentry)
		if (p->dev == st->st_dev && p->ino == st->st_ino &&
		    p->max_order == max_order)
			return sring_parked_fits(p, __atomic_load_n(
			    &p->hdr->since, __ATOMIC_RELAXED)) ? p : NULL;
	return NULL;
}

/* The process's own rules (state.c): keep, apply, answer. */
static int
session_rules(struct session *s, const struct traced_msg_rules *m, int fd)
{
	struct traced_msg_rules_ack ack;
	int rc;

	if ((rc = state_session_rules(s, m, fd)) == -1)
		return -1;
	if (rc == 0)
		session_update_state(s);
	memset(&ack, 0, sizeof(ack));
	wire_hdr_init(&ack.hdr, TRACED_MSG_RULES_ACK, sizeof(ack));
	ack.gen = m->gen;
	ack.status = rc == 0 ? 0 : -EDQUOT;
	session_send(s, &ack, sizeof(ack));
	return 0;
}

/*
 * The ring grew (the drain thread saw it at 'order'): its charge grows
 * with it.  The producer grows it without asking, so this is never
 * refused; a uid over its ring-bytes limit gets no new ring.
 */
void
sring_grown(struct sring *r, uint32_t order)
{
	uint64_t size = traced_ring_size(order);

	if (order <= r->order)
		return;
	r->order = order;
	if (r->hdr != NULL && size > r->charged) {
		limits_force(r->s->uid, LIMIT_RING_BYTES, size - r->charged);
		r->charged = size;
	}
}

/*
 * r goes on in the stream file of the parked ring p, which gives it up:
 * r's packets follow p's there, with their own thread id, in the same
 * CTF stream (instance, packet numbers, discarded count go on).
 */
static void
sring_take_stream(struct sring *r, struct sring *p)
{
	r->instance = p->instance;
	r->st = p->st;
	r->stream_path = p->stream_path != NULL ? strdup(p->stream_path) :
	    NULL;
	r->fgen = p->fgen;
	r->parts = p->parts;
	r->dead_gen = p->dead_gen;
	r->ts_floor = p->last_ts;
	p->st.fd = -1;
}

/*
 * The library gave the parked ring p to a new thread, which sent it as
 * ring m: a new sring for that thread, with p's stream, mapping, memfd
 * and charge; p keeps its counts for info trace.  NULL when out of
 * memory.
 */
static struct sring *
sring_from_parked(struct session *s, struct sring *p,
    const struct traced_msg_ring *m)
{
	struct sring *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	sring_unpark(p);
	r->s = s;
	r->index = m->index;
	r->tid = (pid_t)m->tid;
	r->max_order = p->max_order;
	r->order = p->order;
	r->hdr = p->hdr;
	r->ring_fd = p->ring_fd;
	r->dev = p->dev;
	r->ino = p->ino;
	r->charged = p->charged;
	r->next_fd = -1;
	sring_take_stream(r, p);
	p->hdr = NULL;
	p->ring_fd = -1;
	p->charged = 0;
	return r;
}

/*
 * Start reading r, a ring of s with its memory and stream in place.  0,
 * or -1 (out of memory: r is released and freed).
 */
static int
sring_start(struct sring *r)
{
	struct session *s = r->s;

	if (session_ring_index(s, r) == -1) {
		sring_release(r);	/* nothing has it but us */
		free(r->stream_path);
		free(r);
		return -1;
	}
	TAILQ_INSERT_TAIL(&s->rings, r, entry);
	s->nrings++;
	index_session_changed(s);
	__atomic_store_n(&r->hdr->wakeup, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&r->hdr->reading, 1, __ATOMIC_RELAXED);
	/*
	 * From here the drain thread has it, from where the producer's
	 * last reader left off (the tail a previous daemon, or the ring's
	 * previous thread, published); it reads it once the session's
	 * metadata is written.
	 */
	r->draining = 1;
	writeout_add(r);
	session_meta_want(s);
	log_debug("session %u: ring %u, thread %d, %llu bytes, up to %llu, "
	    "in stream %llu (%s)", s->id, r->index, (int)r->tid,
	    (unsigned long long)traced_ring_size(r->order),
	    (unsigned long long)traced_ring_size(r->max_order),
	    (unsigned long long)r->instance,
	    r->stream_path != NULL ? r->stream_path : "?");
	return 0;
}

static void	session_spare_send(struct session *s);

/*
 * A new thread took r's ring in-band (proto/ring.h, Handover) and the
 * drain thread, reading on, got to the THREAD record 'next' (drain.c
 * drain_thread()); every chunk of the thread before is counted.  That
 * thread's books close: they move to a new, ended sring that stays in
 * the session's list for info trace and the index, like the ring of any
 * thread that finished.  r goes on, same ring, same stream, as the new
 * thread's, under its new ring number.  A number the process already
 * used (only a hostile client does that) leaves the books as they are;
 * past SESSION_THREADS_MAX threads, they are kept together.
 */
void
sring_handover(struct sring *r, const struct traced_thread_rec *next)
{
	struct session *s = r->s;
	struct sring *old;
	int i;

	if (session_ring(s, next->index) != NULL) {
		limits_logx(s->uid, "session %u: %s[%d]: thread %u took ring "
		    "%u, a number in use: counted with thread %d", s->id,
		    s->comm, (int)s->pid, next->tid, next->index, (int)r->tid);
		return;
	}
	if ((old = s->others) == NULL) {
		if ((old = calloc(1, sizeof(*old))) == NULL) {
			log_warn("session %u: thread %u", s->id, next->tid);
			return;
		}
		old->s = s;
		old->index = r->index;
		old->tid = r->tid;
		old->max_order = r->max_order;
		old->order = r->order;
		old->instance = r->instance;
		old->ring_fd = old->st.fd = old->next_fd = -1;
		old->ended = old->finished = old->books_closed = 1;
		TAILQ_INSERT_BEFORE(r, old, entry);
		s->nrings++;
		if (session_ring_index(s, old) == -1)
			log_warn("session %u: ring %u", s->id, old->index);
		if (s->nrings >= SESSION_THREADS_MAX) {
			/* From the next one on, together (said once). */
			old->tid = 0;
			s->others = old;
			limits_logx(s->uid, "session %u: %s[%d]: more than %u "
			    "threads: the counts of the next ones that take a "
			    "ring in-band are kept together, as thread 0 (the "
			    "trace still names each thread)", s->id, s->comm,
			    (int)s->pid, SESSION_THREADS_MAX);
		}
	}
	old->events += r->events;
	old->bytes += r->bytes;
	old->lost_records += r->lost_records;
	for (i = 0; i < TRACED_DROP_NCAUSES; i++)
		old->lost[i] += r->lost[i];
	/* The number r went by is the ended thread's now. */
	if (r->index < s->nby_index && s->by_index[r->index] == r)
		s->by_index[r->index] = old;
	log_debug("session %u thread %d finished; thread %u goes on in its "
	    "ring as ring %u", s->id, (int)r->tid, next->tid, next->index);
	r->index = next->index;
	r->tid = (pid_t)next->tid;
	r->events = r->bytes = r->lost_records = 0;
	memset(r->lost, 0, sizeof(r->lost));
	if (session_ring_index(s, r) == -1)
		log_warn("session %u: ring %u", s->id, r->index);
	index_session_changed(s);
}

static int
session_add_ring(struct session *s, const struct traced_msg_ring *m, int fd)
{
	size_t file_len = (size_t)traced_ring_file_size(m->max_order);
	struct traced_ring_hdr *h;
	const char *why = NULL;
	struct sring *r, *p;
	struct stat fst;
	char err[512];
	uint64_t size, since;
	uint32_t order;
	int rfd, retried = 0;

	if (!s->welcomed || session_ring(s, m->index) != NULL) {
		limits_logx(s->uid, "session %u: ring %u announced twice",
		    s->id, m->index);
		return -1;
	}
	if (check_client_fd(fd, file_len, F_SEAL_SHRINK, &why) == -1 ||
	    fstat(fd, &fst) == -1) {
		limits_logx(s->uid, "session %u: ring %u: %s", s->id, m->index,
		    why != NULL ? why : strerror(errno));
		return -1;
	}
	/* A thread took the pool ring the client held: it may ask again. */
	if (s->spare_ino != 0 && fst.st_ino == s->spare_ino &&
	    fst.st_dev == s->spare_dev) {
		s->spare_ino = 0;
		session_spare_send(s);	/* an ask that came first */
	}
	/*
	 * A ring we parked, given to a new thread: its header is mapped
	 * already.  Otherwise only the header page is mapped here.  The
	 * drain thread reads the data with pread(), or, once the ring
	 * lapped twice or was passed on, through a read-only mapping of
	 * the whole memfd (drain.c): sealed against shrinking and as long
	 * as the ring's largest size, so no read of it faults; a hole the
	 * client punches reads as zeros (through the mapping, it makes a
	 * page again: never more than the memfd's size in all).
	 */
	p = session_parked_memfd(s, &fst, m->max_order);
	if (p != NULL)
		h = p->hdr;
	else {
		h = mmap(NULL, TRACED_RING_HDR_SIZE, PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd, 0);
		if (h == MAP_FAILED) {
			log_warn("session %u: mapping ring %u", s->id,
			    m->index);
			return -1;
		}
	}
	order = __atomic_load_n(&h->order, __ATOMIC_RELAXED);
	if (h->magic != TRACED_RING_MAGIC ||
	    h->version != TRACED_RING_VERSION ||
	    h->max_order != m->max_order || order < TRACED_RING_ORDER_MIN ||
	    order > m->max_order) {
		limits_logx(s->uid, "session %u: ring %u: bad header", s->id,
		    m->index);
		if (p == NULL)
			munmap(h, TRACED_RING_HDR_SIZE);
		return -1;
	}
	size = traced_ring_size(order);
	if (p != NULL) {
		if ((r = sring_from_parked(s, p, m)) == NULL) {
			log_warn("session %u: ring %u", s->id, m->index);
			return -1;
		}
		sring_grown(r, order);
		goto add;
	}
	/*
	 * A ring costs two descriptors (its memfd, its stream) and is
	 * charged its size now; as it grows, so does its charge.  Parked
	 * rings give theirs back when a new one needs them.
	 */
again:
	if (limits_take(s->uid, LIMIT_RINGS, 1, RING_FDS, err,
	    sizeof(err)) == -1)
		goto full;
	if (limits_take(s->uid, LIMIT_RING_BYTES, size, 0, err,
	    sizeof(err)) == -1) {
		limits_put(s->uid, LIMIT_RINGS, 1, RING_FDS);
		goto full;
	}
	r = calloc(1, sizeof(*r));
	rfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (r == NULL || rfd == -1 || session_ensure_dir(s) == -1) {
		log_warn("session %u: ring %u", s->id, m->index);
		if (rfd != -1)
			close(rfd);
		free(r);
		munmap(h, TRACED_RING_HDR_SIZE);
		goto fail;
	}
	r->s = s;
	r->index = m->index;
	r->instance = m->index;
	r->tid = (pid_t)m->tid;
	r->max_order = m->max_order;
	r->order = order;
	r->charged = size;
	r->hdr = h;
	r->ring_fd = rfd;
	r->dev = fst.st_dev;
	r->ino = fst.st_ino;
	r->st.fd = -1;
	r->next_fd = -1;
	since = __atomic_load_n(&h->since, __ATOMIC_RELAXED);
	TAILQ_FOREACH(p, &s->parked, pentry)
		if (sring_parked_fits(p, since))
			break;
	if (p != NULL) {
		/* A stream an ended thread left: no new file. */
		sring_take_stream(r, p);
		sring_release(p);
	} else if (sring_open_stream(r) == -1) {
		close(rfd);
		munmap(h, TRACED_RING_HDR_SIZE);
		free(r);
		goto fail;
	}
add:
	if (sring_start(r) == -1) {
		log_warn("session %u: ring %u", s->id, m->index);
		return -1;
	}
	return 0;
full:
	if (!retried && s->nparked > 0) {
		session_unpark_all(s);
		retried = 1;
		goto again;
	}
	munmap(h, TRACED_RING_HDR_SIZE);
	/* The session goes on; that thread's events are not traced, and
	 * info trace says how many threads were refused and why. */
	limits_logx(s->uid, "session %u: %s[%d]: ring of thread %u refused "
	    "(its events are not traced): %s", s->id, s->comm, (int)s->pid,
	    m->tid, err);
	s->refused_rings++;
	return 0;
fail:
	limits_put(s->uid, LIMIT_RINGS, 1, RING_FDS);
	limits_put(s->uid, LIMIT_RING_BYTES, size, 0);
	return -1;
}

/*
 * A NOTIFY for a ring number s does not know: one a thread took a ring
 * by in-band (proto/ring.h, Handover) before the loop heard of it
 * (sring_handover()).  Which ring is not known yet, so every ring of
 * the session is read, at most once a millisecond (a flood of these
 * would cost a walk each).  Only a session with rings can hand one
 * over: the caller refuses others.
 */
static void
session_notify_unknown(struct session *s)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	struct sring *r;

	if (now < s->notify_all_next)
		return;
	s->notify_all_next = now + 1000000;
	TAILQ_FOREACH(r, &s->rings, entry)
		if (r->draining && !r->ended)
			writeout_notify(r);
}

/*
 * Send s a ring from the pool (pool.c) if it asked for one, holds none
 * unused, and one of its size is ready.  Loop thread.
 */
static void
session_spare_send(struct session *s)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	} cm;
	struct traced_msg_spare m;
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh;
	struct stat st;
	int fd;

	if (s->spare_order == 0 || s->spare_ino != 0 || s->fd == -1 ||
	    s->closing)
		return;
	/* Asked for, and none given since: one now, or when made. */
	if ((fd = pool_take(s->spare_order)) == -1)
		return;		/* served when one is made */
	if (fstat(fd, &st) == -1) {
		close(fd);
		return;
	}
	memset(&m, 0, sizeof(m));
	wire_hdr_init(&m.hdr, TRACED_MSG_SPARE, sizeof(m));
	m.max_order = s->spare_order;
	memset(&mh, 0, sizeof(mh));
	memset(&cm, 0, sizeof(cm));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.buf;
	mh.msg_controllen = sizeof(cm.buf);
	CMSG_FIRSTHDR(&mh)->cmsg_level = SOL_SOCKET;
	CMSG_FIRSTHDR(&mh)->cmsg_type = SCM_RIGHTS;
	CMSG_FIRSTHDR(&mh)->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(CMSG_FIRSTHDR(&mh)), &fd, sizeof(int));
	if (sendmsg(s->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) !=
	    (ssize_t)sizeof(m)) {
		/* The client is not reading: the ring goes back for the
		 * next one, and this client is not served again until it
		 * asks again. */
		log_debug("session %u: sending a pool ring: %s", s->id,
		    strerror(errno));
		s->spare_order = 0;
		pool_put(fd, m.max_order);
		return;
	}
	close(fd);
	s->spare_dev = st.st_dev;
	s->spare_ino = st.st_ino;
	log_debug("session %u: %s[%d] given a pool ring of %llu bytes",
	    s->id, s->comm, (int)s->pid,
	    (unsigned long long)traced_ring_size(s->spare_order));
	s->spare_order = 0;		/* answered */
}

/* A pool ring was made: serve the sessions waiting for one. */
void
session_spares_serve(void)
{
	struct session *s;

	TAILQ_FOREACH(s, &td->sessions, entry)
		session_spare_send(s);
}

/*
 * SPARE_ASK.  Only the daemon's own uid is served: a pool ring is
 * memory charged to the daemon that the client may keep (pool.c).
 * Others are told nothing and make their rings themselves, as before.
 */
static int
session_spare_ask(struct session *s, const struct traced_msg_spare *m)
{
	if (!s->welcomed) {
		limits_logx(s->uid, "session %u: SPARE_ASK before HELLO",
		    s->id);
		return -1;
	}
	if (s->uid != geteuid())
		return 0;
	/* 0: the size its WELCOME said, even if ring-size changed since. */
	s->spare_order = m->max_order != 0 ? m->max_order : s->ring_order;
	session_spare_send(s);
	return 0;
}

static int
session_handle(struct session *s, const struct wire_msg *m, const int *fds)
{
	struct sring *r;

	switch (m->type) {
	case TRACED_MSG_HELLO:
		return session_hello(s, m->u.hello);
	case TRACED_MSG_PROVIDER:
		return session_provider(s, m->u.provider, fds[0], fds[1]);
	case TRACED_MSG_RING:
		return session_add_ring(s, m->u.ring, fds[0]);
	case TRACED_MSG_RULES:
		return session_rules(s, m->u.rules, fds[0]);
	case TRACED_MSG_NOTIFY:
		r = session_ring(s, m->u.notify->index);
		if (r == NULL && s->nrings > 0) {
			session_notify_unknown(s);
			return 0;
		}
		if (r == NULL) {
			limits_logx(s->uid, "session %u: notify for unknown "
			    "ring %u", s->id, m->u.notify->index);
			return -1;
		}
		writeout_notify(r);
		return 0;
	case TRACED_MSG_MODULE:
	case TRACED_MSG_FUNCS:
	case TRACED_MSG_TRACER:
	case TRACED_MSG_FUNC_STATS:
		return func_msg(s, m, fds);
	case TRACED_MSG_SPARE_ASK:
		return session_spare_ask(s, m->u.spare);
	default:
		limits_logx(s->uid, "session %u: unexpected message type %u",
		    s->id, m->type);
		return -1;
	}
}

/* Stop reading the client; drain what it left, then free the session. */
static void
session_eof(struct session *s)
{
	struct sring *r;

	if (s->fd != -1) {
		event_free(s->ev);
		s->ev = NULL;
		close(s->fd);
		s->fd = -1;
	}
	if (!s->closing)
		s->closed_at = now_ns(CLOCK_MONOTONIC);
	s->closing = 1;
	TAILQ_FOREACH(r, &s->rings, entry)
		writeout_close(r);
	/* Rings that wait for metadata wait on, up to a grace period. */
	if (s->dirfd != -1 && !session_meta_ready(s)) {
		s->meta_waiting = 1;
		session_meta_retry(s);	/* may free s */
		return;
	}
	session_check_done(s);
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

	if (session_meta_ready(s)) {
		if (s->reopen_pending) {
			TAILQ_FOREACH(r, &s->rings, entry)
				if (r->reopen && !r->ended)
					(void)sring_open_stream(r);
			s->reopen_pending = 0;
			reopened = 1;
		}
	} else if (session_meta_given_up(s))
		err = s->meta_errno != 0 ? s->meta_errno : EIO;
	else
		return;
	if (!reopened && s->drain_go && s->drain_tab == s->evtab &&
	    s->discard_errno == err)
		return;
	__atomic_store_n(&s->discard_errno, err, __ATOMIC_RELEASE);
	__atomic_store_n(&s->drain_tab, s->evtab, __ATOMIC_RELEASE);
	__atomic_store_n(&s->drain_go, 1, __ATOMIC_RELEASE);
	writeout_drain_all(0);
}

/*
 * s has something new for its metadata (a provider, a ring, a new
 * directory): bring it up to date, and until it is, let the drain
 * timer retry (session_meta_retry()).  Loop thread.
 */
static void
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

static void
session_free(struct session *s)
{
	struct sring *r;
	uint32_t i;

	while ((r = TAILQ_FIRST(&s->rings)) != NULL) {
		TAILQ_REMOVE(&s->rings, r, entry);
		/* Ended: no thread but this one knows it any more. */
		sring_release(r);
		free(r->stream_path);
		free(r);
	}
	for (i = 0; i < s->nprovs; i++) {
		if (s->provs[i]->state != NULL)
			munmap(s->provs[i]->state, s->provs[i]->state_size);
		limits_put(s->uid, LIMIT_EVENT_IDS, s->provs[i]->nevents, 0);
		pdesc_put(s->provs[i]->d);
		free(s->provs[i]->fixed);
		free(s->provs[i]);
	}
	limits_put(s->uid, LIMIT_SESSIONS, 1, 2);
	free(s->by_index);
	free(s->provs);
	state_session_free(s);
	evtab_free(s->evtab);
	func_session_free(s);
	if (s->dirfd != -1)
		close(s->dirfd);
	free(s->dir);
	index_session_free(s);
	free(s);
}

/* Keep a summary of an ended session for info trace. */
static void
session_remember(const struct session *s)
{
	const struct sring *r;
	struct ended *e;
	uint32_t n = 0;

	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return;
	e->threads = calloc(s->nrings ? s->nrings : 1, sizeof(*e->threads));
	if (e->threads == NULL) {
		free(e);
		return;
	}
	e->id = s->id;
	e->pid = s->pid;
	e->uid = s->uid;
	memcpy(e->comm, s->comm, sizeof(e->comm));
	e->dir = s->dir != NULL ? strdup(s->dir) : NULL;
	e->lost_disconnected = s->lost_disconnected;
	e->started = s->started;
	e->ended_at = now_ns(CLOCK_REALTIME);
	TAILQ_FOREACH(r, &s->rings, entry) {
		e->threads[n].tid = r->tid;
		e->threads[n].ring_size = traced_ring_size(r->order);
		e->threads[n].ring_max = traced_ring_size(r->max_order);
		e->threads[n].events = r->events;
		e->threads[n].lost_records = r->lost_records;
		memcpy(e->threads[n].lost, r->lost, sizeof(r->lost));
		n++;
	}
	e->nthreads = n;
	TAILQ_INSERT_TAIL(&td->ended, e, entry);
	if (++td->nended > ENDED_KEEP) {
		e = TAILQ_FIRST(&td->ended);
		TAILQ_REMOVE(&td->ended, e, entry);
		td->nended--;
		free(e->dir);
		free(e->threads);
		free(e);
	}
}

static void	session_say_loss(struct session *);

/*
 * Free a closing session once every ring of it has ended (its END chunk
 * came back from the writeout: no other thread holds it).
 */
void
session_check_done(struct session *s)
{
	struct sring *r;

	if (!s->closing || s->meta_waiting || s->intake_out > 0)
		return;
	TAILQ_FOREACH(r, &s->rings, entry)
		if (!r->ended)
			return;
	TAILQ_FOREACH(r, &s->rings, entry) {
		uint64_t lost = 0;
		int i;

		for (i = 0; i < TRACED_DROP_NCAUSES; i++)
			lost += r->lost[i];
		log_debug("session %u thread %d: %llu events, %llu lost",
		    s->id, (int)r->tid, (unsigned long long)r->events,
		    (unsigned long long)lost);
	}
	/* Losses since the last warning are said before the end. */
	if (s->lost_unwarned > 0)
		session_say_loss(s);
	/* A session that never described anything leaves no trace. */
	if (s->dirfd != -1) {
		index_session_end(s);
		session_remember(s);
		limits_info(s->uid, "session %u: %s[%d] ended (%s)", s->id,
		    s->comm, (int)s->pid, s->how != NULL ? s->how : "exited");
	} else
		log_debug("session %u: %s[%d] ended (%s) without a provider "
		    "or a ring", s->id, s->comm, (int)s->pid,
		    s->how != NULL ? s->how : "exited");
	TAILQ_REMOVE(&td->sessions, s, entry);
	session_free(s);
}

/* The daemon is stopping: end the session (drained to the end). */
void
session_close(struct session *s)
{
	if (s->how == NULL)
		s->how = "daemon-stopped";
	session_eof(s);
}

static void
session_read_cb(int fd, short what, void *arg)
{
	struct session *s = arg;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(4 * sizeof(int))];
	} cm;
	_Alignas(8) char buf[CLIENT_MSG_BUF];
	struct iovec iov = { buf, sizeof(buf) };
	struct cmsghdr *c;
	struct msghdr mh;
	struct wire_msg m;
	const char *why = NULL;
	int fds[4], nfds = 0, extra_fds = 0, i, rc;
	ssize_t n;

	(void)what;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.buf;
	mh.msg_controllen = sizeof(cm.buf);
	n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n == -1 && errno == ECONNRESET) {
		/*
		 * The client exited with our replies unread: the kernel says
		 * so once, before the messages it sent last (a fork()ed
		 * child's ring, say), which are still queued.  Read them;
		 * the end comes after.
		 */
		mh.msg_controllen = sizeof(cm.buf);
		mh.msg_flags = 0;
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n == -1 && errno == EAGAIN)
			n = 0;
	}
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	/*
	 * A failed recvmsg() leaves the control buffer undefined: reading
	 * descriptors from it would close numbers that belong to others.
	 */
	if (n == -1)
		mh.msg_controllen = 0;
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (i = 0; (size_t)i < (c->cmsg_len - CMSG_LEN(0)) /
		    sizeof(int); i++) {
			int extra;

			if (nfds < 4) {
				memcpy(&fds[nfds++], CMSG_DATA(c) +
				    i * sizeof(int), sizeof(int));
				continue;
			}
			/* More than any message carries: refused below. */
			memcpy(&extra, CMSG_DATA(c) + i * sizeof(int),
			    sizeof(int));
			close(extra);
			extra_fds++;
		}
	}
	if (n <= 0) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		if (n == -1)
			limits_logx(s->uid, "session %u: receive: %s", s->id,
			    strerror(errno));
		log_debug("session %u: end of connection", s->id);
		if (s->how == NULL)
			s->how = "exited";
		session_eof(s);
		return;
	}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		why = "message too large";
		rc = -1;
	} else
		rc = wire_decode(buf, (size_t)n, nfds + extra_fds, &m, &why);
	if (rc != 0) {
		limits_logx(s->uid, "session %u: %s[%d]: %s; disconnecting it",
		    s->id, s->comm, (int)s->pid, why);
		rc = -1;
	} else
		rc = session_handle(s, &m, fds);
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	if (rc == -1) {
		if (rc != 0 && why == NULL)
			limits_logx(s->uid, "session %u: %s[%d]: "
			    "disconnecting it", s->id, s->comm, (int)s->pid);
		if (s->how == NULL)
			s->how = "disconnected";
		session_eof(s);
	}
}

static void
client_accept_cb(int lfd, short what, void *arg)
{
	struct session *s;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char err[512];
	int fd;

	(void)what;
	(void)arg;
	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd == -1) {
		accept_failed(td->ev_client, "client");
		return;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1) {
		log_warn("SO_PEERCRED");
		close(fd);
		return;
	}
	if (td->cfg.user && cred.uid != td->uid && cred.uid != 0) {
		limits_logx(cred.uid, "refusing uid %u on a per-user daemon "
		    "of uid %u", (unsigned)cred.uid, (unsigned)td->uid);
		close(fd);
		return;
	}
	if (td->stopping) {
		close(fd);
		return;
	}
	/* A session holds its socket, and later its directory. */
	if (limits_take(cred.uid, LIMIT_SESSIONS, 1, 2, err,
	    sizeof(err)) == -1) {
		limits_logx(cred.uid, "refusing a connection of pid %d: %s",
		    (int)cred.pid, err);
		close(fd);
		return;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		limits_put(cred.uid, LIMIT_SESSIONS, 1, 2);
		close(fd);
		return;
	}
	s->id = td->next_session++;
	s->pid = cred.pid;
	s->uid = cred.uid;
	s->gid = cred.gid;
	s->fd = fd;
	s->dirfd = -1;
	s->next_id = TRACED_EVENT_ID_BASE;
	s->started = now_ns(CLOCK_REALTIME);
	snprintf(s->comm, sizeof(s->comm), "pid%d", (int)cred.pid);
	TAILQ_INIT(&s->rings);
	TAILQ_INIT(&s->parked);
	session_new_uuid(s);
	s->ev = event_new(td->base, fd, EV_READ | EV_PERSIST,
	    session_read_cb, s);
	event_add(s->ev, NULL);
	TAILQ_INSERT_TAIL(&td->sessions, s, entry);
	index_session_start(s);
}

/* Watch the listening client socket.  Returns 0 or -1. */
int
client_listen(int fd)
{
	td->ev_client = event_new(td->base, fd, EV_READ | EV_PERSIST,
	    client_accept_cb, NULL);
	if (td->ev_client == NULL || event_add(td->ev_client, NULL) == -1)
		return -1;
	return 0;
}

/* Append to buf (NUL-terminated, 'size' bytes) what printf would say. */
static void	loss_say(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
loss_say(char *buf, size_t size, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
}

/*
 * Say what s lost since its last warning, with what the daemon saw that
 * let it happen and what to do about it.
 */
static void
session_say_loss(struct session *s)
{
	unsigned causes = s->causes_unwarned, why = s->why_unwarned;
	unsigned order = s->order_unwarned;
	char msg[1024] = "", size[32], bigger[32];
	const char *sep = "";

	ringsize_format(traced_ring_size(order), size, sizeof(size));
	ringsize_format(traced_ring_size(order < 28 ? order + 2 :
	    TRACED_RING_ORDER_MAX), bigger, sizeof(bigger));
	if (causes & (1u << TRACED_DROP_RING_FULL)) {
		if (why & LOSS_SAW_TOO_SMALL) {
			loss_say(msg, sizeof(msg), "%sa ring at its largest "
			    "size, %s, fills up faster than the daemon can "
			    "visit it: give the program bigger rings "
			    "(TRACED_RING_SIZE=%s in its environment, or "
			    "traced --ring-size %s for every program)", sep,
			    size, bigger, bigger);
			sep = "; also ";
		}
		if (why & LOSS_SAW_DISK) {
			loss_say(msg, sizeof(msg), "%srings filled up while "
			    "the daemon's staging memory was full, its writes "
			    "waiting on the disk: the disk under %s takes the "
			    "trace more slowly than the program writes it; "
			    "trace to a faster disk ('tracectl trace-file set "
			    "DIR') or trace fewer events", sep,
			    td->cfg.trace_dir);
			sep = "; also ";
		}
		if (why & LOSS_SAW_WRITERS) {
			/* At nice 0 already, only more CPU helps. */
			loss_say(msg, sizeof(msg), "%srings filled up while "
			    "the daemon's staging memory was full, its "
			    "writeout threads short of CPU time (nice %d, %u "
			    "of them): give them more (%straced --workers, "
			    "Nice= or CPUWeight= in its unit, fewer busy "
			    "programs)", sep, td->cfg.writeout_nice,
			    writeout_nworkers(), td->cfg.writeout_nice > 0 ?
			    "traced --writeout-nice 0, " : "");
			sep = "; also ";
		}
		if (why & LOSS_SAW_LATE) {
			loss_say(msg, sizeof(msg), "%srings filled up while "
			    "the daemon's drain thread waited %u ms for a CPU "
			    "(the machine is busy; it runs at nice %d): give "
			    "traced more CPU (%sNice= or CPUWeight= in its "
			    "unit), or bigger rings to ride it out "
			    "(TRACED_RING_SIZE=%s)", sep, s->late_unwarned,
			    td->cfg.writeout_nice, td->cfg.writeout_nice > 0 ?
			    "a lower --writeout-nice, " : "", bigger);
			sep = "; also ";
		}
		if ((why & (LOSS_SAW_DISK | LOSS_SAW_WRITERS |
		    LOSS_SAW_LATE | LOSS_SAW_TOO_SMALL)) == 0) {
			if (why & LOSS_SAW_MAX_SIZE)
				loss_say(msg, sizeof(msg), "%sa burst filled "
				    "a ring at its largest size, %s, between "
				    "two drains made on time: give the program "
				    "bigger rings (TRACED_RING_SIZE=%s in its "
				    "environment, or traced --ring-size %s for "
				    "every program)", sep, size, bigger,
				    bigger);
			else
				loss_say(msg, sizeof(msg), "%sa burst filled "
				    "a ring between two drains made on time, "
				    "before it could grow (it grows, up to %s, "
				    "for the next ones; TRACED_RING_START=%s in "
				    "the program's environment makes its rings "
				    "start that big, TRACED_RING_SIZE=%s lets "
				    "them grow further)", sep, size, size,
				    bigger);
			sep = "; also ";
		}
	}
	if (causes & (1u << TRACED_DROP_DISCONNECTED)) {
		loss_say(msg, sizeof(msg), "%sno daemon was draining its "
		    "rings for a while (they hold up to %s each; start traced "
		    "before the program, or give it bigger rings: "
		    "TRACED_RING_SIZE=%s)", sep, size, bigger);
		sep = "; also ";
	}
	if (causes & (1u << TRACED_DROP_WRITE_ERROR)) {
		loss_say(msg, sizeof(msg), "%swriting the trace failed (see "
		    "above)", sep);
		sep = "; also ";
	}
	if (causes & (1u << TRACED_DROP_NESTED)) {
		loss_say(msg, sizeof(msg), "%sevents traced from signal "
		    "handlers while their thread was in a trace call are "
		    "dropped", sep);
		sep = "; also ";
	}
	if (causes & (1u << TRACED_DROP_PAUSED))
		loss_say(msg, sizeof(msg), "%stracing was paused "
		    "('tracectl trace-file on' resumes it)", sep);
	limits_logx(s->uid, "session %u: %s[%d] lost %llu events (thread %d "
	    "and others; 'tracectl info trace' has the counts by cause): %s",
	    s->id, s->comm, (int)s->pid,
	    (unsigned long long)s->lost_unwarned, (int)s->tid_unwarned, msg);
	s->lost_unwarned = 0;
	s->causes_unwarned = 0;
	s->why_unwarned = 0;
	s->late_unwarned = 0;
	s->order_unwarned = 0;
}

/*
 * A session is losing events: say so (session_say_loss) at most once per
 * LOSS_WARN_INTERVAL_NS per session; losses in between are added to the
 * next warning, or said when the session ends.  'causes' has a bit per
 * enum traced_drop_cause among the losses; 'why' the LOSS_SAW_* bits of
 * writeout.h the drain thread noted while rings were full, and 'late_ms'
 * how late it came then.
 */
void
session_warn_loss(struct session *s, const struct sring *r, uint64_t lost,
    unsigned causes, unsigned why, unsigned late_ms)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	s->lost_unwarned += lost;
	s->causes_unwarned |= causes;
	s->why_unwarned |= why;
	if (late_ms > s->late_unwarned)
		s->late_unwarned = late_ms;
	if (r->max_order > s->order_unwarned)
		s->order_unwarned = r->max_order;
	s->tid_unwarned = r->tid;
	if (now < s->warn_next)
		return;
	session_say_loss(s);
	s->warn_next = now + LOSS_WARN_INTERVAL_NS;
}
