/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The control commands.  The table itself is proto/commands.def, shared
 * with tracectl; cmd_exec() looks the command up (exact name, then
 * unique prefix), checks arity and permission (state-changing commands
 * need uid 0, the daemon's uid or its group, primary or supplementary)
 * and calls the handler below, which answers through the reply builder
 * of control.c: lines for people, or with --json one JSON object per
 * line, built and written by jansson (never by hand: the text in them
 * comes from clients).  In JSON, counts are numbers, exact up to 2^53;
 * times in nanoseconds are strings of digits, which jq and JavaScript
 * would otherwise round; booleans are true and false; a value nobody
 * knows is null.
 *
 * Every handler's work is bounded by what the daemon holds (sessions,
 * distinct event classes), never by a product of them.  Loop thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cause.h"
#include "clock.h"
#include "command.h"
#include "func.h"
#include "rule.h"
#include "text.h"
#include "traced.h"

typedef int (*cmd_exec_cb)(struct reply *, int, char **);

/* Sessions with at most this many threads list each in info trace. */
#define INFO_THREADS_SHOWN	8
/* Busiest threads shown of a session with more. */
#define INFO_THREADS_TOP	5

/* ---- JSON values ------------------------------------------------- */

/*
 * A JSON string of s, or null for NULL.  Client text was made valid
 * UTF-8 at the door; anything else is escaped here rather than lost.
 */
static json_t *
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
static json_t *
jns(uint64_t ns)
{
	char buf[32];

	if (ns == 0)
		return json_null();
	snprintf(buf, sizeof(buf), "%" PRIu64, ns);
	return json_string(buf);
}

static json_t *
jnum(uint64_t v)
{
	return json_integer((json_int_t)v);
}

/* Losses by cause as an object, every cause present. */
static json_t *
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
static uint64_t
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

/* ---- help -------------------------------------------------------- */

static json_t *
help_item(const struct command_def *d, const char *usage)
{
	return json_pack("{s:o, s:o, s:o, s:b}", "name", jstr(d->name),
	    "usage", jstr(usage), "help", jstr(d->help), "changes_state",
	    (d->flags & CMD_F_PRIVILEGED) != 0);
}

static int
cmd_help_exec(struct reply *r, int argc, char **argv)
{
	const struct command_def *t, *d;
	char err[512], usage[512];
	size_t n, i;
	int consumed;

	if (argc > 0) {
		d = command_lookup(argc, argv, &consumed, err, sizeof(err));
		if (d == NULL) {
			reply_error(r, "%s", err);
			return TRACED_CTL_USAGE;
		}
		if (consumed != argc) {
			reply_error(r, "usage: tracectl help [COMMAND]");
			return TRACED_CTL_USAGE;
		}
		command_format_usage(d, usage, sizeof(usage));
		if (reply_json(r))
			reply_item(r, help_item(d, usage));
		else {
			reply_line(r, "%s", usage);
			reply_line(r, "  %s", d->help);
		}
		return TRACED_CTL_OK;
	}
	t = command_table(&n);
	for (i = 0; i < n; i++) {
		if (reply_json(r))
			reply_item(r, help_item(&t[i], t[i].usage));
		else
			reply_line(r, "%-18s %-24s %s", t[i].name, t[i].usage,
			    t[i].help);
	}
	return TRACED_CTL_OK;
}

/* ---- trace-event, info trace-rules -------------------------------- */

/* Does 'pattern' match event k of p, as a rule would? */
static int
rule_matches(const char *pattern, const struct pdesc *d, size_t k)
{
	return rule_match(pattern, d->name, d->tf.events[k].name);
}

/*
 * Events of running processes a pattern matches, and the processes
 * that have one; each description is matched once, whatever the
 * number of sessions that share it.
 */
static void
rule_reach(const char *pattern, unsigned *events, unsigned *procs)
{
	struct session *s;
	uint32_t i;
	size_t k;

	*events = *procs = 0;
	td->reach_gen++;
	TAILQ_FOREACH(s, &td->sessions, entry) {
		unsigned before = *events;

		for (i = 0; i < s->nprovs; i++) {
			struct pdesc *d = s->provs[i]->d;

			/* d->reach_gen marks a description seen in this
			 * count: its matches are in d->reach. */
			if (d->reach_gen != td->reach_gen) {
				d->reach = 0;
				for (k = 0; k < d->tf.nevents; k++)
					d->reach += rule_matches(pattern, d,
					    k);
				d->reach_gen = td->reach_gen;
			}
			*events += d->reach;
		}
		if (*events != before)
			(*procs)++;
	}
}

static int cmd_info_trace_rules_exec(struct reply *, int, char **);

/*
 * Of the events a pattern matches, those a rule of their own process
 * decides (libtraced's traced_events_set(), TRACED_EVENTS): a daemon
 * rule does not change them.  Only sessions with such rules are looked
 * at, each of their events once.
 */
static unsigned
rule_kept(const char *pattern)
{
	struct session *s;
	const struct ptable *t;
	unsigned n = 0;
	uint32_t i, k;

	TAILQ_FOREACH(s, &td->sessions, entry) {
		if (s->nptables == 0)
			continue;
		for (i = 0; i < s->nprovs; i++) {
			if ((t = state_ptable(s, s->provs[i]->index)) == NULL)
				continue;
			for (k = 0; k < s->provs[i]->nevents; k++)
				if (state_ptable_on(s, t, k) >= 0 &&
				    rule_matches(pattern, s->provs[i]->d, k))
					n++;
		}
	}
	return n;
}

