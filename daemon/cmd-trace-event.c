/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * trace-event, info trace-rules and info trace-events: the daemon's
 * enable rules (state.c keeps them) and what they decide for the
 * events of the running processes.  A rule applies at once to every
 * connected process (sessions_apply_state()) and to every process that
 * starts later; its answer says how many events and processes it
 * reaches now, and how many of those a process's own rules keep.
 *
 * Each handler's work is bounded by what the daemon holds (sessions,
 * distinct descriptions, events), never by a product of them: a
 * description shared by many sessions is matched once.  Loop thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd.h"
#include "command.h"
#include "config.h"
#include "func.h"
#include "outdir.h"
#include "pdesc.h"
#include "rule.h"
#include "session.h"
#include "state.h"
#include "text.h"

/* Counts of rule_reach(), one number per count. */
static uint64_t reach_gen;

static const char *const known_src_names[] = {
	[STATE_SRC_DEFAULT] = "default", [STATE_SRC_DISABLE] = "disable",
	[STATE_SRC_RULE] = "rule", [STATE_SRC_PROCESS] = "process",
};

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
	reach_gen++;
	TAILQ_FOREACH(s, &sessions, entry) {
		unsigned before = *events;

		for (i = 0; i < s->nprovs; i++) {
			struct pdesc *d = s->provs[i]->d;

			/* d->reach_gen marks a description seen in this
			 * count: its matches are in d->reach. */
			if (d->reach_gen != reach_gen) {
				d->reach = 0;
				for (k = 0; k < d->tf.nevents; k++)
					d->reach += rule_matches(pattern, d,
					    k);
				d->reach_gen = reach_gen;
			}
			*events += d->reach;
		}
		if (*events != before)
			(*procs)++;
	}
}

/*
 * " (did you mean 'NAME'?)" for the running processes' event closest
 * to a pattern that matched none (a typo, most likely), or "".  Only
 * a pattern without wildcards is looked at; with a provider
 * ("prov:name") it is compared with "prov:event".  Each description's
 * events once per call: bounded by what the daemon holds.
 */
