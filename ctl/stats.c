/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * tracectl stats: what a trace holds, counted in one pass of the reader
 * (reader.c), filters applied:
 *
 *   - per session, per thread and per event: count, rate (events per
 *     second between the first and the last), first and last time;
 *     per session and thread, the events lost by cause;
 *   - per --pair rule: how many pairs, and the minimum, median, 99th
 *     percentile and maximum of their durations (nearest-rank
 *     percentiles: the value at rank ceil(p * n) of the sorted
 *     durations), plus the starts that never ended and the ends that
 *     had no start;
 *   - in a function trace, per function (named by calls.c): its calls,
 *     their total time (callees included) and self time (callees
 *     excluded), and the minimum, median, 99th percentile and maximum
 *     of their durations, heaviest total first.  Only calls whose exit
 *     was recorded are timed; the others are counted apart.
 *
 * Memory grows with sessions, threads, distinct event names and
 * functions, not with events; durations are kept exactly up to
 * STATS_DURATIONS_MAX per rule (STATS_FUNC_DURATIONS_MAX per function),
 * and past that a uniform sample of that size stands for them (the
 * output says so: the count, total, minimum and maximum stay exact).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "calls.h"
#include "format.h"
#include "pair.h"
#include "readcmd.h"
#include "reader.h"
#include "strbuf.h"
#include "tracectl.h"

#define STATS_DURATIONS_MAX	(4u << 20)
#define STATS_FUNC_DURATIONS_MAX (16u << 10)

/* Counts over some items. */
struct stats_count {
	uint64_t	 n;
	int64_t		 first;
	int64_t		 last;
	uint64_t	 lost[READER_NCAUSES];
	uint64_t	 lost_packets;
};

/* One event name, over every session. */
struct stats_event {
	char		*name;		/* owned */
	struct stats_count c;
};

/* Durations: exact up to a bound, then a uniform sample. */
struct stats_durs {
	int64_t		*d;		/* owned: durations, ns */
	size_t		 nd;
	size_t		 cap;
	uint64_t	 n;		/* all of them */
	int64_t		 min;
	int64_t		 max;
	int64_t		 sum;
	uint64_t	 rng;		/* for sampling */
};

/* One function, by call_fn id. */
struct stats_func {
	uint64_t	 calls;		/* entries */
	uint64_t	 untimed;	/* calls without an exit */
	int64_t		 self;		/* ns, timed calls */
	struct stats_durs d;
};

struct stats_ctx {
	struct stats_count *sess;	/* owned, per session */
	struct stats_count *threads;	/* owned, per thread */
	struct stats_event *events;	/* owned, hash table */
	size_t		 evcap;
	size_t		 nevents;
	struct stats_durs pairs[PAIR_RULES_MAX];
	struct calls	*calls;		/* owned */
	struct stats_func *funcs;	/* owned, by call_fn id */
	size_t		 nfuncs;
	int		 nomem;
};

static void
stats_help(void)
{
	fputs("\nCount the events of the traces under each DIR per session, "
	    "thread and event,\nwith their losses; time paired events.\n\n",
	    stdout);
}

static const struct readcmd_def stats_cmd = {
	.name = "stats",
	.usage = "usage: tracectl stats [--pair A:B [--key FIELD]] [FILTERS] "
	    "DIR...\n",
	.flags = READCMD_JSON | READCMD_PAIRS,
	.no_dir = "no directory given",
	.help = stats_help,
};

static void
stats_error(void *arg, const char *msg)
{
	struct strbuf	 b;

	(void)arg;
	strbuf_init(&b);
	strbuf_add_escaped(&b, msg, strlen(msg), 0);
	fflush(stdout);
	fprintf(stderr, "tracectl: %s\n", b.s != NULL ? b.s : "out of memory");
	strbuf_free(&b);
}

