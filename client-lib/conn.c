/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The connection thread: the only code in a traced process that talks
 * to the daemon.  It finds the daemon's client.sock, says HELLO, sends
 * the process's own rules (rules.c), every provider (with its state
 * memfd, which the daemon writes) and ring, asks for a ring from the
 * daemon's pool, forwards the wakeups application threads ask for, and
 * when the daemon goes away tries again every TRACED_RETRY_MS (a daemon
 * that refuses us, less and less often).  The state bytes stay as the last
 * daemon left them; no mapping changes.  Events traced meanwhile fill
 * the rings; the next daemon drains them, and what did not fit is
 * counted as lost while disconnected.
 *
 * It blocks all signals and never holds lib.lock across a system call
 * that can wait for the daemon, except the bounded sends below, so that
 * application threads creating rings never wait on a slow daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "functrace/functrace.h"
#include "internal.h"
#include "rundir.h"
#include "wire.h"

#define TRACED_RETRY_MS		250	/* between connection attempts */
#define TRACED_SEND_TIMEOUT_S	1	/* a daemon that does not read */
#define TRACED_WELCOME_WAIT_S	5	/* a daemon that does not answer */
#define TRACED_BACKOFF_MAX_MS	8000	/* a daemon that refuses us */
#define TRACED_SHORT_MS		200	/* a connection that short was refused */
/* Rings of exited threads kept for new ones (ring.c), at most. */
#define RING_IDLE_MAX		16
/* While rings wait for a new thread (ring.c, RING_HANDOVER_WAIT). */
#define CONN_HANDOVER_POLL_MS	50

/* The last "no daemon: tried ..." said; connection thread only. */
static char conn_tried[768];

/* Who we are, for the trust rule (proto/rundir.h). */
static void
conn_self(struct rundir_self *self)
{
	struct rundir_stat run, rt;

	self->uid = getuid();
	self->euid = geteuid();
	self->secure = lib.secure;
	rundir_stat_at(AT_FDCWD, RUNDIR_SYSTEM_PARENT, -1, &run, NULL);
	rundir_stat_at(AT_FDCWD, RUNDIR_SYSTEM, -1, &rt, NULL);
	self->system_uid = rundir_system_uid(&run, &rt);
}

/*
 * Connect to client.sock in candidate c and check the daemon behind it.
 * Returns the socket, or -1 with *v saying why not and 'what' the path
 * it is about (the directory, or the socket).
 */
static int
conn_try(const struct rundir_self *self, const struct rundir_cand *c,
    struct rundir_verdict *v, char *what, size_t whatsize)
{
	struct sockaddr_un sun;
	struct timeval tv = { TRACED_SEND_TIMEOUT_S, 0 };
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int dfd, fd;

	dfd = rundir_open(self, c, TRACED_CLIENT_SOCK, &sun, NULL, v, what,
	    whatsize);
	if (dfd == -1)
		return -1;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		*v = rundir_check_connect(errno);
		goto fail;
	}
	/* Before connect(): a daemon whose backlog is full waits no more. */
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		*v = rundir_check_connect(errno);
		goto fail;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1) {
		*v = rundir_check_connect(errno);
		goto fail;
	}
	/* Refused here, the impostor got a connect() and not a byte. */
	if ((*v = rundir_check_peer(self, cred.uid)).why != RUNDIR_OK)
		goto fail;
	close(dfd);
	return fd;
fail:
	if (fd != -1)
		close(fd);
	close(dfd);
	return -1;
}

/*
 * Connect to the first daemon we can trust (proto/rundir.h), or return
 * -1.  Under TRACED_DEBUG, says every candidate it passed over and why:
 * once per change, not at every retry.
 */
static int
conn_connect(void)
{
	struct rundir_cand cand[RUNDIR_CAND_MAX];
	struct rundir_verdict v;
	struct rundir_self self;
	char what[RUNDIR_PATH_MAX + 32], tried[768];
	int i, n, fd = -1;

	conn_self(&self);
	n = rundir_candidates(&self, lib.runtime_dir, lib.xdg_runtime_dir,
	    cand);
	tried[0] = '\0';
	for (i = 0; i < n && fd == -1; i++) {
		fd = conn_try(&self, &cand[i], &v, what, sizeof(what));
		if (fd == -1)
			rundir_tried_add(tried, sizeof(tried), what, &v);
	}
	if (!lib_debug)
		return fd;
	if (fd != -1) {
		if (tried[0] != '\0')
			lib_debugx("skipped: %s", tried);
		lib_debugx("connected to %s", what);
		conn_tried[0] = '\0';
	} else if (strcmp(tried, conn_tried) != 0) {
		lib_debugx("no daemon: tried %s", tried);
		snprintf(conn_tried, sizeof(conn_tried), "%s", tried);
	}
	return fd;
}

