/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of daemon/outdir.c, where traces go, in a scratch directory:
 * the trace directory made and opened at start; 'trace-file set'
 * moving it and being remembered in <state-dir>/trace-dir for the next
 * start, 'set default' forgetting that, the command line's directory
 * winning over it; a directory the daemon may not trust (fsdir.c's
 * rules) refused with the output left where it was; a trace directory
 * deleted while tracing made again; and the daemon-wide state kept
 * beside it (paused, the flush generation, the events deleted).
 *
 * Linked with the real directory checks (fsdir.c) and log (log.c); the
 * index is faked: index_trace_dir_set() notes what it was told.
 */
#include <sys/mman.h>
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
#include "daemon/log.h"
#include "daemon/outdir.h"

/* stderr, into a memfd while a test reads what was logged. */
static struct {
	int	 saved;			/* the real stderr, or -1 */
	int	 fd;
} t_err = { -1, -1 };

static void
t_capture(void)
{
	t_err.fd = memfd_create("stderr", MFD_CLOEXEC);
	assert_int_not_equal(t_err.fd, -1);
	t_err.saved = dup(STDERR_FILENO);
	assert_int_not_equal(t_err.saved, -1);
	assert_int_not_equal(dup2(t_err.fd, STDERR_FILENO), -1);
}

