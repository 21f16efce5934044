/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * tracegen's code generator: turns parsed trace-events (proto/tevents.h)
 * into the trace.h a program includes and the trace.c it links, for
 * one or more backends.
 * Internal to tracegen and its unit test; main.c does the I/O and
 * options, gen.c only writes to the FILE it is given.  Single-threaded.
 */
#ifndef TRACED_TRACEGEN_GEN_H
#define TRACED_TRACEGEN_GEN_H

#include <stddef.h>
#include <stdio.h>

struct tevents_file;

/* Longest provider name: it travels in a char[TRACED_NAME_MAX] (wire.h). */
#define GEN_PROVIDER_MAX	63

/*
 * Is 'name' usable as a provider name: a C identifier of at most
 * GEN_PROVIDER_MAX bytes?  Returns 1 or 0.
 */
int	gen_provider_valid(const char *name);

/*
 * The default provider name for the trace-events file 'path': the name
 * of its directory if the file is called "trace-events", else its base
 * name without extension; made into a C identifier of at most
 * GEN_PROVIDER_MAX bytes, "app" if nothing is left.  "." and ".." are
 * resolved with realpath(3).  Writes it into buf (size bytes, at least
 * GEN_PROVIDER_MAX + 1) and returns 0, or -1 if size is too small.
 */
int	gen_provider_from_path(const char *path, char *buf, size_t size);

/* Backends, chosen at generation time; any set of them (tracegen(1)). */
#define GEN_BACKEND_TRACED	0x1u	/* records into the ring (default) */
#define GEN_BACKEND_LOG		0x2u	/* prints enabled events on stderr */
#define GEN_BACKEND_NOP		0x4u	/* nothing, arguments type-checked */
#define GEN_BACKEND_DTRACE	0x8u	/* SystemTap SDT probes */

/* What to generate, besides the events. */
struct gen_opts {
	const char	*provider;	/* a valid provider name */
	const char	*srcname;	/* the trace-events path, for the
					   banner and #line */
	const char	*outname;	/* the generated file's name, for the
					   #line after each event's lines;
					   NULL: no #line at all */
	unsigned	 backends;	/* GEN_BACKEND_*, at least one */
};

/*
 * Parse a comma-separated list of backend names ("traced,log") into
 * *out.  Returns 0, or -1 with the reason in err.
 */
int	gen_backends_parse(const char *list, unsigned *out, char *err,
	    size_t errlen);

/*
 * Write the header (trace.h) for the events of 'f' to 'out'.  Returns
 * 0, or -1 if writing to 'out' failed (errno set by stdio).
 */
int	gen_header(FILE *out, const struct tevents_file *f,
	    const struct gen_opts *o);

/*
 * Write the source (trace.c): for the traced and log backends the
 * provider, its state array and its description, registered from a
 * constructor; for dtrace the probes' semaphores.  Same result as
 * gen_header().
 */
int	gen_source(FILE *out, const struct tevents_file *f,
	    const struct gen_opts *o);

#endif /* TRACED_TRACEGEN_GEN_H */
