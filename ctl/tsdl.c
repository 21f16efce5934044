/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The TSDL parser of the trace directory reader: it turns the metadata
 * text daemon/ctf.c writes into a struct tracedir_meta, the layouts the
 * stream walk (tracedir-stream.c) then checks every byte against.  Its
 * entry points are tracedir_meta_parse() and tracedir_meta_free()
 * (tracedir.h).
 *
 * The parser is a small lexer (identifiers, numbers, string literals
 * with C escapes, punctuation, comments) under a recursive-descent
 * parser of the subset of TSDL our writer uses: typealiases of
 * integers, the trace, env, clock and stream blocks, and event blocks
 * whose fields are integers or strings.  Anything else is refused with
 * "FILE:LINE: what" rather than guessed at: the reader only has to read
 * our own traces, and a construct it does not know is more likely a
 * corrupt or foreign file than a trace it would decode right.  The
 * layouts of the packet header, packet context and event header are
 * taken from the metadata, not hard-coded, so that a reader and a writer
 * that disagree fail loudly; the fields the walk needs (magic, uuid,
 * sizes, timestamps, id...) must be there with the right types, and a
 * traced:lost event must have the fields of proto's cause table.  So
 * must traced:crash have those of struct traced_crash.
 *
 * A comment in an event block may carry the event's trace-events line
 * (td_note()); it is parsed with proto/tevents.c and believed only when
 * it matches the event's fields.
 *
 * No I/O, no global state; the parser allocates in proportion to the
 * text, with fixed limits on names, fields and classes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cause.h"
#include "ring.h"
#include "tevents.h"
#include "tracedir.h"

#define TD_ALIASES_MAX		64
#define TD_ARRAY_MAX		256
#define TD_SIGNATURE		"/* CTF 1.8 */"
/* The comment daemon/ctf.c puts in an event block (see td_note()). */
#define TD_NOTE_MARK		" trace-events: \""
#define TD_NOTE_MAX		(16u << 10)

enum td_tok {
	TK_EOF,
	TK_IDENT,
	TK_NUM,
	TK_STR,
	TK_PUNCT,
};

struct td_alias {
	char			 name[TRACEDIR_NAME_MAX + 1];
	struct tracedir_type	 type;
};

/* The parser: lexer position, the current token, what was declared. */
struct td_parser {
	const char	*p;		/* next byte of the text */
	const char	*end;
	unsigned	 line;		/* of p */
	const char	*file;		/* for messages */
	char		*err;
	size_t		 errlen;
	int		 failed;

	enum td_tok	 tok;		/* the current token (lookahead) */
	unsigned	 tline;		/* its line */
	char		 text[TRACEDIR_NAME_MAX + 1]; /* identifier, decoded
					   string or punctuation */
	size_t		 tlen;
	uint64_t	 num;

	struct tracedir_meta *m;
	struct td_alias	*aliases;	/* owned, TD_ALIASES_MAX */
	unsigned	 naliases;
	size_t		 classes_cap;
	unsigned	 trace_line;	/* 0 until the block is seen */
	unsigned	 clock_line;
	unsigned	 stream_line;
	char		*note;		/* owned: the last trace-events
					   comment, decoded, or NULL */
	unsigned	 note_line;
};

/* A value on the right of '='. */
struct td_val {
	enum td_tok	 kind;		/* TK_NUM, TK_STR or TK_IDENT */
	uint64_t	 num;		/* magnitude */
	int		 neg;		/* '-' before the number */
	char		 text[TRACEDIR_NAME_MAX + 1]; /* string or
					   (dotted) identifier */
};

