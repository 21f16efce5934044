/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The reply builder: what a command handler answers, as control.c
 * sends it (zero or more CTL_LINE messages and one CTL_END,
 * proto/wire.h).
 *
 * Lines for people (reply_line()), or with --json one JSON object per
 * line (reply_item()), built and written by jansson, never by hand: the
 * text in them comes from clients.  In JSON, counts are numbers, exact
 * up to 2^53; times in nanoseconds are strings of digits (jns()), which
 * jq and JavaScript would otherwise round; a value nobody knows is
 * null.  A reply past its uid's control-output-per-uid is cut short
 * (control.c drops the lines); its end says so, as an error.
 *
 * A reply that cannot answer at once (a flush waiting for the disk, a
 * trace-func waiting for the processes to carry it out) waits on a
 * predicate (reply_wait()), asked again by replies_check() whenever the
 * daemon's state moves (main.c calls it when the pipeline or a client
 * reports) and once at its timeout, by a timer of its own, so that a
 * client that never answers cannot hold it.
 *
 * Loop thread only.
 */
#include <sys/queue.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "cause.h"
#include "cmd.h"
#include "limits.h"
#include "log.h"
#include "ring.h"
#include "sock.h"
#include "text.h"
#include "wire.h"

struct reply {
	struct ctlconn	*c;		/* borrowed: its connection */
	int		 json;		/* --json */
	unsigned	 count;		/* lines sent */
	int		 oom;		/* an item could not be made: the
					   reply is short, and fails */
	int		 sees_all;	/* the peer may see every uid's
					   sessions (cmd_exec()), else its own */
	uint32_t	 status;	/* TRACED_CTL_* */
	char		 msg[1024];	/* the end line */
	reply_wait_cb	 wait_cb;	/* waiting for it to say done */
	void		*wait_arg;
	struct event	*timer;		/* the wait's timeout, if any */
	TAILQ_ENTRY(reply) entry;	/* waiting, while wait_cb */
};

static TAILQ_HEAD(, reply) waiting = TAILQ_HEAD_INITIALIZER(waiting);
static struct event_base *reply_base;

/* The loop waits' timers run in.  Once, at start. */
void
reply_init(struct event_base *base)
{
	reply_base = base;
}

/* A new reply on connection c; NULL when out of memory. */
struct reply *
reply_new(struct ctlconn *c, int json)
{
	struct reply *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->c = c;
	r->json = json;
	r->status = TRACED_CTL_OK;
	return r;
}

/* Stop waiting: the predicate is not asked again. */
static void
reply_unwait(struct reply *r)
{
	if (r->wait_cb == NULL)
		return;
	TAILQ_REMOVE(&waiting, r, entry);
	r->wait_cb = NULL;
	if (r->timer != NULL)
		event_free(r->timer);
	r->timer = NULL;
	ctlconn_waiting(r->c, 0);
}

/*
 * Free r, its connection gone (control.c): a wait is told (cb with r
 * NULL) so that it frees what it holds.
 */
void
reply_free(struct reply *r)
{
	reply_wait_cb cb;
	void *arg;

	if (r == NULL)
		return;
	cb = r->wait_cb;
	arg = r->wait_arg;
	reply_unwait(r);
	if (cb != NULL)
		(void)cb(NULL, arg, 1);
	free(r);
}

/* Did the peer ask for --json? */
int
reply_json(const struct reply *r)
{
	return r->json;
}

/* cmd_exec() says whether the peer may see every uid's sessions. */
void
reply_set_sees_all(struct reply *r, int all)
{
	r->sees_all = all;
}

/*
 * May the peer see what a session of uid 'owner' did?  Its own, or
 * every one for root, the daemon's uid and its group (cmd.c).
 */
int
reply_may_see(const struct reply *r, uid_t owner)
{
	return r->sees_all || ctlconn_uid(r->c) == owner;
}

void
reply_line(struct reply *r, const char *fmt, ...)
{
	char buf[TRACED_MSG_MAX];
	va_list ap;
	int n;

	if (reply_cut(r))	/* over the limit: not even formatted */
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	/* The end's count is of the lines that went out (tracectl checks). */
	if (ctlconn_send(r->c, TRACED_MSG_CTL_LINE, NULL, 0, buf,
	    (size_t)n) == 0)
		r->count++;
}

/*
 * One item of a --json reply: 'o' (stolen) as one compact line.  The
 * library writes it, so it is valid JSON whatever it holds; NULL (out
 * of memory building it) cuts the reply short, and says so.
 */
void
reply_item(struct reply *r, json_t *o)
{
	char *text;

	if (reply_cut(r)) {	/* over the limit: not formatted */
		json_decref(o);
		return;
	}
	text = o != NULL ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) :
	    NULL;
	json_decref(o);
	if (text == NULL) {
		r->oom = 1;	/* nothing more: reply_end() says why */
		return;
	}
	if (ctlconn_send(r->c, TRACED_MSG_CTL_LINE, NULL, 0, text,
	    strlen(text)) == 0)
		r->count++;
	free(text);
}

/* The end line, and the reply failed (unless it had a status already). */
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

/* The end line of a reply that did what it was asked. */
void
reply_message(struct reply *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
}

/* The reply's status: TRACED_CTL_* (what the handler returned). */
void
reply_status(struct reply *r, uint32_t status)
{
	r->status = status;
}

/* Has the handler reported an error? */
int
reply_failed(const struct reply *r)
{
	return r->status != TRACED_CTL_OK;
}

