/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * tracectl export --format chrome: the Chrome Trace Event Format (JSON
 * Object Format), which chrome://tracing, the Perfetto UI, speedscope
 * and many other tools read (shared/formats/chrome.md):
 *
 *   {"traceEvents":[
 *   {"name":"process_name","ph":"M","pid":352,"tid":352,"args":{...}},
 *   {"name":"job_done","cat":"helpers","ph":"i","s":"t","ts":12.345,
 *    "pid":352,"tid":354,"args":{"id":7,...}},
 *   ...
 *   ],"displayTimeUnit":"ns","otherData":{...}}
 *
 * Written as the reader goes, one event a line, in memory bounded by
 * threads and their call depth: process_name and thread_name metadata
 * (M) before a thread's first event; every event an instant (i, thread
 * scope) with its fields as args, if it has any (64-bit integers as
 * strings, format.c); each loss an instant named for its cause; each
 * --pair a complete event (X) on a lane of its process (a pseudo-thread
 * named after the pair: overlapping pairs go to separate lanes, since
 * viewers want slices of one thread to nest).
 *
 * A function trace's records are calls (calls.c): each a complete event
 * named "object:function" on its thread, written when it ends (viewers
 * sort by time), nested as the calls were, so that the Perfetto UI,
 * chrome://tracing and speedscope draw flame charts.  One short event a
 * call, without a category or args but for a call whose exit was lost
 * ("exit":"lost") or that the trace ended ("exit":"unfinished"): a
 * third of the bytes of an instant per record.
 *
 * ts is in microseconds, with the nanoseconds as up to 3 decimals,
 * counted from a whole second before the trace's start (in otherData,
 * as ns since the Epoch), so that a double holds it exactly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "calls.h"
#include "export.h"
#include "format.h"
#include "strbuf.h"

/* Lanes per process and --pair rule; more overlap share the last. */
#define CHROME_LANES_MAX	64
/* Pseudo-thread ids of lanes: above any Linux tid (pid_max <= 2^22). */
#define CHROME_LANE_TID		0x40000000

struct chrome_lanes {
	int64_t		 end[CHROME_LANES_MAX];	/* ns the lane is busy to */
	unsigned	 n;
};

struct chrome_state {
	int64_t		 origin;	/* ns since the Epoch of ts 0 */
	uint8_t		*sess_named;	/* owned, per session */
	uint8_t		*thread_named;	/* owned, per thread */
	struct chrome_lanes *lanes;	/* owned, per session and rule */
	struct calls	*calls;		/* owned */
	struct export	*x;
	size_t		 nevents;
	struct strbuf	 line;
	struct strbuf	 tmp;
};

/* Append a JSON value (consumed) as text; -1 if it is NULL or fails. */
static int
chrome_json(struct strbuf *b, json_t *v)
{
	char	*s;

	if (v == NULL)
		return -1;
	s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER |
	    JSON_ENCODE_ANY);
	json_decref(v);
	if (s == NULL)
		return -1;
	strbuf_adds(b, s);
	free(s);
	return 0;
}

/* "ts":<us>[.<ns>] relative to the origin, without trailing zeros. */
static void
chrome_ts(struct strbuf *b, const char *key, int64_t rel)
{
	uint64_t	 v = (uint64_t)(rel < 0 ? -rel : rel);
	unsigned	 frac = (unsigned)(v % 1000);

	strbuf_addf(b, ",\"%s\":%s", key, rel < 0 ? "-" : "");
	strbuf_add_u64(b, v / 1000);
	if (frac == 0)
		return;
	if (frac % 100 == 0)
		strbuf_addf(b, ".%u", frac / 100);
	else if (frac % 10 == 0)
		strbuf_addf(b, ".%02u", frac / 10);
	else
		strbuf_addf(b, ".%03u", frac);
}

/* Write the line built in st->line, with the separator before it. */
static int
chrome_emit(struct export *x, struct chrome_state *st)
{
	if (st->line.failed) {
		export_error(x, "out of memory");
		return -1;
	}
	if (st->nevents++ > 0)
		fputs(",\n", x->out);
	fwrite(st->line.s, 1, st->line.len, x->out);
	strbuf_reset(&st->line);
	return 0;
}

/* A metadata event: process_name or thread_name. */
static int
chrome_meta(struct export *x, struct chrome_state *st, const char *what,
    int64_t pid, uint64_t tid, const char *name)
{
	struct strbuf	*b = &st->line;

	strbuf_addf(b, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%lld,"
	    "\"tid\":%llu,\"args\":{\"name\":", what, (long long)pid,
	    (unsigned long long)tid);
	if (chrome_json(b, fmt_json_string(name, strlen(name), &st->tmp)) ==
	    -1)
		return -1;
	strbuf_adds(b, "}}");
	return chrome_emit(x, st);
}