static void
rule_suggest(const char *pattern, char *buf, size_t size)
{
	char best_name[TEXT_DISTANCE_MAX + 1], full[TEXT_DISTANCE_MAX + 1];
	size_t n = strlen(pattern), best = 99, dist, max;
	int qualified = strchr(pattern, ':') != NULL;
	struct session *s;
	const char *name;
	uint32_t i;
	size_t k;

	buf[0] = '\0';
	if (strpbrk(pattern, "*?[") != NULL || n > TEXT_DISTANCE_MAX)
		return;
	max = n < 6 ? 1 : n < 12 ? 2 : 3;
	reach_gen++;
	TAILQ_FOREACH(s, &sessions, entry)
		for (i = 0; i < s->nprovs; i++) {
			struct pdesc *d = s->provs[i]->d;

			if (d->reach_gen == reach_gen)
				continue;	/* seen */
			d->reach_gen = reach_gen;
			for (k = 0; k < d->tf.nevents; k++) {
				name = d->tf.events[k].name;
				if (qualified) {
					if (snprintf(full, sizeof(full),
					    "%s:%s", d->name, name) >=
					    (int)sizeof(full))
						continue;
					name = full;
				}
				dist = text_distance(pattern, n, name, max);
				if (dist < best) {
					best = dist;
					snprintf(best_name, sizeof(best_name),
					    "%s", name);
				}
			}
		}
	if (best <= max)
		snprintf(buf, size, " (did you mean '%s'?)", best_name);
}

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

	TAILQ_FOREACH(s, &sessions, entry) {
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

int
cmd_trace_event_exec(struct reply *r, int argc, char **argv)
{
	char err[256], keptmsg[128] = "";
	unsigned events, procs, kept;
	int on, rc;

	if (argc == 1 && strcmp(argv[0], "list") == 0)
		return cmd_info_trace_rules_exec(r, 1, argv);
	if (argc == 1) {
		rc = state_rules_reset();
		sessions_apply_state();
		if (rc == -1)
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
		rc = state_rule_delete(argv[0]);
		if (rc != 0)
			sessions_apply_state();
		switch (rc) {
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
	rc = state_rule_add(argv[0], on);
	sessions_apply_state();
	if (rc == -1)
		reply_error(r, "the rule applies now but could not be saved "
		    "in %s (see the daemon's log): a restarted daemon will "
		    "not have it", cfg.state_dir);
	if (reply_failed(r))
		return TRACED_CTL_ERROR;
	rule_reach(argv[0], &events, &procs);
	if (events == 0) {
		const struct session *s;
		unsigned nprocs = 0;

		TAILQ_FOREACH(s, &sessions, entry)
			if (s->nprovs > 0)
				nprocs++;
		rule_suggest(argv[0], keptmsg, sizeof(keptmsg));
		reply_message(r, "'%s' %s: no event of the %u running "
		    "process%s with events matches it%s; it applies to every "
		    "process that starts later%s", argv[0], on ? "on" : "off",
		    nprocs, nprocs == 1 ? "" : "es", keptmsg,
		    outdir_paused() && on ? " (trace-file is off: nothing is "
		    "recorded until 'trace-file on')" : "");
		return TRACED_CTL_OK;
	}
	if ((kept = rule_kept(argv[0])) > 0)
		snprintf(keptmsg, sizeof(keptmsg), " (%u of them stay as "
		    "their process's own rules say: see 'info trace-events')",
		    kept);
	reply_message(r, "'%s' %s: applies now to %u event%s in %u running "
	    "process%s%s and to every process that starts later%s", argv[0],
	    on ? "on" : "off", events, events == 1 ? "" : "s", procs,
	    procs == 1 ? "" : "es", keptmsg,
	    outdir_paused() && on ? " (trace-file is off: nothing is recorded "
	    "until 'trace-file on')" : "");
	return TRACED_CTL_OK;
}

int
cmd_info_trace_rules_exec(struct reply *r, int argc, char **argv)
{
	const struct rule *rules;
	unsigned events, procs;
	size_t i, nrules, nfunc, ntracer;
	int listing = argc == 1 && strcmp(argv[0], "list") == 0;

	rules = state_rules(&nrules);
	for (i = 0; i < nrules; i++) {
		rule_reach(rules[i].pattern, &events, &procs);
		if (reply_json(r))
			reply_item(r, json_pack("{s:s, s:I, s:o, s:s, s:I, "
			    "s:I}", "kind", "event",
			    "order", (json_int_t)i + 1, "pattern",
			    jstr(rules[i].pattern), "state",
			    rules[i].on ? "on" : "off", "events_now",
			    (json_int_t)events, "processes_now",
			    (json_int_t)procs));
		else
			reply_line(r, "%3zu  %-3s  %-40s (%u event%s in %u "
			    "running process%s)", i + 1, rules[i].on ?
			    "on" : "off", rules[i].pattern, events,
			    events == 1 ? "" : "s", procs,
			    procs == 1 ? "" : "es");
	}
	/* 'info trace-rules' shows the function and tracer rules too;
	 * 'trace-event list' the event rules only. */
	(void)func_rules(FUNC_RULE_FUNC, &nfunc);
	(void)func_rules(FUNC_RULE_TRACER, &ntracer);
	if (!listing && nfunc + ntracer > 0) {
		if (!reply_json(r))
			reply_line(r, "function rules (trace-func, tracer):");
		cmd_func_rules_list(r, FUNC_RULE_FUNC);
		cmd_func_rules_list(r, FUNC_RULE_TRACER);
	}
	if (nrules == 0 && (listing || nfunc + ntracer == 0))
		reply_message(r, "no rule: each event is on or off as its "
		    "trace-events file says ('disable' makes it off)%s",
		    listing ? "" : "; no function is traced");
	else if (nrules == 0)
		reply_message(r, "no trace-event rule: each event is on or off "
		    "as its trace-events file says; %zu trace-func and %zu "
		    "tracer rule%s", nfunc, ntracer, ntracer == 1 ? "" : "s");
	else
		reply_message(r, "the last rule that matches an event decides; "
		    "'trace-event PATTERN delete' removes one, 'trace-event "
		    "reset' all");
	return TRACED_CTL_OK;
}

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

/*
 * Every event of every connected process, its state and where that
 * comes from: the default, 'disable', a rule of the daemon, or a rule
 * of the process itself.  One line per event, state and reason, made
 * by sorting, so the work is the number of events the sessions hold
 * (times the daemon's rules, to name the one that decides), not that
 * squared.
 */
int
cmd_info_trace_events_exec(struct reply *r, int argc, char **argv)
{
	struct known_event *ke = NULL, *nk;
	size_t nke = 0, cap = 0, i, j, n, k;
	struct session *s;
	char full[TRACED_NAME_MAX + TEVENTS_NAME_MAX + 2], why[320];
	char where[TRACED_COMM_MAX + 64];
	const struct known_event *e;
	uint32_t p;

	TAILQ_FOREACH(s, &sessions, entry)
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
			    e->on && !outdir_paused(), "source",
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
	else if (outdir_paused())
		reply_message(r, "trace-file is off: no event is recorded "
		    "until 'trace-file on'");
	return TRACED_CTL_OK;
}
