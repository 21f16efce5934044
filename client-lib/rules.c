/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The process's own event rules: traced_events_set(), traced_event_state()
 * and TRACED_EVENTS, like QEMU's trace_event_set_state_dynamic() and
 * -trace enable=PATTERN,events=FILE.
 *
 * DESIGN.  A rule is a glob and on/off; the rules of a process apply in
 * order, the last that matches an event deciding, and they win over the
 * daemon's rules (which win over the trace-events default).  Who writes
 * an event's state byte depends on the connection:
 *
 *   - no daemon: the library, for the events a process rule matches
 *     (the others keep what the last daemon wrote, or 0);
 *   - a daemon: the daemon alone, as for every other byte.  The library
 *     evaluates its rules against its own events and sends the result
 *     (RULES, proto/wire.h): for each event, the rule that decides.  The
 *     daemon checks it, combines it with its own rules and trace-file
 *     off, writes the bytes and answers; traced_events_set() returns
 *     once it has (or, if it does not answer in TRACED_CONNECT_TIMEOUT_
 *     MS, writes the bytes itself, which the daemon then confirms).
 *
 * The process keeps its rules for its lifetime: a daemon that starts,
 * or restarts, gets them with the providers.  Everything here runs
 * under lib.lock, from application threads (not signal handlers) and
 * from the connection thread (the snapshot it sends).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "rule.h"
#include "wire.h"

/* Largest TRACED_EVENTS=@FILE read. */
#define RULES_FILE_MAX	(1u << 20)

/* Is the pattern one the daemon takes: 1 to 255 printable ASCII bytes? */
static int
rules_pattern_ok(const char *pattern)
{
	size_t n;

	if (pattern == NULL)
		return 0;
	n = strnlen(pattern, TRACED_RULE_PATTERN_MAX + 1);
	if (n == 0 || n > TRACED_RULE_PATTERN_MAX)
		return 0;
	for (; *pattern != '\0'; pattern++)
		if ((unsigned char)*pattern < 0x20 ||
		    (unsigned char)*pattern > 0x7e)
			return 0;
	return 1;
}

/*
 * The event names of a provider, from its description (normalized
 * trace-events lines, "[disable ][vcpu ]name(..."), cached in lp.
 * Returns 0, or -1 if out of memory.  Locked.
 */
static int
rules_names_locked(struct lprov *lp)
{
	const struct traced_provider *p = lp->p;
	const char *s, *end, *eol, *paren, *b;
	char *buf, **at, *o;
	uint32_t i = 0;

	if (lp->names != NULL)
		return 0;
	buf = malloc(p->desc_len + 1);
	at = calloc(p->nevents, sizeof(*at));
	if (buf == NULL || at == NULL) {
		free(buf);
		free(at);
		return -1;
	}
	o = buf;
	for (s = p->desc, end = p->desc + p->desc_len; s < end &&
	    i < p->nevents; i++, s = eol + 1) {
		if ((eol = memchr(s, '\n', (size_t)(end - s))) == NULL)
			eol = end;
		/* The name is the word before the line's first '('. */
		if ((paren = memchr(s, '(', (size_t)(eol - s))) == NULL)
			paren = s;
		for (b = paren; b > s && b[-1] != ' '; b--)
			;
		at[i] = o;
		memcpy(o, b, (size_t)(paren - b));
		o += paren - b;
		*o++ = '\0';
	}
	for (; i < p->nevents; i++)
		at[i] = o;		/* a description we did not write */
	*o = '\0';
	lp->names = buf;
	lp->name_at = at;
	return 0;
}

/* Does 'pattern' match event 'i' of lp (by name, or provider:name)? */
static int
rules_match(const struct lprov *lp, const char *pattern, uint32_t i)
{
	return rule_match(pattern, lp->p->name, lp->name_at[i]);
}

/* The rule that decides event i of lp: 0 for none, else its number + 1. */
static unsigned
rules_decide(const struct lprov *lp, uint32_t i)
{
	uint32_t r;

	for (r = lib.nrules; r > 0; r--)
		if (rules_match(lp, lib.rules[r - 1].pattern, i))
			return r;
	return 0;
}

static void
rules_store(struct lprov *lp, uint32_t i, int on)
{
	/* Pairs with the relaxed load of traced_state_on(). */
	__atomic_store_n(&lp->p->state[i], (uint8_t)(on != 0),
	    __ATOMIC_RELAXED);
}

/*
 * Write the bytes of lp's events that a process rule matches, as the
 * rules decide: what a daemon would write.  Locked.
 */
void
rules_apply_provider_locked(struct lprov *lp)
{
	uint32_t i;
	unsigned d;

	if (lp->p == NULL || lib.nrules == 0 || rules_names_locked(lp) == -1)
		return;
	for (i = 0; i < lp->p->nevents; i++)
		if ((d = rules_decide(lp, i)) != 0)
			rules_store(lp, i, lib.rules[d - 1].flags &
			    TRACED_RULE_ON);
}