static int	td_perr(struct td_parser *, unsigned, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

/*
 * Record the first error as "FILE:LINE: message".  Returns -1, for
 * 'return td_perr(...)'.
 */
static int
td_perr(struct td_parser *P, unsigned line, const char *fmt, ...)
{
	char	msg[TRACEDIR_ERR_MAX];
	va_list	ap;

	if (P->failed)
		return -1;
	P->failed = 1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (P->err != NULL && P->errlen > 0)
		snprintf(P->err, P->errlen, "%s:%u: %s", P->file, line, msg);
	return -1;
}

/* ---- lexer ------------------------------------------------------------- */

static int
td_isalpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int
td_isdigit(int c)
{
	return c >= '0' && c <= '9';
}

static int
td_digit(int c, unsigned base)
{
	int	 v;

	if (c >= '0' && c <= '9')
		v = c - '0';
	else if (c >= 'a' && c <= 'f')
		v = c - 'a' + 10;
	else if (c >= 'A' && c <= 'F')
		v = c - 'A' + 10;
	else
		return -1;
	return v < (int)base ? v : -1;
}

static int	td_lex_escape(struct td_parser *);

/*
 * A comment ' trace-events: "LINE" ' (from the opening quote on in
 * [p, end)) carries the trace-events declaration of the event block it
 * is in, as a string literal: the event's argument types and format
 * string, which CTF has no attribute for (babeltrace2 warns about
 * unknown ones) and every CTF reader skips as a comment.  Decode it
 * into P->note.  A note that does not decode is dropped: it is an
 * extra, and the trace reads without it.
 */
static void
td_note(struct td_parser *P, const char *p, const char *end, unsigned line)
{
	const char	*save = P->p;
	char		*buf;
	size_t		 n = 0;
	int		 c;

	free(P->note);
	P->note = NULL;
	if ((buf = malloc(TD_NOTE_MAX + 2)) == NULL)
		return;
	P->p = p;
	for (;;) {
		if (P->p >= end || *P->p == '\n')
			goto bad;
		c = (unsigned char)*P->p++;
		if (c == '"')
			break;
		if (c == '\\') {
			/* td_lex_escape() reads at most 3 bytes: stay
			 * inside the comment. */
			if (end - P->p < 1 || (c = td_lex_escape(P)) <= 0 ||
			    P->p > end)
				goto bad;
		}
		if (n == TD_NOTE_MAX)
			goto bad;
		buf[n++] = (char)c;
	}
	buf[n++] = '\n';
	buf[n] = '\0';
	P->p = save;
	P->note = buf;
	P->note_line = line;
	return;
bad:
	P->p = save;
	free(buf);
}

/* Skip blanks and comments, counting lines.  Returns 0 or -1. */
static int
td_skip(struct td_parser *P)
{
	const char	*q;
	unsigned	 start;

	while (P->p < P->end) {
		if (*P->p == '\n') {
			P->line++;
			P->p++;
		} else if (*P->p == ' ' || *P->p == '\t' || *P->p == '\r' ||
		    *P->p == '\f' || *P->p == '\v')
			P->p++;
		else if (*P->p == '/' && P->end - P->p >= 2 && P->p[1] == '*') {
			start = P->line;
			for (q = P->p + 2; q + 1 < P->end &&
			    !(q[0] == '*' && q[1] == '/'); q++)
				if (*q == '\n')
					P->line++;
			if (q + 1 >= P->end)
				return td_perr(P, start,
				    "comment not closed ('*/' missing)");
			if ((size_t)(q - P->p - 2) >=
			    sizeof(TD_NOTE_MARK) - 1 &&
			    memcmp(P->p + 2, TD_NOTE_MARK,
			    sizeof(TD_NOTE_MARK) - 1) == 0)
				td_note(P, P->p + 2 + sizeof(TD_NOTE_MARK) - 1,
				    q, start);
			P->p = q + 2;
		} else if (*P->p == '/' && P->end - P->p >= 2 &&
		    P->p[1] == '/') {
			while (P->p < P->end && *P->p != '\n')
				P->p++;
		} else
			break;
	}
	return 0;
}

static int
td_lex_number(struct td_parser *P)
{
	unsigned	 base = 10;
	uint64_t	 v = 0;
	int		 d, ndigits = 0;

	if (*P->p == '0' && P->end - P->p >= 2 &&
	    (P->p[1] == 'x' || P->p[1] == 'X')) {
		base = 16;
		P->p += 2;
	} else if (*P->p == '0' && P->end - P->p >= 2 && td_isdigit(P->p[1])) {
		base = 8;
		P->p++;
	}
	while (P->p < P->end && (d = td_digit(*P->p, base)) >= 0) {
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			return td_perr(P, P->line, "number too large for "
			    "64 bits");
		v = v * base + (uint64_t)d;
		P->p++;
		ndigits++;
	}
	if ((base != 8 && ndigits == 0) ||
	    (P->p < P->end && (td_isalpha(*P->p) || td_isdigit(*P->p))))
		return td_perr(P, P->line, "malformed number");
	P->tok = TK_NUM;
	P->num = v;
	return 0;
}

/* One escape after a backslash in a string literal; returns the byte. */
static int
td_lex_escape(struct td_parser *P)
{
	unsigned	 v = 0;
	int		 i, d;
	char		 c;

	if (P->p >= P->end)
		return -1;
	c = *P->p++;
	switch (c) {
	case 'n':
		return '\n';
	case 't':
		return '\t';
	case 'r':
		return '\r';
	case 'a':
		return '\a';
	case 'b':
		return '\b';
	case 'f':
		return '\f';
	case 'v':
		return '\v';
	case '\\':
	case '"':
	case '\'':
	case '?':
		return c;
	case 'x':
		for (i = 0; i < 2 && P->p < P->end &&
		    (d = td_digit(*P->p, 16)) >= 0; i++, P->p++)
			v = v * 16 + (unsigned)d;
		return i == 0 ? -1 : (int)v;
	default:
		if ((d = td_digit(c, 8)) < 0)
			return -1;
		v = (unsigned)d;
		for (i = 1; i < 3 && P->p < P->end &&
		    (d = td_digit(*P->p, 8)) >= 0; i++, P->p++)
			v = v * 8 + (unsigned)d;
		return v > 0xff ? -1 : (int)v;
	}
}

static int
td_lex_string(struct td_parser *P)
{
	int	 c;

	P->p++;				/* the opening quote */
	P->tlen = 0;
	for (;;) {
		if (P->p >= P->end || *P->p == '\n')
			return td_perr(P, P->tline, "string not closed");
		c = (unsigned char)*P->p++;
		if (c == '"')
			break;
		if (c == '\\' && (c = td_lex_escape(P)) < 0)
			return td_perr(P, P->line, "bad escape in string");
		if (c == 0)
			return td_perr(P, P->line, "NUL byte in string");
		if (P->tlen == TRACEDIR_NAME_MAX)
			return td_perr(P, P->tline, "string longer than %d "
			    "bytes", TRACEDIR_NAME_MAX);
		P->text[P->tlen++] = (char)c;
	}
	P->text[P->tlen] = '\0';
	P->tok = TK_STR;
	return 0;
}

/* Read the next token into P->tok.  Returns 0 or -1. */
static int
td_next(struct td_parser *P)
{
	unsigned char	 c;

	if (P->failed || td_skip(P) == -1)
		return -1;
	P->tline = P->line;
	P->tlen = 0;
	P->text[0] = '\0';
	if (P->p >= P->end) {
		P->tok = TK_EOF;
		return 0;
	}
	c = (unsigned char)*P->p;
	if (td_isalpha(c)) {
		while (P->p < P->end && (td_isalpha(*P->p) ||
		    td_isdigit(*P->p))) {
			if (P->tlen == TRACEDIR_NAME_MAX)
				return td_perr(P, P->line, "name longer than "
				    "%d bytes", TRACEDIR_NAME_MAX);
			P->text[P->tlen++] = *P->p++;
		}
		P->text[P->tlen] = '\0';
		P->tok = TK_IDENT;
		return 0;
	}
	if (td_isdigit(c))
		return td_lex_number(P);
	if (c == '"')
		return td_lex_string(P);
	P->tok = TK_PUNCT;
	if (c == ':' && P->end - P->p >= 2 && P->p[1] == '=') {
		memcpy(P->text, ":=", 3);
		P->p += 2;
		return 0;
	}
	if (strchr("{};=[].,:-", c) != NULL && c != '\0') {
		P->text[0] = (char)c;
		P->text[1] = '\0';
		P->p++;
		return 0;
	}
	if (c >= 0x20 && c < 0x7f)
		return td_perr(P, P->line, "unexpected character '%c'", c);
	return td_perr(P, P->line, "unexpected byte 0x%02x", c);
}

/* The current token, quoted for a message. */
static const char *
td_tokname(struct td_parser *P, char *buf, size_t size)
{
	switch (P->tok) {
	case TK_EOF:
		return "the end of the text";
	case TK_NUM:
		snprintf(buf, size, "number %llu", (unsigned long long)P->num);
		return buf;
	case TK_STR:
		return "a string";
	default:
		snprintf(buf, size, "'%.40s'", P->text);
		return buf;
	}
}

static int
td_is(struct td_parser *P, enum td_tok tok, const char *text)
{
	return P->tok == tok && strcmp(P->text, text) == 0;
}

/* Consume the punctuation 'p' or fail naming what came instead. */
static int
td_expect(struct td_parser *P, const char *p)
{
	char	 buf[64];

	if (P->failed)
		return -1;
	if (!td_is(P, TK_PUNCT, p))
		return td_perr(P, P->tline, "expected '%s', not %s", p,
		    td_tokname(P, buf, sizeof(buf)));
	return td_next(P);
}

/* Consume an identifier into buf (TRACEDIR_NAME_MAX + 1 bytes). */
static int
td_expect_ident(struct td_parser *P, char *buf, const char *what)
{
	char	 tn[64];

	if (P->failed)
		return -1;
	if (P->tok != TK_IDENT)
		return td_perr(P, P->tline, "expected %s, not %s", what,
		    td_tokname(P, tn, sizeof(tn)));
	memcpy(buf, P->text, P->tlen + 1);
	return td_next(P);
}

/* ---- values ------------------------------------------------------------ */

/*
 * The value after '=': a number (with an optional '-'), a string or an
 * identifier with optional '.' parts (clock.tsc.value).
 */
static int
td_value(struct td_parser *P, struct td_val *v)
{
	char	 tn[64];
	size_t	 len;

	memset(v, 0, sizeof(*v));
	if (td_is(P, TK_PUNCT, "-")) {
		v->neg = 1;
		if (td_next(P) == -1)
			return -1;
		if (P->tok != TK_NUM)
			return td_perr(P, P->tline, "expected a number after "
			    "'-'");
	}
	v->kind = P->tok;
	switch (P->tok) {
	case TK_NUM:
		v->num = P->num;
		return td_next(P);
	case TK_STR:
		memcpy(v->text, P->text, P->tlen + 1);
		return td_next(P);
	case TK_IDENT:
		len = P->tlen;
		memcpy(v->text, P->text, len + 1);
		if (td_next(P) == -1)
			return -1;
		while (td_is(P, TK_PUNCT, ".")) {
			if (td_next(P) == -1)
				return -1;
			if (P->tok != TK_IDENT)
				return td_perr(P, P->tline, "expected a name "
				    "after '.'");
			if (len + 1 + P->tlen > TRACEDIR_NAME_MAX)
				return td_perr(P, P->tline, "name too long");
			v->text[len++] = '.';
			memcpy(v->text + len, P->text, P->tlen + 1);
			len += P->tlen;
			if (td_next(P) == -1)
				return -1;
		}
		return 0;
	default:
		return td_perr(P, P->tline, "expected a value, not %s",
		    td_tokname(P, tn, sizeof(tn)));
	}
}

static int
td_val_uint(struct td_parser *P, const struct td_val *v, unsigned line,
    const char *key, uint64_t *out)
{
	if (v->kind != TK_NUM || v->neg)
		return td_perr(P, line, "%s: expected a number of 0 or more",
		    key);
	*out = v->num;
	return 0;
}

static int
td_val_int(struct td_parser *P, const struct td_val *v, unsigned line,
    const char *key, int64_t *out)
{
	if (v->kind != TK_NUM)
		return td_perr(P, line, "%s: expected a number", key);
	if (v->num > (uint64_t)INT64_MAX + (v->neg ? 1 : 0))
		return td_perr(P, line, "%s: number out of range", key);
	if (v->neg)
		*out = v->num == (uint64_t)INT64_MAX + 1 ? INT64_MIN :
		    -(int64_t)v->num;
	else
		*out = (int64_t)v->num;
	return 0;
}

static int
td_val_str(struct td_parser *P, const struct td_val *v, unsigned line,
    const char *key)
{
	if (v->kind != TK_STR)
		return td_perr(P, line, "%s: expected a string", key);
	return 0;
}

/* TRUE/FALSE, true/false or 1/0. */
static int
td_val_bool(struct td_parser *P, const struct td_val *v, unsigned line,
    const char *key, unsigned *out)
{
	if (v->kind == TK_NUM && !v->neg && v->num <= 1) {
		*out = (unsigned)v->num;
		return 0;
	}
	if (v->kind == TK_IDENT && (strcmp(v->text, "true") == 0 ||
	    strcmp(v->text, "TRUE") == 0)) {
		*out = 1;
		return 0;
	}
	if (v->kind == TK_IDENT && (strcmp(v->text, "false") == 0 ||
	    strcmp(v->text, "FALSE") == 0)) {
		*out = 0;
		return 0;
	}
	return td_perr(P, line, "%s: expected true or false", key);
}

static int
td_hexval(char c)
{
	return td_digit(c, 16);
}

/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" into 16 bytes. */
static int
td_val_uuid(struct td_parser *P, const struct td_val *v, unsigned line,
    const char *key, uint8_t out[16])
{
	const char	*s = v->text;
	int		 i, hi, lo;

	if (td_val_str(P, v, line, key) == -1)
		return -1;
	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10) {
			if (*s != '-')
				goto bad;
			s++;
		}
		if ((hi = td_hexval(s[0])) < 0 || (lo = td_hexval(s[1])) < 0)
			goto bad;
		out[i] = (uint8_t)(hi << 4 | lo);
		s += 2;
	}
	if (*s == '\0')
		return 0;
