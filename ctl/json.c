/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * JSON for tracectl --json.  tracectl does not build or interpret JSON
 * values: the daemon formats each item, tracectl wraps the items in one
 * document.  So all it needs is to write its own strings (the reply's
 * message) and to check each item it copies verbatim.  The checker is a
 * recursive-descent recognizer of RFC 8259 with a depth limit; it
 * builds nothing and allocates nothing.  Strings are checked to be
 * valid UTF-8 (no overlong forms, surrogates or code points past
 * U+10FFFF), which is what a strict reader of the document will demand.
 */
#include <string.h>

#include "json.h"
#include "text.h"

/* A recognizer's position in the text. */
struct json_in {
	const unsigned char	*p;	/* next byte */
	const unsigned char	*end;
	int			 depth;	/* arrays and objects open */
};

static int	json_value(struct json_in *);

/*
 * Write a JSON string.  Contract in json.h.
 */
void
json_write_string(FILE *f, const char *s, size_t len)
{
	size_t	i, n;

	putc('"', f);
	for (i = 0; i < len; i += n) {
		unsigned char c = (unsigned char)s[i];

		n = text_utf8_len(s + i, len - i);
		if (n == 0) {
			fputs("\\ufffd", f);
			n = 1;
		} else if (n > 1)
			fwrite(s + i, 1, n, f);
		else if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			putc(c, f);
	}
	putc('"', f);
}

static void
json_ws(struct json_in *in)
{
	while (in->p < in->end && (*in->p == ' ' || *in->p == '\t' ||
	    *in->p == '\n' || *in->p == '\r'))
		in->p++;
}

/* Consume the literal 'word' ("true", "null", ...). */
static int
json_word(struct json_in *in, const char *word)
{
	size_t	n = strlen(word);

	if ((size_t)(in->end - in->p) < n || memcmp(in->p, word, n) != 0)
		return 0;
	in->p += n;
	return 1;
}

static int
json_digits(struct json_in *in)
{
	const unsigned char	*start = in->p;

	while (in->p < in->end && *in->p >= '0' && *in->p <= '9')
		in->p++;
	return in->p > start;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int
json_number(struct json_in *in)
{
	if (in->p < in->end && *in->p == '-')
		in->p++;
	if (in->p < in->end && *in->p == '0')
		in->p++;
	else if (!json_digits(in))
		return 0;
	if (in->p < in->end && *in->p == '.') {
		in->p++;
		if (!json_digits(in))
			return 0;
	}
	if (in->p < in->end && (*in->p == 'e' || *in->p == 'E')) {
		in->p++;
		if (in->p < in->end && (*in->p == '+' || *in->p == '-'))
			in->p++;
		if (!json_digits(in))
			return 0;
	}
	return 1;
}

static int
json_hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	    (c >= 'A' && c <= 'F');
}

static int
json_string(struct json_in *in)
{
	size_t	n;
	int	i;

	if (in->p >= in->end || *in->p != '"')
		return 0;
	in->p++;
	while (in->p < in->end) {
		unsigned char c = *in->p;

		if (c == '"') {
			in->p++;
			return 1;
		}
		if (c < 0x20)
			return 0;
		if (c == '\\') {
			if (in->end - in->p < 2)
				return 0;
			c = in->p[1];
			in->p += 2;
			if (c == 'u') {
				if (in->end - in->p < 4)
					return 0;
				for (i = 0; i < 4; i++, in->p++)
					if (!json_hex(*in->p))
						return 0;
			} else if (strchr("\"\\/bfnrt", c) == NULL || c == '\0')
				return 0;
			continue;
		}
		n = text_utf8_len((const char *)in->p,
		    (size_t)(in->end - in->p));
		if (n == 0)
			return 0;
		in->p += n;
	}
	return 0;
}

/* '[' or '{' already seen and consumed; 'close' ends the container. */
static int
json_container(struct json_in *in, unsigned char close)
{
	if (++in->depth > JSON_DEPTH_MAX)
		return 0;
	json_ws(in);
	if (in->p < in->end && *in->p == close) {
		in->p++;
		in->depth--;
		return 1;
	}
	for (;;) {
		if (close == '}') {
			if (!json_string(in))
				return 0;
			json_ws(in);
			if (in->p >= in->end || *in->p != ':')
				return 0;
			in->p++;
		}
		if (!json_value(in))
			return 0;
		json_ws(in);
		if (in->p >= in->end)
			return 0;
		if (*in->p == close) {
			in->p++;
			in->depth--;
			return 1;
		}
		if (*in->p != ',')
			return 0;
		in->p++;
		json_ws(in);
	}
}

/* One value, with the white space before and after it. */
static int
json_value(struct json_in *in)
{
	int	ok;

	json_ws(in);
	if (in->p >= in->end)
		return 0;
	switch (*in->p) {
	case '{':
		in->p++;
		ok = json_container(in, '}');
		break;
	case '[':
		in->p++;
		ok = json_container(in, ']');
		break;
	case '"':
		ok = json_string(in);
		break;
	case 't':
		ok = json_word(in, "true");
		break;
	case 'f':
		ok = json_word(in, "false");
		break;
	case 'n':
		ok = json_word(in, "null");
		break;
	default:
		ok = json_number(in);
		break;
	}
	json_ws(in);
	return ok;
}

/*
 * Check one JSON value.  Contract in json.h.
 */
int
json_valid(const char *s, size_t len)
{
	struct json_in	in;

	in.p = (const unsigned char *)s;
	in.end = in.p + len;
	in.depth = 0;
	return json_value(&in) && in.p == in.end;
}
