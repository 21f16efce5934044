/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of proto/rundir.c: which runtime directories a traced program
 * and tracectl try, and whether a directory, a socket and the daemon
 * behind it are trusted, given what lstat(), fstat(), connect() and
 * SO_PEERCRED said.  The file systems here are the ones a hostile local
 * user can make: /tmp/traced-0 of theirs, a symlink, a directory others
 * may write, a listener of theirs in a root-owned directory, and a
 * setuid program told where to go by its caller's environment.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "rundir.h"

#define ME		1000u	/* the user */
#define OTHER		1001u	/* another local user */
#define DAEMON		998u	/* the system daemon's user */

static const struct rundir_self user = { ME, ME, DAEMON, 0 };
static const struct rundir_self root = { 0, 0, DAEMON, 0 };
/* A setuid-root program run by the user. */
static const struct rundir_self setuid_root = { ME, 0, DAEMON, 1 };

static struct rundir_stat
st(mode_t mode, uid_t uid)
{
	struct rundir_stat s = { 0, mode, uid };

	return s;
}

static struct rundir_stat
st_err(int err)
{
	struct rundir_stat s = { err, 0, 0 };

	return s;
}

static const char *
why(const struct rundir_verdict *v)
{
	static char buf[256];

	return rundir_describe(buf, sizeof(buf), v);
}

static void
test_rundir_system_uid_is_the_owner_of_run_traced(void **state)
{
	struct rundir_stat run = st(S_IFDIR | 0755, 0);
	struct rundir_stat rt = st(S_IFDIR | 0755, DAEMON);

	(void)state;
	assert_int_equal(rundir_system_uid(&run, &rt), DAEMON);
	rt = st(S_IFDIR | 0755, 0);
	assert_int_equal(rundir_system_uid(&run, &rt), 0);
}

static void
test_rundir_system_uid_none_when_run_is_unsafe(void **state)
{
	struct rundir_stat rt = st(S_IFDIR | 0755, OTHER), run;

	(void)state;
	/* Whoever can write /run could have made /run/traced. */
	run = st(S_IFDIR | 01777, 0);
	assert_int_equal(rundir_system_uid(&run, &rt), RUNDIR_NO_UID);
	run = st(S_IFDIR | 0775, 0);
	assert_int_equal(rundir_system_uid(&run, &rt), RUNDIR_NO_UID);
	run = st(S_IFDIR | 0755, OTHER);
	assert_int_equal(rundir_system_uid(&run, &rt), RUNDIR_NO_UID);
	run = st(S_IFLNK | 0777, 0);
	assert_int_equal(rundir_system_uid(&run, &rt), RUNDIR_NO_UID);
	run = st_err(ENOENT);
	assert_int_equal(rundir_system_uid(&run, &rt), RUNDIR_NO_UID);
}

static void
test_rundir_system_uid_none_when_run_traced_is_not_a_dir(void **state)
{
	struct rundir_stat run = st(S_IFDIR | 0755, 0), rt;

	(void)state;
	rt = st(S_IFLNK | 0777, OTHER);
	assert_int_equal(rundir_system_uid(&run, &rt), RUNDIR_NO_UID);
	rt = st(S_IFREG | 0644, OTHER);
	assert_int_equal(rundir_system_uid(&run, &rt), RUNDIR_NO_UID);
	rt = st_err(ENOENT);
	assert_int_equal(rundir_system_uid(&run, &rt), RUNDIR_NO_UID);
}