bad:
	return td_perr(P, line, "%s: \"%.40s\" is not a UUID", key, v->text);
}

/* Replace *dst (owned) by a copy of s.  Returns 0 or -1. */
static int
td_setstr(struct td_parser *P, char **dst, const char *s, unsigned line)
{
	char	*n;

	if ((n = strdup(s)) == NULL)
		return td_perr(P, line, "out of memory");
	free(*dst);
	*dst = n;
	return 0;
}

/* ---- types ------------------------------------------------------------- */

static const struct td_alias *
td_alias_find(struct td_parser *P, const char *name)
{
	unsigned	 i;

	for (i = 0; i < P->naliases; i++)
		if (strcmp(P->aliases[i].name, name) == 0)
			return &P->aliases[i];
	return NULL;
}

static int
td_base(const struct td_val *v, unsigned *base)
{
	static const struct {
		const char	*name;
		unsigned	 base;
	} names[] = {
		{ "decimal", 10 }, { "dec", 10 }, { "d", 10 }, { "i", 10 },
		{ "u", 10 }, { "hexadecimal", 16 }, { "hex", 16 },
		{ "x", 16 }, { "X", 16 }, { "p", 16 }, { "octal", 8 },
		{ "oct", 8 }, { "o", 8 }, { "binary", 2 }, { "b", 2 },
	};
	size_t	 i;

	if (v->kind == TK_NUM && !v->neg && (v->num == 2 || v->num == 8 ||
	    v->num == 10 || v->num == 16)) {
		*base = (unsigned)v->num;
		return 0;
	}
	if (v->kind != TK_IDENT)
		return -1;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(v->text, names[i].name) == 0) {
			*base = names[i].base;
			return 0;
		}
	}
	return -1;
}