static int
cmd_trace_event_exec(struct reply *r, int argc, char **argv)
{
	char err[256], keptmsg[128] = "";
	unsigned events, procs, kept;
	int on;

	if (argc == 1 && strcmp(argv[0], "list") == 0)
		return cmd_info_trace_rules_exec(r, 0, argv);
	if (argc == 1) {
		if (state_rules_reset() == -1)
			reply_error(r, "the rules are gone now but their "
			    "removal could not be saved (see the daemon's "
			    "log): a restarted daemon would have them");
		else
			reply_message(r, "every rule removed: each event is "
			    "on or off as its trace-events file says");
		return reply_failed(r) ? TRACED_CTL_ERROR : TRACED_CTL_OK;
	}
	if (command_pattern_valid(argv[0], err, sizeof(err)) == -1) {
		reply_error(r, "%s", err);
		return TRACED_CTL_USAGE;
	}
	if (strcmp(argv[1], "delete") == 0) {
		switch (state_rule_delete(argv[0])) {
		case 0:
			reply_error(r, "no rule '%s' (see 'tracectl info "
			    "trace-rules')", argv[0]);
			return TRACED_CTL_ERROR;
		case -1:
			reply_error(r, "rule '%s' removed now, but the removal "
			    "could not be saved (see the daemon's log)",
			    argv[0]);
			return TRACED_CTL_ERROR;
		}
		rule_reach(argv[0], &events, &procs);
		reply_message(r, "rule '%s' removed: the %u matching event%s "
		    "in %u running process%s follow the other rules again",
		    argv[0], events, events == 1 ? "" : "s", procs,
		    procs == 1 ? "" : "es");
		return TRACED_CTL_OK;
	}
	if ((on = command_parse_onoff(argv[1])) == -1) {
		reply_error(r, "expected 'on', 'off' or 'delete', not '%s'",
		    argv[1]);
		return TRACED_CTL_USAGE;
	}
	if (state_rule_add(argv[0], on) == -1)
		reply_error(r, "the rule applies now but could not be saved "
		    "in %s (see the daemon's log): a restarted daemon will "
		    "not have it", td->cfg.state_dir);
	if (reply_failed(r))
		return TRACED_CTL_ERROR;
	rule_reach(argv[0], &events, &procs);
	if ((kept = rule_kept(argv[0])) > 0)
		snprintf(keptmsg, sizeof(keptmsg), " (%u of them stay as "
		    "their process's own rules say: see 'info trace-events')",
		    kept);
	reply_message(r, "'%s' %s: applies now to %u event%s in %u running "
	    "process%s%s and to every process that starts later%s", argv[0],
	    on ? "on" : "off", events, events == 1 ? "" : "s", procs,
	    procs == 1 ? "" : "es", keptmsg,
	    td->paused && on ? " (trace-file is off: nothing is recorded "
	    "until 'trace-file on')" : "");
	return TRACED_CTL_OK;
}

static int
cmd_info_trace_rules_exec(struct reply *r, int argc, char **argv)
{
	unsigned events, procs;
	size_t i;

	(void)argc;
	(void)argv;
	for (i = 0; i < td->nrules; i++) {
		rule_reach(td->rules[i].pattern, &events, &procs);
		if (reply_json(r))
			reply_item(r, json_pack("{s:I, s:o, s:s, s:I, s:I}",
			    "order", (json_int_t)i + 1, "pattern",
			    jstr(td->rules[i].pattern), "state",
			    td->rules[i].on ? "on" : "off", "events_now",
			    (json_int_t)events, "processes_now",
			    (json_int_t)procs));
		else
			reply_line(r, "%3zu  %-3s  %-40s (%u event%s in %u "
			    "running process%s)", i + 1, td->rules[i].on ?
			    "on" : "off", td->rules[i].pattern, events,
			    events == 1 ? "" : "s", procs,
			    procs == 1 ? "" : "es");
	}
	if (td->nrules == 0)
		reply_message(r, "no rule: each event is on or off as its "
		    "trace-events file says ('disable' makes it off)");
	else
		reply_message(r, "the last rule that matches an event decides; "
		    "'trace-event PATTERN delete' removes one, 'trace-event "
		    "reset' all");
	return TRACED_CTL_OK;
}

/* ---- info trace-events ------------------------------------------ */

/* One event of one session, for info trace-events. */
struct known_event {
	const struct session	*s;	/* borrowed, as are the others */
	const struct pdesc	*d;
	uint32_t		 k;	/* the event's number in d */
	int			 on;
	struct state_why	 why;
};

static int
known_why_cmp(const struct state_why *a, const struct state_why *b)
{
	int c;

	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	if (a->pattern != NULL && b->pattern != NULL &&
	    (c = strcmp(a->pattern, b->pattern)) != 0)
		return c;
	return (a->flags > b->flags) - (a->flags < b->flags);
}

/* By provider:event, then state, then reason, then session. */
static int
known_cmp(const void *va, const void *vb)
{
	const struct known_event *a = va, *b = vb;
	int c;

	if ((c = strcmp(a->d->name, b->d->name)) != 0 ||
	    (c = strcmp(a->d->tf.events[a->k].name,
	    b->d->tf.events[b->k].name)) != 0)
		return c;
	if (a->on != b->on)
		return b->on - a->on;
	if ((c = known_why_cmp(&a->why, &b->why)) != 0)
		return c;
	return (a->s->id > b->s->id) - (a->s->id < b->s->id);
}

/* One line of output: the same event, state and reason? */
static int
known_same(const struct known_event *a, const struct known_event *b)
{
	return strcmp(a->d->name, b->d->name) == 0 &&
	    strcmp(a->d->tf.events[a->k].name,
	    b->d->tf.events[b->k].name) == 0 && a->on == b->on &&
	    known_why_cmp(&a->why, &b->why) == 0;
}

/* Where a state comes from, for people. */
static const char *
known_why_text(const struct state_why *w, char *buf, size_t size)
{
	switch (w->src) {
	case STATE_SRC_DEFAULT:
		return "default";
	case STATE_SRC_DISABLE:
		return "default (disable)";
	case STATE_SRC_RULE:
		snprintf(buf, size, "rule '%s'", w->pattern);
		return buf;
	case STATE_SRC_PROCESS:
		snprintf(buf, size, "process rule '%s' (%s)", w->pattern,
		    w->flags & TRACED_RULE_ENV ? "TRACED_EVENTS" :
		    "traced_events_set");
		return buf;
	}
	return "?";
}

static const char *const known_src_names[] = {
	[STATE_SRC_DEFAULT] = "default", [STATE_SRC_DISABLE] = "disable",
	[STATE_SRC_RULE] = "rule", [STATE_SRC_PROCESS] = "process",
};

/*
 * Every event of every connected process, its state and where that
 * comes from: the default, 'disable', a rule of the daemon, or a rule
 * of the process itself.  One line per event, state and reason, made
 * by sorting, so the work is the number of events the sessions hold
 * (times the daemon's rules, to name the one that decides), not that
 * squared.
 */
