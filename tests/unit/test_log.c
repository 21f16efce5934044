/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * log.c's writer thread: once log_start() ran, lines reach traced.log
 * whole and in order, written by a thread of their own; lines that
 * come faster than the file takes them are dropped and counted, never
 * silently lost; the file is kept to 16 MiB and one older file, the
 * thread rotating it.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/log.h"

static struct {
	char	 dir[64];
	int	 dirfd;
	int	 saved_stderr;		/* cmocka's, put back after */
} t;

static int
setup(void **state)
{
	(void)state;
	strcpy(t.dir, "/tmp/test_log.XXXXXX");
	if (mkdtemp(t.dir) == NULL)
		return -1;
	t.dirfd = open(t.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	t.saved_stderr = dup(STDERR_FILENO);
	return t.dirfd == -1 || t.saved_stderr == -1 ? -1 : 0;
}

static int
teardown(void **state)
{
	char path[128];

	(void)state;
	log_stop();
	dup2(t.saved_stderr, STDERR_FILENO);
	close(t.saved_stderr);
	snprintf(path, sizeof(path), "%s/traced.log", t.dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/traced.log.1", t.dir);
	unlink(path);
	close(t.dirfd);
	rmdir(t.dir);
	return 0;
}

/*
 * Read file NAME of the directory: each line "... line N ... end" must
 * come after the last one seen (*next is one past it); each "N log
 * lines dropped" adds N to *dropped.  Returns the lines of the first
 * kind.
 */
static long
t_scan(const char *name, long *next, long *dropped, int *continued)
{
	char path[128], *line = NULL;
	size_t cap = 0;
	long n, seen = 0;
	FILE *f;
	char *p;

	snprintf(path, sizeof(path), "%s/%s", t.dir, name);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	while (getline(&line, &cap, f) != -1) {
		if ((p = strstr(line, "traced: line ")) != NULL) {
			n = strtol(p + 13, NULL, 10);
			assert_true(n >= *next);	/* in order, once */
			*next = n + 1;
			seen++;
			assert_non_null(strstr(line, " end\n"));
		} else if ((p = strstr(line, "traced: ")) != NULL &&
		    strstr(line, " log lines dropped") != NULL) {
			*dropped += strtol(p + 8, NULL, 10);
		} else if (strstr(line, "log continued from") != NULL) {
			*continued = 1;
		} else
			fail_msg("a line of no test's: %s", line);
	}
	free(line);
	fclose(f);
	return seen;
}

static void
test_log_lines_whole_and_in_order(void **state)
{
	long next = 0, dropped = 0;
	int continued = 0, i;

	(void)state;
	assert_int_equal(log_to_file(t.dirfd, t.dir, NULL), 0);
	assert_int_equal(log_start(), 0);
	for (i = 0; i < 1000; i++)
		log_info("line %d of the test end", i);
	log_stop();
	assert_int_equal(t_scan("traced.log", &next, &dropped, &continued),
	    1000);
	assert_int_equal(next, 1000);
	assert_int_equal(dropped, 0);
}

/*
 * Lines far faster than a file takes them, until the file was rotated:
 * every line is in the files or counted as dropped, in order.
 */
static void
test_log_drops_are_counted_and_the_file_rotates(void **state)
{
	char pad[900], path[128];
	long next = 0, dropped = 0, seen, i;
	int continued = 0;
	struct stat st;

	(void)state;
	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	snprintf(path, sizeof(path), "%s/traced.log.1", t.dir);
	assert_int_equal(log_to_file(t.dirfd, t.dir, NULL), 0);
	assert_int_equal(log_start(), 0);
	for (i = 0; i < 400000; i++) {
		log_info("line %ld %s end", i, pad);
		if (i % 1000 == 999 && stat(path, &st) == 0)
			break;
	}
	log_stop();
	assert_int_equal(stat(path, &st), 0);		/* rotated */
	seen = t_scan("traced.log.1", &next, &dropped, &continued);
	seen += t_scan("traced.log", &next, &dropped, &continued);
	assert_true(continued);
	/* Every line logged is in the files, or was counted. */
	print_message("%ld lines logged: %ld in the files, %ld dropped\n", i + 1, seen, dropped);
	assert_int_equal(seen + dropped, i + 1);
	assert_true(seen > 0);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_log_lines_whole_and_in_order),
		T(test_log_drops_are_counted_and_the_file_rotates),
	};

	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
