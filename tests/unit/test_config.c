/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of daemon/config.c: the defaults of the system and per-user
 * daemons (with and without the directories systemd passes), the
 * parser of traced.conf(5) on good files and on every kind of bad line
 * (each refused with file:line and the reason), the values options and
 * files share, and the helpers SIGHUP uses (copy, compare, format).
 * Files for config_load() are real, in a temporary directory.
 */
#include <errno.h>
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

#include "daemon/config.h"
#include "ring.h"

static const char *const env_vars[] = {
	"RUNTIME_DIRECTORY", "STATE_DIRECTORY", "XDG_RUNTIME_DIR",
	"XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "HOME",
};

static int
clear_env(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(env_vars) / sizeof(env_vars[0]); i++)
		unsetenv(env_vars[i]);
	return 0;
}

/* Parse 'text' as file "t.conf" into a fresh config. */
static int
parse(const char *text, struct config *c, unsigned *set, char *err,
    size_t errsize)
{
	memset(c, 0, sizeof(*c));
	*set = 0;
	err[0] = '\0';
	return config_parse(c, set, "t.conf", text, err, errsize);
}

/* Assert that 'text' is refused with exactly 'want' as the message. */
static void
assert_refused(const char *text, const char *want)
{
	struct config c;
	unsigned set;
	char err[512];

	assert_int_equal(parse(text, &c, &set, err, sizeof(err)), -1);
	assert_string_equal(err, want);
	config_fini(&c);
}

static void
test_config_defaults_system(void **state)
{
	struct config c;

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_int_equal(config_defaults(&c, 1), 0);
	assert_int_equal(c.user, 0);
	assert_string_equal(c.runtime_dir, "/run/traced");
	assert_string_equal(c.state_dir, "/var/lib/traced");
	assert_string_equal(c.trace_dir, "/var/lib/traced/traces");
	assert_int_equal(c.ring_order, TRACED_RING_ORDER_DEFAULT);
	assert_int_equal(c.drain_ms, 100);
	assert_int_equal(c.writeout_nice, 0);
	assert_int_equal(c.direct_io, 1);
	assert_true(c.workers >= 1 && c.workers <= 64);
	config_fini(&c);
}

/* Under systemd: RuntimeDirectory=, StateDirectory= win. */
static void
test_config_defaults_system_from_systemd(void **state)
{
	struct config c;

	(void)state;
	setenv("RUNTIME_DIRECTORY", "/run/x:/run/y", 1);
	setenv("STATE_DIRECTORY", "/var/lib/x", 1);
	memset(&c, 0, sizeof(c));
	assert_int_equal(config_defaults(&c, 1), 0);
	assert_string_equal(c.runtime_dir, "/run/x");
	assert_string_equal(c.state_dir, "/var/lib/x");
	assert_string_equal(c.trace_dir, "/var/lib/x/traces");
	config_fini(&c);

	/* A relative value is not systemd's: ignored. */
	setenv("RUNTIME_DIRECTORY", "run/x", 1);
	memset(&c, 0, sizeof(c));
	assert_int_equal(config_defaults(&c, 1), 0);
	assert_string_equal(c.runtime_dir, "/run/traced");
	config_fini(&c);
}

static void
test_config_defaults_user(void **state)
{
	struct config c;
	char buf[64];

	(void)state;
	setenv("HOME", "/home/u", 1);
	memset(&c, 0, sizeof(c));
	assert_int_equal(config_defaults(&c, 0), 0);
	assert_int_equal(c.user, 1);
	snprintf(buf, sizeof(buf), "/tmp/traced-%u", (unsigned)getuid());
	assert_string_equal(c.runtime_dir, buf);
	assert_string_equal(c.state_dir, "/home/u/.local/state/traced");
	assert_string_equal(c.trace_dir, "/home/u/.local/share/traced/traces");
	config_fini(&c);

	setenv("XDG_RUNTIME_DIR", "/run/user/7", 1);
	setenv("XDG_STATE_HOME", "/s", 1);
	setenv("XDG_DATA_HOME", "/d", 1);
	memset(&c, 0, sizeof(c));
	assert_int_equal(config_defaults(&c, 0), 0);
	assert_string_equal(c.runtime_dir, "/run/user/7/traced");
	assert_string_equal(c.state_dir, "/s/traced");
	assert_string_equal(c.trace_dir, "/d/traced/traces");
	config_fini(&c);
}