static int
cmd_info_trace_events_exec(struct reply *r, int argc, char **argv)
{
	struct known_event *ke = NULL, *nk;
	size_t nke = 0, cap = 0, i, j, n, k;
	struct session *s;
	char full[TRACED_NAME_MAX + TEVENTS_NAME_MAX + 2], why[320];
	char where[TRACED_COMM_MAX + 64];
	const struct known_event *e;
	uint32_t p;

	TAILQ_FOREACH(s, &td->sessions, entry)
		for (p = 0; p < s->nprovs; p++) {
			struct pdesc *d = s->provs[p]->d;

			for (k = 0; k < d->tf.nevents; k++) {
				if (argc > 0 &&
				    !rule_match(argv[0], NULL,
				    d->tf.events[k].name) &&
				    !rule_matches(argv[0], d, k))
					continue;
				if (nke == cap) {
					cap = cap ? cap * 2 : 256;
					nk = reallocarray(ke, cap, sizeof(*ke));
					if (nk == NULL) {
						free(ke);
						reply_error(r, "out of memory");
						return TRACED_CTL_ERROR;
					}
					ke = nk;
				}
				ke[nke].s = s;
				ke[nke].d = d;
				ke[nke].k = (uint32_t)k;
				ke[nke].on = state_session_event(s,
				    s->provs[p], (uint32_t)k, &ke[nke].why);
				nke++;
			}
		}
	if (ke != NULL)
		qsort(ke, nke, sizeof(*ke), known_cmp);
	for (i = 0; i < nke && !reply_cut(r); i = j) {
		for (j = i + 1; j < nke && known_same(&ke[i], &ke[j]); j++)
			;
		e = &ke[i];
		n = j - i;
		snprintf(full, sizeof(full), "%s:%s", e->d->name,
		    e->d->tf.events[e->k].name);
		snprintf(where, sizeof(where), "%s[%d]%s", e->s->comm,
		    (int)e->s->pid, n > 1 ? " and others" : "");
		if (reply_json(r))
			reply_item(r, json_pack("{s:o, s:s, s:b, s:s, s:o, "
			    "s:o, s:I, s:o}", "name", jstr(full), "state",
			    e->on ? "on" : "off", "recording",
			    e->on && !td->paused, "source",
			    known_src_names[e->why.src], "rule",
			    jstr(e->why.pattern), "set_by",
			    e->why.src != STATE_SRC_PROCESS ? json_null() :
			    jstr(e->why.flags & TRACED_RULE_ENV ?
			    "TRACED_EVENTS" : "traced_events_set"),
			    "processes", (json_int_t)n, "where", jstr(where)));
		else
			reply_line(r, "%-40s %-3s  %-24s %zu process%s: %s",
			    full, e->on ? "on" : "off",
			    known_why_text(&e->why, why, sizeof(why)), n,
			    n == 1 ? "" : "es", where);
	}
	free(ke);
	if (nke == 0)
		reply_message(r, argc > 0 ? "no connected process has an "
		    "event matching '%s'" : "no connected process has "
		    "events%s", argc > 0 ? argv[0] : "");
	else if (td->paused)
		reply_message(r, "trace-file is off: no event is recorded "
		    "until 'trace-file on'");
	return TRACED_CTL_OK;
}

/* ---- trace-file ---------------------------------------------------- */

static int
cmd_trace_file_exec(struct reply *r, int argc, char **argv)
{
	char err[PATH_MAX + 256], was[PATH_MAX];
	const char *path;
	int on, created;

	if (strcmp(argv[0], "flush") == 0) {
		if (argc != 1) {
			reply_error(r, "usage: tracectl trace-file flush");
			return TRACED_CTL_USAGE;
		}
		td->flush_gen++;
		writeout_drain_all(td->flush_gen);
		reply_wait_flush(r, td->flush_gen);
		return TRACED_CTL_OK;
	}
	if (strcmp(argv[0], "set") == 0) {
		if (argc != 2 || argv[1][0] == '\0') {
			reply_error(r, "usage: tracectl trace-file set "
			    "PATH|default");
			return TRACED_CTL_USAGE;
		}
		path = argv[1];
		if (strcmp(path, "default") == 0)
			path = trace_dir_default();
		else if (path[0] != '/') {
			reply_error(r, "'%s' is relative: give an absolute "
			    "path (the daemon does not share your working "
			    "directory), or 'default'", path);
			return TRACED_CTL_USAGE;
		}
		snprintf(was, sizeof(was), "%s", td->cfg.trace_dir);
		if (trace_dir_set(path, strcmp(argv[1], "default") == 0 ?
		    "default" : "set", &created, err, sizeof(err)) == -1) {
			if (strcmp(td->cfg.trace_dir, path) == 0)
				reply_error(r, "%s", err);
			else
				reply_error(r, "%s; traces still go to %s",
				    err, was);
			return TRACED_CTL_ERROR;
		}
		reply_message(r, "tracing to %s%s%s", td->cfg.trace_dir,
		    created ? " (created)" : "",
		    strcmp(argv[1], "default") == 0 ? " (the default)" :
		    "; kept across restarts until 'trace-file set default'");
		return TRACED_CTL_OK;
	}
	on = command_parse_onoff(argv[0]);
	if (on == -1 || argc != 1) {
		reply_error(r, "usage: tracectl trace-file "
		    "on|off|flush|set PATH|set default");
		return TRACED_CTL_USAGE;
	}
	if (td->paused == !on) {
		reply_message(r, "trace-file is already %s", on ? "on" : "off");
		return TRACED_CTL_OK;
	}
	td->paused = !on;
	state_apply_all();
	if (!on)
		writeout_drain_all(0);
	log_info("trace-file %s", on ? "on" : "off");
	reply_message(r, on ? "tracing resumed: events follow their rules "
	    "again" : "tracing paused: every event is off in every process; "
	    "the rules are kept");
	return TRACED_CTL_OK;
}

/* ---- info trace ---------------------------------------------------- */

/* What one ring says now: events, losses by cause, fill level. */
struct ring_now {
	uint64_t	 lost[TRACED_DROP_NCAUSES];
	uint64_t	 total_lost;
	uint64_t	 fill;		/* percent */
	uint64_t	 size;		/* bytes, as its header says now */
};

