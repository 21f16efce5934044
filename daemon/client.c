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
#include "traced.h"

#define CLIENT_MSG_BUF	512

static void session_read_cb(int fd, short what, void *arg);

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

/* Write a session's metadata (again, after a new provider).  */
static int
session_write_metadata(struct session *s)
{
	struct ctf_event_class *cls;
	struct ctf_trace_info info;
	char path[PATH_MAX], tmp[PATH_MAX], *text;
	uint32_t i, n = 0, k;
	long len;
	int fd, rc = -1;

	cls = calloc(s->evtab != NULL ? s->evtab->nids + 1 : 1, sizeof(*cls));
	if (cls == NULL)
		return -1;
	for (i = 0; i < s->nprovs; i++)
		for (k = 0; k < s->provs[i]->nevents; k++) {
			cls[n].id = s->provs[i]->id_base + k;
			cls[n].provider = s->provs[i]->name;
			cls[n].ev = &s->provs[i]->tf.events[k];
			n++;
		}
	memset(&info, 0, sizeof(info));
	memcpy(info.uuid, s->uuid, 16);
	memcpy(info.clock_uuid, td->clk[s->clock].uuid, 16);
	info.clock_freq = td->clk[s->clock].freq;
	info.clock_offset_s = td->clk[s->clock].offset_s;
	info.clock_offset = td->clk[s->clock].offset;
	info.clock_name = td->clk[s->clock].name;
	info.hostname = td->hostname;
	info.procname = s->comm;
	info.pid = (int32_t)s->pid;
	info.session = s->id;
	len = ctf_metadata(&info, cls, n, &text);
	free(cls);
	if (len < 0) {
		log_warnx("session %u: cannot build metadata", s->id);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/metadata", s->dir);
	snprintf(tmp, sizeof(tmp), "%s/.metadata.tmp", s->dir);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd == -1) {
		log_warn("session %u: %s", s->id, tmp);
		goto out;
	}
	if (write(fd, text, (size_t)len) != len || fsync(fd) == -1) {
		log_warn("session %u: writing %s", s->id, tmp);
		close(fd);
		unlink(tmp);
		goto out;
	}
	close(fd);
	if (rename(tmp, path) == -1) {
		log_warn("session %u: rename to %s", s->id, path);
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	free(text);
	return rc;
}

/* Create the session's directory under the current trace dir. */
static int
session_make_dir(struct session *s)
{
	char name[64], path[PATH_MAX];
	int i;

	if (mkdir_p(td->cfg.trace_dir, 0750) == -1) {
		log_warn("trace directory %s", td->cfg.trace_dir);
		return -1;
	}
	sanitize_name(name, sizeof(name), s->comm);
	for (i = 0; i < 1000; i++) {
		if (i == 0)
			snprintf(path, sizeof(path), "%s/%s-%d-%u",
			    td->cfg.trace_dir, name, (int)s->pid, s->id);
		else
			snprintf(path, sizeof(path), "%s/%s-%d-%u.%d",
			    td->cfg.trace_dir, name, (int)s->pid, s->id, i);
		if (mkdir(path, 0750) == 0) {
			free(s->dir);
			s->dir = strdup(path);
			return s->dir != NULL ? 0 : -1;
		}
		if (errno != EEXIST) {
			log_warn("session %u: mkdir %s", s->id, path);
			return -1;
		}
	}
	return -1;
}

/*
 * Open (or reopen, after trace-file set) a ring's stream file in its
 * session's directory.  Not while a job is out.  Returns 0 or -1.
 */
int
sring_open_stream(struct sring *r)
{
	char path[PATH_MAX];
	int fd, i;

	for (i = 0; i < 1000; i++) {
		if (i == 0)
			snprintf(path, sizeof(path), "%s/stream-%d",
			    r->s->dir, (int)r->tid);
		else
			snprintf(path, sizeof(path), "%s/stream-%d.%d",
			    r->s->dir, (int)r->tid, i);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		    0640);
		if (fd != -1 || errno != EEXIST)
			break;
	}
	if (fd == -1) {
		log_warn("session %u: %s", r->s->id, path);
		r->write_errno = errno;
		return -1;
	}
	sring_close_stream(r);
	r->stream_fd = fd;
	r->stream_size = 0;
	r->seq = 0;
	r->discarded = 0;
	r->reopen = 0;
	free(r->stream_path);
	r->stream_path = strdup(path);
	return 0;
}

