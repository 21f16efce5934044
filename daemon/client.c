/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Client sessions: one per connected traced process.  Accepts on
 * client.sock, takes pid and uid from SO_PEERCRED, validates every
 * message with wire_decode() and hands it to the module that keeps
 * what it brings: providers (provider.c), rings (sring.c), the
 * process's own rules (state.c), function tracing (func.c); a
 * session's directory and metadata are meta.c's, its loss warnings
 * loss.c's.  This file keeps the session's life: accept, HELLO, the
 * state bytes of its events, the end, and what is remembered of it.
 *
 * A client that sends anything invalid is disconnected with a log line
 * saying why; what it already committed is still drained.  On EOF the
 * session drains every ring to its end, closes its streams and is
 * freed once the last job is back.  The index hears of each session
 * when it starts, when it changes and when it ends, with how: "exited"
 * (EOF), "disconnected" (we dropped it) or "daemon-stopped".
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

#include "config.h"
#include "dclock.h"
#include "func.h"
#include "index.h"
#include "intake.h"
#include "limits.h"
#include "log.h"
#include "notify.h"
#include "outdir.h"
#include "pdesc.h"
#include "recorder.h"
#include "session.h"
#include "sock.h"
#include "state.h"
#include "text.h"
#include "trigger.h"

#define CLIENT_MSG_BUF	TRACED_MSG_MAX

struct session_list sessions = TAILQ_HEAD_INITIALIZER(sessions);
struct ended_list ended_sessions = TAILQ_HEAD_INITIALIZER(ended_sessions);

static struct {
	struct event_base *base;
	struct event	*ev;		/* client.sock */
	uint32_t	 next_id;	/* the next session's */
	unsigned	 nended;	/* in ended_sessions */
	int		 stopping;	/* no new session: draining to exit */
	void		(*changed)(void); /* client_set_changed() */
} cl = { .next_id = 1 };

