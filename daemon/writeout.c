/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The writeout pool: worker threads that drain rings into CTF stream
 * files.
 *
 * DESIGN
 *
 * The loop thread submits a ring (on a NOTIFY, on the drain timer, for
 * a flush, at session end); a ring is queued at most once, so one
 * worker at a time owns its drain fields (tail, stream file, packet
 * counters) and its stream stays in order.  A worker:
 *
 *   1. loads head (acquire; pairs with the producer's release in
 *      traced_commit) and checks it against our own tail: a ring whose
 *      head went backwards or ran more than its size ahead is invalid;
 *   2. copies up to DRAIN_CHUNK bytes of [tail, head) into its own
 *      buffer, so that the producer can no longer change what is
 *      checked and written (the ring is the client's memory);
 *   3. walks the records of the copy with recwalk() (proto/recwalk.c):
 *      sizes, known ids, the layout each event's signature implies,
 *      non-decreasing timestamps, LOST records;
 *   4. writes a packet header plus the checked records with one writev
 *      and publishes the new tail (release; pairs with the producer's
 *      acquire when its cached tail said full), then re-arms the
 *      wakeup flag.
 *
 * A write that fails or is short is cut back (ftruncate) so that only
 * whole packets are ever in a file; its events are counted as lost to
 * a write error and become the next packet's events_discarded.  A span
 * that fails validation quarantines the ring: nothing of it reaches a
 * file, the session and every other client carry on.
 *
 * Workers block every signal, name themselves, touch no libevent
 * object and report to the loop through a done list and an eventfd.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

#include <event2/event.h>

#include "ctf.h"
#include "recwalk.h"
#include "traced.h"

struct job {
	TAILQ_ENTRY(job) entry;
	struct sring	*r;
	struct evtab	*evtab;		/* reference held by the loop */
	int		 sync;		/* fdatasync after writing */
	int		 final;		/* the process is gone: close the books */
	uint64_t	 gen;		/* flush generation at submit */
	uint64_t	 tail;		/* the tail we started from */
	/* Results. */
	struct recwalk	 walk;		/* events, LOST records and their
					   causes, per-id counts */
	uint64_t	 bytes;
	uint64_t	 lost_write;	/* events lost to write errors */
	int		 write_errno;
	const char	*invalid;	/* why the span was refused */
	uint64_t	 invalid_at;	/* its ring position */
	int		 finished;	/* ring finished and empty */
	int		 books_closed;	/* drain_close() counted the last
					   unreported losses */
	int		 more;		/* stopped with data left: requeue */
	uint64_t	 unrecorded[TRACED_DROP_PRODUCER_NCAUSES];
	uint64_t	*counts;	/* events written by id - ID_BASE,
					   ncounts of them, for the index;
					   walk.counts points here */
	uint32_t	 ncounts;
};

TAILQ_HEAD(job_list, job);

struct writeout {
	pthread_mutex_t	 lock;
	pthread_cond_t	 cond;
	struct job_list	 todo;		/* under lock */
	struct job_list	 done;		/* under lock */
	int		 stop;		/* under lock */
	unsigned	 nworkers;
	pthread_t	*threads;
	int		 nice;		/* for the workers */
	int		 efd;		/* done -> loop */
	struct event	*ev;
	unsigned	 outstanding;	/* loop thread: jobs out */
};

static struct writeout *wo_global;

struct drain_ctx {
	uint8_t		*buf;		/* DRAIN_CHUNK + header */
	struct iovec	 iov[2];
};

/*
 * The write of buf[0, len), records recwalk() checked and counted,
 * failed: take their events back out of the per-id counts.
 */
static void
drain_uncount(struct job *j, const uint8_t *buf, size_t len)
{
	struct traced_rec_hdr h;
	size_t off;

	for (off = 0; off < len; off += h.size) {
		memcpy(&h, buf + off, sizeof(h));
		if (h.id != TRACED_EVENT_LOST)
			j->counts[h.id - TRACED_EVENT_ID_BASE]--;
	}
}

/*
 * Append one packet: header + len bytes of buf.  Whole packets only:
 * a failed or short write is cut back.  Returns 0 or -1 (errno set).
 */
static int
drain_write_packet(struct sring *r, const uint8_t *hdr, const uint8_t *buf,
    size_t len)
{
	struct iovec iov[2] = {
		{ (void *)hdr, CTF_PACKET_HDR_SIZE },
		{ (void *)buf, len },
	};
	size_t want = CTF_PACKET_HDR_SIZE + len;
	ssize_t n;
	int saved;

	if (r->stream_fd == -1) {
		errno = EBADF;
		return -1;
	}
	n = pwritev(r->stream_fd, iov, 2, r->stream_size);
	if (n == (ssize_t)want) {
		r->stream_size += (off_t)want;
		return 0;
	}
	saved = n == -1 ? errno : ENOSPC;
	(void)!ftruncate(r->stream_fd, r->stream_size);
	errno = saved;
	return -1;
}

/*
 * The ring is closing for good (thread or process gone): events its
 * producer counted as lost but never reported in a LOST record (it had
 * no event after them) go into one last, empty packet, so that the
 * stream's events_discarded is exact.  Once per ring.
 */
static void
drain_close(struct job *j)
{
	struct sring *r = j->r;
	uint8_t hdr[CTF_PACKET_HDR_SIZE];
	struct ctf_packet pk;
	uint64_t n = 0, d, rec;
	int i;

	/* Set by the loop in job_complete(), never while a job is out. */
	if (r->books_closed)
		return;
	j->books_closed = 1;
	for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES; i++) {
		/* Client memory: read once, and a total that went
		 * backwards is no loss. */
		d = __atomic_load_n(&r->hdr->dropped[i], __ATOMIC_RELAXED);
		rec = __atomic_load_n(&r->hdr->recorded[i], __ATOMIC_RELAXED);
		if (d > rec && d - rec < (UINT64_C(1) << 48)) {
			j->unrecorded[i] = d - rec;
			n += d - rec;
		}
	}
	if (n == 0)
		return;
	/* A stream's first packet says 0 discarded (see drain()). */
	if (r->seq == 0) {
		memset(&pk, 0, sizeof(pk));
		pk.uuid = r->s->uuid;
		pk.stream_instance_id = r->index;
		pk.ts_begin = pk.ts_end = r->last_ts;
		pk.content_bytes = CTF_PACKET_HDR_SIZE;
		pk.tid = (uint32_t)r->tid;
		ctf_packet_header(hdr, &pk);
		if (drain_write_packet(r, hdr, NULL, 0) == 0)
			r->seq++;
	}
	if (n == 0)
		return;
	memset(&pk, 0, sizeof(pk));
	pk.uuid = r->s->uuid;
	pk.stream_instance_id = r->index;
	pk.ts_begin = pk.ts_end = r->last_ts;
	pk.content_bytes = CTF_PACKET_HDR_SIZE;
	pk.seq = r->seq;
	pk.events_discarded = r->discarded + n;
	pk.tid = (uint32_t)r->tid;
	ctf_packet_header(hdr, &pk);
	if (drain_write_packet(r, hdr, NULL, 0) == 0)
		r->seq++;
	else
		j->write_errno = errno;
	r->discarded += n;
}