static void
stats_add(struct stats_count *c, const struct reader_item *it)
{
	unsigned	 i;

	if (c->n == 0 && c->first == 0 && c->last == 0)
		c->first = it->ns;
	if (it->kind == READER_LOST) {
		for (i = 0; i < READER_NCAUSES; i++)
			c->lost[i] += it->causes[i];
		c->lost_packets += it->packets;
		return;
	}
	if (c->n == 0)
		c->first = it->ns;
	c->n++;
	c->last = it->ns;
}

static uint64_t
stats_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The entry of an event name, made the first time.  NULL: no memory. */
static struct stats_event *
stats_event(struct stats_ctx *ctx, const char *name)
{
	struct stats_event *nt, *e;
	size_t		 i, j, ncap;

	if ((ctx->nevents + 1) * 2 > ctx->evcap) {
		ncap = ctx->evcap != 0 ? ctx->evcap * 2 : 64;
		if ((nt = calloc(ncap, sizeof(*nt))) == NULL)
			return NULL;
		for (i = 0; i < ctx->evcap; i++) {
			if (ctx->events[i].name == NULL)
				continue;
			for (j = stats_hash(ctx->events[i].name) & (ncap - 1);
			    nt[j].name != NULL; j = (j + 1) & (ncap - 1))
				;
			nt[j] = ctx->events[i];
		}
		free(ctx->events);
		ctx->events = nt;
		ctx->evcap = ncap;
	}
	for (j = stats_hash(name) & (ctx->evcap - 1);
	    ctx->events[j].name != NULL; j = (j + 1) & (ctx->evcap - 1))
		if (strcmp(ctx->events[j].name, name) == 0)
			return &ctx->events[j];
	e = &ctx->events[j];
	if ((e->name = strdup(name)) == NULL)
		return NULL;
	ctx->nevents++;
	return e;
}