/*
 * Add a rule at the end (a pattern given again moves there: it is the
 * newest).  Returns 0 or a negative errno.  Locked.
 */
static int
rules_add_locked(const char *pattern, int on, int from_env)
{
	struct lrule *nr;
	uint32_t i;
	char *copy;

	if ((copy = strdup(pattern)) == NULL)
		return -ENOMEM;
	for (i = 0; i < lib.nrules; i++)
		if (strcmp(lib.rules[i].pattern, pattern) == 0) {
			free(lib.rules[i].pattern);
			memmove(&lib.rules[i], &lib.rules[i + 1],
			    (lib.nrules - i - 1) * sizeof(*lib.rules));
			lib.nrules--;
			break;
		}
	if (lib.nrules == TRACED_RULES_MAX) {
		free(copy);
		return -ENOSPC;
	}
	nr = realloc(lib.rules, (lib.nrules + 1) * sizeof(*nr));
	if (nr == NULL) {
		free(copy);
		return -ENOMEM;
	}
	lib.rules = nr;
	nr[lib.nrules].pattern = copy;
	nr[lib.nrules].flags = (on ? TRACED_RULE_ON : 0) |
	    (from_env ? TRACED_RULE_ENV : 0);
	lib.nrules++;
	lib.rules_gen++;
	return 0;
}

/* One item of TRACED_EVENTS: "PATTERN" turns on, "-PATTERN" off. */
static void
rules_env_item(const char *item, size_t n, const char *where)
{
	char pattern[TRACED_RULE_PATTERN_MAX + 2];
	int on = 1, rc;

	while (n > 0 && (*item == ' ' || *item == '\t')) {
		item++;
		n--;
	}
	while (n > 0 && (item[n - 1] == ' ' || item[n - 1] == '\t' ||
	    item[n - 1] == '\r'))
		n--;
	if (n > 0 && *item == '-') {
		on = 0;
		item++;
		n--;
	}
	if (n == 0)
		return;
	if (n > TRACED_RULE_PATTERN_MAX) {
		DEBUG("%s: ignoring a pattern of %zu bytes (at most %d)",
		    where, n, TRACED_RULE_PATTERN_MAX);
		return;
	}
	memcpy(pattern, item, n);
	pattern[n] = '\0';
	if (!rules_pattern_ok(pattern)) {
		DEBUG("%s: ignoring '%s': not printable ASCII", where,
		    pattern);
		return;
	}
	if ((rc = rules_add_locked(pattern, on, 1)) < 0)
		DEBUG("%s: ignoring '%s': %s", where, pattern, strerror(-rc));
	else
		DEBUG("%s: %s %s", where, pattern, on ? "on" : "off");
}

