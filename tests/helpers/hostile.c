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
 *   hostile rings NSESS NRINGS SECONDS [spread]
 *                          NSESS sessions of NRINGS rings each
 *                          (numbered to double an array by number
 *                          with each)
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
#include "hostile-parts/hostile.h"
#include "ring.h"
#include "tevents.h"
#include "wire.h"

const char desc[] =
	"hostile_tick(uint64_t seq) \"tick %\" PRIu64\n"
	"hostile_str(const char *s, uint64_t n) \"%s %\" PRIu64\n";
const size_t desc_len = sizeof(desc) - 1;

char sock_path[HOSTILE_PATH_MAX];
int failed;
int use_tsc;		/* timestamps: rdtsc, as libtraced would */
char ctl_path[HOSTILE_PATH_MAX];	/* control.sock */
const char *hello_comm = "hostile";	/* what HELLO says */

/* Returns ok; a failed check fails the whole run. */
int
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

uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A record timestamp in the clock HELLO announced. */
uint64_t
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

void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* ---- the socket ------------------------------------------------------ */

/* Connect to the socket at 'path' (a sun_path-sized buffer). */
int
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
int
h_connect(int nonblock)
{
	return h_connect_to(sock_path, nonblock);
}

/*
 * Send len bytes with nfds descriptors (several cmsgs if 'split'), with
 * these sendmsg() flags besides MSG_NOSIGNAL.
 */
int
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
int
h_sendv(int sock, const void *msg, size_t len, const int *fds, int nfds,
    int split)
{
	return h_sendmsg(sock, msg, len, fds, nfds, split, 0);
}

int
h_send(int sock, const void *msg, size_t len, int fd)
{
	return h_sendv(sock, msg, len, &fd, fd == -1 ? 0 : 1, 0);
}

/*
 * Receive one message of 'type' within 'ms', closing any descriptor it
 * carries unless fdp.  Returns its size, 0 if the daemon closed the
 * connection, -1 on timeout or another type.
 */
ssize_t
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
int
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

void
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
int
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
int
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
int
state_memfd(uint32_t nevents)
{
	return memfd_with(NULL, 0, ((size_t)nevents + 4095) / 4096 * 4096,
	    F_SEAL_SHRINK | F_SEAL_GROW);
}

/*
 * Send a PROVIDER with its description fd and a state fd: a good one if
 * state_fd is -1 (closed here), else the caller's (closed by it).
 */
int
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

int
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
int
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

int
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

int
h_provider_session(void)
{
	_Alignas(8) char buf[256];
	int sock = h_session();

	if (sock == -1)
		return -1;
	if (provider_send(sock, desc, desc_len, 2, 0,
	    TRACED_EVENT_ID_BASE, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL,
	    desc_len) == -1 ||
	    h_recv(sock, TRACED_MSG_PROVIDER_ACK, buf, sizeof(buf), NULL,
	    3000) != sizeof(struct traced_msg_provider_ack)) {
		close(sock);
		return -1;
	}
	return sock;
}

/* ---- rings ------------------------------------------------------------ */

int
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

void
ring_unmake(struct hring *r)
{
	munmap(r->base, TRACED_RING_HDR_SIZE + r->size);
	close(r->fd);
}

int
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

int
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
void
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
void
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

void
put_tick(struct hring *r, uint64_t seq)
{
	rec_put(r, ID_TICK, 24, now_ts(), &seq, sizeof(seq));
}

void
ring_publish(struct hring *r)
{
	__atomic_store_n(&r->h->head, r->head, __ATOMIC_RELEASE);
}

/* Wait until the daemon's tail reaches 'pos'; 1 if it did within ms. */
int
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
int
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
void
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
	{ "ring-order-race", case_ring_order_race, "" },
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
	{ "msg-module-odd-path", case_msg, "" },
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
