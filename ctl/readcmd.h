/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The command line of tracectl's offline readers (print, stats,
 * export): one parser for what they share, the DIR arguments, '--',
 * --help, the reader's filters (reader_opt()) and, for the commands
 * that take them, --json and --pair/--key; each option it does not
 * know goes to the command's own parser.  Usage errors are said the
 * same way for every command: "tracectl: CMD: what" and the command's
 * usage line on stderr, exit status 2.  tracectl-internal; main thread.
 */
#ifndef TRACED_CTL_READCMD_H
#define TRACED_CTL_READCMD_H

#include <stddef.h>

#include "pair.h"
#include "reader.h"

/* What a command takes besides DIRs, '--', --help and the filters. */
#define READCMD_JSON	0x1u		/* --json, -j */
#define READCMD_PAIRS	0x2u		/* --pair A:B, --key FIELD */

/*
 * A command's own options, as reader_opt(): if argv[*i] is one, consume
 * it (*i moves past it and its value) and return 1; return 0 if it is
 * not one, -1 with the reason in err if it is malformed.
 */
typedef int	(*readcmd_opt_cb)(void *arg, int argc, char **argv, int *i,
		    char *err, size_t errlen);

/*
 * After the options, before the DIRs: -1 with err set for a usage
 * error, 1 when the command runs without a DIR (print --follow), 0
 * otherwise.
 */
typedef int	(*readcmd_check_cb)(void *arg, char *err, size_t errlen);

/* One command, as its --help and its usage errors show it. */
struct readcmd_def {
	const char	*name;		/* "print": "tracectl: print: ..." */
	const char	*usage;		/* "usage: tracectl print ...\n" */
	unsigned	 flags;		/* READCMD_* */
	const char	*no_dir;	/* the error when no DIR is given */
	void		(*help)(void);	/* on stdout: its part of --help,
					   between the usage line and the
					   options every command shares */
	readcmd_opt_cb	 opt;		/* its own options, or NULL */
	readcmd_check_cb check;		/* or NULL */
};

/* A parsed command line.  Free with readcmd_free(). */
struct readcmd {
	struct reader_opts opts;	/* the filters */
	struct pair_rules pairs;	/* empty without READCMD_PAIRS */
	char		**dirs;		/* owned array of strings borrowed
					   from argv */
	size_t		 ndirs;
	int		 json;		/* --json, here or before the command */
};

/* readcmd_parse() results besides the exit statuses of tracectl.h. */
#define READCMD_RUN	(-1)		/* parsed: run the command */
#define READCMD_NOMEM	(-2)		/* out of memory (not said) */

/*
 * Parse the arguments after the command's name into c ('json': whether
 * tracectl's own --json was given), with the command's options and
 * checks from d, whose callbacks get 'arg'.  Returns READCMD_RUN when
 * the command should run, with at least one DIR (none if the check
 * said so); EXIT_DONE after printing --help; EXIT_USAGE after saying a usage error on stderr; or
 * READCMD_NOMEM, which the caller says its own way.  c is initialized
 * whatever the result: free it with readcmd_free().
 */
int	readcmd_parse(struct readcmd *c, const struct readcmd_def *d, int json,
	    int argc, char **argv, void *arg);

/* Free what c owns. */
void	readcmd_free(struct readcmd *c);

#endif /* TRACED_CTL_READCMD_H */
