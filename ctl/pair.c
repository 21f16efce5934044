/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Matching paired events (pair.h).  Open starts live in one hash table
 * (open addressing, linear probing, tombstones) whose key is (rule,
 * scope, value): the scope is the session when the rule has a --key and
 * the value is that field's (an integer, or a string's hash with its
 * first bytes kept to compare), or the thread when it has none and the
 * value is 0.  Each entry holds a small stack of open starts, so that
 * nested calls on a thread and a key reused before it ended both close
 * the most recent start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pair.h"
#include "reader.h"

#define PAIR_SKEY_MAX	64		/* bytes of a string key compared */

/* One open start. */
struct pair_open {
	int64_t		 ns;
	const struct reader_thread *thread;
};

struct pair_entry {
	int		 used;		/* 0 free, 1 used, 2 tombstone */
	size_t		 rule;
	size_t		 scope;
	uint64_t	 value;		/* integer, or the string's hash */
	uint8_t		 slen;		/* string keys: bytes in skey */
	char		 skey[PAIR_SKEY_MAX];
	struct pair_open *opens;	/* owned */
	uint32_t	 nopen;
	uint32_t	 capopen;
};

struct pairer {
	const struct pair_rules *rules;	/* borrowed */
	struct pair_entry *tab;		/* owned, cap slots */
	size_t		 cap;
	size_t		 used;		/* used + tombstones */
	size_t		 live;		/* open starts, all entries */
	uint64_t	 unmatched[PAIR_RULES_MAX];
	uint64_t	 dropped[PAIR_RULES_MAX];
	uint64_t	 orphans[PAIR_RULES_MAX];
};

const char pair_opts_help[] =
    "  --pair A:B       time event A to event B (e.g. job_start:job_done)"
    "\n"
    "  --key FIELD      match A and B by this field in the process; "
    "without it,\n"
    "                   an end closes the last open start of its thread\n";

/*
 * Parse --pair / --key.  Contract in pair.h.
 */
