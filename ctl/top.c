/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * tracectl top: ask the daemon for its running totals (info counters)
 * every -d seconds and show what moved in between, as perf top and
 * lttng-top do: events per second by event name, by thread and by
 * session, losses by cause, each thread's ring fill and what the daemon
 * itself costs (its CPU time, by thread, and per event written).
 *
 * The daemon keeps no state for a viewer: each answer is totals, and a
 * rate is the difference of two answers over the daemon's own clock
 * between them.  A thread, event or session missing from the answer
 * before started since (its count began at zero then); one whose count
 * went back is a new one under the same key (a restarted daemon).
 *
 * Everything in an answer comes from another process: it is parsed
 * with jansson, every field checked for its type, and text shown on
 * the terminal goes through text_escape().  An answer that does not
 * come (no daemon, a daemon gone) is not an error on the screen: top
 * says so and asks again at the next tick.  top-tui.c draws; this file
 * asks, computes, renders lines and prints them for scripts.
 */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cause.h"
#include "rule.h"
#include "text.h"
#include "top.h"
#include "tracectl.h"

/* The longest an answer may take before top says the daemon is gone. */
#define TOP_ASK_TIMEOUT		5	/* s */
#define TOP_DELAY_MIN		0.1	/* s */
#define TOP_DELAY_MAX		3600.0

const char *const top_sort_names[TOP_SORT_COUNT] = {
	[TOP_SORT_RATE] = "rate",
	[TOP_SORT_TOTAL] = "total",
	[TOP_SORT_LOST] = "lost",
	[TOP_SORT_NAME] = "name",
};

/* ---- one answer ---------------------------------------------------- */

struct snap_session {
	uint32_t	 id;
	int		 pid;
	char		 comm[64];
	unsigned	 threads;
	uint64_t	 events;
	uint64_t	 counted;	/* ns: the daemon counted them */
	uint64_t	 lost[TRACED_DROP_NCAUSES];
	int		 shown;		/* passes the filter */
};

struct snap_thread {
	uint32_t	 session;
	int		 tid;
	uint64_t	 events, lost;
	unsigned	 fill;
	uint64_t	 counted;
};

struct snap_event {
	uint32_t	 session;
	char		 name[160];	/* provider:event */
	uint64_t	 events;
};

struct snap_cpu {
	char		 name[32];
	uint64_t	 ns;
};

/* The daemon's totals at one moment (info counters). */
struct top_snap {
	uint64_t	 now_ns;	/* the daemon's CLOCK_MONOTONIC */
	uint64_t	 cpu_ns;
	uint64_t	 events_all;
	struct snap_session *ss;
	size_t		 nss;
	struct snap_thread *th;
	size_t		 nth;
	struct snap_event *ev;
	size_t		 nev;
	struct snap_cpu	*cpu;
	size_t		 ncpu;
};

static void
snap_free(struct top_snap *s)
{
	if (s == NULL)
		return;
	free(s->ss);
	free(s->th);
	free(s->ev);
	free(s->cpu);
	free(s);
}

/* A count: a number, or a string of digits (times in ns). */
static uint64_t
jget_u64(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	const char *s;

	if (json_is_integer(v))
		return json_integer_value(v) > 0 ?
		    (uint64_t)json_integer_value(v) : 0;
	if (json_is_string(v)) {
		s = json_string_value(v);
		if (s[0] >= '0' && s[0] <= '9')
			return strtoull(s, NULL, 10);
	}
	return 0;
}

/* Text from the daemon, made safe for a terminal. */
static void
jget_str(const json_t *o, const char *key, char *buf, size_t size)
{
	const char *s = json_string_value(json_object_get(o, key));
	char tmp[512];

	snprintf(buf, size, "%s", s != NULL ? text_escape(tmp, sizeof(tmp),
	    s) : "?");
}

/* Grow an array of n elements of size sz by one; NULL when out of memory. */
static void *
grow(void *p, size_t *n, size_t sz)
{
	char *q = realloc(p, (*n + 1) * sz);

	if (q == NULL)
		return NULL;
	memset(q + *n * sz, 0, sz);
	(*n)++;
	return q;
}

