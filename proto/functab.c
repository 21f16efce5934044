/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Function tables (proto/functab.h): the line format libtraced writes
 * and the daemon and tracectl read, and the header of the per-object
 * files of a session directory.  The parsers trust no byte: every
 * number is bounded, every name checked, the order enforced, and the
 * memory they take is bounded by the input's length.  No I/O.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "functab.h"

static int
functab_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
functab_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int
functab_name_ok(const char *name)
{
	size_t n;

	for (n = 0; name[n] != '\0'; n++)
		if ((unsigned char)name[n] <= 0x20 ||
		    (unsigned char)name[n] >= 0x7f || n >= FUNCTAB_NAME_MAX)
			return 0;
	return n > 0;
}

static int
functab_kind_ok(char k)
{
	return k == FUNCTAB_KIND_PATCHABLE || k == FUNCTAB_KIND_MCOUNT ||
	    k == FUNCTAB_KIND_INSTRUMENT;
}

int
functab_format_line(char *buf, size_t size, uint64_t start, uint64_t fsize,
    char kind, const char *name)
{
	int n;

	if (!functab_name_ok(name) || !functab_kind_ok(kind))
		return -1;
	n = snprintf(buf, size, "%" PRIx64 " %" PRIu64 " %c %s\n", start,
	    fsize, kind, name);
	return n < 0 || (size_t)n >= size ? -1 : n;
}

/* Parse an unsigned number of base 10 or 16 from [*p, end) up to 'stop'. */
static int
functab_number(const char **p, const char *end, int base, char stop,
    uint64_t *out)
{
	uint64_t v = 0;
	const char *s = *p;
	unsigned d;

	if (s >= end || *s == stop)
		return -1;
	for (; s < end && *s != stop; s++) {
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else
			return -1;
		if (v > (UINT64_MAX - d) / (unsigned)base)
			return -1;
		v = v * (unsigned)base + d;
	}
	if (s >= end || s - *p > 20)
		return -1;
	*p = s + 1;
	*out = v;
	return 0;
}

int
functab_parse(const char *text, size_t len, size_t max, struct functab *out,
    char *err, size_t errlen)
{
	const char *p = text, *end = text + len, *nl, *name;
	struct functab_entry *e = NULL;
	size_t n = 0, cap = 0, line = 1, o = 0;
	char *names;
	uint64_t start, fsize;
	char kind;

	memset(out, 0, sizeof(*out));
	/* Names take at most the input's bytes, NULs included. */
	if ((names = malloc(len + 1)) == NULL)
		return functab_fail(err, errlen, "out of memory");
	for (; p < end; p = nl + 1, line++) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL) {
			functab_fail(err, errlen, "line %zu: no newline at the "
			    "end", line);
			goto fail;
		}
		if (functab_number(&p, nl, 16, ' ', &start) == -1 ||
		    functab_number(&p, nl, 10, ' ', &fsize) == -1) {
			functab_fail(err, errlen, "line %zu: expected 'START "
			    "SIZE KIND NAME'", line);
			goto fail;
		}
		if (nl - p < 3 || !functab_kind_ok(p[0]) || p[1] != ' ') {
			functab_fail(err, errlen, "line %zu: bad kind", line);
			goto fail;
		}
		kind = p[0];
		name = p + 2;
		if (nl - name > FUNCTAB_NAME_MAX) {
			functab_fail(err, errlen, "line %zu: name longer than "
			    "%d bytes", line, FUNCTAB_NAME_MAX);
			goto fail;
		}
		for (p = name; p < nl; p++)
			if ((unsigned char)*p <= 0x20 ||
			    (unsigned char)*p >= 0x7f)
				break;
		if (p != nl || p == name) {
			functab_fail(err, errlen, "line %zu: bad function "
			    "name", line);
			goto fail;
		}
		if (n > 0 && start <= e[n - 1].start) {
			functab_fail(err, errlen, "line %zu: start 0x%" PRIx64
			    " not above the previous one", line, start);
			goto fail;
		}
		if (n == max) {
			functab_fail(err, errlen, "line %zu: more than %zu "
			    "functions", line, max);
			goto fail;
		}
		if (n == cap) {
			struct functab_entry *ne;

			cap = cap ? cap * 2 : 64;
			if ((ne = reallocarray(e, cap, sizeof(*e))) == NULL) {
				functab_fail(err, errlen, "out of memory");
				goto fail;
			}
			e = ne;
		}
		memcpy(names + o, name, (size_t)(nl - name));
		e[n].start = start;
		e[n].size = fsize;
		e[n].kind = kind;
		e[n].name = (const char *)(uintptr_t)o;	/* fixed below */
		o += (size_t)(nl - name);
		names[o++] = '\0';
		n++;
	}
	for (line = 0; line < n; line++)
		e[line].name = names + (uintptr_t)e[line].name;
	out->e = e;
	out->n = n;
	out->text = names;
	return 0;
fail:
	free(e);
	free(names);
	return -1;
}

void
functab_free(struct functab *t)
{
	free(t->e);
	free(t->text);
	memset(t, 0, sizeof(*t));
}