/* 'integer { ... }', after the keyword. */
static int
td_integer(struct td_parser *P, struct tracedir_type *t)
{
	struct td_val	 v;
	char		 key[TRACEDIR_NAME_MAX + 1];
	char		 want[TRACEDIR_NAME_MAX + 1];
	unsigned	 line, have_size = 0, start = P->tline;

	memset(t, 0, sizeof(*t));
	t->kind = TRACEDIR_INT;
	t->base = 10;
	if (td_expect(P, "{") == -1)
		return -1;
	while (!td_is(P, TK_PUNCT, "}")) {
		line = P->tline;
		if (td_expect_ident(P, key, "an integer attribute") == -1 ||
		    td_expect(P, "=") == -1 || td_value(P, &v) == -1 ||
		    td_expect(P, ";") == -1)
			return -1;
		if (strcmp(key, "size") == 0) {
			if (v.kind != TK_NUM || v.neg || (v.num != 8 &&
			    v.num != 16 && v.num != 32 && v.num != 64))
				return td_perr(P, line, "integer size: only 8, "
				    "16, 32 and 64 bits are supported");
			t->size = (unsigned)v.num;
			have_size = 1;
		} else if (strcmp(key, "align") == 0) {
			if (v.kind != TK_NUM || v.neg || (v.num != 8 &&
			    v.num != 16 && v.num != 32 && v.num != 64))
				return td_perr(P, line, "integer align: only "
				    "8, 16, 32 and 64 bits are supported");
			t->align = (unsigned)v.num;
		} else if (strcmp(key, "signed") == 0) {
			if (td_val_bool(P, &v, line, "signed",
			    &t->is_signed) == -1)
				return -1;
		} else if (strcmp(key, "base") == 0) {
			if (td_base(&v, &t->base) == -1)
				return td_perr(P, line, "integer base: "
				    "expected 2, 8, 10 or 16");
		} else if (strcmp(key, "byte_order") == 0) {
			if (v.kind != TK_IDENT || (strcmp(v.text, "le") != 0 &&
			    strcmp(v.text, "native") != 0))
				return td_perr(P, line, "integer byte_order: "
				    "only le is supported");
		} else if (strcmp(key, "encoding") == 0) {
			if (v.kind != TK_IDENT || strcmp(v.text, "none") != 0)
				return td_perr(P, line, "integer encoding: "
				    "only none is supported");
		} else if (strcmp(key, "map") == 0) {
			if (P->m->clock_name == NULL)
				return td_perr(P, line, "map: no clock "
				    "declared before");
			snprintf(want, sizeof(want), "clock.%s.value",
			    P->m->clock_name);
			if (v.kind != TK_IDENT || strcmp(v.text, want) != 0)
				return td_perr(P, line, "map: expected %.60s",
				    want);
			t->clock = 1;
		} else
			return td_perr(P, line, "unknown integer attribute "
			    "'%.40s'", key);
	}
	if (!have_size)
		return td_perr(P, start, "integer without a size");
	if (t->align == 0)
		t->align = 8;
	return td_next(P);
}

/* A type name, 'integer { }' or 'string' (not a struct). */
static int
td_type(struct td_parser *P, struct tracedir_type *t)
{
	const struct td_alias *a;
	char		 tn[64];

	if (P->tok != TK_IDENT)
		return td_perr(P, P->tline, "expected a type, not %s",
		    td_tokname(P, tn, sizeof(tn)));
	if (strcmp(P->text, "integer") == 0) {
		if (td_next(P) == -1)
			return -1;
		return td_integer(P, t);
	}
	if (strcmp(P->text, "string") == 0) {
		memset(t, 0, sizeof(*t));
		t->kind = TRACEDIR_STRING;
		t->align = 8;
		if (td_next(P) == -1)
			return -1;
		if (td_is(P, TK_PUNCT, "{"))
			return td_perr(P, P->tline, "string attributes are "
			    "not supported");
		return 0;
	}
	if ((a = td_alias_find(P, P->text)) != NULL) {
		*t = a->type;
		return td_next(P);
	}
	if (strcmp(P->text, "struct") == 0 || strcmp(P->text, "enum") == 0 ||
	    strcmp(P->text, "variant") == 0 ||
	    strcmp(P->text, "floating_point") == 0)
		return td_perr(P, P->tline, "%s types are not supported here "
		    "(traced writes integers and strings)", P->text);
	return td_perr(P, P->tline, "unknown type '%.40s'", P->text);
}

static void
td_struct_free(struct tracedir_struct *st)
{
	unsigned	 i;

	for (i = 0; i < st->n; i++)
		free(st->decls[i].name);
	free(st->decls);
	memset(st, 0, sizeof(*st));
}

/* 'struct { TYPE NAME; TYPE NAME[N]; ... }', from the keyword. */
static int
td_struct(struct td_parser *P, struct tracedir_struct *st)
{
	struct tracedir_decl	*d;
	struct tracedir_type	 t;
	char			 name[TRACEDIR_NAME_MAX + 1], tn[64];
	unsigned		 i, line;

	td_struct_free(st);
	st->align = 8;
	if (!td_is(P, TK_IDENT, "struct"))
		return td_perr(P, P->tline, "expected 'struct', not %s",
		    td_tokname(P, tn, sizeof(tn)));
	if (td_next(P) == -1 || td_expect(P, "{") == -1)
		return -1;
	if ((st->decls = calloc(TRACEDIR_FIELDS_MAX, sizeof(*d))) == NULL)
		return td_perr(P, P->tline, "out of memory");
	while (!td_is(P, TK_PUNCT, "}")) {
		line = P->tline;
		if (st->n == TRACEDIR_FIELDS_MAX)
			return td_perr(P, line, "more than %d fields",
			    TRACEDIR_FIELDS_MAX);
		if (td_type(P, &t) == -1 ||
		    td_expect_ident(P, name, "a field name") == -1)
			return -1;
		if (td_is(P, TK_PUNCT, "[")) {
			if (td_next(P) == -1)
				return -1;
			if (P->tok != TK_NUM || P->num == 0 ||
			    P->num > TD_ARRAY_MAX)
				return td_perr(P, P->tline, "array length: "
				    "expected 1 to %d", TD_ARRAY_MAX);
			if (t.kind != TRACEDIR_INT)
				return td_perr(P, line, "arrays of strings "
				    "are not supported");
			t.kind = TRACEDIR_ARRAY;
			t.length = (unsigned)P->num;
			if (td_next(P) == -1 || td_expect(P, "]") == -1)
				return -1;
		}
		if (td_expect(P, ";") == -1)
			return -1;
		d = &st->decls[st->n];
		if ((d->name = strdup(name)) == NULL)
			return td_perr(P, line, "out of memory");
		d->shown = d->name[0] == '_' ? d->name + 1 : d->name;
		d->type = t;
		st->n++;
		for (i = 0; i + 1 < st->n; i++)
			if (strcmp(st->decls[i].shown, d->shown) == 0)
				return td_perr(P, line, "field '%.40s' "
				    "declared twice", d->shown);
		if (t.align > st->align)
			st->align = t.align;
	}
	return td_next(P);
}

/* 'typealias TYPE := NAME;', from the keyword. */
static int
td_typealias(struct td_parser *P)
{
	struct td_alias	*a;
	unsigned	 line = P->tline;

	if (P->naliases == TD_ALIASES_MAX)
		return td_perr(P, line, "more than %d typealiases",
		    TD_ALIASES_MAX);
	a = &P->aliases[P->naliases];
	if (td_next(P) == -1 || td_type(P, &a->type) == -1 ||
	    td_expect(P, ":=") == -1 ||
	    td_expect_ident(P, a->name, "a type name") == -1 ||
	    td_expect(P, ";") == -1)
		return -1;
	if (strcmp(a->name, "integer") == 0 || strcmp(a->name, "string") == 0 ||
	    strcmp(a->name, "struct") == 0 || td_alias_find(P, a->name) != NULL)
		return td_perr(P, line, "typealias '%.40s' declared twice or "
		    "reserved", a->name);
	P->naliases++;
	return 0;
}