static int
snap_add(struct top_snap *s, const json_t *o)
{
	const char *type = json_string_value(json_object_get(o, "type"));
	const json_t *by;
	char prov[64], name[96];
	void *p;
	int i;

	if (type == NULL)
		return 0;
	if (strcmp(type, "daemon") == 0) {
		s->now_ns = jget_u64(o, "now_ns");
		s->cpu_ns = jget_u64(o, "cpu_ns");
		s->events_all = jget_u64(o, "events_all");
	} else if (strcmp(type, "daemon_thread") == 0) {
		if ((p = grow(s->cpu, &s->ncpu, sizeof(*s->cpu))) == NULL)
			return -1;
		s->cpu = p;
		jget_str(o, "name", s->cpu[s->ncpu - 1].name,
		    sizeof(s->cpu->name));
		s->cpu[s->ncpu - 1].ns = jget_u64(o, "cpu_ns");
	} else if (strcmp(type, "session") == 0) {
		struct snap_session *x;

		if ((p = grow(s->ss, &s->nss, sizeof(*s->ss))) == NULL)
			return -1;
		s->ss = p;
		x = &s->ss[s->nss - 1];
		x->id = (uint32_t)jget_u64(o, "session");
		x->pid = (int)jget_u64(o, "pid");
		jget_str(o, "comm", x->comm, sizeof(x->comm));
		x->threads = (unsigned)jget_u64(o, "threads");
		x->counted = jget_u64(o, "counted_ns");
		x->events = jget_u64(o, "events");
		by = json_object_get(o, "lost_by_cause");
		for (i = 0; i < TRACED_DROP_NCAUSES; i++)
			x->lost[i] = jget_u64(by, traced_cause_name(i));
	} else if (strcmp(type, "thread") == 0) {
		struct snap_thread *x;

		if ((p = grow(s->th, &s->nth, sizeof(*s->th))) == NULL)
			return -1;
		s->th = p;
		x = &s->th[s->nth - 1];
		x->session = (uint32_t)jget_u64(o, "session");
		x->tid = (int)jget_u64(o, "tid");
		x->events = jget_u64(o, "events");
		x->lost = jget_u64(o, "lost");
		x->fill = (unsigned)jget_u64(o, "fill_percent");
		x->counted = jget_u64(o, "counted_ns");
	} else if (strcmp(type, "event") == 0) {
		struct snap_event *x;

		if ((p = grow(s->ev, &s->nev, sizeof(*s->ev))) == NULL)
			return -1;
		s->ev = p;
		x = &s->ev[s->nev - 1];
		x->session = (uint32_t)jget_u64(o, "session");
		jget_str(o, "provider", prov, sizeof(prov));
		jget_str(o, "name", name, sizeof(name));
		snprintf(x->name, sizeof(x->name), "%s:%s", prov, name);
		x->events = jget_u64(o, "events");
	}
	return 0;
}

/*
 * Ask the daemon for its totals: t->cur becomes the new answer, the
 * one before t->prev.  Returns 0, or an exit status with the reason in
 * t->view.error (and no answer kept: the next rates start afresh).
 */