static void
ring_now(const struct sring *rg, struct ring_now *n)
{
	uint64_t size, head = 0, tail = 0, d, rec;
	uint32_t order = rg->order, o;
	int i;

	memcpy(n->lost, rg->lost, sizeof(n->lost));
	if (rg->hdr != NULL) {
		/*
		 * The ring's size, head and tail, from its header: client
		 * memory, so checked (a size the drain thread did not see
		 * yet, up to the most the ring may have; only this ring's
		 * line can be wrong).
		 */
		o = __atomic_load_n(&rg->hdr->order, __ATOMIC_RELAXED);
		if (o >= rg->order && o <= rg->max_order)
			order = o;
		head = __atomic_load_n(&rg->hdr->head, __ATOMIC_RELAXED);
		tail = __atomic_load_n(&rg->hdr->tail, __ATOMIC_RELAXED);
		/* Losses no LOST record reported yet count too (a total
		 * that went backwards is no loss). */
		for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES &&
		    !rg->books_closed; i++) {
			d = __atomic_load_n(&rg->hdr->dropped[i],
			    __ATOMIC_RELAXED);
			rec = __atomic_load_n(&rg->hdr->recorded[i],
			    __ATOMIC_RELAXED);
			if (d > rec && d - rec < (UINT64_C(1) << 48))
				n->lost[i] += d - rec;
		}
	}
	size = traced_ring_size(order);
	n->size = size;
	n->fill = head >= tail && head - tail <= size ?
	    (head - tail) * 100 / size : 0;
	n->total_lost = 0;
	for (i = 0; i < TRACED_DROP_NCAUSES; i++)
		n->total_lost += n->lost[i];
}

static const char *
ring_state(const struct sring *rg)
{
	return rg->quarantined ? "refused" : rg->finished ? "finished" :
	    "active";
}

static void
info_ring(struct reply *r, const struct session *s, const struct sring *rg)
{
	struct ring_now n;
	char causes[256];

	ring_now(rg, &n);
	if (reply_json(r)) {
		reply_item(r, json_pack("{s:s, s:I, s:i, s:I, s:I, s:I, s:I, "
		    "s:I, s:o, s:I, s:s, s:o, s:b, s:I}", "type", "ring",
		    "session", (json_int_t)s->id, "tid", (int)rg->tid, "size",
		    (json_int_t)n.size, "fill_percent",
		    (json_int_t)n.fill, "events", (json_int_t)rg->events,
		    "bytes", (json_int_t)rg->bytes, "lost",
		    (json_int_t)n.total_lost, "lost_by_cause",
		    jcauses(n.lost), "lost_records",
		    (json_int_t)rg->lost_records, "state", ring_state(rg),
		    "stream", jstr(rg->stream_path), "write_error",
		    rg->write_errno != 0, "max_size",
		    (json_int_t)traced_ring_size(rg->max_order)));
		return;
	}
	format_causes(causes, sizeof(causes), n.lost);
	reply_line(r, "    thread %-7d ring %6" PRIu64 " KiB (of %" PRIu64 ") %3"
	    PRIu64 "%% full  events %" PRIu64 "  lost %" PRIu64 "%s%s%s%s%s%s",
	    (int)rg->tid, n.size / 1024,
	    traced_ring_size(rg->max_order) / 1024, n.fill,
	    rg->events, n.total_lost, n.total_lost ? " (" : "", causes,
	    n.total_lost ? ")" : "",
	    rg->quarantined ? "  REFUSED (bad ring contents)" : "",
	    rg->finished ? "  finished" : "",
	    rg->write_errno ? "  WRITE ERROR" : "");
	if (rg->write_errno)
		reply_line(r, "      cannot write %s: %s", rg->stream_path ?
		    rg->stream_path : "(no file)", strerror(rg->write_errno));
}

static int
ring_busier(const void *a, const void *b)
{
	const struct sring *x = *(const struct sring *const *)a;
	const struct sring *y = *(const struct sring *const *)b;

	return x->events < y->events ? 1 : x->events > y->events ? -1 : 0;
}

/*
 * A session with many threads, for people: the busiest few, and the
 * rest summed up in one line.  The details are in info session ID.
 */
static void
info_threads_summary(struct reply *r, const struct session *s)
{
	const struct sring **rs, *rg;
	struct ring_now n;
	uint64_t events = 0, lost = 0, all[TRACED_DROP_NCAUSES] = { 0 };
	uint32_t i = 0, k, finished = 0, refused = 0;
	char causes[256];
	int c;

	if ((rs = calloc(s->nrings, sizeof(*rs))) == NULL)
		return;
	TAILQ_FOREACH(rg, &s->rings, entry)
		if (i < s->nrings)
			rs[i++] = rg;
	qsort(rs, i, sizeof(*rs), ring_busier);
	for (k = 0; k < i && k < INFO_THREADS_TOP; k++)
		info_ring(r, s, rs[k]);
	for (; k < i; k++) {
		ring_now(rs[k], &n);
		events += rs[k]->events;
		lost += n.total_lost;
		for (c = 0; c < TRACED_DROP_NCAUSES; c++)
			all[c] += n.lost[c];
		finished += rs[k]->finished;
		refused += rs[k]->quarantined;
	}
	format_causes(causes, sizeof(causes), all);
	reply_line(r, "    ... %u more threads (%u finished%s): events %"
	    PRIu64 "  lost %" PRIu64 "%s%s%s; each thread: 'tracectl info "
	    "session %u'", i - INFO_THREADS_TOP, finished, refused ?
	    ", some REFUSED" : "", events, lost, lost ? " (" : "", causes,
	    lost ? ")" : "", s->id);
	free(rs);
}