void
sring_close_stream(struct sring *r)
{
	if (r->stream_fd != -1)
		close(r->stream_fd);
	r->stream_fd = -1;
}

/*
 * Continue a session in a new directory under the current trace dir
 * (trace-file set).  Each ring switches file at its next drain.
 */
int
session_rotate(struct session *s)
{
	struct sring *r;

	if (session_make_dir(s) == -1 || session_write_metadata(s) == -1)
		return -1;
	TAILQ_FOREACH(r, &s->rings, entry)
		r->reopen = 1;
	index_session_changed(s);
	return 0;
}

struct sring *
session_ring(struct session *s, uint32_t index)
{
	struct sring *r;

	TAILQ_FOREACH(r, &s->rings, entry)
		if (r->index == index)
			return r;
	return NULL;
}

/* Send a message to the client; the daemon never sends descriptors. */
static void
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

		for (k = 0; k < p->nevents; k++) {
			uint8_t on = !td->paused &&
			    state_event_on(p->name, &p->tf.events[k]);

			if (p->state[k] != on)
				__atomic_store_n(&p->state[k], on,
				    __ATOMIC_RELAXED);
		}
	}
}

static int
session_hello(struct session *s, const struct traced_msg_hello *m)
{
	struct traced_msg_welcome w;

	if (s->welcomed) {
		log_warnx("session %u: second HELLO", s->id);
		return -1;
	}
	memcpy(s->comm, m->comm, sizeof(s->comm));
	s->comm[sizeof(s->comm) - 1] = '\0';
	s->lost_disconnected = m->lost_disconnected;
	if (m->flags & TRACED_HELLO_TSC) {
		if (!td->have_tsc) {
			log_warnx("session %u: %s[%d] timestamps with the TSC, "
			    "which this daemon could not calibrate; refusing "
			    "it (run it with TRACED_CLOCK=monotonic)", s->id,
			    s->comm, (int)s->pid);
			return -1;
		}
		s->clock = DCLOCK_TSC;
	}
	if (session_make_dir(s) == -1)
		return -1;
	s->welcomed = 1;
	index_session_changed(s);
	memset(&w, 0, sizeof(w));
	wire_hdr_init(&w.hdr, TRACED_MSG_WELCOME, sizeof(w));
	w.version = TRACED_PROTOCOL_VERSION;
	w.session = s->id;
	w.clock = s->clock == DCLOCK_TSC ? TRACED_CLOCK_TSC :
	    TRACED_CLOCK_MONOTONIC;
	w.ring_order = td->cfg.ring_order;
	w.paused = (uint32_t)td->paused;
	session_send(s, &w, sizeof(w));
	log_info("session %u: %s[%d] uid %u connected, tracing to %s", s->id,
	    s->comm, (int)s->pid, (unsigned)s->uid, s->dir);
	if (s->lost_disconnected > 0)
		log_info("session %u: %llu events were lost while no daemon "
		    "ran", s->id, (unsigned long long)s->lost_disconnected);
	return 0;
}

/* Map a memfd the client passed, checking its seals and size. */
static int
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

