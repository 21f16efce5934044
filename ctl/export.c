/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * tracectl export: its own options (--format, -o; the rest of the
 * command line is readcmd.c's), the output, and the loop that hands the
 * reader's items to one format (export.h).  The formats are in
 * export-*.c; this file knows them only through their table.
 *
 * A single-file output is written under a temporary name in the same
 * directory and renamed over OUT once complete, so that a viewer never
 * opens half a file and a failed export leaves what was there before;
 * '-o -' writes to stdout.  A single-file output whose name ends in
 * ".gz" is compressed with zlib as it is written (gzip's format, which
 * the Perfetto UI, speedscope and zcat open).  A directory output is
 * created if missing (its parent must exist) and its files are made
 * with openat() relative to it.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "export.h"
#include "readcmd.h"
#include "strbuf.h"
#include "tracectl.h"

#define EXPORT_BUF	(1u << 20)

static const struct export_format *const export_formats[] = {
	&export_fmt_chrome,
	&export_fmt_perfetto,
	&export_fmt_simpletrace,
	&export_fmt_uftrace,
};
#define EXPORT_NFORMATS	(sizeof(export_formats) / sizeof(export_formats[0]))

static void
export_help(void)
{
	size_t	 i;

	fputs("\nWrite the traces under each DIR in another format.\n\n"
	    "formats:\n", stdout);
	for (i = 0; i < EXPORT_NFORMATS; i++)
		printf("  %-12s %s%s\n", export_formats[i]->name,
		    export_formats[i]->help, export_formats[i]->out_is_dir ?
		    " (-o names a directory)" : "");
	fputs("\n"
	    "  -f, --format FORMAT  the output format\n"
	    "  -o, --output OUT     the file to write ('-': stdout), or the "
	    "directory\n", stdout);
}

/*
 * Say a problem.  Contract in export.h.
 */
void
export_error(struct export *x, const char *fmt, ...)
{
	struct strbuf	 b;
	char		 msg[1024];
	va_list		 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (x != NULL)
		x->nerrors++;
	strbuf_init(&b);
	strbuf_add_escaped(&b, msg, strlen(msg), 0);
	fflush(stdout);
	fprintf(stderr, "tracectl: export: %s\n",
	    b.s != NULL ? b.s : "out of memory");
	strbuf_free(&b);
}

static void
export_reader_error(void *arg, const char *msg)
{
	struct strbuf	 b;

	(void)arg;
	strbuf_init(&b);
	strbuf_add_escaped(&b, msg, strlen(msg), 0);
	fflush(stdout);
	fprintf(stderr, "tracectl: %s\n", b.s != NULL ? b.s : "out of memory");
	strbuf_free(&b);
}

/*
 * A file of the output directory.  Contract in export.h.
 */
FILE *
export_open(struct export *x, const char *name)
{
	FILE	*f;
	int	 fd;

	fd = openat(x->dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0644);
	if (fd == -1) {
		export_error(x, "%s/%s: %s", x->out_path, name,
		    strerror(errno));
		return NULL;
	}
	if ((f = fdopen(fd, "w")) == NULL) {
		export_error(x, "%s/%s: %s", x->out_path, name,
		    strerror(errno));
		close(fd);
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, 64u << 10);
	return f;
}

/*
 * Close a file of the output directory.  Contract in export.h.
 */
int
export_close(struct export *x, FILE *f, const char *name)
{
	int	 bad;

	bad = fflush(f) == EOF || ferror(f);
	if (fclose(f) == EOF)
		bad = 1;
	if (bad) {
		export_error(x, "%s/%s: cannot write: %s", x->out_path, name,
		    strerror(errno));
		return -1;
	}
	return 0;
}

static const struct export_format *
export_find(const char *name)
{
	size_t	 i;

	for (i = 0; i < EXPORT_NFORMATS; i++)
		if (strcmp(export_formats[i]->name, name) == 0)
			return export_formats[i];
	return NULL;
}

/* Does the directory dirfd hold nothing? */
static int
dir_empty(int dirfd)
{
	struct dirent *de;
	DIR *d;
	int fd, empty = 1;

	if ((fd = dup(dirfd)) == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return 0;
	}
	while (empty && (de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			empty = 0;
	closedir(d);
	return empty;
}

/*
 * The output directory of a format that writes one: made here, or one
 * that is there already only if it is ours and empty.  Never a symlink
 * (another user's, planted at the path in /tmp, would lead root's
 * export into a directory of its choosing), never into someone else's
 * directory or over files already there.
 */
static int
export_open_dir(struct export *x)
{
	struct stat st;
	int made;

	made = mkdir(x->out_path, 0755) == 0;
	if (!made && errno != EEXIST) {
		export_error(x, "%s: %s", x->out_path, strerror(errno));
		return -1;
	}
	if ((x->dirfd = open(x->out_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		/* A symlink fails as not a directory (ENOTDIR) or ELOOP. */
		int e = errno, link = e == ELOOP || (e == ENOTDIR &&
		    lstat(x->out_path, &st) == 0 && S_ISLNK(st.st_mode));

		export_error(x, "%s: %s", x->out_path, link ?
		    "a symbolic link: give the directory itself" :
		    e == ENOTDIR ? "not a directory (the format writes a "
		    "directory of files)" : strerror(e));
		return -1;
	}
	if (made)
		return 0;
	if (fstat(x->dirfd, &st) == -1 || st.st_uid != geteuid() ||
	    !dir_empty(x->dirfd)) {
		export_error(x, "%s: already there, and not an empty directory "
		    "of yours: give a new path (tracectl makes it)",
		    x->out_path);
		close(x->dirfd);
		x->dirfd = -1;
		return -1;
	}
	return 0;
}

/*
 * A stdio stream that gzips into fd, so that the formats write as they
 * always do.  zlib's level 6, gzip's default: a JSON export shrinks
 * about tenfold at some 50 MB/s.
 */
static ssize_t
export_gz_write(void *cookie, const char *buf, size_t len)
{
	size_t		 done = 0;
	int		 n;

	while (done < len) {
		errno = 0;
		n = gzwrite(cookie, buf + done, (unsigned)(len - done >
		    (1u << 30) ? 1u << 30 : len - done));
		if (n <= 0) {
			if (errno == 0)
				errno = EIO;
			return -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)len;
}

static int
export_gz_close(void *cookie)
{
	errno = 0;
	if (gzclose(cookie) != Z_OK) {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	return 0;
}

static FILE *
export_gz_open(int fd)
{
	cookie_io_functions_t io = {
		.write = export_gz_write,
		.close = export_gz_close,
	};
	gzFile		 gz;
	FILE		*f;

	errno = 0;
	if ((gz = gzdopen(fd, "wb6")) == NULL) {
		if (errno == 0)
			errno = ENOMEM;
		close(fd);	/* zlib leaves it open */
		return NULL;
	}
	if ((f = fopencookie(gz, "w", io)) == NULL) {
		gzclose(gz);	/* closes fd too */
		errno = ENOMEM;
	}
	return f;
}

/* Does the output's name end in ".gz"? */
static int
export_gz_wanted(const char *path)
{
	size_t	 n = strlen(path);

	return n > 3 && strcmp(path + n - 3, ".gz") == 0;
}

/* Open the output.  *tmp gets the temporary name to rename, if any. */
static int
export_open_out(struct export *x, char **tmp)
{
	int	 fd;

	*tmp = NULL;
	if (x->fmt->out_is_dir)
		return export_open_dir(x);
	if (strcmp(x->out_path, "-") == 0) {
		x->out = stdout;
		return 0;
	}
	if (asprintf(tmp, "%s.tmp-%ld", x->out_path, (long)getpid()) == -1) {
		*tmp = NULL;
		export_error(x, "out of memory");
		return -1;
	}
	fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	    0644);
	if (fd != -1 && export_gz_wanted(x->out_path)) {
		if ((x->out = export_gz_open(fd)) == NULL) {
			export_error(x, "%s: %s", *tmp, strerror(errno));
			unlink(*tmp);
			free(*tmp);
			*tmp = NULL;
			return -1;
		}
	} else if (fd == -1 || (x->out = fdopen(fd, "w")) == NULL) {
		export_error(x, "%s: %s", *tmp, strerror(errno));
		if (fd != -1) {
			close(fd);
			unlink(*tmp);
		}
		free(*tmp);
		*tmp = NULL;
		return -1;
	}
	setvbuf(x->out, NULL, _IOFBF, EXPORT_BUF);
	return 0;
}

/* Close the output; rename the temporary file on success. */
static int
export_close_out(struct export *x, char *tmp, int ok)
{
	int	 bad = 0;

	if (x->out != NULL) {
		bad = fflush(x->out) == EOF || ferror(x->out);
		if (x->out != stdout && fclose(x->out) == EOF)
			bad = 1;
		x->out = NULL;
		if (bad)
			export_error(x, "%s: cannot write: %s", tmp != NULL ?
			    tmp : x->out_path, strerror(errno));
	}
	if (x->dirfd != -1) {
		close(x->dirfd);
		x->dirfd = -1;
	}
	if (tmp != NULL) {
		if (ok && !bad && rename(tmp, x->out_path) == -1) {
			export_error(x, "%s: %s", x->out_path, strerror(errno));
			bad = 1;
		}
		if (!ok || bad)
			unlink(tmp);
	}
	return bad ? -1 : 0;
}

/* What export's own options say, for export_check(). */
struct export_opts {
	struct export	*x;
	const char	*format;	/* borrowed from argv */
};

/* export's own options: --format/-f FORMAT, --output/-o OUT. */
static int
export_opt(void *arg, int argc, char **argv, int *i, char *err,
    size_t errlen)
{
	struct export_opts *eo = arg;
	const char	*opt = argv[*i];

	if (strcmp(opt, "--format") != 0 && strcmp(opt, "-f") != 0 &&
	    strcmp(opt, "-o") != 0 && strcmp(opt, "--output") != 0)
		return 0;
	if (*i + 1 >= argc) {
		snprintf(err, errlen, "%s needs a value", opt);
		return -1;
	}
	if (opt[1] == 'f' || opt[2] == 'f')
		eo->format = argv[*i + 1];
	else
		eo->x->out_path = argv[*i + 1];
	*i += 2;
	return 1;
}

/* The format and the output, once every option is read. */
static int
export_check(void *arg, char *err, size_t errlen)
{
	struct export_opts *eo = arg;
	struct export	*x = eo->x;

	if (eo->format == NULL) {
		snprintf(err, errlen, "no --format given (one of "
		    "chrome, perfetto, simpletrace, uftrace)");
		return -1;
	}
	if ((x->fmt = export_find(eo->format)) == NULL) {
		snprintf(err, errlen, "unknown format '%.60s' (one of "
		    "chrome, perfetto, simpletrace, uftrace)", eo->format);
		return -1;
	}
	if (x->out_path == NULL || x->out_path[0] == '\0') {
		snprintf(err, errlen, "no output given (-o %s)",
		    x->fmt->out_is_dir ? "DIRECTORY" : "FILE");
		return -1;
	}
	if (x->fmt->out_is_dir && strcmp(x->out_path, "-") == 0) {
		snprintf(err, errlen, "%s writes a directory: -o - is not "
		    "possible", x->fmt->name);
		return -1;
	}
	return 0;
}

static const struct readcmd_def export_cmd = {
	.name = "export",
	.usage = "usage: tracectl export --format FORMAT -o OUT [--pair A:B "
	    "[--key FIELD]] [FILTERS] DIR...\n",
	.flags = READCMD_PAIRS,
	.no_dir = "no trace directory given",
	.help = export_help,
	.opt = export_opt,
	.check = export_check,
};

/*
 * tracectl export.  Contract in tracectl.h.
 */
int
export_main(int nargs, char **args)
{
	struct export		 x;
	struct export_opts	 eo;
	struct readcmd		 cmd;
	struct pairer		*pairer = NULL;
	struct pair_match	 m;
	const struct reader_item *it;
	char			*tmp = NULL;
	size_t			 i;
	int			 rc, ret = EXIT_DONE, ok = 0, began = 0;

	memset(&x, 0, sizeof(x));
	x.dirfd = -1;
	eo.x = &x;
	eo.format = NULL;
	if ((rc = readcmd_parse(&cmd, &export_cmd, 0, nargs, args,
	    &eo)) == READCMD_NOMEM)
		goto nomem;
	if (rc != READCMD_RUN) {
		ret = rc;
		goto out;
	}
	if ((x.reader = reader_new(&cmd.opts, export_reader_error, &x)) ==
	    NULL)
		goto nomem;
	for (i = 0; i < cmd.ndirs; i++)
		if (reader_add(x.reader, cmd.dirs[i]) == -1)
			goto fail;
	if (reader_start(x.reader) == -1)
		goto fail;
	x.sessions = reader_sessions(x.reader, &x.nsessions);
	x.threads = reader_threads(x.reader, &x.nthreads);
	x.pairs = &cmd.pairs;
	if (cmd.pairs.n > 0 && (pairer = pairer_new(&cmd.pairs)) == NULL)
		goto nomem;
	if (x.fmt->priv_size > 0 && (x.priv = calloc(1,
	    x.fmt->priv_size)) == NULL)
		goto nomem;
	if (export_open_out(&x, &tmp) == -1)
		goto fail;
	began = 1;
	if (x.fmt->begin != NULL && x.fmt->begin(&x) == -1)
		goto fail;
	while ((rc = reader_next(x.reader, &it)) > 0) {
		if (x.fmt->item(&x, it) == -1)
			goto fail;
		if (pairer != NULL && (rc = pairer_feed(pairer, it, &m)) != 0) {
			if (rc == -1)
				goto nomem;
			if (x.fmt->pair != NULL && x.fmt->pair(&x, &m) == -1)
				goto fail;
		}
	}
	if (rc == -1)
		goto fail;
	if (x.fmt->end != NULL && x.fmt->end(&x) == -1)
		goto fail;
	ok = 1;
	goto out;
nomem:
	export_error(&x, "out of memory");
fail:
	ret = EXIT_FAILED;
out:
	if (began && x.fmt->free != NULL)
		x.fmt->free(&x);
	if (began && export_close_out(&x, tmp, ok) == -1)
		ret = EXIT_FAILED;
	if (ret == EXIT_DONE && (x.nerrors > 0 || (x.reader != NULL &&
	    reader_nerrors(x.reader) > 0)))
		ret = EXIT_FAILED;
	free(tmp);
	free(x.priv);
	pairer_free(pairer);
	reader_free(x.reader);
	readcmd_free(&cmd);
	return ret;
}