/* TRACED_EVENTS=@FILE: one pattern a line, '#' comments, '-' for off. */
static void
rules_env_file(const char *path)
{
	char *buf, *line, *nl;
	struct stat st;
	ssize_t n;
	size_t len = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1 || fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > RULES_FILE_MAX) {
		DEBUG("TRACED_EVENTS=@%s: %s", path, fd == -1 ?
		    strerror(errno) : "not a regular file of at most 1 MiB");
		if (fd != -1)
			close(fd);
		return;
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		return;
	}
	while (len < (size_t)st.st_size &&
	    (n = read(fd, buf + len, (size_t)st.st_size - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	for (line = buf; line < buf + len; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(buf + len - line));
		if (nl == NULL)
			nl = buf + len;
		while (line < nl && (*line == ' ' || *line == '\t'))
			line++;
		if (line < nl && *line != '#')
			rules_env_item(line, (size_t)(nl - line),
			    "TRACED_EVENTS file");
	}
	free(buf);
}

/*
 * TRACED_EVENTS=PATTERN,-PATTERN,... or @FILE, read once at start, with
 * secure_getenv(): a set-user-ID program ignores it.  Locked.
 */
void
rules_read_env_locked(void)
{
	const char *s = secure_getenv("TRACED_EVENTS"), *e;

	if (s == NULL || *s == '\0')
		return;
	if (*s == '@') {
		rules_env_file(s + 1);
		return;
	}
	for (;;) {
		e = strchr(s, ',');
		rules_env_item(s, e != NULL ? (size_t)(e - s) : strlen(s),
		    "TRACED_EVENTS");
		if (e == NULL)
			break;
		s = e + 1;
	}
}

/*
 * The RULES snapshot of proto/wire.h, in a sealed memfd: the rules,
 * then a table for each live provider that a rule matches.  Returns
 * the memfd and its size in *size, or -1.  Locked.
 */
int
rules_snapshot_locked(uint32_t *size)
{
	static const uint8_t zero[4];
	struct lprov *lp;
	uint8_t hdr[8], le[2];
	uint32_t i, r, v;
	size_t len = 0, n;
	unsigned d;
	FILE *f;
	char *buf = NULL;
	int fd = -1, any;

	if ((f = open_memstream(&buf, &len)) == NULL)
		return -1;
	for (r = 0; r < lib.nrules; r++) {
		fputc(lib.rules[r].flags, f);
		fputs(lib.rules[r].pattern, f);
		fputc('\0', f);
	}
	fflush(f);
	fwrite(zero, 1, (4 - len % 4) % 4, f);
	for (lp = lib.providers; lp != NULL; lp = lp->next) {
		if (lp->p == NULL || rules_names_locked(lp) == -1)
			continue;
		any = 0;
		for (i = 0; i < lp->p->nevents && !any; i++)
			any = rules_decide(lp, i) != 0;
		if (!any)
			continue;
		for (i = 0, v = lp->index; i < 4; i++, v >>= 8)
			hdr[i] = (uint8_t)v;
		for (i = 0, v = lp->p->nevents; i < 4; i++, v >>= 8)
			hdr[4 + i] = (uint8_t)v;
		fwrite(hdr, 1, sizeof(hdr), f);
		for (i = 0; i < lp->p->nevents; i++) {
			d = rules_decide(lp, i);
			le[0] = (uint8_t)d;
			le[1] = (uint8_t)(d >> 8);
			fwrite(le, 1, 2, f);
		}
		fwrite(zero, 1, (lp->p->nevents % 2) * 2, f);
	}
	if (fclose(f) == EOF || len > TRACED_RULES_SIZE_MAX) {
		free(buf);
		return -1;
	}
	fd = memfd_create("traced-rules", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	n = len;
	if (fd != -1 && (write(fd, buf, n) != (ssize_t)n ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_WRITE | F_SEAL_SEAL) == -1)) {
		close(fd);
		fd = -1;
	}
	free(buf);
	*size = (uint32_t)len;
	return fd;
}

/*
 * Until the daemon confirms rules generation 'gen' (at most
 * TRACED_CONNECT_TIMEOUT_MS), or the connection goes down.  Returns 1
 * if it did.  Locked.
 */
static int
rules_wait_ack_locked(uint32_t gen)
{
	struct timespec deadline;

	if (lib.state != CONN_UP || !lib.thread_started)
		return 0;
	lib_wake();
	lib_deadline_after(&deadline, lib.connect_timeout_ms);
	while (lib.state == CONN_UP && (int32_t)(lib.rules_acked - gen) < 0)
		if (pthread_cond_timedwait(&lib.cond, &lib.lock,
		    &deadline) == ETIMEDOUT)
			break;
	return (int32_t)(lib.rules_acked - gen) >= 0;
}

int
traced_events_set(const char *pattern, int on)
{
	struct lprov *lp;
	uint32_t i, gen;
	int rc, n = 0;

	if (!rules_pattern_ok(pattern))
		return -EINVAL;
	pthread_mutex_lock(&lib.lock);
	lib_init_locked();
	if (lib.disabled) {
		pthread_mutex_unlock(&lib.lock);
		return -ENODEV;
	}
	if ((rc = rules_add_locked(pattern, on, 0)) < 0) {
		pthread_mutex_unlock(&lib.lock);
		return rc;
	}
	gen = lib.rules_gen;
	for (lp = lib.providers; lp != NULL; lp = lp->next) {
		if (lp->p == NULL || rules_names_locked(lp) == -1)
			continue;
		for (i = 0; i < lp->p->nevents; i++)
			n += rules_match(lp, pattern, i);
	}
	DEBUG("traced_events_set %s %s: %d events", pattern, on ? "on" :
	    "off", n);
	/* The daemon writes the bytes; without one, or if it is slow, we
	 * do (the newest rule decides where it matches). */
	if (!rules_wait_ack_locked(gen))
		for (lp = lib.providers; lp != NULL; lp = lp->next) {
			if (lp->p == NULL || lp->names == NULL)
				continue;
			for (i = 0; i < lp->p->nevents; i++)
				if (rules_match(lp, pattern, i))
					rules_store(lp, i, on);
		}
	else if (lib.rules_status < 0)
		n = lib.rules_status;	/* kept, for when no daemon is */
	pthread_mutex_unlock(&lib.lock);
	return n;
}

int
traced_event_state(const char *name)
{
	const char *colon;
	struct lprov *lp;
	size_t plen;
	uint32_t i;
	int rc = -ENOENT;

	if (name == NULL || *name == '\0')
		return -EINVAL;
	colon = strchr(name, ':');
	plen = colon != NULL ? (size_t)(colon - name) : 0;
	pthread_mutex_lock(&lib.lock);
	for (lp = lib.providers; lp != NULL && rc == -ENOENT; lp = lp->next) {
		if (lp->p == NULL || (colon != NULL &&
		    (strncmp(lp->p->name, name, plen) != 0 ||
		    lp->p->name[plen] != '\0')) ||
		    rules_names_locked(lp) == -1)
			continue;
		for (i = 0; i < lp->p->nevents; i++)
			if (strcmp(lp->name_at[i], colon != NULL ?
			    colon + 1 : name) == 0) {
				rc = traced_state_on(lp->p->state, i);
				break;
			}
	}
	pthread_mutex_unlock(&lib.lock);
	return rc;
}
