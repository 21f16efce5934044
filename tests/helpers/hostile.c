/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Test helper: a client that speaks the wire protocol (proto/wire.h) and
 * the ring layout (proto/ring.h) by hand, and gets them wrong on purpose,
 * to show that the daemon refuses a bad peer, says why in its log, and
 * carries on for everyone else.  It does not use libtraced's client code
 * (run it with TRACED=0 so that the helpers' provider, linked into every
 * helper, stays silent).  Its timestamps use the clock libtraced would
 * (proto/clock.h: TRACED_CLOCK=monotonic to change it).
 *
 *   hostile CASE...        run each case on a connection of its own
 *   hostile -l             list the cases with the log line each expects
 *   hostile flood N SECONDS [hello]
 *                          open N connections (saying HELLO on each if
 *                          asked; retrying for a second those the
 *                          daemon's backlog refuses), hold them
 *                          SECONDS, close them
 *
 * and, for issue 9 (one client against everyone), each until SECONDS
 * have passed, printing one line of what the daemon did to it:
 *
 *   hostile providers NPROV NEVENTS SECONDS [answered]
 *                          one session, NPROV providers of NEVENTS
 *                          events each (until all are answered)
 *   hostile event-id SECONDS
 *                          an event of id 2^24 - 1, drained again and
 *                          again
 *   hostile rings NSESS NRINGS SECONDS
 *                          NSESS sessions of NRINGS rings each
 *   hostile churn RATE SECONDS
 *                          RATE connections a second that say HELLO
 *                          and leave
 *   hostile ctl-noread N SECONDS COMMAND...
 *                          N control connections that ask for COMMAND
 *                          and never read the reply
 *   hostile ctl-idle SECONDS
 *                          a control connection that never asks
 *   hostile hello-comm COMM SECONDS
 *                          a session whose HELLO says it is COMM
 *   hostile log-flood SECONDS
 *                          bad messages, as many as the daemon takes
 *   hostile odd-names N [VARIANT]
 *                          sessions with odd but valid names, formats
 *                          and strings, N events of each kind (see
 *                          cmd_odd)
 *   hostile ring-ts-future a record stamped 0xfffffffffffffff0 (a case,
 *                          not listed by -l)
 *
 * Every case prints one line, "CASE: what happened", and checks what it
 * can see from its side: a refused peer's connection is closed by the
 * daemon, a refused ring is not drained past the bad record, a sealed
 * memfd cannot shrink.  Exit status 1 if any check failed.  What the
 * daemon logged is for the test script to check (hostile -l).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "functab.h"
#include "ring.h"
#include "tevents.h"
#include "wire.h"

#define ORDER		12
#define RSIZE		(1u << ORDER)
#define ID_TICK		TRACED_EVENT_ID_BASE		/* (uint64_t seq) */
#define ID_STR		(TRACED_EVENT_ID_BASE + 1)	/* (str s, u64 n) */

static const char desc[] =
	"hostile_tick(uint64_t seq) \"tick %\" PRIu64\n"
	"hostile_str(const char *s, uint64_t n) \"%s %\" PRIu64\n";

static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static int failed;
static int use_tsc;		/* timestamps: rdtsc, as libtraced would */
static char ctl_path[sizeof(sock_path)];	/* control.sock */
static const char *hello_comm = "hostile";	/* what HELLO says */

/* A ring as its producer sees it, mapped once like libtraced does. */
struct hring {
	int		 fd;
	uint32_t	 index;
	uint32_t	 order;
	uint64_t	 size;
	uint8_t		*base;
	struct traced_ring_hdr *h;
	uint8_t		*data;
	uint64_t	 head;		/* private; published by ring_publish */
	uint64_t	 ts;		/* last timestamp written */
};

/* Returns ok; a failed check fails the whole run. */
static int
check(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return 1;
	failed = 1;
	printf("%s: CHECK FAILED: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return 0;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A record timestamp in the clock HELLO announced. */
static uint64_t
now_ts(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (use_tsc) {
		uint32_t lo, hi;

		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		return ((uint64_t)hi << 32) | lo;
	}
#endif
	return now_ns();
}

static void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* ---- the socket ------------------------------------------------------ */

/* Connect to the socket at 'path' (a sun_path-sized buffer). */
static int
h_connect_to(const char *path, int nonblock)
{
	struct sockaddr_un sun;
	int fd;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC |
	    (nonblock ? SOCK_NONBLOCK : 0), 0);
	if (fd == -1)
		return -1;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, sizeof(sun.sun_path));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 &&
	    !(nonblock && errno == EINPROGRESS)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Connect to client.sock. */
static int
h_connect(int nonblock)
{
	return h_connect_to(sock_path, nonblock);
}

/*
 * Send len bytes with nfds descriptors (several cmsgs if 'split'), with
 * these sendmsg() flags besides MSG_NOSIGNAL.
 */
static int
h_sendmsg(int sock, const void *msg, size_t len, const int *fds, int nfds,
    int split, int flags)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 16) * 2];
	struct iovec iov = { (void *)msg, len };
	struct msghdr mh;
	struct cmsghdr *c;
	int i;

	memset(&mh, 0, sizeof(mh));
	memset(cbuf, 0, sizeof(cbuf));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (nfds > 0) {
		mh.msg_control = cbuf;
		if (split) {
			mh.msg_controllen = CMSG_SPACE(sizeof(int)) *
			    (size_t)nfds;
			c = CMSG_FIRSTHDR(&mh);
			for (i = 0; i < nfds; i++) {
				c->cmsg_level = SOL_SOCKET;
				c->cmsg_type = SCM_RIGHTS;
				c->cmsg_len = CMSG_LEN(sizeof(int));
				memcpy(CMSG_DATA(c), &fds[i], sizeof(int));
				c = CMSG_NXTHDR(&mh, c);
			}
		} else {
			mh.msg_controllen = CMSG_SPACE(sizeof(int) *
			    (size_t)nfds);
			c = CMSG_FIRSTHDR(&mh);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
			memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
		}
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL | flags) == (ssize_t)len ?
	    0 : -1;
}

/* Send len bytes with nfds descriptors (several cmsgs if 'split'). */
static int
h_sendv(int sock, const void *msg, size_t len, const int *fds, int nfds,
    int split)
{
	return h_sendmsg(sock, msg, len, fds, nfds, split, 0);
}

static int
h_send(int sock, const void *msg, size_t len, int fd)
{
	return h_sendv(sock, msg, len, &fd, fd == -1 ? 0 : 1, 0);
}

/*
 * Receive one message of 'type' within 'ms', closing any descriptor it
 * carries unless fdp.  Returns its size, 0 if the daemon closed the
 * connection, -1 on timeout or another type.
 */
static ssize_t
h_recv(int sock, uint32_t type, void *buf, size_t size, int *fdp, int ms)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { buf, size };
	struct pollfd pfd = { sock, POLLIN, 0 };
	struct traced_msg_hdr h;
	struct cmsghdr *c;
	struct msghdr mh;
	ssize_t n;
	int fd = -1;

	if (poll(&pfd, 1, ms) != 1)
		return -1;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return n == 0 ? 0 : -1;
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (fdp != NULL)
		*fdp = fd;
	else if (fd != -1)
		close(fd);
	memcpy(&h, buf, sizeof(h));
	if ((size_t)n < sizeof(h) || h.type != type || h.size != (size_t)n)
		return -1;
	return n;
}

/* Has the daemon closed the connection within 'ms'?  Reads what comes. */
static int
h_closed(int sock, int ms)
{
	struct pollfd pfd = { sock, POLLIN, 0 };
	uint64_t deadline = now_ns() + (uint64_t)ms * 1000000u;
	char buf[512];
	ssize_t n;

	while (now_ns() < deadline) {
		if (poll(&pfd, 1, 50) != 1)
			continue;
		n = recv(sock, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n == -1 && errno == ECONNRESET))
			return 1;
	}
	return 0;
}

static void
hello_init(struct traced_msg_hello *m)
{
	memset(m, 0, sizeof(*m));
	m->hdr.type = TRACED_MSG_HELLO;
	m->hdr.size = sizeof(*m);
	m->version = TRACED_PROTOCOL_VERSION;
	m->flags = use_tsc ? TRACED_HELLO_TSC : 0;
	snprintf(m->comm, sizeof(m->comm), "%s", hello_comm);
}

/* Connect and say HELLO; returns the socket once WELCOMEd, or -1. */
static int
h_session(void)
{
	struct traced_msg_hello m;
	_Alignas(8) char buf[256];
	int sock = h_connect(0);

	if (sock == -1)
		return -1;
	hello_init(&m);
	if (h_send(sock, &m, sizeof(m), -1) == -1 ||
	    h_recv(sock, TRACED_MSG_WELCOME, buf, sizeof(buf), NULL,
	    3000) != sizeof(struct traced_msg_welcome)) {
		close(sock);
		return -1;
	}
	return sock;
}