static void
test_config_default_file(void **state)
{
	char *p;

	(void)state;
	p = config_default_file(1);
	assert_string_equal(p, "/etc/traced/traced.conf");
	free(p);
	setenv("HOME", "/home/u", 1);
	p = config_default_file(0);
	assert_string_equal(p, "/home/u/.config/traced/traced.conf");
	free(p);
	setenv("XDG_CONFIG_HOME", "/c", 1);
	p = config_default_file(0);
	assert_string_equal(p, "/c/traced/traced.conf");
	free(p);
}

/* Every key, comments, blanks, tabs, CRLF, trailing comments. */
static void
test_config_parse_every_key(void **state)
{
	struct config c;
	unsigned set;
	char err[512];

	(void)state;
	assert_int_equal(parse(
	    "# traced.conf\n"
	    "\n"
	    "   # indented comment\n"
	    "runtime-dir = /run/t\n"
	    "trace-dir=/data/traces#not a comment\n"
	    "\tstate-dir\t=\t/var/lib/t\t\n"
	    "ring-size = 8K   # 2^13\n"
	    "ring-pool = 2\n"
	    "workers = 3\r\n"
	    "drain-interval = 250\n"
	    "writeout-nice = 0\n"
	    "direct-io = off\n"
	    "sessions-per-uid = 7\n"
	    "rings-per-uid = 100\n"
	    "ring-bytes-per-uid = 64M\n"
	    "providers-per-session = 3\n"
	    "events-per-session = 300\n"
	    "event-classes-per-uid = 1000\n"
	    "event-ids-per-uid = 2000\n"
	    "functions-per-uid = 3000\n"
	    "modules-per-uid = 40\n"
	    "control-connections-per-uid = 2\n"
	    "control-output-per-uid = 1M\n"
	    "control-timeout = 5\n"
	    "index-max-age = 7\n"
	    "index-max-sessions = 500\n"
	    "stream-max-size = 64M\n"
	    "trace-dir-bytes-per-uid = 20G\n"
	    "recorder = 64M\n"
	    "recorder-bytes-per-uid = 1G\n"
	    "recorder-keep = 4\n"
	    "recorder-keep-time = 120\n", &c, &set, err, sizeof(err)), 0);
	assert_int_equal(set, CONFIG_BIT(CONFIG_NKEYS) - 1);
	assert_int_equal(c.direct_io, 0);
	assert_int_equal(c.ring_pool, 2);
	assert_int_equal(c.limit[LIMIT_SESSIONS], 7);
	assert_int_equal(c.limit[LIMIT_RINGS], 100);
	assert_int_equal(c.limit[LIMIT_RING_BYTES], 64u << 20);
	assert_int_equal(c.limit[LIMIT_PROVIDERS], 3);
	assert_int_equal(c.limit[LIMIT_SESSION_EVENTS], 300);
	assert_int_equal(c.limit[LIMIT_EVENT_CLASSES], 1000);
	assert_int_equal(c.limit[LIMIT_EVENT_IDS], 2000);
	assert_int_equal(c.limit[LIMIT_FUNCTIONS], 3000);
	assert_int_equal(c.limit[LIMIT_MODULES], 40);
	assert_int_equal(c.limit[LIMIT_CONTROL_CONNS], 2);
	assert_int_equal(c.limit[LIMIT_CONTROL_OUTPUT], 1u << 20);
	assert_int_equal(c.limit[LIMIT_CONTROL_TIMEOUT], 5);
	assert_int_equal(c.limit[LIMIT_INDEX_DAYS], 7);
	assert_int_equal(c.limit[LIMIT_INDEX_SESSIONS], 500);
	assert_int_equal(c.limit[LIMIT_STREAM_SIZE], 64u << 20);
	assert_int_equal(c.limit[LIMIT_TRACE_BYTES], 20ull << 30);
	assert_int_equal(c.limit[LIMIT_RECORDER], 64u << 20);
	assert_int_equal(c.limit[LIMIT_RECORDER_BYTES], 1u << 30);
	assert_int_equal(c.limit[LIMIT_RECORDER_KEEP], 4);
	assert_int_equal(c.limit[LIMIT_RECORDER_KEEP_TIME], 120);
	assert_string_equal(c.runtime_dir, "/run/t");
	assert_string_equal(c.trace_dir, "/data/traces#not a comment");
	assert_string_equal(c.state_dir, "/var/lib/t");
	assert_int_equal(c.ring_order, 13);	/* 8K */
	assert_int_equal(c.workers, 3);
	assert_int_equal(c.drain_ms, 250);
	assert_int_equal(c.writeout_nice, 0);
	config_fini(&c);
}

