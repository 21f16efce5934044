/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Format strings of trace-events, rendered the way the program's own
 * printf would have rendered them (QEMU's log backend does exactly
 * that), from the 64-bit values and strings of a record.
 *
 * A format is compiled once per event class into segments: literal text
 * and conversions, each with its flags, width, precision, length and
 * the argument it takes.  Rendering walks the segments; a plain
 * conversion (%d, %u, %x, %s, %p with no flag, width or precision) is
 * written by hand, which is most of them, and anything else goes
 * through snprintf with a conversion spec rebuilt from the parsed parts
 * (so a hostile format never reaches printf as such).  The value is
 * first cast to the conversion's length: "%d" of -1 stored as 64 bits
 * prints -1, "%x" of it ffffffff, "%hhx" ff, as in C.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "format.h"
#include "strbuf.h"
#include "text.h"
#include "tevents.h"
#include "tracedir.h"

#define FMT_TEXT_MAX	(64u << 10)	/* bytes of an unquoted format */

/* Length modifiers, as the cast they imply. */
enum fmt_len {
	FL_INT,				/* none: int */
	FL_CHAR,			/* hh */
	FL_SHORT,			/* h */
	FL_64,				/* l, ll, j, z, t, q, L */
};

/* One piece of a format: literal text, or a conversion. */
struct fmt_seg {
	const char	*text;		/* into f->text; conv == 0 */
	size_t		 len;
	char		 conv;		/* 0 for text; d i u o x X c s p */
	char		 flags[6];	/* NUL-terminated: "-+ #0" */
	int		 width;		/* -1 none, -2 from an argument */
	int		 prec;		/* -1 none, -2 from an argument */
	enum fmt_len	 length;
	int		 plain;		/* no flag, width or precision */
};

struct fmt {
	char		*text;		/* owned: the unquoted format */
	struct fmt_seg	*segs;		/* owned */
	size_t		 nsegs;
};

/* ---- unquoting ------------------------------------------------------------ */

/* What a PRI macro's letters after "PRI" stand for, as length + conv. */
static const char *
fmt_pri(const char *name, size_t len, char *out)
{
	static const struct {
		const char	*size;
		const char	*length;
	} sizes[] = {
		{ "8", "hh" }, { "16", "h" }, { "32", "" }, { "64", "ll" },
		{ "LEAST8", "hh" }, { "LEAST16", "h" }, { "LEAST32", "" },
		{ "LEAST64", "ll" }, { "FAST8", "hh" }, { "FAST16", "l" },
		{ "FAST32", "l" }, { "FAST64", "ll" }, { "MAX", "ll" },
		{ "PTR", "l" },
	};
	size_t	 i;

	if (len < 5 || memcmp(name, "PRI", 3) != 0 ||
	    strchr("diouxX", name[3]) == NULL)
		return NULL;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if (strlen(sizes[i].size) == len - 4 &&
		    memcmp(name + 4, sizes[i].size, len - 4) == 0) {
			snprintf(out, 8, "%s%c", sizes[i].length, name[3]);
			return out;
		}
	}
	return NULL;
}

static int
fmt_ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_';
}

static int
fmt_octal(char c)
{
	return c >= '0' && c <= '7';
}

static int
fmt_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * The C string the literals of 'written' stand for.  Contract in
 * format.h.  A comma between literals (QEMU's "fmt_trans", "fmt")
 * starts over: the last format is the one printed.
 */
char *
fmt_unquote(const char *written)
{
	struct strbuf	 b;
	const char	*p = written, *q;
	char		 pri[8], c;
	int		 v, i;

	strbuf_init(&b);
	strbuf_room(&b, 16);
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		if (*p == ',') {
			strbuf_reset(&b);
			p++;
			continue;
		}
		if (*p == '"') {
			for (p++; *p != '"'; p++) {
				if (*p == '\0')
					goto bad;
				c = *p;
				if (c == '\\') {
					c = *++p;
					switch (c) {
					case 'n': c = '\n'; break;
					case 't': c = '\t'; break;
					case 'r': c = '\r'; break;
					case 'a': c = '\a'; break;
					case 'b': c = '\b'; break;
					case 'f': c = '\f'; break;
					case 'v': c = '\v'; break;
					case '\\': case '"': case '\'': case '?':
						break;
					case 'x':
						for (v = 0, i = 0; i < 2 &&
						    fmt_hexval(p[1]) >= 0; i++)
							v = v * 16 +
							    fmt_hexval(*++p);
						if (i == 0)
							goto bad;
						c = (char)v;
						break;
					default:
						if (!fmt_octal(c))
							goto bad;
						v = c - '0';
						for (i = 1; i < 3 &&
						    fmt_octal(p[1]); i++)
							v = v * 8 + (*++p - '0');
						c = (char)v;
					}
				}
				if (c == '\0')
					goto bad;
				strbuf_addc(&b, c);
			}
			p++;
			if (b.len > FMT_TEXT_MAX)
				goto bad;
			continue;
		}
		for (q = p; fmt_ident_char(*q); q++)
			;
		if (q == p || fmt_pri(p, (size_t)(q - p), pri) == NULL)
			goto bad;
		strbuf_adds(&b, pri);
		p = q;
	}
	if (b.failed)
		goto bad;
	return b.s;
bad:
	strbuf_free(&b);
	return NULL;
}