int
top_ask(struct top *t)
{
	char info[] = "info", counters[] = "counters";
	char *argv[] = { info, counters, NULL };
	struct top_snap *s;
	json_t *items;
	size_t i;
	int ret;

	ret = ctl_query(t->rdir, 2, argv, TOP_ASK_TIMEOUT, (struct json_t **)
	    &items, t->view.error, sizeof(t->view.error));
	if (ret == 0 && (s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(t->view.error, sizeof(t->view.error),
		    "out of memory");
		ret = EXIT_FAILED;
	}
	if (ret != 0) {
		json_decref(items);
		snap_free(t->prev);
		snap_free(t->cur);
		t->prev = t->cur = NULL;
		t->view.reachable = 0;
		return ret;
	}
	for (i = 0; i < json_array_size(items); i++)
		if (snap_add(s, json_array_get(items, i)) == -1)
			break;
	json_decref(items);
	snap_free(t->prev);
	t->prev = t->cur;
	t->cur = s;
	t->view.reachable = 1;
	t->view.error[0] = '\0';
	return 0;
}

/* ---- rates ---------------------------------------------------------- */

static double
rate_of(uint64_t now, uint64_t before, double interval)
{
	if (now < before)
		before = 0;		/* a new one under the same key */
	return interval > 0 ? (double)(now - before) / interval : 0;
}

/*
 * What a count's rate divides by: the time between the daemon's two
 * counts of it, which follow the drain's reads (a rate over the asks'
 * interval would be off by one read's worth, up to 10 % at a second),
 * when that time is near the asks' interval; else the asks'.
 */
static double
counted_interval(uint64_t now, uint64_t before, double asks)
{
	double d;

	if (now == 0 || before == 0 || now <= before)
		return asks;
	d = (double)(now - before) / 1e9;
	return d >= asks / 2 && d <= asks * 2 ? d : asks;
}

static const struct snap_session *
prev_session(const struct top_snap *p, uint32_t id)
{
	size_t i;

	for (i = 0; p != NULL && i < p->nss; i++)
		if (p->ss[i].id == id)
			return &p->ss[i];
	return NULL;
}

static const struct snap_session *
cur_session(const struct top_snap *s, uint32_t id)
{
	return prev_session(s, id);
}

static const struct snap_thread *
prev_thread(const struct top_snap *p, uint32_t session, int tid)
{
	size_t i;

	for (i = 0; p != NULL && i < p->nth; i++)
		if (p->th[i].session == session && p->th[i].tid == tid)
			return &p->th[i];
	return NULL;
}

static uint64_t
prev_event(const struct top_snap *p, uint32_t session, const char *name)
{
	size_t i;

	for (i = 0; p != NULL && i < p->nev; i++)
		if (p->ev[i].session == session &&
		    strcmp(p->ev[i].name, name) == 0)
			return p->ev[i].events;
	return 0;
}

/* Does an event of a session pass the filter (its name or the comm)? */
static int
event_shown(const struct top *t, const char *name, const char *comm)
{
	char scope[160];
	const char *colon;

	if (t->filter[0] == '\0' || fnmatch(t->filter, comm, 0) == 0)
		return 1;
	if ((colon = strchr(name, ':')) == NULL)
		return rule_match(t->filter, NULL, name);
	snprintf(scope, sizeof(scope), "%.*s", (int)(colon - name), name);
	return rule_match(t->filter, scope, colon + 1);
}

/* Mark the sessions the filter shows: by comm, or by one of its events. */
static void
sessions_filter(const struct top *t, struct top_snap *s)
{
	size_t i, k;

	for (i = 0; i < s->nss; i++) {
		s->ss[i].shown = t->filter[0] == '\0' ||
		    fnmatch(t->filter, s->ss[i].comm, 0) == 0;
		for (k = 0; k < s->nev && !s->ss[i].shown; k++)
			if (s->ev[k].session == s->ss[i].id &&
			    event_shown(t, s->ev[k].name, s->ss[i].comm))
				s->ss[i].shown = 1;
	}
}

static struct top_row *
row_add(struct top_rows *r)
{
	void *p = grow(r->v, &r->n, sizeof(*r->v));

	if (p == NULL)
		return NULL;
	r->v = p;
	return &r->v[r->n - 1];
}

/* A session's rate: its threads', each over its own counts' interval. */
static double
threads_rate(const struct top *t, uint32_t session)
{
	double r = 0;
	size_t i;

	for (i = 0; i < t->view.threads.n; i++)
		if (t->view.threads.v[i].session == session)
			r += t->view.threads.v[i].rate;
	return r;
}

/*
 * An event's rate in a session: its share of the session's events
 * since the last answer, of the session's rate (the counts by event
 * are the session's, taken at its threads' different times).
 */
static double
session_share(const struct top *t, const struct snap_session *ss,
    const struct snap_session *ps, uint64_t n)
{
	uint64_t all = ss->events - (ps != NULL && ps->events <= ss->events ?
	    ps->events : 0);

	if (all == 0 || n > all)
		return n > all ? threads_rate(t, ss->id) : 0;
	return threads_rate(t, ss->id) * (double)n / (double)all;
}

/* Events by name, summed over the shown sessions. */
static void
compute_events(struct top *t)
{
	const struct top_snap *s = t->cur;
	const struct snap_session *ss, *ps;
	struct top_row *row;
	size_t i, k;

	for (i = 0; i < s->nev; i++) {
		ss = cur_session(s, s->ev[i].session);
		if (ss == NULL || !ss->shown ||
		    !event_shown(t, s->ev[i].name, ss->comm))
			continue;
		row = NULL;
		for (k = 0; k < t->view.events.n; k++)
			if (strcmp(t->view.events.v[k].name,
			    s->ev[i].name) == 0)
				row = &t->view.events.v[k];
		if (row == NULL) {
			if ((row = row_add(&t->view.events)) == NULL)
				return;
			snprintf(row->name, sizeof(row->name), "%s",
			    s->ev[i].name);
		}
		row->total += s->ev[i].events;
		ps = prev_session(t->prev, ss->id);
		row->rate += session_share(t, ss, ps, s->ev[i].events -
		    prev_event(t->prev, ss->id, s->ev[i].name));
		row->count++;
	}
}

static void
compute_threads(struct top *t, double dt)
{
	const struct top_snap *s = t->cur;
	const struct snap_session *ss;
	const struct snap_thread *pt;
	struct top_row *row;
	size_t i;

	for (i = 0; i < s->nth; i++) {
		ss = cur_session(s, s->th[i].session);
		if (ss == NULL || !ss->shown ||
		    (row = row_add(&t->view.threads)) == NULL)
			continue;
		snprintf(row->name, sizeof(row->name), "%s", ss->comm);
		row->session = ss->id;
		row->pid = ss->pid;
		row->tid = s->th[i].tid;
		row->total = s->th[i].events;
		pt = prev_thread(t->prev, row->session, row->tid);
		row->rate = rate_of(row->total, pt ? pt->events : 0,
		    counted_interval(s->th[i].counted, pt ? pt->counted : 0,
		    dt));
		row->lost = s->th[i].lost;
		row->fill = s->th[i].fill;
	}
}

static void
compute_sessions(struct top *t, double dt)
{
	const struct snap_session *ss, *ps;
	struct top_row *row;
	uint64_t lost, plost;
	size_t i;
	int c;

	for (i = 0; i < t->cur->nss; i++) {
		ss = &t->cur->ss[i];
		if (!ss->shown || (row = row_add(&t->view.sessions)) == NULL)
			continue;
		ps = prev_session(t->prev, ss->id);
		snprintf(row->name, sizeof(row->name), "%s", ss->comm);
		row->session = ss->id;
		row->pid = ss->pid;
		row->count = ss->threads;
		row->total = ss->events;
		row->rate = threads_rate(t, ss->id);
		lost = plost = 0;
		for (c = 0; c < TRACED_DROP_NCAUSES; c++) {
			lost += ss->lost[c];
			plost += ps ? ps->lost[c] : 0;
			t->view.lost[c] += ss->lost[c];
			t->view.lost_rate[c] += rate_of(ss->lost[c],
			    ps ? ps->lost[c] : 0, dt);
		}
		row->lost = lost;
		row->lost_rate = rate_of(lost, plost, dt);
	}
}

/* The daemon's threads by name ("traced-" left out), busiest first. */
static void
compute_cpu(struct top *t, double dt)
{
	const struct top_snap *s = t->cur, *p = t->prev;
	struct top_cpu *c;
	const char *name;
	size_t i, k;
	uint64_t before;

	for (i = 0; i < s->ncpu; i++) {
		name = s->cpu[i].name;
		if (strncmp(name, "traced-", 7) == 0)
			name += 7;
		before = 0;
		for (k = 0; p != NULL && k < p->ncpu; k++)
			if (strcmp(p->cpu[k].name, s->cpu[i].name) == 0)
				before += p->cpu[k].ns;
		c = NULL;
		for (k = 0; k < t->view.ncpu; k++)
			if (strcmp(t->view.cpu[k].name, name) == 0)
				c = &t->view.cpu[k];
		if (c == NULL) {
			if ((c = grow(t->view.cpu, &t->view.ncpu,
			    sizeof(*c))) == NULL)
				return;
			t->view.cpu = c;
			c = &t->view.cpu[t->view.ncpu - 1];
			snprintf(c->name, sizeof(c->name), "%s", name);
		}
		/* Same-named threads: their sum now against their sum then
		 * (each counted once: the first of the name takes it). */
		if (c->n++ == 0)
			c->percent = -(double)before;
		c->percent += (double)s->cpu[i].ns;
	}
	for (k = 0; k < t->view.ncpu; k++) {
		c = &t->view.cpu[k];
		c->percent = dt > 0 && c->percent > 0 ?
		    c->percent / 1e9 / dt * 100 : 0;
	}
}

static int
cmp_cpu(const void *a, const void *b)
{
	const struct top_cpu *x = a, *y = b;

	return x->percent < y->percent ? 1 : x->percent > y->percent ? -1 :
	    strcmp(x->name, y->name);
}

static enum top_sort	sort_key;
static int		sort_reverse;

static int
cmp_row(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	int r = 0;

	switch (sort_key) {
	case TOP_SORT_LOST:
		r = x->lost < y->lost ? 1 : x->lost > y->lost ? -1 : 0;
		if (r != 0)
			break;
		/* FALLTHROUGH */
	case TOP_SORT_RATE:
		r = x->rate < y->rate ? 1 : x->rate > y->rate ? -1 : 0;
		if (r != 0)
			break;
		/* FALLTHROUGH */
	case TOP_SORT_TOTAL:
		r = x->total < y->total ? 1 : x->total > y->total ? -1 : 0;
		break;
	case TOP_SORT_NAME:
	case TOP_SORT_COUNT:
		break;
	}
	if (sort_reverse)
		r = -r;
	if (r == 0)
		r = strcmp(x->name, y->name);
	if (r == 0)
		r = x->session < y->session ? -1 : x->session > y->session;
	if (r == 0)
		r = x->tid < y->tid ? -1 : x->tid > y->tid;
	return r;
}

/* Sort rows by sort_key (qsort() must not see the NULL of no rows). */
static void
rows_sort(struct top_rows *r)
{
	if (r->n > 0)
		qsort(r->v, r->n, sizeof(*r->v), cmp_row);
}

static void
rows_reset(struct top_rows *r)
{
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

/*
 * The view from the last two answers: rates over the daemon's clock
 * between them, filtered and sorted.  With one answer, totals only.
 */
void
top_compute(struct top *t)
{
	struct top_view *v = &t->view;
	double dt = 0;

	rows_reset(&v->events);
	rows_reset(&v->threads);
	rows_reset(&v->sessions);
	free(v->cpu);
	v->cpu = NULL;
	v->ncpu = 0;
	memset(v->lost, 0, sizeof(v->lost));
	memset(v->lost_rate, 0, sizeof(v->lost_rate));
	v->rated = 0;
	v->cpu_percent = v->events_rate = 0;
	v->ns_per_event = -1;
	if (t->cur == NULL)
		return;
	if (t->prev != NULL && t->cur->now_ns > t->prev->now_ns) {
		dt = (double)(t->cur->now_ns - t->prev->now_ns) / 1e9;
		v->rated = 1;
		v->interval = dt;
		v->cpu_percent = rate_of(t->cur->cpu_ns, t->prev->cpu_ns, dt) /
		    1e9 * 100;
		v->events_rate = rate_of(t->cur->events_all,
		    t->prev->events_all, dt);
		if (t->cur->events_all > t->prev->events_all)
			v->ns_per_event = (double)(t->cur->cpu_ns -
			    t->prev->cpu_ns) / (double)(t->cur->events_all -
			    t->prev->events_all);
	}
	sessions_filter(t, t->cur);
	compute_threads(t, dt);
	compute_sessions(t, dt);
	compute_events(t);
	compute_cpu(t, dt);
	if (!v->rated) {
		/* One answer: no rate is known, not even a zero. */
		memset(v->lost_rate, 0, sizeof(v->lost_rate));
		v->ncpu = 0;
	}
	if (v->ncpu > 0)
		qsort(v->cpu, v->ncpu, sizeof(*v->cpu), cmp_cpu);
	sort_key = t->sort;
	sort_reverse = t->reverse;
	rows_sort(&v->events);
	rows_sort(&v->threads);
	rows_sort(&v->sessions);
}

/* ---- lines ---------------------------------------------------------- */

static void
line_add(struct top_lines *l, int attr, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
line_add(struct top_lines *l, int attr, const char *fmt, ...)
{
	va_list ap;
	char *s;
	void *p;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;

		if ((p = reallocarray(l->text, cap, sizeof(*l->text))) == NULL)
			return;
		l->text = p;
		if ((p = reallocarray(l->attr, cap, sizeof(*l->attr))) == NULL)
			return;
		l->attr = p;
		l->cap = cap;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) == -1)
		s = NULL;
	va_end(ap);
	if (s == NULL)
		return;
	l->text[l->n] = s;
	l->attr[l->n++] = attr;
}

/* Forget the lines (and keep the arrays for the next render). */
void
top_lines_clear(struct top_lines *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->text[i]);
	l->n = 0;
}

