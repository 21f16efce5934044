/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * A ring's life in a session: from the RING message that brings its
 * memfd to the END chunk the pipeline sends back, and what becomes of
 * it then.
 *
 * A new ring is checked (its memfd, its header), charged to its uid
 * (RING_FDS descriptors and its size; as it grows, so does its charge),
 * given a stream file in the session's directory and handed to the
 * pipeline (writeout_add()).  From then on the pipeline reads and
 * writes it, and everything it does comes back here, on the loop
 * thread, chunk by chunk (sring_chunk_done(), the pipeline's
 * owner callback): the counts of events, bytes and losses by cause,
 * the growth of the ring, the stream file parts (stream-max-size),
 * the threads that take the ring in-band (Handover, proto/ring.h),
 * and its end.
 *
 * Ended, a ring whose thread exited is parked with its stream file
 * open: the library gives the ring to one of its next new threads
 * (proto/ring.h, Reuse), and the session gives the stream to the next
 * ring that may go on in it, so that a program that starts thread
 * after thread costs neither a file nor a mapping per thread.  Others
 * give their memory and their place under the limits back at once.
 *
 * Also here: the rings of the pool (pool.c) a session asked for
 * (SPARE_ASK), which a client of the daemon's own uid is sent.
 *
 * Loop thread only.
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "dclock.h"
#include "index.h"
#include "intake.h"
#include "quota.h"
#include "limits.h"
#include "log.h"
#include "outdir.h"
#include "pool.h"
#include "session.h"
#include "trigger.h"

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
 * Ring numbers below this are found in an array, the others in a list;
 * and the array holds at most this many entries a ring the session
 * holds, plus a start: its size follows what the session holds, not
 * the numbers its client chose (11 rings numbered to double it each
 * time took 8 MiB a session).
 */
#define SESSION_BY_INDEX_MAX	(UINT32_C(1) << 20)
#define SESSION_BY_INDEX_PER_RING 4
#define SESSION_BY_INDEX_START	1024

/* Events written for every session since the daemon started: what its
 * own CPU time is divided by (info counters). */
static uint64_t events_written_all;

static int	sring_new_file(struct sring *, char **);
static void	session_spare_send(struct session *s);

/*
 * Open a ring's stream file in its session's directory: the first one
 * (the ring is new, not yet draining), or the next one after trace-file
 * set, which its writer switches to before its next packet.  Returns 0
 * or -1.
 */
int
sring_open_stream(struct sring *r)
{
	char *path = NULL;
	int fd = -1;

	/* A recording session's packets stay in memory (recorder.c). */
	if (r->s->feed.rec == NULL && (fd = sring_new_file(r, &path)) == -1)
		return -1;
	/* The writer writes this file's packets with this file's trace. */
	r->fgen++;
	r->stream_events = 0;
	r->parts = 1;
	r->reopen = 0;
	if (!r->draining)
		stream_start(&r->p.st, fd, r->s->uuid, r->fgen);	/* ours */
	else
		writeout_stream_next(&r->p, fd, r->s->uuid, r->fgen);
	free(r->stream_path);
	r->stream_path = path;
	return 0;
}

/*
 * The next part of r's stream file, for the writer to go on in when
 * the current one is full (stream-max-size).  A failure leaves the
 * stream where it is, said once per ring.  Loop thread.
 */
