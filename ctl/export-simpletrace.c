/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * tracectl export --format simpletrace -o OUTDIR: QEMU's simpletrace
 * binary format, version 4, as QEMU's scripts/simpletrace.py reads it
 * (shared/formats/simpletrace.md), one file per traced process,
 * OUTDIR/trace-<pid>, and OUTDIR/trace-events with the declarations the
 * reader needs (the trace-events lines the metadata carries):
 *
 *   header   u64 0xffffffffffffffff, u64 0xf2b177cb0aa429b4, u64 4
 *   mapping  u64 0, u64 id, u32 name length, name (no NUL)
 *   event    u64 1, u64 id, u64 ns, u32 24 + payload, u32 pid, args
 *            (each integer, pointer or bool a u64; each string a u32
 *            length and its bytes, a NULL string length 0)
 *   dropped  u64 1, u64 0xfffffffffffffffe, u64 ns, u32 32, u32 pid,
 *            u64 count
 *
 * All in host byte order, no padding, written field by field.  Ids are
 * given per file in the order events first appear, each with its
 * mapping record right before its first use.  A loss becomes a dropped
 * record where it happened, with the number of events lost.  The
 * timestamp is the session clock's own nanoseconds (CLOCK_MONOTONIC
 * for a monotonic session, as QEMU's get_clock()); the pid is the
 * process's, as QEMU writes it: simpletrace has no thread.
 *
 * Event names are trace-events names, without the provider; when two
 * providers of a trace have an event of the same name and different
 * declarations, the second is written as PROVIDER_EVENT (in its mapping
 * records and in OUTDIR/trace-events alike).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "strbuf.h"
#include "tevents.h"

#define ST_HEADER_EVENT		UINT64_C(0xffffffffffffffff)
#define ST_HEADER_MAGIC		UINT64_C(0xf2b177cb0aa429b4)
#define ST_HEADER_VERSION	4
#define ST_REC_MAPPING		0
#define ST_REC_EVENT		1
#define ST_DROPPED_ID		UINT64_C(0xfffffffffffffffe)
#define ST_REC_FIXED		24	/* id, ns, length, pid */
#define ST_OPEN_MAX		64	/* files open at once */

/* One declared name of OUTDIR/trace-events. */
struct st_decl {
	char		*name;		/* owned: the name written */
	char		*line;		/* owned: its trace-events line */
};

/* Per session: its file and the ids given to its classes. */
struct st_file {
	FILE		*f;		/* NULL when closed (or never) */
	char		 name[64];	/* trace-<pid>[.<session>] */
	int		 made;		/* created (header written) */
	uint64_t	 used;		/* for closing the least recent */
	uint64_t	*ids;		/* owned: class index -> id + 1 */
	uint64_t	 next_id;
	uint32_t	 pid;
};

struct st_state {
	struct st_file	*files;		/* owned, per session */
	unsigned	 nopen;
	uint64_t	 clock;		/* use counter */
	struct st_decl	*decls;		/* owned */
	size_t		 ndecls;
	char		***names;	/* owned: per session, per class,
					   the name used (into decls) */
	struct strbuf	 rec;
};

static void
st_u64(struct strbuf *b, uint64_t v)
{
	strbuf_add(b, (const char *)&v, sizeof(v));
}

static void
st_u32(struct strbuf *b, uint32_t v)
{
	strbuf_add(b, (const char *)&v, sizeof(v));
}