/* Send a message with nfds (0 to 2) descriptors. */
static int
conn_send(int sock, const void *msg, size_t len, const int *fds, int nfds,
    int flags)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(2 * sizeof(int))];
	} cm;
	struct iovec iov = { (void *)msg, len };
	struct msghdr mh;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (nfds > 0) {
		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.buf;
		mh.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		cm.hdr.cmsg_level = SOL_SOCKET;
		cm.hdr.cmsg_type = SCM_RIGHTS;
		cm.hdr.cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(&cm.hdr), fds, (size_t)nfds * sizeof(int));
	}
	for (;;) {
		if (sendmsg(sock, &mh, MSG_NOSIGNAL | flags) == (ssize_t)len)
			return 0;
		if (errno != EINTR)
			break;
	}
	DEBUG("send: %s", strerror(errno));
	return -1;
}

/* The process's name (its main thread's), not this thread's. */
static void
conn_comm(char *buf, size_t size)
{
	ssize_t n = -1;
	int fd;

	fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	if (fd != -1) {
		n = read(fd, buf, size - 1);
		close(fd);
	}
	if (n <= 0)
		snprintf(buf, size, "%s", program_invocation_short_name);
	else
		buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* conn_send() for function tracing (functrace/fconn.c). */
int
conn_send_msg(int sock, const void *msg, size_t len, const int *fds, int nfds)
{
	return conn_send(sock, msg, len, fds, nfds, 0);
}

static int
conn_send_hello(int sock)
{
	struct traced_msg_hello m;
	uint64_t lost;

	memset(&m, 0, sizeof(m));
	wire_hdr_init(&m.hdr, TRACED_MSG_HELLO, sizeof(m));
	m.version = TRACED_PROTOCOL_VERSION;
	conn_comm(m.comm, sizeof(m.comm));
	lost = __atomic_exchange_n(&lib.lost_disconnected, 0,
	    __ATOMIC_RELAXED);
	m.flags = traced_clock_tsc ? TRACED_HELLO_TSC : 0;
	m.lost_disconnected = lost;
	return conn_send(sock, &m, sizeof(m), NULL, 0, 0);
}

/*
 * Ask the daemon for a ring from its pool (proto/wire.h, SPARE_ASK): of
 * the size TRACED_RING_SIZE asked for, or of the daemon's.
 */
static int
conn_send_spare_ask(int sock)
{
	struct traced_msg_spare m;

	memset(&m, 0, sizeof(m));
	wire_hdr_init(&m.hdr, TRACED_MSG_SPARE_ASK, sizeof(m));
	m.max_order = lib.ring_order_env ? __atomic_load_n(&lib.ring_order,
	    __ATOMIC_RELAXED) : 0;
	return conn_send(sock, &m, sizeof(m), NULL, 0, 0);
}

/* Let go of the pool ring we hold, if any.  Locked. */
static void
conn_spare_drop_locked(void)
{
	if (lib.spare_fd != -1)
		close(lib.spare_fd);
	lib.spare_fd = -1;
	lib.spare_ask = 0;
	lib.spare_seen = 0;
}

/*
 * SPARE: keep the ring if it is what we asked for and safe to map: a
 * memfd of the exact size, sealed so that it can never shrink under
 * our threads (a mapping past its end would kill the program).  Locked.
 */
static void
conn_spare_locked(const struct traced_msg_spare *m, int fd)
{
	uint32_t order = __atomic_load_n(&lib.ring_order, __ATOMIC_RELAXED);
	struct stat st;
	int seals;

	seals = fcntl(fd, F_GET_SEALS);
	if (lib.spare_fd != -1 || m->max_order != order ||
	    fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != traced_ring_file_size(order) ||
	    seals == -1 || (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) !=
	    (F_SEAL_SHRINK | F_SEAL_GROW)) {
		DEBUG("a pool ring from the daemon that does not fit; "
		    "not using it");
		close(fd);
		return;
	}
	lib.spare_fd = fd;
	lib.spare_seen = 1;
	DEBUG("a pool ring of %llu bytes from the daemon, for the next "
	    "thread", (unsigned long long)traced_ring_size(order));
}

/*
 * Send a provider: its description in a sealed memfd, and its state
 * memfd.  Locked.
 */
static int
conn_send_provider(int sock, struct lprov *lp)
{
	const struct traced_provider *p = lp->p;
	struct traced_msg_provider m;
	int fds[2], fd, rc;

	if (p == NULL)
		return 0;
	fd = memfd_create("traced-provider", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd == -1)
		return -1;
	if (write(fd, p->desc, p->desc_len) != (ssize_t)p->desc_len ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_WRITE | F_SEAL_SEAL) == -1) {
		close(fd);
		return -1;
	}
	memset(&m, 0, sizeof(m));
	wire_hdr_init(&m.hdr, TRACED_MSG_PROVIDER, sizeof(m));
	m.index = lp->index;
	m.id_base = p->id_base;
	m.nevents = p->nevents;
	m.desc_size = p->desc_len;
	snprintf(m.name, sizeof(m.name), "%s", p->name);
	fds[0] = fd;
	fds[1] = lp->state_fd;
	rc = conn_send(sock, &m, sizeof(m), fds, 2, 0);
	close(fd);
	if (rc == 0)
		lp->sent = 1;
	return rc;
}