/* A random number for reservoir sampling (xorshift64). */
static uint64_t
stats_rand(uint64_t *s)
{
	if (*s == 0)
		*s = 0x9e3779b97f4a7c15ull;
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Add duration d to p, keeping at most 'max' of them. */
static int
stats_dur(struct stats_durs *p, int64_t d, size_t max)
{
	int64_t		*nd;
	size_t		 ncap;
	uint64_t	 k;

	if (p->n == 0 || d < p->min)
		p->min = d;
	if (p->n == 0 || d > p->max)
		p->max = d;
	p->n++;
	p->sum += d;
	if (p->nd < max) {
		if (p->nd == p->cap) {
			ncap = p->cap != 0 ? p->cap * 2 : 1024;
			if ((nd = reallocarray(p->d, ncap,
			    sizeof(*nd))) == NULL)
				return -1;
			p->d = nd;
			p->cap = ncap;
		}
		p->d[p->nd++] = d;
		return 0;
	}
	/* Reservoir: each of the n durations is kept with the same odds. */
	k = stats_rand(&p->rng) % p->n;
	if (k < max)
		p->d[k] = d;
	return 0;
}

/* A call began or ended (calls.c): count and time its function. */
static int
stats_call(void *arg, const struct call_step *s)
{
	struct stats_ctx *ctx = arg;
	struct stats_func *nf, *f;
	size_t		 n;

	if (s->fn->id >= ctx->nfuncs) {
		n = ctx->nfuncs != 0 ? ctx->nfuncs * 2 : 256;
		while (n <= s->fn->id)
			n *= 2;
		if ((nf = reallocarray(ctx->funcs, n, sizeof(*nf))) == NULL)
			return -1;
		memset(nf + ctx->nfuncs, 0, (n - ctx->nfuncs) * sizeof(*nf));
		ctx->funcs = nf;
		ctx->nfuncs = n;
	}
	f = &ctx->funcs[s->fn->id];
	if (s->how == CALL_OPEN) {
		f->calls++;
		return 0;
	}
	if (s->end != CALL_RETURNED) {
		f->untimed++;
		return 0;
	}
	f->self += s->self_ns;
	return stats_dur(&f->d, s->end_ns - s->start_ns,
	    STATS_FUNC_DURATIONS_MAX);
}

static int
stats_cmp(const void *a, const void *b)
{
	int64_t	 x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile p (0 < p <= 100) of sorted d[0..n). */
static int64_t
stats_rank(const int64_t *d, size_t n, unsigned p)
{
	size_t	 r = (size_t)(((unsigned __int128)n * p + 99) / 100);

	if (r == 0)
		r = 1;
	return d[r - 1];
}

/* "2026-11-23 22:51:56.918626475" in local time. */
static void
stats_time(char *buf, size_t size, int64_t ns)
{
	struct tm	 tm;
	time_t		 t = (time_t)(ns / 1000000000);
	int64_t		 frac = ns % 1000000000;

	if (frac < 0) {
		frac += 1000000000;
		t--;
	}
	if (localtime_r(&t, &tm) == NULL)
		memset(&tm, 0, sizeof(tm));
	snprintf(buf, size, "%04d-%02d-%02d %02d:%02d:%02d.%09lld",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (long long)frac);
}

static double
stats_rate(const struct stats_count *c)
{
	if (c->n < 2 || c->last <= c->first)
		return 0;
	return (double)(c->n - 1) * 1e9 / (double)(c->last - c->first);
}

static uint64_t
stats_lost(const struct stats_count *c)
{
	uint64_t n = 0;
	unsigned i;

	for (i = 0; i < READER_NCAUSES; i++)
		n += c->lost[i];
	return n;
}

static void
stats_text_count(const char *label, const struct stats_count *c,
    int losses)
{
	char		 a[64], b[64];
	unsigned	 i, k = 0;

	stats_time(a, sizeof(a), c->first);
	stats_time(b, sizeof(b), c->last);
	printf("  %-32s %10llu %12.1f  %s  %s", label,
	    (unsigned long long)c->n, stats_rate(c), a, b);
	if (losses) {
		printf("  %llu", (unsigned long long)stats_lost(c));
		for (i = 0; i < READER_NCAUSES; i++)
			if (c->lost[i] > 0)
				printf("%s%s %llu", k++ == 0 ? " (" : ", ",
				    reader_cause_name(i),
				    (unsigned long long)c->lost[i]);
		if (k > 0)
			putchar(')');
		if (c->lost_packets > 0)
			printf(" +%llu packets",
			    (unsigned long long)c->lost_packets);
	}
	putchar('\n');
}

static int
stats_event_cmp(const void *a, const void *b)
{
	const struct stats_event *x = a, *y = b;

	if (x->name == NULL || y->name == NULL)
		return x->name == NULL ? (y->name == NULL ? 0 : 1) : -1;
	return strcmp(x->name, y->name);
}

static json_t *
stats_json_count(const struct stats_count *c, int losses)
{
	json_t		*o, *l;
	char		 buf[24];
	unsigned	 i;

	if ((o = json_object()) == NULL)
		return NULL;
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)c->n);
	json_object_set_new(o, "count", json_string(buf));
	json_object_set_new(o, "rate", json_real(stats_rate(c)));
	snprintf(buf, sizeof(buf), "%lld", (long long)c->first);
	json_object_set_new(o, "first", json_string(buf));
	snprintf(buf, sizeof(buf), "%lld", (long long)c->last);
	json_object_set_new(o, "last", json_string(buf));
	if (losses) {
		l = json_object();
		for (i = 0; l != NULL && i < READER_NCAUSES; i++) {
			snprintf(buf, sizeof(buf), "%llu",
			    (unsigned long long)c->lost[i]);
			json_object_set_new(l, reader_cause_name(i),
			    json_string(buf));
		}
		snprintf(buf, sizeof(buf), "%llu",
		    (unsigned long long)c->lost_packets);
		json_object_set_new(l, "packets", json_string(buf));
		json_object_set_new(o, "lost", l);
	}
	return o;
}

static json_t *
stats_json_ns(int64_t v)
{
	char	 buf[24];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	return json_string(buf);
}

/* Functions by total time, heaviest first, then by name. */
static const struct stats_ctx *stats_sort_ctx;