static void
test_config_parse_empty_file(void **state)
{
	struct config c;
	unsigned set;
	char err[512];

	(void)state;
	assert_int_equal(parse("", &c, &set, err, sizeof(err)), 0);
	assert_int_equal(set, 0);
	assert_int_equal(parse("# only\n\n  \n# comments\n", &c, &set, err,
	    sizeof(err)), 0);
	assert_int_equal(set, 0);
	assert_null(c.runtime_dir);
}

static void
test_config_parse_refuses_unknown_key(void **state)
{
	(void)state;
	assert_refused("workers = 2\n\nwrokers = 3\n",
	    "t.conf:3: unknown key 'wrokers' (did you mean 'workers'?); "
	    "every key is in traced.conf(5)");
	assert_refused("rings-per-user = 3\n",
	    "t.conf:1: unknown key 'rings-per-user' (did you mean "
	    "'rings-per-uid'?); every key is in traced.conf(5)");
	assert_refused("an-extremely-long-key-name-that-is-not-known = 1\n",
	    "t.conf:1: unknown key 'an-extremely-long-key-name-that'; every "
	    "key is in traced.conf(5)");
}

static void
test_config_parse_refuses_bad_lines(void **state)
{
	(void)state;
	assert_refused("workers 2\n", "t.conf:1: expected 'key = value'");
	assert_refused("# x\n = 2\n", "t.conf:2: no key before '='");
	assert_refused("workers =\n", "t.conf:1: workers has no value");
	assert_refused("workers = # none\n", "t.conf:1: workers has no value");
	assert_refused("workers = 2\nworkers = 3\n",
	    "t.conf:2: workers is already set at line 1");
	assert_refused("trace-dir = traces\n",
	    "t.conf:1: trace-dir: 'traces' is not an absolute path");
}

static void
test_config_parse_refuses_bad_values(void **state)
{
	(void)state;
	assert_refused("workers = 0\n",
	    "t.conf:1: workers: '0' is not a number from 1 to 64");
	assert_refused("workers = 65\n",
	    "t.conf:1: workers: '65' is not a number from 1 to 64");
	assert_refused("workers = -1\n",
	    "t.conf:1: workers: '-1' is not a number from 1 to 64");
	assert_refused("workers = 2x\n",
	    "t.conf:1: workers: '2x' is not a number from 1 to 64");
	assert_refused("drain-interval = 100001\n",
	    "t.conf:1: drain-interval: '100001' is not a number of "
	    "milliseconds from 1 to 100000");
	assert_refused("writeout-nice = 20\n",
	    "t.conf:1: writeout-nice: '20' is not a number from 0 to 19");
	assert_refused("direct-io = yes\n",
	    "t.conf:1: direct-io: 'yes' is neither on nor off");
	assert_refused("ring-pool = 65\n",
	    "t.conf:1: ring-pool: '65' is not a number of rings from 0 to 64");
	assert_refused("ring-pool = -1\n",
	    "t.conf:1: ring-pool: '-1' is not a number of rings from 0 to 64");
	assert_refused("ring-size = big\n",
	    "t.conf:1: ring-size: 'big' is not a size (a power of two "
	    "from 4K to 1G, such as 1M)");
	assert_refused("ring-size = 1T\n",
	    "t.conf:1: ring-size: '1T' is not a size (a power of two "
	    "from 4K to 1G, such as 1M)");
	assert_refused("ring-size = 2K\n",
	    "t.conf:1: ring-size: 2K is less than 4K, the smallest ring");
	assert_refused("ring-size = 2G\n",
	    "t.conf:1: ring-size: 2G is more than 1G, the largest ring");
	assert_refused("ring-size = 99999999999999999999\n",
	    "t.conf:1: ring-size: '99999999999999999999' is not a size "
	    "(a power of two from 4K to 1G, such as 1M)");
	assert_refused("stream-max-size = 100K\n",
	    "t.conf:1: stream-max-size: 100K is too small: a stream file "
	    "holds at least 1M (or 0: no limit)");
	assert_refused("stream-max-size = lots\n",
	    "t.conf:1: stream-max-size: 'lots' is not a size (try 16M)");
	assert_refused("recorder = 1M\n",
	    "t.conf:1: recorder: 1M is too small: a window holds at least "
	    "4M (or 0: off)");
	assert_refused("recorder-keep-time = soon\n",
	    "t.conf:1: recorder-keep-time: 'soon' is not a number of "
	    "seconds");
}