static void
test_rundir_candidates_user_then_system(void **state)
{
	struct rundir_cand c[RUNDIR_CAND_MAX];

	(void)state;
	assert_int_equal(rundir_candidates(&user, NULL, "/run/user/1000", c),
	    3);
	assert_int_equal(c[0].kind, RUNDIR_XDG);
	assert_string_equal(c[0].dir, "/run/user/1000/traced");
	assert_int_equal(c[0].parent_len, strlen("/run/user/1000"));
	assert_int_equal(c[1].kind, RUNDIR_TMP);
	assert_string_equal(c[1].dir, "/tmp/traced-1000");
	assert_int_equal(c[1].parent_len, 0);
	assert_int_equal(c[2].kind, RUNDIR_SYSTEM_DAEMON);
	assert_string_equal(c[2].dir, "/run/traced");

	/* No XDG_RUNTIME_DIR, an empty or a relative one: /tmp first. */
	assert_int_equal(rundir_candidates(&root, NULL, NULL, c), 2);
	assert_string_equal(c[0].dir, "/tmp/traced-0");
	assert_string_equal(c[1].dir, "/run/traced");
	assert_int_equal(rundir_candidates(&user, "", "", c), 2);
	assert_int_equal(rundir_candidates(&user, NULL, "run/user", c), 2);
	assert_string_equal(c[0].dir, "/tmp/traced-1000");
	/* $XDG_RUNTIME_DIR/ is opened without its slash: no link followed. */
	assert_int_equal(rundir_candidates(&user, NULL, "/run/user/1000//",
	    c), 3);
	assert_string_equal(c[0].dir, "/run/user/1000/traced");
	assert_int_equal(c[0].parent_len, strlen("/run/user/1000"));
	assert_int_equal(rundir_candidates(&user, NULL, "/", c), 3);
	assert_string_equal(c[0].dir, "//traced");
	assert_int_equal(c[0].parent_len, 1);
}

static void
test_rundir_candidates_explicit_is_the_only_one(void **state)
{
	struct rundir_cand c[RUNDIR_CAND_MAX];

	(void)state;
	assert_int_equal(rundir_candidates(&user, "rt", "/run/user/1000", c),
	    1);
	assert_int_equal(c[0].kind, RUNDIR_EXPLICIT);
	assert_string_equal(c[0].dir, "rt");
	assert_false(c[0].too_long);
	/* With a trailing slash, open(O_NOFOLLOW) would follow a link. */
	assert_int_equal(rundir_candidates(&user, "/tmp/traced-0//", NULL, c),
	    1);
	assert_string_equal(c[0].dir, "/tmp/traced-0");
	assert_int_equal(rundir_candidates(&user, "/", NULL, c), 1);
	assert_string_equal(c[0].dir, "/");
}

static void
test_rundir_candidates_secure_only_the_system_daemon(void **state)
{
	struct rundir_cand c[RUNDIR_CAND_MAX];

	(void)state;
	/* The caller's TRACED_RUNTIME_DIR and XDG_RUNTIME_DIR are theirs. */
	assert_int_equal(rundir_candidates(&setuid_root, "/tmp/evil",
	    "/run/user/1000", c), 1);
	assert_int_equal(c[0].kind, RUNDIR_SYSTEM_DAEMON);
	assert_string_equal(c[0].dir, "/run/traced");
}

static void
test_rundir_candidates_too_long_is_marked(void **state)
{
	static char big[RUNDIR_PATH_MAX + 10];
	struct rundir_cand c[RUNDIR_CAND_MAX];

	(void)state;
	memset(big, 'a', sizeof(big) - 1);
	big[0] = '/';
	assert_int_equal(rundir_candidates(&user, big, NULL, c), 1);
	assert_true(c[0].too_long);
	assert_int_equal(strlen(c[0].dir), RUNDIR_PATH_MAX - 1);
	/* A long XDG_RUNTIME_DIR does not hide the other candidates. */
	big[RUNDIR_PATH_MAX - 4] = '\0';
	assert_int_equal(rundir_candidates(&user, NULL, big, c), 3);
	assert_true(c[0].too_long);
	assert_int_equal(c[0].parent_len, 0);
	assert_false(c[1].too_long);
	assert_string_equal(c[2].dir, "/run/traced");
}

static void
test_rundir_dir_trusted_owners(void **state)
{
	struct rundir_stat s;

	(void)state;
	s = st(S_IFDIR | 0700, ME);
	assert_int_equal(rundir_check_dir(&user, &s).why, RUNDIR_OK);
	s = st(S_IFDIR | 0755, 0);
	assert_int_equal(rundir_check_dir(&user, &s).why, RUNDIR_OK);
	s = st(S_IFDIR | 0755, DAEMON);
	assert_int_equal(rundir_check_dir(&user, &s).why, RUNDIR_OK);
	s = st(S_IFDIR | 0755, 0);
	assert_int_equal(rundir_check_dir(&root, &s).why, RUNDIR_OK);
}

