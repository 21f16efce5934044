/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The trace-events parser and its inverse, tevents_format() (see
 * tevents.h and trace-events(5)).
 *
 * The text is read one line at a time, in one pass: a line is blank, a
 * '#' comment, or an event.  An event is split into words ([A-Za-z0-9_]
 * runs) and punctuation without building a token list; each argument's
 * tokens are collected into a small bounded array, then normalized and
 * classified against the type words tracegen knows.  That is linear in
 * the size of the text; clashing event names are then found by sorting
 * the names, O(n log n) in the number of events whatever names a
 * hostile client picks.
 *
 * What is accepted follows QEMU's tracetool (scripts/tracetool in QEMU
 * 7.2): the same properties, types and formats, at most 10 arguments,
 * no %m and no trailing newline in a format, a newline at the end of
 * the file.  Where tracetool lets a line through that the C compiler
 * then refuses (an unknown type word, a macro other than PRI* in a
 * format, text after the format) this parser says so, at the line and
 * column, with the fix.
 *
 * The daemon runs this on text a client sent, so nothing here trusts
 * the input: every length is bounded by a TEVENTS_*_MAX, NUL bytes,
 * control characters and invalid UTF-8 are errors, and every error
 * names its line and column.  No I/O; memory comes from malloc and goes
 * back through tevents_free(), also when parsing fails half way.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "tevents.h"
#include "text.h"

/* Most tokens one argument may have ("const unsigned long *p" has 5). */
#define TOKS_MAX	(TEVENTS_TYPE_MAX + 2)
/* Longest word quoted in an error message. */
#define SHOW_MAX	40

/* Every string argument at full length still fits in a record. */
_Static_assert(TRACED_REC_HDR_SIZE + TEVENTS_ARGS_MAX *
    (TRACED_STR_MAX + 1) <= TRACED_REC_MAX, "a record holds any event");

struct tok {
	size_t		 pos;		/* offset in the text */
	size_t		 len;		/* 1 for '*' */
	int		 star;		/* '*', else a word */
};

struct parser {
	const char	*text;		/* borrowed */
	size_t		 len;
	const char	*filename;	/* borrowed */
	char		*err;		/* borrowed, errlen bytes */
	size_t		 errlen;
	unsigned	 line;		/* 1-based */
	size_t		 bol;		/* offset of the line's first byte */
	size_t		 eol;		/* end of its content ("\n" or "\r\n"
					   excluded) */
	size_t		 pos;		/* cursor, bol <= pos <= eol */
	struct tevents_file *out;	/* borrowed */
	size_t		 cap;		/* allocated out->events and cols */
	size_t		*cols;		/* owned: column of each event's
					   name, for check_names() */
	size_t		 namecol;	/* that of the event being parsed */
};

static const char *const c_keywords[] = {
	"auto", "break", "case", "char", "const", "continue", "default",
	"do", "double", "else", "enum", "extern", "float", "for", "goto",
	"if", "inline", "int", "long", "register", "restrict", "return",
	"short", "signed", "sizeof", "static", "struct", "switch",
	"typedef", "union", "unsigned", "void", "volatile", "while",
	"_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic",
	"_Imaginary", "_Noreturn", "_Static_assert", "_Thread_local",
	"asm", "typeof", "bool", "true", "false", NULL
};

/* The integer typedefs tracegen knows, and how they are recorded. */
struct known_type {
	const char	*name;
	enum tevents_class cls;
};

static const struct known_type known_types[] = {
	/* QEMU's tracetool allows these (and the integer keywords). */
	{ "bool", TEVENTS_BOOL },
	{ "int8_t", TEVENTS_SIGNED }, { "uint8_t", TEVENTS_UNSIGNED },
	{ "int16_t", TEVENTS_SIGNED }, { "uint16_t", TEVENTS_UNSIGNED },
	{ "int32_t", TEVENTS_SIGNED }, { "uint32_t", TEVENTS_UNSIGNED },
	{ "int64_t", TEVENTS_SIGNED }, { "uint64_t", TEVENTS_UNSIGNED },
	{ "size_t", TEVENTS_UNSIGNED }, { "ssize_t", TEVENTS_SIGNED },
	{ "uintptr_t", TEVENTS_UNSIGNED }, { "ptrdiff_t", TEVENTS_SIGNED },
	/* tracegen also knows these, all declared by <stdbool.h>,
	 * <stdint.h>, <stddef.h> or <sys/types.h> in strict C too. */
	{ "_Bool", TEVENTS_BOOL },
	{ "int_least8_t", TEVENTS_SIGNED },
	{ "int_least16_t", TEVENTS_SIGNED },
	{ "int_least32_t", TEVENTS_SIGNED },
	{ "int_least64_t", TEVENTS_SIGNED },
	{ "uint_least8_t", TEVENTS_UNSIGNED },
	{ "uint_least16_t", TEVENTS_UNSIGNED },
	{ "uint_least32_t", TEVENTS_UNSIGNED },
	{ "uint_least64_t", TEVENTS_UNSIGNED },
	{ "int_fast8_t", TEVENTS_SIGNED }, { "int_fast16_t", TEVENTS_SIGNED },
	{ "int_fast32_t", TEVENTS_SIGNED }, { "int_fast64_t", TEVENTS_SIGNED },
	{ "uint_fast8_t", TEVENTS_UNSIGNED },
	{ "uint_fast16_t", TEVENTS_UNSIGNED },
	{ "uint_fast32_t", TEVENTS_UNSIGNED },
	{ "uint_fast64_t", TEVENTS_UNSIGNED },
	{ "intmax_t", TEVENTS_SIGNED }, { "uintmax_t", TEVENTS_UNSIGNED },
	{ "intptr_t", TEVENTS_SIGNED },
	{ "off_t", TEVENTS_SIGNED }, { "pid_t", TEVENTS_SIGNED },
	{ "uid_t", TEVENTS_UNSIGNED }, { "gid_t", TEVENTS_UNSIGNED },
	{ "mode_t", TEVENTS_UNSIGNED }, { "dev_t", TEVENTS_UNSIGNED },
	{ "ino_t", TEVENTS_UNSIGNED }, { "time_t", TEVENTS_SIGNED },
};