/* Options go through the same function: same values, same checks. */
static void
test_config_set_sizes(void **state)
{
	static const struct {
		const char *text;
		uint32_t order;
	} ok[] = {
		{ "4096", 12 }, { "4K", 12 }, { "4KiB", 12 }, { "4kB", 12 },
		{ "8192", 13 }, { "1M", 20 }, { "4m", 22 }, { "1G", 30 },
		{ "1GiB", 30 }, { "64MB", 26 },
	};
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "4097", "4097 is not a power of two (4K or 8K)" },
		{ "3m", "3m is not a power of two (2M or 4M)" },
		{ "-1", "'-1' is not a size (a power of two from 4K to 1G, "
		    "such as 1M)" },
		{ "0", "0 is less than 4K, the smallest ring" },
		{ "1025M", "1025M is more than 1G, the largest ring" },
	};
	struct config c;
	unsigned set = 0;
	char err[256];
	size_t i;

	(void)state;
	memset(&c, 0, sizeof(c));
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(config_set(&c, &set, CONFIG_RING_SIZE,
		    ok[i].text, err, sizeof(err)), 0);
		assert_int_equal(c.ring_order, ok[i].order);
	}
	assert_int_equal(set, CONFIG_BIT(CONFIG_RING_SIZE));
	set = 0;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(config_set(&c, &set, CONFIG_RING_SIZE,
		    bad[i].text, err, sizeof(err)), -1);
		assert_string_equal(err, bad[i].why);
	}
	assert_int_equal(set, 0);
	assert_int_equal(config_set(&c, &set, CONFIG_RING_SIZE, "", err,
	    sizeof(err)), -1);
	assert_int_equal(config_set(&c, &set, CONFIG_RING_SIZE, "1Mi5", err,
	    sizeof(err)), -1);
	assert_int_equal(config_set(&c, &set, CONFIG_TRACE_DIR, "", err,
	    sizeof(err)), -1);
	assert_string_equal(err, "empty path");
	assert_int_equal(set, 0);
	/* Relative paths are fine on the command line. */
	assert_int_equal(config_set(&c, &set, CONFIG_TRACE_DIR, "rel", err,
	    sizeof(err)), 0);
	assert_string_equal(c.trace_dir, "rel");
	assert_int_equal(config_set(&c, &set, CONFIG_NKEYS, "1", err,
	    sizeof(err)), -1);
	config_fini(&c);
}

static void
test_config_keys(void **state)
{
	int k;

	(void)state;
	for (k = 0; k < CONFIG_NKEYS; k++)
		assert_int_equal(config_key_find(config_key_name(k)), k);
	assert_int_equal(config_key_find("nope"), -1);
	assert_true(config_key_reloadable(CONFIG_TRACE_DIR));
	assert_true(config_key_reloadable(CONFIG_RING_SIZE));
	assert_true(config_key_reloadable(CONFIG_RING_POOL));
	assert_true(config_key_reloadable(CONFIG_DRAIN_INTERVAL));
	assert_true(config_key_reloadable(CONFIG_WRITEOUT_NICE));
	assert_false(config_key_reloadable(CONFIG_RUNTIME_DIR));
	assert_false(config_key_reloadable(CONFIG_STATE_DIR));
	assert_false(config_key_reloadable(CONFIG_WORKERS));
}