static void
test_rundir_dir_of_another_user_refused(void **state)
{
	struct rundir_verdict v;
	struct rundir_stat s = st(S_IFDIR | 0700, OTHER);

	(void)state;
	/* Root's /tmp/traced-0, made by someone else. */
	v = rundir_check_dir(&root, &s);
	assert_int_equal(v.why, RUNDIR_NOT_OWNER);
	assert_int_equal(v.uid, OTHER);
	assert_string_equal(why(&v),
	    "owned by uid 1001, not you, root or the system daemon's user");
	/* With no system daemon's user known, its uid is nobody's. */
	{
		struct rundir_self nosys = { ME, ME, RUNDIR_NO_UID, 0 };

		s = st(S_IFDIR | 0755, DAEMON);
		assert_int_equal(rundir_check_dir(&nosys, &s).why,
		    RUNDIR_NOT_OWNER);
		s = st(S_IFDIR | 0755, RUNDIR_NO_UID);
		assert_int_equal(rundir_check_dir(&nosys, &s).why,
		    RUNDIR_NOT_OWNER);
	}
}

static void
test_rundir_dir_symlink_refused(void **state)
{
	struct rundir_verdict v;
	struct rundir_stat s;

	(void)state;
	/* open(O_NOFOLLOW | O_DIRECTORY) said ENOTDIR; lstat: a link. */
	s = st(S_IFLNK | 0777, OTHER);
	v = rundir_check_dir(&root, &s);
	assert_int_equal(v.why, RUNDIR_SYMLINK);
	assert_string_equal(why(&v), "a symlink: not trusted");
	/* Even one of root's: a daemon never makes one. */
	s = st(S_IFLNK | 0777, 0);
	assert_int_equal(rundir_check_dir(&root, &s).why, RUNDIR_SYMLINK);
	s = st_err(ELOOP);
	assert_int_equal(rundir_check_dir(&root, &s).why, RUNDIR_SYMLINK);
}

static void
test_rundir_dir_writable_by_others_refused(void **state)
{
	struct rundir_verdict v;
	struct rundir_stat s;

	(void)state;
	/* Root's /tmp, sticky: anyone may put a socket in it. */
	s = st(S_IFDIR | 01777, 0);
	v = rundir_check_dir(&root, &s);
	assert_int_equal(v.why, RUNDIR_WRITABLE);
	assert_string_equal(why(&v), "writable by group or others");
	s = st(S_IFDIR | 0775, ME);
	assert_int_equal(rundir_check_dir(&user, &s).why, RUNDIR_WRITABLE);
	s = st(S_IFDIR | 0757, ME);
	assert_int_equal(rundir_check_dir(&user, &s).why, RUNDIR_WRITABLE);
	/* Readable by all is fine: the system daemon's is 0755. */
	s = st(S_IFDIR | 0755, ME);
	assert_int_equal(rundir_check_dir(&user, &s).why, RUNDIR_OK);
}

static void
test_rundir_dir_missing_and_other_errors(void **state)
{
	struct rundir_verdict v;
	struct rundir_stat s;

	(void)state;
	s = st_err(ENOENT);
	v = rundir_check_dir(&user, &s);
	assert_int_equal(v.why, RUNDIR_MISSING);
	assert_string_equal(why(&v), "missing");
	s = st_err(EACCES);
	v = rundir_check_dir(&user, &s);
	assert_int_equal(v.why, RUNDIR_DENIED);
	assert_string_equal(why(&v), "permission denied");
	s = st(S_IFREG | 0600, ME);
	assert_int_equal(rundir_check_dir(&user, &s).why, RUNDIR_NOT_DIR);
	s = st_err(EIO);
	v = rundir_check_dir(&user, &s);
	assert_int_equal(v.why, RUNDIR_ERRNO);
	assert_int_equal(v.err, EIO);
	assert_string_equal(why(&v), strerror(EIO));
}