static int
stats_func_cmp(const void *a, const void *b)
{
	const struct stats_ctx *ctx = stats_sort_ctx;
	size_t		 x = *(const size_t *)a, y = *(const size_t *)b;
	int64_t		 tx = ctx->funcs[x].d.sum, ty = ctx->funcs[y].d.sum;

	if (tx != ty)
		return tx > ty ? -1 : 1;
	return strcmp(calls_fn(ctx->calls, x)->name,
	    calls_fn(ctx->calls, y)->name);
}

/*
 * The ids of the functions called, sorted (*n of them; free it).  The
 * durations of each are sorted too, for their percentiles.  NULL with
 * *n 0 when there are none; NULL with *n 1 when out of memory.
 */
static size_t *
stats_funcs_sorted(struct stats_ctx *ctx, size_t *n)
{
	size_t		*ids, i, k = 0, nf = calls_nfns(ctx->calls);

	*n = 0;
	if (nf == 0 || ctx->nfuncs == 0)
		return NULL;
	if ((ids = calloc(nf, sizeof(*ids))) == NULL) {
		*n = 1;
		return NULL;
	}
	for (i = 0; i < nf && i < ctx->nfuncs; i++) {
		if (ctx->funcs[i].calls == 0)
			continue;
		ids[k++] = i;
		if (ctx->funcs[i].d.nd > 0)
			qsort(ctx->funcs[i].d.d, ctx->funcs[i].d.nd,
			    sizeof(int64_t), stats_cmp);
	}
	stats_sort_ctx = ctx;
	qsort(ids, k, sizeof(*ids), stats_func_cmp);
	*n = k;
	return ids;
}

static json_t *
stats_json_func(const struct stats_ctx *ctx, size_t id)
{
	const struct stats_func *f = &ctx->funcs[id];
	struct strbuf	 tmp;
	const char	*name;
	json_t		*o;

	if ((o = json_object()) == NULL)
		return NULL;
	/* From a trace directory: any bytes (fmt_json_string() makes
	 * them UTF-8 that jansson takes). */
	strbuf_init(&tmp);
	name = calls_fn(ctx->calls, id)->name;
	json_object_set_new(o, "function", fmt_json_string(name, strlen(name),
	    &tmp));
	strbuf_free(&tmp);
	json_object_set_new(o, "calls", stats_json_ns((int64_t)f->calls));
	json_object_set_new(o, "timed", stats_json_ns((int64_t)f->d.n));
	json_object_set_new(o, "total", stats_json_ns(f->d.sum));
	json_object_set_new(o, "self", stats_json_ns(f->self));
	if (f->d.n > 0) {
		json_object_set_new(o, "min", stats_json_ns(f->d.min));
		json_object_set_new(o, "median", stats_json_ns(
		    stats_rank(f->d.d, f->d.nd, 50)));
		json_object_set_new(o, "p99", stats_json_ns(
		    stats_rank(f->d.d, f->d.nd, 99)));
		json_object_set_new(o, "max", stats_json_ns(f->d.max));
	}
	json_object_set_new(o, "sampled", json_boolean(f->d.n > f->d.nd));
	return o;
}