int
pair_opt(struct pair_rules *r, int argc, char **argv, int *i, char *err,
    size_t errlen)
{
	struct pair_rule *pr;
	const char	*opt = argv[*i], *val, *p;
	char		*copy, *parts[4];
	size_t		 n = 0, k;
	int		 is_key;

	if (strncmp(opt, "--pair", 6) == 0 && (opt[6] == '\0' ||
	    opt[6] == '='))
		is_key = 0;
	else if (strncmp(opt, "--key", 5) == 0 && (opt[5] == '\0' ||
	    opt[5] == '='))
		is_key = 1;
	else
		return 0;
	p = strchr(opt, '=');
	if (p != NULL)
		val = p + 1;
	else if (*i + 1 < argc)
		val = argv[++*i];
	else {
		snprintf(err, errlen, "%s needs a value", opt);
		return -1;
	}
	(*i)++;
	if (is_key) {
		if (*val == '\0') {
			snprintf(err, errlen, "--key: empty field name");
			return -1;
		}
		if (r->n == 0)
			r->key_all = val;
		else
			r->v[r->n - 1].key = val;
		return 1;
	}
	if (r->n == PAIR_RULES_MAX) {
		snprintf(err, errlen, "more than %d --pair rules",
		    PAIR_RULES_MAX);
		return -1;
	}
	if ((copy = strdup(val)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	parts[n++] = copy;
	for (p = copy; *p != '\0'; p++) {
		if (*p == ':' || *p == ',') {
			if (n == 4) {
				n = 5;
				break;
			}
			copy[p - copy] = '\0';
			parts[n++] = copy + (p - copy) + 1;
		}
	}
	for (k = 0; k < n && n <= 4; k++)
		if (parts[k][0] == '\0')
			n = 0;
	if (n != 2 && n != 4) {
		free(copy);
		snprintf(err, errlen, "--pair '%.80s': expected START:END (or "
		    "PROVIDER:START:PROVIDER:END)", val);
		return -1;
	}
	pr = &r->v[r->n];
	memset(pr, 0, sizeof(*pr));
	if (n == 2) {
		pr->start = strdup(parts[0]);
		pr->end = strdup(parts[1]);
	} else {
		if (asprintf(&pr->start, "%s:%s", parts[0], parts[1]) == -1)
			pr->start = NULL;
		if (asprintf(&pr->end, "%s:%s", parts[2], parts[3]) == -1)
			pr->end = NULL;
	}
	free(copy);
	pr->label = strdup(val);
	if (pr->start == NULL || pr->end == NULL || pr->label == NULL) {
		free(pr->start);
		free(pr->end);
		free(pr->label);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	pr->key = r->key_all;
	r->n++;
	return 1;
}

void
pair_rules_free(struct pair_rules *r)
{
	size_t	 i;

	for (i = 0; i < r->n; i++) {
		free(r->v[i].start);
		free(r->v[i].end);
		free(r->v[i].label);
	}
	r->n = 0;
}

struct pairer *
pairer_new(const struct pair_rules *r)
{
	struct pairer	*p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->rules = r;
	return p;
}

void
pairer_free(struct pairer *p)
{
	size_t	 i;

	if (p == NULL)
		return;
	for (i = 0; i < p->cap; i++)
		free(p->tab[i].opens);
	free(p->tab);
	free(p);
}

/* Does the class named 'name' (provider:event) match 'want'? */
static int
pair_name(const char *name, const char *event, const char *want)
{
	return strcmp(want, strchr(want, ':') != NULL ? name : event) == 0;
}

static uint64_t
pair_hash(size_t rule, size_t scope, uint64_t value)
{
	uint64_t h = value * 0x9e3779b97f4a7c15ull;

	h ^= (uint64_t)rule * 0xc2b2ae3d27d4eb4full + (uint64_t)scope;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

static uint64_t
pair_strhash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	size_t	 i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static int
pair_grow(struct pairer *p)
{
	struct pair_entry *old = p->tab, *e;
	size_t		 oldcap = p->cap, i, j, ncap;

	ncap = oldcap != 0 ? oldcap * 2 : 1024;
	if ((p->tab = calloc(ncap, sizeof(*p->tab))) == NULL) {
		p->tab = old;
		return -1;
	}
	p->cap = ncap;
	p->used = 0;
	for (i = 0; i < oldcap; i++) {
		if (old[i].used != 1)
			continue;
		j = pair_hash(old[i].rule, old[i].scope, old[i].value) &
		    (ncap - 1);
		while (p->tab[j].used)
			j = (j + 1) & (ncap - 1);
		e = &p->tab[j];
		*e = old[i];
		p->used++;
	}
	free(old);
	return 0;
}

/* The entry for a key; with 'create', a new one if none.  NULL: none
 * (or no memory when creating: *nomem set). */
static struct pair_entry *
pair_find(struct pairer *p, size_t rule, size_t scope, uint64_t value,
    const char *skey, size_t slen, int create, int *nomem)
{
	struct pair_entry *e, *tomb = NULL;
	size_t		 j;

	*nomem = 0;
	if (create && (p->used + 1) * 4 > p->cap * 3 && pair_grow(p) == -1) {
		*nomem = 1;
		return NULL;
	}
	if (p->cap == 0)
		return NULL;
	j = pair_hash(rule, scope, value) & (p->cap - 1);
	for (;; j = (j + 1) & (p->cap - 1)) {
		e = &p->tab[j];
		if (e->used == 0)
			break;
		if (e->used == 2) {
			if (tomb == NULL)
				tomb = e;
			continue;
		}
		if (e->rule == rule && e->scope == scope && e->value == value &&
		    e->slen == slen && memcmp(e->skey, skey, slen) == 0)
			return e;
	}
	if (!create)
		return NULL;
	if (tomb != NULL)
		e = tomb;
	else
		p->used++;
	memset(e, 0, sizeof(*e));
	e->used = 1;
	e->rule = rule;
	e->scope = scope;
	e->value = value;
	e->slen = (uint8_t)slen;
	memcpy(e->skey, skey, slen);
	return e;
}

/* The key of an event for rule r: 0 with value/skey set, -1 if the
 * event has no such field (it does not take part). */
static int
pair_key(const struct pair_rule *r, const struct reader_item *it,
    size_t *scope, uint64_t *value, const char **skey, size_t *slen)
{
	const struct tracedir_value *v;
	unsigned	 i;

	*skey = "";
	*slen = 0;
	if (r->key == NULL) {
		*scope = it->thread->index;
		*value = 0;
		return 0;
	}
	*scope = it->sess->index;
	for (i = 0; i < it->ev->nvalues; i++) {
		v = &it->ev->values[i];
		if (strcmp(v->decl->shown, r->key) != 0 &&
		    strcmp(v->decl->name, r->key) != 0)
			continue;
		if (v->decl->type.kind == TRACEDIR_INT) {
			*value = v->u;
			return 0;
		}
		*slen = v->len < PAIR_SKEY_MAX ? v->len : PAIR_SKEY_MAX;
		*skey = v->s;
		*value = pair_strhash(v->s, v->len);
		return 0;
	}
	return -1;
}

/*
 * Feed one item.  Contract in pair.h.
 */
int
pairer_feed(struct pairer *p, const struct reader_item *it,
    struct pair_match *m)
{
	const struct pair_rule *r;
	const struct tracedir_class *c;
	struct pair_entry *e;
	struct pair_open *no;
	const char	*skey;
	uint64_t	 value;
	size_t		 i, scope, slen, ncap;
	int		 nomem, found = 0;

	if (it->kind != READER_EVENT)
		return 0;
	c = it->ev->cls;
	for (i = 0; i < p->rules->n; i++) {
		r = &p->rules->v[i];
		if (pair_name(c->name, c->event, r->end)) {
			if (pair_key(r, it, &scope, &value, &skey, &slen) == -1)
				continue;
			e = pair_find(p, i, scope, value, skey, slen, 0,
			    &nomem);
			if (e == NULL || e->nopen == 0) {
				p->orphans[i]++;
				continue;
			}
			e->nopen--;
			p->live--;
			if (!found) {
				m->rule = i;
				m->sess = it->sess;
				m->start_thread = e->opens[e->nopen].thread;
				m->end_thread = it->thread;
				m->start_ns = e->opens[e->nopen].ns;
				m->end_ns = it->ns;
				found = 1;
			}
			if (e->nopen == 0) {
				free(e->opens);
				e->opens = NULL;
				e->capopen = 0;
				e->used = 2;
			}
		} else if (pair_name(c->name, c->event, r->start)) {
			if (pair_key(r, it, &scope, &value, &skey, &slen) == -1)
				continue;
			if (p->live >= PAIR_PENDING_MAX) {
				p->dropped[i]++;
				continue;
			}
			if ((e = pair_find(p, i, scope, value, skey, slen, 1,
			    &nomem)) == NULL)
				return -1;
			if (e->nopen == e->capopen) {
				ncap = e->capopen != 0 ? e->capopen * 2 : 2;
				if ((no = reallocarray(e->opens, ncap,
				    sizeof(*no))) == NULL)
					return -1;
				e->opens = no;
				e->capopen = (uint32_t)ncap;
			}
			e->opens[e->nopen].ns = it->ns;
			e->opens[e->nopen].thread = it->thread;
			e->nopen++;
			p->live++;
		}
	}
	return found;
}

uint64_t
pairer_unmatched(const struct pairer *p, size_t rule)
{
	uint64_t n = 0;
	size_t	 i;

	for (i = 0; i < p->cap; i++)
		if (p->tab[i].used == 1 && p->tab[i].rule == rule)
			n += p->tab[i].nopen;
	return n;
}

uint64_t
pairer_dropped(const struct pairer *p, size_t rule)
{
	return rule < PAIR_RULES_MAX ? p->dropped[rule] : 0;
}

uint64_t
pairer_orphans(const struct pairer *p, size_t rule)
{
	return rule < PAIR_RULES_MAX ? p->orphans[rule] : 0;
}
