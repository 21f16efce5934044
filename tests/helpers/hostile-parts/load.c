/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The hostile helper's commands of one client against everyone (f),
 * each doing its worst until a deadline, and its sessions with odd but
 * valid names, formats and strings (g); run_command() runs them by
 * name.
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
#include "hostile.h"
#include "ring.h"
#include "tevents.h"
#include "wire.h"

/* ---- (f) one client against everyone (issue 9) ---------------------- */

/*
 * The timed commands below each do their worst until a deadline, then
 * print one line of what the daemon did from their side (refused,
 * closed the connection, drained), and exit 0: what the daemon must do
 * meanwhile for everyone else is for the test script to check.
 */

uint64_t
deadline_in(double seconds)
{
	return now_ns() + (uint64_t)(seconds * 1e9);
}

/*
 * Send until it goes through or 'deadline' passes (a daemon that does
 * not read fills the socket).  0, or -1 when the daemon closed the
 * connection or the deadline passed.
 */
int
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
int
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
 * The number of a session's ring k when they are spread: each just
 * within 1,024 past the last, so that an array of rings by number
 * doubles with each (issue 25, finding 4: 11 rings took it to 2^20
 * entries).
 */
static uint32_t
spread_index(uint32_t k)
{
	uint64_t n = 1, i = 0;

	while (k-- > 0 && n < (UINT64_C(1) << 31)) {
		i = n + 1023;
		n = i + 1 > 2 * n ? i + 1 : 2 * n;
	}
	return (uint32_t)i;
}

/*
 * rings NSESS NRINGS SECONDS [spread]: NSESS sessions register NRINGS
 * rings each (the smallest size, every one with a thread id of its
 * own), numbered 0, 1, 2... or spread (spread_index()), and hold them
 * until SECONDS have passed; a session the daemon closes is opened
 * again and filled again, as a patient attacker would.
 */
static int
cmd_rings(int nsess, uint32_t nrings, double seconds, int spread)
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
			m.index = spread ? spread_index(held[s]) : held[s];
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
void
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

#define NCASES(c)	(sizeof(c) / sizeof((c)[0]))

/* The commands of issue 9: 1 if argv named one, its status in *rc. */
int
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
	else if (strcmp(c, "rings") == 0 && (argc == 5 || (argc == 6 &&
	    strcmp(argv[5], "spread") == 0)))
		*rc = cmd_rings(atoi(argv[2]), (uint32_t)atoi(argv[3]),
		    atof(argv[4]), argc == 6);
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
		return funcs_command(argc, argv, rc);
	return 1;
}