/*
 * Send the process's rules and what they decide for its providers'
 * events (rules.c), before any provider they cover.  Locked.
 */
static int
conn_send_rules(int sock)
{
	struct traced_msg_rules m;
	uint32_t size;
	int fd, rc;

	if ((fd = rules_snapshot_locked(&size)) == -1)
		return -1;
	memset(&m, 0, sizeof(m));
	wire_hdr_init(&m.hdr, TRACED_MSG_RULES, sizeof(m));
	m.gen = lib.rules_gen;
	m.nrules = lib.nrules;
	m.size = size;
	rc = conn_send(sock, &m, sizeof(m), &fd, 1, 0);
	close(fd);
	if (rc == 0)
		lib.rules_sent = lib.rules_gen;
	return rc;
}

static int
conn_send_ring(int sock, struct lring *r, int flags)
{
	struct traced_msg_ring m;

	/* The daemon says again that it reads it (proto/ring.h). */
	__atomic_store_n(&r->hdr->reading, 0, __ATOMIC_RELAXED);
	memset(&m, 0, sizeof(m));
	wire_hdr_init(&m.hdr, TRACED_MSG_RING, sizeof(m));
	m.index = r->index;
	m.tid = (uint32_t)r->tid;
	m.max_order = r->max_order;
	if (conn_send(sock, &m, sizeof(m), &r->fd, 1, flags) == -1)
		return -1;
	r->sent = 1;
	return 0;
}

static int
conn_send_notify(int sock, uint32_t index, int flags)
{
	struct traced_msg_notify m;

	memset(&m, 0, sizeof(m));
	wire_hdr_init(&m.hdr, TRACED_MSG_NOTIFY, sizeof(m));
	m.index = index;
	return conn_send(sock, &m, sizeof(m), NULL, 0, flags);
}

/* The daemon took a provider (its state bytes are written) or not. */
static void
conn_provider_ack(const struct traced_msg_provider_ack *ack)
{
	struct lprov *lp;

	for (lp = lib.providers; lp != NULL; lp = lp->next)
		if (lp->index == ack->index)
			break;
	if (lp == NULL || lp->p == NULL)
		return;
	if (ack->status < 0) {
		DEBUG("provider %s refused: %s", lp->p->name,
		    strerror(-ack->status));
		return;
	}
	lp->acked = 1;
	DEBUG("provider %s: state written", lp->p->name);
}