/*
 * Load the producer's head and check it against our tail: it never goes
 * backwards nor runs more than the ring ahead.  0, or -1 with the job
 * marked invalid.
 */
static int
drain_load_head(struct job *j, uint64_t tail, uint64_t size, uint64_t *head)
{
	/* Pairs with the store-release of head in traced_commit(). */
	*head = __atomic_load_n(&j->r->hdr->head, __ATOMIC_ACQUIRE);
	if (*head >= tail && *head - tail <= size)
		return 0;
	j->invalid = *head < tail ? "head went backwards" :
	    "head beyond the ring";
	j->invalid_at = *head;
	return -1;
}

static void
drain(struct job *j, struct drain_ctx *c)
{
	struct sring *r = j->r;
	uint64_t size = traced_ring_size(r->order), head, tail = r->tail;
	uint8_t hdr[CTF_PACKET_HDR_SIZE];
	struct ctf_packet pk;

	j->tail = tail;
	if (drain_load_head(j, tail, size, &head) == -1)
		return;
	/*
	 * Packet by packet.  Once a packet's bytes are copied out and
	 * checked they are ours: tail is published before the (slower)
	 * write, so the producer gets its room back at once.  Head is
	 * read again after each packet, so a busy ring is followed while
	 * it fills, up to one ring's worth per job: then it goes to the
	 * back of the queue (j->more) and the other rings get their turn.
	 */
	while (tail < head && tail - j->tail < size) {
		struct recwalk *w = &j->walk;
		uint64_t want = head - tail, first_ts, discarded;
		uint64_t events_before = w->events;
		uint64_t discarded_before = w->discarded;
		long len;

		if (want > DRAIN_CHUNK)
			want = DRAIN_CHUNK;
		/* The double mapping makes [tail, tail + want) contiguous. */
		memcpy(c->buf, r->data + (tail & (size - 1)), want);
		w->last_ts = r->last_ts;
		len = recwalk(w, c->buf, want);
		if (len < 0) {
			j->invalid = w->invalid;
			j->invalid_at = tail + w->invalid_off;
			return;
		}
		r->last_ts = w->last_ts;
		first_ts = w->first_ts;
		discarded = r->discarded + (w->discarded - discarded_before);
		if (len == 0) {
			j->invalid = "record runs past the committed head";
			j->invalid_at = tail;
			return;
		}
		tail += (uint64_t)len;
		r->tail = tail;
		/* Pairs with the producer's load-acquire of tail. */
		__atomic_store_n(&r->hdr->tail, tail, __ATOMIC_RELEASE);

		/*
		 * A stream's first packet must say 0 discarded: readers
		 * report a first non-zero value without a count.  Losses
		 * before the first packet go after an empty one.
		 */
		if (r->seq == 0 && discarded > 0) {
			memset(&pk, 0, sizeof(pk));
			pk.uuid = r->s->uuid;
			pk.stream_instance_id = r->index;
			pk.ts_begin = pk.ts_end = first_ts;
			pk.content_bytes = CTF_PACKET_HDR_SIZE;
			pk.tid = (uint32_t)r->tid;
			ctf_packet_header(hdr, &pk);
			if (drain_write_packet(r, hdr, NULL, 0) == 0)
				r->seq++;
		}
		memset(&pk, 0, sizeof(pk));
		pk.uuid = r->s->uuid;
		pk.stream_instance_id = r->index;
		pk.ts_begin = first_ts;
		pk.ts_end = r->last_ts;
		pk.content_bytes = CTF_PACKET_HDR_SIZE + (uint64_t)len;
		pk.seq = r->seq;
		pk.events_discarded = discarded;
		pk.tid = (uint32_t)r->tid;
		pk.tail_pad = w->tail_pad;
		ctf_packet_header(hdr, &pk);
		if (drain_write_packet(r, hdr, c->buf, (size_t)len) == 0) {
			r->seq++;
			r->discarded = discarded;
			j->bytes += CTF_PACKET_HDR_SIZE + (uint64_t)len;
		} else {
			/* The events are lost; the next packet says so. */
			uint64_t n = w->events - events_before;

			j->write_errno = errno;
			w->events = events_before;
			drain_uncount(j, c->buf, (size_t)len);
			j->lost_write += n;
			r->discarded = discarded + n;
		}
		if (drain_load_head(j, tail, size, &head) == -1)
			return;
	}
	j->more = tail < head;
	/* Ask for a wakeup again: the producer's next crossing notifies. */
	__atomic_store_n(&r->hdr->wakeup, 1, __ATOMIC_RELEASE);
	if ((__atomic_load_n(&r->hdr->flags, __ATOMIC_ACQUIRE) &
	    TRACED_RING_FINISHED) && head == r->tail &&
	    __atomic_load_n(&r->hdr->head, __ATOMIC_ACQUIRE) == r->tail)
		j->finished = 1;
	if (j->final || j->finished)
		drain_close(j);
	if (j->sync && r->stream_fd != -1 && fdatasync(r->stream_fd) == -1 &&
	    j->write_errno == 0)
		j->write_errno = errno;
}

