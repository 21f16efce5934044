/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The trace-events parser: QEMU's syntax for declaring trace events,
 *
 *     # comment
 *     [disable] name(type arg, type arg, ...) "format" [PRIx64 "more"]
 *
 * parsed into a list of events whose arguments are classified by how
 * they travel in a ring record (proto/ring.h): every integer type,
 * bool and pointer widened to 64 bits, 'const char *' as a string.
 *
 * Used by tracegen (on the developer's file) and by the daemon (on the
 * normalized text a process registers, which is hostile input).  Pure:
 * no I/O; allocates with malloc and frees with tevents_free().  Safe
 * from any thread on distinct objects.
 */
#ifndef TRACED_PROTO_TEVENTS_H
#define TRACED_PROTO_TEVENTS_H

#include <stddef.h>
#include <stdint.h>

#define TEVENTS_ARGS_MAX	32
#define TEVENTS_NAME_MAX	127	/* event and argument names */
#define TEVENTS_TYPE_MAX	127
#define TEVENTS_FMT_MAX		1023
#define TEVENTS_EVENTS_MAX	65536u	/* events in one text */

/* How an argument is stored in a record and described in CTF. */
enum tevents_class {
	TEVENTS_SIGNED,		/* any signed integer, as int64 */
	TEVENTS_UNSIGNED,	/* any unsigned integer (and unknown
				   integer typedefs), as uint64 */
	TEVENTS_POINTER,	/* any pointer but char *, as uint64, hex */
	TEVENTS_BOOL,		/* bool / _Bool, as uint64 0 or 1 */
	TEVENTS_STRING,		/* const char * / char *: bytes + NUL */
};

struct tevents_arg {
	char		*type;		/* normalized C type: "const char *" */
	char		*name;
	enum tevents_class cls;
};

struct tevents_event {
	char		*name;
	char		*fmt;		/* the format as written after the
					   argument list: "x=%d " PRIx64 ... */
	unsigned	 line;		/* 1-based line in the parsed text */
	unsigned	 disabled;	/* 'disable' property: off by default */
	unsigned	 nargs;
	struct tevents_arg args[TEVENTS_ARGS_MAX];
};

struct tevents_file {
	struct tevents_event *events;	/* owned */
	size_t		 nevents;
};

/*
 * Parse 'len' bytes of trace-events text ('text' need not be
 * NUL-terminated).  On success fill *out (release with tevents_free())
 * and return 0.  On error return -1 and write into 'err' a message of
 * the form "FILE:LINE:COL: what is wrong", with 'filename' as FILE.
 */
int	tevents_parse(const char *text, size_t len, const char *filename,
	    struct tevents_file *out, char *err, size_t errlen);

void	tevents_free(struct tevents_file *f);

/*
 * Write 'ev' as one normalized trace-events line, newline included,
 * into buf (NUL-terminated).  Parsing the line gives 'ev' back.
 * Returns the length it needed, like snprintf.
 */
int	tevents_format(const struct tevents_event *ev, char *buf,
	    size_t size);

#endif /* TRACED_PROTO_TEVENTS_H */
