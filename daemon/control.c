/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * control.sock: the bytes.  One request per connection from tracectl,
 * answered with zero or more CTL_LINE messages and one CTL_END
 * (proto/wire.h), which the reply builder (reply.c) makes and this file
 * queues and writes as the socket accepts them, so a slow reader never
 * blocks the loop.  The peer's uid and gid come from SO_PEERCRED and go
 * to cmd_exec() for the permission check.
 *
 * Limits (traced(8)): each uid may hold control-connections-per-uid
 * connections and control-output-per-uid bytes of replies not yet read;
 * the lines of a reply that would go past it are dropped (its end says
 * so).  A connection that sends no request, or stops reading its reply,
 * for control-timeout seconds is closed; one whose reply waits
 * (reply_wait()) is not idle: the wait decides.  Loop thread only.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "cmd.h"
#include "config.h"
#include "limits.h"
#include "log.h"
#include "sock.h"
#include "wire.h"

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
	int		 waiting;	/* its reply waits: not idle */
	struct reply	*r;		/* owned: the reply to its request */
};

static TAILQ_HEAD(, ctlconn) ctlconns = TAILQ_HEAD_INITIALIZER(ctlconns);
static struct event_base *ctl_base;
static struct event *ctl_ev;		/* control.sock */

static void control_io_cb(int fd, short what, void *arg);

static void
ctlconn_free(struct ctlconn *c)
{
	struct outmsg *o;

	TAILQ_REMOVE(&ctlconns, c, entry);
	reply_free(c->r);
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
	free(c);
}

/* (Re)start the connection's clock: control-timeout from now. */
static void
ctlconn_touch(struct ctlconn *c)
{
	struct timeval tv = { (time_t)cfg.limit[LIMIT_CONTROL_TIMEOUT], 0 };

	if (c->waiting)
		event_del(c->timer);	/* the wait decides, not the peer */
	else
		event_add(c->timer, &tv);
}

static void
ctlconn_timeout_cb(int fd, short what, void *arg)
{
	struct ctlconn *c = arg;

	(void)fd;
	(void)what;
	if (c->waiting)
		return;
	limits_logx(c->uid, "control connection of uid %u closed: %s for "
	    "%llu s (control-timeout)", (unsigned)c->uid, c->r == NULL ?
	    "no request" : "its reply was not read",
	    (unsigned long long)cfg.limit[LIMIT_CONTROL_TIMEOUT]);
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
	event_assign(c->ev, ctl_base, c->fd,
	    EV_READ | (c->out != NULL ? EV_WRITE : 0) | EV_PERSIST,
	    control_io_cb, c);
	(void)event_priority_set(c->ev, LOOP_PRI_FIRST);
	event_add(c->ev, NULL);
}

/*
 * Queue one message of c's reply: a header of 'type', body, then text
 * (cut to fit a message).  Lines past the uid's limit are dropped, and
 * from then on the reply is cut (ctlconn_cut()); the end message always
 * goes out, to say so.  Written by ctlconn_ended() or as the socket
 * takes it.  Returns 0 if it is queued, -1 if it was dropped (cut, or
 * out of memory: logged).
 */
int
ctlconn_send(struct ctlconn *c, uint32_t type, const void *body,
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
			return -1;
		}
	} else
		limits_force(c->uid, LIMIT_CONTROL_OUTPUT, len);
	o = malloc(sizeof(*o) + len);
	if (o == NULL) {
		limits_put(c->uid, LIMIT_CONTROL_OUTPUT, len, 0);
		log_warn("control reply");
		if (type != TRACED_MSG_CTL_END)
			c->cut = 1;	/* the end says the reply is short */
		return -1;
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
	return 0;
}

/* Is c's reply over its uid's limit, its lines dropped? */
int
ctlconn_cut(const struct ctlconn *c)
{
	return c->cut;
}

/* The peer's uid. */
uid_t
ctlconn_uid(const struct ctlconn *c)
{
	return c->uid;
}

/* c's reply waits (on), or no longer: its idle timeout is off meanwhile. */
void
ctlconn_waiting(struct ctlconn *c, int on)
{
	c->waiting = on;
	ctlconn_touch(c);
}

/* CTL_END is queued: write it, then close (c and its reply may go). */
void
ctlconn_ended(struct ctlconn *c)
{
	c->ended = 1;
	ctlconn_write(c);
}