static int
session_provider(struct session *s, const struct traced_msg_provider *m,
    int fd, int state_fd)
{
	struct traced_msg_provider_ack ack;
	struct sprov *p = NULL, **np;
	struct evtab *et;
	const char *why = NULL;
	char err[256], fname[128];
	void *desc;
	uint32_t k;

	/* Gaps are a provider unloaded before this connection. */
	if (!s->welcomed || m->index < s->next_prov ||
	    m->id_base < s->next_id) {
		log_warnx("session %u: provider %.64s out of order: number "
		    "%u, event ids from %u; expected at least %u and %u",
		    s->id, m->name, m->index, m->id_base, s->next_prov,
		    s->next_id);
		return -1;
	}
	if (check_client_fd(fd, m->desc_size, F_SEAL_SHRINK | F_SEAL_WRITE,
	    &why) == -1) {
		log_warnx("session %u: provider %.64s: %s", s->id, m->name, why);
		return -1;
	}
	desc = mmap(NULL, m->desc_size, PROT_READ, MAP_SHARED, fd, 0);
	if (desc == MAP_FAILED) {
		log_warn("session %u: mapping a provider", s->id);
		return -1;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		munmap(desc, m->desc_size);
		return -1;
	}
	snprintf(fname, sizeof(fname), "%s[%d]:%s", s->comm, (int)s->pid,
	    m->name);
	if (tevents_parse(desc, m->desc_size, fname, &p->tf, err,
	    sizeof(err)) == -1) {
		munmap(desc, m->desc_size);
		log_warnx("session %u: bad provider description: %s", s->id,
		    err);
		goto fail;
	}
	munmap(desc, m->desc_size);
	if (p->tf.nevents != m->nevents) {
		log_warnx("session %u: provider %.64s announces %u events "
		    "and describes %zu", s->id, m->name, m->nevents,
		    p->tf.nevents);
		goto fail;
	}
	p->index = m->index;
	p->id_base = m->id_base;
	p->nevents = m->nevents;
	snprintf(p->name, sizeof(p->name), "%s", m->name);
	/*
	 * The state memfd is the process's: sealed against shrinking, so
	 * that our stores into it can never fault, and writable.  F_SEAL_
	 * WRITE (the description's memfd passed twice, say) fails the
	 * mapping.
	 */
	p->state_size = ((size_t)m->nevents + 4095) / 4096 * 4096;
	if (check_client_fd(state_fd, p->state_size, F_SEAL_SHRINK,
	    &why) == -1) {
		log_warnx("session %u: provider %.64s: state array: %s", s->id,
		    m->name, why);
		goto fail;
	}
	p->state = mmap(NULL, p->state_size, PROT_READ | PROT_WRITE,
	    MAP_SHARED, state_fd, 0);
	if (p->state == MAP_FAILED) {
		p->state = NULL;
		log_warnx("session %u: provider %.64s: cannot map its state "
		    "array writable: %s", s->id, m->name, strerror(errno));
		goto fail;
	}

	/* A new, larger event table; jobs out keep the old one. */
	et = calloc(1, sizeof(*et));
	if (et == NULL)
		goto fail;
	et->nids = m->id_base + m->nevents - TRACED_EVENT_ID_BASE;
	et->ev = calloc(et->nids, sizeof(*et->ev));
	np = reallocarray(s->provs, s->nprovs + 1, sizeof(*np));
	if (et->ev == NULL || np == NULL) {
		free(et->ev);
		free(et);
		if (np != NULL)
			s->provs = np;
		goto fail;
	}
	s->provs = np;
	if (s->evtab != NULL)
		memcpy(et->ev, s->evtab->ev,
		    s->evtab->nids * sizeof(*et->ev));
	for (k = 0; k < m->nevents; k++)
		et->ev[m->id_base - TRACED_EVENT_ID_BASE + k] =
		    &p->tf.events[k];
	et->refs = 1;
	evtab_put(s->evtab);
	s->evtab = et;
	s->provs[s->nprovs++] = p;
	s->next_prov = m->index + 1;
	s->next_id = m->id_base + m->nevents;

	session_update_state(s);
	(void)session_write_metadata(s);

	memset(&ack, 0, sizeof(ack));
	wire_hdr_init(&ack.hdr, TRACED_MSG_PROVIDER_ACK, sizeof(ack));
	ack.index = m->index;
	session_send(s, &ack, sizeof(ack));
	log_debug("session %u: provider %s, %u events", s->id, p->name,
	    p->nevents);
	return 0;
fail:
	tevents_free(&p->tf);
	if (p->state != NULL)
		munmap(p->state, p->state_size);
	free(p);
	return -1;
}