/* ---- compiling ------------------------------------------------------------ */

static int
fmt_push(struct fmt *f, size_t *cap, const struct fmt_seg *seg)
{
	struct fmt_seg	*ns;

	if (f->nsegs == *cap) {
		*cap = *cap != 0 ? *cap * 2 : 8;
		if ((ns = reallocarray(f->segs, *cap, sizeof(*ns))) == NULL)
			return -1;
		f->segs = ns;
	}
	f->segs[f->nsegs++] = *seg;
	return 0;
}

/* A number of at most 4 digits (larger widths are refused). */
static int
fmt_num(const char **pp, int *out)
{
	const char	*p = *pp;
	int		 v = 0, n = 0;

	while (*p >= '0' && *p <= '9') {
		if (++n > 4)
			return -1;
		v = v * 10 + (*p++ - '0');
	}
	*out = v;
	*pp = p;
	return 0;
}

/*
 * Compile a class's format.  Contract in format.h.
 */
struct fmt *
fmt_compile(const struct tracedir_class *c, int *nomem)
{
	struct fmt	*f;
	struct fmt_seg	 seg;
	const char	*p, *start;
	size_t		 cap = 0, nf;

	*nomem = 0;
	if (c->decl == NULL || c->decl->fmt == NULL || c->decl->fmt[0] == '\0')
		return NULL;
	if ((f = calloc(1, sizeof(*f))) == NULL)
		goto nomem;
	if ((f->text = fmt_unquote(c->decl->fmt)) == NULL || f->text[0] == '\0')
		goto bad;
	for (p = f->text; *p != '\0'; ) {
		memset(&seg, 0, sizeof(seg));
		if (*p != '%' || p[1] == '%') {
			start = p;
			if (*p == '%') {	/* "%%": one '%' */
				seg.text = p;
				seg.len = 1;
				p += 2;
			} else {
				while (*p != '\0' && *p != '%')
					p++;
				seg.text = start;
				seg.len = (size_t)(p - start);
			}
			if (fmt_push(f, &cap, &seg) == -1)
				goto nomem;
			continue;
		}
		start = p++;
		for (nf = 0; *p != '\0' && strchr("-+ #0'", *p) != NULL; p++)
			if (*p != '\'' && nf + 1 < sizeof(seg.flags) &&
			    strchr(seg.flags, *p) == NULL)
				seg.flags[nf++] = *p;
		seg.width = seg.prec = -1;
		if (*p == '*') {
			seg.width = -2;
			p++;
		} else if (*p >= '1' && *p <= '9' &&
		    fmt_num(&p, &seg.width) == -1)
			goto bad;
		if (*p == '.') {
			p++;
			if (*p == '*') {
				seg.prec = -2;
				p++;
			} else if (fmt_num(&p, &seg.prec) == -1)
				goto bad;
		}
		seg.length = FL_INT;
		if (p[0] == 'h' && p[1] == 'h') {
			seg.length = FL_CHAR;
			p += 2;
		} else if (*p == 'h') {
			seg.length = FL_SHORT;
			p++;
		} else if (p[0] == 'l' && p[1] == 'l') {
			seg.length = FL_64;
			p += 2;
		} else if (*p != '\0' && strchr("ljztqL", *p) != NULL) {
			seg.length = FL_64;
			p++;
		}
		if (*p == '\0' || strchr("diouxXcspaAeEfFgGn", *p) == NULL) {
			/* Not a conversion: the text as it is. */
			seg.text = start;
			seg.len = (size_t)(p - start) + (*p != '\0');
			p += *p != '\0';
			if (fmt_push(f, &cap, &seg) == -1)
				goto nomem;
			continue;
		}
		seg.conv = *p++;
		seg.plain = seg.flags[0] == '\0' && seg.width == -1 &&
		    seg.prec == -1;
		if (fmt_push(f, &cap, &seg) == -1)
			goto nomem;
	}
	return f;
nomem:
	*nomem = 1;
	/* FALLTHROUGH */
bad:
	fmt_free(f);
	return NULL;
}

