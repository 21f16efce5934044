/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of the command line print, stats and export share
 * (ctl/readcmd.c): which words are DIRs, which options each command
 * takes, the order in which problems are said (the command's own check
 * before "no DIR"), and the exact usage message and exit status.  What
 * it prints on stdout and stderr is caught in temporary files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctl/readcmd.h"
#include "ctl/tracectl.h"

/* What a test command's callbacks saw. */
struct t_seen {
	int		 raw;
	const char	*out;
	int		 checked;
	int		 check_fails;
	int		 no_dir_ok;	/* the check says: no DIR needed */
};

/* A command's own options, as print's --raw and export's -o. */
static int
t_opt(void *arg, int argc, char **argv, int *i, char *err, size_t errlen)
{
	struct t_seen	*seen = arg;

	if (strcmp(argv[*i], "--raw") == 0) {
		seen->raw = 1;
		(*i)++;
		return 1;
	}
	if (strcmp(argv[*i], "-o") != 0)
		return 0;
	if (*i + 1 >= argc) {
		snprintf(err, errlen, "%s needs a value", argv[*i]);
		return -1;
	}
	seen->out = argv[*i + 1];
	*i += 2;
	return 1;
}

static int
t_check(void *arg, char *err, size_t errlen)
{
	struct t_seen	*seen = arg;

	seen->checked++;
	if (!seen->check_fails)
		return seen->no_dir_ok;
	snprintf(err, errlen, "no output given");
	return -1;
}

static void
t_help(void)
{
	fputs("\nhelp of t\n", stdout);
}

static const struct readcmd_def t_plain = {
	.name = "t",
	.usage = "usage: tracectl t DIR...\n",
	.no_dir = "no directory given",
	.help = t_help,
};

static const struct readcmd_def t_full = {
	.name = "t",
	.usage = "usage: tracectl t DIR...\n",
	.flags = READCMD_JSON | READCMD_PAIRS,
	.no_dir = "no trace directory given",
	.help = t_help,
	.opt = t_opt,
	.check = t_check,
};

/*
 * readcmd_parse() with stdout and stderr caught: *out and *err get
 * what it printed (owned by the caller).
 */
static int
t_parse(struct readcmd *c, const struct readcmd_def *d, int json, int argc,
    char **argv, void *arg, char **out, char **err)
{
	FILE	*f[2];
	char	**got[2] = { out, err };
	long	 len;
	int	 saved[2], fd[2] = { STDOUT_FILENO, STDERR_FILENO }, i, rc;

	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < 2; i++) {
		assert_non_null(f[i] = tmpfile());
		assert_true((saved[i] = dup(fd[i])) != -1);
		assert_true(dup2(fileno(f[i]), fd[i]) != -1);
	}
	rc = readcmd_parse(c, d, json, argc, argv, arg);
	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < 2; i++) {
		assert_true(dup2(saved[i], fd[i]) != -1);
		close(saved[i]);
		assert_true((len = ftell(f[i])) >= 0);
		rewind(f[i]);
		assert_non_null(*got[i] = calloc(1, (size_t)len + 1));
		assert_int_equal(fread(*got[i], 1, (size_t)len, f[i]),
		    (size_t)len);
		fclose(f[i]);
	}
	return rc;
}

static void
test_readcmd_words_after_dashdash_and_a_lone_dash_are_dirs(void **state)
{
	struct readcmd	 c;
	struct t_seen	 seen;
	char		*out, *err;
	char		*argv[] = { (char *)"a", (char *)"--json",
			    (char *)"-", (char *)"--event", (char *)"x:*",
			    (char *)"--raw", (char *)"-o", (char *)"f",
			    (char *)"--pair", (char *)"s:e", (char *)"--",
			    (char *)"--limit", (char *)"b" };

	(void)state;
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(t_parse(&c, &t_full, 0, 13, argv, &seen, &out,
	    &err), READCMD_RUN);
	assert_string_equal(out, "");
	assert_string_equal(err, "");
	assert_int_equal(c.ndirs, 4);
	assert_string_equal(c.dirs[0], "a");
	assert_string_equal(c.dirs[1], "-");
	assert_string_equal(c.dirs[2], "--limit");
	assert_string_equal(c.dirs[3], "b");
	assert_int_equal(c.json, 1);
	assert_int_equal(c.opts.nevents, 1);
	assert_int_equal(c.pairs.n, 1);
	assert_int_equal(seen.raw, 1);
	assert_string_equal(seen.out, "f");
	assert_int_equal(seen.checked, 1);
	readcmd_free(&c);
	free(out);
	free(err);
}

static void
test_readcmd_takes_only_the_options_of_its_command(void **state)
{
	struct readcmd	 c;
	char		*out, *err;
	char		*json[] = { (char *)"--json", (char *)"d" };
	char		*pair[] = { (char *)"--pair", (char *)"s:e",
			    (char *)"d" };

	(void)state;
	assert_int_equal(t_parse(&c, &t_plain, 1, 2, json, NULL, &out, &err),
	    EXIT_USAGE);
	assert_string_equal(out, "");
	assert_string_equal(err, "tracectl: t: unknown option '--json'\n"
	    "usage: tracectl t DIR...\n");
	readcmd_free(&c);
	free(out);
	free(err);

	assert_int_equal(t_parse(&c, &t_plain, 1, 3, pair, NULL, &out, &err),
	    EXIT_USAGE);
	assert_string_equal(err, "tracectl: t: unknown option '--pair'\n"
	    "usage: tracectl t DIR...\n");
	readcmd_free(&c);
	free(out);
	free(err);

	/* tracectl's own --json still counts for a command without one. */
	assert_int_equal(t_parse(&c, &t_plain, 1, 1, json + 1, NULL, &out,
	    &err), READCMD_RUN);
	assert_int_equal(c.json, 1);
	readcmd_free(&c);
	free(out);
	free(err);
}