/* Name the process and thread of an item the first time. */
static int
chrome_names(struct export *x, struct chrome_state *st,
    const struct reader_item *it)
{
	const struct reader_session *s = it->sess;
	char		 name[512];

	if (!st->sess_named[s->index]) {
		st->sess_named[s->index] = 1;
		snprintf(name, sizeof(name), "%s", s->comm);
		if (chrome_meta(x, st, "process_name", s->pid,
		    (uint64_t)s->pid, name) == -1)
			return -1;
	}
	if (!st->thread_named[it->thread->index]) {
		st->thread_named[it->thread->index] = 1;
		if ((int64_t)it->thread->tid == s->pid)
			snprintf(name, sizeof(name), "%s", s->comm);
		else
			snprintf(name, sizeof(name), "%s %llu", s->comm,
			    (unsigned long long)it->thread->tid);
		if (chrome_meta(x, st, "thread_name", s->pid, it->thread->tid,
		    name) == -1)
			return -1;
	}
	return 0;
}

static void
chrome_say(void *arg, const char *msg)
{
	export_error(arg, "%s", msg);
}

static int
chrome_begin(struct export *x)
{
	struct chrome_state *st = x->priv;
	size_t		 i;

	strbuf_init(&st->line);
	strbuf_init(&st->tmp);
	st->origin = 0;
	for (i = 0; i < x->nthreads; i++)
		if (i == 0 || x->threads[i].first_ns < st->origin)
			st->origin = x->threads[i].first_ns;
	st->origin -= st->origin % 1000000000;
	if ((st->sess_named = calloc(x->nsessions + 1, 1)) == NULL ||
	    (st->thread_named = calloc(x->nthreads + 1, 1)) == NULL ||
	    (x->pairs->n > 0 && (st->lanes = calloc(x->nsessions *
	    x->pairs->n + 1, sizeof(*st->lanes))) == NULL)) {
		export_error(x, "out of memory");
		return -1;
	}
	if ((st->calls = calls_new(x->nsessions, x->nthreads, chrome_say,
	    x)) == NULL) {
		export_error(x, "out of memory");
		return -1;
	}
	st->x = x;
	fputs("{\"traceEvents\":[\n", x->out);
	return 0;
}

/* A call that ended (calls.c): a complete event on its thread. */
static int
chrome_call(void *arg, const struct call_step *s)
{
	struct chrome_state *st = arg;
	struct strbuf	*b = &st->line;

	if (s->how != CALL_CLOSE)
		return 0;
	strbuf_adds(b, "{\"ph\":\"X\",\"name\":");
	if (chrome_json(b, fmt_json_string(s->fn->name, strlen(s->fn->name),
	    &st->tmp)) == -1) {
		export_error(st->x, "out of memory");
		return -1;
	}
	chrome_ts(b, "ts", s->start_ns - st->origin);
	chrome_ts(b, "dur", s->end_ns - s->start_ns);
	strbuf_addf(b, ",\"pid\":%lld,\"tid\":%llu", (long long)s->sess->pid,
	    (unsigned long long)s->thread->tid);
	if (s->end != CALL_RETURNED)
		strbuf_addf(b, ",\"args\":{\"exit\":\"%s\"}",
		    s->end == CALL_NO_EXIT ? "lost" : "unfinished");
	strbuf_addc(b, '}');
	return chrome_emit(st->x, st);
}

