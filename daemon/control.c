/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * control.sock: one request per connection from tracectl, answered with
 * zero or more CTL_LINE messages and one CTL_END (proto/wire.h).  The
 * peer's uid and gid come from SO_PEERCRED and go to cmd_exec() for the
 * permission check.  Replies are queued and written as the socket
 * accepts them, so a slow reader never blocks the loop.  A command that
 * answers later (trace-file flush) leaves its connection waiting;
 * control_flush_check() ends it once every ring is drained and synced.
 *
 * Limits (traced(8)): each uid may hold control-connections-per-uid
 * connections and control-output-per-uid bytes of replies not yet read;
 * a reply that would go past it is cut short and says so.  A
 * connection that sends no request, or stops reading its reply, for
 * control-timeout seconds is closed (a flush waiting for the disk is
 * not idle).  Loop thread only.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "traced.h"

struct outmsg {
	struct outmsg	*next;
	size_t		 len;
	_Alignas(8) char buf[];
};

struct ctlconn {
	TAILQ_ENTRY(ctlconn) entry;
	int		 fd;
	struct event	*ev;
	struct event	*timer;		/* idle or stalled for too long */
	uid_t		 uid;
	gid_t		 gid;
	gid_t		*groups;	/* supplementary, SO_PEERGROUPS */
	int		 ngroups;
	struct outmsg	*out, **out_tail;
	uint64_t	 queued;	/* bytes in out, charged to uid */
	int		 cut;		/* output over the uid's limit */
	int		 ended;		/* CTL_END queued: close when sent */
	int		 flushing;	/* waiting for flush_gen */
	uint64_t	 flush_gen;
	uint64_t	 flush_deleted;	/* td->deleted_events at its start */
	reply_wait_cb	 wait_cb;	/* waiting for wait_cb to say done */
	void		*wait_arg;
	uint64_t	 wait_until;	/* ns, CLOCK_MONOTONIC */
	struct reply	*r;
};

struct reply {
	struct ctlconn	*c;
	int		 json;
	unsigned	 count;
	uint32_t	 status;
	char		 msg[1024];
	int		 async;
};

static TAILQ_HEAD(, ctlconn) ctlconns = TAILQ_HEAD_INITIALIZER(ctlconns);

static void control_io_cb(int fd, short what, void *arg);

static void
ctlconn_free(struct ctlconn *c)
{
	struct outmsg *o;

	TAILQ_REMOVE(&ctlconns, c, entry);
	if (c->wait_cb != NULL)
		(void)c->wait_cb(NULL, c->wait_arg, 1);
	while ((o = c->out) != NULL) {
		c->out = o->next;
		free(o);
	}
	limits_put(c->uid, LIMIT_CONTROL_OUTPUT, c->queued, 0);
	limits_put(c->uid, LIMIT_CONTROL_CONNS, 1, 1);
	event_free(c->ev);
	event_free(c->timer);
	close(c->fd);
	free(c->groups);
	free(c->r);
	free(c);
}

/* (Re)start the connection's clock: control-timeout from now. */
static void
ctlconn_touch(struct ctlconn *c)
{
	struct timeval tv = { (time_t)td->cfg.limit[LIMIT_CONTROL_TIMEOUT],
		0 };

	if (c->flushing)
		event_del(c->timer);	/* the disk decides, not the peer */
	else
		event_add(c->timer, &tv);
}

static void
ctlconn_timeout_cb(int fd, short what, void *arg)
{
	struct ctlconn *c = arg;

	(void)fd;
	(void)what;
	if (c->flushing)
		return;
	limits_logx(c->uid, "control connection of uid %u closed: %s for "
	    "%llu s (control-timeout)", (unsigned)c->uid, c->r == NULL ?
	    "no request" : "its reply was not read",
	    (unsigned long long)td->cfg.limit[LIMIT_CONTROL_TIMEOUT]);
	ctlconn_free(c);
}

/* Write what the socket takes; close once the reply is out. */
static void
ctlconn_write(struct ctlconn *c)
{
	struct outmsg *o;

	while ((o = c->out) != NULL) {
		if (send(c->fd, o->buf, o->len, MSG_NOSIGNAL | MSG_DONTWAIT) ==
		    -1) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			ctlconn_free(c);
			return;
		}
		c->out = o->next;
		if (c->out == NULL)
			c->out_tail = &c->out;
		limits_put(c->uid, LIMIT_CONTROL_OUTPUT, o->len, 0);
		c->queued -= o->len;
		free(o);
		ctlconn_touch(c);	/* it reads: not stalled */
	}
	if (c->out == NULL && c->ended) {
		ctlconn_free(c);
		return;
	}
	event_del(c->ev);
	event_assign(c->ev, td->base, c->fd,
	    EV_READ | (c->out != NULL ? EV_WRITE : 0) | EV_PERSIST,
	    control_io_cb, c);
	event_add(c->ev, NULL);
}