static void
stats_text_funcs(const struct stats_ctx *ctx, const size_t *ids, size_t n)
{
	const struct stats_func *f;
	struct strbuf	 b;
	const char	*name;
	size_t		 i;
	int		 sampled = 0;

	printf("functions (times in ns; total includes callees, self does "
	    "not):\n  %-32s %10s %14s %14s %10s %10s %10s %10s\n",
	    "FUNCTION", "CALLS", "TOTAL", "SELF", "MIN", "MEDIAN", "P99",
	    "MAX");
	strbuf_init(&b);
	for (i = 0; i < n; i++) {
		f = &ctx->funcs[ids[i]];
		/* From a trace directory: escaped, as print shows it. */
		name = calls_fn(ctx->calls, ids[i])->name;
		strbuf_reset(&b);
		strbuf_add_escaped(&b, name, strlen(name), 0);
		printf("  %-32s %10llu %14lld %14lld", b.s != NULL ? b.s : "?",
		    (unsigned long long)f->calls, (long long)f->d.sum,
		    (long long)f->self);
		if (f->d.n == 0)
			printf(" %10s %10s %10s %10s", "-", "-", "-", "-");
		else
			printf(" %10lld %10lld %10lld %10lld",
			    (long long)f->d.min,
			    (long long)stats_rank(f->d.d, f->d.nd, 50),
			    (long long)stats_rank(f->d.d, f->d.nd, 99),
			    (long long)f->d.max);
		if (f->untimed > 0)
			printf("  (%llu without an exit: not timed)",
			    (unsigned long long)f->untimed);
		sampled |= f->d.n > f->d.nd;
		putchar('\n');
	}
	if (sampled)
		printf("  (medians and p99s of functions called more than %u "
		    "times are from a sample of that many)\n",
		    STATS_FUNC_DURATIONS_MAX);
	strbuf_free(&b);
}