/* The trace-events line of a class (without newline), in a new string. */
static char *
st_line(const struct tracedir_class *c, const char *name)
{
	struct strbuf	 b;
	const struct tracedir_decl *d;
	const char	*p;
	unsigned	 i;
	int		 n;

	strbuf_init(&b);
	if (c->decl != NULL && (n = tevents_format(c->decl, NULL, 0)) > 0) {
		char *line = malloc((size_t)n + 1);

		if (line == NULL)
			return NULL;
		tevents_format(c->decl, line, (size_t)n + 1);
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		/* The name as written here, the rest as declared. */
		if ((p = strchr(line, '(')) == NULL) {
			free(line);
			return NULL;
		}
		strbuf_adds(&b, c->decl->disabled ? "disable " : "");
		strbuf_adds(&b, name);
		strbuf_adds(&b, p);
		free(line);
		return b.failed ? (strbuf_free(&b), NULL) : b.s;
	}
	/* No declaration in the metadata: one from the fields. */
	strbuf_adds(&b, name);
	strbuf_addc(&b, '(');
	for (i = 0; i < c->fields.n; i++) {
		d = &c->fields.decls[i];
		if (i > 0)
			strbuf_adds(&b, ", ");
		if (d->type.kind == TRACEDIR_STRING)
			strbuf_adds(&b, "const char *");
		else if (d->type.base == 16)
			strbuf_adds(&b, "void *");
		else
			strbuf_adds(&b, d->type.is_signed ? "int64_t " :
			    "uint64_t ");
		strbuf_adds(&b, d->shown);
	}
	if (c->fields.n == 0)
		strbuf_adds(&b, "void");
	strbuf_adds(&b, ") \"\"");
	return b.failed ? (strbuf_free(&b), NULL) : b.s;
}

/*
 * 'name' as a C identifier, in a new string (NULL: out of memory): a
 * trace directory is input, and an event name with a newline in it
 * would write lines of its own into trace-events (simpletrace.py reads
 * identifiers only).  Every other byte becomes '_'; *changed says so.
 */
static char *
st_ident(const char *name, size_t len, int *changed)
{
	char	*s;
	size_t	 i;

	if ((s = malloc(len + 2)) == NULL)
		return NULL;
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)name[i];

		s[i] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    ch == '_' || (i > 0 && ch >= '0' && ch <= '9') ? (char)ch :
		    '_';
		if (s[i] != name[i])
			*changed = 1;
	}
	if (len == 0) {
		s[len++] = '_';
		*changed = 1;
	}
	s[len] = '\0';
	return s;
}

/*
 * The name class c of session s is written as, declared the first
 * time.  NULL when out of memory.
 */
static const char *
st_name(struct export *x, struct st_state *st,
    const struct reader_session *s, const struct tracedir_class *c)
{
	size_t		 idx = (size_t)(c - s->meta->classes), i, k;
	struct st_decl	*nd;
	char		*line = NULL, *name = NULL, *alt = NULL;

	if (st->names[s->index] == NULL &&
	    (st->names[s->index] = calloc(s->meta->nclasses,
	    sizeof(char *))) == NULL)
		goto nomem;
	if (st->names[s->index][idx] != NULL)
		return st->names[s->index][idx];
	for (k = 0; k < 2; k++) {
		int changed = 0;

		free(alt);
		if (k == 0)
			alt = st_ident(c->event, strlen(c->event), &changed);
		else {
			char *q = NULL;

			if (asprintf(&q, "%.*s_%s", (int)c->provider_len,
			    c->name, c->event) == -1)
				q = NULL;
			alt = q != NULL ? st_ident(q, strlen(q), &changed) :
			    NULL;
			free(q);
		}
		if (alt == NULL)
			goto nomem;
		name = alt;
		if (changed && k == 0)
			export_error(x, "%s: an event whose name is not a C "
			    "identifier is written as %s", s->path, name);
		free(line);
		if ((line = st_line(c, name)) == NULL)
			goto nomem;
		for (i = 0; i < st->ndecls; i++)
			if (strcmp(st->decls[i].name, name) == 0)
				break;
		if (i < st->ndecls && strcmp(st->decls[i].line, line) == 0) {
			free(line);
			free(alt);
			return st->names[s->index][idx] = st->decls[i].name;
		}
		if (i == st->ndecls)
			break;
		/* The same name, another declaration: qualify it. */
	}
	if (k == 2) {
		export_error(x, "%s: event %s: its name is taken by another "
		    "declaration; it is written with that one's", s->path,
		    c->name);
		free(line);
		free(alt);
		return st->names[s->index][idx] = st->decls[i].name;
	}
	if ((nd = reallocarray(st->decls, st->ndecls + 1,
	    sizeof(*nd))) == NULL)
		goto nomem;
	st->decls = nd;
	if ((nd[st->ndecls].name = strdup(name)) == NULL)
		goto nomem;
	nd[st->ndecls].line = line;
	free(alt);
	return st->names[s->index][idx] = nd[st->ndecls++].name;
nomem:
	free(line);
	free(alt);
	export_error(x, "out of memory");
	return NULL;
}

