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
 * Loop thread only.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

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
	uid_t		 uid;
	gid_t		 gid;
	struct outmsg	*out, **out_tail;
	int		 ended;		/* CTL_END queued: close when sent */
	int		 flushing;	/* waiting for flush_gen */
	uint64_t	 flush_gen;
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
	while ((o = c->out) != NULL) {
		c->out = o->next;
		free(o);
	}
	event_free(c->ev);
	close(c->fd);
	free(c->r);
	free(c);
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
		free(o);
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
	o = malloc(sizeof(*o) + len);
	if (o == NULL) {
		log_warn("control reply");
		return;
	}
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

	ctlconn_queue(c, TRACED_MSG_CTL_END, &body, sizeof(body), r->msg,
	    strlen(r->msg));
	c->ended = 1;
	c->flushing = 0;
	ctlconn_write(c);
}

/* Make a waiting reply a flush: it ends when every ring is synced. */
void
reply_wait_flush(struct reply *r, uint64_t gen)
{
	r->async = 1;
	r->c->flushing = 1;
	r->c->flush_gen = gen;
}

static int
flush_done(uint64_t gen)
{
	struct session *s;
	struct sring *r;

	TAILQ_FOREACH(s, &td->sessions, entry)
		TAILQ_FOREACH(r, &s->rings, entry) {
			if (r->finished || r->quarantined)
				continue;
			if (r->queued || r->gen_done < gen)
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
			reply_message(c->r, "flushed: every event committed "
			    "before the command is on disk");
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
	r->status = (uint32_t)cmd_exec(r, (int)m.u.ctl_request->argc,
	    (char **)m.argv, c->uid, c->gid);
	if (!r->async)
		reply_end(r);
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

static void
control_accept_cb(int lfd, short what, void *arg)
{
	struct ctlconn *c;
	struct ucred cred;
	socklen_t len = sizeof(cred);
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
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		close(fd);
		return;
	}
	c->fd = fd;
	c->uid = cred.uid;
	c->gid = cred.gid;
	c->out_tail = &c->out;
	c->ev = event_new(td->base, fd, EV_READ | EV_PERSIST, control_io_cb,
	    c);
	event_add(c->ev, NULL);
	TAILQ_INSERT_TAIL(&ctlconns, c, entry);
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
		if (c->flushing && c->r != NULL) {
			reply_message(c->r, "flushed at shutdown");
			reply_end(c->r);
			if (TAILQ_FIRST(&ctlconns) == c)
				ctlconn_free(c);
		} else
			ctlconn_free(c);
	}
}

/* Has the handler reported an error? */
int
reply_failed(const struct reply *r)
{
	return r->status != TRACED_CTL_OK;
}
