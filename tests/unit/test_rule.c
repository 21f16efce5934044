/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of what the daemon, libtraced and tracectl share in proto/: the
 * rule engine (rule.c: which events or functions a pattern matches,
 * which rule decides), the drop causes' names (cause.c), the edit
 * distance behind "did you mean" and the error-buffer helper (text.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cause.h"
#include "ring.h"
#include "rule.h"
#include "text.h"

struct test_rule {
	int		 on;
	const char	*pattern;
};

static void
test_rule_without_colon_matches_the_name_only(void **state)
{
	(void)state;
	assert_true(rule_match("virtio_*", "qemu", "virtio_queue_notify"));
	assert_true(rule_match("virtio_*", NULL, "virtio_queue_notify"));
	assert_false(rule_match("qemu*", "qemu", "virtio_queue_notify"));
	assert_false(rule_match("virtio", "qemu", "virtio_queue_notify"));
}

static void
test_rule_with_colon_matches_scope_and_name(void **state)
{
	(void)state;
	assert_true(rule_match("qemu:virtio_*", "qemu", "virtio_notify"));
	assert_true(rule_match("*:virtio_notify", "qemu", "virtio_notify"));
	assert_true(rule_match("libz.so:*", "libz.so", "inflate"));
	assert_false(rule_match("net:virtio_*", "qemu", "virtio_notify"));
	/* A name without a scope never matches a scoped pattern. */
	assert_false(rule_match("*:*", NULL, "virtio_notify"));
}

static void
test_rule_long_scope_is_matched_whole(void **state)
{
	char scope[3000], pattern[40];

	(void)state;
	memset(scope, 'a', sizeof(scope) - 2);
	scope[sizeof(scope) - 2] = 'z';
	scope[sizeof(scope) - 1] = '\0';
	snprintf(pattern, sizeof(pattern), "*z:fn");
	assert_true(rule_match(pattern, scope, "fn"));
	assert_false(rule_match("*y:fn", scope, "fn"));
}

static void
test_rule_last_match_wins(void **state)
{
	static const struct test_rule rules[] = {
		{ 1, "*" },
		{ 0, "cache_*" },
		{ 1, "cache_hit" },
		{ 0, "other:*" },
	};
	size_t n = sizeof(rules) / sizeof(rules[0]);

	(void)state;
	assert_int_equal(RULE_LAST(rules, n, pattern, "app", "cache_hit"), 3);
	assert_int_equal(RULE_LAST(rules, n, pattern, "app", "cache_miss"), 2);
	assert_int_equal(RULE_LAST(rules, n, pattern, "app", "net_rx"), 1);
	assert_int_equal(RULE_LAST(rules, n, pattern, "other", "net_rx"), 4);
	assert_int_equal(RULE_LAST(rules, 0, pattern, "app", "net_rx"), 0);
	assert_int_equal(RULE_LAST(rules + 1, 2, pattern, "app", "net_rx"),
	    0);
}

static void
test_cause_names_are_one_table(void **state)
{
	int c;

	(void)state;
	assert_string_equal(traced_cause_name(TRACED_DROP_RING_FULL),
	    "ring_full");
	assert_string_equal(traced_cause_name(TRACED_DROP_PAUSED), "paused");
	assert_string_equal(traced_cause_name(TRACED_DROP_WRITE_ERROR),
	    "write_error");
	assert_string_equal(traced_cause_name(TRACED_DROP_DELETED),
	    "deleted");
	assert_string_equal(traced_cause_name(-1), "?");
	assert_string_equal(traced_cause_name(TRACED_DROP_NCAUSES), "?");
	for (c = 0; c < TRACED_DROP_NCAUSES; c++)
		assert_int_equal(traced_cause_find(traced_cause_name(c)), c);
	assert_int_equal(traced_cause_find("ring-full"), -1);
}

static void
test_distance_counts_edits_and_swaps(void **state)
{
	(void)state;
	assert_int_equal(text_distance("uint32_t", 8, "uint32_t", 3), 0);
	assert_int_equal(text_distance("unit32_t", 8, "uint32_t", 3), 1);
	assert_int_equal(text_distance("trace-evnet", 11, "trace-event", 3),
	    1);
	assert_int_equal(text_distance("ring-szie", 9, "ring-size", 3), 1);
	assert_int_equal(text_distance("abc", 3, "", 5), 3);
	assert_int_equal(text_distance("kitten", 6, "sitting", 5), 3);
	/* Past max: max + 1, whether the lengths or the edits say so. */
	assert_int_equal(text_distance("kitten", 6, "sitting", 2), 3);
	assert_int_equal(text_distance("a", 1, "abcdef", 2), 3);
	/* Only a prefix of a is compared. */
	assert_int_equal(text_distance("intx", 3, "int", 1), 0);
}

static void
test_distance_refuses_long_words(void **state)
{
	char w[TEXT_DISTANCE_MAX + 2];

	(void)state;
	memset(w, 'a', sizeof(w) - 1);
	w[sizeof(w) - 1] = '\0';
	assert_int_equal(text_distance(w, strlen(w), w, 10), 11);
	assert_int_equal(text_distance(w, TEXT_DISTANCE_MAX, "aaaa", 100),
	    TEXT_DISTANCE_MAX - 4);
}

/*
 * text_clean(): text from a client or the system (a module's path, an
 * executable's) made printable UTF-8 in place, each byte that is not
 * becoming '?': C0, DEL, C1 (U+0080 to U+009F, two bytes each),
 * invalid bytes; printable UTF-8 kept as it is.
 */
static void
test_clean_makes_printable_utf8(void **state)
{
	char s[] = "/a\tb\x7f" "c\xc2\x85" "d\xff" "e\xc2\xa0" "f\xe2\x82\xac";
	size_t bad;

	(void)state;
	text_clean(s, strlen(s));
	assert_string_equal(s, "/a?b?c??d?e\xc2\xa0" "f\xe2\x82\xac");
	assert_true(text_valid(s, strlen(s), &bad));
}

static void
test_errf_fills_and_fails(void **state)
{
	char err[16];

	(void)state;
	assert_int_equal(text_errf(err, sizeof(err), "bad %s", "key"), -1);
	assert_string_equal(err, "bad key");
	assert_int_equal(text_errf(err, sizeof(err), "%s", "a very long "
	    "reason indeed"), -1);
	assert_string_equal(err, "a very long rea");
	assert_int_equal(text_errf(NULL, 0, "nothing"), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_without_colon_matches_the_name_only),
		cmocka_unit_test(test_rule_with_colon_matches_scope_and_name),
		cmocka_unit_test(test_rule_long_scope_is_matched_whole),
		cmocka_unit_test(test_rule_last_match_wins),
		cmocka_unit_test(test_cause_names_are_one_table),
		cmocka_unit_test(test_distance_counts_edits_and_swaps),
		cmocka_unit_test(test_distance_refuses_long_words),
		cmocka_unit_test(test_errf_fills_and_fails),
		cmocka_unit_test(test_clean_makes_printable_utf8),
	};

	return cmocka_run_group_tests_name("rule", tests, NULL, NULL);
}