/* A rate for people: one decimal below 100/s. */
static const char *
fmt_rate(char *buf, size_t size, const struct top_view *v, double r)
{
	if (!v->rated)
		snprintf(buf, size, "-");
	else if (r < 100)
		snprintf(buf, size, "%.1f", r);
	else
		snprintf(buf, size, "%.0f", r);
	return buf;
}

static void
render_head(const struct top *t, struct top_lines *l)
{
	const struct top_view *v = &t->view;
	char when[16], buf[512], r[32];
	struct tm tm;
	time_t now = time(NULL);
	size_t i, o = 0;
	int c;

	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	line_add(l, TOP_LINE_TITLE, "traced top - %s  every %.1f s  sort: "
	    "%s%s  filter: %s", when, t->delay, top_sort_names[t->sort],
	    t->reverse ? " (reversed)" : "", t->filter[0] ? t->filter :
	    "(none)");
	if (!v->reachable) {
		line_add(l, TOP_LINE_WARN, "daemon not reachable: %s; asking "
		    "again every %.1f s", v->error, t->delay);
		return;
	}
	buf[0] = '\0';
	for (i = 0; i < v->ncpu && o < sizeof(buf); i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s%s %.1f%%",
		    i ? ", " : "", v->cpu[i].name, v->cpu[i].n > 1 ? "*" : "",
		    v->cpu[i].percent);
	if (!v->rated)
		line_add(l, TOP_LINE_PLAIN, "daemon: waiting for a second "
		    "answer to show rates");
	else if (v->ns_per_event >= 0)
		line_add(l, TOP_LINE_PLAIN, "daemon: cpu %.1f%% (%s)  %.0f "
		    "ns/event  %s events/s written", v->cpu_percent, buf,
		    v->ns_per_event, fmt_rate(r, sizeof(r), v, v->events_rate));
	else
		line_add(l, TOP_LINE_PLAIN, "daemon: cpu %.1f%% (%s)  no "
		    "event written", v->cpu_percent, buf);
	o = 0;
	buf[0] = '\0';
	for (c = 0; c < TRACED_DROP_NCAUSES && o < sizeof(buf); c++)
		if (v->lost[c] > 0)
			o += (size_t)snprintf(buf + o, sizeof(buf) - o,
			    "%s%s %" PRIu64 " (%s/s)", o ? ", " : "",
			    traced_cause_name(c), v->lost[c],
			    fmt_rate(r, sizeof(r), v, v->lost_rate[c]));
	line_add(l, TOP_LINE_PLAIN, "sessions %zu  threads %zu  events %zu  "
	    "lost: %s", v->sessions.n, v->threads.n, v->events.n,
	    buf[0] ? buf : "none");
}

