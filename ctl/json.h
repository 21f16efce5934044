/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The little JSON tracectl writes by hand: a string value, for the
 * document it builds around the daemon's reply.  tracectl-internal; no
 * state, any thread.
 */
#ifndef TRACED_CTL_JSON_H
#define TRACED_CTL_JSON_H

#include <stddef.h>
#include <stdio.h>

/*
 * Write s[0..len) to f as a JSON string, quotes included: '"', '\\' and
 * control characters (NUL included) escaped, and each byte that is not
 * part of valid UTF-8 written as U+FFFD.  Errors show in ferror(f).
 */
void	json_write_string(FILE *f, const char *s, size_t len);

#endif /* TRACED_CTL_JSON_H */
