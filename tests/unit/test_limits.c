/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of daemon/limits.c, what each uid holds of the daemon: a charge
 * up to the setting and a refusal past it that names the setting, what
 * is given back, what is forced past it, one uid's charges apart from
 * another's, the last descriptors kept for root and the daemon's own
 * uid, and the budget of log lines a uid's clients may cause: spent,
 * the lines dropped and then summed up in one line, refilled as time
 * goes, never past the burst.
 *
 * Linked with the real settings (config.c: cfg and the setting names)
 * and log (log.c, whose lines the tests read back from a memfd put in
 * place of stderr).  The clock is the test's: now_ns() answers t_now,
 * which the tests move.  The accounting is process-wide, so each test
 * uses uids of its own and gives back what it took.
 */
#include <sys/mman.h>
#include <sys/resource.h>

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
#include "daemon/dclock.h"
#include "daemon/limits.h"
#include "daemon/log.h"

#define NS		UINT64_C(1000000000)
#define FD_RESERVE	256	/* limits.c's LIMITS_FD_RESERVE */
#define LOG_BURST	50	/* limits.c's: lines a uid may log at once */
#define LOG_RATE	5	/* and then a second */
#define T_DAEMON_UID	19999	/* the daemon's user, when run as root */

static uint64_t t_now = 1000 * NS;

/* In place of dclock.c: the test's clock. */
uint64_t
now_ns(int clock)
{
	(void)clock;
	return t_now;
}

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

/*
 * Stop capturing; what was logged meanwhile, NUL-terminated, in a
 * buffer the caller frees.
 */