/* At most max rows of a pane (max < 0: all of them). */
static void
render_events(const struct top *t, struct top_lines *l, int max)
{
	const struct top_view *v = &t->view;
	char r[32];
	size_t i;

	line_add(l, TOP_LINE_HEADER, "%-48s %12s %14s %8s", "EVENT",
	    "RATE/s", "TOTAL", "SESSIONS");
	for (i = 0; i < v->events.n && (max < 0 || (int)i < max); i++)
		line_add(l, TOP_LINE_PLAIN, "%-48s %12s %14" PRIu64 " %8u",
		    v->events.v[i].name, fmt_rate(r, sizeof(r), v,
		    v->events.v[i].rate), v->events.v[i].total,
		    v->events.v[i].count);
}

static void
render_threads(const struct top *t, struct top_lines *l, int max)
{
	const struct top_view *v = &t->view;
	const struct top_row *x;
	char r[32], who[200];
	size_t i;

	line_add(l, TOP_LINE_HEADER, "%8s  %-28s %12s %14s %10s %5s", "TID",
	    "SESSION", "RATE/s", "TOTAL", "LOST", "FILL%");
	for (i = 0; i < v->threads.n && (max < 0 || (int)i < max); i++) {
		x = &v->threads.v[i];
		snprintf(who, sizeof(who), "%u %s[%d]", x->session, x->name,
		    x->pid);
		line_add(l, TOP_LINE_PLAIN, "%8d  %-28s %12s %14" PRIu64
		    " %10" PRIu64 " %5u", x->tid, who, fmt_rate(r, sizeof(r),
		    v, x->rate), x->total, x->lost, x->fill);
	}
}

