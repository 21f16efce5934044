/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of ctl/complete.c: what 'tracectl completion words' offers for
 * a command line, read from the command table (global options and
 * their values, command words whole and abbreviated, options anywhere
 * among the arguments, forms chosen by the words typed, the daemon's
 * session ids through the callback), and that any words at all, however
 * many or long, get an answer and no crash.  The shells themselves are
 * driven by tests 130 to 132.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctl/tracectl.h"

static const char global[] = "--runtime-dir=@dir -r=@dir --json -j "
    "--timeout=0|5|30|60|300 -t=0|5|30|60|300 --help -h --version -V";

/* What the session callback was asked, and answers. */
static char	 sessions_rdir[256];
static int	 sessions_called;

static void
fake_sessions(const char *rdir, const char *prefix, FILE *out)
{
	static const char *const ids[] = { "7", "12", "13" };
	size_t	i;

	sessions_called++;
	snprintf(sessions_rdir, sizeof(sessions_rdir), "%s",
	    rdir != NULL ? rdir : "(none)");
	for (i = 0; i < 3; i++)
		if (strncmp(ids[i], prefix, strlen(prefix)) == 0)
			fprintf(out, "%s\n", ids[i]);
}

/*
 * Complete 'line' (words separated by one space; a final space means
 * an empty word under the cursor) and return the answer, lines joined
 * by spaces, in a static buffer.
 */
static const char *
complete(const char *line)
{
	static char	 got[4096];
	char		 buf[1024], *words[64], *p;
	char		*mem = NULL;
	size_t		 len = 0;
	FILE		*f;
	int		 n = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	words[n++] = buf;
	for (p = buf; (p = strchr(p, ' ')) != NULL; ) {
		*p++ = '\0';
		words[n++] = p;
	}
	assert_non_null(f = open_memstream(&mem, &len));
	assert_int_equal(complete_words(n, words, global, f, fake_sessions),
	    EXIT_DONE);
	assert_int_equal(fclose(f), 0);
	snprintf(got, sizeof(got), "%s", mem);
	free(mem);
	for (p = got; (p = strchr(p, '\n')) != NULL; p++)
		*p = p[1] != '\0' ? ' ' : '\0';
	return got;
}

static void
test_complete_command_words(void **state)
{
	(void)state;
	assert_string_equal(complete(""), "completion export help info "
	    "print snapshot stats top trace-event trace-file trace-func "
	    "tracer trigger");
	assert_string_equal(complete("trace-f"), "trace-file trace-func");
	assert_string_equal(complete("info t"),
	    "trace trace-events trace-funcs trace-rules tracers");
	/* Abbreviated first word, as lookup takes it. */
	assert_string_equal(complete("in trace-r"), "trace-rules");
	assert_string_equal(complete("nosuch x"), "");
	assert_string_equal(complete("info nosuch "), "");
}

static void
test_complete_global_options(void **state)
{
	(void)state;
	assert_string_equal(complete("--ver"), "--version");
	assert_string_equal(complete("-t 3"), "30 300");
	assert_string_equal(complete("--runtime-dir "), ":dirs");
	/* After the options, the command. */
	assert_string_equal(complete("-j -t 5 he"), "help");
	assert_string_equal(complete("-- he"), "help");
}

static void
test_complete_fixed_words_by_form(void **state)
{
	(void)state;
	assert_string_equal(complete("trace-file "),
	    "on off flush set recorder");
	assert_string_equal(complete("trace-file set "), ":dirs default");
	/* 'on' is a form of its own: nothing after it. */
	assert_string_equal(complete("trace-file on "), "");
	assert_string_equal(complete("trace-file bogus "), "");
	/* PATTERN takes any word; 'list' is a literal of its own form. */
	assert_string_equal(complete("trace-event "), "list reset");
	assert_string_equal(complete("trace-event 'x*' "), "on off delete");
	assert_string_equal(complete("trace-event list "), "");
	assert_string_equal(complete("tracer la"), "latency");
	assert_string_equal(complete("tracer my-own o"), "on off");
	/* trigger: a verb, then its own words and options. */
	assert_string_equal(complete("trigger "), "add list delete");
	assert_string_equal(complete("trigger add 'app:*' "), "snapshot");
	assert_string_equal(complete("trigger add x snapshot --"),
	    "--after --every");
	assert_string_equal(complete("trigger add x snapshot --after "), "");
	assert_string_equal(complete("trigger list "), "");
	assert_string_equal(complete("trace-func x on "), "");
}