/* Stop capturing; what was logged meanwhile, NUL-terminated, in buf. */
static void
t_captured(char *buf, size_t size)
{
	ssize_t n;

	if (t_err.saved == -1)
		return;
	dup2(t_err.saved, STDERR_FILENO);
	close(t_err.saved);
	t_err.saved = -1;
	n = pread(t_err.fd, buf, size - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	close(t_err.fd);
}

/* How many times 'what' is in 's'. */
static unsigned
t_count(const char *s, const char *what)
{
	unsigned n = 0;

	while ((s = strstr(s, what)) != NULL) {
		n++;
		s += strlen(what);
	}
	return n;
}

/* What the fake index was told. */
static struct {
	unsigned	 calls;
	char		 path[PATH_MAX];
	char		 how[16];
} t_index;

/* In place of index.c: the trace-file history, noted. */
int
index_trace_dir_set(const char *path, const char *how)
{
	t_index.calls++;
	snprintf(t_index.path, sizeof(t_index.path), "%s", path);
	snprintf(t_index.how, sizeof(t_index.how), "%s", how);
	return 0;
}

/* The scratch directory and the paths the tests use in it. */
static struct {
	char	 top[64];		/* mkdtemp: /tmp/test_outdir.XXXXXX */
	char	 state[96];		/* top/state, open as state_fd */
	char	 traces[96];		/* top/traces: the configured one */
	char	 other[96];		/* top/other: 'trace-file set' */
	char	 kept[128];		/* top/state/trace-dir */
	int	 state_fd;
} t;

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
	(void)state;
	memset(&t_index, 0, sizeof(t_index));
	snprintf(t.top, sizeof(t.top), "/tmp/test_outdir.XXXXXX");
	if (mkdtemp(t.top) == NULL)
		return -1;
	snprintf(t.state, sizeof(t.state), "%s/state", t.top);
	snprintf(t.traces, sizeof(t.traces), "%s/traces", t.top);
	snprintf(t.other, sizeof(t.other), "%s/other", t.top);
	snprintf(t.kept, sizeof(t.kept), "%s/trace-dir", t.state);
	if (mkdir(t.state, 0700) == -1)
		return -1;
	t.state_fd = open(t.state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return t.state_fd == -1 ? -1 : 0;
}

static int
teardown(void **state)
{
	char buf[16];

	(void)state;
	t_captured(buf, sizeof(buf));	/* if a test failed capturing */
	outdir_fini();
	close(t.state_fd);
	nftw(t.top, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
	return 0;
}

/* Start as the daemon does, with 'traces' configured and the default. */
static int
t_init(int keep_configured)
{
	char err[PATH_MAX + 256];

	outdir_fini();
	err[0] = '\0';
	return outdir_init(t.state_fd, t.state, t.traces, keep_configured,
	    t.traces, err, sizeof(err));
}

/* Is the trace directory's descriptor the directory at 'path'? */
static int
t_fd_is(const char *path)
{
	struct stat a, b;

	if (stat(path, &a) == -1 || fstat(outdir_fd(), &b) == -1)
		return 0;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* What <state-dir>/trace-dir holds, or "" if there is none. */
static const char *
t_kept(void)
{
	static char buf[PATH_MAX];
	ssize_t n = 0;
	int fd;

	if ((fd = open(t.kept, O_RDONLY | O_CLOEXEC)) != -1) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* outdir_set(), expecting a refusal that says 'reason'. */
static void
t_set_refused(const char *path, const char *reason)
{
	char err[PATH_MAX + 256] = "";
	int created = -1;

	assert_int_equal(outdir_set(path, "set", &created, err, sizeof(err)),
	    -1);
	if (strstr(err, reason) == NULL)
		fail_msg("wanted \"%s\" in: %s", reason, err);
	assert_int_equal(created, -1);
}

static void
test_outdir_init_makes_and_opens_the_trace_dir(void **state)
{
	struct stat st;
	char deep[PATH_MAX], err[PATH_MAX + 256];

	(void)state;
	assert_int_equal(t_init(0), 0);
	assert_string_equal(outdir_path(), t.traces);
	assert_string_equal(outdir_default(), t.traces);
	assert_true(t_fd_is(t.traces));
	assert_int_equal(stat(t.traces, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0750);
	/* Nothing to remember: it is the configured one. */
	assert_string_equal(t_kept(), "");
	assert_int_equal(t_index.calls, 0);

	/* Every missing directory on the way is made. */
	outdir_fini();
	snprintf(deep, sizeof(deep), "%s/a/b/c", t.top);
	assert_int_equal(outdir_init(t.state_fd, t.state, deep, 0, deep, err,
	    sizeof(err)), 0);
	assert_true(t_fd_is(deep));
}

static void
test_outdir_set_moves_and_is_remembered(void **state)
{
	char err[PATH_MAX + 256];
	int created = -1;

	(void)state;
	assert_int_equal(t_init(0), 0);
	assert_int_equal(outdir_set(t.other, "set", &created, err,
	    sizeof(err)), 0);
	assert_int_equal(created, 1);
	assert_string_equal(outdir_path(), t.other);
	assert_true(t_fd_is(t.other));
	assert_int_equal(t_index.calls, 1);
	assert_string_equal(t_index.path, t.other);
	assert_string_equal(t_index.how, "set");
	/* Kept for a restart, one line. */
	assert_int_equal(strncmp(t_kept(), t.other, strlen(t.other)), 0);
	assert_string_equal(t_kept() + strlen(t.other), "\n");
	/* The default stays what main.c said. */
	assert_string_equal(outdir_default(), t.traces);

	/* Set again to the same place: there already, not created. */
	assert_int_equal(outdir_set(t.other, "set", &created, err,
	    sizeof(err)), 0);
	assert_int_equal(created, 0);

	/* The next start goes where 'set' said. */
	assert_int_equal(t_init(0), 0);
	assert_string_equal(outdir_path(), t.other);
	assert_true(t_fd_is(t.other));
}

static void
test_outdir_set_default_forgets(void **state)
{
	char err[PATH_MAX + 256];

	(void)state;
	assert_int_equal(t_init(0), 0);
	assert_int_equal(outdir_set(t.other, "set", NULL, err, sizeof(err)),
	    0);
	assert_string_not_equal(t_kept(), "");
	assert_int_equal(outdir_set(outdir_default(), "default", NULL, err,
	    sizeof(err)), 0);
	assert_string_equal(outdir_path(), t.traces);
	assert_true(t_fd_is(t.traces));
	assert_string_equal(t_kept(), "");
	assert_string_equal(t_index.how, "default");
	assert_int_equal(t_init(0), 0);
	assert_string_equal(outdir_path(), t.traces);

	/* A reload (SIGHUP) moves it without remembering either way. */
	assert_int_equal(outdir_set(t.other, "reload", NULL, err,
	    sizeof(err)), 0);
	assert_string_equal(t_kept(), "");
	assert_int_equal(outdir_set(t.traces, "set", NULL, err,
	    sizeof(err)), 0);
	assert_int_equal(outdir_set(t.other, "reload", NULL, err,
	    sizeof(err)), 0);
	assert_int_equal(strncmp(t_kept(), t.traces, strlen(t.traces)), 0);
}

/*
 * 'traced --trace-dir reltraces': the command line's directory is
 * relative to where the daemon started.  'set default' goes back to it
 * after a 'set' elsewhere (and forgets that 'set'); only a path given
 * to 'set' must be absolute, as it is remembered for the next start.
 */
static void
test_outdir_relative_default_is_taken(void **state)
{
	char err[PATH_MAX + 256], cwd[PATH_MAX];

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(t.top), 0);
	outdir_fini();
	err[0] = '\0';
	if (outdir_init(t.state_fd, t.state, "traces", 1, "traces", err,
	    sizeof(err)) == -1)
		fail_msg("init with a relative trace dir: %s", err);
	assert_true(t_fd_is(t.traces));
	assert_int_equal(outdir_set(t.other, "set", NULL, err, sizeof(err)),
	    0);
	assert_string_not_equal(t_kept(), "");
	if (outdir_set(outdir_default(), "default", NULL, err,
	    sizeof(err)) == -1)
		fail_msg("set default (relative): %s", err);
	assert_string_equal(outdir_path(), "traces");
	assert_true(t_fd_is(t.traces));
	assert_string_equal(t_kept(), "");
	assert_int_equal(outdir_set("traces", "reload", NULL, err,
	    sizeof(err)), 0);
	t_set_refused("traces", "is relative");
	assert_int_equal(chdir(cwd), 0);
}

static void
test_outdir_keep_configured_ignores_the_remembered(void **state)
{
	char err[PATH_MAX + 256];

	(void)state;
	assert_int_equal(t_init(0), 0);
	assert_int_equal(outdir_set(t.other, "set", NULL, err, sizeof(err)),
	    0);
	/* --trace-dir on the command line wins over 'set'. */
	assert_int_equal(t_init(1), 0);
	assert_string_equal(outdir_path(), t.traces);
	assert_true(t_fd_is(t.traces));
	/* And does not forget it for a start without --trace-dir. */
	assert_int_equal(t_init(0), 0);
	assert_string_equal(outdir_path(), t.other);
}

static void
test_outdir_remembered_dir_gone_falls_back(void **state)
{
	char err[PATH_MAX + 256];

	(void)state;
	assert_int_equal(t_init(0), 0);
	assert_int_equal(outdir_set(t.other, "set", NULL, err, sizeof(err)),
	    0);
	outdir_fini();
	assert_int_equal(rmdir(t.other), 0);
	/* Not made again: it is not the configured one; traces go there. */
	assert_int_equal(t_init(0), 0);
	assert_string_equal(outdir_path(), t.traces);
	assert_true(t_fd_is(t.traces));
	assert_int_equal(access(t.other, F_OK), -1);
}

static void
test_outdir_set_refuses_untrusted_dirs(void **state)
{
	char path[PATH_MAX], pub[128], file[128];
	int fd;

	(void)state;
	assert_int_equal(t_init(0), 0);

	/* Writable by others: they could replace what is written. */
	snprintf(path, sizeof(path), "%s/open", t.top);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(chmod(path, 0777), 0);
	t_set_refused(path, "writable by others");
	assert_int_equal(chmod(path, 0770), 0);
	t_set_refused(path, "writable by its group");

	/* '..' on the way. */
	snprintf(path, sizeof(path), "%s/state/../other", t.top);
	t_set_refused(path, "'..' in the path");

	/* Not a directory. */
	snprintf(file, sizeof(file), "%s/file", t.top);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_int_not_equal(fd, -1);
	close(fd);
	t_set_refused(file, "is not a directory");

	/* A symlink in a directory others may write (no sticky bit). */
	snprintf(pub, sizeof(pub), "%s/pub", t.top);
	assert_int_equal(mkdir(pub, 0700), 0);
	assert_int_equal(chmod(pub, 0777), 0);
	snprintf(path, sizeof(path), "%s/link", pub);
	assert_int_equal(symlink(t.state, path), 0);
	t_set_refused(path, "is a symlink that another user could replace");

	/* Its parent missing: 'set' makes the last component only. */
	snprintf(path, sizeof(path), "%s/no/such", t.top);
	t_set_refused(path, "No such file or directory");
	assert_int_equal(access(path, F_OK), -1);

	/* Relative: it would not be found again at a restart. */
	t_set_refused("traces", "is relative");

	/* Through it all, the output stayed where it was. */
	assert_string_equal(outdir_path(), t.traces);
	assert_true(t_fd_is(t.traces));
	assert_string_equal(t_kept(), "");
	assert_int_equal(t_index.calls, 0);
}

static void
test_outdir_check_makes_a_deleted_dir_again(void **state)
{
	char log[4096];
	int fd;

	(void)state;
	assert_int_equal(t_init(0), 0);
	assert_int_equal(outdir_check(), 0);
	assert_int_equal(rmdir(t.traces), 0);
	t_capture();
	assert_int_equal(outdir_check(), 1);
	t_captured(log, sizeof(log));
	assert_non_null(strstr(log, "was deleted while tracing; made it "
	    "again"));
	assert_true(t_fd_is(t.traces));
	assert_int_equal(outdir_check(), 0);

	/*
	 * Something else in its place: it cannot be made, which is said
	 * once however often it is checked...
	 */
	assert_int_equal(rmdir(t.traces), 0);
	fd = open(t.traces, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_int_not_equal(fd, -1);
	close(fd);
	t_capture();
	assert_int_equal(outdir_check(), -1);
	assert_int_equal(outdir_check(), -1);
	assert_int_equal(outdir_check(), -1);
	t_captured(log, sizeof(log));
	assert_int_equal(t_count(log, "cannot be made again"), 1);
	assert_non_null(strstr(log, "is not a directory"));
	/* ...until it can. */
	assert_int_equal(unlink(t.traces), 0);
	assert_int_equal(outdir_check(), 1);
	assert_true(t_fd_is(t.traces));
	assert_string_equal(outdir_path(), t.traces);
	assert_int_equal(outdir_check(), 0);

	/*
	 * Failing once, then moved elsewhere: the loss of the new
	 * directory is news, said again.
	 */
	assert_int_equal(rmdir(t.traces), 0);
	fd = open(t.traces, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_int_not_equal(fd, -1);
	close(fd);
	t_capture();
	assert_int_equal(outdir_check(), -1);
	t_captured(log, sizeof(log));
	assert_int_equal(t_count(log, "cannot be made again"), 1);
	assert_int_equal(unlink(t.traces), 0);
	assert_int_equal(outdir_set(t.other, "set", NULL, log, sizeof(log)),
	    0);
	assert_int_equal(rmdir(t.other), 0);
	fd = open(t.other, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_int_not_equal(fd, -1);
	close(fd);
	t_capture();
	assert_int_equal(outdir_check(), -1);
	t_captured(log, sizeof(log));
	assert_int_equal(t_count(log, "cannot be made again"), 1);
	assert_int_equal(unlink(t.other), 0);
}

static void
test_outdir_pause_flush_and_deleted_counts(void **state)
{
	uint64_t gen, deleted;

	(void)state;
	assert_int_equal(t_init(0), 0);
	outdir_pause(0);
	assert_int_equal(outdir_paused(), 0);
	outdir_pause(1);
	assert_int_equal(outdir_paused(), 1);
	outdir_pause(2);
	assert_int_equal(outdir_paused(), 1);
	outdir_pause(0);
	assert_int_equal(outdir_paused(), 0);

	gen = outdir_flush_gen();
	assert_int_equal(outdir_flush_next(), gen + 1);
	assert_int_equal(outdir_flush_gen(), gen + 1);
	assert_int_equal(outdir_flush_next(), gen + 2);
	assert_int_equal(outdir_flush_gen(), gen + 2);

	deleted = outdir_deleted();
	outdir_deleted_add(5);
	outdir_deleted_add(0);
	outdir_deleted_add(UINT64_C(1) << 40);
	assert_int_equal(outdir_deleted(), deleted + 5 + (UINT64_C(1) << 40));
}

#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_outdir_init_makes_and_opens_the_trace_dir),
		T(test_outdir_set_moves_and_is_remembered),
		T(test_outdir_set_default_forgets),
		T(test_outdir_relative_default_is_taken),
		T(test_outdir_keep_configured_ignores_the_remembered),
		T(test_outdir_remembered_dir_gone_falls_back),
		T(test_outdir_set_refuses_untrusted_dirs),
		T(test_outdir_check_makes_a_deleted_dir_again),
		T(test_outdir_pause_flush_and_deleted_counts),
	};

	log_init();
	return cmocka_run_group_tests_name("outdir", tests, NULL, NULL);
}