static void *
writeout_main(void *arg)
{
	struct writeout *wo = arg;
	struct drain_ctx c;
	struct job *j;
	sigset_t all;
	uint64_t one = 1;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	(void)prctl(PR_SET_NAME, "traced-writeout", 0, 0, 0);
	/* Below the traced programs: drains take CPU they leave idle. */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), wo->nice) == -1)
		log_warn("writeout thread: setpriority %d", wo->nice);
	c.buf = malloc(DRAIN_CHUNK);
	if (c.buf == NULL)
		fatal("writeout buffer");

	pthread_mutex_lock(&wo->lock);
	for (;;) {
		while (!wo->stop && TAILQ_EMPTY(&wo->todo))
			pthread_cond_wait(&wo->cond, &wo->lock);
		if (wo->stop && TAILQ_EMPTY(&wo->todo))
			break;
		j = TAILQ_FIRST(&wo->todo);
		TAILQ_REMOVE(&wo->todo, j, entry);
		pthread_mutex_unlock(&wo->lock);

		drain(j, &c);

		pthread_mutex_lock(&wo->lock);
		TAILQ_INSERT_TAIL(&wo->done, j, entry);
		(void)!write(wo->efd, &one, sizeof(one));
	}
	pthread_mutex_unlock(&wo->lock);
	free(c.buf);
	return NULL;
}