static void
conn_down(int *sock)
{
	struct lprov *lp;
	struct lring **rp, *r;

	pthread_mutex_lock(&lib.lock);
	lib.sock = -1;
	lib.hello_sent = 0;
	if (*sock != -1)
		close(*sock);
	*sock = -1;
	if (lib.state == CONN_UP) {
		DEBUG("daemon went away");
		/* Only then: connected mirrors state == CONN_UP. */
		__atomic_store_n(&lib.connected, 0, __ATOMIC_RELAXED);
	}
	for (lp = lib.providers; lp != NULL; lp = lp->next) {
		lp->acked = 0;
		lp->sent = 0;
	}
	ft_conn_down_locked();
	(void)ring_handover_end_locked(0, 1);
	for (rp = &lib.rings; (r = *rp) != NULL; ) {
		/* A finished ring waits for a new thread only on the
		 * connection that drained it (proto/ring.h, Reuse). */
		if (__atomic_load_n(&r->finished, __ATOMIC_ACQUIRE) &&
		    !r->pager_busy) {
			*rp = r->next;
			ring_free_unread(r);
			continue;
		}
		r->sent = 0;
		rp = &r->next;
	}
	lib.rules_sent = lib.rules_acked = 0;
	lib.rules_status = 0;
	conn_spare_drop_locked();
	lib.state = CONN_DOWN;
	lib.attempts++;
	pthread_cond_broadcast(&lib.cond);
	pthread_mutex_unlock(&lib.lock);
}

/*
 * Send whatever is pending: providers and rings not yet sent on this
 * connection, asked-for drains, and finished rings (kept for new
 * threads, RING_IDLE_MAX at most; the others freed once told).
 * Returns -1 if the connection failed.
 */
static int
conn_flush_pending(int sock)
{
	struct lring **rp, *r;
	struct lprov *lp;
	int rc = 0, idle = 0;

	pthread_mutex_lock(&lib.lock);
	/* Rings no new thread took in time: finished (ring.c). */
	(void)ring_handover_end_locked(traced_clock_monotonic(), sock == -1);
	if (sock == -1) {
		/* No daemon: a finished ring's last events are lost,
		 * counted for the next daemon to hear of. */
		for (rp = &lib.rings; (r = *rp) != NULL; ) {
			if (__atomic_load_n(&r->finished, __ATOMIC_ACQUIRE) &&
			    !r->pager_busy) {
				*rp = r->next;
				ring_free_unread(r);
			} else
				rp = &r->next;
		}
		pthread_mutex_unlock(&lib.lock);
		return -1;
	}
	if (lib.rules_gen != lib.rules_sent)
		rc = conn_send_rules(sock);
	for (lp = lib.providers; lp != NULL && rc == 0; lp = lp->next)
		if (!lp->sent)
			rc = conn_send_provider(sock, lp);
	if (rc == 0)
		rc = ft_send_pending_locked(sock);
	for (rp = &lib.rings; (r = *rp) != NULL && rc == 0; ) {
		/*
		 * finished is its thread's last store to r: after this
		 * acquire, r is ours alone.  A finished ring gets a drain
		 * request, once, for the events its thread wrote last; then
		 * it waits for a new thread (ring.c), unless RING_IDLE_MAX
		 * wait already.
		 */
		int finished = __atomic_load_n(&r->finished,
		    __ATOMIC_ACQUIRE);

		if (!r->sent && (rc = conn_send_ring(sock, r, 0)) == -1)
			break;
		if (__atomic_exchange_n(&r->notify, 0, __ATOMIC_ACQUIRE) ||
		    (finished && !r->told_end)) {
			rc = conn_send_notify(sock, r->index, 0);
			if (rc == 0 && finished)
				r->told_end = 1;
		}
		if (rc == 0 && finished && !r->pager_busy &&
		    idle++ >= RING_IDLE_MAX) {
			/* The daemon holds its own descriptor: ours can go
			 * (once the pager is done with it: it wakes us). */
			*rp = r->next;
			ring_free(r);
			continue;
		}
		rp = &r->next;
	}
	/* A thread found no pool ring, and its RING is out: one for the
	 * next thread (ring.c). */
	if (rc == 0 && lib.spare_ask) {
		lib.spare_ask = 0;
		rc = conn_send_spare_ask(sock);
	}
	/* HELLO and every provider are out: a new ring may follow from
	 * its own thread (conn_ring_created_locked()). */
	if (rc == 0)
		lib.hello_sent = 1;
	pthread_mutex_unlock(&lib.lock);
	return rc;
}

/*
 * Receive one message.  Returns 0, or -1 when the connection is over.
 */
