/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Function calls in a function trace (calls.h): names from the
 * session's functions/ files, calls matched per thread.
 *
 * Names are interned: one call_fn per distinct name over every session,
 * found from an address through the session's modules (sorted by start,
 * searched by halves) and a per-module cache indexed by table entry, so
 * that a record costs two binary searches and no string work once its
 * function was seen.  Addresses no table covers are named by number and
 * interned too, up to CALLS_UNNAMED_MAX of them: past that, a hostile or
 * corrupt trace gets one "(unnamed)" function instead of memory without
 * bound.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calls.h"
#include "functab.h"
#include "reader.h"
#include "tracedir.h"

#define CALLS_MODULE_MAX	(64u << 20)	/* bytes of a functions/ file */
#define CALLS_UNNAMED_MAX	65536u
#define CALLS_RECHECK_NS	1000000000	/* functions/ looked at again */

struct calls_module {
	struct functab_module m;
	const char	*base;		/* its file name, into m.path */
	struct call_fn	**fns;		/* owned, by table entry; lazily */
};

struct calls_session {
	int		 loaded;
	struct calls_module *mods;	/* owned, by start */
	size_t		 nmods;
	struct timespec	 mtime;		/* of functions/ when read */
	int64_t		 checked;	/* CLOCK_MONOTONIC ns of the last
					   look at functions/ */
};

struct calls_frame {
	const struct call_fn *fn;
	uint64_t	 addr;
	uint64_t	 depth;		/* as recorded */
	int64_t		 start_ns;
	int64_t		 child_ns;	/* its closed callees' time */
};

struct calls_thread {
	struct calls_frame *stack;	/* owned */
	size_t		 n, cap;
	int64_t		 last_ns;
	const struct reader_session *sess;
	const struct reader_thread *thread;
};

static void	calls_session_clear(struct calls_session *cs);
static struct calls_session *calls_session(struct calls *c,
		    const struct reader_session *s);

struct calls {
	struct calls_session *sess;	/* owned, by session index */
	size_t		 nsess;
	struct calls_thread *thr;	/* owned, by thread index */
	size_t		 nthr;
	struct call_fn	**table;	/* owned: hash of names */
	size_t		 tcap;
	struct call_fn	**byid;		/* owned: borrowed entries, by id */
	size_t		 nfns, idcap;
	size_t		 nunnamed;
	calls_error_cb	 cb;
	void		*arg;
};

struct calls *
calls_new(size_t nsessions, size_t nthreads, calls_error_cb cb, void *arg)
{
	struct calls	*c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->cb = cb;
	c->arg = arg;
	c->nsess = nsessions;
	c->nthr = nthreads;
	if ((c->sess = calloc(nsessions + 1, sizeof(*c->sess))) == NULL ||
	    (c->thr = calloc(nthreads + 1, sizeof(*c->thr))) == NULL) {
		calls_free(c);
		return NULL;
	}
	return c;
}

void
calls_free(struct calls *c)
{
	size_t		 i;

	if (c == NULL)
		return;
	for (i = 0; i < c->nsess; i++)
		calls_session_clear(&c->sess[i]);
	for (i = 0; i < c->nthr; i++)
		free(c->thr[i].stack);
	for (i = 0; i < c->tcap; i++)
		free(c->table[i]);	/* the name lives in the same block */
	free(c->table);
	free(c->byid);
	free(c->sess);
	free(c->thr);
	free(c);
}

static void
calls_say(calls_error_cb cb, void *arg, const char *fmt, const char *a,
    const char *b)
{
	char	 msg[4800];

	if (cb == NULL)
		return;
	snprintf(msg, sizeof(msg), fmt, a, b);
	cb(arg, msg);
}