static void
ctlconn_queue(struct ctlconn *c, uint32_t type, const void *body,
    size_t body_len, const char *text, size_t text_len)
{
	struct traced_msg_hdr h;
	struct outmsg *o;
	size_t len;

	if (text_len > TRACED_MSG_MAX - sizeof(h) - body_len)
		text_len = TRACED_MSG_MAX - sizeof(h) - body_len;
	len = sizeof(h) + body_len + text_len;
	/*
	 * Lines past the uid's limit are dropped; the end message always
	 * goes out (it says the reply was cut short).
	 */
	if (type != TRACED_MSG_CTL_END) {
		char why[256];

		if (c->cut || limits_take(c->uid, LIMIT_CONTROL_OUTPUT, len,
		    0, why, sizeof(why)) == -1) {
			c->cut = 1;
			return;
		}
	} else
		limits_force(c->uid, LIMIT_CONTROL_OUTPUT, len);
	o = malloc(sizeof(*o) + len);
	if (o == NULL) {
		limits_put(c->uid, LIMIT_CONTROL_OUTPUT, len, 0);
		log_warn("control reply");
		return;
	}
	c->queued += len;
	wire_hdr_init(&h, type, (uint32_t)len);
	memcpy(o->buf, &h, sizeof(h));
	if (body_len > 0)
		memcpy(o->buf + sizeof(h), body, body_len);
	if (text_len > 0)
		memcpy(o->buf + sizeof(h) + body_len, text, text_len);
	o->len = len;
	o->next = NULL;
	*c->out_tail = o;
	c->out_tail = &o->next;
}

int
reply_json(const struct reply *r)
{
	return r->json;
}

void
reply_line(struct reply *r, const char *fmt, ...)
{
	char buf[TRACED_MSG_MAX];
	va_list ap;
	int n;

	if (r->c->cut)		/* over the limit: not even formatted */
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	ctlconn_queue(r->c, TRACED_MSG_CTL_LINE, NULL, 0, buf, (size_t)n);
	r->count++;
}

/*
 * One item of a --json reply: 'o' (stolen) as one compact line.  The
 * library writes it, so it is valid JSON whatever it holds.
 */
void
reply_item(struct reply *r, json_t *o)
{
	char *text;

	if (r->c->cut) {	/* over the limit: not even formatted */
		json_decref(o);
		return;
	}
	if (o == NULL) {
		r->c->cut = 1;	/* out of memory: say the reply is short */
		return;
	}
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (text == NULL) {
		r->c->cut = 1;
		return;
	}
	ctlconn_queue(r->c, TRACED_MSG_CTL_LINE, NULL, 0, text, strlen(text));
	r->count++;
	free(text);
}

void
reply_error(struct reply *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	if (r->status == TRACED_CTL_OK)
		r->status = TRACED_CTL_ERROR;
}

void
reply_message(struct reply *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
}

/* Send CTL_END; the connection closes once it is written. */
void
reply_end(struct reply *r)
{
	struct {
		uint32_t status;
		uint32_t count;
	} body = { r->status, r->count };
	struct ctlconn *c = r->c;

	if (c->cut) {
		body.status = TRACED_CTL_ERROR;
		snprintf(r->msg, sizeof(r->msg), "reply cut short after %u "
		    "lines: uid %u has %llu bytes of replies waiting to be "
		    "read, its control-output-per-uid limit (see traced(8))",
		    r->count, (unsigned)c->uid, (unsigned long long)
		    limits_held(c->uid, LIMIT_CONTROL_OUTPUT));
	}
	ctlconn_queue(c, TRACED_MSG_CTL_END, &body, sizeof(body), r->msg,
	    strlen(r->msg));
	c->ended = 1;
	c->flushing = 0;
	c->wait_cb = NULL;
	ctlconn_write(c);
}

/* Make a waiting reply a flush: it ends when every ring is synced. */
void
reply_wait_flush(struct reply *r, uint64_t gen)
{
	r->async = 1;
	r->c->flushing = 1;
	r->c->flush_gen = gen;
	r->c->flush_deleted = td->deleted_events;
}

static int
flush_done(uint64_t gen)
{
	struct session *s;
	struct sring *r;

	TAILQ_FOREACH(s, &td->sessions, entry)
		TAILQ_FOREACH(r, &s->rings, entry) {
			if (r->ended)
				continue;
			if (r->gen_done < gen)
				return 0;
		}
	return 1;
}

