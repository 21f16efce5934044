/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The little JSON tracectl needs: writing a string value, and checking
 * that a reply line from the daemon is one well-formed JSON value
 * before it goes into the document tracectl prints, so that a broken or
 * hostile daemon cannot make a script parse garbage.  tracectl-internal;
 * no state, any thread.
 */
#ifndef TRACED_CTL_JSON_H
#define TRACED_CTL_JSON_H

#include <stddef.h>
#include <stdio.h>

/* Deepest nesting of arrays and objects json_valid() accepts. */
#define JSON_DEPTH_MAX	64

/*
 * Write s[0..len) to f as a JSON string, quotes included: '"', '\\' and
 * control characters (NUL included) escaped, and each byte that is not
 * part of valid UTF-8 written as U+FFFD.  Errors show in ferror(f).
 */
void	json_write_string(FILE *f, const char *s, size_t len);

/*
 * Is s[0..len) exactly one JSON value (RFC 8259), with optional white
 * space around it, strings in valid UTF-8 and at most JSON_DEPTH_MAX
 * levels of nesting?  Returns 1 or 0.
 */
int	json_valid(const char *s, size_t len);

#endif /* TRACED_CTL_JSON_H */
