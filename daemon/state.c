/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Event state: the enable rules and the state bytes they imply.  A rule
 * is a glob (fnmatch) and on/off; rules apply in order and the last one
 * that matches an event decides, like QEMU's --trace.  A pattern with a
 * ':' matches "provider:event", one without matches the event name.
 * With no matching rule an event is on, unless its trace-events line
 * says 'disable'.
 *
 * A process may have rules of its own (traced_events_set(),
 * TRACED_EVENTS; client-lib/rules.c), which win over the daemon's: for
 * each event, the process's last matching rule decides, else the
 * daemon's, else the default; trace-file off turns everything off all
 * the same.  The process evaluates its rules against its own events and
 * sends, with the rules, the number of the deciding rule per event
 * (RULES, proto/wire.h); this file checks and keeps that, so that a
 * state byte costs the same to compute whoever decides it, and nothing
 * a client sends makes the loop match patterns.
 *
 * Rules are kept in the index (index.c: the rules table), saved on
 * every change and loaded by index_open() at start, so that processes
 * started later and a restarted daemon see the same state.  (Older
 * daemons kept them in <state-dir>/rules; index_open() imports that file
 * once.)  Loop thread only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "index.h"
#include "limits.h"
#include "log.h"
#include "pdesc.h"
#include "rule.h"
#include "session.h"
#include "state.h"

/* The daemon's rules, in the order they apply; state.c's alone. */
static struct {
	struct rule	*rules;		/* owned, with their patterns */
	size_t		 n;
	uint64_t	 gen;		/* changes with every rule change */
} st;

/*
 * Take the rules the index kept (index_open(): an array of n, with
 * their patterns, now owned here).  Once, at start.
 */
void
state_init(struct rule *rules, size_t n)
{
	st.rules = rules;
	st.n = n;
	st.gen++;
}

/* At exit. */
void
state_fini(void)
{
	size_t i;

	for (i = 0; i < st.n; i++)
		free(st.rules[i].pattern);
	free(st.rules);
	st.rules = NULL;
	st.n = 0;
}

/* The rules, in the order they apply (the last match decides). */
const struct rule *
state_rules(size_t *n)
{
	*n = st.n;
	return st.rules;
}

/*
 * A number that changes with every change of the rules: what was
 * computed from them under another number is to be computed again.
 */
uint64_t
state_rules_gen(void)
{
	return st.gen;
}

/* The daemon's last rule matching the event, or NULL. */
static const struct rule *
state_rule_of(const char *provider, const struct tevents_event *ev)
{
	size_t k = RULE_LAST(st.rules, st.n, pattern, provider, ev->name);

	return k > 0 ? &st.rules[k - 1] : NULL;
}

/* Is this event on by the daemon's rules (ignoring trace-file off)? */
int
state_event_on(const char *provider, const struct tevents_event *ev)
{
	const struct rule *r = state_rule_of(provider, ev);

	return r != NULL ? r->on : !ev->disabled;
}

/*
 * The table of session s's own rules for its provider number 'index',
 * or NULL if none of them matches an event of it.  A binary search.
 */