/* A memfd holding 'len' bytes of 'text', with 'seals'. */
static int
memfd_with(const char *text, size_t len, size_t file_size, int seals)
{
	int fd = memfd_create("hostile", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd == -1)
		return -1;
	if (ftruncate(fd, (off_t)file_size) == -1 ||
	    (len > 0 && pwrite(fd, text, len, 0) != (ssize_t)len) ||
	    (seals != 0 && fcntl(fd, F_ADD_SEALS, seals) == -1)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A good state memfd for 'nevents' events: a page, sealed. */
static int
state_memfd(uint32_t nevents)
{
	return memfd_with(NULL, 0, ((size_t)nevents + 4095) / 4096 * 4096,
	    F_SEAL_SHRINK | F_SEAL_GROW);
}

/*
 * Send a PROVIDER with its description fd and a state fd: a good one if
 * state_fd is -1 (closed here), else the caller's (closed by it).
 */
static int
provider_send_fds(int sock, const struct traced_msg_provider *m,
    int desc_fd, int state_fd)
{
	int fds[2], rc, own = state_fd == -1;

	if (own && (state_fd = state_memfd(m->nevents)) == -1)
		return -1;
	fds[0] = desc_fd;
	fds[1] = state_fd;
	rc = h_sendv(sock, m, sizeof(*m), fds, 2, 0);
	if (own)
		close(state_fd);
	return rc;
}

static int
provider_send(int sock, const char *text, size_t len, uint32_t nevents,
    uint32_t index, uint32_t id_base, int seals, uint32_t desc_size)
{
	struct traced_msg_provider m;
	int fd, rc;

	fd = memfd_with(text, len, len, seals);
	if (fd == -1)
		return -1;
	memset(&m, 0, sizeof(m));
	m.hdr.type = TRACED_MSG_PROVIDER;
	m.hdr.size = sizeof(m);
	m.index = index;
	m.id_base = id_base;
	m.nevents = nevents;
	m.desc_size = desc_size;
	snprintf(m.name, sizeof(m.name), "hostile");
	rc = provider_send_fds(sock, &m, fd, -1);
	close(fd);
	return rc;
}

/* HELLO and our provider; returns the socket, or -1. */
/*
 * Function tracing (proto/functab.h): a MODULE announcing functions,
 * then their FUNCS with 'text' as the table and 'nfuncs' announced.
 */
static int
module_send(int sock, uint32_t index, uint32_t flags, const char *path)
{
	_Alignas(8) char buf[sizeof(struct traced_msg_module) + 256];
	struct traced_msg_module *mo = (void *)buf;
	size_t len = sizeof(*mo) + strlen(path) + 1;

	memset(buf, 0, sizeof(buf));
	mo->hdr.type = TRACED_MSG_MODULE;
	mo->hdr.size = (uint32_t)len;
	mo->index = index;
	mo->flags = flags;
	mo->base = 0x400000;
	mo->start = 0x400000;
	mo->end = 0x500000;
	memcpy(buf + sizeof(*mo), path, strlen(path) + 1);
	return h_send(sock, buf, len, -1);
}

static int
funcs_send(int sock, uint32_t module, const char *text, uint32_t nfuncs)
{
	struct traced_msg_funcs f;
	size_t len = strlen(text);
	long pg = sysconf(_SC_PAGESIZE);
	int fds[2], rc;

	memset(&f, 0, sizeof(f));
	f.hdr.type = TRACED_MSG_FUNCS;
	f.hdr.size = sizeof(f);
	f.module = module;
	f.nfuncs = nfuncs;
	f.desc_size = (uint32_t)len;
	f.stats_off = (uint32_t)pg;
	f.state_size = (uint64_t)pg + (uint64_t)nfuncs * TRACED_FUNC_STAT_SIZE;
	fds[0] = memfd_with(text, len, len, F_SEAL_SHRINK | F_SEAL_WRITE);
	fds[1] = memfd_with(NULL, 0, (size_t)f.state_size, F_SEAL_SHRINK);
	if (fds[0] == -1 || fds[1] == -1)
		return -1;
	rc = h_sendv(sock, &f, sizeof(f), fds, 2, 0);
	close(fds[0]);
	close(fds[1]);
	return rc;
}

static int
h_provider_session(void)
{
	_Alignas(8) char buf[256];
	int sock = h_session();

	if (sock == -1)
		return -1;
	if (provider_send(sock, desc, sizeof(desc) - 1, 2, 0,
	    TRACED_EVENT_ID_BASE, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL,
	    sizeof(desc) - 1) == -1 ||
	    h_recv(sock, TRACED_MSG_PROVIDER_ACK, buf, sizeof(buf), NULL,
	    3000) != sizeof(struct traced_msg_provider_ack)) {
		close(sock);
		return -1;
	}
	return sock;
}

/* ---- rings ------------------------------------------------------------ */

static int
ring_make(struct hring *r, uint32_t index, uint32_t order, int seals)
{
	uint64_t size = traced_ring_size(order);
	size_t file_len = TRACED_RING_HDR_SIZE + size;

	memset(r, 0, sizeof(*r));
	r->fd = memfd_with(NULL, 0, file_len, seals);
	if (r->fd == -1)
		return -1;
	r->base = mmap(NULL, file_len, PROT_READ | PROT_WRITE, MAP_SHARED,
	    r->fd, 0);
	if (r->base == MAP_FAILED) {
		close(r->fd);
		return -1;
	}
	r->index = index;
	r->order = order;
	r->size = size;
	r->h = (struct traced_ring_hdr *)(void *)r->base;
	r->data = r->base + TRACED_RING_HDR_SIZE;
	r->h->magic = TRACED_RING_MAGIC;
	r->h->version = TRACED_RING_VERSION;
	r->h->max_order = order;
	r->h->init_order = order;
	r->h->order = order;
	r->h->tid = (uint32_t)gettid();
	return 0;
}

static void
ring_unmake(struct hring *r)
{
	munmap(r->base, TRACED_RING_HDR_SIZE + r->size);
	close(r->fd);
}

static int
ring_send_fd(int sock, const struct hring *r, int fd)
{
	struct traced_msg_ring m;

	memset(&m, 0, sizeof(m));
	m.hdr.type = TRACED_MSG_RING;
	m.hdr.size = sizeof(m);
	m.index = r->index;
	m.tid = (uint32_t)gettid();
	m.max_order = r->order;
	return h_send(sock, &m, sizeof(m), fd);
}

static int
notify(int sock, uint32_t index)
{
	struct traced_msg_notify m;

	memset(&m, 0, sizeof(m));
	m.hdr.type = TRACED_MSG_NOTIFY;
	m.hdr.size = sizeof(m);
	m.index = index;
	return h_send(sock, &m, sizeof(m), -1);
}

/*
 * Write a record at head: header, 'plen' payload bytes, zeros to
 * 'size', exactly there, even across the end of the ring (which no
 * producer may do).
 */
static void
rec_put_raw(struct hring *r, uint32_t id, uint32_t size, uint64_t ts,
    const void *payload, size_t plen)
{
	struct traced_rec_hdr h = { id, size, ts };
	uint64_t off = r->head & (r->size - 1);
	size_t n = size < TRACED_REC_MAX ? size : 64, i;
	uint8_t rec[TRACED_REC_MAX];

	memset(rec, 0, n);
	memcpy(rec, &h, sizeof(h));
	if (plen > 0)
		memcpy(rec + sizeof(h), payload, plen);
	for (i = 0; i < n; i++)		/* wraps to the start */
		r->data[(off + i) & (r->size - 1)] = rec[i];
	r->head += size;
	r->ts = ts;
}

/*
 * Write a record as a producer does: a record that would run past the
 * end of the ring goes after a PAD record that fills the lap.
 */
static void
rec_put(struct hring *r, uint32_t id, uint32_t size, uint64_t ts,
    const void *payload, size_t plen)
{
	uint64_t off = r->head & (r->size - 1);
	uint32_t pad[2] = { TRACED_EVENT_PAD, (uint32_t)(r->size - off) };

	if (size <= TRACED_REC_MAX && off + size > r->size) {
		memcpy(r->data + off, pad, sizeof(pad));
		r->head += r->size - off;
	}
	rec_put_raw(r, id, size, ts, payload, plen);
}

static void
put_tick(struct hring *r, uint64_t seq)
{
	rec_put(r, ID_TICK, 24, now_ts(), &seq, sizeof(seq));
}

static void
ring_publish(struct hring *r)
{
	__atomic_store_n(&r->h->head, r->head, __ATOMIC_RELEASE);
}

/* Wait until the daemon's tail reaches 'pos'; 1 if it did within ms. */
static int
ring_wait_tail(struct hring *r, uint64_t pos, int ms)
{
	uint64_t deadline = now_ns() + (uint64_t)ms * 1000000u;

	while (now_ns() < deadline) {
		if (__atomic_load_n(&r->h->tail, __ATOMIC_ACQUIRE) >= pos)
			return 1;
		sleep_ms(5);
	}
	return 0;
}

/*
 * A session with a ring the daemon accepted and drained a few good
 * records from: the start of every ring case.  Returns the socket.
 */
static int
ring_session(struct hring *r, const char *name)
{
	int sock = h_provider_session();
	uint64_t i;

	if (sock == -1) {
		check(0, name, "no session");
		return -1;
	}
	if (ring_make(r, 0, ORDER, F_SEAL_SHRINK | F_SEAL_GROW) == -1 ||
	    ring_send_fd(sock, r, r->fd) == -1) {
		check(0, name, "cannot make or send a ring: %s",
		    strerror(errno));
		close(sock);
		return -1;
	}
	for (i = 0; i < 3; i++)
		put_tick(r, i);
	ring_publish(r);
	notify(sock, r->index);
	if (!ring_wait_tail(r, r->head, 3000)) {
		check(0, name, "good records not drained (tail %llu, head "
		    "%llu)", (unsigned long long)r->h->tail,
		    (unsigned long long)r->head);
		ring_unmake(r);
		close(sock);
		return -1;
	}
	return sock;
}

/*
 * The end of a ring case: the span from 'bad' on was published and the
 * daemon asked to drain it; it must not read past 'bad'.
 */
static void
ring_expect_refused(int sock, struct hring *r, uint64_t bad,
    const char *name)
{
	uint64_t tail;

	notify(sock, r->index);
	sleep_ms(300);
	tail = __atomic_load_n(&r->h->tail, __ATOMIC_ACQUIRE);
	check(tail <= bad, name, "daemon read past the bad record: tail "
	    "%llu > %llu", (unsigned long long)tail, (unsigned long long)bad);
	/* And it no longer reads the ring at all. */
	r->head = tail;
	put_tick(r, 99);
	ring_publish(r);
	notify(sock, r->index);
	sleep_ms(200);
	check(__atomic_load_n(&r->h->tail, __ATOMIC_ACQUIRE) == tail, name,
	    "a refused ring is still drained");
	printf("%s: refused at %llu, connection %s\n", name,
	    (unsigned long long)bad,
	    h_closed(sock, 100) ? "closed" : "kept");
	ring_unmake(r);
	close(sock);
}

/*
 * A ring, and events in it, from a session that never registered a
 * provider: the daemon has no event table for it, so every id is
 * unknown and the ring is refused (it once took the table's reference
 * count through a NULL pointer).
 */
static void
case_ring_no_provider(const char *name)
{
	struct hring r;
	int sock = h_session();

	if (sock == -1) {
		check(0, name, "no session");
		return;
	}
	if (ring_make(&r, 0, ORDER, F_SEAL_SHRINK) == -1) {
		close(sock);
		return;
	}
	ring_send_fd(sock, &r, r.fd);
	put_tick(&r, 1);
	ring_publish(&r);
	notify(sock, r.index);
	sleep_ms(200);
	check(__atomic_load_n(&r.h->tail, __ATOMIC_ACQUIRE) == 0, name,
	    "events of no provider were drained");
	printf("%s: refused, connection %s\n", name,
	    h_closed(sock, 100) ? "closed" : "kept");
	ring_unmake(&r);
	close(sock);
}

/* ---- (a) ring contents -------------------------------------------- */

static void
case_ring(const char *name)
{
	struct hring r;
	uint64_t bad;
	int sock = ring_session(&r, name);
	struct traced_lost lost;
	char rec[64];

	if (sock == -1)
		return;
	bad = r.head;
	if (strcmp(name, "ring-head-beyond") == 0) {
		r.head = bad + r.size + 8;
	} else if (strcmp(name, "ring-head-back") == 0) {
		r.head = bad - 8;
	} else if (strcmp(name, "ring-head-max") == 0) {
		r.head = UINT64_MAX - 7;
	} else if (strcmp(name, "ring-huge-size") == 0) {
		rec_put(&r, ID_TICK, 1u << 20, now_ts(), NULL, 0);
		r.head = bad + 64;
	} else if (strcmp(name, "ring-tiny-size") == 0) {
		rec_put(&r, ID_TICK, 8, now_ts(), NULL, 0);
		r.head = bad + 64;
	} else if (strcmp(name, "ring-odd-size") == 0) {
		rec_put(&r, ID_TICK, 28, now_ts(), NULL, 0);
		r.head = bad + 64;
	} else if (strcmp(name, "ring-unknown-id") == 0) {
		rec_put(&r, 4242, 24, now_ts(), NULL, 0);
	} else if (strcmp(name, "ring-reserved-id") == 0) {
		rec_put(&r, 5, 24, now_ts(), NULL, 0);
	} else if (strcmp(name, "ring-past-head") == 0) {
		rec_put(&r, ID_TICK, 24, now_ts(), NULL, 0);
		r.head = bad + 16;
	} else if (strcmp(name, "ring-ts-back") == 0) {
		rec_put(&r, ID_TICK, 24, r.ts - 1000000, NULL, 0);
	} else if (strcmp(name, "ring-no-nul") == 0) {
		memset(rec, 'x', sizeof(rec));
		rec_put(&r, ID_STR, 40, now_ts(), rec, 24);
	} else if (strcmp(name, "ring-size-mismatch") == 0) {
		rec_put(&r, ID_TICK, 32, now_ts(), NULL, 0);
	} else if (strcmp(name, "ring-str-short") == 0) {
		/* The string ends, the integer after it does not fit. */
		memcpy(rec, "abcdefg", 8);
		rec_put(&r, ID_STR, 24, now_ts(), rec, 8);
	} else if (strcmp(name, "ring-bad-lost") == 0) {
		memset(&lost, 0, sizeof(lost));
		lost.count = 10;
		lost.cause[0] = 3;
		rec_put(&r, TRACED_EVENT_LOST, TRACED_LOST_REC_SIZE, now_ts(),
		    &lost, sizeof(lost));
	} else if (strcmp(name, "ring-lost-size") == 0) {
		memset(&lost, 0, sizeof(lost));
		rec_put(&r, TRACED_EVENT_LOST, 32, now_ts(), &lost, 16);
	} else if (strcmp(name, "ring-pad-misplaced") == 0) {
		/* Padding that does not reach the end of the ring. */
		uint32_t pad[2] = { TRACED_EVENT_PAD, 16 };

		memcpy(r.data + (r.head & (r.size - 1)), pad, sizeof(pad));
		r.head += 16;
		put_tick(&r, 5);
	} else if (strcmp(name, "ring-cross-lap") == 0) {
		/* Good records up to 16 bytes before the end of the ring,
		 * then one that runs 8 bytes past it instead of a PAD. */
		while (r.head % r.size != r.size - 16)
			put_tick(&r, r.head);
		bad = r.head;
		rec_put_raw(&r, ID_TICK, 24, now_ts(), &bad, 8);
	} else if (strcmp(name, "ring-thread-size") == 0) {
		struct traced_thread_rec tr = { 4242, 9 };

		rec_put(&r, TRACED_EVENT_THREAD, TRACED_THREAD_REC_SIZE + 8,
		    now_ts(), &tr, sizeof(tr));
	} else if (strcmp(name, "ring-thread-tid") == 0) {
		struct traced_thread_rec tr = { 0, 9 };

		rec_put(&r, TRACED_EVENT_THREAD, TRACED_THREAD_REC_SIZE,
		    now_ts(), &tr, sizeof(tr));
	} else if (strcmp(name, "ring-zeros") == 0) {
		/* Punch the data pages out: F_SEAL_SHRINK allows it, and
		 * the daemon then reads zeros, never a SIGBUS. */
		put_tick(&r, 7);
		if (fallocate(r.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		    TRACED_RING_HDR_SIZE, (off_t)r.size) == -1)
			check(0, name, "fallocate: %s", strerror(errno));
	}
	ring_publish(&r);
	ring_expect_refused(sock, &r, bad, name);
}

/*
 * THREAD records, as many as the ring takes, lap after lap: more
 * threads than the daemon keeps books of one by one (a program would
 * need 20,000 threads; this costs 480 KB of ring).  The daemon counts
 * the rest together and goes on reading the ring: good records after
 * the flood are drained.
 */
static void
case_ring_thread_flood(const char *name)
{
	struct traced_thread_rec tr;
	struct hring r;
	uint64_t i, lap;
	int sock = ring_session(&r, name);

	if (sock == -1)
		return;
	for (i = 0; i < 20000; ) {
		lap = r.head + r.size / 2;
		while (r.head < lap && i < 20000) {
			tr.tid = (uint32_t)(1000 + i % 50000);
			tr.index = (uint32_t)(1 + i);
			rec_put(&r, TRACED_EVENT_THREAD, TRACED_THREAD_REC_SIZE,
			    now_ts(), &tr, sizeof(tr));
			i++;
		}
		ring_publish(&r);
		/* The ring goes by the number of its last thread. */
		notify(sock, tr.index);
		if (!ring_wait_tail(&r, r.head, 5000)) {
			check(0, name, "the ring is not drained after %llu "
			    "thread records", (unsigned long long)i);
			break;
		}
	}
	put_tick(&r, 1);
	put_tick(&r, 2);
	ring_publish(&r);
	notify(sock, tr.index);
	check(ring_wait_tail(&r, r.head, 5000), name,
	    "good records after the flood not drained");
	printf("%s: %llu thread records read\n", name,
	    (unsigned long long)i);
	ring_unmake(&r);
	close(sock);
}

/* Good records across the wrap, a valid loss record, a lying tail. */
static void
case_ring_good(const char *name)
{
	struct hring r;
	struct traced_lost lost;
	uint64_t i, want;
	int sock = ring_session(&r, name);
	char rec[32];

	if (sock == -1)
		return;
	for (i = 3; i < 3 + 2 * RSIZE / 24; i++) {
		if (r.head + 128 - __atomic_load_n(&r.h->tail,
		    __ATOMIC_ACQUIRE) > r.size) {
			ring_publish(&r);
			notify(sock, r.index);
			ring_wait_tail(&r, r.head, 3000);
		}
		if (i % 50 == 0) {
			memset(&lost, 0, sizeof(lost));
			lost.count = lost.cause[TRACED_DROP_RING_FULL] = 2;
			rec_put(&r, TRACED_EVENT_LOST, TRACED_LOST_REC_SIZE,
			    now_ts(), &lost, sizeof(lost));
		}
		if (i % 7 == 0) {
			memset(rec, 0, sizeof(rec));
			snprintf(rec, sizeof(rec), "s%llu",
			    (unsigned long long)i);
			want = strlen(rec) + 1;
			memcpy(rec + ((16 + want + 7) & ~7u) - 16, &i, 8);
			rec_put(&r, ID_STR, (uint32_t)(((16 + want + 7) & ~7u) +
			    8), now_ts(), rec, sizeof(rec) - 8);
		} else
			put_tick(&r, i);
	}
	ring_publish(&r);
	notify(sock, r.index);
	check(ring_wait_tail(&r, r.head, 3000), name,
	    "good records across the wrap not drained");
	/* The producer may scribble on the daemon's fields: the daemon
	 * keeps its own tail and overwrites ours at its next drain. */
	__atomic_store_n(&r.h->tail, 8, __ATOMIC_RELEASE);
	r.h->wakeup = 7;
	for (i = 0; i < 3; i++)
		put_tick(&r, 1000 + i);
	ring_publish(&r);
	notify(sock, r.index);
	check(ring_wait_tail(&r, r.head, 3000), name,
	    "not drained after the producer wrote tail");
	printf("%s: %llu bytes drained across the wrap\n", name,
	    (unsigned long long)r.head);
	ring_unmake(&r);
	close(sock);
}

/* Garbage in the data area and head, changing while the daemon reads. */
struct scribble {
	struct hring	*r;
	volatile int	 stop;
};

static void *
scribble_main(void *arg)
{
	struct scribble *sc = arg;
	uint64_t x = 88172645463325252ull, base = sc->r->head;
	size_t i;

	while (!sc->stop) {
		for (i = 0; i < sc->r->size / 8; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			memcpy(sc->r->data + i * 8, &x, 8);
		}
		__atomic_store_n(&sc->r->h->head, base + (x % (2 *
		    sc->r->size)), __ATOMIC_RELEASE);
	}
	return NULL;
}

static void
case_ring_scribble(const char *name)
{
	struct hring r;
	struct scribble sc;
	pthread_t th;
	int sock = ring_session(&r, name), i;

	if (sock == -1)
		return;
	sc.r = &r;
	sc.stop = 0;
	pthread_create(&th, NULL, scribble_main, &sc);
	for (i = 0; i < 500; i++) {
		notify(sock, r.index);
		sleep_ms(2);
	}
	sc.stop = 1;
	pthread_join(th, NULL);
	printf("%s: scribbled for 1 s, connection %s\n", name,
	    h_closed(sock, 100) ? "closed" : "kept");
	ring_unmake(&r);
	close(sock);
}

/*
 * The size a ring says it has: it may only grow, and only as far as its
 * memory goes.  A ring of twice the smallest size is drained once, then
 * says it went back to the smallest, or beyond its memory.
 */
static void
case_ring_order(const char *name)
{
	struct hring r;
	uint64_t bad, i;
	int sock = h_provider_session();

	if (sock == -1 || ring_make(&r, 0, ORDER + 1, F_SEAL_SHRINK) == -1) {
		check(0, name, "no session or ring");
		return;
	}
	ring_send_fd(sock, &r, r.fd);
	for (i = 0; i < 3; i++)
		put_tick(&r, i);
	ring_publish(&r);
	notify(sock, r.index);
	if (!ring_wait_tail(&r, r.head, 3000)) {
		check(0, name, "good records not drained");
		ring_unmake(&r);
		close(sock);
		return;
	}
	bad = r.head;
	__atomic_store_n(&r.h->order, strcmp(name, "ring-order-back") == 0 ?
	    ORDER : ORDER + 2, __ATOMIC_RELAXED);
	put_tick(&r, 3);
	ring_publish(&r);
	ring_expect_refused(sock, &r, bad, name);
}

/*
 * A ring whose tail, where the daemon starts reading, is off an 8-byte
 * boundary (records never are): refused at its first visit, nothing
 * read.
 */
static void
case_ring_tail(const char *name)
{
	struct hring r;
	int sock = h_provider_session();

	if (sock == -1 || ring_make(&r, 0, ORDER, F_SEAL_SHRINK) == -1) {
		check(0, name, "no session or ring");
		return;
	}
	r.h->tail = 4;
	r.head = 4;
	put_tick(&r, 1);
	ring_publish(&r);
	ring_send_fd(sock, &r, r.fd);
	notify(sock, r.index);
	sleep_ms(300);
	check(__atomic_load_n(&r.h->tail, __ATOMIC_ACQUIRE) == 4, name,
	    "daemon read a ring from a tail off a record boundary");
	printf("%s: refused, connection %s\n", name,
	    h_closed(sock, 100) ? "closed" : "kept");
	ring_unmake(&r);
	close(sock);
}

/* Ring messages whose memfd header lies. */
static void
case_ring_header(const char *name)
{
	struct hring r;
	int sock = h_provider_session();

	if (sock == -1 || ring_make(&r, 0, ORDER, F_SEAL_SHRINK) == -1) {
		check(0, name, "no session or ring");
		return;
	}
	if (strcmp(name, "ring-bad-magic") == 0)
		r.h->magic = 0xdeadbeef;
	else if (strcmp(name, "ring-bad-version") == 0)
		r.h->version = 99;
	else
		r.h->order = ORDER + 1;
	ring_send_fd(sock, &r, r.fd);
	check(h_closed(sock, 2000), name, "daemon kept the connection");
	printf("%s: refused, connection closed\n", name);
	ring_unmake(&r);
	close(sock);
}

/* ---- (b) messages ----------------------------------------------------- */

static void
case_msg(const char *name)
{
	_Alignas(8) char buf[TRACED_MSG_MAX + 1024];
	struct traced_msg_hello *hm = (void *)buf;
	struct traced_msg_notify *nm = (void *)buf;
	struct traced_msg_hdr *h = (void *)buf;
	struct hring r;
	int sock, fds[8], i, ev;
	size_t len;

	memset(buf, 0, sizeof(buf));
	if (strncmp(name, "msg-pre-", 8) == 0) {
		/* Cases before HELLO. */
		sock = h_connect(0);
		if (sock == -1) {
			check(0, name, "connect: %s", strerror(errno));
			return;
		}
		hello_init(hm);
		len = sizeof(*hm);
		if (strcmp(name, "msg-pre-truncated") == 0)
			len = 4;
		else if (strcmp(name, "msg-pre-size-field") == 0)
			hm->hdr.size = 400;
		else if (strcmp(name, "msg-pre-oversized") == 0) {
			len = TRACED_MSG_MAX + 512;
			hm->hdr.size = (uint32_t)len;
		} else if (strcmp(name, "msg-pre-long") == 0) {
			len = 600;
			hm->hdr.size = (uint32_t)len;
		} else if (strcmp(name, "msg-pre-type") == 0)
			hm->hdr.type = 77;
		else if (strcmp(name, "msg-pre-type-zero") == 0)
			hm->hdr.type = 0;
		else if (strcmp(name, "msg-pre-daemon-type") == 0) {
			struct traced_msg_welcome *w = (void *)buf;

			memset(buf, 0, sizeof(*w));
			w->hdr.type = TRACED_MSG_WELCOME;
			w->hdr.size = sizeof(*w);
			w->version = TRACED_PROTOCOL_VERSION;
			w->clock = TRACED_CLOCK_MONOTONIC;
			w->ring_order = ORDER;
			len = sizeof(*w);
		} else if (strcmp(name, "msg-pre-version") == 0)
			hm->version = TRACED_PROTOCOL_VERSION + 1;
		else if (strcmp(name, "msg-pre-type-size") == 0) {
			len = sizeof(*hm) + 8;
			hm->hdr.size = (uint32_t)len;
		} else if (strcmp(name, "msg-pre-comm") == 0)
			memset(hm->comm, 'A', sizeof(hm->comm));
		else if (strcmp(name, "msg-pre-comm-ctl") == 0)
			memcpy(hm->comm, "a\033[2Jb", 6);
		else if (strcmp(name, "msg-pre-flags") == 0)
			hm->flags = 0x80;
		else if (strcmp(name, "msg-pre-garbage") == 0) {
			uint64_t x = now_ns() | 1;

			for (i = 0; i < 64; i++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				buf[i] = (char)x;
			}
			len = 64;
		} else if (strcmp(name, "msg-pre-empty") == 0)
			len = 0;
		else if (strcmp(name, "msg-pre-ring") == 0) {
			if (ring_make(&r, 0, ORDER, F_SEAL_SHRINK) == -1)
				return;
			ring_send_fd(sock, &r, r.fd);
			ring_unmake(&r);
			len = (size_t)-1;
		} else if (strcmp(name, "msg-pre-notify") == 0) {
			notify(sock, 0);
			len = (size_t)-1;
		}
		if (len != (size_t)-1)
			h_send(sock, buf, len, -1);
		check(h_closed(sock, 2000), name,
		    "daemon kept the connection");
		printf("%s: connection closed\n", name);
		close(sock);
		return;
	}

	/* Cases after HELLO and our provider. */
	sock = h_provider_session();
	if (sock == -1) {
		check(0, name, "no session");
		return;
	}
	if (strcmp(name, "msg-second-hello") == 0) {
		hello_init(hm);
		h_send(sock, hm, sizeof(*hm), -1);
	} else if (strcmp(name, "msg-notify-unknown") == 0) {
		notify(sock, 7);
	} else if (strcmp(name, "msg-notify-fd") == 0) {
		memset(nm, 0, sizeof(*nm));
		nm->hdr.type = TRACED_MSG_NOTIFY;
		nm->hdr.size = sizeof(*nm);
		ev = eventfd(0, EFD_CLOEXEC);
		h_send(sock, nm, sizeof(*nm), ev);
		close(ev);
	} else if (strcmp(name, "msg-ring-no-fd") == 0) {
		struct traced_msg_ring *rm = (void *)buf;

		rm->hdr.type = TRACED_MSG_RING;
		rm->hdr.size = sizeof(*rm);
		rm->tid = 1;
		rm->max_order = ORDER;
		h_send(sock, rm, sizeof(*rm), -1);
	} else if (strcmp(name, "msg-ring-many-fds") == 0 ||
	    strcmp(name, "msg-ring-two-cmsgs") == 0) {
		int split = strcmp(name, "msg-ring-two-cmsgs") == 0;
		int n = split ? 2 : 8;
		struct traced_msg_ring rm;

		if (ring_make(&r, 0, ORDER, F_SEAL_SHRINK) == -1)
			return;
		for (i = 0; i < n; i++)
			fds[i] = r.fd;
		memset(&rm, 0, sizeof(rm));
		rm.hdr.type = TRACED_MSG_RING;
		rm.hdr.size = sizeof(rm);
		rm.tid = 1;
		rm.max_order = ORDER;
		h_sendv(sock, &rm, sizeof(rm), fds, n, split);
		ring_unmake(&r);
	} else if (strcmp(name, "msg-ring-twice") == 0) {
		if (ring_make(&r, 0, ORDER, F_SEAL_SHRINK) == -1)
			return;
		ring_send_fd(sock, &r, r.fd);
		ring_send_fd(sock, &r, r.fd);
		ring_unmake(&r);
	} else if (strcmp(name, "msg-ring-order") == 0) {
		struct traced_msg_ring rm;

		if (ring_make(&r, 0, ORDER, F_SEAL_SHRINK) == -1)
			return;
		memset(&rm, 0, sizeof(rm));
		rm.hdr.type = TRACED_MSG_RING;
		rm.hdr.size = sizeof(rm);
		rm.tid = 1;
		rm.max_order = 40;
		h_send(sock, &rm, sizeof(rm), r.fd);
		ring_unmake(&r);
	} else if (strcmp(name, "msg-provider-order") == 0) {
		/* Our provider was number 0: numbers only go up. */
		provider_send(sock, desc, sizeof(desc) - 1, 2, 0,
		    TRACED_EVENT_ID_BASE + 2, F_SEAL_SHRINK | F_SEAL_WRITE, sizeof(desc) - 1);
	} else if (strcmp(name, "msg-provider-ids-back") == 0) {
		/* Event ids overlapping our provider's (16 and 17). */
		provider_send(sock, desc, sizeof(desc) - 1, 2, 1,
		    TRACED_EVENT_ID_BASE + 1, F_SEAL_SHRINK | F_SEAL_WRITE, sizeof(desc) - 1);
	} else if (strcmp(name, "msg-provider-bad-text") == 0) {
		static const char junk[] = "this is not(trace events\n\"\n";

		provider_send(sock, junk, sizeof(junk) - 1, 2, 1,
		    TRACED_EVENT_ID_BASE + 2, F_SEAL_SHRINK | F_SEAL_WRITE, sizeof(junk) - 1);
	} else if (strcmp(name, "msg-provider-count") == 0) {
		struct traced_msg_provider pm;
		int fd = memfd_with(desc, sizeof(desc) - 1, sizeof(desc) - 1,
		    F_SEAL_SHRINK | F_SEAL_WRITE);

		memset(&pm, 0, sizeof(pm));
		pm.hdr.type = TRACED_MSG_PROVIDER;
		pm.hdr.size = sizeof(pm);
		pm.index = 1;
		pm.id_base = TRACED_EVENT_ID_BASE + 2;
		pm.nevents = 3;
		pm.desc_size = sizeof(desc) - 1;
		snprintf(pm.name, sizeof(pm.name), "liar");
		provider_send_fds(sock, &pm, fd, -1);
		close(fd);
	} else if (strcmp(name, "msg-provider-unsealed") == 0) {
		provider_send(sock, desc, sizeof(desc) - 1, 2, 1,
		    TRACED_EVENT_ID_BASE + 2, F_SEAL_SHRINK, sizeof(desc) - 1);
	} else if (strcmp(name, "msg-provider-size") == 0) {
		struct traced_msg_provider pm;
		int fd = memfd_with(desc, sizeof(desc) - 1, sizeof(desc) - 1,
		    F_SEAL_SHRINK | F_SEAL_WRITE);

		memset(&pm, 0, sizeof(pm));
		pm.hdr.type = TRACED_MSG_PROVIDER;
		pm.hdr.size = sizeof(pm);
		pm.index = 1;
		pm.id_base = TRACED_EVENT_ID_BASE + 2;
		pm.nevents = 2;
		pm.desc_size = 1u << 20;
		snprintf(pm.name, sizeof(pm.name), "liar");
		provider_send_fds(sock, &pm, fd, -1);
		close(fd);
	} else if (strcmp(name, "msg-provider-zeros") == 0) {
		/* 16 MiB of NULs, sealed: a big, empty description. */
		struct traced_msg_provider pm;
		int fd = memfd_with(NULL, 0, TRACED_DESC_MAX,
		    F_SEAL_SHRINK | F_SEAL_WRITE);

		memset(&pm, 0, sizeof(pm));
		pm.hdr.type = TRACED_MSG_PROVIDER;
		pm.hdr.size = sizeof(pm);
		pm.index = 1;
		pm.id_base = TRACED_EVENT_ID_BASE + 2;
		pm.nevents = 2;
		pm.desc_size = TRACED_DESC_MAX;
		snprintf(pm.name, sizeof(pm.name), "zeros");
		provider_send_fds(sock, &pm, fd, -1);
		close(fd);
	} else if (strcmp(name, "msg-module-order") == 0) {
		module_send(sock, 1, 0, "/hostile/a");
		module_send(sock, 0, 0, "/hostile/b");
	} else if (strcmp(name, "msg-funcs-unannounced") == 0) {
		module_send(sock, 0, 0, "/hostile/a");
		funcs_send(sock, 0, "10 4 p f\n", 1);
	} else if (strcmp(name, "msg-funcs-bad-table") == 0) {
		module_send(sock, 0, TRACED_MODULE_FUNCS, "/hostile/a");
		funcs_send(sock, 0, "10 4 p f\n8 4 p g\n", 2);
	} else if (strcmp(name, "msg-funcs-count") == 0) {
		module_send(sock, 0, TRACED_MODULE_FUNCS, "/hostile/a");
		funcs_send(sock, 0, "10 4 p f\n20 4 p g\n", 3);
	} else if (strcmp(name, "msg-notify-flood") == 0) {
		/* Not an error: many drains asked for a good ring. */
		if (ring_make(&r, 0, ORDER, F_SEAL_SHRINK) == -1 ||
		    ring_send_fd(sock, &r, r.fd) == -1)
			return;
		for (i = 0; i < 20000; i++) {
			if (i % 10 == 0 && r.head + 24 - __atomic_load_n(
			    &r.h->tail, __ATOMIC_ACQUIRE) <= r.size) {
				put_tick(&r, (uint64_t)i);
				ring_publish(&r);
			}
			if (notify(sock, 0) == -1)
				break;
		}
		check(ring_wait_tail(&r, r.head, 5000), name,
		    "ring not drained after the flood");
		check(!h_closed(sock, 200), name, "daemon closed the "
		    "connection of a client that only asked often");
		printf("%s: 20000 notifies, ring drained, connection kept\n",
		    name);
		ring_unmake(&r);
		close(sock);
		return;
	} else
		check(0, name, "unknown case");
	(void)h;
	check(h_closed(sock, 3000), name, "daemon kept the connection");
	printf("%s: connection closed\n", name);
	close(sock);
}

/* ---- (c) the wrong kind of descriptor for a ring ---------------------- */

static void
case_fd(const char *name)
{
	struct hring r;
	int sock = h_provider_session(), fd = -1, p[2], sv[2], ring = 0;
	char path[64];

	if (sock == -1) {
		check(0, name, "no session");
		return;
	}
	memset(&r, 0, sizeof(r));
	r.order = ORDER;
	if (strcmp(name, "fd-pipe") == 0) {
		if (pipe(p) == 0) {
			fd = p[0];
			close(p[1]);
		}
	} else if (strcmp(name, "fd-socket") == 0) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0) {
			fd = sv[0];
			close(sv[1]);
		}
	} else if (strcmp(name, "fd-eventfd") == 0) {
		fd = eventfd(0, 0);
	} else if (strcmp(name, "fd-devnull") == 0) {
		fd = open("/dev/null", O_RDWR);
	} else if (strcmp(name, "fd-dir") == 0) {
		fd = open("/", O_RDONLY | O_DIRECTORY);
	} else if (strcmp(name, "fd-file") == 0) {
		/* A regular file, big enough, in the current directory. */
		snprintf(path, sizeof(path), "hostile-file.%d", (int)getpid());
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd != -1) {
			unlink(path);
			if (ftruncate(fd, TRACED_RING_HDR_SIZE + RSIZE) == -1)
				check(0, name, "ftruncate");
		}
	} else if (strcmp(name, "fd-unsealed") == 0) {
		if (ring_make(&r, 0, ORDER, 0) == 0) {
			ring = 1;
			fd = dup(r.fd);
		}
	} else if (strcmp(name, "fd-no-sealing") == 0) {
		fd = memfd_create("nosealing", MFD_CLOEXEC);
		if (fd != -1 && ftruncate(fd, TRACED_RING_HDR_SIZE + RSIZE) ==
		    -1)
			check(0, name, "ftruncate");
	} else if (strcmp(name, "fd-small") == 0) {
		fd = memfd_with(NULL, 0, TRACED_RING_HDR_SIZE + RSIZE / 2,
		    F_SEAL_SHRINK);
	} else if (strcmp(name, "fd-readonly") == 0) {
		/* A read-only descriptor of a good memfd. */
		if (ring_make(&r, 0, ORDER, F_SEAL_SHRINK) == 0) {
			ring = 1;
			snprintf(path, sizeof(path), "/proc/self/fd/%d", r.fd);
			fd = open(path, O_RDONLY);
		}
	} else if (strcmp(name, "fd-write-sealed") == 0) {
		/* Sealed against writing: the daemon cannot map it to
		 * store its tail.  No writable mapping may exist. */
		if (ring_make(&r, 0, ORDER, 0) == 0) {
			munmap(r.base, TRACED_RING_HDR_SIZE + r.size);
			if (fcntl(r.fd, F_ADD_SEALS, F_SEAL_SHRINK |
			    F_SEAL_WRITE) == -1)
				check(0, name, "F_SEAL_WRITE: %s",
				    strerror(errno));
			fd = r.fd;
		}
	}
	if (fd == -1) {
		check(0, name, "could not make the descriptor: %s",
		    strerror(errno));
		close(sock);
		return;
	}
	ring_send_fd(sock, &r, fd);
	close(fd);
	check(h_closed(sock, 2000), name, "daemon kept the connection");
	printf("%s: refused, connection closed\n", name);
	if (ring)
		ring_unmake(&r);
	close(sock);
}