/* ---- blocks ------------------------------------------------------------ */

/*
 * One attribute of a block: 'KEY = VALUE;' (v filled, *is_struct 0)
 * or 'KEY := struct {...};' (parsed into the struct 'pick' returns for
 * the key; *is_struct 1).  KEY may be dotted ("packet.header").
 */
typedef struct tracedir_struct *(*td_struct_pick_cb)(struct td_parser *,
    const char *);

static int
td_attr(struct td_parser *P, char *key, struct td_val *v, int *is_struct,
    td_struct_pick_cb pick)
{
	struct tracedir_struct	*st;
	size_t			 len;
	unsigned		 line = P->tline;

	*is_struct = 0;
	if (td_expect_ident(P, key, "an attribute name") == -1)
		return -1;
	len = strlen(key);
	while (td_is(P, TK_PUNCT, ".")) {
		if (td_next(P) == -1)
			return -1;
		if (P->tok != TK_IDENT || len + 1 + P->tlen > TRACEDIR_NAME_MAX)
			return td_perr(P, P->tline, "expected a name after "
			    "'.'");
		key[len++] = '.';
		memcpy(key + len, P->text, P->tlen + 1);
		len += P->tlen;
		if (td_next(P) == -1)
			return -1;
	}
	if (td_is(P, TK_PUNCT, ":=")) {
		if (pick == NULL || (st = pick(P, key)) == NULL)
			return td_perr(P, line, "unknown or unsupported "
			    "declaration '%.40s'", key);
		*is_struct = 1;
		if (td_next(P) == -1 || td_struct(P, st) == -1)
			return -1;
		return td_expect(P, ";");
	}
	if (td_expect(P, "=") == -1 || td_value(P, v) == -1)
		return -1;
	return td_expect(P, ";");
}

static struct tracedir_struct *
td_pick_trace(struct td_parser *P, const char *key)
{
	return strcmp(key, "packet.header") == 0 ? &P->m->pkt_header : NULL;
}

static struct tracedir_struct *
td_pick_stream(struct td_parser *P, const char *key)
{
	if (strcmp(key, "packet.context") == 0)
		return &P->m->pkt_context;
	if (strcmp(key, "event.header") == 0)
		return &P->m->ev_header;
	return NULL;
}

static int
td_trace(struct td_parser *P)
{
	struct td_val	 v;
	char		 key[TRACEDIR_NAME_MAX + 1];
	unsigned	 line, start = P->tline, have_uuid = 0, have_bo = 0;
	int		 is_struct;

	if (P->trace_line != 0)
		return td_perr(P, start, "second trace block (the first is "
		    "on line %u)", P->trace_line);
	P->trace_line = start;
	if (td_next(P) == -1 || td_expect(P, "{") == -1)
		return -1;
	while (!td_is(P, TK_PUNCT, "}")) {
		line = P->tline;
		if (td_attr(P, key, &v, &is_struct, td_pick_trace) == -1)
			return -1;
		if (is_struct)
			continue;
		if (strcmp(key, "major") == 0) {
			if (v.kind != TK_NUM || v.neg || v.num != 1)
				return td_perr(P, line, "CTF major version: "
				    "only 1 is supported");
		} else if (strcmp(key, "minor") == 0) {
			if (v.kind != TK_NUM || v.neg || v.num != 8)
				return td_perr(P, line, "CTF minor version: "
				    "only 8 is supported");
		} else if (strcmp(key, "uuid") == 0) {
			if (td_val_uuid(P, &v, line, key, P->m->uuid) == -1)
				return -1;
			have_uuid = 1;
		} else if (strcmp(key, "byte_order") == 0) {
			if (v.kind != TK_IDENT || strcmp(v.text, "le") != 0)
				return td_perr(P, line, "byte_order: only le "
				    "is supported");
			have_bo = 1;
		} else
			return td_perr(P, line, "unknown trace attribute "
			    "'%.40s'", key);
	}
	if (!have_uuid || !have_bo || P->m->pkt_header.decls == NULL)
		return td_perr(P, start, "the trace block needs uuid, "
		    "byte_order and packet.header");
	if (td_next(P) == -1)
		return -1;
	return td_expect(P, ";");
}

static int
td_env(struct td_parser *P)
{
	struct td_val	 v;
	char		 key[TRACEDIR_NAME_MAX + 1];
	unsigned	 line;
	int		 is_struct;

	if (td_next(P) == -1 || td_expect(P, "{") == -1)
		return -1;
	while (!td_is(P, TK_PUNCT, "}")) {
		line = P->tline;
		if (td_attr(P, key, &v, &is_struct, NULL) == -1)
			return -1;
		if (v.kind == TK_IDENT)
			return td_perr(P, line, "env %.40s: expected a number "
			    "or a string", key);
		if (strcmp(key, "hostname") == 0) {
			if (td_val_str(P, &v, line, key) == -1 ||
			    td_setstr(P, &P->m->hostname, v.text, line) == -1)
				return -1;
		} else if (strcmp(key, "procname") == 0) {
			if (td_val_str(P, &v, line, key) == -1 ||
			    td_setstr(P, &P->m->procname, v.text, line) == -1)
				return -1;
		} else if (strcmp(key, "vpid") == 0) {
			if (td_val_int(P, &v, line, key, &P->m->vpid) == -1)
				return -1;
		}
		/* Other env entries are free-form: ignored. */
	}
	if (td_next(P) == -1)
		return -1;
	return td_expect(P, ";");
}