/* End every flush whose rings are all drained and synced. */
void
control_flush_check(void)
{
	struct ctlconn *c, *next;

	for (c = TAILQ_FIRST(&ctlconns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->flushing && flush_done(c->flush_gen)) {
			/* On disk, unless its directory is gone. */
			(void)trace_dir_check(1);
			if (td->deleted_events != c->flush_deleted)
				reply_error(c->r, "not flushed: %llu events "
				    "were written to directories that were "
				    "deleted since (see the daemon's log and "
				    "'info trace', cause 'deleted'); tracing "
				    "goes on in new directories",
				    (unsigned long long)(td->deleted_events -
				    c->flush_deleted));
			else
				reply_message(c->r, "flushed: every event "
				    "committed before the command is on disk");
			reply_end(c->r);
		}
	}
}

/*
 * Make a reply wait for cb: control_wait_check() calls cb(r, arg, 0)
 * until it says done (1), or once with timed_out 1 after timeout_ms
 * (then it must end the reply itself and say done).  A connection
 * closed meanwhile calls cb(NULL, arg, 1), to free arg.
 */
void
reply_wait(struct reply *r, reply_wait_cb cb, void *arg, unsigned timeout_ms)
{
	r->async = 1;
	r->c->wait_cb = cb;
	r->c->wait_arg = arg;
	r->c->wait_until = now_ns(CLOCK_MONOTONIC) +
	    (uint64_t)timeout_ms * 1000000u;
}

/* End every waiting reply whose callback says it is done. */
void
control_wait_check(void)
{
	struct ctlconn *c, *next;
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	for (c = TAILQ_FIRST(&ctlconns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->wait_cb == NULL || c->r == NULL)
			continue;
		if (c->wait_cb(c->r, c->wait_arg, now >= c->wait_until)) {
			c->wait_cb = NULL;
			reply_end(c->r);
		}
	}
}

static void
control_request(struct ctlconn *c)
{
	_Alignas(8) char buf[TRACED_MSG_MAX];
	struct wire_msg m;
	const char *why;
	struct reply *r;
	ssize_t n;

	n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		ctlconn_free(c);
		return;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		ctlconn_free(c);
		return;
	}
	r->c = c;
	c->r = r;
	if (wire_decode(buf, (size_t)n, 0, &m, &why) != 0 ||
	    m.type != TRACED_MSG_CTL_REQUEST) {
		r->status = TRACED_CTL_USAGE;
		snprintf(r->msg, sizeof(r->msg), "bad request: %s",
		    m.type != TRACED_MSG_CTL_REQUEST && why == NULL ?
		    "not a request" : why);
		reply_end(r);
		return;
	}
	r->json = (m.u.ctl_request->flags & TRACED_CTL_JSON) != 0;
	ctlconn_touch(c);	/* now its reply's reading is timed */
	/* A uid whose replies wait unread gets no new work done. */
	if (limits_held(c->uid, LIMIT_CONTROL_OUTPUT) >=
	    td->cfg.limit[LIMIT_CONTROL_OUTPUT]) {
		c->cut = 1;
		r->status = TRACED_CTL_ERROR;
		reply_end(r);
		return;
	}
	r->status = (uint32_t)cmd_exec(r, (int)m.u.ctl_request->argc,
	    (char **)m.argv, c->uid, c->gid, c->groups, c->ngroups);
	if (!r->async)
		reply_end(r);
	else if (c->wait_cb != NULL)
		control_wait_check();
	else
		control_flush_check();
}

static void
control_io_cb(int fd, short what, void *arg)
{
	struct ctlconn *c = arg;

	(void)fd;
	if (what & EV_WRITE) {
		ctlconn_write(c);
		return;
	}
	if (what & EV_READ) {
		if (c->r != NULL) {
			/* One request per connection: EOF or junk ends it. */
			char junk[64];

			if (recv(c->fd, junk, sizeof(junk), MSG_DONTWAIT) <= 0
			    && errno != EAGAIN)
				ctlconn_free(c);
			return;
		}
		control_request(c);
	}
}

static void
accept_resume_cb(int fd, short what, void *arg)
{
	struct event *ev = arg;

	(void)fd;
	(void)what;
	event_add(ev, NULL);
}

/*
 * accept() failed on listening event 'ev'.  Out of descriptors (or
 * memory), the socket stays readable and the loop would spin: stop
 * listening for a moment, and say so once a second at most.  Other
 * errors are logged.  Loop thread.
 */
void
accept_failed(struct event *ev, const char *what)
{
	static uint64_t last_warn;
	struct timeval tv = { 0, 100000 };
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	int saved = errno;
	int pause = saved == EMFILE || saved == ENFILE || saved == ENOMEM ||
	    saved == ENOBUFS;

	if (saved == EAGAIN || saved == EINTR || saved == ECONNABORTED)
		return;
	if (now - last_warn > 1000000000u) {
		errno = saved;
		if (saved == EMFILE)
			log_warn("accept on %s socket (not accepting for "
			    "100 ms; traced's descriptor limit is too low "
			    "for its connections: raise LimitNOFILE= in "
			    "traced.service, or 'ulimit -n')", what);
		else
			log_warn("accept on %s socket%s", what, pause ?
			    " (not accepting for 100 ms)" : "");
		last_warn = now;
	}
	if (pause) {
		event_del(ev);
		event_base_once(td->base, -1, EV_TIMEOUT, accept_resume_cb, ev,
		    &tv);
	}
}