static void session_read_cb(int fd, short what, void *arg);
static void session_eof(struct session *s);

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
			uint8_t on = !outdir_paused() &&
			    (pon >= 0 ? pon : rule[k]);

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
		if (!dclock_have_tsc()) {
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
	s->feed.clock = s->clock;
	memset(&w, 0, sizeof(w));
	wire_hdr_init(&w.hdr, TRACED_MSG_WELCOME, sizeof(w));
	w.version = TRACED_PROTOCOL_VERSION;
	w.session = s->id;
	w.clock = s->clock == DCLOCK_TSC ? TRACED_CLOCK_TSC :
	    TRACED_CLOCK_MONOTONIC;
	w.ring_order = s->ring_order = cfg.ring_order;
	w.paused = (uint32_t)outdir_paused();
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
client_check_fd(int fd, size_t size, int need_seals, const char **why)
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
 * One valid message of s, to the module it is for.  0, or -1 when the
 * client is to be disconnected (logged).
 */
static int
session_handle(struct session *s, const struct wire_msg *m, const int *fds)
{
	switch (m->type) {
	case TRACED_MSG_HELLO:
		return session_hello(s, m->u.hello);
	case TRACED_MSG_PROVIDER:
		return provider_msg(s, m->u.provider, fds[0], fds[1]);
	case TRACED_MSG_RING:
		return sring_msg(s, m->u.ring, fds[0]);
	case TRACED_MSG_RULES:
		return session_rules(s, m->u.rules, fds[0]);
	case TRACED_MSG_NOTIFY:
		return sring_notify(s, m->u.notify->index);
	case TRACED_MSG_MODULE:
	case TRACED_MSG_FUNCS:
	case TRACED_MSG_TRACER:
	case TRACED_MSG_FUNC_STATS:
		return func_msg(s, m, fds);
	case TRACED_MSG_SPARE_ASK:
		return session_spare_ask(s, m->u.spare);
	case TRACED_MSG_EXIT:
		/* Its word only: said in the index and the session's
		 * directory as what the process reported. */
		s->has_exit = 1;
		s->exit_status = m->u.exit_->status;
		record_changed(s);
		return 0;
	default:
		limits_logx(s->uid, "session %u: unexpected message type %u",
		    s->id, m->type);
		return -1;
	}
}

/*
 * Stop reading the client; drain what it left, then free the session.
 * A reply that waits for the process (trace-func, tracer) no longer
 * does: it is asked again now, not at its timeout (issue 29: a command
 * just after a program exited waited for it).
 */
static void
session_eof(struct session *s)
{
	struct sring *r;
	int first = !s->closing;

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
		if (r->draining && !r->ended)
			writeout_close(&r->p);
	/* Rings that wait for metadata wait on, up to a grace period. */
	if (s->dirfd != -1 && !session_meta_ready(s)) {
		s->meta_waiting = 1;
		session_meta_retry(s);	/* may free s */
	} else
		session_check_done(s);	/* may free s */
	if (first)
		client_changed();
}

static void
session_free(struct session *s)
{
	struct sring *r;

	while ((r = TAILQ_FIRST(&s->rings)) != NULL) {
		TAILQ_REMOVE(&s->rings, r, entry);
		/* Ended: no thread but this one knows it any more. */
		sring_release(r);
		free(r->stream_path);
		free(r);
	}
	provider_free_all(s);
	limits_put(s->uid, LIMIT_SESSIONS, 1, 2);
	free(s->by_index);
	state_session_free(s);
	trigger_session_free(s);
	func_session_free(s);
	/* Its window stays for a while: a crashed process's last events. */
	recorder_window_end(s->feed.rec);
	/* Deleted, its last close waits for the disk: not here. */
	intake_close(s->dirfd, s->uid);
	free(s->dir);
	record_free(s);
	free(s);
}

/* Keep a summary of an ended session for info trace. */
static void
session_remember(const struct session *s)
{
	const struct sring *r;
	struct ended_session *e;
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
		e->threads[n].ring_max = traced_ring_size(r->p.max_order);
		e->threads[n].events = r->events;
		e->threads[n].lost_records = r->lost_records;
		memcpy(e->threads[n].lost, r->lost, sizeof(r->lost));
		n++;
	}
	e->nthreads = n;
	TAILQ_INSERT_TAIL(&ended_sessions, e, entry);
	if (++cl.nended > ENDED_KEEP) {
		e = TAILQ_FIRST(&ended_sessions);
		TAILQ_REMOVE(&ended_sessions, e, entry);
		cl.nended--;
		free(e->dir);
		free(e->threads);
		free(e);
	}
}

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
		record_end(s);
		session_remember(s);
		if (s->has_exit)
			limits_info(s->uid, "session %u: %s[%d] ended (%s, "
			    "exit status %d)", s->id, s->comm, (int)s->pid,
			    s->how != NULL ? s->how : "exited",
			    s->exit_status);
		else
			limits_info(s->uid, "session %u: %s[%d] ended (%s)",
			    s->id, s->comm, (int)s->pid, s->how != NULL ?
			    s->how : "exited");
	} else
		log_debug("session %u: %s[%d] ended (%s) without a provider "
		    "or a ring", s->id, s->comm, (int)s->pid,
		    s->how != NULL ? s->how : "exited");
	TAILQ_REMOVE(&sessions, s, entry);
	session_free(s);
	client_changed();
}

/*
 * The daemon is stopping: no new session, and every one ends, its
 * rings drained to the end ("daemon-stopped").
 */
void
sessions_stop(void)
{
	struct session *s, *next;

	cl.stopping = 1;
	if (cl.ev != NULL)
		event_del(cl.ev);
	for (s = TAILQ_FIRST(&sessions); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (s->how == NULL)
			s->how = "daemon-stopped";
		session_eof(s);		/* may free s */
	}
}

/* Is the daemon stopping (sessions_stop())? */
int
sessions_stopping(void)
{
	return cl.stopping;
}

/* Has every session ended and been freed? */
int
sessions_idle(void)
{
	return TAILQ_EMPTY(&sessions);
}

/*
 * Set the state bytes of every session's events again, after the
 * rules or trace-file on/off changed; and the function tracing states.
 */
void
sessions_apply_state(void)
{
	struct session *s;

	TAILQ_FOREACH(s, &sessions, entry)
		session_update_state(s);
	func_apply_all();
}

/* Events written and lost so far by s, into *events and *lost. */
static void
session_counts(const struct session *s, uint64_t *events, uint64_t *lost)
{
	const struct sring *r;
	int i;

	*lost += s->lost_disconnected;
	TAILQ_FOREACH(r, &s->rings, entry) {
		*events += r->events;
		for (i = 0; i < TRACED_DROP_NCAUSES; i++)
			*lost += r->lost[i];
	}
}