static int
stats_report(struct stats_ctx *ctx, struct reader *r,
    const struct pair_rules *rules, const struct pairer *pr, int json,
    const size_t *fids, size_t nfids)
{
	const struct reader_session *ss;
	const struct reader_thread *ts;
	struct stats_durs *p;
	json_t		*doc = NULL, *a, *o;
	char		 label[600];
	size_t		 ns, nt, i;
	int		 sampled;

	ss = reader_sessions(r, &ns);
	ts = reader_threads(r, &nt);
	if (ctx->nevents > 0)
		qsort(ctx->events, ctx->evcap, sizeof(*ctx->events),
		    stats_event_cmp);
	for (i = 0; i < rules->n; i++)
		if (ctx->pairs[i].nd > 0)
			qsort(ctx->pairs[i].d, ctx->pairs[i].nd,
			    sizeof(int64_t), stats_cmp);
	if (json) {
		if ((doc = json_object()) == NULL)
			return -1;
		a = json_array();
		json_object_set_new(doc, "sessions", a);
		for (i = 0; a != NULL && i < ns; i++) {
			if ((o = stats_json_count(&ctx->sess[i], 1)) == NULL)
				break;
			json_object_set_new(o, "session",
			    json_string(ss[i].name));
			json_object_set_new(o, "pid", json_integer(ss[i].pid));
			json_array_append_new(a, o);
		}
		a = json_array();
		json_object_set_new(doc, "threads", a);
		for (i = 0; a != NULL && i < nt; i++) {
			if ((o = stats_json_count(&ctx->threads[i], 1)) ==
			    NULL)
				break;
			json_object_set_new(o, "session",
			    json_string(ts[i].sess->name));
			json_object_set_new(o, "pid",
			    json_integer(ts[i].sess->pid));
			json_object_set_new(o, "tid",
			    json_integer((json_int_t)ts[i].tid));
			json_array_append_new(a, o);
		}
		a = json_array();
		json_object_set_new(doc, "events", a);
		for (i = 0; a != NULL && i < ctx->nevents; i++) {
			if ((o = stats_json_count(&ctx->events[i].c, 0)) ==
			    NULL)
				break;
			json_object_set_new(o, "event",
			    json_string(ctx->events[i].name));
			json_array_append_new(a, o);
		}
		a = json_array();
		json_object_set_new(doc, "pairs", a);
		for (i = 0; a != NULL && i < rules->n; i++) {
			p = &ctx->pairs[i];
			if ((o = json_object()) == NULL)
				break;
			json_object_set_new(o, "pair",
			    json_string(rules->v[i].label));
			if (rules->v[i].key != NULL)
				json_object_set_new(o, "key",
				    json_string(rules->v[i].key));
			json_object_set_new(o, "count", stats_json_ns(
			    (int64_t)p->n));
			if (p->n > 0) {
				json_object_set_new(o, "min",
				    stats_json_ns(p->min));
				json_object_set_new(o, "median", stats_json_ns(
				    stats_rank(p->d, p->nd, 50)));
				json_object_set_new(o, "p99", stats_json_ns(
				    stats_rank(p->d, p->nd, 99)));
				json_object_set_new(o, "max",
				    stats_json_ns(p->max));
			}
			json_object_set_new(o, "sampled",
			    json_boolean(p->n > p->nd));
			json_object_set_new(o, "unmatched_starts",
			    stats_json_ns((int64_t)(pairer_unmatched(pr, i) +
			    pairer_dropped(pr, i))));
			json_object_set_new(o, "unmatched_ends",
			    stats_json_ns((int64_t)pairer_orphans(pr, i)));
			json_array_append_new(a, o);
		}
		a = json_array();
		json_object_set_new(doc, "functions", a);
		for (i = 0; a != NULL && i < nfids; i++)
			if ((o = stats_json_func(ctx, fids[i])) == NULL ||
			    json_array_append_new(a, o) == -1)
				break;
		if (json_dumpf(doc, stdout, JSON_INDENT(1) |
		    JSON_PRESERVE_ORDER) == -1) {
			json_decref(doc);
			return -1;
		}
		putchar('\n');
		json_decref(doc);
		return 0;
	}

	printf("sessions:\n  %-32s %10s %12s  %-29s  %-29s  %s\n", "SESSION",
	    "EVENTS", "PER SECOND", "FIRST", "LAST", "LOST");
	for (i = 0; i < ns; i++)
		stats_text_count(ss[i].name, &ctx->sess[i], 1);
	printf("threads:\n  %-32s %10s %12s  %-29s  %-29s  %s\n",
	    "SESSION/TID", "EVENTS", "PER SECOND", "FIRST", "LAST", "LOST");
	for (i = 0; i < nt; i++) {
		snprintf(label, sizeof(label), "%s/%llu", ts[i].sess->name,
		    (unsigned long long)ts[i].tid);
		stats_text_count(label, &ctx->threads[i], 1);
	}
	printf("events:\n  %-32s %10s %12s  %-29s  %s\n", "EVENT", "COUNT",
	    "PER SECOND", "FIRST", "LAST");
	for (i = 0; i < ctx->nevents; i++)
		stats_text_count(ctx->events[i].name, &ctx->events[i].c, 0);
	if (nfids > 0)
		stats_text_funcs(ctx, fids, nfids);
	if (rules->n == 0)
		return 0;
	printf("pairs (durations in ns):\n  %-32s %10s %12s %12s %12s %12s\n",
	    "PAIR", "COUNT", "MIN", "MEDIAN", "P99", "MAX");
	for (i = 0; i < rules->n; i++) {
		p = &ctx->pairs[i];
		snprintf(label, sizeof(label), "%s%s%s", rules->v[i].label,
		    rules->v[i].key != NULL ? " by " : "",
		    rules->v[i].key != NULL ? rules->v[i].key : "");
		sampled = p->n > p->nd;
		if (p->n == 0)
			printf("  %-32s %10d %12s %12s %12s %12s", label, 0,
			    "-", "-", "-", "-");
		else
			printf("  %-32s %10llu %12lld %12lld %12lld %12lld",
			    label, (unsigned long long)p->n,
			    (long long)p->min,
			    (long long)stats_rank(p->d, p->nd, 50),
			    (long long)stats_rank(p->d, p->nd, 99),
			    (long long)p->max);
		if (pairer_unmatched(pr, i) + pairer_dropped(pr, i) > 0)
			printf("  (%llu starts without an end)",
			    (unsigned long long)(pairer_unmatched(pr, i) +
			    pairer_dropped(pr, i)));
		if (pairer_orphans(pr, i) > 0)
			printf("  (%llu ends without a start)",
			    (unsigned long long)pairer_orphans(pr, i));
		if (sampled)
			printf("  (median and p99 from a sample of %zu)",
			    p->nd);
		putchar('\n');
	}
	return 0;
}