/* A ring may come before any provider: no table, every id unknown. */
struct evtab *
evtab_get(struct evtab *t)
{
	if (t != NULL)
		t->refs++;
	return t;
}

void
evtab_put(struct evtab *t)
{
	if (t != NULL && --t->refs == 0) {
		free(t->ev);
		free(t);
	}
}

static void
job_complete(struct job *j)
{
	struct sring *r = j->r;
	struct session *s = r->s;
	int i, sync_again;
	uint64_t lost = j->lost_write;
	unsigned causes = j->lost_write ? 1u << TRACED_DROP_WRITE_ERROR : 0;

	r->queued = 0;
	r->books_closed |= j->books_closed;
	r->events += j->walk.events;
	r->lost_records += j->walk.lost_records;
	r->bytes += j->bytes;
	for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES; i++) {
		uint64_t n = j->walk.lost[i] + j->unrecorded[i];

		r->lost[i] += n;
		lost += n;
		if (n > 0)
			causes |= 1u << i;
	}
	if (j->lost_write > 0) {
		if (r->write_errno == 0)
			log_warnx("session %u (%s[%d]) thread %d: cannot "
			    "write %s: %s; %llu events lost, writing resumes "
			    "when it can", s->id, s->comm, (int)s->pid,
			    (int)r->tid, r->stream_path,
			    strerror(j->write_errno),
			    (unsigned long long)j->lost_write);
		r->lost[TRACED_DROP_WRITE_ERROR] += j->lost_write;
	}
	r->write_errno = j->write_errno;
	if (lost > 0)
		session_warn_loss(s, r, lost, causes);
	if (j->invalid != NULL) {
		log_warnx("session %u (%s[%d]) thread %d: ring refused at "
		    "position %llu: %s; no longer reading it", s->id, s->comm,
		    (int)s->pid, (int)r->tid,
		    (unsigned long long)j->invalid_at, j->invalid);
		r->quarantined = 1;
	}
	if (j->gen > r->gen_done && j->sync)
		r->gen_done = j->gen;
	index_session_counts(s, j->counts, j->ncounts);
	free(j->counts);
	evtab_put(j->evtab);
	if (j->more)
		r->again = 1;
	if (j->finished && !r->again) {
		log_debug("session %u thread %d finished", s->id, (int)r->tid);
		r->finished = 1;
		sring_close_stream(r);
	}
	free(j);
	if (r->again && !r->quarantined && !r->finished) {
		sync_again = r->sync_again;
		r->again = r->sync_again = 0;
		writeout_submit(r, sync_again);
	}
	session_check_done(s);
}

static void
writeout_done_cb(int fd, short what, void *arg)
{
	struct writeout *wo = arg;
	struct job_list done;
	struct job *j;
	uint64_t n;

	(void)fd;
	(void)what;
	(void)!read(wo->efd, &n, sizeof(n));
	TAILQ_INIT(&done);
	pthread_mutex_lock(&wo->lock);
	TAILQ_CONCAT(&done, &wo->done, entry);
	pthread_mutex_unlock(&wo->lock);
	while ((j = TAILQ_FIRST(&done)) != NULL) {
		TAILQ_REMOVE(&done, j, entry);
		wo->outstanding--;
		job_complete(j);
	}
	control_flush_check();
}