static int
session_add_ring(struct session *s, const struct traced_msg_ring *m, int fd)
{
	size_t size = (size_t)traced_ring_size(m->order);
	size_t file_len = TRACED_RING_HDR_SIZE + size;
	size_t map_len = TRACED_RING_HDR_SIZE + 2 * size;
	struct traced_ring_hdr *h;
	const char *why = NULL;
	struct sring *r;
	uint8_t *base;

	if (!s->welcomed || session_ring(s, m->index) != NULL) {
		log_warnx("session %u: ring %u announced twice", s->id,
		    m->index);
		return -1;
	}
	if (check_client_fd(fd, file_len, F_SEAL_SHRINK, &why) == -1) {
		log_warnx("session %u: ring %u: %s", s->id, m->index, why);
		return -1;
	}
	base = mmap(NULL, map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
	if (base == MAP_FAILED)
		return -1;
	if (mmap(base, file_len, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED ||
	    mmap(base + file_len, size, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_FIXED, fd, TRACED_RING_HDR_SIZE) == MAP_FAILED) {
		log_warn("session %u: mapping ring %u", s->id, m->index);
		munmap(base, map_len);
		return -1;
	}
	h = (struct traced_ring_hdr *)(void *)base;
	if (h->magic != TRACED_RING_MAGIC ||
	    h->version != TRACED_RING_VERSION || h->order != m->order) {
		log_warnx("session %u: ring %u: bad header", s->id, m->index);
		munmap(base, map_len);
		return -1;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		munmap(base, map_len);
		return -1;
	}
	r->s = s;
	r->index = m->index;
	r->tid = (pid_t)m->tid;
	r->order = m->order;
	r->hdr = h;
	r->data = base + TRACED_RING_HDR_SIZE;
	r->map_len = map_len;
	r->stream_fd = -1;
	/*
	 * Start where the producer's reader left off: its previous
	 * daemon published tail; ours is checked against head on
	 * every drain.
	 */
	r->tail = __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE);
	if (sring_open_stream(r) == -1) {
		munmap(base, map_len);
		free(r);
		return -1;
	}
	TAILQ_INSERT_TAIL(&s->rings, r, entry);
	s->nrings++;
	index_session_changed(s);
	__atomic_store_n(&h->wakeup, 1, __ATOMIC_RELEASE);
	log_debug("session %u: ring %u, thread %d, %zu bytes", s->id,
	    r->index, (int)r->tid, size);
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
	case TRACED_MSG_NOTIFY:
		r = session_ring(s, m->u.notify->index);
		if (r == NULL) {
			log_warnx("session %u: notify for unknown ring %u",
			    s->id, m->u.notify->index);
			return -1;
		}
		writeout_submit(r, 0);
		return 0;
	default:
		log_warnx("session %u: unexpected message type %u", s->id,
		    m->type);
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
	s->closing = 1;
	TAILQ_FOREACH(r, &s->rings, entry)
		writeout_submit(r, 0);
	session_check_done(s);
}

static void
session_free(struct session *s)
{
	struct sring *r;
	uint32_t i;

	while ((r = TAILQ_FIRST(&s->rings)) != NULL) {
		TAILQ_REMOVE(&s->rings, r, entry);
		sring_close_stream(r);
		munmap(r->hdr, r->map_len);
		free(r->stream_path);
		free(r);
	}
	for (i = 0; i < s->nprovs; i++) {
		munmap(s->provs[i]->state, s->provs[i]->state_size);
		tevents_free(&s->provs[i]->tf);
		free(s->provs[i]);
	}
	free(s->provs);
	evtab_put(s->evtab);
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

/*
 * Free a closing session once no job is out for any of its rings.
 */
void
session_check_done(struct session *s)
{
	struct sring *r;

	if (!s->closing)
		return;
	TAILQ_FOREACH(r, &s->rings, entry)
		if (r->queued)
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
	index_session_end(s);
	session_remember(s);
	log_info("session %u: %s[%d] ended (%s)", s->id, s->comm, (int)s->pid,
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
			log_warn("session %u: receive", s->id);
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
		log_warnx("session %u: %s[%d]: %s; disconnecting it", s->id,
		    s->comm, (int)s->pid, why);
		rc = -1;
	} else
		rc = session_handle(s, &m, fds);
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	if (rc == -1) {
		if (rc != 0 && why == NULL)
			log_warnx("session %u: %s[%d]: disconnecting it",
			    s->id, s->comm, (int)s->pid);
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
		log_warnx("refusing uid %u on a per-user daemon of uid %u",
		    (unsigned)cred.uid, (unsigned)td->uid);
		close(fd);
		return;
	}
	if (td->stopping) {
		close(fd);
		return;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		close(fd);
		return;
	}
	s->id = td->next_session++;
	s->pid = cred.pid;
	s->uid = cred.uid;
	s->gid = cred.gid;
	s->fd = fd;
	s->next_id = TRACED_EVENT_ID_BASE;
	s->started = now_ns(CLOCK_REALTIME);
	snprintf(s->comm, sizeof(s->comm), "pid%d", (int)cred.pid);
	TAILQ_INIT(&s->rings);
	if (getrandom(s->uuid, sizeof(s->uuid), 0) != sizeof(s->uuid))
		memset(s->uuid, (int)s->id, sizeof(s->uuid));
	s->uuid[6] = (uint8_t)((s->uuid[6] & 0x0f) | 0x40);
	s->uuid[8] = (uint8_t)((s->uuid[8] & 0x3f) | 0x80);
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

/*
 * A session is losing events: say so, with the count by cause and what
 * to do about it, at most once per LOSS_WARN_INTERVAL_NS per session
 * (losses in between are added to the next warning).
 */
void
session_warn_loss(struct session *s, const struct sring *r, uint64_t lost,
    unsigned causes)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	uint64_t ring = traced_ring_size(r->order);
	const char *fix;

	s->lost_unwarned += lost;
	s->causes_unwarned |= causes;
	if (now < s->warn_next)
		return;
	causes = s->causes_unwarned;
	if (causes & (1u << TRACED_DROP_RING_FULL))
		fix = "the daemon could not drain the rings in time: give the "
		    "program bigger rings (TRACED_RING_SIZE=%lluK in its "
		    "environment, or traced --ring-size %lluK for every "
		    "program)";
	else if (causes & (1u << TRACED_DROP_DISCONNECTED))
		fix = "no daemon was draining its rings (ring size %lluK; "
		    "TRACED_RING_SIZE=%lluK would have kept more)";
	else if (causes & (1u << TRACED_DROP_WRITE_ERROR))
		fix = "writing the trace failed (see above; ring %lluK, "
		    "%lluK)";
	else
		fix = "events traced from signal handlers while their thread "
		    "was tracing are dropped (ring %lluK, %lluK)";
	{
		char msg[512];

		snprintf(msg, sizeof(msg), fix,
		    (unsigned long long)(ring * 4 / 1024),
		    (unsigned long long)(ring * 4 / 1024));
		log_warnx("session %u: %s[%d] lost %llu events (thread %d and "
		    "others; 'tracectl info trace' has the counts by cause): "
		    "%s", s->id, s->comm, (int)s->pid,
		    (unsigned long long)s->lost_unwarned, (int)r->tid, msg);
	}
	s->lost_unwarned = 0;
	s->causes_unwarned = 0;
	s->warn_next = now + LOSS_WARN_INTERVAL_NS;
}
