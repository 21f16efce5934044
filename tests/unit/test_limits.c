/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of daemon/limits.c, what each uid holds of the daemon: charges
 * taken and given back, a refusal that names the setting and charges
 * nothing, one uid's use leaving another's alone, what must go out
 * charged past the limit, the descriptors kept for root, and the
 * budget of log lines a uid's clients may cause.
 *
 * Linked with limits.o and config.o (the settings and their names).
 * The test stands in for the clock (an injectable now_ns()) and the
 * log (each line kept, to be read back).
 */
#include <sys/resource.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/config.h"
#include "daemon/dclock.h"
#include "daemon/limits.h"
#include "daemon/log.h"

#define U1	1000		/* two users, neither root nor us */
#define U2	1001

static uint64_t t_now = UINT64_C(5000000000);
static unsigned t_nlines;
static char t_last[2048];

uint64_t
now_ns(int clock)
{
	(void)clock;
	return t_now;
}

static void
t_log(const char *fmt, va_list ap)
{
	vsnprintf(t_last, sizeof(t_last), fmt, ap);
	t_nlines++;
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	t_log(fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	t_log(fmt, ap);
	va_end(ap);
}

static int
setup(void **state)
{
	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.limit[LIMIT_RINGS] = 4;
	cfg.limit[LIMIT_SESSIONS] = 1000;
	t_nlines = 0;
	t_last[0] = '\0';
	return 0;
}

static void
test_limits_take_put_held(void **state)
{
	char why[256];

	(void)state;
	assert_int_equal(limits_take(U1, LIMIT_RINGS, 3, 0, why,
	    sizeof(why)), 0);
	assert_int_equal(limits_held(U1, LIMIT_RINGS), 3);
	assert_int_equal(limits_take(U1, LIMIT_RINGS, 1, 0, why,
	    sizeof(why)), 0);
	assert_int_equal(limits_held(U1, LIMIT_RINGS), 4);
	limits_put(U1, LIMIT_RINGS, 4, 0);
	assert_int_equal(limits_held(U1, LIMIT_RINGS), 0);
	/* Giving back more than held does not wrap around. */
	limits_put(U1, LIMIT_RINGS, 9, 0);
	assert_int_equal(limits_held(U1, LIMIT_RINGS), 0);
}

static void
test_limits_refusal_names_the_setting_and_charges_nothing(void **state)
{
	char why[256];

	(void)state;
	assert_int_equal(limits_take(U1, LIMIT_RINGS, 3, 0, why,
	    sizeof(why)), 0);
	why[0] = '\0';
	assert_int_equal(limits_take(U1, LIMIT_RINGS, 2, 0, why,
	    sizeof(why)), -1);
	assert_non_null(strstr(why, "uid 1000 holds 3 of its "
	    "rings-per-uid limit (4"));
	assert_non_null(strstr(why, "--set rings-per-uid=N"));
	assert_int_equal(limits_held(U1, LIMIT_RINGS), 3);
	/* Asking for more than the limit at once is refused too. */
	assert_int_equal(limits_take(U1, LIMIT_RINGS, UINT64_MAX, 0, why,
	    sizeof(why)), -1);
	assert_int_equal(limits_held(U1, LIMIT_RINGS), 3);
	limits_put(U1, LIMIT_RINGS, 3, 0);
}

static void
test_limits_one_uid_leaves_another_alone(void **state)
{
	char why[256];

	(void)state;
	assert_int_equal(limits_take(U1, LIMIT_RINGS, 4, 0, why,
	    sizeof(why)), 0);
	assert_int_equal(limits_take(U1, LIMIT_RINGS, 1, 0, why,
	    sizeof(why)), -1);
	assert_int_equal(limits_take(U2, LIMIT_RINGS, 4, 0, why,
	    sizeof(why)), 0);
	assert_int_equal(limits_held(U2, LIMIT_RINGS), 4);
	/* A limit is its own: rings full, sessions still free. */
	assert_int_equal(limits_take(U1, LIMIT_SESSIONS, 1, 0, why,
	    sizeof(why)), 0);
	limits_put(U1, LIMIT_RINGS, 4, 0);
	limits_put(U2, LIMIT_RINGS, 4, 0);
	limits_put(U1, LIMIT_SESSIONS, 1, 0);
}

static void
test_limits_force_goes_past_and_balances(void **state)
{
	char why[256];

	(void)state;
	assert_int_equal(limits_take(U1, LIMIT_RINGS, 4, 0, why,
	    sizeof(why)), 0);
	limits_force(U1, LIMIT_RINGS, 10);
	assert_int_equal(limits_held(U1, LIMIT_RINGS), 14);
	assert_int_equal(limits_take(U1, LIMIT_RINGS, 1, 0, why,
	    sizeof(why)), -1);
	limits_put(U1, LIMIT_RINGS, 10, 0);
	limits_put(U1, LIMIT_RINGS, 4, 0);
	assert_int_equal(limits_held(U1, LIMIT_RINGS), 0);
}

static void
test_limits_last_descriptors_kept_for_root(void **state)
{
	struct rlimit rl;
	char why[256];
	uint64_t limit;

	(void)state;
	/* The daemon raised its limit to the hard one: lower both. */
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 2048)
		limit = rl.rlim_max;
	else
		limit = 2048;
	if (limit < 1024)
		skip();		/* too few to tell the reserve apart */
	rl.rlim_cur = rl.rlim_max = limit;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	limits_init();
	/* A user may take descriptors up to the reserve of 256... */
	assert_int_equal(limits_take(U1, LIMIT_SESSIONS, 1,
	    (unsigned)(limit - 256 - 10), why, sizeof(why)), 0);
	assert_int_equal(limits_take(U2, LIMIT_SESSIONS, 1, 10, why,
	    sizeof(why)), 0);
	/* ... not into it, whichever user asks. */
	why[0] = '\0';
	assert_int_equal(limits_take(U2, LIMIT_SESSIONS, 1, 1, why,
	    sizeof(why)), -1);
	assert_non_null(strstr(why, "short of descriptors"));
	assert_non_null(strstr(why, "LimitNOFILE="));
	assert_int_equal(limits_held(U2, LIMIT_SESSIONS), 1);
	/* Root may (and the daemon's own uid, which root is here). */
	assert_int_equal(limits_take(0, LIMIT_SESSIONS, 1, 100, why,
	    sizeof(why)), 0);
	/* Given back, a user may take them again. */
	limits_put(U1, LIMIT_SESSIONS, 1, (unsigned)(limit - 256 - 10));
	assert_int_equal(limits_take(U2, LIMIT_SESSIONS, 1, 1, why,
	    sizeof(why)), 0);
	limits_put(U2, LIMIT_SESSIONS, 2, 11);
	limits_put(0, LIMIT_SESSIONS, 1, 100);
}