/*
 * A connection over its uid's limit: say why in a reply the peer finds
 * when it reads (tracectl does, even when its request could not be
 * sent), and close it at once, holding nothing.
 */
static void
control_refuse(int fd, uid_t uid, const char *why)
{
	_Alignas(8) char buf[TRACED_MSG_MAX];
	struct traced_msg_hdr h;
	struct {
		uint32_t status;
		uint32_t count;
	} body = { TRACED_CTL_ERROR, 0 };
	size_t n = strlen(why), len;

	if (n > sizeof(buf) - sizeof(h) - sizeof(body))
		n = sizeof(buf) - sizeof(h) - sizeof(body);
	len = sizeof(h) + sizeof(body) + n;
	wire_hdr_init(&h, TRACED_MSG_CTL_END, (uint32_t)len);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), &body, sizeof(body));
	memcpy(buf + sizeof(h) + sizeof(body), why, n);
	(void)send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
	limits_logx(uid, "control connection refused: %s", why);
}

/*
 * The peer's supplementary groups (SO_PEERGROUPS, Linux 4.13): a member
 * of the daemon's group through them may change state, as the README
 * promises, not only one whose primary group it is.
 */
static void
control_peer_groups(struct ctlconn *c)
{
	socklen_t len = 32 * sizeof(gid_t);
	gid_t *g = malloc(len);

	while (g != NULL && getsockopt(c->fd, SOL_SOCKET, SO_PEERGROUPS, g,
	    &len) == -1) {
		gid_t *ng;

		if (errno != ERANGE || len > 65536 * sizeof(gid_t) ||
		    (ng = realloc(g, len)) == NULL) {
			free(g);
			g = NULL;
			len = 0;
			break;
		}
		g = ng;
	}
	c->groups = g;
	c->ngroups = g != NULL ? (int)(len / sizeof(gid_t)) : 0;
}

static void
control_accept_cb(int lfd, short what, void *arg)
{
	struct ctlconn *c;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char why[512];
	int fd;

	(void)what;
	(void)arg;
	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd == -1) {
		accept_failed(td->ev_control, "control");
		return;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1) {
		log_warn("SO_PEERCRED");
		close(fd);
		return;
	}
	if (limits_take(cred.uid, LIMIT_CONTROL_CONNS, 1, 1, why,
	    sizeof(why)) == -1) {
		control_refuse(fd, cred.uid, why);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		limits_put(cred.uid, LIMIT_CONTROL_CONNS, 1, 1);
		close(fd);
		return;
	}
	c->fd = fd;
	c->uid = cred.uid;
	c->gid = cred.gid;
	control_peer_groups(c);
	c->out_tail = &c->out;
	c->ev = event_new(td->base, fd, EV_READ | EV_PERSIST, control_io_cb,
	    c);
	c->timer = evtimer_new(td->base, ctlconn_timeout_cb, c);
	event_add(c->ev, NULL);
	TAILQ_INSERT_TAIL(&ctlconns, c, entry);
	ctlconn_touch(c);
}

int
control_listen(int fd)
{
	td->ev_control = event_new(td->base, fd, EV_READ | EV_PERSIST,
	    control_accept_cb, NULL);
	if (td->ev_control == NULL || event_add(td->ev_control, NULL) == -1)
		return -1;
	return 0;
}

/* At shutdown: answer pending flushes (everything was drained). */
void
control_close_all(void)
{
	struct ctlconn *c;

	while ((c = TAILQ_FIRST(&ctlconns)) != NULL) {
		if (c->wait_cb != NULL && c->r != NULL) {
			(void)c->wait_cb(c->r, c->wait_arg, 1);
			c->wait_cb = NULL;
			reply_end(c->r);
			if (TAILQ_FIRST(&ctlconns) == c)
				ctlconn_free(c);
			continue;
		}
		if (c->flushing && c->r != NULL) {
			reply_message(c->r, "flushed at shutdown");
			reply_end(c->r);
			if (TAILQ_FIRST(&ctlconns) == c)
				ctlconn_free(c);
		} else
			ctlconn_free(c);
	}
}

/*
 * Is the reply over its uid's control-output-per-uid, so that further
 * lines are dropped?  Handlers of long listings stop there.
 */
int
reply_cut(const struct reply *r)
{
	return r->c->cut;
}

/* Has the handler reported an error? */
int
reply_failed(const struct reply *r)
{
	return r->status != TRACED_CTL_OK;
}
