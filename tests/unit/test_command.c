/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of proto/command.c (the control command table, lookup, arity
 * and argument checks) and of the control request as it crosses the
 * wire (proto/wire.c: wire_ctl_request_encode, wire_decode), including
 * the requests a hostile peer could send.  Also checks the table's
 * "complete" column, which the shells' completion reads.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "command.h"
#include "wire.h"

/*
 * Split 'line' at each '|' into argv (empty words kept), using buf for
 * the words.  Returns the number of words.
 */
static int
split(char *buf, size_t size, const char *line, char *argv[], int max)
{
	char	*p;
	int	 argc = 0;

	snprintf(buf, size, "%s", line);
	for (p = buf; argc < max; p++) {
		argv[argc++] = p;
		if ((p = strchr(p, '|')) == NULL)
			break;
		*p = '\0';
	}
	return argc;
}

/* Look up a command line given as one string of space-separated words. */
static const struct command_def *
lookup(const char *line, int *consumed, char *err, size_t errlen)
{
	static char	 buf[1024];
	char		*argv[16], *save = NULL, *w;
	int		 argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (w = strtok_r(buf, " ", &save); w != NULL && argc < 16;
	    w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	return command_lookup(argc, argv, consumed, err, errlen);
}

static void
assert_lookup(const char *line, int id, int consumed)
{
	const struct command_def *c;
	char	err[256] = "";
	int	n = -1;

	c = lookup(line, &n, err, sizeof(err));
	if (c == NULL)
		fail_msg("'%s': %s", line, err);
	assert_int_equal(c->id, id);
	assert_int_equal(n, consumed);
}

static void
assert_lookup_fails(const char *line, const char *msg)
{
	char	err[256] = "";
	int	n = -1;

	assert_null(lookup(line, &n, err, sizeof(err)));
	assert_string_equal(err, msg);
	assert_int_equal(n, -1);
}

static void
test_command_lookup_exact_name(void **state)
{
	(void)state;
	assert_lookup("help", CMD_ID_HELP, 1);
	assert_lookup("trace-event virtio_* on", CMD_ID_TRACE_EVENT, 1);
	assert_lookup("trace-file flush", CMD_ID_TRACE_FILE, 1);
	assert_lookup("info sessions --pid 12", CMD_ID_INFO_SESSIONS, 2);
	assert_lookup("info trace-events", CMD_ID_INFO_TRACE_EVENTS, 2);
	assert_lookup("help info trace", CMD_ID_HELP, 1);
}

static void
test_command_lookup_exact_beats_longer_prefix(void **state)
{
	(void)state;
	/* "trace" is a prefix of "trace-events", but a name itself. */
	assert_lookup("info trace", CMD_ID_INFO_TRACE, 2);
	assert_lookup("info trace extra", CMD_ID_INFO_TRACE, 2);
	/* Likewise "session" and "sessions". */
	assert_lookup("info session 12", CMD_ID_INFO_SESSION, 2);
	assert_lookup("in session 12", CMD_ID_INFO_SESSION, 2);
}

static void
test_command_lookup_unique_prefix(void **state)
{
	(void)state;
	assert_lookup("trace-ev foo on", CMD_ID_TRACE_EVENT, 1);
	assert_lookup("trace-fi on", CMD_ID_TRACE_FILE, 1);
	assert_lookup("trace-fu f on", CMD_ID_TRACE_FUNC, 1);
	assert_lookup("tracer graph off", CMD_ID_TRACER, 1);
	assert_lookup("i trace-f", CMD_ID_INFO_TRACE_FUNCS, 2);
	assert_lookup("h", CMD_ID_HELP, 1);
	assert_lookup("i sessions", CMD_ID_INFO_SESSIONS, 2);
	assert_lookup("inf trace-e", CMD_ID_INFO_TRACE_EVENTS, 2);
	assert_lookup("i trace-events x", CMD_ID_INFO_TRACE_EVENTS, 2);
	/* A whole word beats a prefix, word by word. */
	assert_lookup("in trace", CMD_ID_INFO_TRACE, 2);
}

static void
test_command_lookup_ambiguous(void **state)
{
	(void)state;
	assert_lookup_fails("trace on",
	    "ambiguous command 'trace': could be trace-event, trace-file, "
	    "trace-func, tracer");
	assert_lookup_fails("trace-f on",
	    "ambiguous command 'trace-f': could be trace-file, trace-func");
	assert_lookup_fails("info tr",
	    "ambiguous command 'info tr': could be info trace, "
	    "info trace-events, info trace-funcs, info trace-rules, "
	    "info tracers");
	assert_lookup_fails("i t",
	    "ambiguous command 'i t': could be info trace, "
	    "info trace-events, info trace-funcs, info trace-rules, "
	    "info tracers");
	assert_lookup_fails("info s",
	    "ambiguous command 'info s': could be info session, "
	    "info sessions, info snapshots");
}

static void
test_command_lookup_unknown(void **state)
{
	char	*none[] = { NULL }, empty[] = "", *argv[1];
	char	 err[256];

	(void)state;
	assert_lookup_fails("frobnicate now",
	    "unknown command 'frobnicate'; try 'tracectl help'");
	assert_lookup_fails("info foo",
	    "unknown command 'info foo'; try 'tracectl help'");
	assert_lookup_fails("help-me",
	    "unknown command 'help-me'; try 'tracectl help'");
	assert_lookup_fails("info",
	    "incomplete command 'info': could be info counters, "
	    "info session, info sessions, info snapshots, info trace, "
	    "info trace-events, "
	    "info trace-funcs, info trace-rules, info tracers");
	/* A typo of a few letters: the command meant. */
	assert_lookup_fails("trace-evnet x on",
	    "unknown command 'trace-evnet' (did you mean 'trace-event'?); "
	    "try 'tracectl help'");
	assert_lookup_fails("info trac-events",
	    "unknown command 'info trac-events' (did you mean "
	    "'info trace-events'?); try 'tracectl help'");
	assert_lookup_fails("", "no command given; try 'tracectl help'");
	assert_null(command_lookup(0, none, NULL, err, sizeof(err)));

	/* An empty word is not a prefix of everything. */
	argv[0] = empty;
	assert_null(command_lookup(1, argv, NULL, err, sizeof(err)));
	assert_string_equal(err,
	    "unknown command ''; try 'tracectl help'");
}

static void
test_command_lookup_quotes_little_of_long_words(void **state)
{
	char	 word[4096], err[512], *argv[1] = { word };

	(void)state;
	memset(word, 'x', sizeof(word) - 1);
	word[sizeof(word) - 1] = '\0';
	assert_null(command_lookup(1, argv, NULL, err, sizeof(err)));
	assert_true(strlen(err) < 128);
	assert_non_null(strstr(err, "unknown command 'xxxx"));
}

static void
test_command_lookup_small_or_no_error_buffer(void **state)
{
	char	err[8];

	(void)state;
	memset(err, 'z', sizeof(err));
	assert_null(lookup("nope", NULL, err, sizeof(err)));
	assert_int_equal(err[sizeof(err) - 1], '\0');
	assert_string_equal(err, "unknown");
	assert_null(lookup("nope", NULL, NULL, 0));
	assert_non_null(lookup("help", NULL, NULL, 0));
}

/* The fixed words: refused by tracectl before it looks for a daemon. */
static void
test_command_check_words(void **state)
{
	const struct command_def *t = command_table(NULL);
	char *reset[] = { (char *)"reset" }, *list[] = { (char *)"list" };
	char *one[] = { (char *)"onlyone" };
	char *on[] = { (char *)"x*", (char *)"on" };
	char *del[] = { (char *)"x*", (char *)"delete" };
	char *bad[] = { (char *)"x*", (char *)"maybe" };
	char *flush[] = { (char *)"flush" }, *set[] = { (char *)"set",
		(char *)"/t" }, *setx[] = { (char *)"sett", (char *)"/t" };
	char err[256];

	(void)state;
	assert_int_equal(command_check_words(&t[CMD_ID_TRACE_EVENT], 1, reset,
	    err, sizeof(err)), 0);
	assert_int_equal(command_check_words(&t[CMD_ID_TRACE_EVENT], 1, list,
	    err, sizeof(err)), 0);
	assert_int_equal(command_check_words(&t[CMD_ID_TRACE_EVENT], 2, on,
	    err, sizeof(err)), 0);
	assert_int_equal(command_check_words(&t[CMD_ID_TRACE_EVENT], 2, del,
	    err, sizeof(err)), 0);
	assert_int_equal(command_check_words(&t[CMD_ID_TRACE_EVENT], 1, one,
	    err, sizeof(err)), -1);
	assert_non_null(strstr(err, "trace-event reset"));
	assert_int_equal(command_check_words(&t[CMD_ID_TRACE_EVENT], 2, bad,
	    err, sizeof(err)), -1);
	assert_string_equal(err, "trace-event x*: expected 'on', 'off' or "
	    "'delete', not 'maybe'");
	assert_int_equal(command_check_words(&t[CMD_ID_TRACE_FILE], 1, flush,
	    err, sizeof(err)), 0);
	assert_int_equal(command_check_words(&t[CMD_ID_TRACE_FILE], 2, set,
	    err, sizeof(err)), 0);
	assert_int_equal(command_check_words(&t[CMD_ID_TRACE_FILE], 2, setx,
	    err, sizeof(err)), -1);
	assert_int_equal(command_check_words(&t[CMD_ID_INFO_TRACE], 0, NULL,
	    err, sizeof(err)), 0);
}

static void
test_command_check_args_arity(void **state)
{
	const struct command_def *t = command_table(NULL);
	char	err[256];

	(void)state;
	assert_int_equal(command_check_args(&t[CMD_ID_TRACE_EVENT], 2, err,
	    sizeof(err)), 0);
	assert_int_equal(command_check_args(&t[CMD_ID_TRACE_EVENT], 1, err,
	    sizeof(err)), 0);
	assert_int_equal(command_check_args(&t[CMD_ID_TRACE_EVENT], 0, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "usage: tracectl trace-event PATTERN "
	    "on|off|delete | list | reset");
	assert_int_equal(command_check_args(&t[CMD_ID_TRACE_EVENT], 3, err,
	    sizeof(err)), -1);
	assert_int_equal(command_check_args(&t[CMD_ID_INFO_TRACE], 0, err,
	    sizeof(err)), 0);
	assert_int_equal(command_check_args(&t[CMD_ID_INFO_TRACE], 1, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "usage: tracectl info trace");
	assert_int_equal(command_check_args(&t[CMD_ID_TRACE_FILE], 0, err,
	    sizeof(err)), -1);
	assert_string_equal(err,
	    "usage: tracectl trace-file on|off|flush|set PATH|set default|"
	    "recorder SIZE|recorder off");
	assert_int_equal(command_check_args(&t[CMD_ID_HELP], 2, NULL, 0), 0);
	assert_int_equal(command_check_args(&t[CMD_ID_HELP], -1, NULL, 0),
	    -1);
}

static void
test_command_parse_onoff(void **state)
{
	(void)state;
	assert_int_equal(command_parse_onoff("on"), 1);
	assert_int_equal(command_parse_onoff("off"), 0);
	assert_int_equal(command_parse_onoff("ON"), -1);
	assert_int_equal(command_parse_onoff("o"), -1);
	assert_int_equal(command_parse_onoff("onn"), -1);
	assert_int_equal(command_parse_onoff(""), -1);
	assert_int_equal(command_parse_onoff("1"), -1);
	assert_int_equal(command_parse_onoff(NULL), -1);
}

static void
test_command_pattern_valid(void **state)
{
	char	pat[COMMAND_PATTERN_MAX + 2], err[128];

	(void)state;
	assert_int_equal(command_pattern_valid("virtio_*", err,
	    sizeof(err)), 0);
	assert_int_equal(command_pattern_valid("*", NULL, 0), 0);
	assert_int_equal(command_pattern_valid("a?[bc]* x~", NULL, 0), 0);

	assert_int_equal(command_pattern_valid("", err, sizeof(err)), -1);
	assert_string_equal(err, "empty event pattern");
	assert_int_equal(command_pattern_valid(NULL, err, sizeof(err)), -1);

	memset(pat, 'a', COMMAND_PATTERN_MAX);
	pat[COMMAND_PATTERN_MAX] = '\0';
	assert_int_equal(command_pattern_valid(pat, err, sizeof(err)), 0);
	pat[COMMAND_PATTERN_MAX] = 'a';
	pat[COMMAND_PATTERN_MAX + 1] = '\0';
	assert_int_equal(command_pattern_valid(pat, err, sizeof(err)), -1);
	assert_string_equal(err, "event pattern longer than 255 bytes");

	assert_int_equal(command_pattern_valid("a\tb", err, sizeof(err)), -1);
	assert_string_equal(err,
	    "event pattern has a control byte (0x09) at offset 1");
	assert_int_equal(command_pattern_valid("\033[2J", NULL, 0), -1);
	assert_int_equal(command_pattern_valid("x\x7f", NULL, 0), -1);
	assert_int_equal(command_pattern_valid("caf\xc3\xa9", err,
	    sizeof(err)), -1);
	assert_string_equal(err,
	    "event pattern has a non-ASCII byte (0xc3) at offset 3");
}

/* Split a line of words (space-separated) and parse it as trigger's. */
static int
parse_trigger(const char *line, struct command_trigger *t, char *err,
    size_t errlen)
{
	static char	 buf[1024];
	char		*argv[16], *save = NULL, *w;
	int		 argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (w = strtok_r(buf, " ", &save); w != NULL && argc < 16;
	    w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	return command_parse_trigger(argc, argv, t, err, errlen);
}

static void
test_command_parse_trigger_forms(void **state)
{
	struct command_trigger t;
	char err[256] = "";

	(void)state;
	assert_int_equal(parse_trigger("add app:boom snapshot", &t, err,
	    sizeof(err)), 0);
	assert_int_equal(t.op, COMMAND_TRIGGER_ADD);
	assert_string_equal(t.glob, "app:boom");
	assert_string_equal(t.action, "snapshot");
	assert_int_equal(t.after_ns, 0);
	assert_int_equal(t.every_ns, COMMAND_TRIGGER_EVERY_DEFAULT_NS);

	assert_int_equal(parse_trigger("add traced:crash snapshot --after "
	    "300ms --every=5s", &t, err, sizeof(err)), 0);
	assert_string_equal(t.glob, "traced:crash");
	assert_int_equal(t.after_ns, 300000000);
	assert_int_equal(t.every_ns, UINT64_C(5000000000));

	assert_int_equal(parse_trigger("add x* snapshot --every 1m --after=0",
	    &t, err, sizeof(err)), 0);
	assert_int_equal(t.after_ns, 0);
	assert_int_equal(t.every_ns, UINT64_C(60000000000));

	assert_int_equal(parse_trigger("list", &t, err, sizeof(err)), 0);
	assert_int_equal(t.op, COMMAND_TRIGGER_LIST);
	assert_null(t.glob);

	assert_int_equal(parse_trigger("delete app:*", &t, err, sizeof(err)),
	    0);
	assert_int_equal(t.op, COMMAND_TRIGGER_DELETE);
	assert_string_equal(t.glob, "app:*");
}

static void
test_command_parse_trigger_errors_say_the_fix(void **state)
{
	struct command_trigger t;
	char err[256];

	(void)state;
	assert_int_equal(parse_trigger("add x snapshott", &t, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "trigger add x: unknown action 'snapshott': "
	    "the only one is 'snapshot' (write the flight recorder's "
	    "windows)");
	assert_int_equal(parse_trigger("add x snapshot --after 5x", &t, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "trigger add: --after '5x' is not a "
	    "duration: a number and a unit, such as 300ms, 2s or 1m");
	assert_int_equal(parse_trigger("add x snapshot --after", &t, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "trigger add: --after needs a DURATION "
	    "(300ms, 2s, 1m)");
	assert_int_equal(parse_trigger("add x snapshot --every 2s --every 3s",
	    &t, err, sizeof(err)), -1);
	assert_string_equal(err, "trigger add: --every given twice");
	assert_int_equal(parse_trigger("add x snapshot --afterr 1s", &t, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "trigger add: unknown option '--afterr': it "
	    "takes --after DURATION and --every DURATION");
	assert_int_equal(parse_trigger("add x snapshot 1s", &t, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown option '1s'"));
	assert_int_equal(parse_trigger("add x snapshot --every 500ms", &t,
	    err, sizeof(err)), -1);
	assert_string_equal(err, "trigger add: --every 500ms is out of range: "
	    "from 1s (it bounds how many snapshots an event emitted in a "
	    "loop writes) to 86400s");
	assert_int_equal(parse_trigger("add x snapshot --every 2d", &t, err,
	    sizeof(err)), -1);
	assert_int_equal(parse_trigger("add x snapshot --after 11m", &t, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "trigger add: --after 660s is longer than "
	    "600s, the most: the recorder holds the last moments, not more");
	/* The bounds themselves are in. */
	assert_int_equal(parse_trigger("add x snapshot --after 10m --every 1s",
	    &t, err, sizeof(err)), 0);
	assert_int_equal(parse_trigger("add x snapshot --every 24h", &t, err,
	    sizeof(err)), 0);

	assert_int_equal(parse_trigger("add x", &t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "usage: tracectl trigger add GLOB "
	    "snapshot"));
	assert_int_equal(parse_trigger("remove x", &t, err, sizeof(err)), -1);
	assert_int_equal(parse_trigger("list x", &t, err, sizeof(err)), -1);
	assert_int_equal(parse_trigger("delete", &t, err, sizeof(err)), -1);
	assert_int_equal(parse_trigger("add \033[2J snapshot", &t, err,
	    sizeof(err)), -1);
	assert_string_equal(err,
	    "event pattern has a control byte (0x1b) at offset 0");
	assert_int_equal(parse_trigger("delete caf\xc3\xa9", &t, err,
	    sizeof(err)), -1);
	/* No error buffer: still refused, nothing written. */
	assert_int_equal(parse_trigger("add x nothing", &t, NULL, 0), -1);
}

/* tracectl refuses what the daemon would, before it connects. */
static void
test_command_check_words_trigger(void **state)
{
	const struct command_def *d = command_table(NULL) + CMD_ID_TRIGGER;
	char *ok[] = { (char *)"add", (char *)"a:*", (char *)"snapshot",
		(char *)"--after", (char *)"1s" };
	char *bad[] = { (char *)"add", (char *)"a:*", (char *)"dump" };
	char err[256];

	(void)state;
	assert_int_equal(command_check_words(d, 5, ok, err, sizeof(err)), 0);
	assert_int_equal(command_check_words(d, 3, bad, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "unknown action 'dump'"));
	assert_true(d->flags & CMD_F_PRIVILEGED);
}

static void
test_command_table_sorted_and_sane(void **state)
{
	const struct command_def *t;
	const char	*p;
	size_t		 i, n;
	int		 words;

	(void)state;
	t = command_table(&n);
	assert_int_equal(n, CMD_ID_COUNT);
	for (i = 0; i < n; i++) {
		assert_int_equal(t[i].id, (int)i);
		if (i > 0 && strcmp(t[i - 1].name, t[i].name) >= 0)
			fail_msg("'%s' then '%s': not sorted or a duplicate",
			    t[i - 1].name, t[i].name);
		assert_true(t[i].args_min >= 0);
		assert_true(t[i].args_min <= t[i].args_max);
		assert_true(t[i].args_max + COMMAND_WORDS_MAX <=
		    TRACED_CTL_ARGS_MAX);
		assert_true(t[i].help[0] != '\0');
		assert_true(t[i].help[strlen(t[i].help) - 1] != '.');
		assert_true((t[i].flags & ~CMD_F_PRIVILEGED) == 0);
		/* Words of lower-case letters and '-', one space apart. */
		words = 1;
		for (p = t[i].name; *p != '\0'; p++) {
			if (*p == ' ') {
				assert_true(p > t[i].name && p[1] != '\0' &&
				    p[1] != ' ');
				words++;
			} else
				assert_true((*p >= 'a' && *p <= 'z') ||
				    *p == '-');
		}
		assert_true(words <= COMMAND_WORDS_MAX);
		if (t[i].usage[0] != '\0')
			assert_true(t[i].usage[strlen(t[i].usage) - 1] != ' ');
	}
}

static void
test_command_every_name_finds_itself(void **state)
{
	const struct command_def *t;
	size_t	i, n;

	(void)state;
	t = command_table(&n);
	for (i = 0; i < n; i++)
		assert_lookup(t[i].name, t[i].id,
		    strchr(t[i].name, ' ') != NULL ? 2 : 1);
}

static void
test_command_privileged_flags(void **state)
{
	const struct command_def *t = command_table(NULL);

	(void)state;
	assert_true(t[CMD_ID_TRACE_EVENT].flags & CMD_F_PRIVILEGED);
	assert_true(t[CMD_ID_TRACE_FILE].flags & CMD_F_PRIVILEGED);
	assert_false(t[CMD_ID_INFO_TRACE].flags & CMD_F_PRIVILEGED);
	assert_false(t[CMD_ID_INFO_TRACE_EVENTS].flags & CMD_F_PRIVILEGED);
	assert_false(t[CMD_ID_INFO_SESSIONS].flags & CMD_F_PRIVILEGED);
	assert_false(t[CMD_ID_HELP].flags & CMD_F_PRIVILEGED);
}

/* Is s[0..len) one alternative of a slot of a "complete" column? */
static int
alternative_valid(const char *s, size_t len)
{
	static const char *const classes[] = { "@dir", "@file", "@session",
		"@command" };
	size_t	i, lower = 0, upper = 0;

	if (len == 0)
		return 0;
	if (s[0] == '@') {
		for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
			if (strlen(classes[i]) == len &&
			    strncmp(s, classes[i], len) == 0)
				return 1;
		return 0;
	}
	/* A literal word, or an UPPERCASE placeholder (A:B, FIELD). */
	for (i = 0; i < len; i++) {
		if ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' &&
		    s[i] <= '9') || s[i] == '-')
			lower++;
		else if ((s[i] >= 'A' && s[i] <= 'Z') || s[i] == ':' ||
		    s[i] == '_')
			upper++;
		else
			return 0;
	}
	return lower == 0 || upper == 0;
}

/* Is 'slot' alternatives separated by '|'? */
static int
slot_valid(const char *slot, size_t len)
{
	const char	*e, *end = slot + len;

	for (;;) {
		e = memchr(slot, '|', (size_t)(end - slot));
		if (e == NULL)
			return alternative_valid(slot, (size_t)(end - slot));
		if (!alternative_valid(slot, (size_t)(e - slot)))
			return 0;
		slot = e + 1;
	}
}

/*
 * Each "complete" column in the language commands.def describes (what
 * ctl/complete.c reads, and skips silently where it does not
 * understand): options, slots, forms; and one for every command that
 * takes arguments, none for those that take none.
 */
static void
test_command_complete_column_well_formed(void **state)
{
	const struct command_def *t;
	const char	*p, *w, *eq;
	size_t		 i, n, len;

	(void)state;
	t = command_table(&n);
	for (i = 0; i < n; i++) {
		if (t[i].args_max == 0 && t[i].complete[0] != '\0')
			fail_msg("%s takes no argument: its complete column "
			    "must be empty", t[i].name);
		if (t[i].args_max > 0 && t[i].complete[0] == '\0')
			fail_msg("%s takes arguments: its complete column "
			    "says nothing", t[i].name);
		for (p = t[i].complete; *p != '\0'; p += *p == ' ') {
			w = p;
			p += strcspn(p, " ");
			len = (size_t)(p - w);
			if (len == 1 && w[0] == ';' && w > t[i].complete &&
			    *p == ' ')
				continue;	/* between two forms */
			if (w[0] == '-') {
				eq = memchr(w, '=', len);
				if (!alternative_valid(w, eq != NULL ?
				    (size_t)(eq - w) : len) || (eq != NULL &&
				    !slot_valid(eq + 1, len - (size_t)(eq + 1 -
				    w))))
					fail_msg("%s: bad option '%.*s'",
					    t[i].name, (int)len, w);
				continue;
			}
			if (len > 3 && strncmp(w + len - 3, "...", 3) == 0)
				len -= 3;
			if (!slot_valid(w, len))
				fail_msg("%s: bad slot '%.*s'", t[i].name,
				    (int)len, w);
		}
	}
}

/* ---- the request on the wire ------------------------------------- */

static void
test_wire_ctl_request_round_trip(void **state)
{
	const struct command_def *c;
	const char	*line = "info|sessions|--exe|a b||--pid|12";
	char		*argv[8], words[64];
	uint64_t	 buf[TRACED_MSG_MAX / 8];
	struct wire_msg	 m;
	const char	*why = NULL;
	int		 len, i, argc, consumed;

	(void)state;
	argc = split(words, sizeof(words), line, argv, 8);
	assert_int_equal(argc, 7);
	len = wire_ctl_request_encode(buf, sizeof(buf), TRACED_CTL_JSON,
	    argc, argv);
	assert_true(len > (int)sizeof(struct traced_msg_ctl_request));
	assert_int_equal(wire_decode(buf, (size_t)len, 0, &m, &why), 0);
	assert_int_equal(m.type, TRACED_MSG_CTL_REQUEST);
	assert_int_equal(m.u.ctl_request->argc, argc);
	assert_int_equal(m.u.ctl_request->flags, TRACED_CTL_JSON);
	assert_int_equal(m.u.ctl_request->version, TRACED_PROTOCOL_VERSION);
	for (i = 0; i < argc; i++)
		assert_string_equal(m.argv[i], argv[i]);

	/* What the daemon does next. */
	c = command_lookup((int)m.u.ctl_request->argc, (char *const *)m.argv,
	    &consumed, NULL, 0);
	assert_non_null(c);
	assert_int_equal(c->id, CMD_ID_INFO_SESSIONS);
	assert_int_equal(consumed, 2);
	assert_int_equal(command_check_args(c, argc - consumed, NULL, 0), 0);
}

/* Encode 'argv' into buf; returns the length. */
static size_t
encode(uint64_t *buf, size_t size, int argc, char **argv)
{
	int	len;

	len = wire_ctl_request_encode(buf, size, 0, argc, argv);
	assert_true(len > 0);
	return (size_t)len;
}

static void
assert_decode_fails(const void *buf, size_t len, int err)
{
	struct wire_msg	 m;
	const char	*why = NULL;

	assert_int_equal(wire_decode(buf, len, 0, &m, &why), err);
	assert_non_null(why);
}

static void
test_wire_ctl_request_argc_must_match_bytes(void **state)
{
	char	*argv[3], words[64];
	uint64_t buf[TRACED_MSG_MAX / 8];
	struct traced_msg_ctl_request *r = (void *)buf;
	size_t	 len;

	(void)state;
	split(words, sizeof(words), "trace-event|virtio_*|on", argv, 3);
	len = encode(buf, sizeof(buf), 3, argv);
	r->argc = 4;		/* more than there are */
	assert_decode_fails(buf, len, -EBADMSG);
	r->argc = 2;		/* fewer: bytes left over */
	assert_decode_fails(buf, len, -EBADMSG);
	r->argc = 0;
	assert_decode_fails(buf, len, -EBADMSG);
	r->argc = 3;
	r->flags = 0x80;	/* unknown flag */
	assert_decode_fails(buf, len, -EBADMSG);
}

static void
test_wire_ctl_request_needs_final_nul(void **state)
{
	char	*argv[2], words[64];
	uint64_t buf[TRACED_MSG_MAX / 8];
	struct traced_msg_hdr *h = (void *)buf;
	size_t	 len;

	(void)state;
	split(words, sizeof(words), "help|trace-file", argv, 2);
	len = encode(buf, sizeof(buf), 2, argv);
	((char *)buf)[len - 1] = 'x';
	assert_decode_fails(buf, len, -EBADMSG);
	/* Or cut off in the middle of the last argument. */
	len = encode(buf, sizeof(buf), 2, argv);
	h->size = (uint32_t)(len - 3);
	assert_decode_fails(buf, len - 3, -EBADMSG);
}

static void
test_wire_ctl_request_too_many_args(void **state)
{
	char		*argv[TRACED_CTL_ARGS_MAX + 1], a[] = "a";
	uint64_t	 buf[TRACED_MSG_MAX / 8];
	struct traced_msg_ctl_request *r = (void *)buf;
	size_t		 len;
	int		 i;

	(void)state;
	for (i = 0; i <= TRACED_CTL_ARGS_MAX; i++)
		argv[i] = a;
	assert_int_equal(wire_ctl_request_encode(buf, sizeof(buf), 0,
	    TRACED_CTL_ARGS_MAX + 1, argv), -1);
	assert_int_equal(wire_ctl_request_encode(buf, sizeof(buf), 0, 0,
	    argv), -1);
	len = encode(buf, sizeof(buf), TRACED_CTL_ARGS_MAX, argv);

	/* A peer that writes one more by hand. */
	memcpy((char *)buf + len, "a", 2);
	len += 2;
	r->hdr.size = (uint32_t)len;
	r->argc = TRACED_CTL_ARGS_MAX + 1;
	assert_decode_fails(buf, len, -EBADMSG);
}

static void
test_wire_ctl_request_oversize(void **state)
{
	static char	 big[TRACED_MSG_MAX];
	static uint64_t	 buf[2 * TRACED_MSG_MAX / 8];
	char		*argv[3], words[64];
	struct traced_msg_ctl_request *r = (void *)buf;
	size_t		 len;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	split(words, sizeof(words), "trace-event|x|on", argv, 3);
	argv[1] = big;
	assert_int_equal(wire_ctl_request_encode(buf, sizeof(buf), 0, 3,
	    argv), -1);
	/* Too small a buffer is refused, not overrun. */
	argv[1] = words + strlen("trace-event") + 1;
	assert_int_equal(wire_ctl_request_encode(buf, 30, 0, 3, argv), -1);

	/* A message longer than TRACED_MSG_MAX, well formed otherwise. */
	memset(buf, 0, sizeof(buf));
	len = TRACED_MSG_MAX + 8;
	wire_hdr_init(&r->hdr, TRACED_MSG_CTL_REQUEST, (uint32_t)len);
	r->version = TRACED_PROTOCOL_VERSION;
	r->argc = 1;
	memset((char *)buf + sizeof(*r), 'x', len - sizeof(*r) - 1);
	assert_decode_fails(buf, len, -EBADMSG);
}

static void
test_wire_ctl_request_wrong_version(void **state)
{
	char	*argv[2], words[64];
	uint64_t buf[TRACED_MSG_MAX / 8];
	struct traced_msg_ctl_request *r = (void *)buf;
	size_t	 len;

	(void)state;
	split(words, sizeof(words), "info|trace", argv, 2);
	len = encode(buf, sizeof(buf), 2, argv);
	r->version = TRACED_PROTOCOL_VERSION + 1;
	assert_decode_fails(buf, len, -EPROTO);
	r->version = TRACED_PROTOCOL_VERSION;
	r->hdr.size = (uint32_t)len + 1;	/* size field lies */
	assert_decode_fails(buf, len, -EBADMSG);
}

static void
test_wire_ctl_reply_messages(void **state)
{
	uint64_t	 buf[64];
	struct traced_msg_ctl_end *e = (void *)buf;
	struct wire_msg	 m;
	const char	*why;
	size_t		 len;

	(void)state;
	wire_hdr_init((struct traced_msg_hdr *)buf, TRACED_MSG_CTL_LINE, 13);
	memcpy((char *)buf + 8, "hello", 5);
	assert_int_equal(wire_decode(buf, 13, 0, &m, &why), 0);
	assert_int_equal(m.payload_len, 5);
	assert_memory_equal(m.payload, "hello", 5);
	/* A line with a descriptor is refused. */
	assert_int_not_equal(wire_decode(buf, 13, 1, &m, &why), 0);

	len = sizeof(*e) + 4;
	memset(buf, 0, sizeof(buf));
	wire_hdr_init(&e->hdr, TRACED_MSG_CTL_END, (uint32_t)len);
	e->status = TRACED_CTL_DENIED;
	e->count = 7;
	memcpy(e + 1, "nope", 4);
	assert_int_equal(wire_decode(buf, len, 0, &m, &why), 0);
	assert_int_equal(m.u.ctl_end->count, 7);
	assert_int_equal(m.payload_len, 4);
	e->status = TRACED_CTL_DENIED + 1;
	assert_decode_fails(buf, len, -EBADMSG);
	/* Shorter than the END struct. */
	wire_hdr_init(&e->hdr, TRACED_MSG_CTL_END, 12);
	assert_decode_fails(buf, 12, -EBADMSG);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_command_lookup_exact_name),
		cmocka_unit_test(
		    test_command_lookup_exact_beats_longer_prefix),
		cmocka_unit_test(test_command_lookup_unique_prefix),
		cmocka_unit_test(test_command_lookup_ambiguous),
		cmocka_unit_test(test_command_lookup_unknown),
		cmocka_unit_test(
		    test_command_lookup_quotes_little_of_long_words),
		cmocka_unit_test(test_command_lookup_small_or_no_error_buffer),
		cmocka_unit_test(test_command_check_args_arity),
		cmocka_unit_test(test_command_check_words),
		cmocka_unit_test(test_command_parse_onoff),
		cmocka_unit_test(test_command_pattern_valid),
		cmocka_unit_test(test_command_parse_trigger_forms),
		cmocka_unit_test(test_command_parse_trigger_errors_say_the_fix),
		cmocka_unit_test(test_command_check_words_trigger),
		cmocka_unit_test(test_command_table_sorted_and_sane),
		cmocka_unit_test(test_command_every_name_finds_itself),
		cmocka_unit_test(test_command_privileged_flags),
		cmocka_unit_test(test_command_complete_column_well_formed),
		cmocka_unit_test(test_wire_ctl_request_round_trip),
		cmocka_unit_test(test_wire_ctl_request_argc_must_match_bytes),
		cmocka_unit_test(test_wire_ctl_request_needs_final_nul),
		cmocka_unit_test(test_wire_ctl_request_too_many_args),
		cmocka_unit_test(test_wire_ctl_request_oversize),
		cmocka_unit_test(test_wire_ctl_request_wrong_version),
		cmocka_unit_test(test_wire_ctl_reply_messages),
	};

	return cmocka_run_group_tests_name("command", tests, NULL, NULL);
}
