/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The rule engine: what a pattern of 'tracectl trace-event',
 * 'trace-func', 'tracer' or a process's own rules (traced_events_set())
 * matches, and which of a list of rules decides.  The daemon and
 * libtraced both use it, so that a rule means the same thing on both
 * sides of the socket.
 *
 * A pattern is a glob (fnmatch(3), no flags).  One with a ':' matches
 * "scope:name" (an event's "provider:event", a function's
 * "object:function"); one without matches the name alone.  Rules apply
 * in order and the last one that matches decides, like QEMU's --trace.
 * Proto: pure, no allocation but for names past RULE_FULL_MAX, any
 * thread.
 */
#ifndef TRACED_PROTO_RULE_H
#define TRACED_PROTO_RULE_H

#include <stddef.h>

/* A rule of the daemon: a pattern and what it sets (on or off). */
struct rule {
	char		*pattern;	/* owned by the list that holds it */
	int		 on;
};

/* "scope:name" up to this long is matched without an allocation. */
#define RULE_FULL_MAX	1024

/*
 * Does 'pattern' match 'name' of 'scope' (scope may be NULL: the name
 * has none, and only a pattern without ':' can match it)?
 */
int	rule_match(const char *pattern, const char *scope, const char *name);

/*
 * Which of n rules decides 'name' of 'scope': the number of the last
 * one whose pattern matches, plus one, or 0 if none does.  Rule i's
 * pattern is the char * at (char *)rules + i * stride + off: use
 * RULE_LAST() on an array of structs.
 */
size_t	rule_last(const void *rules, size_t n, size_t stride, size_t off,
	    const char *scope, const char *name);

#define RULE_LAST(rules, n, member, scope, name)			\
	rule_last((rules), (n), sizeof(*(rules)),			\
	    __builtin_offsetof(__typeof__(*(rules)), member), (scope), (name))

#endif /* TRACED_PROTO_RULE_H */