void
fmt_free(struct fmt *f)
{
	if (f == NULL)
		return;
	free(f->text);
	free(f->segs);
	free(f);
}

/* ---- rendering ------------------------------------------------------------ */

/* The value cast as conversion 'conv' of length 'len' reads it. */
static uint64_t
fmt_cast(uint64_t v, char conv, enum fmt_len len)
{
	int	 sign = conv == 'd' || conv == 'i';

	switch (len) {
	case FL_CHAR:
		return sign ? (uint64_t)(int64_t)(signed char)v :
		    (uint64_t)(unsigned char)v;
	case FL_SHORT:
		return sign ? (uint64_t)(int64_t)(short)v :
		    (uint64_t)(unsigned short)v;
	case FL_INT:
		return sign ? (uint64_t)(int64_t)(int)v :
		    (uint64_t)(unsigned int)v;
	case FL_64:
	default:
		return v;
	}
}

/* Pad 'len' bytes of s to 'width', on the left unless '-'. */
static void
fmt_pad(struct strbuf *b, const char *s, size_t len, int width, int left)
{
	size_t	 i, pad = width > 0 && (size_t)width > len ?
		    (size_t)width - len : 0;

	if (!left)
		for (i = 0; i < pad; i++)
			strbuf_addc(b, ' ');
	strbuf_add(b, s, len);
	if (left)
		for (i = 0; i < pad; i++)
			strbuf_addc(b, ' ');
}

/* A string argument as %s: escaped, with precision and width. */
static void
fmt_string(struct strbuf *b, const struct fmt_seg *sg, const char *s,
    size_t len, int width, int prec)
{
	struct strbuf	 tmp;

	if (prec >= 0 && (size_t)prec < len)
		len = (size_t)prec;
	if (width <= 0) {
		strbuf_add_escaped(b, s, len, 0);
		return;
	}
	strbuf_init(&tmp);
	strbuf_add_escaped(&tmp, s, len, 0);
	if (tmp.failed)
		b->failed = 1;
	else
		fmt_pad(b, tmp.s != NULL ? tmp.s : "", tmp.len, width,
		    strchr(sg->flags, '-') != NULL);
	strbuf_free(&tmp);
}

/* One integer conversion through snprintf, the spec rebuilt. */
static void
fmt_snprintf(struct strbuf *b, const struct fmt_seg *sg, uint64_t v,
    int width, int prec)
{
	char	 spec[32], out[160];
	char	 conv = sg->conv;
	int	 n;

	if (strchr("aAeEfFgG", conv) != NULL)
		conv = 'd';	/* no floating point in a record */
	n = snprintf(spec, sizeof(spec), "%%%s", sg->flags);
	if (width >= 0)
		n += snprintf(spec + n, sizeof(spec) - (size_t)n, "%d", width);
	if (prec >= 0)
		n += snprintf(spec + n, sizeof(spec) - (size_t)n, ".%d", prec);
	snprintf(spec + n, sizeof(spec) - (size_t)n, "ll%c", conv);
	if (conv == 'd' || conv == 'i')
		snprintf(out, sizeof(out), spec, (long long)v);
	else
		snprintf(out, sizeof(out), spec, (unsigned long long)v);
	strbuf_adds(b, out);
}

/* A pointer as glibc's %p: 0x... or (nil). */
static void
fmt_pointer(struct strbuf *b, const struct fmt_seg *sg, uint64_t v,
    int width)
{
	char	 tmp[24];
	int	 n;

	if (v == 0)
		n = snprintf(tmp, sizeof(tmp), "(nil)");
	else
		n = snprintf(tmp, sizeof(tmp), "0x%llx",
		    (unsigned long long)v);
	fmt_pad(b, tmp, (size_t)n, width, strchr(sg->flags, '-') != NULL);
}