/*
 * Start the pool.  Returns it, or NULL (logged).  Loop thread.
 */
struct writeout *
writeout_new(struct event_base *base, unsigned nworkers, int nice)
{
	struct writeout *wo;
	unsigned i;

	wo = calloc(1, sizeof(*wo));
	if (wo == NULL)
		return NULL;
	pthread_mutex_init(&wo->lock, NULL);
	wo->nice = nice;
	pthread_cond_init(&wo->cond, NULL);
	TAILQ_INIT(&wo->todo);
	TAILQ_INIT(&wo->done);
	wo->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (wo->efd == -1) {
		log_warn("eventfd");
		free(wo);
		return NULL;
	}
	wo->ev = event_new(base, wo->efd, EV_READ | EV_PERSIST,
	    writeout_done_cb, wo);
	event_add(wo->ev, NULL);
	wo->threads = calloc(nworkers, sizeof(*wo->threads));
	for (i = 0; i < nworkers; i++) {
		if (pthread_create(&wo->threads[i], NULL, writeout_main,
		    wo) != 0) {
			log_warnx("cannot start writeout thread %u", i);
			break;
		}
	}
	wo->nworkers = i;
	if (i == 0)
		fatalx("no writeout thread could start");
	wo_global = wo;
	return wo;
}

/*
 * Stop the workers once the queue is empty, and free the pool.  The
 * caller drained what it wanted first.  Loop thread.
 */
void
writeout_free(struct writeout *wo)
{
	unsigned i;

	if (wo == NULL)
		return;
	pthread_mutex_lock(&wo->lock);
	wo->stop = 1;
	pthread_cond_broadcast(&wo->cond);
	pthread_mutex_unlock(&wo->lock);
	for (i = 0; i < wo->nworkers; i++)
		pthread_join(wo->threads[i], NULL);
	writeout_done_cb(wo->efd, EV_READ, wo);
	event_free(wo->ev);
	close(wo->efd);
	free(wo->threads);
	pthread_mutex_destroy(&wo->lock);
	pthread_cond_destroy(&wo->cond);
	free(wo);
	wo_global = NULL;
}

/*
 * Queue a drain of 'r' (with fdatasync if 'sync').  If it is out
 * already, it is drained again when it comes back.  Loop thread.
 */
void
writeout_submit(struct sring *r, int sync)
{
	struct writeout *wo = wo_global;
	struct job *j;

	if (wo == NULL || r->quarantined || r->finished)
		return;
	if (r->queued) {
		r->again = 1;
		r->sync_again |= sync;
		return;
	}
	if (r->reopen && sring_open_stream(r) == -1)
		return;
	j = calloc(1, sizeof(*j));
	if (j == NULL) {
		log_warn("writeout job");
		return;
	}
	j->r = r;
	j->ncounts = r->s->evtab != NULL ? r->s->evtab->nids : 0;
	j->counts = calloc(j->ncounts + 1, sizeof(*j->counts));
	if (j->counts == NULL) {
		log_warn("writeout job");
		free(j);
		return;
	}
	j->evtab = evtab_get(r->s->evtab);
	if (j->evtab != NULL) {
		j->walk.ev = j->evtab->ev;
		j->walk.nids = j->evtab->nids;
	}
	j->walk.counts = j->counts;
	j->sync = sync;
	j->gen = td->flush_gen;
	j->final = r->s->closing;
	r->queued = 1;
	wo->outstanding++;
	pthread_mutex_lock(&wo->lock);
	TAILQ_INSERT_TAIL(&wo->todo, j, entry);
	pthread_cond_signal(&wo->cond);
	pthread_mutex_unlock(&wo->lock);
}

/* Drain every ring of every session.  Loop thread. */
void
writeout_drain_all(int sync)
{
	struct session *s;
	struct sring *r;

	TAILQ_FOREACH(s, &td->sessions, entry)
		TAILQ_FOREACH(r, &s->rings, entry)
			writeout_submit(r, sync);
}

int
writeout_idle(void)
{
	return wo_global == NULL || wo_global->outstanding == 0;
}

unsigned
writeout_nworkers(void)
{
	return wo_global != NULL ? wo_global->nworkers : 0;
}