static int
is_word(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_';
}

static int
is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int
isxdigit_(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static unsigned
hexval(unsigned char c)
{
	return is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10;
}

static unsigned char
lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* Is s[0..n) one of the NULL-terminated 'list'? */
static int
in_list(const char *const *list, const char *s, size_t n)
{
	for (; *list != NULL; list++)
		if (strncmp(*list, s, n) == 0 && (*list)[n] == '\0')
			return 1;
	return 0;
}

static int
word_is(const char *s, size_t n, const char *w)
{
	return strncmp(s, w, n) == 0 && w[n] == '\0';
}

/*
 * Copy the word s[0..n) into buf for an error message, cut to SHOW_MAX
 * bytes with "..." so that a hostile megabyte word stays readable.
 */
static const char *
show(const char *s, size_t n, char buf[SHOW_MAX + 4])
{
	if (n > SHOW_MAX) {
		memcpy(buf, s, SHOW_MAX);
		memcpy(buf + SHOW_MAX, "...", 4);
	} else {
		memcpy(buf, s, n);
		buf[n] = '\0';
	}
	return buf;
}

/* What is at p->text[at], for "found ..." messages. */
static const char *
describe(const struct parser *p, size_t at, char buf[16])
{
	unsigned char c;

	if (at >= p->eol)
		return "end of line";
	c = (unsigned char)p->text[at];
	if (c > 0x20 && c < 0x7f)
		snprintf(buf, 16, "'%c'", c);
	else
		snprintf(buf, 16, "byte 0x%02x", c);
	return buf;
}

static int verr(struct parser *, unsigned, size_t, const char *, va_list)
    __attribute__((format(printf, 4, 0)));
static int perr(struct parser *, size_t, const char *, ...)
    __attribute__((format(printf, 3, 4)));
static int perr_at(struct parser *, unsigned, size_t, const char *, ...)
    __attribute__((format(printf, 4, 5)));

/* Write "FILE:LINE:COL: message"; returns -1. */
static int
verr(struct parser *p, unsigned line, size_t col, const char *fmt,
    va_list ap)
{
	char msg[256];

	if (p->err == NULL || p->errlen == 0)
		return -1;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	snprintf(p->err, p->errlen, "%s:%u:%zu: %s", p->filename, line, col,
	    msg);
	return -1;
}

/* An error at offset 'at' of the current line. */
static int
perr(struct parser *p, size_t at, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(p, p->line, at - p->bol + 1, fmt, ap);
	va_end(ap);
	return -1;
}

/* An error at an earlier place. */
static int
perr_at(struct parser *p, unsigned line, size_t col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(p, line, col, fmt, ap);
	va_end(ap);
	return -1;
}

static char *
dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d != NULL) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static void
skip_ws(struct parser *p)
{
	while (p->pos < p->eol &&
	    (p->text[p->pos] == ' ' || p->text[p->pos] == '\t'))
		p->pos++;
}

static size_t
scan_word(struct parser *p)
{
	size_t start = p->pos;

	while (p->pos < p->eol && is_word((unsigned char)p->text[p->pos]))
		p->pos++;
	return p->pos - start;
}

/*
 * Length of the valid UTF-8 sequence at s (n bytes available) or 0:
 * no overlong forms, surrogates or code points beyond U+10FFFF.
 */