/*
 * The state array the daemon writes into is the client's memfd: the
 * wrong kind of descriptor there, or none, is refused like a bad ring.
 * state-written is the good case: the daemon wrote the default state
 * (both events on) into our memfd before it acked.
 */
static void
case_state(const char *name)
{
	_Alignas(8) char buf[256];
	struct traced_msg_provider m;
	int sock = h_session(), dfd, sfd = -1, p[2], ok = 1;
	char path[64];
	unsigned char bytes[2] = { 0, 0 };

	if (sock == -1) {
		check(0, name, "no session");
		return;
	}
	/* A page long, so that as a state array it is big enough. */
	dfd = memfd_with(desc, sizeof(desc) - 1, 4096,
	    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE);
	memset(&m, 0, sizeof(m));
	m.hdr.type = TRACED_MSG_PROVIDER;
	m.hdr.size = sizeof(m);
	m.id_base = TRACED_EVENT_ID_BASE;
	m.nevents = 2;
	m.desc_size = sizeof(desc) - 1;
	snprintf(m.name, sizeof(m.name), "hostile");
	if (strcmp(name, "state-missing") == 0) {
		/* Protocol 1's PROVIDER: the description alone. */
		if (dfd != -1)
			h_sendv(sock, &m, sizeof(m), &dfd, 1, 0);
	} else {
		if (strcmp(name, "state-pipe") == 0) {
			if (pipe(p) == 0) {
				sfd = p[0];
				close(p[1]);
			}
		} else if (strcmp(name, "state-unsealed") == 0) {
			sfd = memfd_with(NULL, 0, 4096, 0);
		} else if (strcmp(name, "state-small") == 0) {
			sfd = memfd_with(NULL, 0, 1, F_SEAL_SHRINK);
		} else if (strcmp(name, "state-write-sealed") == 0) {
			sfd = memfd_with(NULL, 0, 4096,
			    F_SEAL_SHRINK | F_SEAL_WRITE);
		} else if (strcmp(name, "state-readonly") == 0) {
			int good = state_memfd(2);

			snprintf(path, sizeof(path), "/proc/self/fd/%d", good);
			sfd = open(path, O_RDONLY);
			close(good);
		} else if (strcmp(name, "state-is-desc") == 0) {
			sfd = dup(dfd);
		} else if (strcmp(name, "state-hugetlb") == 0) {
			sfd = memfd_create("hostile", MFD_CLOEXEC |
			    MFD_ALLOW_SEALING | MFD_HUGETLB);
			if (sfd == -1) {
				printf("%s: skipped: no hugetlbfs memfd here "
				    "(%s)\n", name, strerror(errno));
				close(dfd);
				close(sock);
				return;
			}
			if (ftruncate(sfd, 2 << 20) == -1 ||
			    fcntl(sfd, F_ADD_SEALS, F_SEAL_SHRINK) == -1) {
				close(sfd);
				sfd = -1;
			}
		} else
			sfd = state_memfd(2);		/* state-written */
		if (dfd == -1 || sfd == -1) {
			check(0, name, "could not make the descriptors: %s",
			    strerror(errno));
			ok = 0;
		} else
			provider_send_fds(sock, &m, dfd, sfd);
	}
	if (ok && strcmp(name, "state-written") == 0) {
		check(h_recv(sock, TRACED_MSG_PROVIDER_ACK, buf, sizeof(buf),
		    NULL, 3000) == sizeof(struct traced_msg_provider_ack),
		    name, "no PROVIDER_ACK");
		if (check(pread(sfd, bytes, 2, 0) == 2 && bytes[0] == 1 &&
		    bytes[1] == 1, name, "state bytes after the ack: %d %d, "
		    "not the default 1 1", bytes[0], bytes[1]))
			printf("%s: the daemon wrote the default state into "
			    "our memfd before its ack\n", name);
	} else if (ok) {
		check(h_closed(sock, 2000), name, "daemon kept the connection");
		printf("%s: refused, connection closed\n", name);
	}
	if (sfd != -1)
		close(sfd);
	if (dfd != -1)
		close(dfd);
	close(sock);
}

