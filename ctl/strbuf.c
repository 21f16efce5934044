/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The text buffer tracectl's writers build their output in: print's
 * lines, the exports' JSON and protobuf messages, the error messages
 * escaped for a terminal.  It doubles as it grows, from 256 bytes; once
 * it has memory its text is kept NUL-terminated, so that it can go to
 * any C string function as it is.
 *
 * Appending never fails out loud: the first allocation that fails
 * latches 'failed' and every later append does nothing, so a writer
 * appends a whole line unchecked and tests 'failed' once before it
 * writes the line out.  The numbers are formatted by hand, not by
 * printf, for they are on every line print writes.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "text.h"

/*
 * An empty buffer.  Contract in strbuf.h.
 */
void
strbuf_init(struct strbuf *b)
{
	memset(b, 0, sizeof(*b));
}

/*
 * Free the text.  Contract in strbuf.h.
 */
void
strbuf_free(struct strbuf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

/*
 * Empty the buffer, keeping its memory.  Contract in strbuf.h.
 */
void
strbuf_reset(struct strbuf *b)
{
	b->len = 0;
	if (b->s != NULL)
		b->s[0] = '\0';
}

/*
 * Room for n more bytes and the NUL.  Contract in strbuf.h.
 */
int
strbuf_room(struct strbuf *b, size_t n)
{
	size_t	 ncap;
	char	*ns;

	if (b->failed)
		return -1;
	if (b->cap - b->len > n)
		return 0;
	ncap = b->cap != 0 ? b->cap : 256;
	while (ncap - b->len <= n) {
		if (ncap > SIZE_MAX / 2) {
			b->failed = 1;
			return -1;
		}
		ncap *= 2;
	}
	if ((ns = realloc(b->s, ncap)) == NULL) {
		b->failed = 1;
		return -1;
	}
	b->s = ns;
	b->cap = ncap;
	b->s[b->len] = '\0';
	return 0;
}

/*
 * Append bytes.  Contract in strbuf.h.
 */
void
strbuf_add(struct strbuf *b, const char *s, size_t len)
{
	if (strbuf_room(b, len) == -1)
		return;
	memcpy(b->s + b->len, s, len);
	b->len += len;
	b->s[b->len] = '\0';
}

/*
 * Append a C string.  Contract in strbuf.h.
 */
void
strbuf_adds(struct strbuf *b, const char *s)
{
	strbuf_add(b, s, strlen(s));
}

/*
 * Append one byte.  Contract in strbuf.h.
 */
void
strbuf_addc(struct strbuf *b, char c)
{
	if (strbuf_room(b, 1) == -1)
		return;
	b->s[b->len++] = c;
	b->s[b->len] = '\0';
}

/*
 * Append printf output.  Contract in strbuf.h.
 */
void
strbuf_addf(struct strbuf *b, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	if (strbuf_room(b, 64) == -1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = 1;
		return;
	}
	if ((size_t)n >= b->cap - b->len) {
		if (strbuf_room(b, (size_t)n) == -1)
			return;
		va_start(ap, fmt);
		vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

/*
 * Append a decimal number, by hand (no printf).  Contract in strbuf.h.
 */
void
strbuf_add_u64(struct strbuf *b, uint64_t v)
{
	char	 tmp[24], *p = tmp + sizeof(tmp);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	strbuf_add(b, p, (size_t)(tmp + sizeof(tmp) - p));
}

/*
 * Append a signed decimal number.  Contract in strbuf.h.
 */
void
strbuf_add_i64(struct strbuf *b, int64_t v)
{
	if (v < 0) {
		strbuf_addc(b, '-');
		strbuf_add_u64(b, (uint64_t)0 - (uint64_t)v);
	} else
		strbuf_add_u64(b, (uint64_t)v);
}

/*
 * Append a hexadecimal number.  Contract in strbuf.h.
 */
void
strbuf_add_hex(struct strbuf *b, uint64_t v, int upper)
{
	const char	*digits = upper ? "0123456789ABCDEF" :
			    "0123456789abcdef";
	char		 tmp[16], *p = tmp + sizeof(tmp);

	do {
		*--p = digits[v & 15];
		v >>= 4;
	} while (v != 0);
	strbuf_add(b, p, (size_t)(tmp + sizeof(tmp) - p));
}

/*
 * Escaped text for a terminal.  Contract in strbuf.h.
 */
void
strbuf_add_escaped(struct strbuf *b, const char *s, size_t len, int quote)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t		 i, n, run;

	for (i = 0; i < len; i += n) {
		/* Runs of plain ASCII go in one copy. */
		for (run = i; run < len && u[run] >= 0x20 && u[run] < 0x7f &&
		    u[run] != '\\' && !(quote && u[run] == '"'); run++)
			;
		if (run > i) {
			strbuf_add(b, s + i, run - i);
			n = run - i;
			continue;
		}
		n = text_utf8_len(s + i, len - i);
		if (n > 1 && !(n == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0)) {
			strbuf_add(b, s + i, n);
			continue;
		}
		n = 1;
		switch (u[i]) {
		case '\\':
			strbuf_adds(b, "\\\\");
			break;
		case '"':
			strbuf_adds(b, "\\\"");
			break;
		case '\n':
			strbuf_adds(b, "\\n");
			break;
		case '\t':
			strbuf_adds(b, "\\t");
			break;
		case '\r':
			strbuf_adds(b, "\\r");
			break;
		default:
			strbuf_addf(b, "\\x%02x", u[i]);
		}
	}
}