static void
test_rundir_secure_trusts_only_root_and_the_daemon(void **state)
{
	struct rundir_verdict v;
	struct rundir_stat s;

	(void)state;
	/* A directory of the caller's is not the setuid program's. */
	s = st(S_IFDIR | 0700, ME);
	v = rundir_check_dir(&setuid_root, &s);
	assert_int_equal(v.why, RUNDIR_NOT_OWNER);
	assert_non_null(strstr(why(&v), "not root or the system daemon's "
	    "user"));
	s = st(S_IFDIR | 0755, DAEMON);
	assert_int_equal(rundir_check_dir(&setuid_root, &s).why, RUNDIR_OK);
	assert_int_equal(rundir_check_peer(&setuid_root, ME).why,
	    RUNDIR_PEER);
	assert_int_equal(rundir_check_peer(&setuid_root, 0).why, RUNDIR_OK);
	assert_int_equal(rundir_check_peer(&setuid_root, DAEMON).why,
	    RUNDIR_OK);
	/* A setuid program of another user than root: same rule. */
	{
		struct rundir_self setuid_other = { ME, OTHER, DAEMON, 1 };

		assert_int_equal(rundir_check_peer(&setuid_other, OTHER).why,
		    RUNDIR_PEER);
		assert_int_equal(rundir_check_peer(&setuid_other, ME).why,
		    RUNDIR_PEER);
	}
}

static void
test_rundir_peer_trusted_or_not(void **state)
{
	struct rundir_verdict v;

	(void)state;
	assert_int_equal(rundir_check_peer(&user, ME).why, RUNDIR_OK);
	assert_int_equal(rundir_check_peer(&user, 0).why, RUNDIR_OK);
	assert_int_equal(rundir_check_peer(&user, DAEMON).why, RUNDIR_OK);
	/* A listener of another user in a root-owned directory. */
	v = rundir_check_peer(&root, OTHER);
	assert_int_equal(v.why, RUNDIR_PEER);
	assert_int_equal(v.uid, OTHER);
	assert_string_equal(why(&v), "the daemon there runs as uid 1001, "
	    "not you, root or the system daemon's user");
	/* The effective uid counts as the user too. */
	{
		struct rundir_self seteuid = { ME, OTHER, DAEMON, 0 };

		assert_int_equal(rundir_check_peer(&seteuid, OTHER).why,
		    RUNDIR_OK);
	}
	assert_int_equal(rundir_check_peer(&user, RUNDIR_NO_UID).why,
	    RUNDIR_PEER);
}

static void
test_rundir_xdg_must_be_the_users(void **state)
{
	struct rundir_verdict v;
	struct rundir_stat s;

	(void)state;
	s = st(S_IFDIR | 0700, ME);
	assert_int_equal(rundir_check_xdg(&user, &s).why, RUNDIR_OK);
	/* Root's own directory is not the user's XDG_RUNTIME_DIR. */
	s = st(S_IFDIR | 0700, 0);
	v = rundir_check_xdg(&user, &s);
	assert_int_equal(v.why, RUNDIR_NOT_YOURS);
	assert_string_equal(why(&v), "owned by uid 0, not you");
	/* A user's XDG_RUNTIME_DIR kept through sudo is not root's. */
	s = st(S_IFDIR | 0700, ME);
	assert_int_equal(rundir_check_xdg(&root, &s).why, RUNDIR_NOT_YOURS);
	s = st(S_IFDIR | 0777, ME);
	assert_int_equal(rundir_check_xdg(&user, &s).why, RUNDIR_WRITABLE);
	s = st(S_IFLNK | 0777, ME);
	assert_int_equal(rundir_check_xdg(&user, &s).why, RUNDIR_SYMLINK);
	s = st_err(ENOENT);
	assert_int_equal(rundir_check_xdg(&user, &s).why, RUNDIR_MISSING);
}

static void
test_rundir_socket_checks(void **state)
{
	struct rundir_verdict v;
	struct rundir_stat s;

	(void)state;
	s = st(S_IFSOCK | 0666, 0);
	assert_int_equal(rundir_check_socket(&s).why, RUNDIR_OK);
	s = st_err(ENOENT);
	assert_int_equal(rundir_check_socket(&s).why, RUNDIR_MISSING);
	s = st(S_IFLNK | 0777, 0);
	assert_int_equal(rundir_check_socket(&s).why, RUNDIR_SYMLINK);
	s = st(S_IFREG | 0644, 0);
	v = rundir_check_socket(&s);
	assert_int_equal(v.why, RUNDIR_NOT_SOCKET);
	assert_string_equal(why(&v), "not a socket");
}