static int
calls_module_cmp(const void *a, const void *b)
{
	const struct functab_module *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int
calls_load_modules(const char *sessdir, struct functab_module **mods,
    size_t *nmods, calls_error_cb cb, void *arg)
{
	char		 dir[4096], path[4400], err[256];
	struct functab_module m, *nm;
	struct dirent	*de;
	uint8_t		*data;
	size_t		 len;
	DIR		*d;
	int		 rc = 0;

	*mods = NULL;
	*nmods = 0;
	snprintf(dir, sizeof(dir), "%s/functions", sessdir);
	if ((d = opendir(dir)) == NULL) {
		if (errno != ENOENT)
			calls_say(cb, arg, "%s: %s", dir, strerror(errno));
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "module-", 7) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (tracedir_read_file(path, CALLS_MODULE_MAX, &data, &len,
		    err, sizeof(err)) == -1) {
			calls_say(cb, arg, "%s: %s (its addresses stay "
			    "unnamed)", path, err);
			continue;
		}
		if (functab_module_parse((const char *)data, len, &m, err,
		    sizeof(err)) == -1) {
			calls_say(cb, arg, "%s: %s (its addresses stay "
			    "unnamed)", path, err);
			free(data);
			continue;
		}
		free(data);
		if ((nm = reallocarray(*mods, *nmods + 1,
		    sizeof(*nm))) == NULL) {
			functab_module_free(&m);
			rc = -1;
			break;
		}
		*mods = nm;
		nm[(*nmods)++] = m;
	}
	closedir(d);
	if (*nmods > 0)
		qsort(*mods, *nmods, sizeof(**mods), calls_module_cmp);
	return rc;
}

/*
 * Room for index i in an array of *n elements of 'size' bytes, zeroed:
 * print --follow meets sessions and threads as they come.  0 or -1.
 */
static int
calls_room(void **a, size_t *n, size_t i, size_t size)
{
	size_t		 cap = *n != 0 ? *n : 8;
	char		*na;

	if (i < *n)
		return 0;
	while (cap <= i)
		cap *= 2;
	if ((na = reallocarray(*a, cap, size)) == NULL)
		return -1;
	memset(na + *n * size, 0, (cap - *n) * size);
	*a = na;
	*n = cap;
	return 0;
}

/* Forget the modules of cs (the functions named stay interned). */
static void
calls_session_clear(struct calls_session *cs)
{
	size_t		 i;

	for (i = 0; i < cs->nmods; i++) {
		functab_module_free(&cs->mods[i].m);
		free(cs->mods[i].fns);
	}
	free(cs->mods);
	cs->mods = NULL;
	cs->nmods = 0;
}

static int64_t
calls_mono_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* functions/'s modification time into *t (zero if it has none). */
static void
calls_dir_mtime(const char *sessdir, struct timespec *t)
{
	char		 dir[4200];
	struct stat	 st;

	snprintf(dir, sizeof(dir), "%s/functions", sessdir);
	if (stat(dir, &st) == 0)
		*t = st.st_mtim;
	else
		memset(t, 0, sizeof(*t));
}

/*
 * An address no module of s names: a trace being written (print
 * --follow) may have got a module file since they were read (a library
 * loaded later).  Read them again if functions/ changed, at most once a
 * second.  1 if they were read again, else 0; -1 when out of memory.
 */
static int
calls_session_recheck(struct calls *c, const struct reader_session *s,
    struct calls_session *cs)
{
	struct timespec	 t;
	int64_t		 now = calls_mono_ns();

	if (now - cs->checked < CALLS_RECHECK_NS)
		return 0;
	cs->checked = now;
	calls_dir_mtime(s->path, &t);
	if (t.tv_sec == cs->mtime.tv_sec && t.tv_nsec == cs->mtime.tv_nsec)
		return 0;
	calls_session_clear(cs);
	cs->loaded = 0;
	return calls_session(c, s) == NULL ? -1 : 1;
}

/* The modules of session s, read at its first function record. */
static struct calls_session *
calls_session(struct calls *c, const struct reader_session *s)
{
	struct calls_session *cs;
	struct functab_module *mods;
	size_t		 i, n;
	const char	*slash;

	if (calls_room((void **)&c->sess, &c->nsess, s->index,
	    sizeof(*c->sess)) == -1)
		return NULL;
	cs = &c->sess[s->index];
	if (cs->loaded)
		return cs;
	cs->loaded = 1;
	cs->checked = calls_mono_ns();
	calls_dir_mtime(s->path, &cs->mtime);
	if (calls_load_modules(s->path, &mods, &n, c->cb, c->arg) == -1 &&
	    n == 0)
		return NULL;
	if (n > 0 && (cs->mods = calloc(n, sizeof(*cs->mods))) == NULL) {
		for (i = 0; i < n; i++)
			functab_module_free(&mods[i]);
		free(mods);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		cs->mods[i].m = mods[i];
		slash = strrchr(mods[i].path, '/');
		cs->mods[i].base = slash != NULL ? slash + 1 : mods[i].path;
	}
	cs->nmods = n;
	free(mods);
	return cs;
}