/* The sessions that ended lately, with their final counts. */
static void
info_ended(struct reply *r)
{
	const struct ended *e;
	uint64_t events, lost, all[TRACED_DROP_NCAUSES];
	char causes[256];
	uint32_t i;
	int c;

	if (!reply_json(r) && !TAILQ_EMPTY(&td->ended))
		reply_line(r, "ended lately (the last %d; 'tracectl info "
		    "sessions' has them all):", ENDED_KEEP);
	TAILQ_FOREACH(e, &td->ended, entry) {
		if (reply_json(r)) {
			reply_item(r, json_pack("{s:s, s:I, s:i, s:I, s:o, "
			    "s:o, s:I, s:o, s:o}", "type", "ended_session",
			    "session", (json_int_t)e->id, "pid", (int)e->pid,
			    "uid", (json_int_t)e->uid, "comm", jstr(e->comm),
			    "dir", jstr(e->dir), "lost_before_connect",
			    (json_int_t)e->lost_disconnected, "started_ns",
			    jns(e->started), "ended_ns", jns(e->ended_at)));
			for (i = 0; i < e->nthreads; i++) {
				const struct ended_thread *t = &e->threads[i];

				lost = 0;
				for (c = 0; c < TRACED_DROP_NCAUSES; c++)
					lost += t->lost[c];
				reply_item(r, json_pack("{s:s, s:I, s:i, s:I, "
				    "s:I, s:o, s:I, s:I, s:I}", "type", "ended_ring",
				    "session", (json_int_t)e->id, "tid",
				    (int)t->tid, "events",
				    (json_int_t)t->events, "lost",
				    (json_int_t)lost, "lost_by_cause",
				    jcauses(t->lost), "lost_records",
				    (json_int_t)t->lost_records, "ring_size",
				    (json_int_t)t->ring_size, "ring_max",
				    (json_int_t)t->ring_max));
			}
			continue;
		}
		events = 0;
		memset(all, 0, sizeof(all));
		all[TRACED_DROP_DISCONNECTED] = e->lost_disconnected;
		for (i = 0; i < e->nthreads; i++) {
			events += e->threads[i].events;
			for (c = 0; c < TRACED_DROP_NCAUSES; c++)
				all[c] += e->threads[i].lost[c];
		}
		lost = format_causes(causes, sizeof(causes), all);
		reply_line(r, "  session %u: %s[%d] uid %u, %u thread%s, events "
		    "%" PRIu64 "  lost %" PRIu64 "%s%s%s  %s", e->id, e->comm,
		    (int)e->pid, (unsigned)e->uid, e->nthreads,
		    e->nthreads == 1 ? "" : "s", events, lost,
		    lost ? " (" : "", causes, lost ? ")" : "",
		    e->dir ? e->dir : "-");
	}
}

static int
cmd_info_trace_exec(struct reply *r, int argc, char **argv)
{
	const struct session *s;
	const struct sring *rg;
	struct ring_now n;
	struct pool_stats ps;
	unsigned nsessions = 0;
	uint64_t all[TRACED_DROP_NCAUSES], wdirect, wcached;
	char causes[256];
	int i;

	(void)argc;
	(void)argv;
	TAILQ_FOREACH(s, &td->sessions, entry)
		nsessions++;
	writeout_written(&wdirect, &wcached);
	pool_stats(&ps);
	if (reply_json(r))
		reply_item(r, json_pack("{s:s, s:o, s:s, s:I, s:i, s:s, s:I, "
		    "s:I, s:I, s:I, s:s, s:I}", "type", "trace", "trace_dir",
		    jstr(td->cfg.trace_dir), "state", td->paused ? "off" : "on",
		    "writeout_threads", (json_int_t)writeout_nworkers(),
		    "writeout_nice", td->cfg.writeout_nice,
		    "direct_io", td->cfg.direct_io ? "on" : "off",
		    "written_direct", (json_int_t)wdirect,
		    "written_cached", (json_int_t)wcached,
		    "drain_interval_ms", (json_int_t)td->cfg.drain_ms,
		    "default_ring_size",
		    (json_int_t)traced_ring_size(td->cfg.ring_order), "clock",
		    traced_clock_use_tsc() && td->have_tsc ? "tsc" :
		    "monotonic", "sessions", (json_int_t)nsessions));
	else {
		reply_line(r, "trace file: %s (%s)", td->cfg.trace_dir,
		    td->paused ? "off: paused" : "on");
		reply_line(r, "writeout: %u threads (nice %d, direct I/O %s), "
		    "drain every %u ms; default ring %" PRIu64 " KiB per "
		    "thread (from %" PRIu64 " KiB, growing when busy); "
		    "clock %s", writeout_nworkers(), td->cfg.writeout_nice,
		    td->cfg.direct_io ? "on" : "off", td->cfg.drain_ms,
		    traced_ring_size(td->cfg.ring_order) / 1024,
		    traced_ring_size(td->cfg.ring_order < TRACED_RING_ORDER_INIT ?
		    td->cfg.ring_order : TRACED_RING_ORDER_INIT) / 1024,
		    td->have_tsc ? "tsc (monotonic for processes that ask)" :
		    "monotonic");
		reply_line(r, "written: %" PRIu64 " MB directly to the disk, "
		    "%" PRIu64 " MB through the page cache", wdirect / 1000000,
		    wcached / 1000000);
		if (ps.want > 0 || ps.ready > 0)
			reply_line(r, "ring pool: %u of %u rings of %" PRIu64
			    " KiB ready%s, for uid %u; %" PRIu64 " made "
			    "(%" PRIu64 " MiB in 2 MiB pages, %" PRIu64 " MiB "
			    "in 4 KiB), %" PRIu64 " given", ps.ready, ps.want,
			    traced_ring_size(ps.order) / 1024, ps.making ?
			    ", making one" : "", (unsigned)geteuid(), ps.made,
			    ps.huge_bytes >> 20, ps.small_bytes >> 20,
			    ps.given);
		reply_line(r, "sessions: %u", nsessions);
	}
	if (reply_json(r))
		reply_item(r, json_pack("{s:s, s:I, s:I, s:I, s:b, s:I, s:I, "
		    "s:I, s:I, s:I}", "type", "ring_pool", "want",
		    (json_int_t)ps.want, "ready", (json_int_t)ps.ready,
		    "ring_size", (json_int_t)traced_ring_size(ps.order),
		    "making", ps.making, "uid", (json_int_t)geteuid(),
		    "made", (json_int_t)ps.made, "given",
		    (json_int_t)ps.given, "huge_bytes",
		    (json_int_t)ps.huge_bytes, "small_bytes",
		    (json_int_t)ps.small_bytes));
	TAILQ_FOREACH(s, &td->sessions, entry) {
		uint64_t ev = 0, lost;

		memset(all, 0, sizeof(all));
		all[TRACED_DROP_DISCONNECTED] = s->lost_disconnected;
		TAILQ_FOREACH(rg, &s->rings, entry) {
			ring_now(rg, &n);
			ev += rg->events;
			for (i = 0; i < TRACED_DROP_NCAUSES; i++)
				all[i] += n.lost[i];
		}
		lost = format_causes(causes, sizeof(causes), all);
		if (reply_json(r))
			reply_item(r, json_pack("{s:s, s:I, s:i, s:I, s:o, "
			    "s:o, s:I, s:I, s:I, s:I, s:s, s:o, s:I, s:I, "
			    "s:o, s:o}", "type", "session", "session",
			    (json_int_t)s->id, "pid", (int)s->pid, "uid",
			    (json_int_t)s->uid, "comm", jstr(s->comm), "dir",
			    jstr(s->dir), "rings", (json_int_t)s->nrings,
			    "events", (json_int_t)ev, "lost", (json_int_t)lost,
			    "lost_before_connect",
			    (json_int_t)s->lost_disconnected, "state",
			    s->closing ? "ending" : "connected",
			    "lost_by_cause", jcauses(all),
			    "refused_rings", (json_int_t)s->refused_rings,
			    "refused_providers",
			    (json_int_t)s->refused_providers,
			    "metadata_error", s->meta_errno != 0 ?
			    jstr(strerror(s->meta_errno)) : json_null(),
			    "started_ns", jns(s->started)));
		else {
			reply_line(r, "  session %u: %s[%d] uid %u, %u "
			    "thread%s%s", s->id, s->comm, (int)s->pid,
			    (unsigned)s->uid, s->nrings, s->nrings == 1 ? "" :
			    "s", s->closing ? " (ended, draining)" : "");
			reply_line(r, "    dir %s", s->dir ? s->dir :
			    "(none yet: no provider or thread)");
			reply_line(r, "    events %" PRIu64 "  lost %" PRIu64
			    "%s%s%s%s", ev, lost, lost ? " (" : "", causes,
			    lost ? ")" : "", s->lost_disconnected ?
			    "; some while no daemon ran" : "");
			if (s->meta_errno != 0)
				reply_line(r, "    METADATA NOT WRITTEN: %s; "
				    "tried again every %u ms, its rings wait",
				    strerror(s->meta_errno), td->cfg.drain_ms);
			if (s->refused_rings || s->refused_providers)
				reply_line(r, "    REFUSED by a limit: %u "
				    "thread%s (not traced, not counted), %u "
				    "provider%s; see the daemon's log",
				    s->refused_rings, s->refused_rings == 1 ?
				    "" : "s", s->refused_providers,
				    s->refused_providers == 1 ? "" : "s");
		}
		if (reply_json(r) || s->nrings <= INFO_THREADS_SHOWN)
			TAILQ_FOREACH(rg, &s->rings, entry)
				info_ring(r, s, rg);
		else
			info_threads_summary(r, s);
	}
	info_ended(r);
	return TRACED_CTL_OK;
}