/*
 * Is the reply over its uid's control-output-per-uid, or short of an
 * item memory could not hold, so that further lines are dropped?
 * Handlers of long listings stop there.
 */
int
reply_cut(const struct reply *r)
{
	return r->oom || ctlconn_cut(r->c);
}

/* Does the reply wait (reply_wait())? */
int
reply_waiting(const struct reply *r)
{
	return r->wait_cb != NULL;
}

/*
 * Send CTL_END: the status and the end line, with the count of lines.
 * The connection closes once it is written; r may be gone then.
 */
void
reply_end(struct reply *r)
{
	struct {
		uint32_t status;
		uint32_t count;
	} body = { r->status, r->count };
	uid_t uid;

	reply_unwait(r);
	if (ctlconn_cut(r->c)) {
		uid = ctlconn_uid(r->c);
		body.status = TRACED_CTL_ERROR;
		snprintf(r->msg, sizeof(r->msg), "reply cut short after %u "
		    "lines: uid %u has %llu bytes of replies waiting to be "
		    "read, its control-output-per-uid limit (see traced(8))",
		    r->count, (unsigned)uid, (unsigned long long)
		    limits_held(uid, LIMIT_CONTROL_OUTPUT));
	} else if (r->oom) {
		body.status = TRACED_CTL_ERROR;
		snprintf(r->msg, sizeof(r->msg), "out of memory: the reply "
		    "was cut short after %u lines", r->count);
	}
	ctlconn_send(r->c, TRACED_MSG_CTL_END, &body, sizeof(body), r->msg,
	    strlen(r->msg));
	ctlconn_ended(r->c);		/* may free r */
}

/* Ask r's predicate; end r if it says done. */
static void
reply_ask(struct reply *r, int timed_out)
{
	if (r->wait_cb(r, r->wait_arg, timed_out) || timed_out)
		reply_end(r);
}

static void
reply_timeout_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	reply_ask(arg, 1);
}

/*
 * Make r wait for cb (see reply_wait_cb in cmd.h): asked by
 * replies_check(), and once with timed_out 1 after timeout_ms (0: no
 * timeout; only the daemon's stop ends it then).  The connection's
 * idle timeout does not run meanwhile: the wait decides.
 */
void
reply_wait(struct reply *r, reply_wait_cb cb, void *arg, unsigned timeout_ms)
{
	struct timeval tv = { (time_t)(timeout_ms / 1000),
	    (long)(timeout_ms % 1000) * 1000 };

	r->wait_cb = cb;
	r->wait_arg = arg;
	TAILQ_INSERT_TAIL(&waiting, r, entry);
	ctlconn_waiting(r->c, 1);
	if (timeout_ms == 0)
		return;
	r->timer = evtimer_new(reply_base, reply_timeout_cb, r);
	if (r->timer != NULL)
		(void)event_priority_set(r->timer, LOOP_PRI_FIRST);
	if (r->timer == NULL || evtimer_add(r->timer, &tv) == -1)
		log_warnx("control: no timer for a reply that waits: it waits "
		    "for the daemon's state to move");
}

/* End every waiting reply whose predicate says it is done. */
void
replies_check(void)
{
	struct reply *r, *next;

	for (r = TAILQ_FIRST(&waiting); r != NULL; r = next) {
		next = TAILQ_NEXT(r, entry);
		reply_ask(r, 0);
	}
}

/* The daemon stops (everything was drained): every wait ends now. */
void
replies_shutdown(void)
{
	struct reply *r;

	while ((r = TAILQ_FIRST(&waiting)) != NULL)
		reply_ask(r, 1);
}

/* ---- JSON values ------------------------------------------------- */

/*
 * A JSON string of s, or null for NULL.  Client text was made valid
 * UTF-8 at the door; anything else is escaped here rather than lost.
 */
json_t *
jstr(const char *s)
{
	char buf[4096];
	json_t *j;

	if (s == NULL)
		return json_null();
	if ((j = json_string(s)) != NULL)
		return j;
	return json_string(text_escape(buf, sizeof(buf), s));
}

/* A time in nanoseconds, exact: a string of digits, or null for 0. */
json_t *
jns(uint64_t ns)
{
	char buf[32];

	if (ns == 0)
		return json_null();
	snprintf(buf, sizeof(buf), "%" PRIu64, ns);
	return json_string(buf);
}

/* A count. */
json_t *
jnum(uint64_t v)
{
	return json_integer((json_int_t)v);
}

/* Losses by cause as an object, every cause present. */
json_t *
jcauses(const uint64_t *lost)
{
	json_t *o = json_object();
	int i;

	for (i = 0; o != NULL && i < TRACED_DROP_NCAUSES; i++)
		json_object_set_new(o, traced_cause_name(i), jnum(lost[i]));
	return o;
}

/*
 * Losses by cause for people into buf, "ring_full 3, nested 1" (causes
 * with none left out).  Returns the total.
 */
uint64_t
format_causes(char *buf, size_t size, const uint64_t *lost)
{
	uint64_t total = 0;
	size_t o = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < TRACED_DROP_NCAUSES; i++) {
		total += lost[i];
		if (lost[i] == 0 || o >= size)
			continue;
		o += (size_t)snprintf(buf + o, size - o, "%s%s %" PRIu64,
		    o ? ", " : "", traced_cause_name(i), lost[i]);
	}
	return total;
}
