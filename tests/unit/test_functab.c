/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Function tables (proto/functab.c): what libtraced writes reads back
 * the same; what a hostile process or a damaged session directory holds
 * is refused with the line and the reason, never read past, never
 * overflowed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "functab.h"

static void
parse_ok(const char *text, size_t max, struct functab *t)
{
	char err[256] = "";

	if (functab_parse(text, strlen(text), max, t, err, sizeof(err)) != 0)
		fail_msg("'%s': %s", text, err);
}

static void
parse_fails(const char *text, size_t len, size_t max, const char *why)
{
	struct functab t;
	char err[256] = "";

	assert_int_equal(functab_parse(text, len, max, &t, err, sizeof(err)),
	    -1);
	if (strstr(err, why) == NULL)
		fail_msg("'%.*s': said '%s', not '%s'", (int)len, text, err,
		    why);
	assert_null(t.e);
	assert_int_equal(t.n, 0);
}

static void
test_functab_round_trip(void **state)
{
	static const struct {
		uint64_t start, size;
		char kind;
		const char *name;
	} in[] = {
		{ 0x1040, 58, 'p', "main" },
		{ 0x10a0, 10, 'm', "leaf" },
		{ 0x10b0, 0, 'i', "foo.cold" },
		{ UINT64_C(0xffffffffffff), UINT64_MAX, 'p',
		    "_ZN3foo3barEv" },
	};
	char text[1024], line[FUNCTAB_LINE_MAX + 1];
	struct functab t;
	size_t i, o = 0;
	int n;

	(void)state;
	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		n = functab_format_line(line, sizeof(line), in[i].start,
		    in[i].size, in[i].kind, in[i].name);
		assert_true(n > 0);
		memcpy(text + o, line, (size_t)n);
		o += (size_t)n;
	}
	text[o] = '\0';
	assert_string_equal(text, "1040 58 p main\n10a0 10 m leaf\n"
	    "10b0 0 i foo.cold\nffffffffffff 18446744073709551615 p "
	    "_ZN3foo3barEv\n");
	parse_ok(text, 4, &t);
	assert_int_equal(t.n, 4);
	for (i = 0; i < t.n; i++) {
		assert_true(t.e[i].start == in[i].start);
		assert_true(t.e[i].size == in[i].size);
		assert_int_equal(t.e[i].kind, in[i].kind);
		assert_string_equal(t.e[i].name, in[i].name);
	}
	functab_free(&t);
}

static void
test_functab_format_refuses_bad_names(void **state)
{
	char line[FUNCTAB_LINE_MAX + 1], big[FUNCTAB_NAME_MAX + 2];

	(void)state;
	assert_int_equal(functab_format_line(line, sizeof(line), 1, 1, 'p',
	    ""), -1);
	assert_int_equal(functab_format_line(line, sizeof(line), 1, 1, 'p',
	    "a b"), -1);
	assert_int_equal(functab_format_line(line, sizeof(line), 1, 1, 'p',
	    "caf\xc3\xa9"), -1);
	assert_int_equal(functab_format_line(line, sizeof(line), 1, 1, 'x',
	    "f"), -1);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(functab_format_line(line, sizeof(line), 1, 1, 'p',
	    big), -1);
	big[sizeof(big) - 2] = '\0';
	assert_true(functab_format_line(line, sizeof(line), 1, 1, 'p',
	    big) > 0);
	/* A buffer too small is refused, not overrun. */
	assert_int_equal(functab_format_line(line, 8, 1, 1, 'p', "main"), -1);
}

static void
test_functab_parse_refuses_hostile_lines(void **state)
{
	char big[FUNCTAB_NAME_MAX + 32];

	(void)state;
	parse_fails("1 2 p main", 10, 10, "line 1: no newline");
	parse_fails("1 2 p main\n2 3 p x", 18, 10, "line 2: no newline");
	parse_fails("g 2 p main\n", 11, 10, "line 1: expected");
	parse_fails("1 x p main\n", 11, 10, "line 1: expected");
	parse_fails("1 2 z main\n", 11, 10, "line 1: bad kind");
	parse_fails("1 2 pp main\n", 12, 10, "line 1: bad kind");
	parse_fails("1 2 p \n", 7, 10, "line 1: bad kind");
	parse_fails("1 2 p ma in\n", 12, 10, "line 1: bad function name");
	parse_fails("1 2 p ma\tin\n", 12, 10, "line 1: bad function name");
	parse_fails("1 2 p m\0n\n", 10, 10, "line 1: bad function name");
	parse_fails("1 2 p caf\xc3\xa9\n", 12, 10, "bad function name");
	parse_fails("ABC 2 p main\n", 13, 10, "line 1: expected");
	parse_fails("-1 2 p main\n", 12, 10, "line 1: expected");
	/* 2^64 does not fit; 21 digits is too many. */
	parse_fails("1 18446744073709551616 p main\n", 30, 10, "expected");
	parse_fails("10000000000000000 2 p main\n", 27, 10, "expected");
	parse_fails("20 1 p b\n10 1 p a\n", 18, 10,
	    "line 2: start 0x10 not above");
	parse_fails("10 1 p a\n10 1 p b\n", 18, 10, "line 2: start 0x10");
	parse_fails("1 1 p a\n2 1 p b\n3 1 p c\n", 24, 2,
	    "line 3: more than 2 functions");
	memset(big, 'n', sizeof(big));
	memcpy(big, "1 2 p ", 6);
	big[6 + FUNCTAB_NAME_MAX + 1] = '\n';
	parse_fails(big, 6 + FUNCTAB_NAME_MAX + 2, 10, "longer than");
}