/* ---- info sessions, info session ---------------------------------- */

static int
parse_since(const char *s, uint64_t *out)
{
	struct tm tm;
	char *end;
	unsigned long long v;
	time_t now = time(NULL), t;

	memset(&tm, 0, sizeof(tm));
	if ((end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) != NULL &&
	    *end == '\0')
		goto local;
	memset(&tm, 0, sizeof(tm));
	if ((end = strptime(s, "%Y-%m-%d", &tm)) != NULL && *end == '\0')
		goto local;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s)
		return -1;
	switch (*end) {
	case '\0':
		t = (time_t)v;
		break;
	case 'm': t = now - (time_t)v * 60; end++; break;
	case 'h': t = now - (time_t)v * 3600; end++; break;
	case 'd': t = now - (time_t)v * 86400; end++; break;
	default:
		return -1;
	}
	if (*end != '\0')
		return -1;
	*out = (uint64_t)t * 1000000000u;
	return 0;
local:
	tm.tm_isdst = -1;
	t = mktime(&tm);
	if (t == (time_t)-1)
		return -1;
	*out = (uint64_t)t * 1000000000u;
	return 0;
}

/* Local time of ns (CLOCK_REALTIME) as fmt (strftime) into buf. */
static const char *
fmt_time(char *buf, size_t size, uint64_t ns, const char *fmt)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;

	if (localtime_r(&t, &tm) == NULL || strftime(buf, size, fmt, &tm) == 0)
		snprintf(buf, size, "?");
	return buf;
}

/* The members every session item has. */
static json_t *
session_json(const struct index_session *s)
{
	return json_pack("{s:I, s:I, s:i, s:I, s:I, s:o, s:o, s:o, s:o, s:o, "
	    "s:o, s:o, s:o, s:o, s:I, s:I, s:I}", "session", (json_int_t)s->id,
	    "run", (json_int_t)s->run, "pid", (int)s->pid, "uid",
	    (json_int_t)s->uid, "gid", (json_int_t)s->gid, "comm",
	    jstr(s->comm), "name", jstr(s->name), "exe", jstr(s->exe),
	    "cmdline", jstr(s->cmdline), "clock", jstr(s->clock), "dir",
	    jstr(s->dir), "started_ns", jns(s->started), "ended_ns",
	    s->how != NULL ? jns(s->ended) : json_null(), "how",
	    jstr(s->how != NULL ? s->how : "running"), "events",
	    (json_int_t)s->events, "lost", (json_int_t)s->lost,
	    "lost_before_connect", (json_int_t)s->lost_before_connect);
}

/* One line of info sessions. */
static void
sessions_row(void *arg, const struct index_session *s)
{
	struct reply *r = arg;
	char start[32], end[32], d1[16], d2[16];

	if (reply_json(r)) {
		reply_item(r, session_json(s));
		return;
	}
	fmt_time(start, sizeof(start), s->started, "%Y-%m-%d %H:%M:%S");
	if (s->how == NULL)
		snprintf(end, sizeof(end), "-");
	else if (strcmp(fmt_time(d1, sizeof(d1), s->started, "%F"),
	    fmt_time(d2, sizeof(d2), s->ended, "%F")) == 0)
		fmt_time(end, sizeof(end), s->ended, "%H:%M:%S");
	else
		fmt_time(end, sizeof(end), s->ended, "%Y-%m-%d %H:%M:%S");
	reply_line(r, "%6u %s  %-8s  %-14s %7d %6u %10" PRIu64 " %8" PRIu64
	    "  %-16s %s", s->id, start, end, s->how != NULL ? s->how :
	    "running", (int)s->pid, (unsigned)s->uid, s->events, s->lost,
	    s->name, s->dir != NULL ? s->dir : "-");
}

#define INFO_SESSIONS_LIMIT	100	/* sessions listed by default */

