/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of daemon/control.c (the bytes on control.sock) and
 * daemon/reply.c (the replies handlers build), as a user of tracectl
 * would see them: what comes back on the socket, in which order, with
 * which status and end line, and when the daemon closes it.
 *
 * The two files run for real on a real libevent base, behind a real
 * listening AF_UNIX SOCK_SEQPACKET socket in a scratch directory; the
 * test is the client, on non-blocking sockets, and decodes every
 * message with wire_decode() as tracectl does.  Beneath them run the
 * small real services they use (limits.c with cfg from config.c,
 * sock.c's accept, log.c, dclock.c); above them, in place of cmd.c and
 * the handlers, cmd_exec() below plays a handler named by the request's
 * first word: it writes lines, JSON items or an error, floods its reply
 * or waits on a predicate.
 *
 * The loop turns with EVLOOP_ONCE and a 5 ms tick, so that a turn never
 * blocks for long; every wait is for something to happen, bounded by a
 * deadline that fails the test, never a fixed sleep.  Only the
 * control-timeout cases wait for real (cfg says 1 s: the setting's
 * unit is the second).
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <linux/sockios.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>
#include <jansson.h>

#include "daemon/cmd.h"
#include "daemon/config.h"
#include "daemon/limits.h"
#include "daemon/log.h"
#include "wire.h"

#define T_WAIT_MS	5000	/* the most anything here may take */
#define T_TICK_US	5000	/* the longest one loop turn blocks */
#define T_CLIENTS	8
#define T_LINES		32	/* lines of a reply kept for checks */
#define T_LINE_MAX	256

/* The loop, control.sock and the test's client ends. */
static struct {
	struct event_base *base;
	struct event	*tick;
	int		 lfd;
	char		 dir[64];
	char		 path[96];	/* dir/control.sock */
	int		 cfd[T_CLIENTS]; /* -1: closed */
	int		 resets;	/* ECONNRESET before the data */
} t;

/* What the fake handlers and predicate saw and are told. */
static struct {
	int		 calls;		/* cmd_exec() */
	int		 short_cut;	/* 'short': reply_cut() after NULL */
	int		 argc;
	char		 argv0[64];
	uid_t		 uid;
	int		 json;		/* reply_json() of the last request */
	int		 flood_lines;	/* reply_line() calls by "flood" */
	int		 flood_cut;	/* reply_cut() turned true */
	uint64_t	 held_max;	/* most output charged meanwhile */
	int		 asked;		/* predicate asked with a reply */
	int		 timed_out;	/* of which with timed_out 1 */
	int		 gone;		/* asked with r NULL */
	int		 done;		/* the predicate says done if set */
} f;

/* What a waiting handler holds: freed by its predicate, and only so. */
struct t_wait {
	int		 magic;
};
#define T_WAIT_MAGIC	0x57a17

/*
 * The predicate of "wait": done when f.done is set (it then writes a
 * line and its end), or when it times out (an error).  It frees its
 * argument whenever it says done, and when its connection is gone.
 */
static int
t_wait_cb(struct reply *r, void *arg, int timed_out)
{
	struct t_wait *w = arg;

	assert_int_equal(w->magic, T_WAIT_MAGIC);
	if (r == NULL) {
		f.gone++;
		free(w);
		return 1;
	}
	f.asked++;
	if (timed_out)
		f.timed_out++;
	else if (!f.done)
		return 0;
	if (timed_out)
		reply_error(r, "gave up waiting");
	else {
		reply_line(r, "it happened");
		reply_message(r, "waited");
	}
	free(w);
	return 1;
}

/*
 * In place of cmd.c: the first word names what to play.
 *   lines N		N lines "line I", end "N lines", ok
 *   status S MSG	one line, then reply_error(MSG), and returns S
 *   json		two items with --json, one line without
 *   flood		100-byte lines until the reply is cut
 *   short		one item, one that memory could not hold (NULL),
 *			then a line and an item; "all there", ok
 *   wait MS		reply_wait() on t_wait_cb, timeout MS (0: none)
 */
int
cmd_exec(struct reply *r, int argc, char **argv, uid_t uid, gid_t gid,
    const gid_t *groups, int ngroups)
{
	(void)gid;
	(void)groups;
	(void)ngroups;
	f.calls++;
	f.argc = argc;
	snprintf(f.argv0, sizeof(f.argv0), "%s", argv[0]);
	f.uid = uid;
	f.json = reply_json(r);
	if (strcmp(argv[0], "lines") == 0 && argc == 2) {
		int i, n = atoi(argv[1]);

		for (i = 0; i < n; i++)
			reply_line(r, "line %d", i);
		reply_message(r, "%d lines", n);
		return TRACED_CTL_OK;
	}
	if (strcmp(argv[0], "status") == 0 && argc == 3) {
		reply_line(r, "before");
		reply_error(r, "%s", argv[2]);
		return atoi(argv[1]);
	}
	if (strcmp(argv[0], "json") == 0) {
		json_t *o;

		if (!reply_json(r)) {
			reply_line(r, "text mode");
			return TRACED_CTL_OK;
		}
		/* Client text that was never UTF-8: escaped, not lost. */
		o = json_object();
		json_object_set_new(o, "name", jstr("caf\xe9\xff"));
		json_object_set_new(o, "n", jnum(3));
		json_object_set_new(o, "ns", jns(123));
		json_object_set_new(o, "none", jns(0));
		reply_item(r, o);
		o = json_object();
		json_object_set_new(o, "text", jstr("say \"hi\"\t\\"));
		reply_item(r, o);
		reply_message(r, "2 items");
		return TRACED_CTL_OK;
	}
	if (strcmp(argv[0], "short") == 0) {
		json_t *o = json_object();

		json_object_set_new(o, "n", jnum(1));
		reply_item(r, o);
		reply_item(r, NULL);
		f.short_cut = reply_cut(r);
		reply_line(r, "after");
		reply_item(r, json_object());
		reply_message(r, "all there");
		return TRACED_CTL_OK;
	}
	if (strcmp(argv[0], "flood") == 0) {
		char pad[101];

		memset(pad, 'x', sizeof(pad) - 1);
		pad[sizeof(pad) - 1] = '\0';
		while (f.flood_lines < 10000 && !reply_cut(r)) {
			reply_line(r, "%s", pad);
			f.flood_lines++;
			if (limits_held(uid, LIMIT_CONTROL_OUTPUT) > f.held_max)
				f.held_max = limits_held(uid,
				    LIMIT_CONTROL_OUTPUT);
		}
		f.flood_cut = reply_cut(r);
		reply_message(r, "flooded");
		return TRACED_CTL_OK;
	}
	if (strcmp(argv[0], "wait") == 0 && argc == 2) {
		struct t_wait *w = malloc(sizeof(*w));

		assert_non_null(w);
		w->magic = T_WAIT_MAGIC;
		reply_wait(r, t_wait_cb, w, (unsigned)atoi(argv[1]));
		return TRACED_CTL_OK;
	}
	reply_error(r, "fake cmd_exec: no such play");
	return TRACED_CTL_USAGE;
}

/* ---- the loop and the client ------------------------------------- */

static int64_t
t_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Keeps EVLOOP_ONCE from blocking longer than a tick. */
static void
t_tick_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

/* One turn of the loop, unless the deadline has passed: then fail. */
static void
t_pump(int64_t deadline, const char *waiting_for)
{
	if (t_now_ms() > deadline)
		fail_msg("still waiting for %s after %d ms", waiting_for,
		    T_WAIT_MS);
	event_base_loop(t.base, EVLOOP_ONCE);
}

/* Turn the loop until *v reaches want. */
static void
t_pump_until(const int *v, int want, const char *what)
{
	int64_t deadline = t_now_ms() + T_WAIT_MS;

	while (*v < want)
		t_pump(deadline, what);
}

/* Turn the loop until uid holds n control connections. */
static void
t_pump_conns(uint64_t n)
{
	int64_t deadline = t_now_ms() + T_WAIT_MS;

	while (limits_held(geteuid(), LIMIT_CONTROL_CONNS) != n)
		t_pump(deadline, "the daemon to accept or close");
}

/* A new client connection to control.sock, not yet accepted. */
static int
t_connect(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, i;

	for (i = 0; i < T_CLIENTS && t.cfd[i] != -1; i++)
		;
	assert_true(i < T_CLIENTS);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	assert_true(fd >= 0);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", t.path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)),
	    0);
	t.cfd[i] = fd;
	return fd;
}

