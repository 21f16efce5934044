/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The trace-events parser: QEMU's syntax for declaring trace events,
 *
 *     # comment
 *     [disable] [vcpu] name(type arg, ...) ["format" [PRIx64 "more"]]
 *     name(type arg, ...) "translation-time format", "format"
 *
 * parsed into a list of events whose arguments are classified by how
 * they travel in a ring record (proto/ring.h): every integer type,
 * bool and pointer widened to 64 bits, 'const char *' as a string.
 * It accepts what QEMU's tracetool accepts and refuses what tracetool
 * refuses or what would fail later, in the compiler (an unknown type
 * word, a macro other than PRI*); trace-events(5) lists both.
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

#define TEVENTS_DECL_ARGS_MAX	10	/* declared, as in tracetool */
#define TEVENTS_ARGS_MAX	(TEVENTS_DECL_ARGS_MAX + 1) /* + vcpu's */
#define TEVENTS_NAME_MAX	127	/* event and argument names */
#define TEVENTS_TYPE_MAX	127
#define TEVENTS_FMT_MAX		1023
#define TEVENTS_EVENTS_MAX	65536u	/* events in one text */

/*
 * The 'vcpu' property gives an event an implicit first argument, the
 * virtual CPU, as QEMU does: args[0] is 'void *__cpu', and the event is
 * printed with "cpu=%p " before its format.
 */
#define TEVENTS_VCPU_ARG	"__cpu"
#define TEVENTS_VCPU_FMT	"\"cpu=%p \""	/* a C string literal */

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
	char		*fmt;		/* the format, as C tokens with one
					   space between them: "x=%d " PRIx64
					   ...; "" when the event has none */
	char		*fmt_trans;	/* the first of two formats ("fmt_trans",
					   "fmt"), else NULL; fmt is the one
					   printed */
	unsigned	 line;		/* 1-based line in the parsed text */
	unsigned	 disabled;	/* 'disable' property: off by default */
	unsigned	 vcpu;		/* 'vcpu' property: args[0] is implicit */
	unsigned	 nargs;		/* vcpu's included */
	struct tevents_arg args[TEVENTS_ARGS_MAX];
};

struct tevents_file {
	struct tevents_event *events;	/* owned */
	size_t		 nevents;
};

/*
 * Parse 'len' bytes of trace-events text ('text' need not be
 * NUL-terminated; unless empty, it ends with a newline).  On success
 * fill *out (release with tevents_free()) and return 0.  On error return
 * -1 and write into 'err' a message of the form "FILE:LINE:COL: what is
 * wrong; the fix", with 'filename' as FILE.
 */
int	tevents_parse(const char *text, size_t len, const char *filename,
	    struct tevents_file *out, char *err, size_t errlen);

void	tevents_free(struct tevents_file *f);

/*
 * Write 'ev' as one normalized trace-events line, newline included,
 * into buf (NUL-terminated).  Parsing the line gives 'ev' back (the
 * vcpu argument is implicit: the line has the property, not the
 * argument).  Returns the length it needed, like snprintf.
 */
int	tevents_format(const struct tevents_event *ev, char *buf,
	    size_t size);

#endif /* TRACED_PROTO_TEVENTS_H */