static uint64_t
calls_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The function of this name, made the first time.  NULL: no memory. */
static struct call_fn *
calls_intern(struct calls *c, const char *name)
{
	struct call_fn	**nt, *f, **ni;
	size_t		 i, j, ncap, len;

	if ((c->nfns + 1) * 2 > c->tcap) {
		ncap = c->tcap != 0 ? c->tcap * 2 : 256;
		if ((nt = calloc(ncap, sizeof(*nt))) == NULL)
			return NULL;
		for (i = 0; i < c->tcap; i++) {
			if (c->table[i] == NULL)
				continue;
			for (j = calls_hash(c->table[i]->name) & (ncap - 1);
			    nt[j] != NULL; j = (j + 1) & (ncap - 1))
				;
			nt[j] = c->table[i];
		}
		free(c->table);
		c->table = nt;
		c->tcap = ncap;
	}
	for (j = calls_hash(name) & (c->tcap - 1); c->table[j] != NULL;
	    j = (j + 1) & (c->tcap - 1))
		if (strcmp(c->table[j]->name, name) == 0)
			return c->table[j];
	if (c->nfns == c->idcap) {
		ncap = c->idcap != 0 ? c->idcap * 2 : 256;
		if ((ni = reallocarray(c->byid, ncap, sizeof(*ni))) == NULL)
			return NULL;
		c->byid = ni;
		c->idcap = ncap;
	}
	len = strlen(name);
	if ((f = malloc(sizeof(*f) + len + 1)) == NULL)
		return NULL;
	memcpy(f + 1, name, len + 1);
	f->name = (const char *)(f + 1);
	f->id = c->nfns;
	c->table[j] = f;
	c->byid[c->nfns++] = f;
	return f;
}

/* The module whose mapping holds addr, or NULL. */
static struct calls_module *
calls_module(struct calls_session *cs, uint64_t addr)
{
	size_t		 lo = 0, hi = cs->nmods, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (cs->mods[mid].m.start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= cs->mods[lo - 1].m.end)
		return NULL;
	return &cs->mods[lo - 1];
}

const struct call_fn *
calls_name(struct calls *c, const struct reader_session *s, uint64_t addr)
{
	struct calls_session *cs;
	const struct functab_entry *e;
	struct calls_module *cm;
	struct call_fn	*f;
	char		 name[FUNCTAB_NAME_MAX + 320];
	size_t		 i;
	int		 r;

	if ((cs = calls_session(c, s)) == NULL)
		return NULL;
	/* A miss may be a module written since (print --follow). */
	for (;;) {
		cm = calls_module(cs, addr);
		e = cm != NULL ? functab_lookup(&cm->m.tab,
		    addr - cm->m.base) : NULL;
		if (e != NULL)
			break;
		if ((r = calls_session_recheck(c, s, cs)) == -1)
			return NULL;
		if (r == 0)
			break;
	}
	if (e != NULL) {
		i = (size_t)(e - cm->m.tab.e);
		if (cm->fns == NULL && (cm->fns = calloc(cm->m.tab.n,
		    sizeof(*cm->fns))) == NULL)
			return NULL;
		if (cm->fns[i] != NULL)
			return cm->fns[i];
		snprintf(name, sizeof(name), "%.300s:%s", cm->base,
		    cm->m.tab.e[i].name);
		return cm->fns[i] = calls_intern(c, name);
	}
	if (c->nunnamed >= CALLS_UNNAMED_MAX)
		return calls_intern(c, "(unnamed)");
	if (cm != NULL)
		snprintf(name, sizeof(name), "%.300s+0x%llx", cm->base,
		    (unsigned long long)(addr - cm->m.base));
	else
		snprintf(name, sizeof(name), "0x%llx",
		    (unsigned long long)addr);
	if ((f = calls_intern(c, name)) != NULL && f->id + 1 == c->nfns)
		c->nunnamed++;
	return f;
}

size_t
calls_nfns(const struct calls *c)
{
	return c->nfns;
}

const struct call_fn *
calls_fn(const struct calls *c, size_t id)
{
	return id < c->nfns ? c->byid[id] : NULL;
}

/* ---- matching ------------------------------------------------------- */

static int
calls_field(const struct tracedir_event *ev, const char *name, uint64_t *v)
{
	unsigned	 i;

	for (i = 0; i < ev->nvalues; i++)
		if (strcmp(ev->values[i].decl->shown, name) == 0) {
			*v = ev->values[i].u;
			return 0;
		}
	return -1;
}