const struct ptable *
state_ptable(const struct session *s, uint32_t index)
{
	uint32_t lo = 0, hi = s->nptables, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (s->ptables[mid].index < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nptables && s->ptables[lo].index == index ?
	    &s->ptables[lo] : NULL;
}

/*
 * What session s's own rules say of event k of the provider whose table
 * is t (state_ptable()): 1 on, 0 off, -1 nothing (no rule matches).
 */
int
state_ptable_on(const struct session *s, const struct ptable *t,
    uint32_t k)
{
	if (t == NULL || k >= t->nevents || t->dec[k] == 0)
		return -1;
	return (s->prules[t->dec[k] - 1].flags & TRACED_RULE_ON) != 0;
}

/*
 * Is event k of provider p of session s on by the rules (ignoring
 * trace-file off): the process's, else the daemon's, else the default?
 * If why is not NULL, say which decided.  Matches the daemon's rules:
 * for info trace-events, not for the state bytes (pdesc_states()).
 */
int
state_session_event(const struct session *s, const struct sprov *p,
    uint32_t k, struct state_why *why)
{
	const struct tevents_event *ev = &p->d->tf.events[k];
	const struct ptable *t = state_ptable(s, p->index);
	const struct prule *pr;
	const struct rule *r;
	struct state_why w;

	if (why == NULL)
		why = &w;
	memset(why, 0, sizeof(*why));
	if (state_ptable_on(s, t, k) >= 0) {
		pr = &s->prules[t->dec[k] - 1];
		why->src = STATE_SRC_PROCESS;
		why->pattern = pr->pattern;
		why->flags = pr->flags;
		return (pr->flags & TRACED_RULE_ON) != 0;
	}
	if ((r = state_rule_of(p->d->name, ev)) != NULL) {
		why->src = STATE_SRC_RULE;
		why->pattern = r->pattern;
		return r->on;
	}
	why->src = ev->disabled ? STATE_SRC_DISABLE : STATE_SRC_DEFAULT;
	return !ev->disabled;
}

/* What a RULES memfd holds, while it is being checked. */
struct state_load {
	struct session	*s;		/* borrowed */
	struct prule	*rules;		/* owned until kept */
	uint32_t	 nrules;
	struct ptable	*tables;	/* owned until kept */
	uint32_t	 ntables;
	const char	*why;		/* static */
};

static int
state_load_rule(void *arg, unsigned flags, const char *pattern)
{
	struct state_load *l = arg;

	if ((l->rules[l->nrules].pattern = strdup(pattern)) == NULL) {
		l->why = "out of memory";
		return -1;
	}
	l->rules[l->nrules++].flags = flags;
	return 0;
}

static int
state_load_table(void *arg, const struct wire_rules_table *wt)
{
	struct state_load *l = arg;
	struct ptable *nt, *t;
	uint32_t i, k;

	/* A provider the session has must have that many events. */
	for (i = 0; i < l->s->nprovs; i++)
		if (l->s->provs[i]->index == wt->index &&
		    l->s->provs[i]->nevents != wt->nevents) {
			l->why = "a table's size is not its provider's";
			return -1;
		}
	nt = reallocarray(l->tables, l->ntables + 1, sizeof(*nt));
	if (nt == NULL) {
		l->why = "out of memory";
		return -1;
	}
	l->tables = nt;
	t = &nt[l->ntables];
	if ((t->dec = malloc(wt->nevents * sizeof(*t->dec))) == NULL) {
		l->why = "out of memory";
		return -1;
	}
	t->index = wt->index;
	t->nevents = wt->nevents;
	for (k = 0; k < wt->nevents; k++)
		t->dec[k] = (uint16_t)wire_rules_dec(wt, k);
	l->ntables++;
	return 0;
}

static void
state_free_rules(struct prule *rules, uint32_t nrules, struct ptable *tables,
    uint32_t ntables)
{
	uint32_t i;

	for (i = 0; i < nrules; i++)
		free(rules[i].pattern);
	free(rules);
	for (i = 0; i < ntables; i++)
		free(tables[i].dec);
	free(tables);
}

/*
 * RULES from session s: read and check its memfd (proto/wire.h), and
 * keep its rules and tables in place of the ones before.  The caller
 * recomputes the state bytes and answers.  The tables' events are
 * charged to the uid's event ids (they hold memory as events do).
 * Returns 0; 1 if a limit refused them (logged; the session keeps its
 * rules before); or -1 (logged) if the client sent something wrong: it
 * is disconnected.  The work is linear in the memfd's size, bounded by
 * TRACED_RULES_SIZE_MAX.
 */
int
state_session_rules(struct session *s, const struct traced_msg_rules *m,
    int fd)
{
	struct state_load l;
	const char *why = NULL;
	void *buf = NULL;
	char err[256];
	uint64_t n = 0;
	uint32_t i;

	if (!s->welcomed) {
		log_warnx("session %u: RULES before HELLO", s->id);
		return -1;
	}
	if (client_check_fd(fd, m->size, F_SEAL_SHRINK | F_SEAL_WRITE,
	    &why) == -1) {
		log_warnx("session %u: process rules: %s", s->id, why);
		return -1;
	}
	if (m->size > 0 && (buf = mmap(NULL, m->size, PROT_READ, MAP_SHARED,
	    fd, 0)) == MAP_FAILED) {
		log_warn("session %u: mapping process rules", s->id);
		return -1;
	}
	memset(&l, 0, sizeof(l));
	l.s = s;
	l.rules = calloc(m->nrules > 0 ? m->nrules : 1, sizeof(*l.rules));
	if (l.rules == NULL ||
	    wire_rules_parse(buf, m->size, m->nrules, state_load_rule,
	    state_load_table, &l, &why) == -1) {
		log_warnx("session %u: process rules: %s", s->id,
		    l.rules == NULL ? "out of memory" : l.why != NULL ? l.why :
		    why);
		if (buf != NULL)
			munmap(buf, m->size);
		state_free_rules(l.rules, l.nrules, l.tables, l.ntables);
		return -1;
	}
	if (buf != NULL)
		munmap(buf, m->size);
	for (i = 0; i < l.ntables; i++)
		n += l.tables[i].nevents;
	limits_put(s->uid, LIMIT_EVENT_IDS, s->ptables_events, 0);
	if (limits_take(s->uid, LIMIT_EVENT_IDS, n, 0, err,
	    sizeof(err)) == -1) {
		limits_force(s->uid, LIMIT_EVENT_IDS, s->ptables_events);
		limits_logx(s->uid, "session %u: process rules refused: %s",
		    s->id, err);
		state_free_rules(l.rules, l.nrules, l.tables, l.ntables);
		return 1;
	}
	state_free_rules(s->prules, s->nprules, s->ptables, s->nptables);
	s->prules = l.rules;
	s->nprules = l.nrules;
	s->ptables = l.tables;
	s->nptables = l.ntables;
	s->ptables_events = n;
	log_debug("session %u: %u process rules, %u providers with events "
	    "they match", s->id, s->nprules, s->nptables);
	return 0;
}

/*
 * May a provider numbered 'index' with 'nevents' events join session s:
 * does a table of its process's rules, if there is one, have its size?
 */
int
state_session_provider_ok(const struct session *s, uint32_t index,
    uint32_t nevents)
{
	const struct ptable *t = state_ptable(s, index);

	return t == NULL || t->nevents == nevents;
}

/* Free what state.c keeps in a session. */
void
state_session_free(struct session *s)
{
	state_free_rules(s->prules, s->nprules, s->ptables, s->nptables);
	limits_put(s->uid, LIMIT_EVENT_IDS, s->ptables_events, 0);
	s->prules = NULL;
	s->ptables = NULL;
	s->nprules = s->nptables = 0;
	s->ptables_events = 0;
}

static int
state_rule_append(const char *pattern, int on)
{
	struct rule *nr;
	size_t i;

	/* A pattern given again moves to the end: it is the newest. */
	for (i = 0; i < st.n; i++)
		if (strcmp(st.rules[i].pattern, pattern) == 0) {
			free(st.rules[i].pattern);
			memmove(&st.rules[i], &st.rules[i + 1],
			    (st.n - i - 1) * sizeof(*st.rules));
			st.n--;
			break;
		}
	nr = reallocarray(st.rules, st.n + 1, sizeof(*nr));
	if (nr == NULL)
		return -1;
	st.rules = nr;
	nr[st.n].pattern = strdup(pattern);
	if (nr[st.n].pattern == NULL)
		return -1;
	nr[st.n].on = on;
	st.n++;
	return 0;
}

/*
 * Add a rule (a pattern given again moves to the end) and save the
 * rule list; the caller applies it to the sessions
 * (sessions_apply_state()).  Returns 0, or -1 if it could not be
 * saved (it applies all the same).
 */
int
state_rule_add(const char *pattern, int on)
{
	if (state_rule_append(pattern, on) == -1) {
		log_warn("adding rule");
		return -1;
	}
	st.gen++;
	return index_rules_save(st.rules, st.n);
}

/*
 * Remove the rule whose pattern is 'pattern'.  Returns 1 (removed and
 * saved), 0 (no such rule), or -1 (removed, not saved: logged).
 */
int
state_rule_delete(const char *pattern)
{
	size_t i;

	for (i = 0; i < st.n; i++)
		if (strcmp(st.rules[i].pattern, pattern) == 0)
			break;
	if (i == st.n)
		return 0;
	free(st.rules[i].pattern);
	memmove(&st.rules[i], &st.rules[i + 1],
	    (st.n - i - 1) * sizeof(*st.rules));
	st.n--;
	st.gen++;
	return index_rules_save(st.rules, st.n) == -1 ? -1 : 1;
}

/*
 * Remove every rule: each event goes back to its trace-events default.
 * Returns 0, or -1 (not saved: logged).
 */
int
state_rules_reset(void)
{
	size_t i;

	for (i = 0; i < st.n; i++)
		free(st.rules[i].pattern);
	st.n = 0;
	st.gen++;
	return index_rules_save(st.rules, st.n);
}