static void
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
	writeout_stream_part(&r->p, fd, cfg.limit[LIMIT_STREAM_SIZE]);
	free(r->stream_path);
	r->stream_path = path;
	record_changed(r->s);
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
	 * Far out, or past what the array may hold for the rings the
	 * session holds (a client chooses the numbers; a program numbers
	 * its rings one after the other): the list will do.  Every number
	 * below nby_index is in the array.
	 */
	if (r->index >= s->nby_index) {
		uint64_t cap = SESSION_BY_INDEX_START +
		    (uint64_t)SESSION_BY_INDEX_PER_RING * (s->nrings + 1);

		if (cap > SESSION_BY_INDEX_MAX)
			cap = SESSION_BY_INDEX_MAX;
		if (r->index >= s->nby_index + 1024 || r->index >= cap)
			return 0;
		n = r->index + 1 > 2 * s->nby_index ? r->index + 1 :
		    2 * s->nby_index;
		if (n > cap)
			n = (uint32_t)cap;
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

/*
 * Stop holding a ring: its mapping, its memfd, its stream file and its
 * charge.  Only once no other thread has it (its END came back, or it
 * never went to the drain thread).  Its counts stay for info trace and
 * the index.
 */
void
sring_release(struct sring *r)
{
	sring_unpark(r);
	if (r->p.hdr == NULL)
		return;
	/* Stream files deleted meanwhile are freed by their last close,
	 * which waits for the disk: on the files thread. */
	intake_close(r->p.st.fd, r->s->uid);
	r->p.st.fd = -1;
	intake_close(r->p.next_fd, r->s->uid);
	r->p.next_fd = -1;
	close(r->p.ring_fd);
	r->p.ring_fd = -1;
	munmap(r->p.hdr, TRACED_RING_HDR_SIZE);
	r->p.hdr = NULL;
	limits_put(r->s->uid, LIMIT_RINGS, 1, RING_FDS);
	limits_put(r->s->uid, LIMIT_RING_BYTES, r->charged, 0);
	r->charged = 0;
}

/*
 * Stop keeping the parked rings of s: their streams end where they
 * are (a new directory, or descriptors needed for new rings).
 */
void
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
 * (sring_msg()), so that a program that starts thread after
 * thread costs neither a file nor a mapping per thread (RING_PARKED_MAX
 * per session, the oldest let go first).  Others give their memory and
 * their place under the limits back now, not when the process ends (a
 * long-lived process may start and end thousands of threads).
 */
static void
sring_finished(struct sring *r)
{
	struct session *s = r->s;

	if (r->p.hdr != NULL && r->finished && !r->quarantined &&
	    !s->closing && r->p.st.fd != -1 && r->p.next_fd == -1 &&
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
		    p->p.max_order == max_order)
			return sring_parked_fits(p, __atomic_load_n(
			    &p->p.hdr->since, __ATOMIC_RELAXED)) ? p : NULL;
	return NULL;
}

/*
 * The ring grew (the drain thread saw it at 'order'): its charge grows
 * with it.  The producer grows it without asking, so this is never
 * refused; a uid over its ring-bytes limit gets no new ring.
 */
static void
sring_grown(struct sring *r, uint32_t order)
{
	uint64_t size = traced_ring_size(order);

	if (order <= r->order)
		return;
	r->order = order;
	if (r->p.hdr != NULL && size > r->charged) {
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
	r->p.instance = p->p.instance;
	r->p.st = p->p.st;
	r->stream_path = p->stream_path != NULL ? strdup(p->stream_path) :
	    NULL;
	r->fgen = p->fgen;
	r->parts = p->parts;
	r->dead_gen = p->dead_gen;
	r->p.ts_floor = p->last_ts;
	p->p.st.fd = -1;
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
	r->p.max_order = p->p.max_order;
	r->order = p->order;
	r->p.hdr = p->p.hdr;
	r->p.ring_fd = p->p.ring_fd;
	r->dev = p->dev;
	r->ino = p->ino;
	r->charged = p->charged;
	r->p.next_fd = -1;
	sring_take_stream(r, p);
	p->p.hdr = NULL;
	p->p.ring_fd = -1;
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
	record_changed(s);
	__atomic_store_n(&r->p.hdr->wakeup, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&r->p.hdr->reading, 1, __ATOMIC_RELAXED);
	/*
	 * From here the drain thread has it, from where the producer's
	 * last reader left off (the tail a previous daemon, or the ring's
	 * previous thread, published); it reads it once the session's
	 * metadata is written.
	 */
	r->p.feed = &s->feed;
	r->p.tid = r->tid;
	r->draining = 1;
	writeout_add(&r->p);
	session_meta_want(s);
	log_debug("session %u: ring %u, thread %d, %llu bytes, up to %llu, "
	    "in stream %llu (%s)", s->id, r->index, (int)r->tid,
	    (unsigned long long)traced_ring_size(r->order),
	    (unsigned long long)traced_ring_size(r->p.max_order),
	    (unsigned long long)r->p.instance,
	    r->stream_path != NULL ? r->stream_path : "?");
	return 0;
}

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
static void
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
		old->p.max_order = r->p.max_order;
		old->order = r->order;
		old->p.instance = r->p.instance;
		old->p.ring_fd = old->p.st.fd = old->p.next_fd = -1;
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
	record_changed(s);
}

/*
 * RING: a thread's ring (its memfd is fd).  Refused for a limit, the
 * session goes on without that thread's events (said, and counted in
 * refused_rings).  0, or -1 when the client is to be disconnected
 * (logged).
 */
int
sring_msg(struct session *s, const struct traced_msg_ring *m, int fd)
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
	if (client_check_fd(fd, file_len, F_SEAL_SHRINK, &why) == -1 ||
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
		h = p->p.hdr;
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
	r->p.instance = m->index;
	r->tid = (pid_t)m->tid;
	r->p.max_order = m->max_order;
	r->order = order;
	r->charged = size;
	r->p.hdr = h;
	r->p.ring_fd = rfd;
	r->dev = fst.st_dev;
	r->ino = fst.st_ino;
	r->p.st.fd = -1;
	r->p.next_fd = -1;
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
			writeout_notify(&r->p);
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

/*
 * A pool ring was made: serve the sessions waiting for one (the pool's
 * callback, pool_start()).
 */
void
session_spares_serve(void *arg)
{
	struct session *s;

	(void)arg;
	TAILQ_FOREACH(s, &sessions, entry)
		session_spare_send(s);
}

/*
 * SPARE_ASK.  Only the daemon's own uid is served: a pool ring is
 * memory charged to the daemon that the client may keep (pool.c).
 * Others are told nothing and make their rings themselves, as before.
 */
int
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

/* Events written for every session, ended ones too, since start. */
uint64_t
sring_events_all(void)
{
	return events_written_all;
}

/*
 * A chunk came back from the pipeline (its owner callback, pipeline.h):
 * count it in its ring's books and its session's; a ring's END closes
 * its books and lets it go (sring_finished()), and may end its session,
 * which is then freed (session_check_done()).
 */
void
sring_chunk_done(void *arg, const struct chunk *c)
{
	struct sring *r = SRING(c->r);
	struct session *s = r->s;
	uint64_t lost = 0, now;
	unsigned causes = 0;
	uint32_t i;

	(void)arg;
	sring_grown(r, c->order);
	r->bytes += c->bytes;
	quota_written(s->uid, c->bytes);
	if (c->lost_write > 0) {
		/*
		 * Said once when it starts; a disk that keeps filling
		 * again as soon as a little is free (every short write
		 * is cut back) is said again at most every
		 * LOSS_WARN_INTERVAL_NS per stream.
		 */
		now = now_ns(CLOCK_MONOTONIC);
		if (r->write_errno == 0 && now >= r->write_warn_next) {
			/* Per uid at most so often: a uid over its quota
			 * (quota.c) has all its rings say so. */
			limits_logx(s->uid, "session %u (%s[%d]) thread %d: "
			    "cannot write %s: %s; %llu events lost, writing "
			    "resumes when it can", s->id, s->comm, (int)s->pid,
			    (int)r->tid, r->stream_path != NULL ?
			    r->stream_path : "its stream",
			    strerror(c->write_errno),
			    (unsigned long long)c->lost_write);
			r->write_warn_next = now + LOSS_WARN_INTERVAL_NS;
		}
		r->lost[TRACED_DROP_WRITE_ERROR] += c->lost_write;
		lost += c->lost_write;
		causes |= 1u << TRACED_DROP_WRITE_ERROR;
	}
	r->write_errno = c->write_errno;
	switch (c->kind) {
	case CHUNK_DATA:
		/* News for whoever reads the log, written or not. */
		if (c->crashes > 0)
			limits_logx(s->uid, "session %u (%s[%d]) thread %d: "
			    "got a fatal signal (traced:crash)", s->id,
			    s->comm, (int)s->pid, (int)r->tid);
		/* Drained, whatever became of its writing. */
		trigger_chunk(s, c);
		if (c->write_errno == 0 && c->fgen <= r->dead_gen) {
			/* Written into a directory deleted since. */
			r->lost[TRACED_DROP_DELETED] += c->events;
			outdir_deleted_add(c->events);
			record_counts(s, NULL, 0);
		} else if (c->write_errno == 0) {
			r->events += c->events;
			events_written_all += c->events;
			/* When these were counted: a viewer's rates divide by
			 * the time between counts, not between its asks. */
			r->counted_at = s->counted_at =
			    now_ns(CLOCK_MONOTONIC);
			if (c->fgen == r->fgen)
				r->stream_events += c->events;
			/* Its part half full: the next one, ready. */
			if (c->fgen == r->fgen && c->fpart + 1 == r->parts &&
			    cfg.limit[LIMIT_STREAM_SIZE] != 0 &&
			    c->fsize >= cfg.limit[LIMIT_STREAM_SIZE] / 2)
				sring_cut_stream(r);
			r->lost_records += c->lost_records;
			record_counts(s, c->counts, c->ncounts);
		} else
			record_counts(s, NULL, 0);
		for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES; i++) {
			r->lost[i] += c->lost[i];
			lost += c->lost[i];
			if (c->lost[i] > 0)
				causes |= 1u << i;
		}
		break;
	case CHUNK_SYNC:
		if (c->gen > r->gen_done)
			r->gen_done = c->gen;
		break;
	case CHUNK_END:
		r->ended = 1;
		r->last_ts = c->last_ts;
		if (c->how == END_INVALID) {
			limits_logx(s->uid, "session %u (%s[%d]) thread %d: "
			    "ring refused at position %llu: %s; no longer "
			    "reading it", s->id, s->comm, (int)s->pid,
			    (int)r->tid, (unsigned long long)c->invalid_at,
			    c->invalid);
			r->quarantined = 1;
		} else {
			r->books_closed = 1;
			for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES; i++) {
				r->lost[i] += c->unrecorded[i];
				lost += c->unrecorded[i];
				if (c->unrecorded[i] > 0)
					causes |= 1u << i;
			}
			if (c->how == END_FINISHED) {
				log_debug("session %u thread %d finished",
				    s->id, (int)r->tid);
				r->finished = 1;
			}
		}
		/* Nobody else has it now: its memory and charge go back. */
		sring_finished(r);
		break;
	case CHUNK_THREAD:
		/* Every chunk of the thread before is counted. */
		sring_handover(r, &c->next);
		__atomic_sub_fetch(&r->p.handovers_out, 1, __ATOMIC_RELEASE);
		break;
	}
	if (lost > 0)
		session_warn_loss(s, r, lost, causes, c->why, c->late_ms);
	session_check_done(s);		/* may free s and r */
}

/*
 * NOTIFY: the producer of ring 'index' asks for a drain.  A number not
 * known yet is a ring a new thread took in-band; only a session with
 * rings can have one.  0, or -1 when the client is to be disconnected
 * (logged).
 */
int
sring_notify(struct session *s, uint32_t index)
{
	struct sring *r = session_ring(s, index);

	if (r == NULL && s->nrings > 0) {
		session_notify_unknown(s);
		return 0;
	}
	if (r == NULL) {
		limits_logx(s->uid, "session %u: notify for unknown ring %u",
		    s->id, index);
		return -1;
	}
	/* Not one the pipeline holds (handed over, or ended): nothing to
	 * drain, and no lock taken for it. */
	if (r->draining && !r->ended)
		writeout_notify(&r->p);
	return 0;
}