static int
cmd_info_sessions_exec(struct reply *r, int argc, char **argv)
{
	struct index_query q = { 0, 0, NULL, INFO_SESSIONS_LIMIT };
	int i, all = 0, limit = 0, more;
	long pid, n;
	char *end;

	for (i = 0; i < argc; i++) {
		const char *opt = argv[i], *val;

		if (strcmp(opt, "--all") == 0) {
			all = 1;
			continue;
		}
		if (strcmp(opt, "--since") != 0 && strcmp(opt, "--pid") != 0 &&
		    strcmp(opt, "--exe") != 0 && strcmp(opt, "--limit") != 0) {
			reply_error(r, "unknown option '%s' (--since, --pid, "
			    "--exe, --limit, --all)", opt);
			return TRACED_CTL_USAGE;
		}
		if (i + 1 >= argc) {
			reply_error(r, "%s needs a value", opt);
			return TRACED_CTL_USAGE;
		}
		val = argv[++i];
		if (strcmp(opt, "--since") == 0) {
			if (parse_since(val, &q.since) == -1) {
				reply_error(r, "--since: '%s' is not a time "
				    "(YYYY-MM-DD, YYYY-MM-DDTHH:MM:SS, epoch "
				    "seconds or an age like 30m, 2h, 7d)", val);
				return TRACED_CTL_USAGE;
			}
		} else if (strcmp(opt, "--pid") == 0) {
			errno = 0;
			pid = strtol(val, &end, 10);
			if (errno || *end || pid <= 0 || pid > INT32_MAX) {
				reply_error(r, "--pid: '%s' is not a process "
				    "id", val);
				return TRACED_CTL_USAGE;
			}
			q.pid = (pid_t)pid;
		} else if (strcmp(opt, "--exe") == 0) {
			if (*val == '\0') {
				reply_error(r, "--exe: give an executable's "
				    "name or path");
				return TRACED_CTL_USAGE;
			}
			q.exe = val;
		} else {
			errno = 0;
			n = strtol(val, &end, 10);
			if (errno || *end || n <= 0) {
				reply_error(r, "--limit: '%s' is not a "
				    "positive number", val);
				return TRACED_CTL_USAGE;
			}
			q.limit = n;
			limit = 1;
		}
	}
	if (all && limit) {
		reply_error(r, "--limit and --all exclude each other");
		return TRACED_CTL_USAGE;
	}
	if (all)
		q.limit = -1;
	if (!index_available()) {
		reply_error(r, "the session index is not available (see the "
		    "daemon's log)");
		return TRACED_CTL_ERROR;
	}
	/* Live sessions with the counts of now, not of the last batch. */
	(void)index_sync();
	if (!reply_json(r))
		reply_line(r, "%6s %-19s  %-8s  %-14s %7s %6s %10s %8s  %-16s "
		    "%s", "ID", "STARTED", "ENDED", "HOW", "PID", "UID",
		    "EVENTS", "LOST", "NAME", "TRACE DIRECTORY");
	n = index_sessions_list(&q, sessions_row, r, &more);
	if (n < 0) {
		reply_error(r, "the session index cannot answer (see the "
		    "daemon's log)");
		return TRACED_CTL_ERROR;
	}
	if (more)
		reply_message(r, "the newest %ld sessions, newest first; more "
		    "match: --limit N or --all for more", n);
	else if (n == 0)
		reply_message(r, "no session in the index matches");
	return TRACED_CTL_OK;
}

/* What info session prints, as index_session_get() reports it. */
struct session_info {
	struct reply	*r;
	uint32_t	 id;
	int		 events;	/* "events by name:" was written */
};

static void
info_session_main(void *arg, const struct index_session *s)
{
	struct session_info *si = arg;
	struct reply *r = si->r;
	char causes[256], t1[40], t2[40];
	uint64_t lost;
	json_t *o;

	if (reply_json(r)) {
		/* "type" first, as in every other item. */
		o = json_pack("{s:s}", "type", "session");
		if (o != NULL && json_object_update_new(o, session_json(s)) ==
		    0 && json_object_set_new(o, "lost_by_cause",
		    jcauses(s->lost_by_cause)) == 0) {
			reply_item(r, o);
			return;
		}
		json_decref(o);
		reply_item(r, NULL);
		return;
	}
	lost = format_causes(causes, sizeof(causes), s->lost_by_cause);
	reply_line(r, "session %u: %s[%d], %s", s->id, s->comm, (int)s->pid,
	    s->how != NULL ? s->how : "running");
	reply_line(r, "  executable  %s", s->exe != NULL ? s->exe :
	    "(unknown)");
	reply_line(r, "  command     %s", s->cmdline != NULL ? s->cmdline :
	    "(unknown)");
	reply_line(r, "  user        uid %u, gid %u", (unsigned)s->uid,
	    (unsigned)s->gid);
	fmt_time(t1, sizeof(t1), s->started, "%Y-%m-%d %H:%M:%S %z");
	reply_line(r, "  started     %s", t1);
	if (s->how != NULL) {
		fmt_time(t2, sizeof(t2), s->ended, "%Y-%m-%d %H:%M:%S %z");
		reply_line(r, "  ended       %s (%.3f s)", t2,
		    s->ended > s->started ?
		    (double)(s->ended - s->started) / 1e9 : 0.0);
	}
	reply_line(r, "  clock       %s", s->clock != NULL ? s->clock : "-");
	reply_line(r, "  trace dir   %s", s->dir != NULL ? s->dir : "-");
	reply_line(r, "  events      %" PRIu64, s->events);
	reply_line(r, "  lost        %" PRIu64 "%s%s%s", s->lost,
	    lost ? " (" : "", causes, lost ? ")" : "");
	if (s->lost_before_connect > 0)
		reply_line(r, "              %" PRIu64 " of them before it "
		    "connected", s->lost_before_connect);
	reply_line(r, "  daemon run  %u", s->run);
	if (s->how != NULL && strcmp(s->how, "interrupted") == 0)
		reply_line(r, "  (the daemon was killed while it ran: the "
		    "counts are those it last wrote, at most a second "
		    "earlier)");
}

static void
info_session_thread(void *arg, const struct index_thread *t)
{
	struct session_info *si = arg;
	struct reply *r = si->r;
	char causes[256];
	uint64_t lost;

	lost = format_causes(causes, sizeof(causes), t->lost);
	if (reply_json(r))
		reply_item(r, json_pack("{s:s, s:I, s:I, s:i, s:I, s:I, s:I, "
		    "s:I, s:o, s:I, s:o}", "type", "thread", "session",
		    (json_int_t)si->id, "ring", (json_int_t)t->ring, "tid",
		    (int)t->tid, "ring_size", (json_int_t)t->ring_size,
		    "events", (json_int_t)t->events, "bytes",
		    (json_int_t)t->bytes, "lost", (json_int_t)lost,
		    "lost_by_cause", jcauses(t->lost), "lost_records",
		    (json_int_t)t->lost_records, "state", jstr(t->state)));
	else
		reply_line(r, "  thread %-7d ring %" PRIu64 " KiB  events %"
		    PRIu64 "  bytes %" PRIu64 "  lost %" PRIu64 "%s%s%s  %s",
		    (int)t->tid, t->ring_size / 1024, t->events, t->bytes,
		    lost, lost ? " (" : "", causes, lost ? ")" : "",
		    t->state != NULL ? t->state : "");
}