static void
render_sessions(const struct top *t, struct top_lines *l, int max)
{
	const struct top_view *v = &t->view;
	const struct top_row *x;
	char r[32], lr[32];
	size_t i;

	line_add(l, TOP_LINE_HEADER, "%8s %8s  %-16s %7s %12s %14s %10s %9s",
	    "SESSION", "PID", "COMM", "THREADS", "RATE/s", "TOTAL", "LOST",
	    "LOST/s");
	for (i = 0; i < v->sessions.n && (max < 0 || (int)i < max); i++) {
		x = &v->sessions.v[i];
		line_add(l, TOP_LINE_PLAIN, "%8u %8d  %-16s %7u %12s %14"
		    PRIu64 " %10" PRIu64 " %9s", x->session, x->pid, x->name,
		    x->count, fmt_rate(r, sizeof(r), v, x->rate), x->total,
		    x->lost, fmt_rate(lr, sizeof(lr), v, x->lost_rate));
	}
}

/*
 * The lines of the view: three header lines, then the panes.  With a
 * height (the screen's), the panes shown share the rows left but one
 * (the screen's help line); height < 0 renders every row (--once).
 */
void
top_render(const struct top *t, struct top_lines *l, int width,
    int height)
{
	int panes, rows, each;

	(void)width;
	render_head(t, l);
	if (!t->view.reachable)
		return;
	line_add(l, TOP_LINE_PLAIN, "%s", "");
	panes = t->pane == TOP_PANE_ALL ? 3 : 1;
	rows = height < 0 ? -1 : height - (int)l->n - 1;
	/* Each pane: its header, its rows, a blank line. */
	each = rows < 0 ? -1 : rows / panes - 2;
	if (rows >= 0 && each < 1)
		each = 1;
	if (t->pane == TOP_PANE_ALL || t->pane == TOP_PANE_EVENTS) {
		render_events(t, l, each);
		if (t->pane == TOP_PANE_ALL)
			line_add(l, TOP_LINE_PLAIN, "%s", "");
	}
	if (t->pane == TOP_PANE_ALL || t->pane == TOP_PANE_THREADS) {
		render_threads(t, l, each);
		if (t->pane == TOP_PANE_ALL)
			line_add(l, TOP_LINE_PLAIN, "%s", "");
	}
	if (t->pane == TOP_PANE_ALL || t->pane == TOP_PANE_SESSIONS)
		render_sessions(t, l, each);
}

/* ---- for scripts ------------------------------------------------------ */

static json_t *
jrate(const struct top_view *v, double r)
{
	return v->rated ? json_real(round(r * 10) / 10) : json_null();
}

