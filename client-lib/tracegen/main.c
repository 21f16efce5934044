/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * tracegen: read a trace-events file and write the trace.h (--header)
 * or trace.c (--source) that goes with it; see tracegen(1).
 *
 * This file is the command line and the I/O: options, reading the
 * input whole, parse errors on stderr as FILE:LINE:COL, and the output
 * on stdout or, with -o, in a temporary file renamed over OUT once it
 * is complete, so that a failed run never leaves half a header behind.
 * The parsing is proto/tevents.c and the writing gen.c.
 *
 * Exit status: 0 done, 1 the input or output failed, 2 usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gen.h"
#include "tevents.h"

#ifndef TRACED_VERSION
#define TRACED_VERSION	"unknown"
#endif

/* Largest input read; trace-events files are kilobytes. */
#define INPUT_MAX	(64u << 20)

enum mode {
	MODE_NONE,
	MODE_HEADER,
	MODE_SOURCE,
};

static const char usage_text[] =
    "usage: tracegen --header|--source [--provider NAME] "
    "[--backends LIST] [-o OUT]\n"
    "                FILE\n"
    "       tracegen --cflags-func[=patchable|mcount|portable]\n";

static void
usage_help(void)
{
	printf("%s", usage_text);
	printf("\n"
	    "Generate the C code of the events declared in a trace-events\n"
	    "file (FILE, or - for standard input).\n"
	    "\n"
	    "  --header         write trace.h: trace_NAME() per event\n"
	    "  --source         write trace.c: the provider definition\n"
	    "  --provider NAME  provider name (default: the directory of a\n"
	    "                   file named trace-events, else the file's\n"
	    "                   name without extension)\n"
	    "  --backends LIST  what trace_NAME() does, any of (comma-"
	    "separated):\n"
	    "                   traced  record into the trace (the default)\n"
	    "                   log     print enabled events on stderr\n"
	    "                   dtrace  SystemTap SDT probe provider:event\n"
	    "                   nop     nothing (arguments still checked)\n"
	    "                   the same LIST for --header and --source\n"
	    "  -o OUT           write to OUT (atomically) instead of "
	    "stdout\n"
	    "  --cflags-func[=KIND]\n"
	    "                   print the compiler flags that make every\n"
	    "                   function traceable (libtraced(3)): patchable\n"
	    "                   (default; PIE and shared objects too), mcount\n"
	    "                   (-pg based, not for PIE or -fPIC) or portable\n"
	    "                   (-finstrument-functions, any architecture);\n"
	    "                   for compiling, not linking\n"
	    "  --help           show this help\n"
	    "  --version        show the version\n");
}

static void usage_error(const char *, ...)
    __attribute__((noreturn, format(printf, 1, 2)));

static void
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("tracegen: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%sTry 'tracegen --help' for more.\n", usage_text);
	exit(2);
}