/* Write the bytes built in st->rec to a session's file. */
static int
st_put(struct export *x, struct st_state *st, struct st_file *sf)
{
	if (st->rec.failed) {
		export_error(x, "out of memory");
		return -1;
	}
	fwrite(st->rec.s, 1, st->rec.len, sf->f);
	strbuf_reset(&st->rec);
	return 0;
}

/* Close the least recently used open file, keeping its data. */
static int
st_close_lru(struct export *x, struct st_state *st)
{
	struct st_file	*lru = NULL;
	size_t		 i;

	for (i = 0; i < x->nsessions; i++)
		if (st->files[i].f != NULL && (lru == NULL ||
		    st->files[i].used < lru->used))
			lru = &st->files[i];
	if (lru == NULL)
		return 0;
	st->nopen--;
	if (export_close(x, lru->f, lru->name) == -1) {
		lru->f = NULL;
		return -1;
	}
	lru->f = NULL;
	return 0;
}

/* The open file of a session: created with its header the first time,
 * reopened for appending after st_close_lru(). */
static struct st_file *
st_file(struct export *x, struct st_state *st, const struct reader_session *s)
{
	struct st_file	*sf = &st->files[s->index];
	size_t		 i;
	int		 fd;

	sf->used = ++st->clock;
	if (sf->f != NULL)
		return sf;
	if (st->nopen >= ST_OPEN_MAX && st_close_lru(x, st) == -1)
		return NULL;
	if (!sf->made) {
		sf->pid = (uint32_t)s->pid;
		snprintf(sf->name, sizeof(sf->name), "trace-%lld",
		    (long long)s->pid);
		for (i = 0; i < s->index; i++)
			if (st->files[i].made &&
			    strcmp(st->files[i].name, sf->name) == 0)
				snprintf(sf->name, sizeof(sf->name),
				    "trace-%lld.%lld", (long long)s->pid,
				    (long long)s->number);
		if ((sf->f = export_open(x, sf->name)) == NULL)
			return NULL;
		sf->made = 1;
		if (s->meta->nclasses > 0 && (sf->ids = calloc(
		    s->meta->nclasses, sizeof(*sf->ids))) == NULL) {
			export_error(x, "out of memory");
			return NULL;
		}
		st->nopen++;
		st_u64(&st->rec, ST_HEADER_EVENT);
		st_u64(&st->rec, ST_HEADER_MAGIC);
		st_u64(&st->rec, ST_HEADER_VERSION);
		if (st_put(x, st, sf) == -1)
			return NULL;
		return sf;
	}
	fd = openat(x->dirfd, sf->name, O_WRONLY | O_APPEND | O_CLOEXEC |
	    O_NOFOLLOW);
	if (fd == -1 || (sf->f = fdopen(fd, "a")) == NULL) {
		export_error(x, "%s/%s: %s", x->out_path, sf->name,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return NULL;
	}
	st->nopen++;
	return sf;
}

static int
st_begin(struct export *x)
{
	struct st_state	*st = x->priv;

	strbuf_init(&st->rec);
	if ((st->files = calloc(x->nsessions + 1, sizeof(*st->files))) ==
	    NULL || (st->names = calloc(x->nsessions + 1,
	    sizeof(*st->names))) == NULL) {
		export_error(x, "out of memory");
		return -1;
	}
	return 0;
}

/* The session clock's own ns: wall-clock ns less the clock's offset. */
static uint64_t
st_ns(const struct reader_item *it)
{
	return (uint64_t)(it->ns - tracedir_ns(it->sess->meta, 0));
}

static int
st_item(struct export *x, const struct reader_item *it)
{
	struct st_state	*st = x->priv;
	const struct tracedir_event *ev = it->ev;
	const struct tracedir_value *v;
	const char	*name;
	struct st_file	*sf;
	size_t		 idx, payload = 0;
	unsigned	 i;

	if (it->kind == READER_LOST && it->lost == 0)
		return 0;		/* whole packets: no count to say */
	if ((sf = st_file(x, st, it->sess)) == NULL)
		return -1;
	if (it->kind == READER_LOST) {
		st_u64(&st->rec, ST_REC_EVENT);
		st_u64(&st->rec, ST_DROPPED_ID);
		st_u64(&st->rec, st_ns(it));
		st_u32(&st->rec, ST_REC_FIXED + 8);
		st_u32(&st->rec, sf->pid);
		st_u64(&st->rec, it->lost);
		return st_put(x, st, sf);
	}
	idx = (size_t)(ev->cls - it->sess->meta->classes);
	if (sf->ids[idx] == 0) {
		if ((name = st_name(x, st, it->sess, ev->cls)) == NULL)
			return -1;
		sf->ids[idx] = ++sf->next_id;
		st_u64(&st->rec, ST_REC_MAPPING);
		st_u64(&st->rec, sf->ids[idx] - 1);
		st_u32(&st->rec, (uint32_t)strlen(name));
		strbuf_adds(&st->rec, name);
	}
	for (i = 0; i < ev->nvalues; i++) {
		v = &ev->values[i];
		if (v->decl->type.kind == TRACEDIR_STRING)
			payload += 4 + (v->is_null ? 0 : v->len);
		else
			payload += 8;
	}
	st_u64(&st->rec, ST_REC_EVENT);
	st_u64(&st->rec, sf->ids[idx] - 1);
	st_u64(&st->rec, st_ns(it));
	st_u32(&st->rec, (uint32_t)(ST_REC_FIXED + payload));
	st_u32(&st->rec, sf->pid);
	for (i = 0; i < ev->nvalues; i++) {
		v = &ev->values[i];
		if (v->decl->type.kind == TRACEDIR_STRING) {
			st_u32(&st->rec, v->is_null ? 0 : (uint32_t)v->len);
			if (!v->is_null)
				strbuf_add(&st->rec, v->s, v->len);
		} else
			st_u64(&st->rec, v->u);
	}
	return st_put(x, st, sf);
}

static int
st_end(struct export *x)
{
	struct st_state	*st = x->priv;
	FILE		*f;
	size_t		 i;
	int		 ret = 0;

	for (i = 0; i < x->nsessions; i++) {
		if (st->files[i].f == NULL)
			continue;
		if (export_close(x, st->files[i].f, st->files[i].name) == -1)
			ret = -1;
		st->files[i].f = NULL;
	}
	if ((f = export_open(x, "trace-events")) == NULL)
		return -1;
	fputs("# The events of the simpletrace files beside this one, as "
	    "tracectl export\n# wrote them: read them with\n"
	    "#   simpletrace.py trace-events trace-PID\n", f);
	for (i = 0; i < st->ndecls; i++)
		fprintf(f, "%s\n", st->decls[i].line);
	if (export_close(x, f, "trace-events") == -1)
		ret = -1;
	return ret;
}

static void
st_free(struct export *x)
{
	struct st_state	*st = x->priv;
	size_t		 i;

	for (i = 0; st->files != NULL && i < x->nsessions; i++) {
		if (st->files[i].f != NULL)
			fclose(st->files[i].f);
		free(st->files[i].ids);
	}
	for (i = 0; st->names != NULL && i < x->nsessions; i++)
		free(st->names[i]);
	for (i = 0; i < st->ndecls; i++) {
		free(st->decls[i].name);
		free(st->decls[i].line);
	}
	free(st->decls);
	free(st->names);
	free(st->files);
	strbuf_free(&st->rec);
}

const struct export_format export_fmt_simpletrace = {
	.name = "simpletrace",
	.help = "QEMU simpletrace v4, one trace-PID file per process "
	    "(QEMU's simpletrace.py)",
	.out_is_dir = 1,
	.priv_size = sizeof(struct st_state),
	.begin = st_begin,
	.item = st_item,
	.end = st_end,
	.free = st_free,
};