int
calls_record(const struct reader_item *it, int *exit_, uint64_t *addr,
    uint64_t *depth)
{
	const char	*name;

	if (it->kind != READER_EVENT)
		return 0;
	name = it->ev->cls->name;
	if (strncmp(name, "traced:func_e", 13) != 0)
		return 0;
	if (strcmp(name + 13, "ntry") == 0)
		*exit_ = 0;
	else if (strcmp(name + 13, "xit") == 0)
		*exit_ = 1;
	else
		return 0;
	return calls_field(it->ev, "addr", addr) == 0 &&
	    calls_field(it->ev, "depth", depth) == 0;
}

/* Close the innermost open call of t at ns. */
static int
calls_pop(struct calls_thread *t, int64_t ns, enum call_end end,
    calls_step_cb cb, void *arg)
{
	struct calls_frame *f = &t->stack[--t->n];
	struct call_step s;
	int64_t		 total = ns - f->start_ns;

	if (total < 0)
		total = 0;
	memset(&s, 0, sizeof(s));
	s.how = CALL_CLOSE;
	s.end = end;
	s.fn = f->fn;
	s.sess = t->sess;
	s.thread = t->thread;
	s.level = (unsigned)t->n;
	s.start_ns = f->start_ns;
	s.end_ns = ns;
	s.self_ns = total - f->child_ns > 0 ? total - f->child_ns : 0;
	if (t->n > 0)
		t->stack[t->n - 1].child_ns += total;
	return cb(arg, &s);
}

static int
calls_entry_rec(struct calls *c, struct calls_thread *t,
    const struct reader_item *it, uint64_t addr, uint64_t depth,
    calls_step_cb cb, void *arg)
{
	struct calls_frame *nf, *f;
	struct call_step s;
	const struct call_fn *fn;
	size_t		 cap;

	/* Open calls at its depth or deeper lost their exits. */
	while (t->n > 0 && t->stack[t->n - 1].depth >= depth)
		if (calls_pop(t, it->ns, CALL_NO_EXIT, cb, arg) == -1)
			return -1;
	if ((fn = calls_name(c, it->sess, addr)) == NULL)
		return -1;
	if (t->n == t->cap) {
		cap = t->cap != 0 ? t->cap * 2 : 32;
		if ((nf = reallocarray(t->stack, cap, sizeof(*nf))) == NULL)
			return -1;
		t->stack = nf;
		t->cap = cap;
	}
	f = &t->stack[t->n++];
	f->fn = fn;
	f->addr = addr;
	f->depth = depth;
	f->start_ns = it->ns;
	f->child_ns = 0;
	memset(&s, 0, sizeof(s));
	s.how = CALL_OPEN;
	s.fn = fn;
	s.sess = it->sess;
	s.thread = it->thread;
	s.level = (unsigned)(t->n - 1);
	s.start_ns = it->ns;
	return cb(arg, &s);
}

static int
calls_exit_rec(struct calls_thread *t, const struct reader_item *it,
    uint64_t addr, uint64_t depth, calls_step_cb cb, void *arg)
{
	size_t		 i;

	for (i = t->n; i-- > 0; )
		if (t->stack[i].addr == addr && t->stack[i].depth == depth)
			break;
	if (i == (size_t)-1)
		return 0;		/* its entry was never seen */
	while (t->n > i + 1)
		if (calls_pop(t, it->ns, CALL_NO_EXIT, cb, arg) == -1)
			return -1;
	return calls_pop(t, it->ns, CALL_RETURNED, cb, arg);
}

int
calls_feed(struct calls *c, const struct reader_item *it, calls_step_cb cb,
    void *arg)
{
	struct calls_thread *t;
	uint64_t	 addr, depth;
	int		 exit_;

	if (calls_room((void **)&c->thr, &c->nthr, it->thread->index,
	    sizeof(*c->thr)) == -1)
		return -1;
	t = &c->thr[it->thread->index];
	t->sess = it->sess;
	t->thread = it->thread;
	if (it->ns > t->last_ns)
		t->last_ns = it->ns;
	if (!calls_record(it, &exit_, &addr, &depth))
		return 0;
	if (exit_)
		return calls_exit_rec(t, it, addr, depth, cb, arg);
	return calls_entry_rec(c, t, it, addr, depth, cb, arg);
}

int
calls_finish(struct calls *c, calls_step_cb cb, void *arg)
{
	size_t		 i;

	for (i = 0; i < c->nthr; i++)
		while (c->thr[i].n > 0)
			if (calls_pop(&c->thr[i], c->thr[i].last_ns,
			    CALL_UNFINISHED, cb, arg) == -1)
				return -1;
	return 0;
}