/* Read all of 'fd' into a malloc'd buffer; -1 with errno on failure. */
static int
read_all(int fd, char **out, size_t *outlen)
{
	char *buf = NULL, *nb;
	size_t len = 0, cap = 0;
	ssize_t n;

	for (;;) {
		if (len == cap) {
			if (cap >= INPUT_MAX) {
				free(buf);
				errno = EFBIG;
				return -1;
			}
			cap = cap == 0 ? 65536 : 2 * cap;
			if ((nb = realloc(buf, cap)) == NULL) {
				free(buf);
				return -1;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			free(buf);
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

static int
generate(FILE *out, enum mode mode, const struct tevents_file *f,
    const struct gen_opts *o)
{
	if (mode == MODE_HEADER)
		return gen_header(out, f, o);
	return gen_source(out, f, o);
}

/*
 * The name under which the compiler will read standard output, for the
 * #line directives: its path if it is a regular file, else NULL (no
 * #line: a pipe has no name to come back to).  malloc'd.
 */
static char *
stdout_name(void)
{
	struct stat st;
	char buf[4096];
	ssize_t n;

	if (fstat(STDOUT_FILENO, &st) == -1 || !S_ISREG(st.st_mode))
		return NULL;
	n = readlink("/proc/self/fd/1", buf, sizeof(buf) - 1);
	if (n <= 0 || buf[0] != '/')
		return NULL;
	buf[n] = '\0';
	return strdup(buf);
}

/*
 * Write the output to 'path' through a temporary file in the same
 * directory, renamed over it when complete.  Returns 0 or -1 (reported).
 */
static int
write_file(const char *path, enum mode mode, const struct tevents_file *f,
    const struct gen_opts *o)
{
	char *tmp;
	FILE *out;
	mode_t mask;
	int fd, saved;

	if (asprintf(&tmp, "%s.XXXXXX", path) == -1) {
		fprintf(stderr, "tracegen: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if ((fd = mkstemp(tmp)) == -1) {
		fprintf(stderr, "tracegen: %s: %s\n", tmp, strerror(errno));
		free(tmp);
		return -1;
	}
	/* mkstemp makes 0600; give the file what open(2) would. */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) == -1 ||
	    (out = fdopen(fd, "w")) == NULL) {
		saved = errno;
		close(fd);
		goto fail;
	}
	if (generate(out, mode, f, o) < 0 ||
	    fflush(out) == EOF) {
		saved = errno;
		fclose(out);
		goto fail;
	}
	if (fclose(out) == EOF) {
		saved = errno;
		goto fail;
	}
	if (rename(tmp, path) == -1) {
		saved = errno;
		goto fail;
	}
	free(tmp);
	return 0;

fail:
	fprintf(stderr, "tracegen: %s: %s\n", path, strerror(saved));
	unlink(tmp);
	free(tmp);
	return -1;
}

/*
 * --cflags-func: the flags that give every function a site libtraced
 * patches (see libtraced.pc.in, which has the same, and doc/DESIGN.md
 * section 11).  Exit status like main's.
 */
static int
cflags_func(const char *kind)
{
	if (kind == NULL || strcmp(kind, "patchable") == 0)
		puts("-fpatchable-function-entry=5");
	else if (strcmp(kind, "mcount") == 0)
		puts("-pg -mfentry -mnop-mcount -mrecord-mcount");
	else if (strcmp(kind, "portable") == 0)
		puts("-finstrument-functions");
	else
		usage_error("--cflags-func: '%s' is not patchable, mcount "
		    "or portable", kind);
	return fflush(stdout) == 0 ? 0 : 1;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "header",	no_argument,		NULL, 'H' },
		{ "source",	no_argument,		NULL, 'S' },
		{ "provider",	required_argument,	NULL, 'p' },
		{ "backends",	required_argument,	NULL, 'b' },
		{ "cflags-func", optional_argument,	NULL, 'F' },
		{ "output",	required_argument,	NULL, 'o' },
		{ "help",	no_argument,		NULL, 'h' },
		{ "version",	no_argument,		NULL, 'V' },
		{ NULL,		0,			NULL, 0 },
	};
	struct tevents_file f;
	struct gen_opts o = { NULL, NULL, NULL, GEN_BACKEND_TRACED };
	enum mode mode = MODE_NONE;
	char *outname = NULL;
	const char *path, *outpath = NULL, *provider = NULL, *srcname;
	char defprov[GEN_PROVIDER_MAX + 1], err[512];
	char *text;
	size_t len;
	int ch, fd, rc;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'H':
		case 'S':
			if (mode != MODE_NONE &&
			    mode != (ch == 'H' ? MODE_HEADER : MODE_SOURCE))
				usage_error("--header and --source "
				    "exclude each other");
			mode = ch == 'H' ? MODE_HEADER : MODE_SOURCE;
			break;
		case 'F':
			return cflags_func(optarg);
		case 'p':
			provider = optarg;
			break;
		case 'b':
			if (gen_backends_parse(optarg, &o.backends, err,
			    sizeof(err)) == -1)
				usage_error("%s", err);
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'h':
			usage_help();
			return 0;
		case 'V':
			printf("tracegen (traced) %s\n", TRACED_VERSION);
			return 0;
		case ':':
			usage_error("option '%s' needs an argument",
			    argv[optind - 1]);
			/* NOTREACHED */
		default:
			if (optopt != 0)
				usage_error("unknown option '-%c'", optopt);
			usage_error("unknown option '%s'", argv[optind - 1]);
			/* NOTREACHED */
		}
	}
	argc -= optind;
	argv += optind;
	if (mode == MODE_NONE)
		usage_error("one of --header or --source is required");
	if (argc != 1)
		usage_error("%s", argc == 0 ? "no trace-events FILE given" :
		    "only one trace-events FILE may be given");
	if (provider != NULL && !gen_provider_valid(provider))
		usage_error("invalid provider name '%s': it must be a C "
		    "identifier of at most 63 bytes", provider);
	if (outpath != NULL && outpath[0] == '\0')
		usage_error("empty output file name");

	path = argv[0];
	if (strcmp(path, "-") == 0) {
		srcname = "<stdin>";
		fd = STDIN_FILENO;
		if (provider == NULL)
			provider = "app";
	} else {
		srcname = path;
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
			fprintf(stderr, "tracegen: %s: %s\n", path,
			    strerror(errno));
			return 1;
		}
		if (provider == NULL) {
			gen_provider_from_path(path, defprov, sizeof(defprov));
			provider = defprov;
		}
	}
	rc = read_all(fd, &text, &len);
	if (rc == -1) {
		fprintf(stderr, "tracegen: %s: %s\n", srcname,
		    strerror(errno));
		return 1;
	}
	if (fd != STDIN_FILENO)
		close(fd);

	rc = tevents_parse(text, len, srcname, &f, err, sizeof(err));
	free(text);
	if (rc < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}

	o.provider = provider;
	o.srcname = srcname;
	if (outpath != NULL) {
		o.outname = outpath;
		rc = write_file(outpath, mode, &f, &o);
	} else {
		o.outname = outname = stdout_name();
		rc = generate(stdout, mode, &f, &o);
		if (rc == 0 && fflush(stdout) == EOF)
			rc = -1;
		if (rc < 0)
			fprintf(stderr, "tracegen: standard output: %s\n",
			    strerror(errno));
	}
	tevents_free(&f);
	free(outname);
	return rc < 0 ? 1 : 0;
}
