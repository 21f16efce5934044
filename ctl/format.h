/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Rendering an event for people: with the format string its
 * trace-events line gives ("job %d done in %" PRIu64 " ns"), as the
 * program's printf would have, or as "{ name = value, ... }" when it
 * has none, into a text buffer (strbuf.h).
 *
 * A format comes from a trace file, so it is hostile like the rest: a
 * conversion that does not fit its argument is rendered from the
 * argument's own type, a missing argument as "?", and nothing in a
 * format can make the renderer read past its arguments or write past
 * its buffer.  Strings are written with the bytes that would drive a
 * terminal escaped.  tracectl-internal; no global state.
 */
#ifndef TRACED_CTL_FORMAT_H
#define TRACED_CTL_FORMAT_H

#include <stddef.h>

struct strbuf;
struct tracedir_class;
struct tracedir_event;
struct tracedir_value;

/* A compiled format string. */
struct fmt;

/*
 * The format of class c, compiled, or NULL when c has no declaration,
 * an empty format, or one that does not compile: render it raw then.
 * Free with fmt_free().  Sets *nomem when NULL is for lack of memory.
 */
struct fmt	*fmt_compile(const struct tracedir_class *c, int *nomem);
void		 fmt_free(struct fmt *f);

/*
 * Append ev rendered with f (which must be its class's) to b, as
 * printf would: each conversion takes the next argument, cast to the
 * conversion's length (%d an int, %" PRIx64 " 64 bits...), %s a string
 * (a NULL pointer shows "(null)"), %p a pointer ("(nil)" for 0).
 */
void	fmt_render(const struct fmt *f, const struct tracedir_event *ev,
	    struct strbuf *b);

/*
 * Append ev as "{ name = value, ... }" (nothing for an event without
 * fields): integers in the base the metadata gives, strings quoted and
 * escaped, a NULL string as NULL.
 */
void	fmt_render_raw(const struct tracedir_event *ev, struct strbuf *b);

/* Append one value as fmt_render_raw() shows it. */
void	fmt_value_raw(const struct tracedir_value *v, struct strbuf *b);

/*
 * Field i of class c as a JSON value (jansson; a new reference, NULL
 * when out of memory): a string argument as a string (bytes that are
 * not UTF-8 as U+FFFD), NULL as null; an integer of 32 bits or less (as
 * its trace-events type says) as a number; a 64-bit one as a decimal
 * string, which jq and JavaScript cannot round; a pointer as a "0x..."
 * string; a bool as true or false.  tmp is scratch space.
 */
struct json_t;
struct json_t	*fmt_json_value(const struct tracedir_class *c, unsigned i,
		    const struct tracedir_value *v, struct strbuf *tmp);

/* s[0..len) as a JSON string, invalid UTF-8 as U+FFFD; NULL: no memory. */
struct json_t	*fmt_json_string(const char *s, size_t len,
		    struct strbuf *tmp);

/*
 * The format string of a trace-events declaration ("a %d" PRIx64 ...,
 * as written, or "fmt_trans", "fmt") as the one C string it stands
 * for, PRI macros expanded, in a new string; NULL if it does not read
 * as C string literals and PRI macros (or no memory).
 */
char	*fmt_unquote(const char *written);

#endif /* TRACED_CTL_FORMAT_H */
