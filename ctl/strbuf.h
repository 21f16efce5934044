/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * A growing NUL-terminated string that every text writer of tracectl
 * (print, stats, the exports, their error messages) builds its output
 * in.  Appends never fail out loud: the first failed allocation latches
 * 'failed' and later appends do nothing, so a writer checks once, before
 * it writes the text out.  tracectl-internal; one buffer per thread.
 */
#ifndef TRACED_CTL_STRBUF_H
#define TRACED_CTL_STRBUF_H

#include <stddef.h>
#include <stdint.h>

/* A growing NUL-terminated string; 'failed' latches the first ENOMEM. */
struct strbuf {
	char		*s;		/* owned; NULL until the first append */
	size_t		 len;		/* bytes before the NUL */
	size_t		 cap;		/* bytes allocated */
	int		 failed;
};

/* An empty buffer that owns nothing yet. */
void	strbuf_init(struct strbuf *b);

/* Free the text and make b empty again (it may be reused). */
void	strbuf_free(struct strbuf *b);

/* Empty the text, keeping the memory (and 'failed'). */
void	strbuf_reset(struct strbuf *b);

/*
 * Make room for n more bytes and the NUL (b->s is then allocated, even
 * if empty).  Returns 0, or -1 when out of memory ('failed' latched).
 */
int	strbuf_room(struct strbuf *b, size_t n);

/* Append s[0..len), which may hold NULs. */
void	strbuf_add(struct strbuf *b, const char *s, size_t len);

/* Append the C string s. */
void	strbuf_adds(struct strbuf *b, const char *s);

/* Append the byte c. */
void	strbuf_addc(struct strbuf *b, char c);

/* Append what printf(fmt, ...) would print. */
void	strbuf_addf(struct strbuf *b, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* Append v in decimal, or in hexadecimal digits (upper or lower case). */
void	strbuf_add_u64(struct strbuf *b, uint64_t v);
void	strbuf_add_i64(struct strbuf *b, int64_t v);
void	strbuf_add_hex(struct strbuf *b, uint64_t v, int upper);

/*
 * Append s[0..len) for a terminal: valid UTF-8 and printable ASCII
 * pass; '\\' (and '"' when 'quote') are escaped; every other byte
 * becomes a C escape (\n, \t, \xNN).
 */
void	strbuf_add_escaped(struct strbuf *b, const char *s, size_t len,
	    int quote);

#endif /* TRACED_CTL_STRBUF_H */
