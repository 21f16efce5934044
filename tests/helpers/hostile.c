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
#include "ring.h"
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

/* A ring as its producer sees it, mapped twice like libtraced does. */
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

static int
h_connect(int nonblock)
{
	struct sockaddr_un sun;
	int fd;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC |
	    (nonblock ? SOCK_NONBLOCK : 0), 0);
	if (fd == -1)
		return -1;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, sock_path, sizeof(sun.sun_path));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 &&
	    !(nonblock && errno == EINPROGRESS)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send len bytes with nfds descriptors (several cmsgs if 'split'). */
static int
h_sendv(int sock, const void *msg, size_t len, const int *fds, int nfds,
    int split)
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
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
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
	snprintf(m->comm, sizeof(m->comm), "hostile");
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
	r->base = mmap(NULL, file_len + size, PROT_NONE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->base == MAP_FAILED ||
	    mmap(r->base, file_len, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_FIXED, r->fd, 0) == MAP_FAILED ||
	    mmap(r->base + file_len, size, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_FIXED, r->fd, TRACED_RING_HDR_SIZE) ==
	    MAP_FAILED) {
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
	r->h->order = order;
	r->h->tid = (uint32_t)gettid();
	return 0;
}

static void
ring_unmake(struct hring *r)
{
	munmap(r->base, TRACED_RING_HDR_SIZE + 2 * r->size);
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
	m.order = r->order;
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

/* Write a record at head: header, 'plen' payload bytes, zeros to 'size'. */
static void
rec_put(struct hring *r, uint32_t id, uint32_t size, uint64_t ts,
    const void *payload, size_t plen)
{
	struct traced_rec_hdr h = { id, size, ts };
	uint8_t *p = r->data + (r->head & (r->size - 1));
	size_t n = size < TRACED_REC_MAX ? size : 64;

	memset(p, 0, n);
	memcpy(p, &h, sizeof(h));
	if (plen > 0)
		memcpy(p + sizeof(h), payload, plen);
	r->head += size;
	r->ts = ts;
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
		if (r.head + 64 - __atomic_load_n(&r.h->tail,
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
		rm->order = ORDER;
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
		rm.order = ORDER;
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
		rm.order = 40;
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
			munmap(r.base, TRACED_RING_HDR_SIZE + 2 * r.size);
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
	munmap(r.base, TRACED_RING_HDR_SIZE + 2 * r.size);
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
	{ "ring-scribble", case_ring_scribble, "ring refused at position" },
	{ "ring-bad-magic", case_ring_header, "bad header" },
	{ "ring-bad-version", case_ring_header, "bad header" },
	{ "ring-bad-order", case_ring_header, "bad header" },
	{ "msg-pre-truncated", case_msg, "truncated message" },
	{ "msg-pre-empty", case_msg, "" },
	{ "msg-pre-size-field", case_msg,
	    "size field does not match the message" },
	{ "msg-pre-oversized", case_msg, "message too large" },
	{ "msg-pre-long", case_msg, "message too large" },
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
	{ "shrink-sealed", case_shrink, "" },
	{ "reset-after-fd", case_reset, "" },
};

int
main(int argc, char *argv[])
{
	const char *dir = getenv("TRACED_RUNTIME_DIR");
	size_t i;
	int a, found;

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
	if (argc >= 4 && strcmp(argv[1], "flood") == 0)
		return flood(atoi(argv[2]), atof(argv[3]),
		    argc > 4 && strcmp(argv[4], "hello") == 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (a = 1; a < argc; a++) {
		found = 0;
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			if (strcmp(argv[a], cases[i].name) == 0) {
				cases[i].fn(cases[i].name);
				found = 1;
			}
		}
		if (!found) {
			fprintf(stderr, "hostile: no case %s (hostile -l)\n",
			    argv[a]);
			return 2;
		}
	}
	return failed;
}
