/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * tracegen's code generator: turns parsed trace-events (proto/tevents.h)
 * into the trace.h a program includes and the trace.c it links.
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

/*
 * Write the header (trace.h) for the events of 'f' under provider
 * 'provider' (a valid name) to 'out'.  'srcname' is the trace-events
 * path named in the "Generated from" comment.  Returns 0, or -1 if
 * writing to 'out' failed (errno set by stdio).
 */
int	gen_header(FILE *out, const struct tevents_file *f,
	    const char *provider, const char *srcname);

/*
 * Write the source (trace.c) defining the provider, its state array
 * and its description, and registering it from a constructor.  Same
 * arguments and result as gen_header().
 */
int	gen_source(FILE *out, const struct tevents_file *f,
	    const char *provider, const char *srcname);

#endif /* TRACED_TRACEGEN_GEN_H */