static int
stats_output(struct stats_ctx *ctx, struct reader *r,
    const struct pair_rules *rules, const struct pairer *pr, int json)
{
	size_t		*fids, nfids;
	int		 rc;

	fids = stats_funcs_sorted(ctx, &nfids);
	if (fids == NULL && nfids == 1)
		return -1;
	rc = stats_report(ctx, r, rules, pr, json, fids, nfids);
	free(fids);
	return rc;
}

/*
 * tracectl stats.  Contract in tracectl.h.
 */
int
stats_main(int nargs, char **args, int json)
{
	struct stats_ctx	 ctx;
	struct readcmd		 cmd;
	struct pairer		*pr = NULL;
	struct reader		*r = NULL;
	struct pair_match	 m;
	struct stats_event	*e;
	const struct reader_item *it;
	size_t			 i, ns, nt;
	int			 rc, ret = EXIT_DONE;

	memset(&ctx, 0, sizeof(ctx));
	if ((rc = readcmd_parse(&cmd, &stats_cmd, json, nargs, args,
	    NULL)) == READCMD_NOMEM)
		goto nomem;
	if (rc != READCMD_RUN) {
		ret = rc;
		goto out;
	}
	if ((r = reader_new(&cmd.opts, stats_error, NULL)) == NULL ||
	    (pr = pairer_new(&cmd.pairs)) == NULL)
		goto nomem;
	for (i = 0; i < cmd.ndirs; i++)
		if (reader_add(r, cmd.dirs[i]) == -1)
			goto fail;
	if (reader_start(r) == -1)
		goto fail;
	reader_sessions(r, &ns);
	reader_threads(r, &nt);
	if ((ctx.sess = calloc(ns + 1, sizeof(*ctx.sess))) == NULL ||
	    (ctx.threads = calloc(nt + 1, sizeof(*ctx.threads))) == NULL)
		goto nomem;
	if ((ctx.calls = calls_new(ns, nt, stats_error, NULL)) == NULL)
		goto nomem;
	while ((rc = reader_next(r, &it)) > 0) {
		stats_add(&ctx.sess[it->sess->index], it);
		stats_add(&ctx.threads[it->thread->index], it);
		if (calls_feed(ctx.calls, it, stats_call, &ctx) == -1)
			goto nomem;
		if (it->kind != READER_EVENT)
			continue;
		if ((e = stats_event(&ctx, it->ev->cls->name)) == NULL)
			goto nomem;
		stats_add(&e->c, it);
		if ((rc = pairer_feed(pr, it, &m)) == -1)
			goto nomem;
		if (rc == 1 && stats_dur(&ctx.pairs[m.rule],
		    m.end_ns - m.start_ns, STATS_DURATIONS_MAX) == -1)
			goto nomem;
	}
	if (rc == -1)
		goto fail;
	if (calls_finish(ctx.calls, stats_call, &ctx) == -1)
		goto nomem;
	if (stats_output(&ctx, r, &cmd.pairs, pr, cmd.json) == -1)
		goto nomem;
	goto out;
nomem:
	stats_error(NULL, "out of memory");
fail:
	ret = EXIT_FAILED;
out:
	if (fflush(stdout) == EOF || ferror(stdout))
		ret = EXIT_FAILED;
	if (r != NULL && reader_nerrors(r) > 0 && ret == EXIT_DONE)
		ret = EXIT_FAILED;
	for (i = 0; i < ctx.evcap; i++)
		free(ctx.events[i].name);
	free(ctx.events);
	for (i = 0; i < PAIR_RULES_MAX; i++)
		free(ctx.pairs[i].d);
	for (i = 0; i < ctx.nfuncs; i++)
		free(ctx.funcs[i].d.d);
	free(ctx.funcs);
	calls_free(ctx.calls);
	free(ctx.sess);
	free(ctx.threads);
	pairer_free(pr);
	reader_free(r);
	readcmd_free(&cmd);
	return ret;
}