/*
 * What systemd's status line says (notify.h): the sessions now, what
 * they wrote and lost, and what those that ended after 'since' did.
 */
void
sessions_count(struct notify_counts *c, uint64_t since)
{
	const struct session *s;
	const struct ended_session *e;
	uint32_t i;
	int j;

	TAILQ_FOREACH(s, &sessions, entry) {
		c->sessions++;
		session_counts(s, &c->events, &c->lost);
	}
	TAILQ_FOREACH(e, &ended_sessions, entry) {
		if (e->ended_at <= since)
			continue;
		c->gone_lost += e->lost_disconnected;
		for (i = 0; i < e->nthreads; i++) {
			c->gone_events += e->threads[i].events;
			for (j = 0; j < TRACED_DROP_NCAUSES; j++)
				c->gone_lost += e->threads[i].lost[j];
		}
	}
	c->paused = outdir_paused();
}

/* The session numbered id, or NULL. */
struct session *
session_by_id(uint32_t id)
{
	struct session *s;

	TAILQ_FOREACH(s, &sessions, entry)
		if (s->id == id)
			return s;
	return NULL;
}

/*
 * A session was freed or its process went, or a process answered
 * (func.c): whatever waits on those (a control reply) may be done.
 * Whoever cares (main.c) says so once, at start.  Rings drained, synced or ended come through the
 * pipeline's own callback (pipeline_owner.settled).
 */
void
client_set_changed(void (*cb)(void))
{
	cl.changed = cb;
}

void
client_changed(void)
{
	if (cl.changed != NULL)
		cl.changed();
}

static void	session_read(struct session *s, int fd);

/*
 * A session's message, read and handled.  The time it takes is charged
 * to its uid; a uid over its share of the loop has its sessions read
 * after everyone else's until it is under again (sock.h).  s may be
 * freed by the time session_read() returns: only its uid is kept.
 */
static void
session_read_cb(int fd, short what, void *arg)
{
	struct session *s = arg;
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	uid_t uid = s->uid;
	int pri = limits_loop_over(uid, t0) ? LOOP_PRI_OVER :
	    LOOP_PRI_CLIENT;

	(void)what;
	if (event_get_priority(s->ev) != pri)
		(void)event_priority_set(s->ev, pri);
	session_read(s, fd);
	limits_loop_charge(uid, t0, now_ns(CLOCK_MONOTONIC) - t0);
}

static void
session_read(struct session *s, int fd)
{
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
	char err[512];
	int fd;

	(void)what;
	(void)arg;
	if ((fd = sock_accept(cl.base, lfd, cl.ev, "client", &cred)) == -1)
		return;
	sock_peer_real_ids(&cred);	/* setuid root: its real uid */
	if (cfg.user && cred.uid != geteuid() && cred.uid != 0) {
		limits_logx(cred.uid, "refusing uid %u on a per-user daemon "
		    "of uid %u", (unsigned)cred.uid, (unsigned)geteuid());
		close(fd);
		return;
	}
	if (cl.stopping) {
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
	s->id = cl.next_id++;
	s->feed.id = s->id;
	s->feed.share = (uint32_t)cred.uid;
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
	s->ev = event_new(cl.base, fd, EV_READ | EV_PERSIST,
	    session_read_cb, s);
	event_add(s->ev, NULL);
	TAILQ_INSERT_TAIL(&sessions, s, entry);
	record_start(s);
}

/*
 * Watch the listening client socket fd in the loop of 'base'; the
 * first session is numbered first_id (the index's next: ids go on
 * across restarts).  Returns 0 or -1.
 */
int
client_listen(struct event_base *base, int fd, uint32_t first_id)
{
	cl.base = base;
	if (first_id > cl.next_id)
		cl.next_id = first_id;
	cl.ev = event_new(base, fd, EV_READ | EV_PERSIST, client_accept_cb,
	    NULL);
	if (cl.ev == NULL || event_add(cl.ev, NULL) == -1)
		return -1;
	return 0;
}

/* At exit, after the loop: let go of the listening event. */
void
client_fini(void)
{
	struct ended_session *e;

	if (cl.ev != NULL)
		event_free(cl.ev);
	cl.ev = NULL;
	while ((e = TAILQ_FIRST(&ended_sessions)) != NULL) {
		TAILQ_REMOVE(&ended_sessions, e, entry);
		free(e->dir);
		free(e->threads);
		free(e);
	}
}