static void
test_limits_log_budget_then_a_summary(void **state)
{
	unsigned i, before;

	(void)state;
	/* A burst of 50 lines is logged, the rest counted. */
	for (i = 0; i < 80; i++)
		limits_logx(U1, "line %u", i);
	assert_int_equal(t_nlines, 50);
	assert_string_equal(t_last, "line 49");
	/* Another uid has a budget of its own. */
	limits_logx(U2, "other");
	assert_int_equal(t_nlines, 51);
	/* Root is never held back. */
	for (i = 0; i < 100; i++)
		limits_logx(0, "root %u", i);
	assert_int_equal(t_nlines, 151);
	/* A second later, 5 more lines: the first says what was lost. */
	t_now += UINT64_C(1000000000);
	before = t_nlines;
	limits_logx(U1, "again");
	assert_int_equal(t_nlines, before + 2);
	assert_string_equal(t_last, "again");
	for (i = 0; i < 10; i++)
		limits_logx(U1, "more %u", i);
	assert_int_equal(t_nlines, before + 2 + 4);
	/* limits_info() draws on the same budget. */
	t_now += UINT64_C(200000000);		/* one more token */
	limits_info(U1, "news");
	assert_string_equal(t_last, "news");
}

static void
test_limits_log_summary_counts_the_dropped(void **state)
{
	unsigned i;

	(void)state;
	t_now += UINT64_C(60000000000);		/* U1's budget is full */
	for (i = 0; i < 50; i++)
		limits_logx(U1, "x");
	for (i = 0; i < 7; i++)
		limits_logx(U1, "dropped");
	t_nlines = 0;
	t_now += UINT64_C(1000000000);
	/* The summary is logged first, then the line. */
	assert_true(limits_log_ok(U1));
	assert_int_equal(t_nlines, 1);
	assert_non_null(strstr(t_last, "uid 1000: 7 more messages about "
	    "its clients were not logged"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_limits_take_put_held, setup),
		cmocka_unit_test_setup(
		    test_limits_refusal_names_the_setting_and_charges_nothing,
		    setup),
		cmocka_unit_test_setup(
		    test_limits_one_uid_leaves_another_alone, setup),
		cmocka_unit_test_setup(
		    test_limits_force_goes_past_and_balances, setup),
		cmocka_unit_test_setup(
		    test_limits_last_descriptors_kept_for_root, setup),
		cmocka_unit_test_setup(test_limits_log_budget_then_a_summary,
		    setup),
		cmocka_unit_test_setup(
		    test_limits_log_summary_counts_the_dropped, setup),
	};

	return cmocka_run_group_tests_name("limits", tests, NULL, NULL);
}