static int
td_clock(struct td_parser *P)
{
	struct tracedir_meta *m = P->m;
	struct td_val	 v;
	char		 key[TRACEDIR_NAME_MAX + 1];
	unsigned	 line, start = P->tline, absolute;
	uint64_t	 precision;
	int		 is_struct;

	if (P->clock_line != 0)
		return td_perr(P, start, "second clock block (the first is "
		    "on line %u): only one clock is supported", P->clock_line);
	P->clock_line = start;
	m->clock_freq = 1000000000;
	if (td_next(P) == -1 || td_expect(P, "{") == -1)
		return -1;
	while (!td_is(P, TK_PUNCT, "}")) {
		line = P->tline;
		if (td_attr(P, key, &v, &is_struct, NULL) == -1)
			return -1;
		if (strcmp(key, "name") == 0) {
			if (v.kind != TK_STR && v.kind != TK_IDENT)
				return td_perr(P, line, "clock name: expected "
				    "a name");
			if (v.text[0] == '\0' || strchr(v.text, '.') != NULL)
				return td_perr(P, line, "clock name: \"%.40s\" "
				    "is not an identifier", v.text);
			if (td_setstr(P, &m->clock_name, v.text, line) == -1)
				return -1;
		} else if (strcmp(key, "uuid") == 0) {
			if (td_val_uuid(P, &v, line, key, m->clock_uuid) == -1)
				return -1;
			m->has_clock_uuid = 1;
		} else if (strcmp(key, "description") == 0) {
			if (td_val_str(P, &v, line, key) == -1)
				return -1;
		} else if (strcmp(key, "freq") == 0) {
			if (td_val_uint(P, &v, line, key, &m->clock_freq) == -1)
				return -1;
			if (m->clock_freq == 0)
				return td_perr(P, line, "clock freq 0");
		} else if (strcmp(key, "precision") == 0) {
			if (td_val_uint(P, &v, line, key, &precision) == -1)
				return -1;
		} else if (strcmp(key, "offset_s") == 0) {
			if (td_val_int(P, &v, line, key,
			    &m->clock_offset_s) == -1)
				return -1;
		} else if (strcmp(key, "offset") == 0) {
			if (td_val_uint(P, &v, line, key,
			    &m->clock_offset) == -1)
				return -1;
		} else if (strcmp(key, "absolute") == 0) {
			if (td_val_bool(P, &v, line, key, &absolute) == -1)
				return -1;
		} else
			return td_perr(P, line, "unknown clock attribute "
			    "'%.40s'", key);
	}
	if (m->clock_name == NULL)
		return td_perr(P, start, "clock without a name");
	/*
	 * Whole seconds of 'offset' go to offset_s, as babeltrace2 does;
	 * then offset_s * 1e9 must fit an int64_t with room for a second.
	 */
	if (m->clock_offset >= m->clock_freq) {
		uint64_t s = m->clock_offset / m->clock_freq;

		if (s > INT64_MAX / 1000000000 ||
		    __builtin_add_overflow(m->clock_offset_s, (int64_t)s,
		    &m->clock_offset_s))
			return td_perr(P, start, "clock offset out of range");
		m->clock_offset %= m->clock_freq;
	}
	if (m->clock_offset_s > INT64_MAX / 1000000000 - 1 ||
	    m->clock_offset_s < -(INT64_MAX / 1000000000 - 1))
		return td_perr(P, start, "clock offset_s out of range");
	if (td_next(P) == -1)
		return -1;
	return td_expect(P, ";");
}

static int
td_stream(struct td_parser *P)
{
	struct td_val	 v;
	char		 key[TRACEDIR_NAME_MAX + 1];
	unsigned	 line, start = P->tline;
	int		 is_struct;

	if (P->stream_line != 0)
		return td_perr(P, start, "second stream block (the first is "
		    "on line %u): only one stream class is supported",
		    P->stream_line);
	P->stream_line = start;
	if (td_next(P) == -1 || td_expect(P, "{") == -1)
		return -1;
	while (!td_is(P, TK_PUNCT, "}")) {
		line = P->tline;
		if (td_attr(P, key, &v, &is_struct, td_pick_stream) == -1)
			return -1;
		if (is_struct)
			continue;
		if (strcmp(key, "id") == 0) {
			if (td_val_uint(P, &v, line, key,
			    &P->m->stream_id) == -1)
				return -1;
		} else
			return td_perr(P, line, "unknown stream attribute "
			    "'%.40s'", key);
	}
	if (P->m->pkt_context.decls == NULL || P->m->ev_header.decls == NULL)
		return td_perr(P, start, "the stream block needs "
		    "packet.context and event.header");
	if (td_next(P) == -1)
		return -1;
	return td_expect(P, ";");
}

/* The class being parsed is the one after the last; see td_event(). */
static struct tracedir_struct *
td_pick_event(struct td_parser *P, const char *key)
{
	if (strcmp(key, "fields") == 0)
		return &P->m->classes[P->m->nclasses].fields;
	return NULL;
}

static int
td_event(struct td_parser *P)
{
	struct tracedir_meta	*m = P->m;
	struct tracedir_class	*c, *nc;
	struct td_val		 v;
	char			 key[TRACEDIR_NAME_MAX + 1];
	unsigned		 line, start = P->tline, have_id = 0;
	uint64_t		 u = 0;
	size_t			 cap;
	int			 is_struct;

	if (P->stream_line == 0)
		return td_perr(P, start, "event before the stream block");
	if (m->nclasses == TRACEDIR_CLASSES_MAX)
		return td_perr(P, start, "more than %u events",
		    TRACEDIR_CLASSES_MAX);
	if (m->nclasses == P->classes_cap) {
		cap = P->classes_cap != 0 ? P->classes_cap * 2 : 16;
		if (cap > TRACEDIR_CLASSES_MAX)
			cap = TRACEDIR_CLASSES_MAX;
		if ((nc = reallocarray(m->classes, cap, sizeof(*nc))) == NULL)
			return td_perr(P, start, "out of memory");
		m->classes = nc;
		P->classes_cap = cap;
	}
	/* Counted once it has all it needs, freed by the caller if not. */
	c = &m->classes[m->nclasses];
	memset(c, 0, sizeof(*c));
	c->line = start;
	if (td_next(P) == -1 || td_expect(P, "{") == -1)
		goto fail;
	while (!td_is(P, TK_PUNCT, "}")) {
		line = P->tline;
		if (td_attr(P, key, &v, &is_struct, td_pick_event) == -1)
			goto fail;
		if (is_struct)
			continue;
		if (strcmp(key, "name") == 0) {
			if (td_val_str(P, &v, line, key) == -1 ||
			    td_setstr(P, &c->name, v.text, line) == -1)
				goto fail;
		} else if (strcmp(key, "id") == 0) {
			if (td_val_uint(P, &v, line, key, &u) == -1)
				goto fail;
			if (u > UINT32_MAX) {
				td_perr(P, line, "event id %llu is more than "
				    "32 bits", (unsigned long long)u);
				goto fail;
			}
			c->id = (uint32_t)u;
			have_id = 1;
		} else if (strcmp(key, "stream_id") == 0) {
			if (td_val_uint(P, &v, line, key, &u) == -1)
				goto fail;
			if (u != m->stream_id) {
				td_perr(P, line, "stream_id %llu: no such "
				    "stream", (unsigned long long)u);
				goto fail;
			}
		} else {
			td_perr(P, line, "unknown event attribute '%.40s'",
			    key);
			goto fail;
		}
	}
	if (c->name == NULL || !have_id) {
		td_perr(P, start, "event without a name or an id");
		goto fail;
	}
	if (c->fields.decls == NULL)
		c->fields.align = 8;
	if (P->note != NULL && P->note_line > start) {
		c->note = P->note;
		P->note = NULL;
	}
	m->nclasses++;
	if (td_next(P) == -1)
		return -1;
	return td_expect(P, ";");
fail:
	free(c->name);
	free(c->note);
	td_struct_free(&c->fields);
	return -1;
}

/* ---- checks once everything is parsed ---------------------------------- */