static int
conn_recv(int sock)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(4 * sizeof(int))];
	} cm;
	_Alignas(8) char buf[256];
	struct iovec iov = { buf, sizeof(buf) };
	struct cmsghdr *c;
	struct msghdr mh;
	struct wire_msg m;
	const char *why;
	ssize_t n;
	size_t i;
	int fd, fds[4], nfds = 0;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.buf;
	mh.msg_controllen = sizeof(cm.buf);
	n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		return -1;
	/* Only a SPARE carries one (kept below); any other is closed. */
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		    i++) {
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int),
			    sizeof(int));
			if (nfds < (int)(sizeof(fds) / sizeof(fds[0])))
				fds[nfds++] = fd;
			else
				close(fd);
		}
	}
	if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    wire_decode(buf, (size_t)n, nfds, &m, &why) != 0) {
		DEBUG("bad message from the daemon (%s), disconnecting",
		    (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ?
		    "truncated" : why);
		for (i = 0; i < (size_t)nfds; i++)
			close(fds[i]);
		return -1;
	}
	pthread_mutex_lock(&lib.lock);
	switch (m.type) {
	case TRACED_MSG_SPARE:
		conn_spare_locked(m.u.spare, fds[0]);
		break;
	case TRACED_MSG_WELCOME:
		lib.session = m.u.welcome->session;
		if (!lib.ring_order_env)
			__atomic_store_n(&lib.ring_order,
			    m.u.welcome->ring_order, __ATOMIC_RELAXED);
		lib.state = CONN_UP;
		__atomic_store_n(&lib.connected, 1, __ATOMIC_RELAXED);
		DEBUG("session %u", lib.session);
		break;
	case TRACED_MSG_PROVIDER_ACK:
		conn_provider_ack(m.u.provider_ack);
		break;
	case TRACED_MSG_RULES_ACK:
		if (m.u.rules_ack->status < 0)
			DEBUG("the daemon refused the process's rules: %s (its "
			    "log says which limit)",
			    strerror(-m.u.rules_ack->status));
		lib.rules_acked = m.u.rules_ack->gen;
		lib.rules_status = m.u.rules_ack->status;
		break;
	case TRACED_MSG_FUNC_APPLY:
		ft_apply_msg(m.u.func_apply);
		break;
	default:
		break;
	}
	pthread_cond_broadcast(&lib.cond);
	pthread_mutex_unlock(&lib.lock);
	return 0;
}

/* Has the daemon taken every provider we have?  Locked. */
static int
conn_all_acked_locked(void)
{
	struct lprov *lp;

	for (lp = lib.providers; lp != NULL; lp = lp->next)
		if (lp->p != NULL && !lp->acked)
			return 0;
	return 1;
}

/*
 * Wait 'ms', whatever the application threads ask meanwhile (finished
 * rings are released: with no daemon, their last events are lost).
 */
static void
conn_pause(int ms)
{
	uint64_t end, now, junk;
	struct pollfd pfd;

	end = traced_clock_monotonic() + (uint64_t)ms * 1000000u;
	pfd.fd = lib.wake_fd;
	pfd.events = POLLIN;
	while ((now = traced_clock_monotonic()) < end) {
		/* Rounded up: poll() waits whole milliseconds. */
		if (poll(&pfd, 1, (int)((end - now + 999999) / 1000000)) > 0) {
			(void)!read(lib.wake_fd, &junk, sizeof(junk));
			/* A provider registered meanwhile waits for an
			 * attempt: count this one, not made, as failed. */
			pthread_mutex_lock(&lib.lock);
			lib.attempts++;
			pthread_cond_broadcast(&lib.cond);
			pthread_mutex_unlock(&lib.lock);
		}
		(void)conn_flush_pending(-1);
	}
}

/*
 * The connection, set up at up_ns, ended.  A daemon that closed it
 * before taking all our providers, or within TRACED_SHORT_MS, refused
 * us (its log says why: a provider or a ring it would not take) and
 * would do so again at once: wait before the next attempt, twice as
 * long each time, up to TRACED_BACKOFF_MAX_MS, rather than start a
 * session per attempt.  A daemon that went away later is retried at
 * once.
 */
static void
conn_lost(int *sock, int *backoff_ms, uint64_t up_ns)
{
	int refused;

	pthread_mutex_lock(&lib.lock);
	refused = !conn_all_acked_locked() ||
	    traced_clock_monotonic() - up_ns < TRACED_SHORT_MS * 1000000ull;
	pthread_mutex_unlock(&lib.lock);
	conn_down(sock);
	if (!refused) {
		*backoff_ms = 0;
		return;
	}
	*backoff_ms = *backoff_ms == 0 ? TRACED_RETRY_MS :
	    *backoff_ms >= TRACED_BACKOFF_MAX_MS / 2 ? TRACED_BACKOFF_MAX_MS :
	    *backoff_ms * 2;
	DEBUG("the daemon refused us (the connection ended at once, or "
	    "before it took every provider); next attempt in %d ms",
	    *backoff_ms);
	conn_pause(*backoff_ms);
}