static int
chrome_item(struct export *x, const struct reader_item *it)
{
	struct chrome_state *st = x->priv;
	struct strbuf	*b = &st->line;
	const struct tracedir_class *c;
	const char	*cause;
	json_t		*args, *v;
	uint64_t	 addr, depth;
	unsigned	 i;
	int		 exit_;

	if (chrome_names(x, st, it) == -1)
		return -1;
	if (calls_feed(st->calls, it, chrome_call, st) == -1)
		return -1;
	if (calls_record(it, &exit_, &addr, &depth))
		return 0;
	if (it->kind == READER_LOST) {
		for (i = 0; i <= READER_NCAUSES; i++) {
			if (i < READER_NCAUSES && it->causes[i] == 0)
				continue;
			if (i == READER_NCAUSES && it->packets == 0)
				continue;
			cause = i < READER_NCAUSES ? reader_cause_name(i) :
			    "packets";
			strbuf_addf(b, "{\"name\":\"lost: %s\",\"cat\":\"traced\","
			    "\"ph\":\"i\",\"s\":\"t\"", cause);
			chrome_ts(b, "ts", it->ns - st->origin);
			strbuf_addf(b, ",\"pid\":%lld,\"tid\":%llu,\"args\":"
			    "{\"count\":%llu}}", (long long)it->sess->pid,
			    (unsigned long long)it->thread->tid,
			    (unsigned long long)(i < READER_NCAUSES ?
			    it->causes[i] : it->packets));
			if (chrome_emit(x, st) == -1)
				return -1;
		}
		return 0;
	}
	c = it->ev->cls;
	strbuf_adds(b, "{\"name\":");
	if (chrome_json(b, fmt_json_string(c->event, strlen(c->event),
	    &st->tmp)) == -1)
		goto nomem;
	strbuf_adds(b, ",\"cat\":");
	if (chrome_json(b, fmt_json_string(c->name, c->provider_len,
	    &st->tmp)) == -1)
		goto nomem;
	strbuf_adds(b, ",\"ph\":\"i\",\"s\":\"t\"");
	chrome_ts(b, "ts", it->ns - st->origin);
	strbuf_addf(b, ",\"pid\":%lld,\"tid\":%llu",
	    (long long)it->sess->pid, (unsigned long long)it->thread->tid);
	if (it->ev->nvalues == 0) {
		strbuf_addc(b, '}');
		return chrome_emit(x, st);
	}
	strbuf_adds(b, ",\"args\":");
	if ((args = json_object()) == NULL)
		goto nomem;
	for (i = 0; i < it->ev->nvalues; i++) {
		v = fmt_json_value(c, i, &it->ev->values[i], &st->tmp);
		if (v == NULL || json_object_set_new(args,
		    it->ev->values[i].decl->shown, v) == -1) {
			json_decref(args);
			goto nomem;
		}
	}
	if (chrome_json(b, args) == -1)
		goto nomem;
	strbuf_addc(b, '}');
	return chrome_emit(x, st);
nomem:
	export_error(x, "out of memory");
	return -1;
}

/* A pair as a complete event on a lane of its process. */
static int
chrome_pair(struct export *x, const struct pair_match *m)
{
	struct chrome_state *st = x->priv;
	struct chrome_lanes *l;
	struct strbuf	*b = &st->line;
	const struct pair_rule *r = &x->pairs->v[m->rule];
	char		 name[512];
	unsigned	 lane;
	uint64_t	 tid;

	l = &st->lanes[m->sess->index * x->pairs->n + m->rule];
	for (lane = 0; lane < l->n && l->end[lane] > m->start_ns; lane++)
		;
	if (lane == CHROME_LANES_MAX)
		lane = CHROME_LANES_MAX - 1;
	tid = CHROME_LANE_TID + (uint64_t)m->rule * CHROME_LANES_MAX + lane;
	if (lane == l->n) {
		l->n++;
		snprintf(name, sizeof(name), "%s #%u", r->label, lane + 1);
		if (chrome_meta(x, st, "thread_name", m->sess->pid, tid,
		    name) == -1)
			return -1;
	}
	if (l->end[lane] < m->end_ns)
		l->end[lane] = m->end_ns;
	strbuf_adds(b, "{\"name\":");
	if (chrome_json(b, fmt_json_string(r->label, strlen(r->label),
	    &st->tmp)) == -1) {
		export_error(x, "out of memory");
		return -1;
	}
	strbuf_adds(b, ",\"cat\":\"pair\",\"ph\":\"X\"");
	chrome_ts(b, "ts", m->start_ns - st->origin);
	chrome_ts(b, "dur", m->end_ns - m->start_ns);
	strbuf_addf(b, ",\"pid\":%lld,\"tid\":%llu", (long long)m->sess->pid,
	    (unsigned long long)tid);
	/* Viewers key frames by name and args: say the threads only when
	 * the pair crossed from one to another. */
	if (m->start_thread != m->end_thread)
		strbuf_addf(b, ",\"args\":{\"start_tid\":%llu,\"end_tid\":"
		    "%llu}", (unsigned long long)m->start_thread->tid,
		    (unsigned long long)m->end_thread->tid);
	strbuf_addc(b, '}');
	return chrome_emit(x, st);
}

static int
chrome_end(struct export *x)
{
	struct chrome_state *st = x->priv;

	if (calls_finish(st->calls, chrome_call, st) == -1)
		return -1;
	fprintf(x->out, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":"
	    "{\"tracer\":\"traced\",\"clock\":\"realtime\","
	    "\"origin_ns\":\"%lld\"}}\n", (long long)st->origin);
	return 0;
}

static void
chrome_free(struct export *x)
{
	struct chrome_state *st = x->priv;

	free(st->sess_named);
	free(st->thread_named);
	free(st->lanes);
	calls_free(st->calls);
	strbuf_free(&st->line);
	strbuf_free(&st->tmp);
}

const struct export_format export_fmt_chrome = {
	.name = "chrome",
	.help = "Chrome Trace Event JSON (chrome://tracing, Perfetto UI, "
	    "speedscope)",
	.out_is_dir = 0,
	.priv_size = sizeof(struct chrome_state),
	.begin = chrome_begin,
	.item = chrome_item,
	.pair = chrome_pair,
	.end = chrome_end,
	.free = chrome_free,
};