static void
test_functab_parse_empty_and_exact(void **state)
{
	struct functab t;

	(void)state;
	parse_ok("", 10, &t);
	assert_int_equal(t.n, 0);
	functab_free(&t);
	/* The length given is what is read: no NUL needed, none past. */
	assert_int_equal(functab_parse("1 2 p main\nGARBAGE", 11, 10, &t,
	    NULL, 0), 0);
	assert_int_equal(t.n, 1);
	assert_string_equal(t.e[0].name, "main");
	functab_free(&t);
}

static void
test_functab_lookup_by_range(void **state)
{
	struct functab t;

	(void)state;
	parse_ok("100 16 p a\n110 0 p b\n200 32 p c\n", 10, &t);
	assert_null(functab_lookup(&t, 0xff));
	assert_string_equal(functab_lookup(&t, 0x100)->name, "a");
	assert_string_equal(functab_lookup(&t, 0x10f)->name, "a");
	/* A size of 0 holds its start only. */
	assert_string_equal(functab_lookup(&t, 0x110)->name, "b");
	assert_null(functab_lookup(&t, 0x111));
	assert_string_equal(functab_lookup(&t, 0x21f)->name, "c");
	assert_null(functab_lookup(&t, 0x220));
	assert_null(functab_lookup(&t, UINT64_MAX));
	functab_free(&t);
	memset(&t, 0, sizeof(t));
	assert_null(functab_lookup(&t, 0x100));
}

static void
test_functab_module_round_trip(void **state)
{
	static const uint8_t id[20] = {
		0x18, 0x47, 0x11, 0x4f, 0x5a, 0xc5, 0x61, 0xb6, 0xf2, 0xa4,
		0xef, 0xc2, 0xc0, 0x2c, 0x9b, 0x96, 0xbe, 0xc0, 0x48, 0x14,
	};
	struct functab_module m;
	char text[1024], err[256] = "";
	int n;

	(void)state;
	n = functab_module_format(text, sizeof(text), 3, "/opt/my app/bin",
	    0x555500000000, 0x555500001000, 0x555500005000, id, 20, 2);
	assert_true(n > 0 && (size_t)n < sizeof(text));
	strcat(text, "1040 58 p main\n10a0 10 p leaf\n");
	if (functab_module_parse(text, strlen(text), &m, err,
	    sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(m.index, 3);
	assert_string_equal(m.path, "/opt/my app/bin");
	assert_true(m.base == 0x555500000000);
	assert_true(m.start == 0x555500001000 && m.end == 0x555500005000);
	assert_int_equal(m.build_id_len, 20);
	assert_memory_equal(m.build_id, id, 20);
	assert_int_equal(m.tab.n, 2);
	assert_string_equal(m.tab.e[1].name, "leaf");
	functab_module_free(&m);

	/* No build id, no functions. */
	n = functab_module_format(text, sizeof(text), 0, "[exe]", 0, 0x400000,
	    0x401000, NULL, 0, 0);
	assert_true(n > 0);
	assert_non_null(strstr(text, "build-id -\n"));
	assert_int_equal(functab_module_parse(text, strlen(text), &m, err,
	    sizeof(err)), 0);
	assert_int_equal(m.build_id_len, 0);
	assert_int_equal(m.tab.n, 0);
	functab_module_free(&m);
}

static void
test_functab_module_refuses_damage(void **state)
{
	static const char *const bad[] = {
		"",
		"traced-module 2\n",
		"traced-module 1\nindex x\n",
		"traced-module 1\nindex 0\npath /a\nbase 1\n",
		"traced-module 1\nindex 0\npath /a\nbase 0x1\nstart 0x5\n"
		    "end 0x4\nbuild-id -\nfuncs 0\n",
		"traced-module 1\nindex 0\npath /a\nbase 0x1\nstart 0x1\n"
		    "end 0x4\nbuild-id abc\nfuncs 0\n",
		"traced-module 1\nindex 0\npath /a\nbase 0x1\nstart 0x1\n"
		    "end 0x4\nbuild-id zz\nfuncs 0\n",
		"traced-module 1\nindex 0\npath /a\nbase 0x1\nstart 0x1\n"
		    "end 0x4\nbuild-id -\nfuncs 2\n1 1 p a\n",
		"traced-module 1\nindex 0\npath /a\nbase 0x1\nstart 0x1\n"
		    "end 0x4\nbuild-id -\nfuncs 1\n1 1 p a\n2 1 p b\n",
		"traced-module 1\nindex 0\npath /a\nbase 0x1\nstart 0x1\n"
		    "end 0x4\nbuild-id -\nfuncs 99999999999\n",
	};
	struct functab_module m;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (functab_module_parse(bad[i], strlen(bad[i]), &m, err,
		    sizeof(err)) != -1)
			fail_msg("accepted: %s", bad[i]);
		assert_true(err[0] != '\0');
		assert_null(m.path);
		assert_null(m.tab.e);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_functab_round_trip),
		cmocka_unit_test(test_functab_format_refuses_bad_names),
		cmocka_unit_test(test_functab_parse_refuses_hostile_lines),
		cmocka_unit_test(test_functab_parse_empty_and_exact),
		cmocka_unit_test(test_functab_lookup_by_range),
		cmocka_unit_test(test_functab_module_round_trip),
		cmocka_unit_test(test_functab_module_refuses_damage),
	};

	return cmocka_run_group_tests_name("functab", tests, NULL, NULL);
}
