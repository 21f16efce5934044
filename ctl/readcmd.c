/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The command line of print, stats and export (readcmd.h).  Options
 * and DIRs may come in any order: a word that does not start with '-',
 * a lone '-', and every word after '--' is a DIR; any other word is an
 * option, tried against the shared ones first, then the command's own,
 * then --pair/--key and the filters.
 * The first problem ends the parse: there is one message per run.
 *
 * The options keep their own small parsers (reader_opt() in reader.c,
 * pair_opt() in pair.c, the command's callback), which all take an
 * option as argv[*i] and move *i past its value; this file only walks
 * the words, keeps the DIRs and says what went wrong.  It prints
 * nothing but --help and usage errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readcmd.h"
#include "tracectl.h"

/* --help: the usage line, the command's part, the shared options. */
static void
readcmd_help(const struct readcmd_def *d)
{
	fputs(d->usage, stdout);
	if (d->help != NULL)
		d->help();
	if (d->flags & READCMD_PAIRS)
		fputs(pair_opts_help, stdout);
	fputs(reader_opts_help, stdout);
	fputs("\nSee tracectl(1).\n", stdout);
}

/* Say a usage error.  Returns EXIT_USAGE. */
static int
readcmd_usage(const struct readcmd_def *d, const char *err)
{
	fprintf(stderr, "tracectl: %s: %s\n", d->name, err);
	fputs(d->usage, stderr);
	return EXIT_USAGE;
}

/*
 * argv[*i] as the command's own option, a --pair or --key when the
 * command takes them, or a filter.  Returns as reader_opt() does.
 */
static int
readcmd_opt(struct readcmd *c, const struct readcmd_def *d, int argc,
    char **argv, int *i, char *err, size_t errlen, void *arg)
{
	int	 rc;

	if (d->opt != NULL && (rc = d->opt(arg, argc, argv, i, err,
	    errlen)) != 0)
		return rc;
	if ((d->flags & READCMD_PAIRS) && (rc = pair_opt(&c->pairs, argc,
	    argv, i, err, errlen)) != 0)
		return rc;
	return reader_opt(&c->opts, argc, argv, i, err, errlen);
}

/*
 * Parse a reading command's arguments.  Contract in readcmd.h.
 */
int
readcmd_parse(struct readcmd *c, const struct readcmd_def *d, int json,
    int argc, char **argv, void *arg)
{
	char	 err[256];
	int	 a, rc, dashdash = 0;

	memset(c, 0, sizeof(*c));
	reader_opts_init(&c->opts);
	c->json = json;
	if ((c->dirs = calloc((size_t)argc + 1, sizeof(*c->dirs))) == NULL)
		return READCMD_NOMEM;
	for (a = 0; a < argc; ) {
		if (dashdash || argv[a][0] != '-' || argv[a][1] == '\0') {
			c->dirs[c->ndirs++] = argv[a++];
			continue;
		}
		if (strcmp(argv[a], "--") == 0) {
			dashdash = 1;
			a++;
		} else if (strcmp(argv[a], "--help") == 0 ||
		    strcmp(argv[a], "-h") == 0) {
			readcmd_help(d);
			return EXIT_DONE;
		} else if ((d->flags & READCMD_JSON) &&
		    (strcmp(argv[a], "--json") == 0 ||
		    strcmp(argv[a], "-j") == 0)) {
			c->json = 1;
			a++;
		} else if ((rc = readcmd_opt(c, d, argc, argv, &a, err,
		    sizeof(err), arg)) != 1) {
			if (rc == 0)
				snprintf(err, sizeof(err), "unknown option "
				    "'%s'", argv[a]);
			return readcmd_usage(d, err);
		}
	}
	if (d->check != NULL && (rc = d->check(arg, err, sizeof(err))) == -1)
		return readcmd_usage(d, err);
	if (c->ndirs == 0 && !(d->check != NULL && rc == 1))
		return readcmd_usage(d, d->no_dir);
	return READCMD_RUN;
}

/*
 * Free a parsed command line.  Contract in readcmd.h.
 */
void
readcmd_free(struct readcmd *c)
{
	reader_opts_free(&c->opts);
	pair_rules_free(&c->pairs);
	free(c->dirs);
	memset(c, 0, sizeof(*c));
}