/* ---- the process's own rules (RULES) -------------------------------- */

/*
 * Send RULES: rules "+ev_*"... as in proto/wire.h, here two rules
 * ("hostile_tick" off, "x*" on) and a table for provider 0 of
 * 'nevents' events deciding event 0 by rule 'rule0' (0: none).
 */
static int
rules_send(int sock, uint32_t nevents, unsigned rule0, int seals)
{
	uint8_t img[64 + 2 * 16];
	struct traced_msg_rules m;
	size_t n = 0;
	uint32_t i;
	int fd, rc;

	memcpy(img, "\0hostile_tick\0\1x*\0", 18);	/* 14 + 4 */
	n = 18;
	for (; n % 4 != 0; n++)
		img[n] = 0;
	memset(img + n, 0, 8);
	img[n + 4] = (uint8_t)nevents;
	n += 8;
	for (i = 0; i < nevents && i < 16; i++) {
		img[n++] = i == 0 ? (uint8_t)rule0 : 0;
		img[n++] = 0;
	}
	for (; n % 4 != 0; n++)
		img[n] = 0;
	if ((fd = memfd_with((const char *)img, n, n, seals)) == -1)
		return -1;
	memset(&m, 0, sizeof(m));
	m.hdr.type = TRACED_MSG_RULES;
	m.hdr.size = sizeof(m);
	m.gen = 1;
	m.nrules = 2;
	m.size = (uint32_t)n;
	rc = h_send(sock, &m, sizeof(m), fd);
	close(fd);
	return rc;
}