static void
info_session_stream(void *arg, const struct index_stream *m)
{
	struct session_info *si = arg;

	if (reply_json(si->r))
		reply_item(si->r, json_pack("{s:s, s:I, s:I, s:i, s:o, s:o}",
		    "type", "stream", "session", (json_int_t)si->id, "ring",
		    (json_int_t)m->ring, "tid", (int)m->tid, "path",
		    jstr(m->path), "seen_ns", jns(m->seen)));
	else
		reply_line(si->r, "  stream      %s", m->path != NULL ?
		    m->path : "-");
}

static void
info_session_event(void *arg, const struct index_event *e)
{
	struct session_info *si = arg;
	char full[TRACED_NAME_MAX + TEVENTS_NAME_MAX + 2];

	if (reply_json(si->r)) {
		reply_item(si->r, json_pack("{s:s, s:I, s:I, s:o, s:o, s:I}",
		    "type", "event", "session", (json_int_t)si->id, "id",
		    (json_int_t)e->id, "provider", jstr(e->provider), "name",
		    jstr(e->name), "count", (json_int_t)e->count));
		return;
	}
	if (!si->events) {
		reply_line(si->r, "  events by name:");
		si->events = 1;
	}
	snprintf(full, sizeof(full), "%s:%s", e->provider ? e->provider : "",
	    e->name ? e->name : "");
	reply_line(si->r, "    %-40s %" PRIu64, full, e->count);
}

static int
cmd_info_session_exec(struct reply *r, int argc, char **argv)
{
	struct session_info si = { r, 0, 0 };
	const struct index_visitor v = {
		info_session_main, info_session_thread, info_session_stream,
		info_session_event, &si,
	};
	unsigned long id;
	char *end;
	int rc;

	(void)argc;
	errno = 0;
	id = strtoul(argv[0], &end, 10);
	if (errno || *end || end == argv[0] || id == 0 || id > UINT32_MAX ||
	    argv[0][0] == '-') {
		reply_error(r, "'%s' is not a session id (see 'tracectl info "
		    "sessions')", argv[0]);
		return TRACED_CTL_USAGE;
	}
	si.id = (uint32_t)id;
	if (!index_available()) {
		reply_error(r, "the session index is not available (see the "
		    "daemon's log)");
		return TRACED_CTL_ERROR;
	}
	(void)index_sync();
	rc = index_session_get(si.id, &v);
	if (rc == 0) {
		reply_error(r, "no session %lu in the index", id);
		return TRACED_CTL_ERROR;
	}
	if (rc < 0) {
		reply_error(r, "the session index cannot answer (see the "
		    "daemon's log)");
		return TRACED_CTL_ERROR;
	}
	return TRACED_CTL_OK;
}

/* ---- the table ----------------------------------------------------- */

static const cmd_exec_cb cmd_handlers[CMD_ID_COUNT] = {
	[CMD_ID_HELP] = cmd_help_exec,
	[CMD_ID_INFO_SESSION] = cmd_info_session_exec,
	[CMD_ID_INFO_SESSIONS] = cmd_info_sessions_exec,
	[CMD_ID_INFO_TRACE] = cmd_info_trace_exec,
	[CMD_ID_INFO_TRACE_EVENTS] = cmd_info_trace_events_exec,
	[CMD_ID_INFO_TRACE_FUNCS] = cmd_info_trace_funcs_exec,
	[CMD_ID_INFO_TRACE_RULES] = cmd_info_trace_rules_exec,
	[CMD_ID_INFO_TRACERS] = cmd_info_tracers_exec,
	[CMD_ID_TRACE_EVENT] = cmd_trace_event_exec,
	[CMD_ID_TRACE_FILE] = cmd_trace_file_exec,
	[CMD_ID_TRACE_FUNC] = cmd_trace_func_exec,
	[CMD_ID_TRACER] = cmd_tracer_exec,
};

/*
 * May a peer of uid, gid and supplementary groups change the daemon's
 * state?  Root, the daemon's own uid, or a member of its group.
 */
static int
cmd_privileged(uid_t uid, gid_t gid, const gid_t *groups, int ngroups)
{
	int i;

	if (uid == 0 || uid == td->uid || gid == td->gid)
		return 1;
	for (i = 0; i < ngroups; i++)
		if (groups[i] == td->gid)
			return 1;
	return 0;
}

/*
 * Run the command line argv[0..argc) for a peer with uid, gid and
 * supplementary groups.  Returns an enum traced_ctl_status; the reply
 * says the rest.
 */
int
cmd_exec(struct reply *r, int argc, char **argv, uid_t uid, gid_t gid,
    const gid_t *groups, int ngroups)
{
	const struct command_def *d;
	char err[512];
	int consumed;

	d = command_lookup(argc, argv, &consumed, err, sizeof(err));
	if (d == NULL) {
		reply_error(r, "%s", err);
		return TRACED_CTL_USAGE;
	}
	if (command_check_args(d, argc - consumed, err, sizeof(err)) == -1 ||
	    command_check_words(d, argc - consumed, argv + consumed, err,
	    sizeof(err)) == -1) {
		reply_error(r, "%s", err);
		return TRACED_CTL_USAGE;
	}
	if ((d->flags & CMD_F_PRIVILEGED) &&
	    !cmd_privileged(uid, gid, groups, ngroups)) {
		reply_error(r, "'%s' changes the daemon's state: it needs "
		    "root, uid %u or group %u, primary or supplementary (you "
		    "are uid %u)", d->name, (unsigned)td->uid,
		    (unsigned)td->gid, (unsigned)uid);
		return TRACED_CTL_DENIED;
	}
	if (cmd_handlers[d->id] == NULL) {
		reply_error(r, "'%s' is not available in this daemon", d->name);
		return TRACED_CTL_ERROR;
	}
	return cmd_handlers[d->id](r, argc - consumed, argv + consumed);
}