static char *
t_captured(void)
{
	off_t size;
	char *buf;
	ssize_t n;

	if (t_err.saved == -1)
		return NULL;
	dup2(t_err.saved, STDERR_FILENO);
	close(t_err.saved);
	t_err.saved = -1;
	size = lseek(t_err.fd, 0, SEEK_END);
	buf = malloc((size_t)size + 1);
	if (buf != NULL) {
		n = pread(t_err.fd, buf, (size_t)size, 0);
		buf[n > 0 ? n : 0] = '\0';
	}
	close(t_err.fd);
	return buf;
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

/* The n-th uid that is neither root nor the daemon's. */
static uid_t
t_other(unsigned n)
{
	uid_t uid = 20000 + n;

	return uid == geteuid() ? uid + 1000 : uid;
}

/*
 * Be a daemon whose user is not root, and return its uid: as root, the
 * test takes another effective uid (its real uid stays root, to come
 * back with t_as_root()); as another user, it is one already.
 */
static uid_t
t_as_daemon(void)
{
	if (geteuid() == 0)
		assert_int_equal(seteuid(T_DAEMON_UID), 0);
	assert_int_not_equal(geteuid(), 0);
	return geteuid();
}

static void
t_as_root(void)
{
	if (getuid() == 0 && geteuid() != 0)
		assert_int_equal(seteuid(0), 0);
}

/* The descriptors limits_init() found the daemon may have. */
static uint64_t
t_fd_limit(void)
{
	struct rlimit rl;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	return rl.rlim_cur == RLIM_INFINITY ? 1u << 20 : rl.rlim_cur;
}

/* The settings' defaults, which each test starts from. */
static uint64_t t_defaults[LIMIT_N];

static int
group_setup(void **state)
{
	(void)state;
	log_init();
	limits_init();
	if (config_defaults(&cfg, 1) == -1)
		return -1;
	memcpy(t_defaults, cfg.limit, sizeof(t_defaults));
	return 0;
}

static int
group_teardown(void **state)
{
	(void)state;
	config_fini(&cfg);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	free(t_captured());		/* if a test failed capturing */
	t_as_root();
	memcpy(cfg.limit, t_defaults, sizeof(cfg.limit));
	return 0;
}

/* Does 'why' hold what printf would make of fmt? */
static void
t_says(const char *why, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
t_says(const char *why, const char *fmt, ...)
{
	char want[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	if (strstr(why, want) == NULL)
		fail_msg("wanted \"%s\" in: %s", want, why);
}

static void
test_limits_take_charges_up_to_the_setting(void **state)
{
	uid_t u = t_other(1);
	char why[512] = "";

	(void)state;
	cfg.limit[LIMIT_RINGS] = 3;
	assert_int_equal(limits_held(u, LIMIT_RINGS), 0);
	assert_int_equal(limits_take(u, LIMIT_RINGS, 2, 0, why,
	    sizeof(why)), 0);
	assert_int_equal(limits_take(u, LIMIT_RINGS, 1, 0, why,
	    sizeof(why)), 0);
	assert_int_equal(limits_held(u, LIMIT_RINGS), 3);
	/* Other limits are not touched. */
	assert_int_equal(limits_held(u, LIMIT_SESSIONS), 0);

	assert_int_equal(limits_take(u, LIMIT_RINGS, 1, 0, why,
	    sizeof(why)), -1);
	assert_int_equal(limits_held(u, LIMIT_RINGS), 3);
	/* Who, how much, the setting and how to raise it. */
	t_says(why, "uid %u holds 3 of its rings-per-uid limit (3;",
	    (unsigned)u);
	t_says(why, "--set rings-per-uid=N");
	limits_put(u, LIMIT_RINGS, 3, 0);
	assert_int_equal(limits_held(u, LIMIT_RINGS), 0);
}

static void
test_limits_refusal_names_each_setting(void **state)
{
	uid_t u = t_other(2);
	char why[512];
	int l;

	(void)state;
	for (l = 0; l < LIMIT_N; l++) {
		cfg.limit[l] = 10;
		why[0] = '\0';
		assert_int_equal(limits_take(u, l, 11, 0, why,
		    sizeof(why)), -1);
		t_says(why, "%s", config_limit_name(l));
		assert_int_equal(limits_held(u, l), 0);
	}
	/* Even a charge so large it would wrap past the limit. */
	assert_int_equal(limits_take(u, LIMIT_RING_BYTES, 5, 0, why,
	    sizeof(why)), 0);
	assert_int_equal(limits_take(u, LIMIT_RING_BYTES, UINT64_MAX - 2, 0,
	    why, sizeof(why)), -1);
	t_says(why, "ring-bytes-per-uid");
	assert_int_equal(limits_held(u, LIMIT_RING_BYTES), 5);
	limits_put(u, LIMIT_RING_BYTES, 5, 0);
}

static void
test_limits_put_gives_back(void **state)
{
	uid_t u = t_other(3);
	char why[512];

	(void)state;
	cfg.limit[LIMIT_SESSIONS] = 4;
	assert_int_equal(limits_take(u, LIMIT_SESSIONS, 4, 0, why,
	    sizeof(why)), 0);
	assert_int_equal(limits_take(u, LIMIT_SESSIONS, 1, 0, why,
	    sizeof(why)), -1);
	limits_put(u, LIMIT_SESSIONS, 3, 0);
	assert_int_equal(limits_held(u, LIMIT_SESSIONS), 1);
	/* What was given back may be taken again. */
	assert_int_equal(limits_take(u, LIMIT_SESSIONS, 3, 0, why,
	    sizeof(why)), 0);
	assert_int_equal(limits_held(u, LIMIT_SESSIONS), 4);
	/* Giving back more than held leaves nothing, not a wrapped count. */
	limits_put(u, LIMIT_SESSIONS, 10, 0);
	assert_int_equal(limits_held(u, LIMIT_SESSIONS), 0);
	assert_int_equal(limits_take(u, LIMIT_SESSIONS, 4, 0, why,
	    sizeof(why)), 0);
	limits_put(u, LIMIT_SESSIONS, 4, 0);
	/* A uid that never took anything: nothing happens. */
	limits_put(t_other(4), LIMIT_SESSIONS, 1, 1);
	assert_int_equal(limits_held(t_other(4), LIMIT_SESSIONS), 0);
}

static void
test_limits_are_per_uid(void **state)
{
	uid_t a = t_other(5), b = t_other(6);
	char why[512];

	(void)state;
	cfg.limit[LIMIT_EVENT_CLASSES] = 100;
	assert_int_equal(limits_take(a, LIMIT_EVENT_CLASSES, 100, 0, why,
	    sizeof(why)), 0);
	assert_int_equal(limits_take(a, LIMIT_EVENT_CLASSES, 1, 0, why,
	    sizeof(why)), -1);
	/* a at its limit does not hold b back. */
	assert_int_equal(limits_take(b, LIMIT_EVENT_CLASSES, 100, 0, why,
	    sizeof(why)), 0);
	assert_int_equal(limits_held(a, LIMIT_EVENT_CLASSES), 100);
	assert_int_equal(limits_held(b, LIMIT_EVENT_CLASSES), 100);
	limits_put(a, LIMIT_EVENT_CLASSES, 100, 0);
	assert_int_equal(limits_held(b, LIMIT_EVENT_CLASSES), 100);
	limits_put(b, LIMIT_EVENT_CLASSES, 100, 0);
}

static void
test_limits_force_goes_past_and_put_balances(void **state)
{
	uid_t u = t_other(7);
	char why[512];

	(void)state;
	cfg.limit[LIMIT_CONTROL_OUTPUT] = 100;
	assert_int_equal(limits_take(u, LIMIT_CONTROL_OUTPUT, 90, 0, why,
	    sizeof(why)), 0);
	/* The end of a reply must go out, whatever the limit. */
	limits_force(u, LIMIT_CONTROL_OUTPUT, 50);
	assert_int_equal(limits_held(u, LIMIT_CONTROL_OUTPUT), 140);
	assert_int_equal(limits_take(u, LIMIT_CONTROL_OUTPUT, 1, 0, why,
	    sizeof(why)), -1);
	t_says(why, "holds 140 of its control-output-per-uid limit (100;");
	limits_put(u, LIMIT_CONTROL_OUTPUT, 50, 0);
	assert_int_equal(limits_take(u, LIMIT_CONTROL_OUTPUT, 10, 0, why,
	    sizeof(why)), 0);
	limits_put(u, LIMIT_CONTROL_OUTPUT, 100, 0);
	assert_int_equal(limits_held(u, LIMIT_CONTROL_OUTPUT), 0);
	/* A uid seen for the first time can be forced too. */
	limits_force(t_other(8), LIMIT_CONTROL_OUTPUT, 7);
	assert_int_equal(limits_held(t_other(8), LIMIT_CONTROL_OUTPUT), 7);
	limits_put(t_other(8), LIMIT_CONTROL_OUTPUT, 7, 0);
}

static void
test_limits_last_descriptors_kept_for_root_and_the_daemon(void **state)
{
	uid_t a = t_other(9), b = t_other(10), d;
	uint64_t fd_limit = t_fd_limit();
	unsigned all;
	char why[512] = "";

	(void)state;
	assert_true(fd_limit > FD_RESERVE + 2);
	all = (unsigned)(fd_limit - FD_RESERVE);
	cfg.limit[LIMIT_SESSIONS] = 10;
	/* Others may take all but the reserve... */
	assert_int_equal(limits_take(a, LIMIT_SESSIONS, 1, all - 1, why,
	    sizeof(why)), 0);
	assert_int_equal(limits_take(b, LIMIT_SESSIONS, 1, 1, why,
	    sizeof(why)), 0);
	/* ...and no more, whichever uid asks. */
	assert_int_equal(limits_take(b, LIMIT_SESSIONS, 1, 1, why,
	    sizeof(why)), -1);
	t_says(why, "short of descriptors (%u of %u held by clients; the "
	    "last %u are kept for root)", all, (unsigned)fd_limit,
	    FD_RESERVE);
	assert_int_equal(limits_take(t_other(11), LIMIT_SESSIONS, 1, 1, why,
	    sizeof(why)), -1);
	/* The refusal charged nothing. */
	assert_int_equal(limits_held(b, LIMIT_SESSIONS), 1);
	assert_int_equal(limits_held(t_other(11), LIMIT_SESSIONS), 0);
	/* A charge with no descriptor still goes through. */
	assert_int_equal(limits_take(b, LIMIT_SESSIONS, 1, 0, why,
	    sizeof(why)), 0);

	/* Root and the daemon's uid (root or not) may take the reserve. */
	assert_int_equal(limits_take(0, LIMIT_SESSIONS, 1, FD_RESERVE / 2,
	    why, sizeof(why)), 0);
	d = t_as_daemon();
	assert_int_equal(limits_take(d, LIMIT_SESSIONS, 1, 1, why,
	    sizeof(why)), 0);
	assert_int_equal(limits_take(0, LIMIT_SESSIONS, 1, 1, why,
	    sizeof(why)), 0);
	assert_int_equal(limits_take(b, LIMIT_SESSIONS, 1, 1, why,
	    sizeof(why)), -1);
	t_as_root();

	/* Given back, the others' descriptors are there again. */
	limits_put(b, LIMIT_SESSIONS, 2, 1);
	assert_int_equal(limits_take(t_other(11), LIMIT_SESSIONS, 1, 1, why,
	    sizeof(why)), -1);
	limits_put(0, LIMIT_SESSIONS, 2, FD_RESERVE / 2 + 1);
	limits_put(d, LIMIT_SESSIONS, 1, 1);
	assert_int_equal(limits_take(t_other(11), LIMIT_SESSIONS, 1, 1, why,
	    sizeof(why)), 0);
	limits_put(t_other(11), LIMIT_SESSIONS, 1, 1);
	limits_put(a, LIMIT_SESSIONS, 1, all - 1);
	assert_int_equal(limits_take(b, LIMIT_SESSIONS, 1, all, why,
	    sizeof(why)), 0);
	limits_put(b, LIMIT_SESSIONS, 1, all);
}

static void
test_limits_log_budget_drops_then_sums_up(void **state)
{
	uid_t u = t_other(12);
	char *log;
	int i;

	(void)state;
	t_capture();
	for (i = 0; i < LOG_BURST + 10; i++)
		limits_logx(u, "client line %d", i);
	log = t_captured();
	assert_non_null(log);
	/* The burst, then nothing: the time has not moved. */
	assert_int_equal(t_count(log, "client line"), LOG_BURST);
	assert_non_null(strstr(log, "client line 49\n"));
	assert_null(strstr(log, "client line 50\n"));
	assert_null(strstr(log, "not logged"));
	free(log);
	assert_int_equal(limits_log_ok(u), 0);	/* one more dropped */

	/* A second later, LOG_RATE lines, the first says what was not. */
	t_now += NS;
	t_capture();
	for (i = 0; i < LOG_RATE + 3; i++)
		limits_logx(u, "later line %d", i);
	log = t_captured();
	assert_non_null(log);
	assert_int_equal(t_count(log, "later line"), LOG_RATE);
	assert_int_equal(t_count(log, "not logged"), 1);
	t_says(log, "uid %u: 11 more messages about its clients were not "
	    "logged (at most %d a second)\n", (unsigned)u, LOG_RATE);
	assert_true(strstr(log, "not logged") < strstr(log, "later line 0"));
	free(log);

	/* Half a second: half the rate; the 3 dropped summed up again. */
	t_now += NS / 2;
	t_capture();
	assert_int_equal(limits_log_ok(u), 1);
	assert_int_equal(limits_log_ok(u), 1);
	assert_int_equal(limits_log_ok(u), 0);
	log = t_captured();
	assert_non_null(log);
	t_says(log, "uid %u: 3 more messages", (unsigned)u);
	assert_int_equal(t_count(log, "not logged"), 1);
	free(log);
}

static void
test_limits_log_budget_refills_up_to_the_burst(void **state)
{
	uid_t u = t_other(13);
	char *log;
	int n;

	(void)state;
	for (n = 0; limits_log_ok(u); n++)
		assert_true(n <= LOG_BURST);
	assert_int_equal(n, LOG_BURST);
	/* An hour of silence gives the burst back, not 18000 lines. */
	t_now += 3600 * NS;
	t_capture();
	for (n = 0; limits_log_ok(u); n++)
		assert_true(n <= LOG_BURST);
	log = t_captured();
	assert_int_equal(n, LOG_BURST);
	assert_non_null(log);
	t_says(log, "uid %u: 1 more messages", (unsigned)u);
	free(log);
	/* limits_info() lines come out of the same budget. */
	t_now += 2 * NS;
	t_capture();
	for (n = 0; n < 2 * LOG_RATE + 5; n++)
		limits_info(u, "news %d", n);
	log = t_captured();
	assert_non_null(log);
	assert_int_equal(t_count(log, "news"), 2 * LOG_RATE);
	free(log);
	/* Another uid has a budget of its own. */
	assert_int_equal(limits_log_ok(t_other(14)), 1);
}

static void
test_limits_log_root_and_daemon_unbudgeted(void **state)
{
	uid_t d;
	int i;

	(void)state;
	for (i = 0; i < 10 * LOG_BURST; i++)
		assert_int_equal(limits_log_ok(0), 1);
	d = t_as_daemon();
	for (i = 0; i < 10 * LOG_BURST; i++) {
		assert_int_equal(limits_log_ok(d), 1);
		assert_int_equal(limits_log_ok(0), 1);
	}
	t_as_root();
}

#define T(f)	cmocka_unit_test_teardown(f, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_limits_take_charges_up_to_the_setting),
		T(test_limits_refusal_names_each_setting),
		T(test_limits_put_gives_back),
		T(test_limits_are_per_uid),
		T(test_limits_force_goes_past_and_put_balances),
		T(test_limits_last_descriptors_kept_for_root_and_the_daemon),
		T(test_limits_log_budget_drops_then_sums_up),
		T(test_limits_log_budget_refills_up_to_the_burst),
		T(test_limits_log_root_and_daemon_unbudgeted),
	};

	return cmocka_run_group_tests_name("limits", tests, group_setup,
	    group_teardown);
}