static void *
conn_main(void *arg)
{
	struct pollfd pfd[2];
	uint64_t junk;
	sigset_t all;
	int sock = -1, n, waited = 0, backoff_ms = 0;
	uint64_t up_ns = 0;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	(void)prctl(PR_SET_NAME, "traced-conn", 0, 0, 0);

	for (;;) {
		if (sock == -1) {
			sock = conn_connect();
			if (sock != -1) {
				pthread_mutex_lock(&lib.lock);
				lib.sock = sock;
				pthread_mutex_unlock(&lib.lock);
			}
			/* The pool ring comes before the providers' acks,
			 * which main() waits for: its first thread has it. */
			if (sock == -1 || conn_send_hello(sock) == -1 ||
			    conn_send_spare_ask(sock) == -1 ||
			    conn_flush_pending(sock) == -1) {
				conn_down(&sock);
				pfd[0].fd = lib.wake_fd;
				pfd[0].events = POLLIN;
				(void)poll(pfd, 1, TRACED_RETRY_MS);
				(void)!read(lib.wake_fd, &junk, sizeof(junk));
				/* Rings finished meanwhile go unsent. */
				(void)conn_flush_pending(-1);
				continue;
			}
			waited = 0;
			up_ns = traced_clock_monotonic();
		}
		pfd[0].fd = sock;
		pfd[0].events = POLLIN;
		pfd[1].fd = lib.wake_fd;
		pfd[1].events = POLLIN;
		/* Rings waiting for a new thread are finished after a
		 * while (ring.c): look again by then. */
		n = poll(pfd, 2, __atomic_load_n(&lib.handover_watch,
		    __ATOMIC_RELAXED) ? CONN_HANDOVER_POLL_MS : 1000);
		if (n == -1)
			continue;
		if (n == 0 && __atomic_load_n(&lib.handover_watch,
		    __ATOMIC_RELAXED) && conn_flush_pending(sock) == -1) {
			conn_lost(&sock, &backoff_ms, up_ns);
			continue;
		}
		if (n == 0 && !__atomic_load_n(&lib.connected,
		    __ATOMIC_RELAXED) && ++waited >= TRACED_WELCOME_WAIT_S) {
			DEBUG("no welcome from the daemon, retrying");
			conn_down(&sock);
			continue;
		}
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (conn_recv(sock) == -1) {
				conn_lost(&sock, &backoff_ms, up_ns);
				continue;
			}
		}
		if (pfd[1].revents & POLLIN) {
			(void)!read(lib.wake_fd, &junk, sizeof(junk));
			if (conn_flush_pending(sock) == -1)
				conn_lost(&sock, &backoff_ms, up_ns);
		}
		/* Function tracing: patches, reports (functrace/fconn.c). */
		if (sock != -1 && ft_service() &&
		    conn_flush_pending(sock) == -1)
			conn_lost(&sock, &backoff_ms, up_ns);
	}
	return NULL;
}

/*
 * Start the connection thread if it is not running.  Locked.  Returns
 * 0, or -1 if it cannot run (then tracing stays off).
 */