static int
td_field(const struct tracedir_struct *st, const char *name)
{
	unsigned	 i;

	for (i = 0; i < st->n; i++)
		if (strcmp(st->decls[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Flags of td_need(). */
#define TD_OPTIONAL	0x1u
#define TD_UNSIGNED	0x2u
#define TD_CLOCK64	0x4u	/* 64 bits, mapped to the clock */
#define TD_MAX32	0x8u

/* Find field 'name' of 'st' as an integer with these properties. */
static int
td_need(struct td_parser *P, const struct tracedir_struct *st,
    const char *what, unsigned line, const char *name, unsigned flags,
    int *idx)
{
	const struct tracedir_type *t;

	if ((*idx = td_field(st, name)) < 0) {
		if (flags & TD_OPTIONAL)
			return 0;
		return td_perr(P, line, "%s has no field '%s'", what, name);
	}
	t = &st->decls[*idx].type;
	if (t->kind != TRACEDIR_INT ||
	    ((flags & TD_UNSIGNED) && t->is_signed) ||
	    ((flags & TD_CLOCK64) && (t->size != 64 || !t->clock)) ||
	    ((flags & TD_MAX32) && t->size > 32))
		return td_perr(P, line, "%s: field '%s' has the wrong type",
		    what, name);
	return 0;
}

/* Which kinds of field a struct may hold. */
static int
td_kinds(struct td_parser *P, const struct tracedir_struct *st,
    const char *what, unsigned line, int strings, int arrays)
{
	unsigned	 i;

	for (i = 0; i < st->n; i++) {
		if ((st->decls[i].type.kind == TRACEDIR_STRING && !strings) ||
		    (st->decls[i].type.kind == TRACEDIR_ARRAY && !arrays))
			return td_perr(P, line, "%s: field '%.40s': %s are "
			    "not supported there", what, st->decls[i].name,
			    st->decls[i].type.kind == TRACEDIR_STRING ?
			    "strings" : "arrays");
	}
	return 0;
}

static int
td_class_cmp(const void *a, const void *b)
{
	const struct tracedir_class *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/*
 * traced:lost must have the payload of struct traced_lost: 'count',
 * then one field per producer cause, named as proto/cause.h names it.
 */
static int
td_check_lost(struct td_parser *P, struct tracedir_class *c)
{
	const struct tracedir_decl *d;
	const char	*want;
	char		 fields[128];
	size_t		 len;
	unsigned	 i;

	if (c->id != TRACED_EVENT_LOST ||
	    c->fields.n != 1 + TRACED_DROP_PRODUCER_NCAUSES)
		goto bad;
	for (i = 0; i < c->fields.n; i++) {
		d = &c->fields.decls[i];
		want = i == 0 ? "count" : traced_cause_name((int)i - 1);
		if (strcmp(d->name, want) != 0 ||
		    d->type.kind != TRACEDIR_INT || d->type.size != 64 ||
		    d->type.is_signed)
			goto bad;
	}
	c->lost = 1;
	return 0;
bad:
	len = (size_t)snprintf(fields, sizeof(fields), "count");
	for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES && len < sizeof(fields);
	    i++)
		len += (size_t)snprintf(fields + len, sizeof(fields) - len,
		    ", %s", traced_cause_name((int)i));
	return td_perr(P, c->line, "traced:lost must be id %u with the "
	    "uint64 fields %s", TRACED_EVENT_LOST, fields);
}

/*
 * traced:crash must have the payload of struct traced_crash: the
 * signed 'signal' and 'code', the unsigned 'addr' and 'ip', the signed
 * 'sender', all 64 bits.
 */
static int
td_check_crash(struct td_parser *P, const struct tracedir_class *c)
{
	static const char *const names[] = {
		"signal", "code", "addr", "ip", "sender"
	};
	static const unsigned is_signed[] = { 1, 1, 0, 0, 1 };
	const struct tracedir_decl *d;
	unsigned i;

	if (c->id != TRACED_EVENT_CRASH || c->fields.n != 5)
		goto bad;
	for (i = 0; i < c->fields.n; i++) {
		d = &c->fields.decls[i];
		if (strcmp(d->name, names[i]) != 0 ||
		    d->type.kind != TRACEDIR_INT || d->type.size != 64 ||
		    d->type.is_signed != is_signed[i])
			goto bad;
	}
	return 0;
bad:
	return td_perr(P, c->line, "traced:crash must be id %u with the "
	    "64-bit fields signal, code, addr, ip, sender (addr and ip "
	    "unsigned)", TRACED_EVENT_CRASH);
}

/*
 * Split the class name at its first ':' (provider:event), and turn the
 * class's note into its declaration when the note parses as one
 * trace-events line that declares this event with arguments that match
 * the fields one for one (strings where strings are): a note that says
 * otherwise is not believed, and the event is shown without it.
 */
static void
td_class_decl(struct tracedir_class *c)
{
	struct tevents_file	*f;
	const struct tevents_event *ev;
	const char		*colon;
	char			 err[64];
	unsigned		 i;

	colon = strchr(c->name, ':');
	c->event = colon != NULL ? colon + 1 : c->name;
	c->provider_len = colon != NULL ? (size_t)(colon - c->name) : 0;
	if (c->note == NULL)
		return;
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return;
	if (tevents_parse(c->note, strlen(c->note), "metadata", f, err,
	    sizeof(err)) != 0)
		goto bad;
	if (f->nevents != 1)
		goto bad_parsed;
	ev = &f->events[0];
	if (strcmp(ev->name, c->event) != 0 || ev->nargs != c->fields.n)
		goto bad_parsed;
	for (i = 0; i < ev->nargs; i++)
		if ((ev->args[i].cls == TEVENTS_STRING) !=
		    (c->fields.decls[i].type.kind == TRACEDIR_STRING))
			goto bad_parsed;
	c->decl_file = f;
	c->decl = ev;
	return;
bad_parsed:
	tevents_free(f);
bad:
	free(f);
}

static int
td_finish(struct td_parser *P)
{
	struct tracedir_meta	*m = P->m;
	unsigned		 i;

	if (P->trace_line == 0)
		return td_perr(P, P->line, "no trace block");
	if (P->clock_line == 0)
		return td_perr(P, P->line, "no clock block");
	if (P->stream_line == 0)
		return td_perr(P, P->line, "no stream block");

	if (td_kinds(P, &m->pkt_header, "packet.header", P->trace_line, 0,
	    1) == -1 ||
	    td_need(P, &m->pkt_header, "packet.header", P->trace_line,
	    "magic", TD_UNSIGNED, &m->h_magic) == -1 ||
	    td_need(P, &m->pkt_header, "packet.header", P->trace_line,
	    "stream_id", TD_OPTIONAL | TD_UNSIGNED, &m->h_stream_id) == -1 ||
	    td_need(P, &m->pkt_header, "packet.header", P->trace_line,
	    "stream_instance_id", TD_OPTIONAL | TD_UNSIGNED,
	    &m->h_instance) == -1)
		return -1;
	if (m->pkt_header.decls[m->h_magic].type.size != 32)
		return td_perr(P, P->trace_line, "packet.header: magic must "
		    "be 32 bits");
	m->h_uuid = td_field(&m->pkt_header, "uuid");
	if (m->h_uuid < 0 ||
	    m->pkt_header.decls[m->h_uuid].type.kind != TRACEDIR_ARRAY ||
	    m->pkt_header.decls[m->h_uuid].type.length != 16 ||
	    m->pkt_header.decls[m->h_uuid].type.size != 8)
		return td_perr(P, P->trace_line, "packet.header needs a field "
		    "'uuid' of 16 bytes");
	for (i = 0; i < m->pkt_header.n; i++)
		if (m->pkt_header.decls[i].type.kind == TRACEDIR_ARRAY &&
		    (int)i != m->h_uuid)
			return td_perr(P, P->trace_line, "packet.header: "
			    "arrays other than uuid are not supported");

	if (td_kinds(P, &m->pkt_context, "packet.context", P->stream_line,
	    0, 0) == -1 ||
	    td_need(P, &m->pkt_context, "packet.context", P->stream_line,
	    "timestamp_begin", TD_UNSIGNED | TD_CLOCK64, &m->c_begin) == -1 ||
	    td_need(P, &m->pkt_context, "packet.context", P->stream_line,
	    "timestamp_end", TD_UNSIGNED | TD_CLOCK64, &m->c_end) == -1 ||
	    td_need(P, &m->pkt_context, "packet.context", P->stream_line,
	    "content_size", TD_UNSIGNED, &m->c_content) == -1 ||
	    td_need(P, &m->pkt_context, "packet.context", P->stream_line,
	    "packet_size", TD_UNSIGNED, &m->c_packet) == -1 ||
	    td_need(P, &m->pkt_context, "packet.context", P->stream_line,
	    "events_discarded", TD_UNSIGNED, &m->c_discarded) == -1 ||
	    td_need(P, &m->pkt_context, "packet.context", P->stream_line,
	    "packet_seq_num", TD_OPTIONAL | TD_UNSIGNED, &m->c_seq) == -1 ||
	    td_need(P, &m->pkt_context, "packet.context", P->stream_line,
	    "tid", TD_OPTIONAL | TD_UNSIGNED, &m->c_tid) == -1)
		return -1;

	if (td_kinds(P, &m->ev_header, "event.header", P->stream_line,
	    0, 0) == -1 ||
	    td_need(P, &m->ev_header, "event.header", P->stream_line, "id",
	    TD_UNSIGNED | TD_MAX32, &m->e_id) == -1 ||
	    td_need(P, &m->ev_header, "event.header", P->stream_line,
	    "timestamp", TD_UNSIGNED | TD_CLOCK64, &m->e_ts) == -1)
		return -1;

	for (i = 0; i < m->nclasses; i++) {
		if (td_kinds(P, &m->classes[i].fields, "event fields",
		    m->classes[i].line, 1, 0) == -1)
			return -1;
		if (strcmp(m->classes[i].name, "traced:lost") == 0 &&
		    td_check_lost(P, &m->classes[i]) == -1)
			return -1;
		if (strcmp(m->classes[i].name, "traced:crash") == 0 &&
		    td_check_crash(P, &m->classes[i]) == -1)
			return -1;
	}
	for (i = 0; i < m->nclasses; i++)
		td_class_decl(&m->classes[i]);
	if (m->nclasses > 0)
		qsort(m->classes, m->nclasses, sizeof(*m->classes),
		    td_class_cmp);
	for (i = 1; i < m->nclasses; i++)
		if (m->classes[i].id == m->classes[i - 1].id)
			return td_perr(P, m->classes[i].line, "event id %u "
			    "already declared on line %u", m->classes[i].id,
			    m->classes[i - 1].line);
	return 0;
}

/* ---- metadata: entry points ------------------------------------------- */

/*
 * Free a meta.  Contract in tracedir.h.
 */
void
tracedir_meta_free(struct tracedir_meta *m)
{
	size_t	 i;

	if (m == NULL)
		return;
	for (i = 0; i < m->nclasses; i++) {
		free(m->classes[i].name);
		free(m->classes[i].note);
		if (m->classes[i].decl_file != NULL) {
			tevents_free(m->classes[i].decl_file);
			free(m->classes[i].decl_file);
		}
		td_struct_free(&m->classes[i].fields);
	}
	free(m->classes);
	td_struct_free(&m->pkt_header);
	td_struct_free(&m->pkt_context);
	td_struct_free(&m->ev_header);
	free(m->hostname);
	free(m->procname);
	free(m->clock_name);
	free(m);
}

/*
 * Parse a metadata text.  Contract in tracedir.h.
 */
int
tracedir_meta_parse(const char *text, size_t len, const char *filename,
    struct tracedir_meta **out, char *err, size_t errlen)
{
	struct td_parser P;
	char		 tn[64];
	int		 ret = -1;

	*out = NULL;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	memset(&P, 0, sizeof(P));
	P.p = text;
	P.end = text + len;
	P.line = 1;
	P.file = filename != NULL ? filename : "metadata";
	P.err = err;
	P.errlen = errlen;
	if (len >= 4 && (unsigned char)text[0] == 0x57 &&
	    (unsigned char)text[1] == 0x1d && (unsigned char)text[2] == 0xd1 &&
	    (unsigned char)text[3] == 0x75)
		return td_perr(&P, 1, "packetized metadata is not supported "
		    "(traced writes plain text)");
	if (len < sizeof(TD_SIGNATURE) - 1 ||
	    memcmp(text, TD_SIGNATURE, sizeof(TD_SIGNATURE) - 1) != 0)
		return td_perr(&P, 1, "no \"" TD_SIGNATURE "\" signature at "
		    "the start: not CTF 1.8 metadata");
	if ((P.m = calloc(1, sizeof(*P.m))) == NULL ||
	    (P.aliases = calloc(TD_ALIASES_MAX, sizeof(*P.aliases))) == NULL) {
		td_perr(&P, 1, "out of memory");
		goto out;
	}
	P.m->vpid = -1;
	if (td_next(&P) == -1)
		goto out;
	while (P.tok != TK_EOF) {
		if (P.tok != TK_IDENT) {
			td_perr(&P, P.tline, "expected a declaration, not %s",
			    td_tokname(&P, tn, sizeof(tn)));
			goto out;
		}
		if (strcmp(P.text, "typealias") == 0)
			ret = td_typealias(&P);
		else if (strcmp(P.text, "trace") == 0)
			ret = td_trace(&P);
		else if (strcmp(P.text, "env") == 0)
			ret = td_env(&P);
		else if (strcmp(P.text, "clock") == 0)
			ret = td_clock(&P);
		else if (strcmp(P.text, "stream") == 0)
			ret = td_stream(&P);
		else if (strcmp(P.text, "event") == 0)
			ret = td_event(&P);
		else
			ret = td_perr(&P, P.tline, "'%.40s' is not supported "
			    "at the top level (traced metadata has typealias, "
			    "trace, env, clock, stream and event)", P.text);
		if (ret == -1)
			goto out;
	}
	ret = td_finish(&P);
out:
	free(P.aliases);
	free(P.note);
	if (ret == -1 || P.failed) {
		tracedir_meta_free(P.m);
		return -1;
	}
	*out = P.m;
	return 0;
}