static void
test_rundir_connect_errors(void **state)
{
	struct rundir_verdict v;

	(void)state;
	assert_int_equal(rundir_check_connect(0).why, RUNDIR_OK);
	assert_int_equal(rundir_check_connect(ENOENT).why, RUNDIR_MISSING);
	assert_int_equal(rundir_check_connect(EACCES).why, RUNDIR_DENIED);
	v = rundir_check_connect(ECONNREFUSED);
	assert_int_equal(v.why, RUNDIR_NOT_LISTENING);
	assert_string_equal(why(&v), "nobody listening: a stale socket");
	v = rundir_check_connect(EAGAIN);
	assert_int_equal(v.why, RUNDIR_ERRNO);
	assert_int_equal(v.err, EAGAIN);
}

static void
test_rundir_tried_list_in_one_line(void **state)
{
	struct rundir_verdict v;
	struct rundir_stat s;
	char buf[256] = "";

	(void)state;
	s = st_err(ENOENT);
	v = rundir_check_dir(&user, &s);
	rundir_tried_add(buf, sizeof(buf), "/run/user/1000/traced", &v);
	s = st(S_IFDIR | 0700, OTHER);
	v = rundir_check_dir(&user, &s);
	rundir_tried_add(buf, sizeof(buf), "/tmp/traced-1000", &v);
	v = rundir_check_connect(EACCES);
	rundir_tried_add(buf, sizeof(buf), "/run/traced/client.sock", &v);
	assert_string_equal(buf, "/run/user/1000/traced (missing), "
	    "/tmp/traced-1000 (owned by uid 1001, not you, root or the "
	    "system daemon's user), /run/traced/client.sock (permission "
	    "denied)");
}

static void
test_rundir_tried_list_cut_short(void **state)
{
	struct rundir_verdict v = rundir_check_connect(ENOENT);
	char buf[24];
	int i;

	(void)state;
	memset(buf, 0, sizeof(buf));
	for (i = 0; i < 5; i++)
		rundir_tried_add(buf, sizeof(buf), "/tmp/traced-1000", &v);
	assert_int_equal(strlen(buf), sizeof(buf) - 1);
	assert_memory_equal(buf, "/tmp/traced-1000 (missi", sizeof(buf));
	/* A full buffer stays as it is. */
	rundir_tried_add(buf, sizeof(buf), "/x", &v);
	assert_int_equal(strlen(buf), sizeof(buf) - 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_rundir_system_uid_is_the_owner_of_run_traced),
		cmocka_unit_test(
		    test_rundir_system_uid_none_when_run_is_unsafe),
		cmocka_unit_test(
		    test_rundir_system_uid_none_when_run_traced_is_not_a_dir),
		cmocka_unit_test(test_rundir_candidates_user_then_system),
		cmocka_unit_test(
		    test_rundir_candidates_explicit_is_the_only_one),
		cmocka_unit_test(
		    test_rundir_candidates_secure_only_the_system_daemon),
		cmocka_unit_test(test_rundir_candidates_too_long_is_marked),
		cmocka_unit_test(test_rundir_dir_trusted_owners),
		cmocka_unit_test(test_rundir_dir_of_another_user_refused),
		cmocka_unit_test(test_rundir_dir_symlink_refused),
		cmocka_unit_test(test_rundir_dir_writable_by_others_refused),
		cmocka_unit_test(test_rundir_dir_missing_and_other_errors),
		cmocka_unit_test(
		    test_rundir_secure_trusts_only_root_and_the_daemon),
		cmocka_unit_test(test_rundir_peer_trusted_or_not),
		cmocka_unit_test(test_rundir_xdg_must_be_the_users),
		cmocka_unit_test(test_rundir_socket_checks),
		cmocka_unit_test(test_rundir_connect_errors),
		cmocka_unit_test(test_rundir_tried_list_in_one_line),
		cmocka_unit_test(test_rundir_tried_list_cut_short),
	};

	return cmocka_run_group_tests_name("rundir", tests, NULL, NULL);
}
