/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of daemon/outdir.c, where traces go: the trace directory made
 * at start, moved by 'trace-file set' and kept across a restart unless
 * the command line says otherwise, forgotten by 'set default', made
 * again when deleted while tracing, refused when it cannot be trusted;
 * and the output state kept beside it (paused, the flush generation,
 * the events written into directories deleted since).
 *
 * Linked with outdir.o, fsdir.o and log.o, in a scratch directory.  The
 * test stands in for the index, which only records each move.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/index.h"
#include "daemon/outdir.h"

static char t_moves[8][PATH_MAX + 16];
static unsigned t_nmoves;

int
index_trace_dir_set(const char *path, const char *how)
{
	if (t_nmoves < 8)
		snprintf(t_moves[t_nmoves], sizeof(t_moves[0]), "%s %s", how,
		    path);
	t_nmoves++;
	return 0;
}

struct t_dirs {
	char		 top[64];
	char		 state[96];
	char		 traces[96];	/* as configured */
	char		 other[96];
	int		 statefd;
};

static int
rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int
setup(void **state)
{
	struct t_dirs *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return -1;
	snprintf(t->top, sizeof(t->top), "/tmp/test_outdir.XXXXXX");
	if (mkdtemp(t->top) == NULL)
		return -1;
	snprintf(t->state, sizeof(t->state), "%s/state", t->top);
	snprintf(t->traces, sizeof(t->traces), "%s/traces", t->top);
	snprintf(t->other, sizeof(t->other), "%s/other", t->top);
	if (mkdir(t->state, 0750) == -1)
		return -1;
	t->statefd = open(t->state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->statefd == -1)
		return -1;
	t_nmoves = 0;
	*state = t;
	return 0;
}

static int
teardown(void **state)
{
	struct t_dirs *t = *state;

	outdir_fini();
	close(t->statefd);
	nftw(t->top, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
	free(t);
	return 0;
}

static void
t_init(struct t_dirs *t, int keep_configured)
{
	char err[PATH_MAX + 256];

	assert_int_equal(outdir_init(t->statefd, t->state, t->traces,
	    keep_configured, t->traces, err, sizeof(err)), 0);
}

static void
test_outdir_made_at_start(void **state)
{
	struct t_dirs *t = *state;
	struct stat st;

	t_init(t, 0);
	assert_string_equal(outdir_path(), t->traces);
	assert_int_equal(stat(t->traces, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	/* Sessions make their directories through its descriptor. */
	assert_int_equal(mkdirat(outdir_fd(), "s-1-1", 0750), 0);
	assert_int_equal(stat(t->traces, &st), 0);
	assert_string_equal(outdir_default(), t->traces);
}

static void
test_outdir_set_is_kept_across_a_restart(void **state)
{
	struct t_dirs *t = *state;
	char err[PATH_MAX + 256];
	int created = -1;

	t_init(t, 0);
	assert_int_equal(outdir_set(t->other, "set", &created, err,
	    sizeof(err)), 0);
	assert_int_equal(created, 1);
	assert_string_equal(outdir_path(), t->other);
	assert_int_equal(t_nmoves, 1);
	assert_non_null(strstr(t_moves[0], "set "));
	/* A restart goes back there... */
	outdir_fini();
	t_init(t, 0);
	assert_string_equal(outdir_path(), t->other);
	/* ... unless the command line gave a directory. */
	outdir_fini();
	t_init(t, 1);
	assert_string_equal(outdir_path(), t->traces);
	/* 'set default' forgets it. */
	outdir_fini();
	t_init(t, 0);
	assert_int_equal(outdir_set(t->traces, "default", &created, err,
	    sizeof(err)), 0);
	assert_int_equal(created, 0);
	outdir_fini();
	t_init(t, 0);
	assert_string_equal(outdir_path(), t->traces);
}

static void
test_outdir_refused_leaves_the_output_where_it_was(void **state)
{
	struct t_dirs *t = *state;
	char err[PATH_MAX + 256], link[128], open_dir[128];

	t_init(t, 0);
	/* Its parent is missing. */
	snprintf(err, sizeof(err), "%s/no/such", t->top);
	assert_int_equal(outdir_set(err, "set", NULL, err, sizeof(err)),
	    -1);
	assert_true(strlen(err) > 0);
	assert_string_equal(outdir_path(), t->traces);
	/*
	 * A symlink another user planted where the directory should be
	 * (only root can make one of another user's here).
	 */
	snprintf(link, sizeof(link), "%s/link", t->top);
	assert_int_equal(symlink(t->state, link), 0);
	if (geteuid() == 0) {
		assert_int_equal(lchown(link, 1000, 1000), 0);
		assert_int_equal(outdir_set(link, "set", NULL, err,
		    sizeof(err)), -1);
		assert_non_null(strstr(err, "symlink"));
		assert_string_equal(outdir_path(), t->traces);
	}
	/* One others may write into. */
	snprintf(open_dir, sizeof(open_dir), "%s/open", t->top);
	assert_int_equal(mkdir(open_dir, 0777), 0);
	assert_int_equal(chmod(open_dir, 0777), 0);
	assert_int_equal(outdir_set(open_dir, "set", NULL, err, sizeof(err)),
	    -1);
	assert_string_equal(outdir_path(), t->traces);
	assert_int_equal(t_nmoves, 0);
	/* Nothing was remembered for a restart either. */
	outdir_fini();
	t_init(t, 0);
	assert_string_equal(outdir_path(), t->traces);
}

static void
test_outdir_deleted_while_tracing_is_made_again(void **state)
{
	struct t_dirs *t = *state;
	struct stat st;

	t_init(t, 0);
	assert_int_equal(outdir_check(), 0);
	assert_int_equal(rmdir(t->traces), 0);
	assert_int_equal(outdir_check(), 1);
	assert_int_equal(stat(t->traces, &st), 0);
	/* And files go to the new one. */
	assert_int_equal(mkdirat(outdir_fd(), "s-2-2", 0750), 0);
	assert_int_equal(outdir_check(), 0);
}

static void
test_outdir_pause_flush_and_deleted_events(void **state)
{
	struct t_dirs *t = *state;
	uint64_t g;

	t_init(t, 0);
	assert_false(outdir_paused());
	outdir_pause(1);
	assert_true(outdir_paused());
	outdir_pause(0);
	assert_false(outdir_paused());
	g = outdir_flush_gen();
	assert_int_equal(outdir_flush_next(), g + 1);
	assert_int_equal(outdir_flush_next(), g + 2);
	assert_int_equal(outdir_flush_gen(), g + 2);
	assert_int_equal(outdir_deleted(), 0);
	outdir_deleted_add(10);
	outdir_deleted_add(5);
	assert_int_equal(outdir_deleted(), 15);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_outdir_made_at_start,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_outdir_set_is_kept_across_a_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_outdir_refused_leaves_the_output_where_it_was, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_outdir_deleted_while_tracing_is_made_again, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_outdir_pause_flush_and_deleted_events, setup,
		    teardown),
	};

	return cmocka_run_group_tests_name("outdir", tests, NULL, NULL);
}