static void
control_request(struct ctlconn *c)
{
	_Alignas(8) char buf[TRACED_MSG_MAX];
	struct wire_msg m;
	const char *why = NULL;
	struct reply *r;
	ssize_t n;
	int rc;

	n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		ctlconn_free(c);
		return;
	}
	rc = wire_decode(buf, (size_t)n, 0, &m, &why);
	r = reply_new(c, rc == 0 && m.type == TRACED_MSG_CTL_REQUEST &&
	    (m.u.ctl_request->flags & TRACED_CTL_JSON) != 0);
	if (r == NULL) {
		ctlconn_free(c);
		return;
	}
	c->r = r;
	if (rc != 0 || m.type != TRACED_MSG_CTL_REQUEST) {
		reply_error(r, "bad request: %s",
		    m.type != TRACED_MSG_CTL_REQUEST && why == NULL ?
		    "not a request" : why);
		reply_status(r, TRACED_CTL_USAGE);
		reply_end(r);
		return;
	}
	ctlconn_touch(c);	/* now its reply's reading is timed */
	/* A uid whose replies wait unread gets no new work done. */
	if (limits_held(c->uid, LIMIT_CONTROL_OUTPUT) >=
	    cfg.limit[LIMIT_CONTROL_OUTPUT]) {
		c->cut = 1;
		reply_status(r, TRACED_CTL_ERROR);
		reply_end(r);
		return;
	}
	reply_status(r, (uint32_t)cmd_exec(r, (int)m.u.ctl_request->argc,
	    (char **)m.argv, c->uid, c->gid, c->groups, c->ngroups));
	if (!reply_waiting(r))
		reply_end(r);
	else
		replies_check();	/* done already, maybe */
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
			/*
			 * One request per connection: EOF (or an error)
			 * ends it, anything more it sends is dropped.
			 * recv() leaves errno as it was when it returns
			 * 0: only -1 may be "not now".
			 */
			char junk[64];
			ssize_t n = recv(c->fd, junk, sizeof(junk),
			    MSG_DONTWAIT);

			if (n == 0 || (n == -1 && errno != EAGAIN &&
			    errno != EINTR))
				ctlconn_free(c);
			return;
		}
		control_request(c);
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
	char why[512];
	int fd;

	(void)what;
	(void)arg;
	if ((fd = sock_accept(ctl_base, lfd, ctl_ev, "control",
	    &cred)) == -1)
		return;
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
	c->ev = event_new(ctl_base, fd, EV_READ | EV_PERSIST, control_io_cb,
	    c);
	c->timer = evtimer_new(ctl_base, ctlconn_timeout_cb, c);
	if (c->ev == NULL || c->timer == NULL) {
		log_warnx("control: libevent: out of memory");
		if (c->ev != NULL)
			event_free(c->ev);
		if (c->timer != NULL)
			event_free(c->timer);
		free(c);
		limits_put(cred.uid, LIMIT_CONTROL_CONNS, 1, 1);
		close(fd);
		return;
	}
	/* Before clients' work (sock.h). */
	(void)event_priority_set(c->ev, LOOP_PRI_FIRST);
	(void)event_priority_set(c->timer, LOOP_PRI_FIRST);
	event_add(c->ev, NULL);
	TAILQ_INSERT_TAIL(&ctlconns, c, entry);
	ctlconn_touch(c);
}

/* Watch the listening control socket fd in the loop of base.  0 or -1. */
int
control_listen(struct event_base *base, int fd)
{
	ctl_base = base;
	reply_init(base);
	ctl_ev = event_new(base, fd, EV_READ | EV_PERSIST, control_accept_cb,
	    NULL);
	if (ctl_ev == NULL ||
	    event_priority_set(ctl_ev, LOOP_PRI_FIRST) == -1 ||
	    event_add(ctl_ev, NULL) == -1)
		return -1;
	return 0;
}

/*
 * At shutdown (everything was drained): replies that wait end now, then
 * every connection closes.
 */
void
control_close_all(void)
{
	struct ctlconn *c;

	replies_shutdown();
	while ((c = TAILQ_FIRST(&ctlconns)) != NULL)
		ctlconn_free(c);
	if (ctl_ev != NULL)
		event_free(ctl_ev);
	ctl_ev = NULL;
}