static size_t
utf8_seq(const unsigned char *s, size_t n)
{
	size_t len, i;
	unsigned lo = 0x80, hi = 0xbf;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		if (s[0] == 0xe0)
			lo = 0xa0;
		else if (s[0] == 0xed)
			hi = 0x9f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		if (s[0] == 0xf0)
			lo = 0x90;
		else if (s[0] == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if (s[i] < lo || s[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
	}
	return len;
}

/* ---- event names ------------------------------------------------------ */

/*
 * Event names are checked once all events are in, by sorting them:
 * O(n log n) whatever the names are.  (A hash table would be linear on
 * average, but a hostile client can choose colliding names and make
 * the daemon spend seconds in it.)
 */
struct nref {
	const char	*name;		/* borrowed from the event */
	size_t		 len;
	size_t		 idx;		/* index of the event */
};

/* Compare a[0..n) and b[0..m) ignoring ASCII case, like strcmp. */
static int
name_cmp(const char *a, size_t n, const char *b, size_t m)
{
	size_t i;
	unsigned char x, y;

	for (i = 0; i < n && i < m; i++) {
		x = lower((unsigned char)a[i]);
		y = lower((unsigned char)b[i]);
		if (x != y)
			return x < y ? -1 : 1;
	}
	return n < m ? -1 : n > m;
}

static int
nref_cmp(const void *va, const void *vb)
{
	const struct nref *a = va, *b = vb;
	int c = name_cmp(a->name, a->len, b->name, b->len);

	if (c != 0)
		return c;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* The first event of r[0..n) named s[0..len) ignoring case, or NULL. */
static const struct nref *
nref_find(const struct nref *r, size_t n, const char *s, size_t len)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (name_cmp(s, len, r[mid].name, r[mid].len) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && name_cmp(s, len, r[lo].name, r[lo].len) == 0)
		return &r[lo];
	return NULL;
}

/*
 * Event names must be unique, also ignoring case (the generated
 * TRACE_NAME_ID macros are upper case), and no event may be called
 * like the trace_OTHER_enabled() of another.  Reports the clash whose
 * later event comes first in the file, at that event's name.
 */
static int
check_names(struct parser *p)
{
	static const char sfx[] = "_enabled";
	const size_t sfxlen = sizeof(sfx) - 1;
	const struct tevents_event *ev = p->out->events, *a, *b;
	const struct nref *s;
	struct nref *r;
	size_t n = p->out->nevents, i, run = 0, later;
	size_t bad = SIZE_MAX, other = 0;

	if (n < 2)
		return 0;
	if ((r = malloc(n * sizeof(*r))) == NULL)
		return perr_at(p, ev[n - 1].line, p->cols[n - 1],
		    "out of memory");
	for (i = 0; i < n; i++) {
		r[i].name = ev[i].name;
		r[i].len = strlen(ev[i].name);
		r[i].idx = i;
	}
	qsort(r, n, sizeof(*r), nref_cmp);
	/* Equal names are adjacent, the first in the file leading. */
	for (i = 1; i < n; i++) {
		if (name_cmp(r[i].name, r[i].len, r[run].name,
		    r[run].len) != 0) {
			run = i;
			continue;
		}
		if (r[i].idx < bad) {
			bad = r[i].idx;
			other = r[run].idx;
		}
	}
	for (i = 0; i < n; i++) {
		if (r[i].len <= sfxlen || name_cmp(r[i].name + r[i].len -
		    sfxlen, sfxlen, sfx, sfxlen) != 0)
			continue;
		if ((s = nref_find(r, n, r[i].name,
		    r[i].len - sfxlen)) == NULL)
			continue;
		later = r[i].idx > s->idx ? r[i].idx : s->idx;
		if (later < bad) {
			bad = later;
			other = r[i].idx + s->idx - later;
		}
	}
	free(r);
	if (bad == SIZE_MAX)
		return 0;

	a = &ev[bad];
	b = &ev[other];
	if (strcmp(a->name, b->name) == 0)
		return perr_at(p, a->line, p->cols[bad], "duplicate event "
		    "name '%s' (first declared on line %u)", a->name, b->line);
	if (strlen(a->name) == strlen(b->name))
		return perr_at(p, a->line, p->cols[bad], "event name '%s' "
		    "differs only in case from '%s' (line %u)", a->name,
		    b->name, b->line);
	if (strlen(a->name) > strlen(b->name))
		return perr_at(p, a->line, p->cols[bad], "event name '%s' "
		    "clashes with trace_%s_enabled() of event '%s' "
		    "(line %u)", a->name, b->name, b->name, b->line);
	return perr_at(p, a->line, p->cols[bad], "event name '%s' makes "
	    "trace_%s_enabled() clash with event '%s' (line %u)", a->name,
	    a->name, b->name, b->line);
}

/* ---- arguments -------------------------------------------------------- */

/* Normalized type of toks[0..n) into buf: "const char *", "void **". */
static int
type_normalize(struct parser *p, const struct tok *toks, size_t n,
    char buf[TEVENTS_TYPE_MAX + 1])
{
	size_t i, len = 0, need;

	for (i = 0; i < n; i++) {
		/* A space between words and before the first '*' of a
		 * run; "**" stays together. */
		need = toks[i].len + (i > 0 && !toks[i - 1].star);
		if (len + need > TEVENTS_TYPE_MAX)
			return perr(p, toks[0].pos, "argument type too long "
			    "(max %d bytes)", TEVENTS_TYPE_MAX);
		if (i > 0 && !toks[i - 1].star)
			buf[len++] = ' ';
		memcpy(buf + len, p->text + toks[i].pos, toks[i].len);
		len += toks[i].len;
	}
	buf[len] = '\0';
	return 0;
}

/* The integer typedef 's[0..n)' in known_types, or NULL. */
static const struct known_type *
known_type(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof(known_types) / sizeof(known_types[0]); i++)
		if (word_is(s, n, known_types[i].name))
			return &known_types[i];
	return NULL;
}

static int
is_int_word(const char *s, size_t n)
{
	return word_is(s, n, "signed") || word_is(s, n, "unsigned") ||
	    word_is(s, n, "char") || word_is(s, n, "short") ||
	    word_is(s, n, "int") || word_is(s, n, "long");
}

/* The known type word closest to s[0..n), if it is close; else NULL. */
static const char *
suggest_type(const char *s, size_t n)
{
	static const char *const ints[] = {
		"signed", "unsigned", "char", "short", "int", "long", "void",
	};
	const size_t nk = sizeof(known_types) / sizeof(known_types[0]);
	const char *best = NULL, *c;
	size_t i, d, bestd = n < 5 ? 1 : 2;

	for (i = 0; i < nk + sizeof(ints) / sizeof(ints[0]); i++) {
		c = i < nk ? known_types[i].name : ints[i - nk];
		d = text_distance(s, n, c, bestd);
		/* The closest; of equals, one with the same first letter. */
		if (d > bestd || (best != NULL && d == bestd &&
		    (best[0] == s[0] || c[0] != s[0])))
			continue;
		best = c;
		bestd = d;
	}
	return best;
}

/*
 * Classify the type toks[0..n) (the argument's tokens but its name) as
 * a record class, or report why it cannot be traced and what to write
 * instead.  The words allowed are QEMU's tracetool's (the C integer
 * keywords, bool, void, const and its fixed-size typedefs) and the
 * other integer typedefs of known_types, all declared by the headers
 * the generated trace.h includes.  'type' is the normalized text and
 * 'name' the argument name, for messages.
 */
static int
type_classify(struct parser *p, const struct tok *toks, size_t n,
    const char *type, const char *name, enum tevents_class *cls)
{
	const struct known_type *kt = NULL;
	const struct tok *base[TOKS_MAX], *t;
	const char *w, *sug;
	size_t i, nbase = 0, nstar = 0, nconst = 0;
	unsigned nsigned = 0, nunsigned = 0, nchar = 0, nshort = 0;
	unsigned nint = 0, nlong = 0;
	char buf[SHOW_MAX + 4];

	for (i = 0; i < n; i++) {
		t = &toks[i];
		w = p->text + t->pos;
		if (t->star) {
			nstar++;
			continue;
		}
		if (nstar > 0) {
			if (word_is(w, t->len, "const"))
				return perr(p, t->pos, "'const' after '*' is "
				    "not allowed (QEMU's tracetool refuses "
				    "it): remove it, as in 'const char *%s'",
				    name);
			return perr(p, t->pos, "unexpected '%s' after '*' in "
			    "argument type", show(w, t->len, buf));
		}
		if (word_is(w, t->len, "const")) {
			if (++nconst > 1)
				return perr(p, t->pos, "duplicate 'const'");
			continue;
		}
		if (word_is(w, t->len, "volatile") ||
		    word_is(w, t->len, "restrict"))
			return perr(p, t->pos, "'%.*s' is not allowed in an "
			    "argument type (QEMU's tracetool refuses it): "
			    "remove it", (int)t->len, w);
		base[nbase++] = t;
	}
	if (nbase == 0)
		return perr(p, toks[0].pos, toks[0].star ? "expected a type "
		    "before '*'" : "argument '%s' has no type", name);

	/* One word: a keyword or a typedef. */
	w = p->text + base[0]->pos;
	if (nbase == 1 && !is_int_word(w, base[0]->len)) {
		if (word_is(w, base[0]->len, "void")) {
			if (nstar == 0)
				return perr(p, toks[0].pos, "argument '%s' "
				    "cannot have type 'void'", name);
			*cls = TEVENTS_POINTER;
			return 0;
		}
		if (word_is(w, base[0]->len, "float") ||
		    word_is(w, base[0]->len, "double"))
			return perr(p, toks[0].pos, "argument type '%s' is "
			    "not supported: only integers, bool, pointers and "
			    "strings can be traced; pass the value scaled to "
			    "an integer", type);
		if (word_is(w, base[0]->len, "struct") ||
		    word_is(w, base[0]->len, "union") ||
		    word_is(w, base[0]->len, "enum"))
			return perr(p, base[0]->pos, "expected a tag after "
			    "'%.*s'", (int)base[0]->len, w);
		if ((kt = known_type(w, base[0]->len)) == NULL) {
			if (in_list(c_keywords, w, base[0]->len) ||
			    is_digit((unsigned char)*w))
				return perr(p, toks[0].pos, "invalid type '%s'",
				    type);
			sug = suggest_type(w, base[0]->len);
			if (sug != NULL)
				return perr(p, base[0]->pos, "unknown type "
				    "'%s': did you mean '%s'?",
				    show(w, base[0]->len, buf), sug);
			return perr(p, base[0]->pos, "unknown type '%s': an "
			    "argument is a C integer type (int, uint64_t, "
			    "size_t...; see trace-events(5)), bool, "
			    "'const char *' or a pointer, declared as "
			    "'void *'", show(w, base[0]->len, buf));
		}
	} else if (nbase == 2 && (word_is(w, base[0]->len, "struct") ||
	    word_is(w, base[0]->len, "union") ||
	    word_is(w, base[0]->len, "enum"))) {
		t = base[1];
		if (is_digit((unsigned char)p->text[t->pos]) ||
		    in_list(c_keywords, p->text + t->pos, t->len))
			return perr(p, toks[0].pos, "invalid type '%s'", type);
		if (word_is(w, base[0]->len, "enum"))
			return perr(p, toks[0].pos, "argument type '%s' is not "
			    "allowed (QEMU's tracetool refuses it): pass the "
			    "value as an integer type such as 'int'", type);
		return perr(p, toks[0].pos, "argument type '%s' is not allowed "
		    "(QEMU's tracetool refuses it): %s", type, nstar > 0 ?
		    "declare the pointer as 'void *'" : "pass a pointer to it, "
		    "declared as 'void *'");
	} else {
		/* Integer keywords only, in a valid combination. */
		for (i = 0; i < nbase; i++) {
			w = p->text + base[i]->pos;
			if (word_is(w, base[i]->len, "double") && nbase == 2)
				return perr(p, toks[0].pos, "argument type '%s' "
				    "is not supported: only integers, bool, "
				    "pointers and strings can be traced", type);
			if (!is_int_word(w, base[i]->len))
				return perr(p, toks[0].pos, "invalid type '%s'",
				    type);
			nsigned += word_is(w, base[i]->len, "signed");
			nunsigned += word_is(w, base[i]->len, "unsigned");
			nchar += word_is(w, base[i]->len, "char");
			nshort += word_is(w, base[i]->len, "short");
			nint += word_is(w, base[i]->len, "int");
			nlong += word_is(w, base[i]->len, "long");
		}
		if (nsigned + nunsigned > 1 || nchar > 1 || nshort > 1 ||
		    nint > 1 || nlong > 2 ||
		    (nchar && (nshort || nint || nlong)) || (nshort && nlong))
			return perr(p, toks[0].pos, "invalid type '%s'", type);
	}

	if (nstar > 0) {
		/* 'char *' and 'const char *' are strings; 'signed char *',
		 * 'unsigned char *' and 'char **' are pointers. */
		*cls = nstar == 1 && kt == NULL && nchar == 1 && nbase == 1 ?
		    TEVENTS_STRING : TEVENTS_POINTER;
		return 0;
	}
	if (kt != NULL)
		*cls = kt->cls;
	else
		*cls = nunsigned ? TEVENTS_UNSIGNED : TEVENTS_SIGNED;
	return 0;
}

/* Does toks[0] alone look like a type (so 'f(int)' lacks a name)? */
static int
looks_like_type(const struct parser *p, const struct tok *t)
{
	const char *w = p->text + t->pos;

	return in_list(c_keywords, w, t->len) || known_type(w, t->len) ||
	    (t->len > 2 && word_is(w + t->len - 2, 2, "_t"));
}

/*
 * Turn the tokens of one argument into ev->args[ev->nargs]; the caller
 * counts it.  On error nothing is left allocated.
 */
static int
parse_arg(struct parser *p, const struct tok *toks, size_t n,
    struct tevents_event *ev)
{
	struct tevents_arg *a = &ev->args[ev->nargs];
	const struct tok *nt = &toks[n - 1];
	const char *name = p->text + nt->pos;
	char type[TEVENTS_TYPE_MAX + 1], buf[SHOW_MAX + 4];
	enum tevents_class cls = TEVENTS_UNSIGNED;
	unsigned i;

	if (nt->star) {
		if (type_normalize(p, toks, n, type) < 0)
			return -1;
		return perr(p, nt->pos + 1, "missing argument name after "
		    "type '%s'", type);
	}
	if (n == 1) {
		if (looks_like_type(p, nt))
			return perr(p, nt->pos, "argument of type '%s' has no "
			    "name", show(name, nt->len, buf));
		return perr(p, nt->pos, "argument '%s' has no type",
		    show(name, nt->len, buf));
	}
	if (is_digit((unsigned char)name[0]))
		return perr(p, nt->pos, "invalid argument name '%s': not a C "
		    "identifier", show(name, nt->len, buf));
	if (nt->len > TEVENTS_NAME_MAX)
		return perr(p, nt->pos, "argument name too long (%zu bytes, "
		    "max %d)", nt->len, TEVENTS_NAME_MAX);
	if (in_list(c_keywords, name, nt->len))
		return perr(p, nt->pos, "argument name '%.*s' is a C keyword: "
		    "rename the argument", (int)nt->len, name);
	for (i = 0; i < ev->nargs; i++)
		if (word_is(name, nt->len, ev->args[i].name))
			return perr(p, nt->pos, "duplicate argument name "
			    "'%.*s'%s", (int)nt->len, name, i == 0 &&
			    ev->vcpu ? " (the vcpu property adds an argument "
			    "of that name): rename it" : "");
	if (type_normalize(p, toks, n - 1, type) < 0)
		return -1;
	if (type_classify(p, toks, n - 1, type,
	    show(name, nt->len, buf), &cls) < 0)
		return -1;
	a->cls = cls;
	a->type = strdup(type);
	a->name = dup_n(name, nt->len);
	if (a->type == NULL || a->name == NULL) {
		free(a->type);
		free(a->name);
		a->type = a->name = NULL;
		return perr(p, toks[0].pos, "out of memory");
	}
	return 0;
}

/* The implicit first argument of a 'vcpu' event. */
static int
add_vcpu_arg(struct parser *p, struct tevents_event *ev)
{
	struct tevents_arg *a = &ev->args[0];

	a->cls = TEVENTS_POINTER;
	a->type = strdup("void *");
	a->name = strdup(TEVENTS_VCPU_ARG);
	if (a->type == NULL || a->name == NULL) {
		free(a->type);
		free(a->name);
		a->type = a->name = NULL;
		return perr(p, p->pos, "out of memory");
	}
	ev->nargs = 1;
	return 0;
}

/* The argument list, from after '(' to after ')'. */
static int
parse_args(struct parser *p, struct tevents_event *ev, size_t open)
{
	struct tok toks[TOKS_MAX];
	size_t ntok, argpos;
	char c, buf[16];
	int comma = 0;

	if (ev->vcpu && add_vcpu_arg(p, ev) < 0)
		return -1;
	for (;;) {
		ntok = 0;
		skip_ws(p);
		argpos = p->pos;
		for (;;) {
			skip_ws(p);
			if (p->pos >= p->eol)
				return perr(p, p->pos, "expected ')' after "
				    "argument list");
			c = p->text[p->pos];
			if (c == ',' || c == ')')
				break;
			if (c == '"')
				return perr(p, p->pos, "expected ')' after "
				    "argument list, found '\"'");
			if (c != '*' && !is_word((unsigned char)c))
				return perr(p, p->pos, "unexpected %s in "
				    "argument list", describe(p, p->pos, buf));
			if (ntok == TOKS_MAX)
				return perr(p, argpos, "argument type too long "
				    "(max %d bytes)", TEVENTS_TYPE_MAX);
			toks[ntok].pos = p->pos;
			toks[ntok].star = c == '*';
			if (c == '*')
				p->pos++;
			else
				scan_word(p);
			toks[ntok].len = p->pos - toks[ntok].pos;
			ntok++;
		}
		if (ntok == 0) {
			if (c == ')' && ev->nargs == ev->vcpu && !comma)
				return perr(p, open, "empty argument list: "
				    "write '%s(void)' for an event without "
				    "arguments (QEMU's tracetool refuses '()')",
				    ev->name);
			return perr(p, p->pos, "expected an argument before "
			    "'%c'", c);
		}
		if (ntok == 1 && !toks[0].star &&
		    word_is(p->text + toks[0].pos, toks[0].len, "void")) {
			if (c == ')' && ev->nargs == ev->vcpu && !comma) {
				p->pos++;
				break;
			}
			return perr(p, toks[0].pos, "'void' must be the only "
			    "parameter");
		}
		if (ev->nargs - ev->vcpu == TEVENTS_DECL_ARGS_MAX)
			return perr(p, argpos, "too many arguments (max %d, "
			    "as in QEMU's tracetool): split the event in two",
			    TEVENTS_DECL_ARGS_MAX);
		if (parse_arg(p, toks, ntok, ev) < 0)
			return -1;
		ev->nargs++;
		p->pos++;
		if (c == ')')
			break;
		comma = 1;
	}
	return 0;
}

/* ---- format ----------------------------------------------------------- */

/* A string literal at p->pos, checked byte by byte; cursor after it. */
static int
scan_literal(struct parser *p)
{
	const unsigned char *t = (const unsigned char *)p->text;
	size_t start = p->pos, n;

	for (p->pos++; p->pos < p->eol; p->pos++) {
		if (t[p->pos] == '"') {
			p->pos++;
			return 0;
		}
		if (t[p->pos] == '\\') {
			if (p->pos + 1 >= p->eol)
				break;
			p->pos++;
		}
		if ((t[p->pos] < 0x20 && t[p->pos] != '\t') ||
		    t[p->pos] == 0x7f)
			return perr(p, p->pos, "control character "
			    "(byte 0x%02x) in string literal", t[p->pos]);
		if (t[p->pos] >= 0x80) {
			n = utf8_seq(t + p->pos, p->eol - p->pos);
			if (n == 0)
				return perr(p, p->pos, "invalid UTF-8 in "
				    "string literal");
			p->pos += n - 1;
		}
	}
	return perr(p, start, "unterminated string literal");
}

/*
 * Is s[0..n) one of <inttypes.h>'s printf macros, PRI + d, i, o, u, x
 * or X + 8, 16, 32, 64, LEAST8..64, FAST8..64, MAX or PTR?
 */
static int
is_pri_macro(const char *s, size_t n)
{
	static const char *const sizes[] = {
		"8", "16", "32", "64", "LEAST8", "LEAST16", "LEAST32",
		"LEAST64", "FAST8", "FAST16", "FAST32", "FAST64", "MAX", "PTR",
		NULL
	};

	if (n < 5 || strncmp(s, "PRI", 3) != 0 ||
	    strchr("diouxX", s[3]) == NULL)
		return 0;
	return in_list(sizes, s + 4, n - 4);
}

/* printf's conversion scanner, fed one character (or macro) at a time. */
struct conv {
	int		 state;		/* 0 text, 1 after '%', 2 in a spec */
	size_t		 pct;		/* offset of the spec's '%' */
};

/* Feed character c from text offset 'at'; -1 if it completes a %m. */
static int
conv_feed(struct conv *cv, unsigned char c, size_t at)
{
	switch (cv->state) {
	case 0:
		if (c == '%') {
			cv->state = 1;
			cv->pct = at;
		}
		return 0;
	case 1:
		if (c == '%') {
			cv->state = 0;
			return 0;
		}
		cv->state = 2;
		/* FALLTHROUGH */
	default:
		if (strchr("-+ #0'123456789.*hlLqjzZtI", c) != NULL && c != 0)
			return 0;
		cv->state = 0;
		return c == 'm' ? -1 : 0;
	}
}

/*
 * Check the format tokens in text[start..end): no %m conversion (it
 * prints errno as it is when printed, not when traced) and, for the
 * format that is printed ('last'), no newline at its end.
 */
static int
check_format(struct parser *p, size_t start, size_t end, int last)
{
	const unsigned char *t = (const unsigned char *)p->text;
	struct conv cv = { 0, 0 };
	size_t i, at, nl_at = SIZE_MAX;
	unsigned v, k;
	int lit_last = 0;

	for (i = start; i < end; ) {
		if (t[i] == ' ' || t[i] == '\t') {
			i++;
			continue;
		}
		if (t[i] != '"') {
			/* A PRI macro: length and conversion in one. */
			while (i < end && is_word(t[i]))
				i++;
			if (cv.state != 0)
				cv.state = 0;
			lit_last = 0;
			continue;
		}
		nl_at = SIZE_MAX;
		for (i++; t[i] != '"'; ) {
			at = i;
			v = t[i++];
			if (v == '\\') {
				v = t[i++];
				if (v >= '0' && v <= '7') {
					v -= '0';
					for (k = 0; k < 2 && t[i] >= '0' &&
					    t[i] <= '7'; k++)
						v = v * 8 + (t[i++] - '0');
				} else if (v == 'x') {
					for (v = 0; isxdigit_(t[i]); i++)
						v = (v * 16 + hexval(t[i])) &
						    0xff;
				} else if (v == 'n')
					v = '\n';
			}
			nl_at = v == '\n' ? at : SIZE_MAX;
			if (conv_feed(&cv, (unsigned char)v, at) < 0)
				return perr(p, cv.pct, "format uses '%%m', "
				    "which prints errno when the event is "
				    "printed, not when it happened (QEMU's "
				    "tracetool refuses it): pass the error as "
				    "an argument");
		}
		i++;
		lit_last = 1;
	}
	if (last && lit_last && nl_at != SIZE_MAX)
		return perr(p, nl_at, "format ends with a newline (QEMU's "
		    "tracetool refuses it): remove the '\\n', every event "
		    "is printed on a line of its own");
	return 0;
}

/*
 * One format at p->pos, which is a '"': string literals and PRI macros,
 * up to a ',' or the end of the line.  Its tokens are stored in
 * fmt[0..*len) with one space between them.
 */
static int
parse_one_format(struct parser *p, char fmt[TEVENTS_FMT_MAX + 1],
    size_t *len)
{
	char buf[SHOW_MAX + 4], dbuf[16];
	size_t start, n;
	int ntok = 0;

	*len = 0;
	for (;;) {
		skip_ws(p);
		if (p->pos >= p->eol || p->text[p->pos] == ',')
			break;
		start = p->pos;
		if (p->text[p->pos] == '"') {
			if (scan_literal(p) < 0)
				return -1;
		} else if (is_word((unsigned char)p->text[p->pos])) {
			if (is_digit((unsigned char)p->text[p->pos]))
				return perr(p, p->pos, "unexpected number in "
				    "format");
			n = scan_word(p);
			if (!is_pri_macro(p->text + start, n))
				return perr(p, start, "unknown macro '%s' in "
				    "format: only the PRI* macros of "
				    "<inttypes.h> (PRIx64...) may join the "
				    "string literals; write the conversion in "
				    "a literal", show(p->text + start, n, buf));
		} else
			return perr(p, p->pos, "unexpected %s in format; "
			    "expected a string literal or a macro such as "
			    "PRIx64", describe(p, p->pos, dbuf));
		n = p->pos - start;
		if (*len + (ntok > 0) + n > TEVENTS_FMT_MAX)
			return perr(p, start, "format too long (max %d bytes)",
			    TEVENTS_FMT_MAX);
		if (ntok++ > 0)
			fmt[(*len)++] = ' ';
		memcpy(fmt + *len, p->text + start, n);
		*len += n;
	}
	fmt[*len] = '\0';
	return 0;
}

/*
 * The format after ')': nothing, one format, or two separated by a
 * comma (QEMU's "fmt_trans", "fmt"; the second is the one printed).
 */
static int
parse_format(struct parser *p, struct tevents_event *ev)
{
	char fmt[TEVENTS_FMT_MAX + 1], buf[16];
	size_t len, start, second = 0, end1 = 0;

	skip_ws(p);
	if (p->pos >= p->eol) {
		if ((ev->fmt = strdup("")) == NULL)
			return perr(p, p->pos, "out of memory");
		return 0;
	}
	if (p->text[p->pos] != '"')
		return perr(p, p->pos, "expected a format string after ')', "
		    "found %s; quote the format or remove what follows ')'",
		    describe(p, p->pos, buf));
	start = p->pos;
	if (parse_one_format(p, fmt, &len) < 0)
		return -1;
	if (p->pos < p->eol) {
		/* A ',': this was the translation-time format. */
		end1 = p->pos;
		if ((ev->fmt_trans = dup_n(fmt, len)) == NULL)
			return perr(p, p->pos, "out of memory");
		p->pos++;
		skip_ws(p);
		if (p->pos >= p->eol || p->text[p->pos] != '"')
			return perr(p, p->pos, "expected a second format "
			    "string after ',', found %s",
			    describe(p, p->pos, buf));
		second = p->pos;
		if (parse_one_format(p, fmt, &len) < 0)
			return -1;
		if (p->pos < p->eol)
			return perr(p, p->pos, "more than two formats: an "
			    "event has a format, or a translation-time and an "
			    "execution-time one separated by a comma");
		if (check_format(p, start, end1, 0) < 0 ||
		    check_format(p, second, p->eol, 1) < 0)
			return -1;
	} else if (check_format(p, start, p->eol, 1) < 0)
		return -1;
	if ((ev->fmt = dup_n(fmt, len)) == NULL)
		return perr(p, p->pos, "out of memory");
	return 0;
}

/* ---- events ----------------------------------------------------------- */

static void
event_clear(struct tevents_event *ev)
{
	unsigned i;

	for (i = 0; i < ev->nargs; i++) {
		free(ev->args[i].type);
		free(ev->args[i].name);
	}
	free(ev->name);
	free(ev->fmt);
	free(ev->fmt_trans);
	memset(ev, 0, sizeof(*ev));
}

/* Properties, name, arguments and format of the event line at p->pos. */
static int
parse_event(struct parser *p, struct tevents_event *ev)
{
	size_t wpos, wlen;
	char buf[SHOW_MAX + 4], dbuf[16];
	const char *w;

	for (;;) {
		if (p->pos >= p->eol ||
		    !is_word((unsigned char)p->text[p->pos]))
			return perr(p, p->pos, "expected an event name, found "
			    "%s", describe(p, p->pos, dbuf));
		wpos = p->pos;
		wlen = scan_word(p);
		w = p->text + wpos;
		if (p->pos < p->eol && p->text[p->pos] == '(')
			break;
		skip_ws(p);
		if (p->pos < p->eol && p->text[p->pos] == '(')
			return perr(p, wpos + wlen, "space between the event "
			    "name and '(' (QEMU's tracetool refuses it): "
			    "write '%s('", show(w, wlen, buf));
		if (p->pos >= p->eol ||
		    !is_word((unsigned char)p->text[p->pos]))
			return perr(p, p->pos, "expected '(' after event name "
			    "'%s', found %s", show(w, wlen, buf),
			    describe(p, p->pos, dbuf));
		/* A word followed by a word: a property. */
		if (word_is(w, wlen, "disable"))
			ev->disabled = 1;
		else if (word_is(w, wlen, "vcpu"))
			ev->vcpu = 1;
		else
			return perr(p, wpos, "unknown property '%s': the "
			    "properties are 'disable' and 'vcpu'",
			    show(w, wlen, buf));
	}
	if (is_digit((unsigned char)w[0]))
		return perr(p, wpos, "invalid event name '%s': not a C "
		    "identifier", show(w, wlen, buf));
	if (wlen > TEVENTS_NAME_MAX)
		return perr(p, wpos, "event name too long (%zu bytes, max %d)",
		    wlen, TEVENTS_NAME_MAX);
	p->namecol = wpos - p->bol + 1;
	if ((ev->name = dup_n(w, wlen)) == NULL)
		return perr(p, wpos, "out of memory");
	ev->line = p->line;
	p->pos++;
	if (parse_args(p, ev, wpos + wlen) < 0 || parse_format(p, ev) < 0)
		return -1;
	return 0;
}

static int
add_event(struct parser *p, struct tevents_event *ev)
{
	struct tevents_file *f = p->out;
	struct tevents_event *ne;
	size_t ncap, *nc;

	if (f->nevents == p->cap) {
		ncap = p->cap == 0 ? 16 : 2 * p->cap;
		if ((ne = realloc(f->events, ncap * sizeof(*ne))) == NULL)
			return perr(p, p->bol, "out of memory");
		f->events = ne;
		if ((nc = realloc(p->cols, ncap * sizeof(*nc))) == NULL)
			return perr(p, p->bol, "out of memory");
		p->cols = nc;
		p->cap = ncap;
	}
	p->cols[f->nevents] = p->namecol;
	f->events[f->nevents++] = *ev;
	memset(ev, 0, sizeof(*ev));
	return 0;
}

int
tevents_parse(const char *text, size_t len, const char *filename,
    struct tevents_file *out, char *err, size_t errlen)
{
	struct parser p;
	struct tevents_event ev;
	const char *nl, *nul;
	size_t next, lastbol = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	memset(&p, 0, sizeof(p));
	memset(&ev, 0, sizeof(ev));
	p.text = text;
	p.len = text == NULL ? 0 : len;
	p.filename = filename != NULL ? filename : "<input>";
	p.err = err;
	p.errlen = errlen;
	p.out = out;
	if (err != NULL && errlen > 0)
		err[0] = '\0';

	for (p.line = 1; p.bol < p.len; p.line++, p.bol = next) {
		if (p.line == UINT_MAX) {
			rc = perr(&p, p.bol, "too many lines");
			break;
		}
		lastbol = p.bol;
		nl = memchr(text + p.bol, '\n', p.len - p.bol);
		p.eol = nl != NULL ? (size_t)(nl - text) : p.len;
		next = nl != NULL ? p.eol + 1 : p.len;
		if ((nul = memchr(text + p.bol, '\0', p.eol - p.bol)) != NULL) {
			rc = perr(&p, (size_t)(nul - text),
			    "NUL byte in input");
			break;
		}
		if (p.eol > p.bol && text[p.eol - 1] == '\r')
			p.eol--;
		p.pos = p.bol;
		skip_ws(&p);
		if (p.pos == p.eol || text[p.pos] == '#')
			continue;
		if (out->nevents == TEVENTS_EVENTS_MAX) {
			rc = perr(&p, p.pos, "too many events (max %u)",
			    TEVENTS_EVENTS_MAX);
			break;
		}
		if (parse_event(&p, &ev) < 0 || add_event(&p, &ev) < 0) {
			rc = -1;
			break;
		}
	}
	/*
	 * The events before an error are complete: a clash among them
	 * comes earlier in the file than the error, so it wins.
	 */
	if (check_names(&p) < 0)
		rc = -1;
	else if (rc == 0 && p.len > 0 && text[p.len - 1] != '\n') {
		/* The loop ended on the last line, unterminated. */
		p.line--;
		p.bol = lastbol;
		rc = perr(&p, p.len, "no newline at the end of the file "
		    "(QEMU's tracetool refuses it): add one");
	}
	event_clear(&ev);
	free(p.cols);
	if (rc < 0)
		tevents_free(out);
	return rc;
}

void
tevents_free(struct tevents_file *f)
{
	size_t i;

	if (f == NULL)
		return;
	for (i = 0; i < f->nevents; i++)
		event_clear(&f->events[i]);
	free(f->events);
	f->events = NULL;
	f->nevents = 0;
}

/* ---- formatting --------------------------------------------------------- */

struct sbuf {
	char		*buf;		/* borrowed, size bytes */
	size_t		 size;
	size_t		 len;		/* bytes needed so far */
};

static void
sbuf_put(struct sbuf *b, const char *s)
{
	size_t n = strlen(s), room;

	if (b->len < b->size) {
		room = b->size - 1 - b->len;
		memcpy(b->buf + b->len, s, n < room ? n : room);
	}
	b->len += n;
}

int
tevents_format(const struct tevents_event *ev, char *buf, size_t size)
{
	struct sbuf b = { buf, buf == NULL ? 0 : size, 0 };
	const char *t;
	unsigned i;

	if (ev->disabled)
		sbuf_put(&b, "disable ");
	if (ev->vcpu)
		sbuf_put(&b, "vcpu ");
	sbuf_put(&b, ev->name);
	sbuf_put(&b, "(");
	if (ev->nargs == ev->vcpu)
		sbuf_put(&b, "void");
	for (i = ev->vcpu; i < ev->nargs; i++) {
		t = ev->args[i].type;
		if (i > ev->vcpu)
			sbuf_put(&b, ", ");
		sbuf_put(&b, t);
		if (t[0] == '\0' || t[strlen(t) - 1] != '*')
			sbuf_put(&b, " ");
		sbuf_put(&b, ev->args[i].name);
	}
	sbuf_put(&b, ")");
	if (ev->fmt_trans != NULL) {
		sbuf_put(&b, " ");
		sbuf_put(&b, ev->fmt_trans);
		sbuf_put(&b, ",");
	}
	if (ev->fmt[0] != '\0') {
		sbuf_put(&b, " ");
		sbuf_put(&b, ev->fmt);
	}
	sbuf_put(&b, "\n");
	if (b.size > 0)
		b.buf[b.len < b.size ? b.len : b.size - 1] = '\0';
	return b.len > INT_MAX ? INT_MAX : (int)b.len;
}