static void
t_close(int fd)
{
	int i;

	for (i = 0; i < T_CLIENTS; i++)
		if (t.cfd[i] == fd)
			t.cfd[i] = -1;
	close(fd);
}

/* Send raw bytes as one message. */
static void
t_send(int fd, const void *buf, size_t len)
{
	assert_int_equal(send(fd, buf, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* Send a CTL_REQUEST as tracectl does (a NULL-terminated word list). */
static void
t_request(int fd, uint32_t flags, ...)
{
	_Alignas(8) char buf[TRACED_MSG_MAX];
	char *argv[TRACED_CTL_ARGS_MAX];
	va_list ap;
	int argc = 0, len;

	va_start(ap, flags);
	while ((argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	len = wire_ctl_request_encode(buf, sizeof(buf), flags, argc, argv);
	assert_true(len > 0);
	t_send(fd, buf, (size_t)len);
}

/* One message from the daemon, checked as tracectl checks it. */
struct t_msg {
	uint32_t	 type;		/* CTL_LINE or CTL_END */
	uint32_t	 status;	/* CTL_END's */
	uint32_t	 count;
	size_t		 len;
	char		 text[TRACED_MSG_MAX + 1];	/* NUL-terminated */
};

/*
 * The next message on fd, waiting for it (the loop turns meanwhile).
 * Returns 1, or 0 at EOF: the daemon closed the connection.  A daemon
 * that closes with input unread (a second request) makes the kernel
 * report ECONNRESET once, ahead of the messages still queued: counted
 * in t.resets, and read past.
 */
static int
t_recv(int fd, struct t_msg *m)
{
	_Alignas(8) char buf[TRACED_MSG_MAX];
	int64_t deadline = t_now_ms() + T_WAIT_MS;
	struct wire_msg w;
	const char *why = NULL;
	ssize_t n;

	for (;;) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
		if (n == -1 && errno == ECONNRESET) {
			t.resets++;
			continue;
		}
		if (n >= 0 || (errno != EAGAIN && errno != EINTR))
			break;
		t_pump(deadline, "a message from the daemon");
	}
	if (n == 0)
		return 0;
	assert_true(n > 0);
	assert_true((size_t)n <= sizeof(buf));
	if (wire_decode(buf, (size_t)n, 0, &w, &why) != 0)
		fail_msg("malformed reply: %s", why != NULL ? why : "?");
	assert_true(w.type == TRACED_MSG_CTL_LINE ||
	    w.type == TRACED_MSG_CTL_END);
	m->type = w.type;
	m->status = m->count = 0;
	if (w.type == TRACED_MSG_CTL_END) {
		m->status = w.u.ctl_end->status;
		m->count = w.u.ctl_end->count;
	}
	m->len = w.payload_len;
	memcpy(m->text, w.payload, w.payload_len);
	m->text[w.payload_len] = '\0';
	return 1;
}

/* A whole reply: its lines, then its end. */
struct t_reply {
	int		 nlines;
	char		 line[T_LINES][T_LINE_MAX];	/* the first ones */
	uint32_t	 status;
	uint32_t	 count;		/* lines, by the daemon's count */
	char		 end[TRACED_MSG_MAX + 1];
};

/*
 * Read a reply up to its CTL_END, then check that the connection
 * closes (one request per connection) with nothing more on it.
 */
static void
t_read_reply(int fd, struct t_reply *rp)
{
	struct t_msg m;
	size_t n;

	memset(rp, 0, sizeof(*rp));
	for (;;) {
		if (!t_recv(fd, &m))
			fail_msg("closed after %d lines, before CTL_END",
			    rp->nlines);
		if (m.type == TRACED_MSG_CTL_END)
			break;
		if (rp->nlines < T_LINES) {
			n = m.len < T_LINE_MAX - 1 ? m.len : T_LINE_MAX - 1;
			memcpy(rp->line[rp->nlines], m.text, n);
			rp->line[rp->nlines][n] = '\0';
		}
		rp->nlines++;
	}
	rp->status = m.status;
	rp->count = m.count;
	memcpy(rp->end, m.text, m.len + 1);
	assert_int_equal(t_recv(fd, &m), 0);
}

/*
 * Nothing has come on fd and it is still open, after the loop has run
 * what it had to run.
 */
static void
t_quiet(int fd)
{
	char c;
	int i;

	for (i = 0; i < 10; i++)
		event_base_loop(t.base, EVLOOP_NONBLOCK);
	assert_int_equal(recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK), -1);
	assert_int_equal(errno, EAGAIN);
}

/* Turn the loop until the daemon has taken everything fd sent. */
static void
t_pump_taken(int fd)
{
	int64_t deadline = t_now_ms() + T_WAIT_MS;
	int outq;

	for (;;) {
		assert_int_equal(ioctl(fd, SIOCOUTQ, &outq), 0);
		if (outq == 0)
			break;
		t_pump(deadline, "the daemon to read the request");
	}
}

/* ---- setup ------------------------------------------------------- */

static int
setup(void **state)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tick = { 0, T_TICK_US };
	const char *tmp = getenv("TMPDIR");
	int i;

	(void)state;
	memset(&f, 0, sizeof(f));
	t.resets = 0;
	for (i = 0; i < T_CLIENTS; i++)
		t.cfd[i] = -1;
	/* Roomy unless a test says otherwise. */
	cfg.limit[LIMIT_CONTROL_CONNS] = 8;
	cfg.limit[LIMIT_CONTROL_OUTPUT] = 1u << 20;
	cfg.limit[LIMIT_CONTROL_TIMEOUT] = 30;

	snprintf(t.dir, sizeof(t.dir), "%s/tctl.XXXXXX",
	    tmp != NULL && strlen(tmp) < 32 ? tmp : "/tmp");
	if (mkdtemp(t.dir) == NULL)
		return -1;
	snprintf(t.path, sizeof(t.path), "%s/%s", t.dir, TRACED_CONTROL_SOCK);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", t.path);
	t.lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (t.lfd == -1 ||
	    bind(t.lfd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    listen(t.lfd, 16) == -1)
		return -1;

	if ((t.base = event_base_new()) == NULL)
		return -1;
	t.tick = event_new(t.base, -1, EV_PERSIST, t_tick_cb, NULL);
	if (t.tick == NULL || event_add(t.tick, &tick) == -1)
		return -1;
	return control_listen(t.base, t.lfd);
}

static int
teardown(void **state)
{
	int i;

	(void)state;
	control_close_all();
	for (i = 0; i < T_CLIENTS; i++)
		if (t.cfd[i] != -1)
			t_close(t.cfd[i]);
	event_free(t.tick);
	event_base_free(t.base);
	close(t.lfd);
	unlink(t.path);
	rmdir(t.dir);
	/* Whatever was charged to the uid came back. */
	assert_int_equal(limits_held(geteuid(), LIMIT_CONTROL_CONNS), 0);
	assert_int_equal(limits_held(geteuid(), LIMIT_CONTROL_OUTPUT), 0);
	return 0;
}

/* ---- replies ----------------------------------------------------- */

static void
test_control_reply_lines_in_order_then_one_end(void **state)
{
	struct t_reply rp;
	char want[32];
	int fd, i;

	(void)state;
	fd = t_connect();
	t_request(fd, 0, "lines", "20", NULL);
	t_read_reply(fd, &rp);

	assert_int_equal(f.calls, 1);
	assert_int_equal(f.argc, 2);
	assert_string_equal(f.argv0, "lines");
	assert_int_equal(f.uid, geteuid());	/* SO_PEERCRED's */
	assert_int_equal(f.json, 0);
	assert_int_equal(rp.nlines, 20);
	for (i = 0; i < 20; i++) {
		snprintf(want, sizeof(want), "line %d", i);
		assert_string_equal(rp.line[i], want);
	}
	assert_int_equal(rp.status, TRACED_CTL_OK);
	assert_int_equal(rp.count, 20);
	assert_string_equal(rp.end, "20 lines");
}

static void
test_control_reply_empty_still_ends(void **state)
{
	struct t_reply rp;
	int fd;

	(void)state;
	fd = t_connect();
	t_request(fd, 0, "lines", "0", NULL);
	t_read_reply(fd, &rp);
	assert_int_equal(rp.nlines, 0);
	assert_int_equal(rp.count, 0);
	assert_int_equal(rp.status, TRACED_CTL_OK);
	assert_string_equal(rp.end, "0 lines");
}

/* The status is what the handler returned; the end is its error line. */
static void
test_control_end_carries_handler_status(void **state)
{
	static const struct {
		const char	*status;
		uint32_t	 want;
	} cases[] = {
		{ "1", TRACED_CTL_ERROR },
		{ "2", TRACED_CTL_USAGE },
		{ "3", TRACED_CTL_DENIED },
	};
	struct t_reply rp;
	size_t i;
	int fd;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fd = t_connect();
		t_request(fd, 0, "status", cases[i].status, "no such thing",
		    NULL);
		t_read_reply(fd, &rp);
		t_close(fd);
		assert_int_equal(rp.nlines, 1);
		assert_string_equal(rp.line[0], "before");
		assert_int_equal(rp.count, 1);
		assert_int_equal(rp.status, cases[i].want);
		assert_string_equal(rp.end, "no such thing");
	}
	assert_int_equal(f.calls, 3);
}

/* --json reaches the handler; without it, the handler sees text mode. */
static void
test_control_json_flag_reaches_handler(void **state)
{
	struct t_reply rp;
	int fd;

	(void)state;
	fd = t_connect();
	t_request(fd, 0, "json", NULL);
	t_read_reply(fd, &rp);
	assert_int_equal(f.json, 0);
	assert_int_equal(rp.nlines, 1);
	assert_string_equal(rp.line[0], "text mode");
	t_close(fd);

	fd = t_connect();
	t_request(fd, TRACED_CTL_JSON, "json", NULL);
	t_read_reply(fd, &rp);
	assert_int_equal(f.json, 1);
	assert_int_equal(rp.nlines, 2);
	assert_int_equal(rp.count, 2);
	assert_int_equal(rp.status, TRACED_CTL_OK);
	assert_string_equal(rp.end, "2 items");
}

/*
 * Each item is one compact JSON object on its own line, in the order
 * it was built, and valid (tracectl rejects a reply otherwise) even
 * when the text in it was not UTF-8: jstr() escapes those bytes.
 */
static void
test_control_json_items_compact_and_valid(void **state)
{
	struct t_reply rp;
	json_error_t e;
	json_t *j;
	int fd, i;

	(void)state;
	fd = t_connect();
	t_request(fd, TRACED_CTL_JSON, "json", NULL);
	t_read_reply(fd, &rp);
	assert_int_equal(rp.nlines, 2);
	assert_string_equal(rp.line[0],
	    "{\"name\":\"caf\\\\xe9\\\\xff\",\"n\":3,\"ns\":\"123\","
	    "\"none\":null}");
	assert_string_equal(rp.line[1],
	    "{\"text\":\"say \\\"hi\\\"\\t\\\\\"}");
	for (i = 0; i < 2; i++) {
		assert_null(strchr(rp.line[i], '\n'));
		/* What tracectl's item_valid() asks of an item. */
		j = json_loads(rp.line[i], JSON_REJECT_DUPLICATES, &e);
		assert_non_null(j);
		assert_true(json_is_object(j));
		if (i == 0)
			assert_string_equal(json_string_value(
			    json_object_get(j, "name")), "caf\\xe9\\xff");
		json_decref(j);
	}
}

/*
 * An item memory could not hold: the reply stops there (the handler
 * sees it cut, later lines are dropped) and fails, however the handler
 * ended it, saying why and after how many lines; tracectl must not
 * take a short listing for a whole one.
 */
static void
test_control_item_out_of_memory_fails_reply(void **state)
{
	struct t_reply rp;
	int fd;

	(void)state;
	fd = t_connect();
	t_request(fd, TRACED_CTL_JSON, "short", NULL);
	t_read_reply(fd, &rp);
	assert_int_equal(rp.nlines, 1);
	assert_int_equal(rp.count, 1);
	assert_string_equal(rp.line[0], "{\"n\":1}");
	assert_int_equal(rp.status, TRACED_CTL_ERROR);
	assert_string_equal(rp.end, "out of memory: the reply was cut short "
	    "after 1 lines");
	assert_true(f.short_cut);
}

/* ---- malformed requests ------------------------------------------ */

/* Send msg as a request on a new connection: a usage error comes back. */
static void
t_bad_request(const void *msg, size_t len, const char *want)
{
	struct t_reply rp;
	int fd;

	fd = t_connect();
	t_send(fd, msg, len);
	t_read_reply(fd, &rp);
	t_close(fd);
	assert_int_equal(rp.nlines, 0);
	assert_int_equal(rp.count, 0);
	assert_int_equal(rp.status, TRACED_CTL_USAGE);
	assert_string_equal(rp.end, want);
}

static void
test_control_bad_request_gets_usage_end(void **state)
{
	_Alignas(8) char buf[TRACED_MSG_MAX];
	struct traced_msg_ctl_request *rq = (void *)buf;
	struct traced_msg_ctl_end end;
	char a0[] = "lines", a1[] = "3";
	char *argv[] = { a0, a1 };
	int len;

	(void)state;
	/* A well-formed message, but not a request. */
	memset(&end, 0, sizeof(end));
	wire_hdr_init(&end.hdr, TRACED_MSG_CTL_END, sizeof(end));
	t_bad_request(&end, sizeof(end), "bad request: not a request");

	/* Its size field says more than was sent. */
	len = wire_ctl_request_encode(buf, sizeof(buf), 0, 2, argv);
	assert_true(len > 0);
	rq->hdr.size += 4;
	t_bad_request(buf, (size_t)len,
	    "bad request: size field does not match the message");

	/* Shorter than a header. */
	t_bad_request(buf, 4, "bad request: truncated message");

	/* A request cut short of its fixed part. */
	len = wire_ctl_request_encode(buf, sizeof(buf), 0, 2, argv);
	rq->hdr.size = 16;
	t_bad_request(buf, 16,
	    "bad request: wrong size for the message type");

	/* Fewer arguments than announced. */
	len = wire_ctl_request_encode(buf, sizeof(buf), 0, 2, argv);
	rq->argc = 3;
	t_bad_request(buf, (size_t)len,
	    "bad request: arguments do not match their count");

	/* Another version of tracectl. */
	len = wire_ctl_request_encode(buf, sizeof(buf), 0, 2, argv);
	rq->version = TRACED_PROTOCOL_VERSION + 1;
	t_bad_request(buf, (size_t)len,
	    "bad request: protocol version mismatch");

	assert_int_equal(f.calls, 0);	/* no handler ran */
}

/* ---- limits ------------------------------------------------------ */

/*
 * Past control-output-per-uid the lines are dropped, the handler is
 * told (reply_cut()) so it stops, what is queued stays within the
 * limit, and the end says so, as an error.  The count in CTL_END is
 * the lines that came, or tracectl refuses the whole reply as
 * malformed instead of printing why it was cut.
 */
static void
test_control_output_limit_cuts_reply(void **state)
{
	struct t_reply rp;
	int fd;

	(void)state;
	cfg.limit[LIMIT_CONTROL_OUTPUT] = 1000;
	fd = t_connect();
	t_request(fd, 0, "flood", NULL);
	t_read_reply(fd, &rp);

	assert_int_equal(f.flood_cut, 1);
	/* 108 bytes a message: 9 fit in 1000, the 10th is refused. */
	assert_int_equal(f.flood_lines, 10);
	assert_true(f.held_max <= 1000);
	assert_int_equal(rp.nlines, 9);
	assert_int_equal(rp.status, TRACED_CTL_ERROR);
	assert_non_null(strstr(rp.end, "reply cut short"));
	assert_non_null(strstr(rp.end, "control-output-per-uid"));
}

/*
 * CTL_END's count of a cut reply is the lines that were sent: tracectl
 * checks it and calls the reply malformed (exit 3) otherwise, so the
 * user would never see "reply cut short".
 */
static void
test_control_cut_reply_counts_lines_sent(void **state)
{
	struct t_reply rp;
	int fd;

	(void)state;
	cfg.limit[LIMIT_CONTROL_OUTPUT] = 1000;
	fd = t_connect();
	t_request(fd, 0, "flood", NULL);
	t_read_reply(fd, &rp);
	assert_int_equal(rp.nlines, 9);
	assert_int_equal(rp.count, rp.nlines);
	assert_non_null(strstr(rp.end, "after 9 lines"));
}

/*
 * Past control-connections-per-uid the next connection is told why at
 * once, and closed; the others are served, and a slot freed is taken
 * again.
 */
static void
test_control_conn_limit_refuses_next(void **state)
{
	struct t_reply rp;
	int a, b, c;

	(void)state;
	cfg.limit[LIMIT_CONTROL_CONNS] = 2;
	a = t_connect();
	b = t_connect();
	t_pump_conns(2);

	c = t_connect();	/* no request: it is told anyway */
	t_read_reply(c, &rp);
	assert_int_equal(rp.nlines, 0);
	assert_int_equal(rp.count, 0);
	assert_int_equal(rp.status, TRACED_CTL_ERROR);
	assert_non_null(strstr(rp.end, "control-connections-per-uid"));
	assert_int_equal(limits_held(geteuid(), LIMIT_CONTROL_CONNS), 2);

	t_request(a, 0, "lines", "1", NULL);
	t_read_reply(a, &rp);
	assert_int_equal(rp.status, TRACED_CTL_OK);
	assert_int_equal(limits_held(geteuid(), LIMIT_CONTROL_CONNS), 1);

	c = t_connect();
	t_pump_conns(2);
	t_request(c, 0, "lines", "2", NULL);
	t_read_reply(c, &rp);
	assert_int_equal(rp.nlines, 2);
	t_request(b, 0, "lines", "3", NULL);
	t_read_reply(b, &rp);
	assert_int_equal(rp.nlines, 3);
	assert_int_equal(f.calls, 3);
}

/* ---- replies that wait ------------------------------------------- */

/*
 * Nothing is sent while the predicate says not yet; once
 * replies_check() finds it done, its line and end go out.
 */
static void
test_control_wait_ends_when_predicate_done(void **state)
{
	struct t_reply rp;
	int fd, asked;

	(void)state;
	fd = t_connect();
	t_request(fd, 0, "wait", "0", NULL);
	t_pump_until(&f.calls, 1, "the handler to run");
	t_quiet(fd);
	asked = f.asked;
	replies_check();		/* the state moved, not far enough */
	assert_int_equal(f.asked, asked + 1);
	t_quiet(fd);

	f.done = 1;
	replies_check();
	t_read_reply(fd, &rp);
	assert_int_equal(f.asked, asked + 2);
	assert_int_equal(f.timed_out, 0);
	assert_int_equal(f.gone, 0);
	assert_int_equal(rp.nlines, 1);
	assert_string_equal(rp.line[0], "it happened");
	assert_int_equal(rp.status, TRACED_CTL_OK);
	assert_string_equal(rp.end, "waited");

	replies_check();		/* it waits no more */
	assert_int_equal(f.asked, asked + 2);
}

/*
 * A predicate already done when the handler returns: the reply ends
 * at once, with no replies_check() from outside.
 */
static void
test_control_wait_done_at_once(void **state)
{
	struct t_reply rp;
	int fd;

	(void)state;
	f.done = 1;
	fd = t_connect();
	t_request(fd, 0, "wait", "0", NULL);
	t_read_reply(fd, &rp);
	assert_int_equal(f.asked, 1);
	assert_string_equal(rp.end, "waited");
}

/*
 * With a timeout, the reply's own timer asks the predicate with
 * timed_out 1 though nothing calls replies_check().
 */
static void
test_control_wait_times_out_by_itself(void **state)
{
	struct t_reply rp;
	int64_t start;
	int fd;

	(void)state;
	fd = t_connect();
	start = t_now_ms();
	t_request(fd, 0, "wait", "50", NULL);
	t_read_reply(fd, &rp);
	assert_true(t_now_ms() - start >= 40);
	assert_int_equal(f.timed_out, 1);
	assert_int_equal(f.gone, 0);
	assert_int_equal(rp.status, TRACED_CTL_ERROR);
	assert_string_equal(rp.end, "gave up waiting");
}

/*
 * control-timeout (1 s here) does not close a connection whose reply
 * waits: past it the connection is open, and the reply still comes.
 */
static void
test_control_idle_timeout_spares_waiting_reply(void **state)
{
	struct t_reply rp;
	int64_t until;
	char c;
	int fd;

	(void)state;
	cfg.limit[LIMIT_CONTROL_TIMEOUT] = 1;
	fd = t_connect();
	t_request(fd, 0, "wait", "0", NULL);
	t_pump_until(&f.calls, 1, "the handler to run");
	until = t_now_ms() + 1500;
	while (t_now_ms() < until) {
		event_base_loop(t.base, EVLOOP_ONCE);
		assert_int_equal(recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK),
		    -1);
		assert_int_equal(errno, EAGAIN);
	}
	assert_int_equal(limits_held(geteuid(), LIMIT_CONTROL_CONNS), 1);

	f.done = 1;
	replies_check();
	t_read_reply(fd, &rp);
	assert_string_equal(rp.end, "waited");
	assert_int_equal(f.gone, 0);
}

/*
 * A reply that waits with a timeout longer than control-timeout ends
 * by its own timer, not by the connection's.
 */
static void
test_control_wait_outlives_idle_timeout(void **state)
{
	struct t_reply rp;
	int64_t start;
	int fd;

	(void)state;
	cfg.limit[LIMIT_CONTROL_TIMEOUT] = 1;
	fd = t_connect();
	start = t_now_ms();
	t_request(fd, 0, "wait", "1500", NULL);
	t_read_reply(fd, &rp);
	assert_true(t_now_ms() - start >= 1400);
	assert_int_equal(f.timed_out, 1);
	assert_string_equal(rp.end, "gave up waiting");
}

/*
 * The client leaves while its reply waits: the predicate is called
 * once with r NULL (it frees its argument: ASan sees a leak otherwise),
 * the connection is freed, and the wait is asked no more.
 */
static void
test_control_client_gone_while_waiting(void **state)
{
	int fd, asked;

	(void)state;
	fd = t_connect();
	t_request(fd, 0, "wait", "0", NULL);
	t_pump_until(&f.calls, 1, "the handler to run");
	t_close(fd);
	/*
	 * control_io_cb() takes EOF for EAGAIN when errno says so from
	 * before (test_control_eof_whatever_errno_was): not this test's
	 * matter.
	 */
	errno = 0;
	asked = f.asked;
	t_pump_until(&f.gone, 1, "the predicate to be told");
	assert_int_equal(limits_held(geteuid(), LIMIT_CONTROL_CONNS), 0);

	f.done = 1;
	replies_check();
	assert_int_equal(f.asked, asked);
	assert_int_equal(f.gone, 1);
}

/*
 * The same, with a timer pending: once the connection is gone the
 * timer must not fire into the freed reply.
 */
static void
test_control_client_gone_while_timed_wait(void **state)
{
	int64_t until;
	int fd, asked;

	(void)state;
	fd = t_connect();
	t_request(fd, 0, "wait", "100", NULL);
	t_pump_until(&f.calls, 1, "the handler to run");
	t_close(fd);
	errno = 0;		/* as above */
	asked = f.asked;
	t_pump_until(&f.gone, 1, "the predicate to be told");
	until = t_now_ms() + 200;	/* past the timer's 100 ms */
	while (t_now_ms() < until)
		event_base_loop(t.base, EVLOOP_ONCE);
	assert_int_equal(f.asked, asked);
	assert_int_equal(f.timed_out, 0);
	assert_int_equal(f.gone, 1);
}

/*
 * EOF on a connection whose reply waits is EOF whatever errno held
 * before: recv() returning 0 does not set it, and EAGAIN is what a
 * non-blocking loop leaves there most.  Taken for EAGAIN, the EOF
 * keeps the level-triggered read event firing: the loop spins, and
 * the connection and its wait (forever, with no timeout) stay.
 */
static void
test_control_eof_whatever_errno_was(void **state)
{
	int fd;

	(void)state;
	fd = t_connect();
	t_request(fd, 0, "wait", "0", NULL);
	t_pump_until(&f.calls, 1, "the handler to run");
	t_close(fd);
	errno = EAGAIN;		/* left by some earlier call */
	t_pump_until(&f.gone, 1, "the predicate to be told");
	assert_int_equal(limits_held(geteuid(), LIMIT_CONTROL_CONNS), 0);
}

/* ---- the connection's life --------------------------------------- */

/* A connection that says nothing is closed after control-timeout. */
static void
test_control_silent_conn_closed_after_timeout(void **state)
{
	struct t_msg m;
	int64_t start;
	int fd;

	(void)state;
	cfg.limit[LIMIT_CONTROL_TIMEOUT] = 1;
	start = t_now_ms();
	fd = t_connect();
	t_pump_conns(1);
	assert_int_equal(t_recv(fd, &m), 0);
	assert_true(t_now_ms() - start >= 900);
	assert_int_equal(limits_held(geteuid(), LIMIT_CONTROL_CONNS), 0);
	assert_int_equal(f.calls, 0);
}

/*
 * At shutdown a waiting reply is ended (its predicate asked with
 * timed_out 1, its end sent) and every connection is closed, the idle
 * ones too.
 */
static void
test_control_close_all_ends_waits_and_closes(void **state)
{
	struct t_reply rp;
	struct t_msg m;
	int a, b;

	(void)state;
	a = t_connect();
	b = t_connect();
	t_request(a, 0, "wait", "0", NULL);
	t_pump_until(&f.calls, 1, "the handler to run");
	t_pump_conns(2);

	control_close_all();
	assert_int_equal(f.timed_out, 1);
	assert_int_equal(f.gone, 0);
	assert_int_equal(limits_held(geteuid(), LIMIT_CONTROL_CONNS), 0);
	t_read_reply(a, &rp);
	assert_int_equal(rp.status, TRACED_CTL_ERROR);
	assert_string_equal(rp.end, "gave up waiting");
	assert_int_equal(t_recv(b, &m), 0);
}

/*
 * Two requests sent at once: the first is answered, then the
 * connection closes with the second unread.  (The kernel then reports
 * ECONNRESET ahead of the reply, which t_recv() reads past.)
 */
static void
test_control_second_request_not_answered(void **state)
{
	struct t_reply rp;
	int fd;

	(void)state;
	fd = t_connect();
	t_request(fd, 0, "lines", "2", NULL);
	t_request(fd, 0, "lines", "3", NULL);
	t_read_reply(fd, &rp);
	assert_int_equal(f.calls, 1);
	assert_int_equal(rp.nlines, 2);
	assert_int_equal(rp.count, 2);
	assert_string_equal(rp.end, "2 lines");
}

/*
 * A second request while the first reply waits is never run.  Today it
 * is read and dropped and the first reply still comes; control_io_cb()
 * says junk ends the connection, and that would do too: then the wait
 * is told it is gone, and the client sees EOF without a reply.
 */
static void
test_control_second_request_while_waiting(void **state)
{
	struct t_reply rp;
	struct t_msg m;
	int fd, i;

	(void)state;
	fd = t_connect();
	t_request(fd, 0, "wait", "0", NULL);
	t_pump_until(&f.calls, 1, "the handler to run");
	t_request(fd, 0, "lines", "3", NULL);
	t_pump_taken(fd);
	for (i = 0; i < 10; i++)
		event_base_loop(t.base, EVLOOP_NONBLOCK);
	assert_int_equal(f.calls, 1);
	if (f.gone == 1) {
		assert_int_equal(t_recv(fd, &m), 0);
		return;
	}
	t_quiet(fd);

	f.done = 1;
	replies_check();
	t_read_reply(fd, &rp);
	assert_int_equal(rp.nlines, 1);
	assert_string_equal(rp.line[0], "it happened");
	assert_string_equal(rp.end, "waited");
	assert_int_equal(f.calls, 1);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_control_reply_lines_in_order_then_one_end),
		T(test_control_reply_empty_still_ends),
		T(test_control_end_carries_handler_status),
		T(test_control_json_flag_reaches_handler),
		T(test_control_json_items_compact_and_valid),
		T(test_control_item_out_of_memory_fails_reply),
		T(test_control_bad_request_gets_usage_end),
		T(test_control_output_limit_cuts_reply),
		T(test_control_cut_reply_counts_lines_sent),
		T(test_control_conn_limit_refuses_next),
		T(test_control_wait_ends_when_predicate_done),
		T(test_control_wait_done_at_once),
		T(test_control_wait_times_out_by_itself),
		T(test_control_idle_timeout_spares_waiting_reply),
		T(test_control_wait_outlives_idle_timeout),
		T(test_control_client_gone_while_waiting),
		T(test_control_client_gone_while_timed_wait),
		T(test_control_eof_whatever_errno_was),
		T(test_control_silent_conn_closed_after_timeout),
		T(test_control_close_all_ends_waits_and_closes),
		T(test_control_second_request_not_answered),
		T(test_control_second_request_while_waiting),
	};

	log_init();
	limits_init();
	return cmocka_run_group_tests_name("control", tests, NULL, NULL);
}