static void
test_complete_options_anywhere(void **state)
{
	(void)state;
	assert_string_equal(complete("export --format "),
	    "chrome perfetto simpletrace uftrace");
	assert_string_equal(complete("export --format p"), "perfetto");
	assert_string_equal(complete("export -o "), ":files");
	assert_string_equal(complete("export dir1 --format chrome "), ":dirs");
	/* A value is not a directory, nor an option. */
	assert_string_equal(complete("print --pid "), "");
	assert_string_equal(complete("print --l"), "--lost --limit");
	assert_string_equal(complete("stats --json --k"), "--key");
	assert_string_equal(complete("info sessions --pid 3 --a"), "--all");
}

static void
test_complete_help_names_commands(void **state)
{
	(void)state;
	assert_string_equal(complete("help tracer"), "tracer");
	assert_string_equal(complete("help info trace-e"), "trace-events");
	assert_string_equal(complete("help info trace "), "");
	assert_string_equal(complete("completion "), "bash zsh fish");
}

static void
test_complete_sessions_from_daemon(void **state)
{
	(void)state;
	sessions_called = 0;
	assert_string_equal(complete("info session "), "7 12 13");
	assert_string_equal(sessions_rdir, "(none)");
	assert_string_equal(complete("-r /run/x info session 1"), "12 13");
	assert_string_equal(sessions_rdir, "/run/x");
	assert_string_equal(complete("--runtime-dir=/d info session 7"),
	    "7");
	assert_string_equal(sessions_rdir, "/d");
	/* One argument only: nothing more, and no daemon asked. */
	assert_string_equal(complete("info session 7 "), "");
	assert_int_equal(sessions_called, 3);
}

/* Words from a hostile or confused shell: many, long, odd. */
static void
test_complete_any_words(void **state)
{
	static char	 big[8192], word[8192];
	char		*words[300];
	char		*mem = NULL;
	size_t		 len = 0, i;
	FILE		*f;

	(void)state;
	memset(big, '-', sizeof(big) - 1);
	memset(word, 'x', sizeof(word) - 1);
	for (i = 0; i < 300; i++)
		words[i] = i % 2 ? big : (char *)"print";
	assert_non_null(f = open_memstream(&mem, &len));
	assert_int_equal(complete_words(300, words, global, f, NULL),
	    EXIT_DONE);
	assert_int_equal(complete_words(0, words, global, f, NULL),
	    EXIT_DONE);
	words[0] = (char *)"info";
	words[1] = (char *)"session";
	words[2] = (char *)"";
	/* No callback: no ids, no crash. */
	assert_int_equal(complete_words(3, words, global, f, NULL),
	    EXIT_DONE);
	words[0] = word;
	words[1] = (char *)"";
	assert_int_equal(complete_words(2, words, global, f, NULL),
	    EXIT_DONE);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(mem, "");
	free(mem);
	assert_string_equal(complete("print -- --r"), "--raw");
	assert_string_equal(complete("print - "), ":dirs");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_complete_command_words),
		cmocka_unit_test(test_complete_global_options),
		cmocka_unit_test(test_complete_fixed_words_by_form),
		cmocka_unit_test(test_complete_options_anywhere),
		cmocka_unit_test(test_complete_help_names_commands),
		cmocka_unit_test(test_complete_sessions_from_daemon),
		cmocka_unit_test(test_complete_any_words),
	};

	return cmocka_run_group_tests_name("complete", tests, NULL, NULL);
}