/* What main.c does: defaults, then the file's keys, compared by key. */
static void
test_config_copy_equal_format(void **state)
{
	struct config def, file, all;
	unsigned set;
	char err[256], buf[64];

	(void)state;
	memset(&def, 0, sizeof(def));
	memset(&all, 0, sizeof(all));
	assert_int_equal(config_defaults(&def, 1), 0);
	assert_int_equal(parse("ring-size = 64M\ntrace-dir = /t\n", &file,
	    &set, err, sizeof(err)), 0);
	assert_int_equal(config_copy(&all, &def, CONFIG_BIT(CONFIG_NKEYS) - 1),
	    0);
	assert_int_equal(config_copy(&all, &file, set), 0);
	assert_string_equal(all.trace_dir, "/t");
	assert_string_equal(all.runtime_dir, "/run/traced");
	assert_false(config_equal(&all, &def, CONFIG_RING_SIZE));
	assert_true(config_equal(&all, &def, CONFIG_DRAIN_INTERVAL));
	config_format(&all, CONFIG_RING_SIZE, buf, sizeof(buf));
	assert_string_equal(buf, "64M");
	all.ring_order = 12;
	config_format(&all, CONFIG_RING_SIZE, buf, sizeof(buf));
	assert_string_equal(buf, "4K");
	all.ring_order = 30;
	config_format(&all, CONFIG_RING_SIZE, buf, sizeof(buf));
	assert_string_equal(buf, "1G");
	config_format(&all, CONFIG_WRITEOUT_NICE, buf, sizeof(buf));
	assert_string_equal(buf, "0");
	config_fini(&def);
	config_fini(&file);
	config_fini(&all);
}

static char tmpdir[] = "/tmp/test_config.XXXXXX";

static int
make_tmpdir(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) != NULL ? 0 : -1;
}

static void
write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd != -1);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void
test_config_load_files(void **state)
{
	struct config c;
	unsigned set = 0;
	char path[256], err[512], want[512], *big;

	(void)state;
	memset(&c, 0, sizeof(c));
	snprintf(path, sizeof(path), "%s/none.conf", tmpdir);
	assert_int_equal(config_load(&c, &set, path, 0, err, sizeof(err)), 0);
	assert_int_equal(set, 0);
	assert_int_equal(config_load(&c, &set, path, 1, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	assert_string_equal(err, want);

	snprintf(path, sizeof(path), "%s/ok.conf", tmpdir);
	write_file(path, "workers = 5\n", 12);
	assert_int_equal(config_load(&c, &set, path, 1, err, sizeof(err)), 1);
	assert_int_equal(c.workers, 5);
	assert_int_equal(set, CONFIG_BIT(CONFIG_WORKERS));
	unlink(path);

	snprintf(path, sizeof(path), "%s/bad.conf", tmpdir);
	write_file(path, "# x\nworkers = five\n", 19);
	assert_int_equal(config_load(&c, &set, path, 1, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s:2: workers: 'five' is not a number "
	    "from 1 to 64", path);
	assert_string_equal(err, want);

	write_file(path, "workers = 5\n\0\n", 14);
	assert_int_equal(config_load(&c, &set, path, 1, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: holds a NUL byte: not a "
	    "configuration file", path);
	assert_string_equal(err, want);

	big = malloc(70000);
	assert_non_null(big);
	memset(big, '#', 70000);
	write_file(path, big, 70000);
	free(big);
	assert_int_equal(config_load(&c, &set, path, 1, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: larger than 64 KiB: not a "
	    "configuration file", path);
	assert_string_equal(err, want);
	unlink(path);

	/* A directory is not a file. */
	assert_int_equal(config_load(&c, &set, tmpdir, 1, err, sizeof(err)),
	    -1);
	snprintf(want, sizeof(want), "%s: Is a directory", tmpdir);
	assert_string_equal(err, want);
	rmdir(tmpdir);
	config_fini(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_config_defaults_system, clear_env),
		cmocka_unit_test_setup(test_config_defaults_system_from_systemd,
		    clear_env),
		cmocka_unit_test_setup(test_config_defaults_user, clear_env),
		cmocka_unit_test_setup(test_config_default_file, clear_env),
		cmocka_unit_test(test_config_parse_every_key),
		cmocka_unit_test(test_config_parse_empty_file),
		cmocka_unit_test(test_config_parse_refuses_unknown_key),
		cmocka_unit_test(test_config_parse_refuses_bad_lines),
		cmocka_unit_test(test_config_parse_refuses_bad_values),
		cmocka_unit_test(test_config_set_sizes),
		cmocka_unit_test(test_config_keys),
		cmocka_unit_test_setup(test_config_copy_equal_format,
		    clear_env),
		cmocka_unit_test_setup(test_config_load_files, make_tmpdir),
	};

	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