/* An integer argument under an integer conversion. */
static void
fmt_integer(struct strbuf *b, const struct fmt_seg *sg, uint64_t raw,
    int width, int prec)
{
	uint64_t v;
	char	 c;

	if (sg->conv == 'p') {
		fmt_pointer(b, sg, raw, width);
		return;
	}
	if (sg->conv == 'c') {
		c = (char)(unsigned char)raw;
		if (width > 1 && strchr(sg->flags, '-') == NULL)
			fmt_pad(b, "", 0, width - 1, 0);
		strbuf_add_escaped(b, &c, 1, 0);
		if (width > 1 && strchr(sg->flags, '-') != NULL)
			fmt_pad(b, "", 0, width - 1, 0);
		return;
	}
	v = fmt_cast(raw, sg->conv, sg->length);
	if (sg->plain || (width < 0 && prec < 0 && sg->flags[0] == '\0')) {
		switch (sg->conv) {
		case 'd':
		case 'i':
			strbuf_add_i64(b, (int64_t)v);
			return;
		case 'u':
			strbuf_add_u64(b, v);
			return;
		case 'x':
		case 'X':
			strbuf_add_hex(b, v, sg->conv == 'X');
			return;
		default:
			break;
		}
	}
	fmt_snprintf(b, sg, v, width, prec);
}

/*
 * Render with a format.  Contract in format.h.
 */
void
fmt_render(const struct fmt *f, const struct tracedir_event *ev,
    struct strbuf *b)
{
	const struct tracedir_value *v;
	const struct fmt_seg *sg;
	unsigned	 arg = 0;
	int		 width, prec;
	size_t		 i;

	for (i = 0; i < f->nsegs; i++) {
		sg = &f->segs[i];
		if (sg->conv == 0) {
			strbuf_add_escaped(b, sg->text, sg->len, 0);
			continue;
		}
		width = sg->width;
		prec = sg->prec;
		if (width == -2) {
			width = arg < ev->nvalues ?
			    (int)fmt_cast(ev->values[arg].u, 'd', FL_INT) : 0;
			arg++;
			if (width < 0 || width > 9999)
				width = -1;
		}
		if (prec == -2) {
			prec = arg < ev->nvalues ?
			    (int)fmt_cast(ev->values[arg].u, 'd', FL_INT) : -1;
			arg++;
			if (prec > 9999)
				prec = 9999;
		}
		if (arg >= ev->nvalues) {
			strbuf_addc(b, '?');
			arg++;
			continue;
		}
		v = &ev->values[arg++];
		if (sg->conv == 'n')
			continue;
		if (v->decl->type.kind == TRACEDIR_STRING) {
			if (v->is_null)
				fmt_string(b, sg, "(null)", 6, width, prec);
			else
				fmt_string(b, sg, v->s, v->len, width, prec);
		} else if (v->decl->type.kind == TRACEDIR_ARRAY)
			fmt_value_raw(v, b);
		else if (sg->conv == 's') {
			/* An integer where a string was expected. */
			if (v->decl->type.is_signed)
				strbuf_add_i64(b, (int64_t)v->u);
			else
				strbuf_add_u64(b, v->u);
		} else
			fmt_integer(b, sg, v->u, width, prec);
	}
}

/*
 * One value, raw.  Contract in format.h.
 */
void
fmt_value_raw(const struct tracedir_value *v, struct strbuf *b)
{
	const struct tracedir_type *t = &v->decl->type;
	unsigned	 i;
	int		 bit;

	switch (t->kind) {
	case TRACEDIR_STRING:
		if (v->is_null) {
			strbuf_adds(b, "NULL");
			return;
		}
		strbuf_addc(b, '"');
		strbuf_add_escaped(b, v->s, v->len, 1);
		strbuf_addc(b, '"');
		return;
	case TRACEDIR_ARRAY:
		strbuf_addc(b, '[');
		for (i = 0; i < v->len; i++)
			strbuf_addf(b, "%s%u", i > 0 ? ", " : " ",
			    (unsigned char)v->s[i]);
		strbuf_adds(b, " ]");
		return;
	default:
		break;
	}
	switch (t->base) {
	case 16:
		/* Upper case, as babeltrace2 prints them. */
		strbuf_adds(b, "0x");
		strbuf_add_hex(b, v->u, 1);
		break;
	case 8:
		strbuf_addf(b, "0%llo", (unsigned long long)v->u);
		break;
	case 2:
		strbuf_adds(b, "0b");
		for (bit = (int)t->size - 1; bit >= 0; bit--)
			strbuf_addc(b, (v->u >> bit) & 1 ? '1' : '0');
		break;
	default:
		if (t->is_signed)
			strbuf_add_i64(b, (int64_t)v->u);
		else
			strbuf_add_u64(b, v->u);
	}
}