static json_t *
rows_json(const struct top_view *v, const struct top_rows *rs, int kind)
{
	json_t *a = json_array(), *o;
	const struct top_row *x;
	size_t i;

	for (i = 0; a != NULL && i < rs->n; i++) {
		x = &rs->v[i];
		if (kind == TOP_PANE_EVENTS)
			o = json_pack("{s:s, s:o, s:I, s:I}", "name", x->name,
			    "rate", jrate(v, x->rate), "total",
			    (json_int_t)x->total, "sessions",
			    (json_int_t)x->count);
		else if (kind == TOP_PANE_THREADS)
			o = json_pack("{s:I, s:i, s:s, s:i, s:o, s:I, s:I, "
			    "s:I}", "session", (json_int_t)x->session, "tid",
			    x->tid, "comm", x->name, "pid", x->pid, "rate",
			    jrate(v, x->rate), "total", (json_int_t)x->total,
			    "lost", (json_int_t)x->lost, "fill_percent",
			    (json_int_t)x->fill);
		else
			o = json_pack("{s:I, s:i, s:s, s:I, s:o, s:I, s:I, "
			    "s:o}", "session", (json_int_t)x->session, "pid",
			    x->pid, "comm", x->name, "threads",
			    (json_int_t)x->count, "rate", jrate(v, x->rate),
			    "total", (json_int_t)x->total, "lost",
			    (json_int_t)x->lost, "lost_rate",
			    jrate(v, x->lost_rate));
		json_array_append_new(a, o);
	}
	return a;
}

/* One snapshot as one JSON document on one line. */
static void
print_json(const struct top *t)
{
	const struct top_view *v = &t->view;
	json_t *o, *cpu, *lost;
	char *text;
	size_t i;
	int c;

	cpu = json_array();
	for (i = 0; cpu != NULL && i < v->ncpu; i++)
		json_array_append_new(cpu, json_pack("{s:s, s:i, s:o}",
		    "name", v->cpu[i].name, "threads", (int)v->cpu[i].n,
		    "cpu_percent", jrate(v, v->cpu[i].percent)));
	lost = json_object();
	for (c = 0; lost != NULL && c < TRACED_DROP_NCAUSES; c++)
		json_object_set_new(lost, traced_cause_name(c),
		    json_pack("{s:I, s:o}", "total", (json_int_t)v->lost[c],
		    "rate", jrate(v, v->lost_rate[c])));
	o = json_pack("{s:b, s:o, s:o, s:s, s:o, s:{s:o, s:o, s:o, s:o}, "
	    "s:o, s:o, s:o, s:o}", "reachable", v->reachable, "error",
	    v->reachable ? json_null() : json_string(v->error), "interval_s",
	    v->rated ? json_real(v->interval) : json_null(), "sort",
	    top_sort_names[t->sort], "filter", t->filter[0] ?
	    json_string(t->filter) : json_null(), "daemon", "cpu_percent",
	    jrate(v, v->cpu_percent), "ns_per_event", v->rated &&
	    v->ns_per_event >= 0 ? json_real(round(v->ns_per_event)) :
	    json_null(), "events_rate", jrate(v, v->events_rate), "threads",
	    cpu, "losses", lost, "events", rows_json(v, &v->events,
	    TOP_PANE_EVENTS), "threads", rows_json(v, &v->threads,
	    TOP_PANE_THREADS), "sessions", rows_json(v, &v->sessions,
	    TOP_PANE_SESSIONS));
	if (o != NULL && (text = json_dumps(o, JSON_PRESERVE_ORDER |
	    JSON_COMPACT)) != NULL) {
		puts(text);
		free(text);
	}
	json_decref(o);
	fflush(stdout);
}

static void
print_text(const struct top *t)
{
	struct top_lines l = { 0 };
	size_t i;

	top_render(t, &l, 0, -1);
	for (i = 0; i < l.n; i++)
		puts(l.text[i]);
	if (t->count > 1)
		putchar('\n');
	fflush(stdout);
	top_lines_clear(&l);
	free(l.text);
	free(l.attr);
}

