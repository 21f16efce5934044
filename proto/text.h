/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Text that crosses from a client into everything the daemon writes:
 * names, format strings, a process's comm.  Checked once, at the door,
 * for what every later writer needs (a CTF metadata file, JSON, a log
 * line, a terminal): valid UTF-8 (no overlong forms, surrogates or code
 * points past U+10FFFF) and no control characters.  Also the small
 * helpers every program's messages share: the edit distance behind
 * "did you mean", and the one shape of an error buffer.  Proto: pure,
 * no allocation, any thread; the fuzz targets cover it.
 */
#ifndef TRACED_PROTO_TEXT_H
#define TRACED_PROTO_TEXT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Length of the valid UTF-8 sequence at s[0, n) (1 to 4), or 0 if
 * there is none there.  n >= 1.
 */
size_t	text_utf8_len(const char *s, size_t n);

/*
 * Is s[0, n) valid UTF-8 without control characters (C0, DEL, C1)?
 * Returns 1, or 0 with the offset of the first bad byte in *bad (when
 * bad is not NULL).
 */
int	text_valid(const char *s, size_t n, size_t *bad);

/*
 * Copy the NUL-terminated s into dst (size > 0) as valid text: each
 * byte that is not part of valid, printable UTF-8 becomes "\xNN", and a
 * backslash "\\", so that nothing is lost and the result reads back
 * unambiguously.  Cut short at a whole character.  Returns dst.
 */
char	*text_escape(char *dst, size_t size, const char *s);

/*
 * Make s[0, n) printable, valid UTF-8 in place: each control character
 * and each byte that is not part of valid UTF-8 becomes '?'.  For text
 * read from the system about a process (its executable's path, its
 * command line) before it is kept and shown.
 */
void	text_clean(char *s, size_t n);

/* The longest words text_distance() compares. */
#define TEXT_DISTANCE_MAX	64

/*
 * Edit distance between a[0, n) and the NUL-terminated b: insertions,
 * deletions, substitutions and swaps of two neighbours, each 1; or
 * max + 1 if it is more than 'max', or either word is longer than
 * TEXT_DISTANCE_MAX.  For "did you mean" suggestions.
 */
size_t	text_distance(const char *a, size_t n, const char *b, size_t max);

/*
 * The one shape of an error buffer: format the reason into err (size
 * bytes; nothing when err is NULL or size 0) and return -1, so that a
 * failing function says why and fails in one statement:
 *
 *	return text_errf(err, errsize, "no such key '%s'", key);
 */
/*
 * Parse a duration: a decimal number with up to 9 decimals and a unit,
 * ns, us, ms, s (or none), m or min, h ("2s", "1.5ms", "300us").  0 and
 * the nanoseconds in *ns, or -1 (not one, or past INT64_MAX ns).
 */
int	text_parse_duration(const char *s, int64_t *ns);

int	text_errf(char *err, size_t size, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

#endif /* TRACED_PROTO_TEXT_H */