/*
 * An event, raw.  Contract in format.h.
 */
void
fmt_render_raw(const struct tracedir_event *ev, struct strbuf *b)
{
	unsigned	 i;

	if (ev->nvalues == 0)
		return;
	strbuf_adds(b, "{ ");
	for (i = 0; i < ev->nvalues; i++) {
		if (i > 0)
			strbuf_adds(b, ", ");
		strbuf_add_escaped(b, ev->values[i].decl->shown,
		    strlen(ev->values[i].decl->shown), 0);
		strbuf_adds(b, " = ");
		fmt_value_raw(&ev->values[i], b);
	}
	strbuf_adds(b, " }");
}

/* ---- JSON ---------------------------------------------------------------- */

/* Is this C type (as trace-events normalizes it) 32 bits or less? */
static int
fmt_small_int(const char *type)
{
	static const char *const small[] = {
		"int", "unsigned int", "signed int", "unsigned", "signed",
		"short", "short int", "unsigned short", "unsigned short int",
		"signed short", "char", "signed char", "unsigned char",
		"int8_t", "int16_t", "int32_t", "uint8_t", "uint16_t",
		"uint32_t", "pid_t", "uid_t", "gid_t",
	};
	size_t	 i;

	if (strncmp(type, "const ", 6) == 0)
		type += 6;
	for (i = 0; i < sizeof(small) / sizeof(small[0]); i++)
		if (strcmp(type, small[i]) == 0)
			return 1;
	return 0;
}

/*
 * A JSON string.  Contract in format.h.
 */
json_t *
fmt_json_string(const char *s, size_t len, struct strbuf *tmp)
{
	size_t	 i, n;

	for (i = 0; i < len; i += n)
		if ((n = text_utf8_len(s + i, len - i)) == 0)
			break;
	if (i == len)
		return json_stringn(s, len);
	strbuf_reset(tmp);
	for (i = 0; i < len; i += n) {
		if ((n = text_utf8_len(s + i, len - i)) == 0) {
			strbuf_adds(tmp, "\xef\xbf\xbd");
			n = 1;
		} else
			strbuf_add(tmp, s + i, n);
	}
	if (tmp->failed)
		return NULL;
	return json_stringn(tmp->s != NULL ? tmp->s : "", tmp->len);
}

/*
 * One field as JSON.  Contract in format.h.
 */
json_t *
fmt_json_value(const struct tracedir_class *c, unsigned i,
    const struct tracedir_value *v, struct strbuf *tmp)
{
	const struct tracedir_type *t = &v->decl->type;
	const struct tevents_arg *a = c->decl != NULL && i < c->decl->nargs ?
	    &c->decl->args[i] : NULL;
	json_t	*arr;
	char	 buf[24];
	size_t	 k;

	switch (t->kind) {
	case TRACEDIR_STRING:
		if (v->is_null)
			return json_null();
		return fmt_json_string(v->s, v->len, tmp);
	case TRACEDIR_ARRAY:
		if ((arr = json_array()) == NULL)
			return NULL;
		for (k = 0; k < v->len; k++)
			if (json_array_append_new(arr,
			    json_integer((unsigned char)v->s[k])) == -1) {
				json_decref(arr);
				return NULL;
			}
		return arr;
	default:
		break;
	}
	if (a != NULL && a->cls == TEVENTS_BOOL)
		return json_boolean(v->u != 0);
	if ((a != NULL && a->cls == TEVENTS_POINTER) ||
	    (a == NULL && t->base == 16)) {
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v->u);
		return json_string(buf);
	}
	if ((t->size <= 32 || (a != NULL && fmt_small_int(a->type))) &&
	    (t->is_signed ? (int64_t)v->u >= INT32_MIN &&
	    (int64_t)v->u <= INT32_MAX : v->u <= UINT32_MAX))
		return json_integer(t->is_signed ? (json_int_t)(int64_t)v->u :
		    (json_int_t)v->u);
	if (t->is_signed)
		snprintf(buf, sizeof(buf), "%lld", (long long)v->u);
	else
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v->u);
	return json_string(buf);
}