const struct functab_entry *
functab_lookup(const struct functab *t, uint64_t off)
{
	size_t lo = 0, hi = t->n, mid;
	const struct functab_entry *e;

	/* The last entry starting at or below 'off'. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (t->e[mid].start <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	e = &t->e[lo - 1];
	if (off == e->start || off - e->start < e->size)
		return e;
	return NULL;
}

int
functab_module_format(char *buf, size_t size, uint32_t index,
    const char *path, uint64_t base, uint64_t start, uint64_t end,
    const uint8_t *build_id, uint32_t build_id_len, size_t nfuncs)
{
	char hex[2 * 32 + 1];
	uint32_t i;

	if (build_id_len > 32)
		build_id_len = 32;
	for (i = 0; i < build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", build_id[i]);
	hex[2 * build_id_len] = '\0';
	return snprintf(buf, size, "traced-module 1\nindex %" PRIu32 "\n"
	    "path %s\nbase 0x%" PRIx64 "\nstart 0x%" PRIx64 "\nend 0x%"
	    PRIx64 "\nbuild-id %s\nfuncs %zu\n", index, path, base, start,
	    end, build_id_len ? hex : "-", nfuncs);
}

/* The value of header line 'key' at *p ("key value\n"); advances *p. */
static int
functab_header(const char **p, const char *end, const char *key,
    const char **val, size_t *vlen)
{
	size_t k = strlen(key);
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));

	if (nl == NULL || (size_t)(nl - *p) <= k + 1 ||
	    memcmp(*p, key, k) != 0 || (*p)[k] != ' ')
		return -1;
	*val = *p + k + 1;
	*vlen = (size_t)(nl - *val);
	*p = nl + 1;
	return 0;
}

static int
functab_header_num(const char **p, const char *end, const char *key,
    int base, uint64_t *out)
{
	const char *v;
	size_t vl;

	if (functab_header(p, end, key, &v, &vl) == -1)
		return -1;
	if (base == 16) {
		if (vl < 3 || v[0] != '0' || v[1] != 'x')
			return -1;
		v += 2;
		vl -= 2;
	}
	/* functab_number() wants a terminator: the newline is there. */
	return functab_number(&v, v + vl + 1, base, '\n', out);
}

int
functab_module_parse(const char *text, size_t len, struct functab_module *out,
    char *err, size_t errlen)
{
	const char *p = text, *end = text + len, *v;
	uint64_t idx, nfuncs;
	size_t vl, i;

	memset(out, 0, sizeof(*out));
	if (functab_header(&p, end, "traced-module", &v, &vl) == -1 ||
	    vl != 1 || v[0] != '1')
		return functab_fail(err, errlen, "not a traced module file "
		    "of version 1");
	if (functab_header_num(&p, end, "index", 10, &idx) == -1 ||
	    idx > UINT32_MAX)
		return functab_fail(err, errlen, "bad 'index' line");
	out->index = (uint32_t)idx;
	if (functab_header(&p, end, "path", &v, &vl) == -1 || vl > 4096 ||
	    memchr(v, '\0', vl) != NULL)
		return functab_fail(err, errlen, "bad 'path' line");
	if ((out->path = strndup(v, vl)) == NULL)
		return functab_fail(err, errlen, "out of memory");
	if (functab_header_num(&p, end, "base", 16, &out->base) == -1 ||
	    functab_header_num(&p, end, "start", 16, &out->start) == -1 ||
	    functab_header_num(&p, end, "end", 16, &out->end) == -1 ||
	    out->start > out->end) {
		functab_fail(err, errlen, "bad 'base', 'start' or 'end' line");
		goto fail;
	}
	if (functab_header(&p, end, "build-id", &v, &vl) == -1 ||
	    (!(vl == 1 && v[0] == '-') && (vl % 2 != 0 || vl > 64))) {
		functab_fail(err, errlen, "bad 'build-id' line");
		goto fail;
	}
	if (v[0] != '-') {
		for (i = 0; i < vl / 2; i++) {
			const char *q = v + 2 * i;
			uint64_t b;

			char pair[3] = { q[0], q[1], '\n' };
			const char *pp = pair;

			if (functab_number(&pp, pair + 3, 16, '\n', &b) == -1) {
				functab_fail(err, errlen, "bad 'build-id' "
				    "line");
				goto fail;
			}
			out->build_id[i] = (uint8_t)b;
		}
		out->build_id_len = (uint32_t)(vl / 2);
	}
	if (functab_header_num(&p, end, "funcs", 10, &nfuncs) == -1 ||
	    nfuncs > (1u << 20)) {
		functab_fail(err, errlen, "bad 'funcs' line");
		goto fail;
	}
	if (functab_parse(p, (size_t)(end - p), (size_t)nfuncs, &out->tab,
	    err, errlen) == -1)
		goto fail;
	if (out->tab.n != nfuncs) {
		functab_fail(err, errlen, "%zu functions, the header says %"
		    PRIu64, out->tab.n, nfuncs);
		goto fail;
	}
	return 0;
fail:
	functab_module_free(out);
	return -1;
}

void
functab_module_free(struct functab_module *m)
{
	free(m->path);
	functab_free(&m->tab);
	memset(m, 0, sizeof(*m));
}