/*
 * rules-good: RULES before PROVIDER turn event 0 off (the process's
 * rule 1, "hostile_tick" off), event 1 keeps the default (on), and the
 * daemon says so before its acks.  The others are refused.
 */
static void
case_rules(const char *name)
{
	const int sealed = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
	_Alignas(8) char buf[256];
	struct traced_msg_provider m;
	unsigned char bytes[2] = { 9, 9 };
	int sock, dfd = -1, sfd = -1;

	if (strcmp(name, "rules-before-hello") == 0) {
		if ((sock = h_connect(0)) == -1 ||
		    rules_send(sock, 2, 1, sealed) == -1)
			check(0, name, "could not send");
		check(h_closed(sock, 2000), name, "daemon kept the connection");
		printf("%s: refused, connection closed\n", name);
		close(sock);
		return;
	}
	if (strcmp(name, "rules-late-size") == 0) {
		/* After the provider: the table must have its size. */
		if ((sock = h_provider_session()) == -1 ||
		    rules_send(sock, 3, 1, sealed) == -1)
			check(0, name, "could not send");
		check(h_closed(sock, 2000), name, "daemon kept the connection");
		printf("%s: refused, connection closed\n", name);
		close(sock);
		return;
	}
	if ((sock = h_session()) == -1) {
		check(0, name, "no session");
		return;
	}
	if (strcmp(name, "rules-bad-rule") == 0)
		rules_send(sock, 2, 3, sealed);
	else if (strcmp(name, "rules-unsealed") == 0)
		rules_send(sock, 2, 1, F_SEAL_SHRINK);
	else
		rules_send(sock, strcmp(name, "rules-early-size") == 0 ? 5 : 2,
		    1, sealed);
	if (strcmp(name, "rules-good") == 0 ||
	    strcmp(name, "rules-early-size") == 0) {
		check(h_recv(sock, TRACED_MSG_RULES_ACK, buf, sizeof(buf),
		    NULL, 3000) == sizeof(struct traced_msg_rules_ack), name,
		    "no RULES_ACK");
		dfd = memfd_with(desc, sizeof(desc) - 1, sizeof(desc) - 1,
		    sealed);
		sfd = state_memfd(2);
		memset(&m, 0, sizeof(m));
		m.hdr.type = TRACED_MSG_PROVIDER;
		m.hdr.size = sizeof(m);
		m.id_base = TRACED_EVENT_ID_BASE;
		m.nevents = 2;
		m.desc_size = sizeof(desc) - 1;
		snprintf(m.name, sizeof(m.name), "hostile");
		if (dfd == -1 || sfd == -1)
			check(0, name, "memfds: %s", strerror(errno));
		else
			provider_send_fds(sock, &m, dfd, sfd);
	}
	if (strcmp(name, "rules-good") == 0) {
		check(h_recv(sock, TRACED_MSG_PROVIDER_ACK, buf, sizeof(buf),
		    NULL, 3000) == sizeof(struct traced_msg_provider_ack),
		    name, "no PROVIDER_ACK");
		if (check(pread(sfd, bytes, 2, 0) == 2 && bytes[0] == 0 &&
		    bytes[1] == 1, name, "state bytes %d %d, not 0 (our "
		    "rule) 1 (the default)", bytes[0], bytes[1]))
			printf("%s: our rule turned event 0 off, event 1 kept "
			    "its default\n", name);
	} else {
		check(h_closed(sock, 2000), name, "daemon kept the connection");
		printf("%s: refused, connection closed\n", name);
	}
	if (dfd != -1)
		close(dfd);
	if (sfd != -1)
		close(sfd);
	close(sock);
}

/* ---- (e) shrinking what the daemon maps ----------------------------- */

static void
case_shrink(const char *name)
{
	struct hring r;
	int sock = ring_session(&r, name);
	uint64_t i;

	if (sock == -1)
		return;
	/* Sealed: it cannot shrink, whoever tries. */
	errno = 0;
	check(ftruncate(r.fd, TRACED_RING_HDR_SIZE) == -1 && errno == EPERM,
	    name, "ftruncate of a sealed ring did not fail with EPERM: %s",
	    strerror(errno));
	check(ftruncate(r.fd, 0) == -1, name, "ftruncate to 0 worked");
	/* Writing past the end: F_SEAL_GROW refuses it too. */
	check(pwrite(r.fd, "x", 1, (off_t)(TRACED_RING_HDR_SIZE + r.size +
	    4096)) == -1, name, "the sealed ring grew");
	/* Our own mapping going away changes nothing for the daemon. */
	for (i = 3; i < 40; i++)
		put_tick(&r, i);
	ring_publish(&r);
	munmap(r.base, TRACED_RING_HDR_SIZE + r.size);
	notify(sock, r.index);
	sleep_ms(300);
	printf("%s: ftruncate and growth refused (EPERM), records after "
	    "our munmap still drained\n", name);
	close(r.fd);
	close(sock);
}

/*
 * A connection that ends with a reset (we leave a reply unread) right
 * after the daemon received a descriptor from us: nothing of the next
 * client may suffer.  The daemon closes the descriptors it receives
 * once it has mapped them, so the next connection it accepts likely
 * gets the same number.
 */
static void
case_reset(const char *name)
{
	_Alignas(8) char buf[256];
	struct traced_msg_hello m;
	int a = h_session(), b;

	if (a == -1) {
		check(0, name, "no session");
		return;
	}
	provider_send(a, desc, sizeof(desc) - 1, 2, 0, TRACED_EVENT_ID_BASE,
	    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE, sizeof(desc) - 1);
	sleep_ms(200);		/* handled; its ACK waits, unread */
	b = h_connect(0);
	if (b == -1) {
		check(0, name, "connect: %s", strerror(errno));
		close(a);
		return;
	}
	sleep_ms(200);		/* accepted */
	close(a);		/* unread data: the daemon's recvmsg fails */
	sleep_ms(200);
	hello_init(&m);
	h_send(b, &m, sizeof(m), -1);
	check(h_recv(b, TRACED_MSG_WELCOME, buf, sizeof(buf), NULL, 2000) ==
	    sizeof(struct traced_msg_welcome), name, "the next client got no "
	    "WELCOME after the first one reset its connection: the daemon "
	    "closed its socket (daemon/client.c session_read_cb reads the "
	    "control buffer after a failed recvmsg)");
	printf("%s: done\n", name);
	close(b);
}

/* ---- (d) many connections ------------------------------------------- */

static int
flood(int n, double seconds, int hello)
{
	struct rlimit rl;
	struct traced_msg_hello m;
	uint64_t deadline;
	int *socks, i, ok = 0, refused = 0;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	socks = calloc((size_t)n, sizeof(*socks));
	if (socks == NULL)
		return 1;
	hello_init(&m);
	deadline = now_ns() + 1000000000u;
	for (i = 0; i < n; i++) {
		/* Non-blocking: a full backlog must not stop us; we try
		 * again for a while, as a patient attacker would. */
		while ((socks[i] = h_connect(1)) == -1 && errno == EAGAIN &&
		    now_ns() < deadline)
			sleep_ms(1);
		if (socks[i] == -1) {
			refused++;
			continue;
		}
		ok++;
		if (hello)
			(void)send(socks[i], &m, sizeof(m), MSG_NOSIGNAL);
	}
	printf("flood: %d connections open, %d refused; holding %.1f s\n",
	    ok, refused, seconds);
	fflush(stdout);
	sleep_ms((int)(seconds * 1000));
	for (i = 0; i < n; i++)
		if (socks[i] != -1)
			close(socks[i]);
	free(socks);
	printf("flood: closed\n");
	return 0;
}

/* ---- (f) one client against everyone (issue 9) ---------------------- */

/*
 * The timed commands below each do their worst until a deadline, then
 * print one line of what the daemon did from their side (refused,
 * closed the connection, drained), and exit 0: what the daemon must do
 * meanwhile for everyone else is for the test script to check.
 */

static uint64_t
deadline_in(double seconds)
{
	return now_ns() + (uint64_t)(seconds * 1e9);
}

/*
 * Send until it goes through or 'deadline' passes (a daemon that does
 * not read fills the socket).  0, or -1 when the daemon closed the
 * connection or the deadline passed.
 */
static int
h_sendv_until(int sock, const void *msg, size_t len, const int *fds,
    int nfds, uint64_t deadline)
{
	struct pollfd pfd = { sock, POLLOUT, 0 };

	for (;;) {
		if (h_sendmsg(sock, msg, len, fds, nfds, 0, MSG_DONTWAIT) == 0)
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != ETOOMANYREFS && errno != ENOBUFS &&
		    errno != EINTR)
			return -1;
		if (now_ns() >= deadline)
			return -1;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			(void)poll(&pfd, 1, 50);
		else
			sleep_ms(5);
	}
}

/* Is the connection closed by the daemon?  Never reads. */
static int
h_hup(int sock)
{
	struct pollfd pfd = { sock, POLLRDHUP, 0 };

	return poll(&pfd, 1, 0) == 1 &&
	    (pfd.revents & (POLLHUP | POLLRDHUP | POLLERR)) != 0;
}

