/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The rule engine; see rule.h.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rule.h"

int
rule_match(const char *pattern, const char *scope, const char *name)
{
	char buf[RULE_FULL_MAX], *full = buf;
	size_t ls, ln;
	int m;

	if (strchr(pattern, ':') == NULL)
		return fnmatch(pattern, name, 0) == 0;
	if (scope == NULL)
		return 0;
	ls = strlen(scope);
	ln = strlen(name);
	if (ls + ln + 2 > sizeof(buf) &&
	    (full = malloc(ls + ln + 2)) == NULL)
		return 0;		/* out of memory: no match */
	memcpy(full, scope, ls);
	full[ls] = ':';
	memcpy(full + ls + 1, name, ln + 1);
	m = fnmatch(pattern, full, 0) == 0;
	if (full != buf)
		free(full);
	return m;
}

size_t
rule_last(const void *rules, size_t n, size_t stride, size_t off,
    const char *scope, const char *name)
{
	const char *pattern;
	size_t i;

	for (i = n; i > 0; i--) {
		memcpy(&pattern, (const char *)rules + (i - 1) * stride + off,
		    sizeof(pattern));
		if (rule_match(pattern, scope, name))
			return i;
	}
	return 0;
}