static void
sleep_s(double s)
{
	struct timespec ts;

	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/*
 * --once, -n N, or not a terminal: N snapshots, each the rates over
 * the delay before it.  The daemon not answering ends it (status 3).
 */
static int
top_batch(struct top *t)
{
	int i, ret;

	if ((ret = top_ask(t)) != 0)
		goto fail;
	for (i = 0; i < t->count; i++) {
		sleep_s(t->delay);
		if ((ret = top_ask(t)) != 0)
			goto fail;
		top_compute(t);
		if (t->json)
			print_json(t);
		else
			print_text(t);
	}
	return EXIT_DONE;
fail:
	if (t->json) {
		top_compute(t);
		print_json(t);
	}
	fprintf(stderr, "tracectl: top: %s\n", t->view.error);
	return ret;
}

/* ---- options ---------------------------------------------------------- */

static void
top_usage(void)
{
	fputs("usage: tracectl top [-d SECONDS] [-n N | --once] [-s COLUMN] "
	    "[-f GLOB] [--json]\n"
	    "  -d, --delay SECONDS  between two refreshes (default 1)\n"
	    "  -n, --count N        print N snapshots and exit\n"
	    "      --once           print one snapshot and exit (-n 1)\n"
	    "  -s, --sort COLUMN    rate, total, lost or name\n"
	    "  -f, --filter GLOB    only events, or sessions, of that name\n"
	    "  -j, --json           each snapshot as one JSON line\n"
	    "keys: q quit, s sort, r reverse, / filter, 1 2 3 one pane, "
	    "0 all, + - delay, p pause\n", stderr);
}

static int
parse_sort(const char *s)
{
	int i;

	for (i = 0; i < TOP_SORT_COUNT; i++)
		if (strcmp(s, top_sort_names[i]) == 0)
			return i;
	return -1;
}

static int
parse_opts(struct top *t, int nargs, char **args)
{
	static char progname[] = "top";
	static const struct option longopts[] = {
		{ "count",  required_argument, NULL, 'n' },
		{ "delay",  required_argument, NULL, 'd' },
		{ "filter", required_argument, NULL, 'f' },
		{ "json",   no_argument,       NULL, 'j' },
		{ "once",   no_argument,       NULL, 'o' },
		{ "sort",   required_argument, NULL, 's' },
		{ NULL,     0,                 NULL, 0 },
	};
	char *end, **argv;
	int ch, s, argc = nargs + 1;
	double d;
	long n;

	/* getopt wants a program name first. */
	if ((argv = calloc((size_t)argc + 1, sizeof(*argv))) == NULL)
		return -1;
	argv[0] = progname;
	memcpy(argv + 1, args, (size_t)nargs * sizeof(*args));
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":d:f:jn:s:", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'd':
			errno = 0;
			d = strtod(optarg, &end);
			if (errno != 0 || *end != '\0' || end == optarg ||
			    !(d >= TOP_DELAY_MIN && d <= TOP_DELAY_MAX)) {
				fprintf(stderr, "tracectl: top: -d: '%s' is not "
				    "a number of seconds from %.1f to %.0f\n",
				    optarg, TOP_DELAY_MIN, TOP_DELAY_MAX);
				goto usage;
			}
			t->delay = d;
			break;
		case 'f':
			if (strlen(optarg) >= sizeof(t->filter)) {
				fprintf(stderr, "tracectl: top: -f: a glob of "
				    "at most %zu bytes\n",
				    sizeof(t->filter) - 1);
				goto usage;
			}
			snprintf(t->filter, sizeof(t->filter), "%s", optarg);
			break;
		case 'j':
			t->json = 1;
			break;
		case 'n':
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || end == optarg ||
			    n < 1 || n > 1000000) {
				fprintf(stderr, "tracectl: top: -n: '%s' is not "
				    "a count from 1 to 1000000\n", optarg);
				goto usage;
			}
			t->count = (int)n;
			break;
		case 'o':
			t->count = 1;
			break;
		case 's':
			if ((s = parse_sort(optarg)) == -1) {
				fprintf(stderr, "tracectl: top: -s: no column "
				    "'%s': rate, total, lost or name\n", optarg);
				goto usage;
			}
			t->sort = (enum top_sort)s;
			break;
		case ':':
			fprintf(stderr, "tracectl: top: option '%s' needs an "
			    "argument\n", argv[optind - 1]);
			goto usage;
		default:
			fprintf(stderr, "tracectl: top: unknown option '%s'\n",
			    argv[optind - 1]);
			goto usage;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tracectl: top: unexpected argument '%s'\n",
		    argv[optind]);
		goto usage;
	}
	free(argv);
	return 0;
usage:
	free(argv);
	top_usage();
	return -1;
}

static void
top_free(struct top *t)
{
	snap_free(t->prev);
	snap_free(t->cur);
	rows_reset(&t->view.events);
	rows_reset(&t->view.threads);
	rows_reset(&t->view.sessions);
	free(t->view.cpu);
}

int
top_main(int nargs, char **args, int json, const char *rdir)
{
	struct top t;
	int ret;

	memset(&t, 0, sizeof(t));
	t.rdir = rdir;
	t.delay = 1;
	t.json = json;
	if (parse_opts(&t, nargs, args) == -1)
		return EXIT_USAGE;
	if (t.count == 0 && (t.json || !isatty(STDOUT_FILENO) ||
	    !isatty(STDIN_FILENO))) {
		if (!t.json) {
			fputs("tracectl: top: not a terminal: give --once, "
			    "-n N or --json to print snapshots\n", stderr);
			return EXIT_USAGE;
		}
		t.count = 1;
	}
	ret = t.count > 0 ? top_batch(&t) : top_tui(&t);
	top_free(&t);
	return ret;
}
