/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The export framework: 'tracectl export --format NAME -o OUT [FILTERS]
 * DIR...' writes trace directories in another format.  export.c owns
 * the command line (the reader's filters, --pair/--key, -o), the
 * reader, the output file or directory and the loop; each format is
 * one small file, export-NAME.c, that defines one struct export_format
 * and consumes the reader's items (reader.h) in time order:
 *
 *	const struct export_format export_fmt_NAME = {
 *		.name = "NAME",
 *		.help = "one line for --help",
 *		.out_is_dir = 0,	// -o names a file (or '-': stdout)
 *		.priv_size = sizeof(struct NAME_state),
 *		.begin = NAME_begin,	// optional
 *		.item = NAME_item,	// every item that passed the filters
 *		.end = NAME_end,	// optional: finish the output
 *		.free = NAME_free,	// optional: always called
 *	};
 *
 * and adds itself to the table in export.c.  A format keeps what it
 * needs per session and per thread in arrays indexed by
 * reader_session.index and reader_thread.index (x->nsessions,
 * x->nthreads are known at begin), so that it works in memory bounded
 * by the number of threads, never by the number of events.
 *
 * A single-file format writes to x->out (a FILE opened by export.c,
 * stdout for '-o -'); a directory format creates its files under
 * x->dirfd (the -o directory, created if missing) with openat(), and
 * must not write outside it.  Problems go through export_error(): the
 * export goes on, and the exit status is 1.  tracectl-internal.
 */
#ifndef TRACED_CTL_EXPORT_H
#define TRACED_CTL_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pair.h"
#include "reader.h"

struct export;

struct export_format {
	const char	*name;		/* --format NAME */
	const char	*help;		/* one line */
	int		 out_is_dir;	/* -o names a directory */
	size_t		 priv_size;	/* x->priv: zeroed bytes, freed by
					   export.c */
	/* Called once, after the reader found its sessions and threads,
	 * before the first item.  0, or -1 to stop (said with
	 * export_error()). */
	int		(*begin)(struct export *x);
	/* Each item, in time order.  Paired events also come through
	 * pair() when x->pairs has rules.  0, or -1 to stop. */
	int		(*item)(struct export *x, const struct reader_item *it);
	/* A pair closed by the item just given to item().  Optional. */
	int		(*pair)(struct export *x, const struct pair_match *m);
	/* After the last item (not after a stop): finish the output. */
	int		(*end)(struct export *x);
	/* Always, last: release what begin() and item() took. */
	void		(*free)(struct export *x);
};

/* One run of the command. */
struct export {
	const struct export_format *fmt;
	const char	*out_path;	/* -o as given */
	FILE		*out;		/* single-file formats */
	int		 dirfd;		/* directory formats, else -1 */
	struct reader	*reader;
	const struct reader_session *sessions;	/* by index */
	size_t		 nsessions;
	const struct reader_thread *threads;	/* by index */
	size_t		 nthreads;
	const struct pair_rules *pairs;
	void		*priv;		/* fmt->priv_size bytes */
	size_t		 nerrors;
};

/* Say a problem ("tracectl: export: ..."), counted for the status. */
void	export_error(struct export *x, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/*
 * Open OUTDIR/name for writing (created or truncated, mode 0644, no
 * symlink followed) as a stdio stream with a large buffer.  NULL after
 * export_error() on failure.  Directory formats only.
 */
FILE	*export_open(struct export *x, const char *name);

/* Close a stream from export_open(); -1 after export_error() if the
 * data could not be written. */
int	export_close(struct export *x, FILE *f, const char *name);

/* The formats. */
extern const struct export_format export_fmt_chrome;
extern const struct export_format export_fmt_perfetto;
extern const struct export_format export_fmt_simpletrace;
extern const struct export_format export_fmt_uftrace;

#endif /* TRACED_CTL_EXPORT_H */
