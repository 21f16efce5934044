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
 * Rules are kept in the index (index.c: the rules table), saved on
 * every change and loaded by index_open() at start, so that processes
 * started later and a restarted daemon see the same state.  (Older
 * daemons kept them in <state-dir>/rules; index_open() imports that file
 * once.)  Loop thread only.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traced.h"

int
state_glob_match(const char *pattern, const char *name)
{
	return fnmatch(pattern, name, 0) == 0;
}

/* Is this event on by the rules (ignoring trace-file off)? */
int
state_event_on(const char *provider, const struct tevents_event *ev)
{
	char full[TRACED_NAME_MAX + TEVENTS_NAME_MAX + 2];
	int on = !ev->disabled;
	size_t i;

	snprintf(full, sizeof(full), "%s:%s", provider, ev->name);
	for (i = 0; i < td->nrules; i++) {
		const struct rule *r = &td->rules[i];

		if (state_glob_match(r->pattern,
		    strchr(r->pattern, ':') != NULL ? full : ev->name))
			on = r->on;
	}
	return on;
}

static int
state_rule_append(const char *pattern, int on)
{
	struct rule *nr;
	size_t i;

	/* A pattern given again moves to the end: it is the newest. */
	for (i = 0; i < td->nrules; i++)
		if (strcmp(td->rules[i].pattern, pattern) == 0) {
			free(td->rules[i].pattern);
			memmove(&td->rules[i], &td->rules[i + 1],
			    (td->nrules - i - 1) * sizeof(*td->rules));
			td->nrules--;
			break;
		}
	nr = reallocarray(td->rules, td->nrules + 1, sizeof(*nr));
	if (nr == NULL)
		return -1;
	td->rules = nr;
	nr[td->nrules].pattern = strdup(pattern);
	if (nr[td->nrules].pattern == NULL)
		return -1;
	nr[td->nrules].on = on;
	td->nrules++;
	return 0;
}

/*
 * Add a rule, save the rule list and apply it to every session.
 * Returns 0, or -1 if it could not be saved (it applies all the same).
 */
int
state_rule_add(const char *pattern, int on)
{
	if (state_rule_append(pattern, on) == -1) {
		log_warn("adding rule");
		return -1;
	}
	state_apply_all();
	return index_rules_save(td->rules, td->nrules);
}

void
state_apply_all(void)
{
	struct session *s;

	TAILQ_FOREACH(s, &td->sessions, entry)
		session_update_state(s);
}