struct acks {
	unsigned	ok;
	unsigned	refused;
	int		status;		/* of the last refusal */
	int		closed;		/* the daemon closed the connection */
};

/* Read what the daemon sent within 'ms': provider acks, or EOF. */
static void
acks_read(int sock, struct acks *a, int ms)
{
	_Alignas(8) char buf[256];
	struct traced_msg_provider_ack ack;
	struct pollfd pfd = { sock, POLLIN, 0 };
	ssize_t n;

	while (!a->closed && poll(&pfd, 1, ms) == 1) {
		n = recv(sock, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR)) {
			a->closed = 1;
			break;
		}
		if (n == (ssize_t)sizeof(ack)) {
			memcpy(&ack, buf, sizeof(ack));
			if (ack.hdr.type == TRACED_MSG_PROVIDER_ACK &&
			    ack.status < 0) {
				a->refused++;
				a->status = ack.status;
			} else if (ack.hdr.type == TRACED_MSG_PROVIDER_ACK)
				a->ok++;
		}
		ms = 0;
	}
}

/*
 * A sealed description of n events named PREFIX0 .. PREFIX<n-1>, each
 * with one uint64_t argument; its length in *lenp.
 */
static int
desc_memfd(uint32_t n, const char *prefix, size_t *lenp)
{
	size_t cap = (size_t)n * (2 * strlen(prefix) + 48) + 1, len = 0;
	char *t = malloc(cap);
	uint32_t i;
	int fd;

	if (t == NULL)
		return -1;
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(t + len, cap - len, "%s%u(uint64_t a) "
		    "\"%s%u %%\" PRIu64\n", prefix, i, prefix, i);
	fd = memfd_with(t, len, len, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_WRITE | F_SEAL_SEAL);
	free(t);
	*lenp = len;
	return fd;
}

/*
 * providers NPROV NEVENTS SECONDS [answered]: one session registers
 * NPROV providers of NEVENTS events each, as fast as the daemon takes
 * them, and stays until SECONDS have passed, or, with 'answered', until
 * the daemon answered each (or closed the connection).
 */
static int
cmd_providers(uint32_t nprov, uint32_t nevents, double seconds,
    int answered)
{
	uint64_t t0 = now_ns(), deadline = deadline_in(seconds);
	struct traced_msg_provider m;
	struct acks a = { 0, 0, 0, 0 };
	uint32_t i, sent = 0;
	int sock, fds[2];
	size_t len = 0;

	if (nevents == 0 || nevents > TRACED_PROVIDER_EVENTS_MAX ||
	    (uint64_t)nprov * nevents > TRACED_EVENT_ID_MAX -
	    TRACED_EVENT_ID_BASE) {
		fprintf(stderr, "hostile: providers: too many events\n");
		return 2;
	}
	if ((sock = h_session()) == -1) {
		printf("providers: no session (the daemon refused HELLO)\n");
		return 0;
	}
	fds[0] = desc_memfd(nevents, "e", &len);
	fds[1] = state_memfd(nevents);
	if (fds[0] == -1 || fds[1] == -1) {
		perror("hostile: providers: memfd");
		return 1;
	}
	for (i = 0; i < nprov && !a.closed; i++) {
		memset(&m, 0, sizeof(m));
		m.hdr.type = TRACED_MSG_PROVIDER;
		m.hdr.size = sizeof(m);
		m.index = i;
		m.id_base = TRACED_EVENT_ID_BASE + i * nevents;
		m.nevents = nevents;
		m.desc_size = (uint32_t)len;
		snprintf(m.name, sizeof(m.name), "hostile%u", i);
		if (h_sendv_until(sock, &m, sizeof(m), fds, 2, deadline) == -1)
			break;
		sent++;
		acks_read(sock, &a, 0);
	}
	while (!a.closed && now_ns() < deadline &&
	    !(answered && a.ok + a.refused == sent))
		acks_read(sock, &a, 100);
	printf("providers: %u of %u providers of %u events sent in %.1f s; "
	    "%u acked, %u refused (status %d); connection %s\n", sent, nprov,
	    nevents, (double)(now_ns() - t0) / 1e9, a.ok, a.refused, a.status,
	    a.closed ? "closed by the daemon" : "kept");
	close(fds[0]);
	close(fds[1]);
	close(sock);
	return 0;
}

/*
 * event-id SECONDS: one provider whose one event has the largest id,
 * 2^24 - 1, and a ring that keeps the daemon draining events of it.
 */
static int
cmd_event_id(double seconds)
{
	static const char text[] = "hostile_max(uint64_t seq) \"max %\" "
	    "PRIu64\n";
	uint64_t deadline = deadline_in(seconds), seq = 0, cap;
	const uint32_t id = TRACED_EVENT_ID_MAX - 1;
	struct traced_msg_provider m;
	struct acks a = { 0, 0, 0, 0 };
	struct hring r;
	int sock, fds[2], notifies = 0;

	if ((sock = h_session()) == -1) {
		printf("event-id: no session (the daemon refused HELLO)\n");
		return 0;
	}
	fds[0] = memfd_with(text, sizeof(text) - 1, sizeof(text) - 1,
	    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE);
	fds[1] = state_memfd(1);
	memset(&m, 0, sizeof(m));
	m.hdr.type = TRACED_MSG_PROVIDER;
	m.hdr.size = sizeof(m);
	m.id_base = id;
	m.nevents = 1;
	m.desc_size = sizeof(text) - 1;
	snprintf(m.name, sizeof(m.name), "hostile");
	if (fds[0] == -1 || fds[1] == -1 ||
	    h_sendv(sock, &m, sizeof(m), fds, 2, 0) == -1) {
		perror("hostile: event-id: provider");
		return 1;
	}
	close(fds[0]);
	close(fds[1]);
	acks_read(sock, &a, 3000);
	if (a.ok == 0) {
		if (a.refused == 0 && !a.closed)
			printf("event-id: the provider of event id %u is not "
			    "answered after 3 s\n", id);
		while (!a.closed && now_ns() < deadline)
			acks_read(sock, &a, 100);
		if (a.refused > 0 || a.closed)
			printf("event-id: the provider of event id %u was "
			    "refused (status %d); connection %s\n", id,
			    a.status, a.closed ? "closed by the daemon" :
			    "kept");
		close(sock);
		return 0;
	}
	if (ring_make(&r, 0, 16, F_SEAL_SHRINK | F_SEAL_GROW) == -1 ||
	    ring_send_fd(sock, &r, r.fd) == -1) {
		perror("hostile: event-id: ring");
		return 1;
	}
	/* Every millisecond: events of that id, and a drain asked for. */
	while (!a.closed && now_ns() < deadline) {
		cap = 0;
		while (cap++ < 100 && r.head + 24 - __atomic_load_n(&r.h->tail,
		    __ATOMIC_ACQUIRE) <= r.size) {
			rec_put(&r, id, 24, now_ts(), &seq, sizeof(seq));
			seq++;
		}
		ring_publish(&r);
		if (notify(sock, r.index) == 0)
			notifies++;
		acks_read(sock, &a, 0);
		sleep_ms(1);
	}
	printf("event-id: event id %u accepted; %llu events written, %llu "
	    "bytes drained, %d drains asked; connection %s\n", id,
	    (unsigned long long)seq, (unsigned long long)__atomic_load_n(
	    &r.h->tail, __ATOMIC_ACQUIRE), notifies,
	    a.closed ? "closed by the daemon" : "kept");
	ring_unmake(&r);
	close(sock);
	return 0;
}

/*
 * rings NSESS NRINGS SECONDS: NSESS sessions register NRINGS rings
 * each (the smallest size, every one with a thread id of its own), and
 * hold them until SECONDS have passed; a session the daemon closes is
 * opened again and filled again, as a patient attacker would.
 */
static int
cmd_rings(int nsess, uint32_t nrings, double seconds)
{
	uint64_t deadline = deadline_in(seconds);
	const uint32_t order = TRACED_RING_ORDER_MIN;
	struct traced_ring_hdr h;
	struct traced_msg_ring m;
	uint32_t *held, *total, *drops, tid = 100000;
	int *socks, s, fd, busy;

	socks = calloc((size_t)nsess, sizeof(*socks));
	held = calloc((size_t)nsess, sizeof(*held));
	total = calloc((size_t)nsess, sizeof(*total));
	drops = calloc((size_t)nsess, sizeof(*drops));
	if (socks == NULL || held == NULL || total == NULL || drops == NULL)
		return 1;
	for (s = 0; s < nsess; s++)
		socks[s] = -1;
	memset(&h, 0, sizeof(h));
	h.magic = TRACED_RING_MAGIC;
	h.version = TRACED_RING_VERSION;
	h.max_order = h.init_order = h.order = order;
	while (now_ns() < deadline) {
		busy = 0;
		for (s = 0; s < nsess && now_ns() < deadline; s++) {
			if (socks[s] != -1 && h_hup(socks[s])) {
				close(socks[s]);
				socks[s] = -1;
				drops[s]++;
			}
			if (socks[s] == -1) {
				if ((socks[s] = h_provider_session()) == -1)
					continue;
				held[s] = 0;
			}
			if (held[s] == nrings)
				continue;
			busy = 1;
			h.tid = tid++;
			fd = memfd_with((const char *)&h, sizeof(h),
			    traced_ring_file_size(order),
			    F_SEAL_SHRINK | F_SEAL_GROW);
			if (fd == -1) {
				perror("hostile: rings: memfd");
				sleep_ms(10);
				continue;
			}
			memset(&m, 0, sizeof(m));
			m.hdr.type = TRACED_MSG_RING;
			m.hdr.size = sizeof(m);
			m.index = held[s];
			m.tid = h.tid;
			m.max_order = order;
			if (h_sendv_until(socks[s], &m, sizeof(m), &fd, 1,
			    deadline) == 0) {
				held[s]++;
				total[s]++;
			}
			close(fd);
		}
		if (!busy)
			sleep_ms(20);
	}
	for (s = 0; s < nsess; s++) {
		if (socks[s] != -1 && h_hup(socks[s])) {
			close(socks[s]);
			socks[s] = -1;
			drops[s]++;
		}
		printf("rings: session %d: %u of %u rings held at the end, %u "
		    "sent in all, %u times closed by the daemon\n", s,
		    socks[s] == -1 ? 0 : held[s], nrings, total[s], drops[s]);
		if (socks[s] != -1)
			close(socks[s]);
	}
	free(socks);
	free(held);
	free(total);
	free(drops);
	return 0;
}

/*
 * churn RATE SECONDS: RATE connections a second that say HELLO and
 * leave at once, for SECONDS.
 */
static int
cmd_churn(double rate, double seconds)
{
	uint64_t t0 = now_ns(), deadline = deadline_in(seconds), owed;
	unsigned long done = 0, refused = 0;
	struct traced_msg_hello m;
	int fd;

	hello_init(&m);
	while (now_ns() < deadline) {
		owed = (uint64_t)((double)(now_ns() - t0) / 1e9 * rate);
		while (done + refused < owed) {
			if ((fd = h_connect(1)) == -1) {
				refused++;
				continue;
			}
			(void)send(fd, &m, sizeof(m), MSG_NOSIGNAL |
			    MSG_DONTWAIT);
			close(fd);
			done++;
		}
		sleep_ms(1);
	}
	printf("churn: %lu connections said HELLO and left in %.1f s, %lu "
	    "refused by the backlog\n", done, seconds, refused);
	return 0;
}

/*
 * A control request for argv[0..argc) in buf (TRACED_MSG_MAX bytes),
 * encoded by hand as proto/wire.h says.  Its size, or 0 if too long.
 */
static size_t
ctl_request(char *buf, int argc, char **argv)
{
	struct traced_msg_ctl_request rq;
	size_t len = sizeof(rq), n;
	int i;

	for (i = 0; i < argc; i++) {
		n = strlen(argv[i]) + 1;
		if (len + n > TRACED_MSG_MAX)
			return 0;
		memcpy(buf + len, argv[i], n);
		len += n;
	}
	memset(&rq, 0, sizeof(rq));
	rq.hdr.type = TRACED_MSG_CTL_REQUEST;
	rq.hdr.size = (uint32_t)len;
	rq.version = TRACED_PROTOCOL_VERSION;
	rq.argc = (uint32_t)argc;
	memcpy(buf, &rq, sizeof(rq));
	return len;
}

/*
 * ctl-noread N SECONDS COMMAND...: N control connections ask for
 * COMMAND's reply and never read it (a receive buffer as small as the
 * kernel allows), for SECONDS.
 */