static void
test_readcmd_says_the_first_problem_only(void **state)
{
	struct readcmd	 c;
	struct t_seen	 seen;
	char		*out, *err;
	char		*bad[] = { (char *)"--limit", (char *)"0",
			    (char *)"--bogus" };
	char		*last[] = { (char *)"d", (char *)"-o" };

	(void)state;
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(t_parse(&c, &t_full, 0, 3, bad, &seen, &out, &err),
	    EXIT_USAGE);
	assert_string_equal(err, "tracectl: t: --limit '0': expected a "
	    "number of 1 or more\nusage: tracectl t DIR...\n");
	assert_int_equal(seen.checked, 0);
	readcmd_free(&c);
	free(out);
	free(err);

	assert_int_equal(t_parse(&c, &t_full, 0, 2, last, &seen, &out, &err),
	    EXIT_USAGE);
	assert_string_equal(err, "tracectl: t: -o needs a value\n"
	    "usage: tracectl t DIR...\n");
	readcmd_free(&c);
	free(out);
	free(err);
}

static void
test_readcmd_checks_the_command_before_its_dirs(void **state)
{
	struct readcmd	 c;
	struct t_seen	 seen;
	char		*out, *err;
	char		*none[] = { (char *)"--lost" };

	(void)state;
	memset(&seen, 0, sizeof(seen));
	seen.check_fails = 1;
	assert_int_equal(t_parse(&c, &t_full, 0, 1, none, &seen, &out, &err),
	    EXIT_USAGE);
	assert_string_equal(err, "tracectl: t: no output given\n"
	    "usage: tracectl t DIR...\n");
	readcmd_free(&c);
	free(out);
	free(err);

	seen.check_fails = 0;
	assert_int_equal(t_parse(&c, &t_full, 0, 1, none, &seen, &out, &err),
	    EXIT_USAGE);
	assert_string_equal(err, "tracectl: t: no trace directory given\n"
	    "usage: tracectl t DIR...\n");
	readcmd_free(&c);
	free(out);
	free(err);
}

/* print --follow: a command whose check says it needs no DIR. */
static void
test_readcmd_runs_without_dirs_when_the_check_says_so(void **state)
{
	struct readcmd	 c;
	struct t_seen	 seen;
	char		*out, *err;
	char		*argv[] = { (char *)"--raw", (char *)"--pid",
			    (char *)"7" };

	(void)state;
	memset(&seen, 0, sizeof(seen));
	seen.no_dir_ok = 1;
	assert_int_equal(t_parse(&c, &t_full, 0, 3, argv, &seen, &out, &err),
	    READCMD_RUN);
	assert_string_equal(err, "");
	assert_int_equal(c.ndirs, 0);
	assert_int_equal(seen.raw, 1);
	assert_int_equal(c.opts.npids, 1);
	assert_int_equal(c.opts.pids[0], 7);
	readcmd_free(&c);
	free(out);
	free(err);
}

static void
test_readcmd_help_wins_over_what_follows(void **state)
{
	struct readcmd	 c;
	const char	*head = "usage: tracectl t DIR...\n\nhelp of t\n"
			    "  --pair A:B ";
	char		*out, *err;
	char		*argv[] = { (char *)"-h", (char *)"--bogus" };

	(void)state;
	assert_int_equal(t_parse(&c, &t_full, 0, 2, argv, NULL, &out, &err),
	    EXIT_DONE);
	assert_string_equal(err, "");
	assert_true(strncmp(out, head, strlen(head)) == 0);
	assert_non_null(strstr(out, "  --event GLOB "));
	assert_string_equal(out + strlen(out) - 18, "\nSee tracectl(1).\n");
	readcmd_free(&c);
	free(out);
	free(err);

	/* Without READCMD_PAIRS, no --pair in the help. */
	assert_int_equal(t_parse(&c, &t_plain, 0, 1, argv, NULL, &out, &err),
	    EXIT_DONE);
	assert_null(strstr(out, "--pair"));
	assert_non_null(strstr(out, "  --limit N "));
	readcmd_free(&c);
	free(out);
	free(err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_readcmd_words_after_dashdash_and_a_lone_dash_are_dirs),
		cmocka_unit_test(
		    test_readcmd_takes_only_the_options_of_its_command),
		cmocka_unit_test(test_readcmd_says_the_first_problem_only),
		cmocka_unit_test(
		    test_readcmd_checks_the_command_before_its_dirs),
		cmocka_unit_test(
		    test_readcmd_runs_without_dirs_when_the_check_says_so),
		cmocka_unit_test(test_readcmd_help_wins_over_what_follows),
	};

	return cmocka_run_group_tests_name("readcmd", tests, NULL, NULL);
}
