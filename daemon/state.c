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
 * Rules are kept in <state-dir>/rules, one "on|off PATTERN" per line,
 * rewritten (temp file + rename) on every change and read at start, so
 * that processes started later and a restarted daemon see the same
 * state.  Loop thread only.
 */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
state_rules_save(void)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	FILE *f;
	size_t i;

	if (mkdir_p(td->cfg.state_dir, 0750) == -1) {
		log_warn("state directory %s", td->cfg.state_dir);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/rules", td->cfg.state_dir);
	snprintf(tmp, sizeof(tmp), "%s/.rules.tmp", td->cfg.state_dir);
	f = fopen(tmp, "we");
	if (f == NULL) {
		log_warn("%s", tmp);
		return -1;
	}
	fprintf(f, "# traced enable rules, last match wins; "
	    "changed by 'tracectl trace-event'\n");
	for (i = 0; i < td->nrules; i++)
		fprintf(f, "%s %s\n", td->rules[i].on ? "on" : "off",
		    td->rules[i].pattern);
	if (fflush(f) != 0 || fsync(fileno(f)) == -1) {
		log_warn("%s", tmp);
		fclose(f);
		unlink(tmp);
		return -1;
	}
	fclose(f);
	if (rename(tmp, path) == -1) {
		log_warn("%s", path);
		unlink(tmp);
		return -1;
	}
	return 0;
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
	return state_rules_save();
}

/* Read the saved rules.  A bad line is skipped with a warning. */
int
state_rules_load(void)
{
	char path[PATH_MAX], line[512];
	unsigned lineno = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/rules", td->cfg.state_dir);
	f = fopen(path, "re");
	if (f == NULL) {
		if (errno == ENOENT)
			return 0;
		log_warn("%s", path);
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = line, *pat;
		int on;

		lineno++;
		p[strcspn(p, "\n")] = '\0';
		if (*p == '#' || *p == '\0')
			continue;
		if (strncmp(p, "on ", 3) == 0) {
			on = 1;
			pat = p + 3;
		} else if (strncmp(p, "off ", 4) == 0) {
			on = 0;
			pat = p + 4;
		} else {
			log_warnx("%s:%u: expected 'on PATTERN' or "
			    "'off PATTERN'; line ignored", path, lineno);
			continue;
		}
		if (*pat == '\0' || state_rule_append(pat, on) == -1)
			log_warnx("%s:%u: line ignored", path, lineno);
	}
	fclose(f);
	return 0;
}

void
state_apply_all(void)
{
	struct session *s;

	TAILQ_FOREACH(s, &td->sessions, entry)
		session_update_state(s);
}