static int
cmd_ctl_noread(int n, double seconds, int argc, char **argv)
{
	_Alignas(8) char buf[TRACED_MSG_MAX];
	uint64_t deadline = deadline_in(seconds);
	size_t len = ctl_request(buf, argc, argv);
	int *socks, i, asked = 0, closed = 0, small = 1;

	if (len == 0 || n < 1)
		return 2;
	if ((socks = calloc((size_t)n, sizeof(*socks))) == NULL)
		return 1;
	for (i = 0; i < n; i++) {
		while ((socks[i] = h_connect_to(ctl_path, 1)) == -1 &&
		    errno == EAGAIN && now_ns() < deadline)
			sleep_ms(1);
		if (socks[i] == -1)
			continue;
		(void)setsockopt(socks[i], SOL_SOCKET, SO_RCVBUF, &small,
		    sizeof(small));
		if (h_sendv_until(socks[i], buf, len, NULL, 0, deadline) == 0)
			asked++;
	}
	while (now_ns() < deadline)
		sleep_ms(50);
	for (i = 0; i < n; i++) {
		if (socks[i] == -1)
			continue;
		closed += h_hup(socks[i]);
		close(socks[i]);
	}
	printf("ctl-noread: %d of %d connections asked for '%s...' and never "
	    "read; %d closed by the daemon after %.1f s\n", asked, n, argv[0],
	    closed, seconds);
	free(socks);
	return 0;
}

/*
 * ctl-idle SECONDS: a control connection that never sends a request.
 * Says when the daemon closed it, if it did within SECONDS.
 */
static int
cmd_ctl_idle(double seconds)
{
	uint64_t t0 = now_ns(), deadline = deadline_in(seconds);
	int sock;

	while ((sock = h_connect_to(ctl_path, 1)) == -1 && errno == EAGAIN &&
	    now_ns() < deadline)
		sleep_ms(1);
	if (sock == -1) {
		printf("ctl-idle: cannot connect: %s\n", strerror(errno));
		return 1;
	}
	while (!h_hup(sock) && now_ns() < deadline)
		sleep_ms(20);
	if (h_hup(sock))
		printf("ctl-idle: closed by the daemon after %.1f s\n",
		    (double)(now_ns() - t0) / 1e9);
	else
		printf("ctl-idle: still open after %.1f s\n", seconds);
	close(sock);
	return 0;
}

/*
 * hello-comm COMM SECONDS: a session whose HELLO says COMM, with our
 * provider, held for SECONDS.
 */
static int
cmd_hello_comm(const char *comm, double seconds)
{
	uint64_t deadline = deadline_in(seconds);
	int sock;

	hello_comm = comm;
	if ((sock = h_provider_session()) == -1) {
		printf("hello-comm: no session\n");
		return 0;
	}
	printf("hello-comm: pid %d connected, saying it is '%s'\n",
	    (int)getpid(), comm);
	fflush(stdout);
	while (!h_hup(sock) && now_ns() < deadline)
		sleep_ms(50);
	close(sock);
	return 0;
}

/*
 * log-flood SECONDS: as many bad messages as the daemon takes, each on
 * a connection of its own (every one is refused and disconnected), for
 * SECONDS: garbage, a HELLO of another version, an unknown type, a
 * notify for a ring never registered.
 */
static int
cmd_log_flood(double seconds)
{
	uint64_t deadline = deadline_in(seconds), x = now_ns() | 1;
	_Alignas(8) char buf[64];
	struct traced_msg_hello m;
	unsigned long sent = 0;
	int fd, i, kind = 0;

	while (now_ns() < deadline) {
		kind = (kind + 1) % 4;
		if (kind == 3) {
			if ((fd = h_session()) != -1) {
				notify(fd, 7);
				sent++;
				close(fd);
			}
			continue;
		}
		if ((fd = h_connect(1)) == -1) {
			sleep_ms(1);
			continue;
		}
		hello_init(&m);
		if (kind == 0) {
			for (i = 0; i < (int)sizeof(buf); i++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				buf[i] = (char)x;
			}
			(void)send(fd, buf, sizeof(buf), MSG_NOSIGNAL |
			    MSG_DONTWAIT);
		} else {
			if (kind == 1)
				m.version = TRACED_PROTOCOL_VERSION + 7;
			else
				m.hdr.type = 77;
			(void)send(fd, &m, sizeof(m), MSG_NOSIGNAL |
			    MSG_DONTWAIT);
		}
		sent++;
		close(fd);
	}
	printf("log-flood: %lu bad messages in %.1f s\n", sent, seconds);
	return 0;
}

/* ---- (g) hostile but valid names, formats and strings (issue 9) ---- */

/*
 * A session whose provider and events are odd but valid: the daemon
 * may accept them, and then every reader must read them.  Each variant
 * is a session of its own, with one ring and 'nev' events written of
 * each of its event kinds, drained before it closes.
 *
 *   prov-bytes     provider name with quotes, backslashes, control
 *                  and non-UTF-8 bytes
 *   reserved-args  argument names that are TSDL keywords, or that
 *                  show like another once a '_' is taken off
 *   long-names     event and argument names of the longest length
 *   formats        format strings with UTF-8, escapes, %n, 1000 bytes
 *   dup-names      two providers of the same name and events
 *   strings        a string argument of every byte, 4095 bytes long
 *   many-classes   two providers of 65,536 events each
 */
static const char *const odd_variants[] = {
	"prov-bytes", "reserved-args", "long-names", "formats", "dup-names",
	"strings", "many-classes",
};

static const char *const tsdl_words[] = {
	"integer", "string", "event", "stream", "trace", "align", "size",
	"map", "base", "encoding", "typealias", "variant", "floating_point",
	"clock", "env", "callsite", "fields", "context", "header", "id",
	"name", "packet", "timestamp", "byte_order", "_integer", "_string",
	"_event", "_id", "id_1", "_id_1", "exp_dig", "mant_dig",
};

/* Append to a growing text; the caller checks t != NULL at the end. */
static void
txt_add(char **t, size_t *len, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*t == NULL)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(*t + *len, *cap - *len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < *cap - *len) {
			*len += (size_t)n;
			return;
		}
		*cap *= 2;
		if ((*t = realloc(*t, *cap)) == NULL)
			return;
	}
}

/*
 * Register a provider from 'text' (nevents events) as number 'index'
 * with ids from 'id_base'.  1 if the daemon acked it, 0 if it refused
 * it or closed the connection.
 */
static int
odd_provider(int sock, const char *name, const char *text, uint32_t nevents,
    uint32_t index, uint32_t id_base)
{
	struct traced_msg_provider m;
	struct acks a = { 0, 0, 0, 0 };
	size_t len = strlen(text);
	int fds[2], rc;

	fds[0] = memfd_with(text, len, len, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_WRITE);
	fds[1] = state_memfd(nevents);
	memset(&m, 0, sizeof(m));
	m.hdr.type = TRACED_MSG_PROVIDER;
	m.hdr.size = sizeof(m);
	m.index = index;
	m.id_base = id_base;
	m.nevents = nevents;
	m.desc_size = (uint32_t)len;
	memcpy(m.name, name, strnlen(name, sizeof(m.name) - 1));
	rc = fds[0] != -1 && fds[1] != -1 &&
	    h_sendv(sock, &m, sizeof(m), fds, 2, 0) == 0;
	if (fds[0] != -1)
		close(fds[0]);
	if (fds[1] != -1)
		close(fds[1]);
	if (!rc)
		return 0;
	acks_read(sock, &a, 5000);
	return a.ok == 1;
}

/*
 * One record of event 'id': 'nint' uint64_t arguments, then, if 'str'
 * is not NULL, a string.  Waits for room in the ring first.
 */
static int
odd_record(int sock, struct hring *r, uint32_t id, unsigned nint,
    const char *str)
{
	uint8_t payload[TRACED_REC_MAX];
	size_t plen = 0, slen;
	uint64_t v;
	unsigned i;

	for (i = 0; i < nint; i++) {
		v = 1000 + i;
		memcpy(payload + plen, &v, 8);
		plen += 8;
	}
	if (str != NULL) {
		slen = strlen(str) + 1;
		memcpy(payload + plen, str, slen);
		plen += (slen + 7) & ~(size_t)7;
	}
	if (r->head + 16 + plen - __atomic_load_n(&r->h->tail,
	    __ATOMIC_ACQUIRE) > r->size) {
		ring_publish(r);
		notify(sock, r->index);
		if (!ring_wait_tail(r, r->head, 3000))
			return -1;
	}
	rec_put(r, id, (uint32_t)(16 + plen), now_ts(), payload, plen);
	return 0;
}

static int
cmd_odd(const char *variant, unsigned nev)
{
	char *t = malloc(4096), name[TRACED_NAME_MAX], fmt[1100], *s;
	size_t len = 0, cap = 4096;
	uint32_t nevents = 1, nprov = 1, p, k, nint = 1;
	unsigned i, e, written = 0;
	int sock, ok = 1, use_str = 0;
	struct hring r;
	char ename[TEVENTS_NAME_MAX + 1];

	snprintf(name, sizeof(name), "odd");
	if (t == NULL)
		return 1;
	t[0] = '\0';
	if (strcmp(variant, "prov-bytes") == 0) {
		snprintf(name, sizeof(name), "odd\"\\\001\033[2J\377\376"
		    "\303(x y:z");
		txt_add(&t, &len, &cap, "e(uint64_t a) \"a %%\" PRIu64\n");
	} else if (strcmp(variant, "reserved-args") == 0) {
		nint = sizeof(tsdl_words) / sizeof(tsdl_words[0]);
		txt_add(&t, &len, &cap, "e(");
		for (i = 0; i < nint; i++)
			txt_add(&t, &len, &cap, "%suint64_t %s", i ? ", " : "",
			    tsdl_words[i]);
		txt_add(&t, &len, &cap, ") \"x\"\n");
	} else if (strcmp(variant, "long-names") == 0) {
		nint = TEVENTS_ARGS_MAX;
		memset(ename, 'n', TEVENTS_NAME_MAX);
		ename[TEVENTS_NAME_MAX] = '\0';
		txt_add(&t, &len, &cap, "%s(", ename);
		for (i = 0; i < nint; i++) {
			snprintf(ename + TEVENTS_NAME_MAX - 3, 4, "%03u", i);
			ename[0] = 'a';
			txt_add(&t, &len, &cap, "%suint64_t %s", i ? ", " : "",
			    ename);
		}
		txt_add(&t, &len, &cap, ") \"long\"\n");
		memset(name, 'p', sizeof(name) - 1);
		name[sizeof(name) - 1] = '\0';
	} else if (strcmp(variant, "formats") == 0) {
		nevents = 3;
		txt_add(&t, &len, &cap, "e0(uint64_t a) \"%%n%%s%%p \\\" "
		    "\\\\ \\t \303\251 \360\237\230\200 %%%%\" PRIx64 "
		    "\"more\"\n");
		txt_add(&t, &len, &cap, "e1(uint64_t a) \"\\x41\\101\\n"
		    "\\0 */ /* \\\\\" PRIu64\n");
		memset(fmt, 'f', 1000);
		memcpy(fmt, "%n\303\251", 4);
		fmt[1000] = '\0';
		txt_add(&t, &len, &cap, "e2(uint64_t a) \"%s\"\n", fmt);
	} else if (strcmp(variant, "dup-names") == 0) {
		nprov = 2;
		nevents = 2;
		txt_add(&t, &len, &cap, "e(uint64_t a) \"a\"\n"
		    "e_(uint64_t a) \"b\"\n");
	} else if (strcmp(variant, "strings") == 0) {
		nint = 0;
		use_str = 1;
		txt_add(&t, &len, &cap, "e(const char *s) \"%%s\"\n");
	} else if (strcmp(variant, "many-classes") == 0) {
		nprov = 2;
		nevents = TRACED_PROVIDER_EVENTS_MAX;
		for (k = 0; k < nevents; k++)
			txt_add(&t, &len, &cap, "e%u(uint64_t a) \"x\"\n", k);
	} else {
		fprintf(stderr, "hostile: odd-names: no variant %s\n", variant);
		free(t);
		return 2;
	}
	if (t == NULL)
		return 1;
	if ((sock = h_session()) == -1) {
		printf("odd-names %s: no session\n", variant);
		free(t);
		return 0;
	}
	for (p = 0; p < nprov && ok; p++)
		ok = odd_provider(sock, name, t, nevents, p,
		    TRACED_EVENT_ID_BASE + p * nevents);
	free(t);
	if (!ok) {
		printf("odd-names %s: refused (provider %u)\n", variant, p - 1);
		close(sock);
		return 0;
	}
	if (ring_make(&r, 0, 20, F_SEAL_SHRINK | F_SEAL_GROW) == -1 ||
	    ring_send_fd(sock, &r, r.fd) == -1) {
		perror("hostile: odd-names: ring");
		close(sock);
		return 1;
	}
	s = malloc(TRACED_STR_MAX + 1);
	if (s == NULL)
		return 1;
	/* Every byte but NUL, then 'z' to the longest string. */
	for (i = 0; i < TRACED_STR_MAX; i++)
		s[i] = i < 255 ? (char)(i + 1) : 'z';
	s[TRACED_STR_MAX] = '\0';
	for (e = 0; e < nev && ok; e++)
		for (p = 0; p < nprov && ok; p++)
			for (k = 0; k < (nevents < 4 ? nevents : 4); k++) {
				if (odd_record(sock, &r, TRACED_EVENT_ID_BASE +
				    p * nevents + k, nint, use_str ? s :
				    NULL) == -1) {
					ok = 0;
					break;
				}
				written++;
			}
	free(s);
	ring_publish(&r);
	notify(sock, r.index);
	ok = ok && ring_wait_tail(&r, r.head, 5000);
	printf("odd-names %s: accepted; %u events written, %s (pid %d)\n",
	    variant, written, ok ? "all drained" : "NOT all drained",
	    (int)getpid());
	ring_unmake(&r);
	close(sock);
	return 0;
}