int
conn_start_locked(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int rc;

	if (lib.thread_started)
		return 0;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	/* The thread must not take the application's signals, from birth. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&lib.thread, &attr, conn_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		DEBUG("pthread_create: %s", strerror(rc));
		return -1;
	}
	lib.thread_started = 1;
	return 0;
}

/*
 * In the child of fork(): no connection thread, no connection.  (Its
 * state arrays get memfds of their own: state_atfork_child().)
 */
void
conn_atfork_child(void)
{
	struct lprov *lp;

	lib.thread_started = 0;
	lib.sock = -1;
	conn_tried[0] = '\0';	/* the child says it again */
	lib.state = CONN_IDLE;
	__atomic_store_n(&lib.connected, 0, __ATOMIC_RELAXED);
	lib.rules_sent = lib.rules_acked = 0;
	lib.rules_status = 0;
	for (lp = lib.providers; lp != NULL; lp = lp->next) {
		lp->sent = 0;
		lp->acked = 0;
	}
	/* The parent's pool ring is the parent's: both would write it. */
	conn_spare_drop_locked();
	/* The thread starts again with the child's first ring. */
}

/*
 * A thread created its ring: tell the daemon now, from that thread, so
 * that its events are drained even if the process exits (or crashes)
 * before the connection thread runs.  As soon as HELLO and the
 * providers are out, not only once the daemon answered: a daemon busy
 * or stopped for a moment reads the ring later, with every event and
 * loss in it, where a ring never sent left "0 events, 0 lost" of a
 * program that emitted millions.  Once per thread; never waits: if the
 * socket is full the connection thread sends it instead.  Locked,
 * which keeps lib.sock open while we use it.  Returns 1 if sent.
 */
int
conn_ring_created_locked(struct lring *r)
{
	if ((lib.state == CONN_UP || lib.hello_sent) && lib.sock != -1 &&
	    conn_send_ring(lib.sock, r, MSG_DONTWAIT) == 0)
		return 1;
	return 0;
}

/*
 * r's thread exited (r->finished is set): ask the daemon for the ring's
 * last drain now, from that thread, rather than waking the connection
 * thread to do it (a context switch per thread, dear on virtual
 * machines).  Returns 1 if asked; never waits: a full socket leaves it
 * to the connection thread.  Locked.
 */
int
conn_ring_finished_locked(struct lring *r)
{
	if (lib.state != CONN_UP || lib.sock == -1 || !r->sent ||
	    r->told_end ||
	    conn_send_notify(lib.sock, r->index, MSG_DONTWAIT) == -1)
		return 0;
	r->told_end = 1;
	return 1;
}

/*
 * How the process ends, for the daemon (EXIT): the status given to
 * exit() or returned from main(), kept by the on_exit() handler below
 * and sent by whichever of it and conn_at_exit() runs second, after the
 * rings, so that a daemon too old to know EXIT, which drops the client
 * for it, has everything else first.  (Usually the handler runs first;
 * when libtraced was set up from a shared library's constructor, before
 * the loader registered its destructors, it runs after them.)
 */
static int conn_exit_status;
static int conn_exit_said;		/* the handler ran */
static int conn_exit_done;		/* conn_at_exit() ran */

/* Send EXIT, lock held.  Never waits. */
static void
conn_send_exit_locked(void)
{
	struct traced_msg_exit m;

	if (lib.sock == -1 || lib.state != CONN_UP)
		return;
	memset(&m, 0, sizeof(m));
	wire_hdr_init(&m.hdr, TRACED_MSG_EXIT, sizeof(m));
	m.status = conn_exit_status;
	(void)conn_send(lib.sock, &m, sizeof(m), NULL, 0, MSG_DONTWAIT);
}

void
conn_on_exit(int status, void *arg)
{
	(void)arg;
	if (!lib.initialized || lib.pid != getpid() ||
	    pthread_mutex_trylock(&lib.lock) != 0)
		return;
	conn_exit_status = status;
	conn_exit_said = 1;
	if (conn_exit_done)
		conn_send_exit_locked();
	pthread_mutex_unlock(&lib.lock);
}

/*
 * The process exits (exit(), or main() returned): rings made since the
 * connection thread last ran may not have reached the daemon, and that
 * thread will not run again.  Send them now, without waiting, so that
 * the daemon drains what they hold and counts what they lost; then the
 * exit status, if the on_exit() handler has it.  Only if the lock is
 * free: an exit must never wait on the tracer.
 */
__attribute__((destructor)) static void
conn_at_exit(void)
{
	struct lring *r;

	if (!lib.initialized || lib.pid != getpid() ||
	    pthread_mutex_trylock(&lib.lock) != 0)
		return;
	/* Their threads exited: the daemon ends them as finished. */
	(void)ring_handover_end_locked(0, 1);
	if (lib.sock != -1 && (lib.state == CONN_UP || lib.hello_sent))
		for (r = lib.rings; r != NULL; r = r->next)
			if (!r->sent)
				(void)conn_send_ring(lib.sock, r,
				    MSG_DONTWAIT);
	conn_exit_done = 1;
	if (conn_exit_said)
		conn_send_exit_locked();
	pthread_mutex_unlock(&lib.lock);
}