/* A ring record stamped near the end of time. */
static void
case_ring_ts_future(const char *name)
{
	struct hring r;
	uint64_t bad, seq = 3;
	int sock = ring_session(&r, name);

	if (sock == -1)
		return;
	bad = r.head;
	rec_put(&r, ID_TICK, 24, 0xfffffffffffffff0ull, &seq, sizeof(seq));
	ring_publish(&r);
	ring_expect_refused(sock, &r, bad, name);
}

/* ---- the case table --------------------------------------------------- */

static const struct hcase {
	const char	*name;
	void		(*fn)(const char *);
	const char	*log;		/* what the daemon's log must say */
} cases[] = {
	{ "ring-good", case_ring_good, "" },
	{ "ring-no-provider", case_ring_no_provider, "unknown event id" },
	{ "ring-head-beyond", case_ring, "head beyond the ring" },
	{ "ring-head-back", case_ring, "head went backwards" },
	{ "ring-head-max", case_ring, "head beyond the ring" },
	{ "ring-huge-size", case_ring, "record size out of range" },
	{ "ring-tiny-size", case_ring, "record size out of range" },
	{ "ring-odd-size", case_ring, "record size out of range" },
	{ "ring-unknown-id", case_ring, "unknown event id" },
	{ "ring-thread-size", case_ring, "bad thread record" },
	{ "ring-thread-tid", case_ring, "bad thread id in a thread record" },
	{ "ring-thread-flood", case_ring_thread_flood,
	    "are kept together, as thread 0" },
	{ "ring-reserved-id", case_ring, "unknown event id" },
	{ "ring-past-head", case_ring, "record runs past the committed head" },
	{ "ring-ts-back", case_ring, "timestamp going backwards" },
	{ "ring-no-nul", case_ring, "string argument without its end" },
	{ "ring-str-short", case_ring, "record shorter than its event" },
	{ "ring-size-mismatch", case_ring,
	    "record size does not match its event" },
	{ "ring-bad-lost", case_ring, "loss record does not add up" },
	{ "ring-lost-size", case_ring, "bad loss record" },
	{ "ring-zeros", case_ring, "record size out of range" },
	{ "ring-pad-misplaced", case_ring, "bad padding record" },
	{ "ring-cross-lap", case_ring, "record runs past the end of the ring" },
	{ "ring-order-back", case_ring_order, "ring size went back" },
	{ "ring-order-beyond", case_ring_order, "ring size beyond its memory" },
	{ "ring-scribble", case_ring_scribble, "ring refused at position" },
	{ "ring-tail-odd", case_ring_tail, "tail off a record boundary" },
	{ "ring-bad-magic", case_ring_header, "bad header" },
	{ "ring-bad-version", case_ring_header, "bad header" },
	{ "ring-bad-order", case_ring_header, "bad header" },
	{ "msg-pre-truncated", case_msg, "truncated message" },
	{ "msg-pre-empty", case_msg, "" },
	{ "msg-pre-size-field", case_msg,
	    "size field does not match the message" },
	{ "msg-pre-oversized", case_msg, "message too large" },
	/* Within TRACED_MSG_MAX (MODULE carries a path): the wrong size. */
	{ "msg-pre-long", case_msg, "wrong size for the message type" },
	{ "msg-pre-type", case_msg, "unknown message type" },
	{ "msg-pre-type-zero", case_msg, "unknown message type" },
	{ "msg-pre-daemon-type", case_msg, "unexpected message type 32" },
	{ "msg-pre-version", case_msg, "protocol version mismatch" },
	{ "msg-pre-type-size", case_msg, "wrong size for the message type" },
	{ "msg-pre-comm", case_msg, "bad comm string" },
	{ "msg-pre-comm-ctl", case_msg, "bad comm string" },
	{ "msg-pre-flags", case_msg, "unknown flags" },
	{ "msg-pre-garbage", case_msg, "disconnecting it" },
	{ "msg-pre-ring", case_msg, "announced twice" },
	{ "msg-pre-notify", case_msg, "notify for unknown ring 0" },
	{ "msg-second-hello", case_msg, "second HELLO" },
	{ "msg-notify-unknown", case_msg, "notify for unknown ring 7" },
	{ "msg-notify-fd", case_msg, "unexpected descriptor" },
	{ "msg-ring-no-fd", case_msg, "missing descriptor" },
	{ "msg-ring-many-fds", case_msg, "message too large" },
	{ "msg-ring-two-cmsgs", case_msg, "descriptor" },
	{ "msg-ring-twice", case_msg, "ring 0 announced twice" },
	{ "msg-ring-order", case_msg, "ring size out of range" },
	{ "msg-provider-order", case_msg, "out of order: number 0," },
	{ "msg-provider-ids-back", case_msg, "out of order: number 1, event ids from 17;" },
	{ "msg-provider-bad-text", case_msg, "bad provider description" },
	{ "msg-provider-count", case_msg, "announces 3 events and describes 2" },
	{ "msg-provider-unsealed", case_msg, "not sealed" },
	{ "msg-provider-size", case_msg, "memfd smaller than announced" },
	{ "msg-provider-zeros", case_msg, "bad provider description" },
	{ "msg-notify-flood", case_msg, "" },
	{ "msg-module-order", case_msg, "module 0 out of order" },
	{ "msg-funcs-unannounced", case_msg, "which did not announce them" },
	{ "msg-funcs-bad-table", case_msg, "bad function table" },
	{ "msg-funcs-count", case_msg, "2 functions, 3 announced" },
	{ "fd-pipe", case_fd, "not a memfd" },
	{ "fd-socket", case_fd, "not a memfd" },
	{ "fd-eventfd", case_fd, "not a memfd" },
	{ "fd-devnull", case_fd, "not a memfd" },
	{ "fd-dir", case_fd, "not a memfd" },
	{ "fd-file", case_fd, "ring 0: " },
	{ "fd-unsealed", case_fd, "memfd not sealed against shrinking" },
	{ "fd-no-sealing", case_fd, "memfd not sealed against shrinking" },
	{ "fd-small", case_fd, "memfd smaller than announced" },
	{ "fd-readonly", case_fd, "mapping ring 0" },
	{ "fd-write-sealed", case_fd, "mapping ring 0" },
	{ "state-written", case_state, "" },
	{ "state-missing", case_state, "missing descriptor" },
	{ "state-pipe", case_state, "state array: not a memfd" },
	{ "state-unsealed", case_state,
	    "state array: memfd not sealed against shrinking" },
	{ "state-small", case_state,
	    "state array: memfd smaller than announced" },
	{ "state-write-sealed", case_state,
	    "cannot map its state array writable" },
	{ "state-readonly", case_state, "cannot map its state array writable" },
	{ "state-is-desc", case_state, "cannot map its state array writable" },
	/* No log line required: not every kernel makes hugetlbfs memfds. */
	{ "state-hugetlb", case_state, "" },
	{ "rules-good", case_rules, "" },
	{ "rules-before-hello", case_rules, "RULES before HELLO" },
	{ "rules-bad-rule", case_rules,
	    "process rules: table names an unknown rule" },
	{ "rules-unsealed", case_rules,
	    "process rules: memfd not sealed against writing" },
	{ "rules-late-size", case_rules,
	    "process rules: a table's size is not its provider's" },
	{ "rules-early-size", case_rules,
	    "rules were sent for a provider of another size" },
	{ "shrink-sealed", case_shrink, "" },
	{ "reset-after-fd", case_reset, "" },
};

/*
 * Cases of issue 9, which 'hostile -l' does not list (092 runs every
 * listed case): run by name.
 */
static const struct hcase cases9[] = {
	{ "ring-ts-future", case_ring_ts_future, "" },
};

static int
run_case(const struct hcase *c, size_t n, const char *name)
{
	size_t i;
	int found = 0;

	for (i = 0; i < n; i++) {
		if (strcmp(name, c[i].name) == 0) {
			c[i].fn(c[i].name);
			found = 1;
		}
	}
	return found;
}

#define NCASES(c)	(sizeof(c) / sizeof((c)[0]))

/* The commands of issue 9: 1 if argv named one, its status in *rc. */
static int
run_command(int argc, char *argv[], int *rc)
{
	const char *c = argv[1];
	size_t i;

	if (strcmp(c, "providers") == 0 && (argc == 5 || (argc == 6 &&
	    strcmp(argv[5], "answered") == 0)))
		*rc = cmd_providers((uint32_t)atoi(argv[2]),
		    (uint32_t)atoi(argv[3]), atof(argv[4]), argc == 6);
	else if (strcmp(c, "event-id") == 0 && argc == 3)
		*rc = cmd_event_id(atof(argv[2]));
	else if (strcmp(c, "rings") == 0 && argc == 5)
		*rc = cmd_rings(atoi(argv[2]), (uint32_t)atoi(argv[3]),
		    atof(argv[4]));
	else if (strcmp(c, "churn") == 0 && argc == 4)
		*rc = cmd_churn(atof(argv[2]), atof(argv[3]));
	else if (strcmp(c, "ctl-noread") == 0 && argc >= 5)
		*rc = cmd_ctl_noread(atoi(argv[2]), atof(argv[3]), argc - 4,
		    argv + 4);
	else if (strcmp(c, "ctl-idle") == 0 && argc == 3)
		*rc = cmd_ctl_idle(atof(argv[2]));
	else if (strcmp(c, "hello-comm") == 0 && argc == 4)
		*rc = cmd_hello_comm(argv[2], atof(argv[3]));
	else if (strcmp(c, "log-flood") == 0 && argc == 3)
		*rc = cmd_log_flood(atof(argv[2]));
	else if (strcmp(c, "odd-names") == 0 && argc >= 3) {
		*rc = 0;
		for (i = 0; i < NCASES(odd_variants); i++)
			if (argc == 3 || strcmp(argv[3], odd_variants[i]) == 0)
				*rc |= cmd_odd(odd_variants[i],
				    (unsigned)atoi(argv[2]));
	} else
		return 0;
	return 1;
}

int
main(int argc, char *argv[])
{
	const char *dir = getenv("TRACED_RUNTIME_DIR");
	size_t i;
	int a, found, rc;

	signal(SIGPIPE, SIG_IGN);
	use_tsc = traced_clock_use_tsc();
	if (argc > 1 && strcmp(argv[1], "-l") == 0) {
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			printf("%s\t%s\n", cases[i].name, cases[i].log);
		return 0;
	}
	if (dir == NULL || (size_t)snprintf(sock_path, sizeof(sock_path),
	    "%s/%s", dir, TRACED_CLIENT_SOCK) >= sizeof(sock_path)) {
		fprintf(stderr, "hostile: set TRACED_RUNTIME_DIR\n");
		return 2;
	}
	if ((size_t)snprintf(ctl_path, sizeof(ctl_path), "%s/%s", dir,
	    TRACED_CONTROL_SOCK) >= sizeof(ctl_path)) {
		fprintf(stderr, "hostile: TRACED_RUNTIME_DIR too long\n");
		return 2;
	}
	if (argc >= 4 && strcmp(argv[1], "flood") == 0)
		return flood(atoi(argv[2]), atof(argv[3]),
		    argc > 4 && strcmp(argv[4], "hello") == 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && run_command(argc, argv, &rc))
		return rc;
	for (a = 1; a < argc; a++) {
		found = run_case(cases, NCASES(cases), argv[a]) ||
		    run_case(cases9, NCASES(cases9), argv[a]);
		if (!found) {
			fprintf(stderr, "hostile: no case %s (hostile -l)\n",
			    argv[a]);
			return 2;
		}
	}
	return failed;
}
