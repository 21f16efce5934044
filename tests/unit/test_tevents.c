/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of proto/tevents.c, the trace-events parser: every form QEMU's
 * tracetool accepts (every type of its allowed list and tracegen's
 * own, PRI* macros, the disable and vcpu properties, no format or two,
 * comments, zero-argument events), tevents_format() round trips, every
 * form tracetool refuses (11 arguments, %m, a trailing newline, '()',
 * unknown properties and type words, a missing final newline) and what
 * tracegen refuses because the compiler would, and the input a careless
 * user or a hostile client could give it (bad syntax, duplicate names,
 * overlong names, NUL bytes, invalid UTF-8, random bytes), each error
 * checked for its line, column, cause and fix.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ring.h"
#include "tevents.h"

/* Parse NUL-terminated text that must be valid. */
static void
parse_ok(const char *text, struct tevents_file *f)
{
	char err[256];
	int rc;

	rc = tevents_parse(text, strlen(text), "t", f, err, sizeof(err));
	if (rc != 0)
		fail_msg("unexpected error: %s", err);
}

/*
 * Parse len bytes that must fail with a message starting with 'where'
 * ("t:LINE:COL: ") and containing 'cause'.
 */
static void
parse_fails_n(const char *text, size_t len, const char *where,
    const char *cause)
{
	struct tevents_file f;
	char err[512];

	memset(err, 'x', sizeof(err));
	if (tevents_parse(text, len, "t", &f, err, sizeof(err)) == 0) {
		tevents_free(&f);
		fail_msg("parse succeeded, expected '%s'", cause);
	}
	assert_null(f.events);
	assert_int_equal(f.nevents, 0);
	if (strncmp(err, where, strlen(where)) != 0 ||
	    strstr(err, cause) == NULL)
		fail_msg("got '%s', expected '%s...%s'", err, where, cause);
}

static void
parse_fails(const char *text, const char *where, const char *cause)
{
	parse_fails_n(text, strlen(text), where, cause);
}

/* The one event of 'text', checked, in *f (freed by the caller). */
static const struct tevents_event *
one_event(const char *text, struct tevents_file *f)
{
	parse_ok(text, f);
	assert_int_equal(f->nevents, 1);
	return &f->events[0];
}

static void
assert_events_equal(const struct tevents_file *a,
    const struct tevents_file *b)
{
	size_t i;
	unsigned j;

	assert_int_equal(a->nevents, b->nevents);
	for (i = 0; i < a->nevents; i++) {
		const struct tevents_event *x = &a->events[i];
		const struct tevents_event *y = &b->events[i];

		assert_string_equal(x->name, y->name);
		assert_string_equal(x->fmt, y->fmt);
		if (x->fmt_trans == NULL || y->fmt_trans == NULL)
			assert_ptr_equal(x->fmt_trans, y->fmt_trans);
		else
			assert_string_equal(x->fmt_trans, y->fmt_trans);
		assert_int_equal(x->disabled, y->disabled);
		assert_int_equal(x->vcpu, y->vcpu);
		assert_int_equal(x->nargs, y->nargs);
		for (j = 0; j < x->nargs; j++) {
			assert_string_equal(x->args[j].type, y->args[j].type);
			assert_string_equal(x->args[j].name, y->args[j].name);
			assert_int_equal(x->args[j].cls, y->args[j].cls);
		}
	}
}

/* Format every event of f and parse the lines back; must be equal. */
static void
assert_round_trip(const struct tevents_file *f)
{
	struct tevents_file g;
	char *text, err[256];
	size_t i, len = 0, cap = 0;
	int n;

	text = NULL;
	for (i = 0; i < f->nevents; i++) {
		n = tevents_format(&f->events[i], NULL, 0);
		assert_true(n > 0);
		if (len + (size_t)n + 1 > cap) {
			cap = 2 * (len + (size_t)n + 1);
			text = realloc(text, cap);
			assert_non_null(text);
		}
		assert_int_equal(tevents_format(&f->events[i], text + len,
		    cap - len), n);
		len += (size_t)n;
	}
	if (tevents_parse(text, len, "rt", &g, err, sizeof(err)) != 0)
		fail_msg("round trip failed: %s", err);
	assert_events_equal(f, &g);
	tevents_free(&g);
	free(text);
}

/* ---- valid input ----------------------------------------------------- */

struct type_case {
	const char	*written;
	const char	*normalized;
	enum tevents_class cls;
};

/* Every type of QEMU's tracetool's allowed list, and tracegen's own. */
static const struct type_case type_cases[] = {
	/* tracetool: int long short char bool unsigned signed, the
	 * fixed-size integers, void (in pointers), size_t, ssize_t,
	 * uintptr_t, ptrdiff_t, and const. */
	{ "char", "char", TEVENTS_SIGNED },
	{ "signed char", "signed char", TEVENTS_SIGNED },
	{ "unsigned char", "unsigned char", TEVENTS_UNSIGNED },
	{ "short", "short", TEVENTS_SIGNED },
	{ "short int", "short int", TEVENTS_SIGNED },
	{ "unsigned short", "unsigned short", TEVENTS_UNSIGNED },
	{ "int", "int", TEVENTS_SIGNED },
	{ "signed", "signed", TEVENTS_SIGNED },
	{ "unsigned", "unsigned", TEVENTS_UNSIGNED },
	{ "unsigned int", "unsigned int", TEVENTS_UNSIGNED },
	{ "long", "long", TEVENTS_SIGNED },
	{ "long int", "long int", TEVENTS_SIGNED },
	{ "unsigned long", "unsigned long", TEVENTS_UNSIGNED },
	{ "long unsigned int", "long unsigned int", TEVENTS_UNSIGNED },
	{ "long long", "long long", TEVENTS_SIGNED },
	{ "signed long long int", "signed long long int", TEVENTS_SIGNED },
	{ "unsigned long long", "unsigned long long", TEVENTS_UNSIGNED },
	{ "bool", "bool", TEVENTS_BOOL },
	{ "int8_t", "int8_t", TEVENTS_SIGNED },
	{ "int16_t", "int16_t", TEVENTS_SIGNED },
	{ "int32_t", "int32_t", TEVENTS_SIGNED },
	{ "int64_t", "int64_t", TEVENTS_SIGNED },
	{ "uint8_t", "uint8_t", TEVENTS_UNSIGNED },
	{ "uint16_t", "uint16_t", TEVENTS_UNSIGNED },
	{ "uint32_t", "uint32_t", TEVENTS_UNSIGNED },
	{ "uint64_t", "uint64_t", TEVENTS_UNSIGNED },
	{ "size_t", "size_t", TEVENTS_UNSIGNED },
	{ "ssize_t", "ssize_t", TEVENTS_SIGNED },
	{ "uintptr_t", "uintptr_t", TEVENTS_UNSIGNED },
	{ "ptrdiff_t", "ptrdiff_t", TEVENTS_SIGNED },
	{ "const  int", "const int", TEVENTS_SIGNED },
	{ "const uint64_t", "const uint64_t", TEVENTS_UNSIGNED },
	{ "unsigned const", "unsigned const", TEVENTS_UNSIGNED },
	/* tracegen also knows these. */
	{ "_Bool", "_Bool", TEVENTS_BOOL },
	{ "intptr_t", "intptr_t", TEVENTS_SIGNED },
	{ "intmax_t", "intmax_t", TEVENTS_SIGNED },
	{ "uintmax_t", "uintmax_t", TEVENTS_UNSIGNED },
	{ "int_least8_t", "int_least8_t", TEVENTS_SIGNED },
	{ "uint_least64_t", "uint_least64_t", TEVENTS_UNSIGNED },
	{ "int_fast32_t", "int_fast32_t", TEVENTS_SIGNED },
	{ "uint_fast16_t", "uint_fast16_t", TEVENTS_UNSIGNED },
	{ "off_t", "off_t", TEVENTS_SIGNED },
	{ "pid_t", "pid_t", TEVENTS_SIGNED },
	{ "uid_t", "uid_t", TEVENTS_UNSIGNED },
	{ "gid_t", "gid_t", TEVENTS_UNSIGNED },
	{ "mode_t", "mode_t", TEVENTS_UNSIGNED },
	{ "dev_t", "dev_t", TEVENTS_UNSIGNED },
	{ "ino_t", "ino_t", TEVENTS_UNSIGNED },
	{ "time_t", "time_t", TEVENTS_SIGNED },
	/* Pointers and strings. */
	{ "void *", "void *", TEVENTS_POINTER },
	{ "void*", "void *", TEVENTS_POINTER },
	{ "void * *", "void **", TEVENTS_POINTER },
	{ "const void *", "const void *", TEVENTS_POINTER },
	{ "const uint8_t *", "const uint8_t *", TEVENTS_POINTER },
	{ "uint64_t *", "uint64_t *", TEVENTS_POINTER },
	{ "bool *", "bool *", TEVENTS_POINTER },
	{ "unsigned char *", "unsigned char *", TEVENTS_POINTER },
	{ "signed char *", "signed char *", TEVENTS_POINTER },
	{ "const char **", "const char **", TEVENTS_POINTER },
	{ "char **", "char **", TEVENTS_POINTER },
	{ "const char *", "const char *", TEVENTS_STRING },
	{ "const char*", "const char *", TEVENTS_STRING },
	{ "char *", "char *", TEVENTS_STRING },
	{ "char*", "char *", TEVENTS_STRING },
	{ "char const *", "char const *", TEVENTS_STRING },
};

static void
test_tevents_classifies_every_type(void **state)
{
	struct tevents_file f;
	const struct tevents_event *ev;
	char text[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(type_cases) / sizeof(type_cases[0]); i++) {
		snprintf(text, sizeof(text), "ev(%s x) \"%%d\"\n",
		    type_cases[i].written);
		ev = one_event(text, &f);
		assert_int_equal(ev->nargs, 1);
		if (strcmp(ev->args[0].type, type_cases[i].normalized) != 0 ||
		    ev->args[0].cls != type_cases[i].cls)
			fail_msg("'%s': got '%s' class %d, want '%s' class %d",
			    type_cases[i].written, ev->args[0].type,
			    ev->args[0].cls, type_cases[i].normalized,
			    type_cases[i].cls);
		assert_string_equal(ev->args[0].name, "x");
		assert_round_trip(&f);
		tevents_free(&f);
	}
}

static void
test_tevents_parses_qemu_style_event(void **state)
{
	struct tevents_file f;
	const struct tevents_event *ev;

	(void)state;
	ev = one_event("memory_region_ops_read(int cpu_index, void *mr, "
	    "uint64_t addr, uint64_t value, unsigned size, const char *name)"
	    " \"cpu %d mr %p addr 0x%\"PRIx64\" value 0x%\"PRIx64\" size %u"
	    " name '%s'\"\n", &f);
	assert_string_equal(ev->name, "memory_region_ops_read");
	assert_int_equal(ev->nargs, 6);
	assert_int_equal(ev->line, 1);
	assert_int_equal(ev->disabled, 0);
	assert_int_equal(ev->vcpu, 0);
	assert_null(ev->fmt_trans);
	assert_string_equal(ev->args[0].type, "int");
	assert_string_equal(ev->args[1].type, "void *");
	assert_int_equal(ev->args[1].cls, TEVENTS_POINTER);
	assert_string_equal(ev->args[5].name, "name");
	assert_int_equal(ev->args[5].cls, TEVENTS_STRING);
	/* Tokens kept as written, one space between them. */
	assert_string_equal(ev->fmt, "\"cpu %d mr %p addr 0x%\" PRIx64 "
	    "\" value 0x%\" PRIx64 \" size %u name '%s'\"");
	tevents_free(&f);
}

static void
test_tevents_keeps_format_tokens_and_escapes(void **state)
{
	struct tevents_file f;
	const struct tevents_event *ev;

	(void)state;
	ev = one_event("e(uint64_t a)   \"a=0x%\"   PRIx64 \"\\n\\t\\\"q\\\"\" "
	    "PRIxPTR\t\"\\\\\"  \r\n", &f);
	assert_string_equal(ev->fmt, "\"a=0x%\" PRIx64 \"\\n\\t\\\"q\\\"\" "
	    "PRIxPTR \"\\\\\"");
	assert_round_trip(&f);
	tevents_free(&f);

	/* UTF-8 and tabs inside literals are kept. */
	ev = one_event("e(void) \"caf\xc3\xa9\tok \xf0\x9f\x98\x80\"\n", &f);
	assert_string_equal(ev->fmt, "\"caf\xc3\xa9\tok \xf0\x9f\x98\x80\"");
	tevents_free(&f);
}

/* Every PRI macro of <inttypes.h>, and a format that ends with one. */
static void
test_tevents_accepts_every_pri_macro(void **state)
{
	static const char convs[] = "diouxX";
	static const char *const sizes[] = {
		"8", "16", "32", "64", "LEAST8", "LEAST16", "LEAST32",
		"LEAST64", "FAST8", "FAST16", "FAST32", "FAST64", "MAX", "PTR",
	};
	struct tevents_file f;
	const struct tevents_event *ev;
	char text[128];
	size_t i, j;

	(void)state;
	for (i = 0; convs[i] != '\0'; i++)
		for (j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++) {
			snprintf(text, sizeof(text), "e(uint64_t v) \"v=%%\" "
			    "PRI%c%s\n", convs[i], sizes[j]);
			ev = one_event(text, &f);
			assert_non_null(strstr(ev->fmt, "PRI"));
			assert_round_trip(&f);
			tevents_free(&f);
		}
	/* QEMU's own line: the format ends with the macro. */
	ev = one_event("vcpu guest_user_syscall_ret(uint64_t num, uint64_t ret)"
	    " \"num=0x%016\"PRIx64\" ret=0x%016\"PRIx64\n", &f);
	assert_string_equal(ev->fmt, "\"num=0x%016\" PRIx64 \" ret=0x%016\" "
	    "PRIx64");
	tevents_free(&f);
}

static void
test_tevents_skips_comments_and_blank_lines(void **state)
{
	struct tevents_file f;

	(void)state;
	parse_ok("# a comment (with \"quotes\" and \x01 bytes \xff)\n"
	    "\n"
	    "   \t\n"
	    "  # indented comment\n"
	    "first(int a) \"%d\"\r\n"
	    "\r\n"
	    "#second(int a) \"%d\"\n"
	    "  third(int a) \"%d\"\n", &f);
	assert_int_equal(f.nevents, 2);
	assert_string_equal(f.events[0].name, "first");
	assert_int_equal(f.events[0].line, 5);
	assert_string_equal(f.events[1].name, "third");
	assert_int_equal(f.events[1].line, 8);
	tevents_free(&f);

	parse_ok("", &f);
	assert_int_equal(f.nevents, 0);
	tevents_free(&f);
	parse_ok("# only comments\n\n", &f);
	assert_int_equal(f.nevents, 0);
	tevents_free(&f);
}

static void
test_tevents_disable_property_turns_event_off(void **state)
{
	struct tevents_file f;
	char buf[128];

	(void)state;
	parse_ok("disable a(int x) \"%d\"\n"
	    "b(int x) \"%d\"\n"
	    "  disable\t disable c(void) \"\"\n", &f);
	assert_int_equal(f.nevents, 3);
	assert_int_equal(f.events[0].disabled, 1);
	assert_int_equal(f.events[1].disabled, 0);
	assert_int_equal(f.events[2].disabled, 1);
	tevents_format(&f.events[0], buf, sizeof(buf));
	assert_string_equal(buf, "disable a(int x) \"%d\"\n");
	assert_round_trip(&f);
	tevents_free(&f);
}

/* 'vcpu': an implicit first argument, void *__cpu, as QEMU adds it. */
static void
test_tevents_vcpu_property_adds_the_cpu_argument(void **state)
{
	struct tevents_file f;
	const struct tevents_event *ev;
	char buf[256];

	(void)state;
	parse_ok("vcpu guest_cpu_enter(void)\n"
	    "disable vcpu x(uint64_t num, const char *s) \"num %\" PRIu64 "
	    "\" %s\"\n"
	    "vcpu disable y(int a) \"%d\"\n", &f);
	assert_int_equal(f.nevents, 3);
	ev = &f.events[0];
	assert_int_equal(ev->vcpu, 1);
	assert_int_equal(ev->nargs, 1);
	assert_string_equal(ev->args[0].type, "void *");
	assert_string_equal(ev->args[0].name, TEVENTS_VCPU_ARG);
	assert_int_equal(ev->args[0].cls, TEVENTS_POINTER);
	assert_string_equal(ev->fmt, "");
	tevents_format(ev, buf, sizeof(buf));
	assert_string_equal(buf, "vcpu guest_cpu_enter(void)\n");
	ev = &f.events[1];
	assert_int_equal(ev->disabled, 1);
	assert_int_equal(ev->nargs, 3);
	assert_string_equal(ev->args[1].name, "num");
	assert_int_equal(ev->args[2].cls, TEVENTS_STRING);
	tevents_format(ev, buf, sizeof(buf));
	assert_string_equal(buf, "disable vcpu x(uint64_t num, const char *s) "
	    "\"num %\" PRIu64 \" %s\"\n");
	assert_int_equal(f.events[2].disabled, 1);
	assert_int_equal(f.events[2].vcpu, 1);
	assert_round_trip(&f);
	tevents_free(&f);

	/* The implicit argument counts in the record, not in the limit. */
	ev = one_event("vcpu guest_user_syscall(uint64_t num, uint64_t arg1, "
	    "uint64_t arg2, uint64_t arg3, uint64_t arg4, uint64_t arg5, "
	    "uint64_t arg6, uint64_t arg7, uint64_t arg8, uint64_t arg9) "
	    "\"%\" PRIx64\n", &f);
	assert_int_equal(ev->nargs, TEVENTS_ARGS_MAX);
	assert_round_trip(&f);
	tevents_free(&f);
	parse_fails("vcpu f(int __cpu) \"\"\n", "t:1:12: ", "duplicate "
	    "argument name '__cpu' (the vcpu property adds an argument of "
	    "that name)");
}

/* The format is optional, as in QEMU's 'vcpu guest_cpu_enter(void)'. */
static void
test_tevents_format_is_optional(void **state)
{
	struct tevents_file f;
	char buf[64];

	(void)state;
	parse_ok("a(void)\nb(int x)   \r\nc(void) \"\"\n", &f);
	assert_int_equal(f.nevents, 3);
	assert_string_equal(f.events[0].fmt, "");
	assert_string_equal(f.events[1].fmt, "");
	assert_string_equal(f.events[2].fmt, "\"\"");
	tevents_format(&f.events[1], buf, sizeof(buf));
	assert_string_equal(buf, "b(int x)\n");
	tevents_format(&f.events[2], buf, sizeof(buf));
	assert_string_equal(buf, "c(void) \"\"\n");
	assert_round_trip(&f);
	tevents_free(&f);
}

/* QEMU's translation-time and execution-time formats: "a", "b". */
static void
test_tevents_accepts_two_formats(void **state)
{
	struct tevents_file f;
	const struct tevents_event *ev;
	char buf[256];

	(void)state;
	ev = one_event("mem(uint64_t vaddr, uint16_t info) \"info=%d\", "
	    "\"vaddr=0x%016\"PRIx64\" info=%d\"\n", &f);
	assert_string_equal(ev->fmt_trans, "\"info=%d\"");
	assert_string_equal(ev->fmt, "\"vaddr=0x%016\" PRIx64 \" info=%d\"");
	tevents_format(ev, buf, sizeof(buf));
	assert_string_equal(buf, "mem(uint64_t vaddr, uint16_t info) "
	    "\"info=%d\", \"vaddr=0x%016\" PRIx64 \" info=%d\"\n");
	assert_round_trip(&f);
	tevents_free(&f);

	/* Spaces around the comma; a comma inside a literal is text. */
	ev = one_event("m(int a) \"x, y\"  ,\t\"%d, %d\" \"!\"\n", &f);
	assert_string_equal(ev->fmt_trans, "\"x, y\"");
	assert_string_equal(ev->fmt, "\"%d, %d\" \"!\"");
	tevents_free(&f);
	ev = one_event("m(int a) \"x, y %d\"\n", &f);
	assert_null(ev->fmt_trans);
	tevents_free(&f);
}

static void
test_tevents_accepts_zero_argument_events(void **state)
{
	struct tevents_file f;
	char buf[128];

	(void)state;
	parse_ok("b(void) \"nothing\"\nc( void ) \"\"\nd(\tvoid) \"x\"\n", &f);
	assert_int_equal(f.nevents, 3);
	assert_int_equal(f.events[0].nargs, 0);
	assert_int_equal(f.events[1].nargs, 0);
	assert_int_equal(f.events[2].nargs, 0);
	tevents_format(&f.events[0], buf, sizeof(buf));
	assert_string_equal(buf, "b(void) \"nothing\"\n");
	assert_round_trip(&f);
	tevents_free(&f);
}

static void
test_tevents_format_round_trips(void **state)
{
	struct tevents_file f;
	char buf[256];

	(void)state;
	parse_ok("# header\n"
	    "disable   dma_map( void*dev ,uint64_t  addr,size_t len ,bool "
	    "write )  \"dev %p addr 0x%\"PRIx64\" len %zu w %d\"\n"
	    "str(const char*a,char *b, char const * c) \"%s %s %s\"\n"
	    "mix(int8_t a, unsigned long long b, uint64_t c, void **d) \"x\"\n"
	    "z(void) \"\"\n", &f);
	assert_int_equal(f.nevents, 4);
	tevents_format(&f.events[0], buf, sizeof(buf));
	assert_string_equal(buf, "disable dma_map(void *dev, uint64_t addr, "
	    "size_t len, bool write) \"dev %p addr 0x%\" PRIx64 \" len %zu "
	    "w %d\"\n");
	tevents_format(&f.events[1], buf, sizeof(buf));
	assert_string_equal(buf, "str(const char *a, char *b, "
	    "char const *c) \"%s %s %s\"\n");
	assert_round_trip(&f);
	tevents_free(&f);
}

static void
test_tevents_format_truncates_like_snprintf(void **state)
{
	struct tevents_file f;
	char buf[8];
	int n;

	(void)state;
	one_event("event(int a) \"%d\"\n", &f);
	n = tevents_format(&f.events[0], NULL, 0);
	assert_int_equal(n, (int)strlen("event(int a) \"%d\"\n"));
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(tevents_format(&f.events[0], buf, sizeof(buf)), n);
	assert_string_equal(buf, "event(i");
	assert_int_equal(tevents_format(&f.events[0], buf, 1), n);
	assert_string_equal(buf, "");
	tevents_free(&f);
}

static void
test_tevents_accepts_names_and_lengths_at_the_limits(void **state)
{
	struct tevents_file f;
	char name[TEVENTS_NAME_MAX + 1], text[8192];
	size_t n;
	int i;

	(void)state;
	memset(name, 'n', TEVENTS_NAME_MAX);
	name[TEVENTS_NAME_MAX] = '\0';
	/* 10 strings with 127-byte names, a 1023-byte format. */
	n = (size_t)snprintf(text, sizeof(text), "%s(", name);
	for (i = 0; i < TEVENTS_DECL_ARGS_MAX; i++) {
		name[0] = (char)('a' + i % 26);
		name[1] = (char)('a' + i / 26);
		n += (size_t)snprintf(text + n, sizeof(text) - n,
		    "%sconst char *%s", i > 0 ? ", " : "", name);
	}
	n += (size_t)snprintf(text + n, sizeof(text) - n, ") \"");
	memset(text + n, 'f', TEVENTS_FMT_MAX - 2);
	n += TEVENTS_FMT_MAX - 2;
	memcpy(text + n, "\"\n", 3);
	one_event(text, &f);
	assert_int_equal(f.events[0].nargs, TEVENTS_DECL_ARGS_MAX);
	assert_int_equal(strlen(f.events[0].name), TEVENTS_NAME_MAX);
	assert_int_equal(strlen(f.events[0].fmt), TEVENTS_FMT_MAX);
	assert_round_trip(&f);
	tevents_free(&f);
}

/* Thousands of events: hashing, growth, ids in order. */
static void
test_tevents_parses_many_events(void **state)
{
	struct tevents_file f;
	char *text, err[256];
	size_t n = 0, i, count = 50000;

	(void)state;
	text = malloc(count * 64);
	assert_non_null(text);
	for (i = 0; i < count; i++)
		n += (size_t)sprintf(text + n, "%sev_%zu(int a, const char *s)"
		    " \"%%d %%s\"\n", i % 7 == 0 ? "disable " : "", i);
	assert_int_equal(tevents_parse(text, n, "t", &f, err, sizeof(err)),
	    0);
	assert_int_equal(f.nevents, count);
	assert_string_equal(f.events[12345].name, "ev_12345");
	assert_int_equal(f.events[12345].line, 12346);
	assert_int_equal(f.events[14].disabled, 1);
	tevents_free(&f);
	free(text);
}

static void
test_tevents_rejects_more_than_max_events(void **state)
{
	char *text, where[64];
	size_t n = 0, i, count = TEVENTS_EVENTS_MAX + 1;

	(void)state;
	text = malloc(count * 24);
	assert_non_null(text);
	for (i = 0; i < count; i++)
		n += (size_t)sprintf(text + n, "e%zu(void)\n", i);
	snprintf(where, sizeof(where), "t:%zu:1: ", count);
	parse_fails_n(text, n, where, "too many events (max 65536)");
	free(text);
}

/* ---- invalid input --------------------------------------------------- */

static void
test_tevents_rejects_missing_paren(void **state)
{
	(void)state;
	parse_fails("ok(void) \"\"\nfoo(int a, int b \"x\"\n", "t:2:18: ",
	    "expected ')' after argument list, found '\"'");
	parse_fails("foo(int a, int b", "t:1:17: ",
	    "expected ')' after argument list");
	parse_fails("foo(int a,\n", "t:1:11: ",
	    "expected ')' after argument list");
	parse_fails("foo int a) \"x\"", "t:1:1: ",
	    "unknown property 'foo'");
	parse_fails("foo \"x\"", "t:1:5: ",
	    "expected '(' after event name 'foo', found '\"'");
	parse_fails("foo", "t:1:4: ",
	    "expected '(' after event name 'foo', found end of line");
	parse_fails("foo(int a)) \"x\"", "t:1:11: ",
	    "expected a format string after ')', found ')'");
}

/* QEMU's tracetool matches name( with nothing between. */
static void
test_tevents_rejects_space_before_paren(void **state)
{
	(void)state;
	parse_fails("foo (int a) \"x\"\n", "t:1:4: ", "space between the "
	    "event name and '(' (QEMU's tracetool refuses it): write 'foo('");
	parse_fails("disable bar\t(void)\n", "t:1:12: ", "write 'bar('");
}

static void
test_tevents_rejects_bad_argument_lists(void **state)
{
	(void)state;
	parse_fails("f() \"\"\n", "t:1:2: ", "empty argument list: write "
	    "'f(void)' for an event without arguments");
	parse_fails("f(  ) \"x\"\n", "t:1:2: ", "empty argument list");
	parse_fails("f(int a,) \"\"", "t:1:9: ", "expected an argument "
	    "before ')'");
	parse_fails("f(, int a) \"\"", "t:1:3: ", "expected an argument "
	    "before ','");
	parse_fails("f(void, int a) \"\"", "t:1:3: ", "'void' must be the "
	    "only parameter");
	parse_fails("f(int a, void) \"\"", "t:1:10: ", "'void' must be the "
	    "only parameter");
	parse_fails("f(int) \"\"", "t:1:3: ", "argument of type 'int' has "
	    "no name");
	parse_fails("f(uint64_t) \"\"", "t:1:3: ", "argument of type "
	    "'uint64_t' has no name");
	parse_fails("f(x) \"\"", "t:1:3: ", "argument 'x' has no type");
	parse_fails("f(const x) \"\"", "t:1:3: ", "argument 'x' has no type");
	parse_fails("f(char *) \"\"", "t:1:9: ", "missing argument name after "
	    "type 'char *'");
	parse_fails("f(*p) \"\"", "t:1:3: ", "expected a type before '*'");
	parse_fails("f(int a[4]) \"\"", "t:1:8: ", "unexpected '[' in "
	    "argument list");
	parse_fails("f(void (*cb)(void)) \"\"", "t:1:8: ", "unexpected '(' in "
	    "argument list");
	parse_fails("f(int a = 3) \"\"", "t:1:9: ", "unexpected '='");
	parse_fails("f(char * foo bar) \"\"", "t:1:10: ", "unexpected 'foo' "
	    "after '*' in argument type");
}

static void
test_tevents_rejects_bad_identifiers(void **state)
{
	(void)state;
	parse_fails("9foo(int a) \"\"", "t:1:1: ", "invalid event name '9foo'");
	parse_fails("foo(int 9a) \"\"", "t:1:9: ", "invalid argument name "
	    "'9a'");
	parse_fails("foo-bar(int a) \"\"", "t:1:4: ", "expected '(' after "
	    "event name 'foo', found '-'");
	parse_fails("(int a) \"\"", "t:1:1: ", "expected an event name, "
	    "found '('");
	parse_fails("f(int int) \"\"", "t:1:7: ", "argument name 'int' is a "
	    "C keyword: rename the argument");
	parse_fails("f(int bool) \"\"", "t:1:7: ", "argument name 'bool' is a "
	    "C keyword");
}

/* Names C++ or the generated code would misread are not refused. */
static void
test_tevents_accepts_names_the_generator_renames(void **state)
{
	struct tevents_file f;

	(void)state;
	parse_ok("poll_shrink(void *ctx, int64_t old, int64_t new) \"\"\n"
	    "g(int typename, int export, int traced_sz, int NULL, "
	    "int uint64_t) \"\"\n", &f);
	assert_int_equal(f.nevents, 2);
	assert_string_equal(f.events[0].args[2].name, "new");
	assert_string_equal(f.events[1].args[3].name, "NULL");
	tevents_free(&f);
}

/* Type words tracegen does not know fail here, not in the compiler. */
static void
test_tevents_rejects_unknown_type_words(void **state)
{
	(void)state;
	parse_fails("f(unit32_t x) \"\"\n", "t:1:3: ", "unknown type "
	    "'unit32_t': did you mean 'uint32_t'?");
	parse_fails("f(const uint46_t x) \"\"\n", "t:1:9: ", "did you mean "
	    "'uint16_t'?");
	parse_fails("f(sise_t x) \"\"\n", "t:1:3: ", "did you mean 'size_t'?");
	parse_fails("f(usigned x) \"\"\n", "t:1:3: ", "did you mean "
	    "'unsigned'?");
	parse_fails("f(int x, hwaddr a) \"\"\n", "t:1:10: ", "unknown type "
	    "'hwaddr': an argument is a C integer type (int, uint64_t, "
	    "size_t...; see trace-events(5)), bool, 'const char *' or a "
	    "pointer, declared as 'void *'");
	parse_fails("f(Foo *p) \"\"\n", "t:1:3: ", "unknown type 'Foo'");
	parse_fails("f(const MemTxResult r) \"\"\n", "t:1:9: ", "unknown type "
	    "'MemTxResult'");
	parse_fails("f(gint x) \"\"\n", "t:1:3: ", "unknown type 'gint'");
}

static void
test_tevents_rejects_unsupported_types(void **state)
{
	(void)state;
	parse_fails("f(struct foo s) \"\"", "t:1:3: ", "argument type 'struct "
	    "foo' is not allowed (QEMU's tracetool refuses it): pass a "
	    "pointer to it, declared as 'void *'");
	parse_fails("f(struct foo *s) \"\"", "t:1:3: ", "argument type 'struct "
	    "foo *' is not allowed (QEMU's tracetool refuses it): declare "
	    "the pointer as 'void *'");
	parse_fails("f(union u x) \"\"", "t:1:3: ", "'union u' is not allowed");
	parse_fails("f(enum color c) \"\"", "t:1:3: ", "argument type 'enum "
	    "color' is not allowed (QEMU's tracetool refuses it): pass the "
	    "value as an integer type such as 'int'");
	parse_fails("f(struct x) \"\"", "t:1:3: ", "expected a tag after "
	    "'struct'");
	parse_fails("f(struct *x) \"\"", "t:1:3: ", "expected a tag after "
	    "'struct'");
	parse_fails("f(double d) \"\"", "t:1:3: ", "argument type 'double' "
	    "is not supported");
	parse_fails("f(long double d) \"\"", "t:1:3: ", "'long double' is not "
	    "supported");
	parse_fails("f(float d) \"\"", "t:1:3: ", "'float' is not supported");
	parse_fails("f(int a, void v) \"\"", "t:1:10: ", "argument 'v' cannot "
	    "have type 'void'");
	parse_fails("f(volatile int a) \"\"", "t:1:3: ", "'volatile' is not "
	    "allowed in an argument type (QEMU's tracetool refuses it): "
	    "remove it");
	parse_fails("f(char *restrict s) \"\"", "t:1:9: ", "unexpected "
	    "'restrict' after '*'");
	parse_fails("f(const char *const s) \"\"", "t:1:15: ", "'const' after "
	    "'*' is not allowed (QEMU's tracetool refuses it): remove it, "
	    "as in 'const char *s'");
	parse_fails("f(unsigned hwaddr a) \"\"", "t:1:3: ", "invalid type "
	    "'unsigned hwaddr'");
	parse_fails("f(unsigned size_t a) \"\"", "t:1:3: ", "invalid type");
	parse_fails("f(signed unsigned a) \"\"", "t:1:3: ", "invalid type");
	parse_fails("f(long long long a) \"\"", "t:1:3: ", "invalid type");
	parse_fails("f(short long a) \"\"", "t:1:3: ", "invalid type");
	parse_fails("f(char int a) \"\"", "t:1:3: ", "invalid type");
	parse_fails("f(foo bar a) \"\"", "t:1:3: ", "invalid type 'foo bar'");
	parse_fails("f(static int a) \"\"", "t:1:3: ", "invalid type");
	parse_fails("f(struct int *a) \"\"", "t:1:3: ", "invalid type");
	parse_fails("f(const const int a) \"\"", "t:1:9: ",
	    "duplicate 'const'");
}

static void
test_tevents_rejects_duplicate_event(void **state)
{
	(void)state;
	parse_fails("x(int a) \"\"\n\n# c\ny(void) \"\"\n  x(void) \"\"\n",
	    "t:5:3: ", "duplicate event name 'x' (first declared on line 1)");
	parse_fails("read(void) \"\"\nREAD(void) \"\"\n", "t:2:1: ",
	    "event name 'READ' differs only in case from 'read' (line 1)");
	parse_fails("dma(void) \"\"\ndma_enabled(void) \"\"\n", "t:2:1: ",
	    "clashes with trace_dma_enabled() of event 'dma' (line 1)");
	parse_fails("dma_enabled(void) \"\"\ndma(void) \"\"\n", "t:2:1: ",
	    "makes trace_dma_enabled() clash with event 'dma_enabled'");
	parse_fails("x(void) \"\"\nDMA_Enabled(void) \"\"\ndma(void) \"\"\n",
	    "t:3:1: ", "event name 'dma' makes trace_dma_enabled() clash "
	    "with event 'DMA_Enabled' (line 2)");
}

/* Clashes are reported in file order, also before a later error. */
static void
test_tevents_reports_the_first_clash_in_the_file(void **state)
{
	(void)state;
	parse_fails("a(void) \"\"\nb(void) \"\"\nb(void) \"\"\na(void) \"\"\n",
	    "t:3:1: ", "duplicate event name 'b' (first declared on line 2)");
	parse_fails("x(void) \"\"\nx(void) \"\"\nx(void) \"\"\n", "t:2:1: ",
	    "duplicate event name 'x' (first declared on line 1)");
	parse_fails("x(void) \"\"\n y(void) \"\"\nx_enabled(void) \"\"\n"
	    "disable  y(void) \"\"\n", "t:3:1: ", "clashes with "
	    "trace_x_enabled()");
	parse_fails("x(void) \"\"\ny(void) \"\"\ndisable  y(void) \"\"\n"
	    "x_enabled(void) \"\"\n", "t:3:10: ", "duplicate event name 'y' "
	    "(first declared on line 2)");
	/* A clash before a syntax error wins, not one after it. */
	parse_fails("x(void) \"\"\nx(void) \"\"\nbroken(\n", "t:2:1: ",
	    "duplicate event name 'x'");
	parse_fails("x(void) \"\"\nbroken(\nx(void) \"\"\n", "t:2:8: ",
	    "expected ')' after argument list");
	/* ... and before a missing final newline. */
	parse_fails("x(void)\nx(void)", "t:2:1: ", "duplicate event name");
}

/* Names chosen to collide in any hash still parse quickly. */
static void
test_tevents_checks_names_in_n_log_n(void **state)
{
	struct tevents_file f;
	char *text, err[256];
	size_t n = 0, i, count = TEVENTS_EVENTS_MAX;

	(void)state;
	text = malloc(count * 48);
	assert_non_null(text);
	/* Long shared prefixes: the worst case for comparisons. */
	for (i = 0; i < count; i++)
		n += (size_t)sprintf(text + n, "e_aaaaaaaaaaaaaaaaaaaaaaaaa_%zu"
		    "(void) \"\"\n", count - i);
	assert_int_equal(tevents_parse(text, n, "t", &f, err, sizeof(err)),
	    0);
	assert_int_equal(f.nevents, count);
	tevents_free(&f);
	free(text);
}

static void
test_tevents_rejects_duplicate_argument(void **state)
{
	(void)state;
	parse_fails("f(int a, int b, const char *a) \"\"", "t:1:29: ",
	    "duplicate argument name 'a'");
}

/* At most 10 arguments, as in tracetool; the 11th is refused. */
static void
test_tevents_rejects_too_many_arguments(void **state)
{
	struct tevents_file f;
	char text[1024];
	size_t n;
	int i;

	(void)state;
	n = (size_t)snprintf(text, sizeof(text), "f(");
	for (i = 0; i < TEVENTS_DECL_ARGS_MAX; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
		    "%sint a%02d", i > 0 ? ", " : "", i);
	snprintf(text + n, sizeof(text) - n, ") \"\"\n");
	one_event(text, &f);
	assert_int_equal(f.events[0].nargs, 10);
	tevents_free(&f);
	snprintf(text + n, sizeof(text) - n, ", int a10) \"\"\n");
	/* The 11th argument starts at 3 + 10 * 9. */
	parse_fails(text, "t:1:93: ", "too many arguments (max 10, as in "
	    "QEMU's tracetool): split the event in two");
}

static void
test_tevents_rejects_bad_properties(void **state)
{
	(void)state;
	parse_fails("foo bar(int a) \"\"", "t:1:1: ", "unknown property "
	    "'foo': the properties are 'disable' and 'vcpu'");
	parse_fails("disable  tcg bar(int a) \"\"", "t:1:10: ", "unknown "
	    "property 'tcg'");
	parse_fails("Disable bar(int a) \"\"", "t:1:1: ", "unknown property");
}

static void
test_tevents_rejects_bad_formats(void **state)
{
	(void)state;
	parse_fails("f(int a) PRIx64 \"x\"", "t:1:10: ", "expected a format "
	    "string after ')', found 'P'; quote the format or remove what "
	    "follows ')'");
	parse_fails("f(int a) junk\n", "t:1:10: ", "expected a format "
	    "string after ')', found 'j'");
	parse_fails("f(int a) \"x\" 42", "t:1:14: ", "unexpected number in "
	    "format");
	parse_fails("f(int a) \"x\" # comment", "t:1:14: ", "unexpected '#' "
	    "in format");
	parse_fails("f(int a) \"x\" TARGET_FMT_lx \"y\"", "t:1:14: ", "unknown "
	    "macro 'TARGET_FMT_lx' in format: only the PRI* macros of "
	    "<inttypes.h> (PRIx64...) may join the string literals");
	parse_fails("f(int a) \"%\" PRIy64", "t:1:14: ", "unknown macro "
	    "'PRIy64'");
	parse_fails("f(int a) \"%\" PRId128", "t:1:14: ", "unknown macro");
	parse_fails("f(int a) \"%\" SCNd64", "t:1:14: ", "unknown macro");
	/* Two formats at most, each starting with a literal. */
	parse_fails("f(int a) \"x\",", "t:1:14: ", "expected a second format "
	    "string after ',', found end of line");
	parse_fails("f(int a) \"x\", PRIx64", "t:1:15: ", "expected a second "
	    "format string after ','");
	parse_fails("f(int a) \"x\", \"y\", \"z\"", "t:1:18: ", "more than two "
	    "formats");
}

/* %m anywhere, and a newline at the end of the format, are refused. */
static void
test_tevents_rejects_errno_and_newline_formats(void **state)
{
	struct tevents_file f;

	(void)state;
	parse_fails("f(int a) \"failed: %m\"\n", "t:1:19: ", "format uses "
	    "'%m', which prints errno when the event is printed, not when it "
	    "happened (QEMU's tracetool refuses it): pass the error as an "
	    "argument");
	parse_fails("f(int a) \"%-10m\"\n", "t:1:11: ", "'%m'");
	parse_fails("f(int a) \"a %\" \"m\"\n", "t:1:13: ", "'%m'");
	parse_fails("f(int a) \"%m\", \"x\"\n", "t:1:11: ", "'%m'");
	parse_fails("f(int a) \"x\", \"%d %m\"\n", "t:1:19: ", "'%m'");
	parse_fails("f(int a) \"\\045m\"\n", "t:1:11: ", "'%m'");
	parse_fails("f(int a) \"a=%d\\n\"\n", "t:1:15: ", "format ends with a "
	    "newline (QEMU's tracetool refuses it): remove the '\\n'");
	parse_fails("f(int a) \"a=%d\" \"\\n\"\n", "t:1:18: ", "ends with a "
	    "newline");
	parse_fails("f(int a) \"x\\012\"\n", "t:1:12: ", "ends with a "
	    "newline");
	parse_fails("f(int a) \"x\", \"y\\n\"\n", "t:1:17: ", "ends with a "
	    "newline");
	/* Not a %m, not a final newline. */
	parse_ok("a(int a) \"100%% m %%m\"\nb(int a) \"x\\n y\"\n"
	    "c(int a) \"\\\\n\"\nd(int a) \"x\\n\", \"y\"\n"
	    "e(int a) \"%\" PRIx8 \"m\"\n", &f);
	assert_int_equal(f.nevents, 5);
	tevents_free(&f);
}

/* QEMU's tracetool refuses a file whose last line has no newline. */
static void
test_tevents_rejects_a_missing_final_newline(void **state)
{
	(void)state;
	parse_fails("a(void)\nb(int x) \"%d\"", "t:2:14: ", "no newline at "
	    "the end of the file (QEMU's tracetool refuses it): add one");
	parse_fails("a(void)\n# comment", "t:2:10: ", "no newline");
	parse_fails("a(void)\n  ", "t:2:3: ", "no newline");
	parse_fails("a(void)\r", "t:1:9: ", "no newline");
}

static void
test_tevents_rejects_unterminated_string(void **state)
{
	(void)state;
	parse_fails("ok(void) \"\"\nf(int a) \"abc\n", "t:2:10: ",
	    "unterminated string literal");
	parse_fails("f(int a) \"abc\\\"", "t:1:10: ",
	    "unterminated string literal");
	parse_fails("f(int a) \"abc\\", "t:1:10: ",
	    "unterminated string literal");
	parse_fails("f(int a) \"x\" \"", "t:1:14: ",
	    "unterminated string literal");
}

static void
test_tevents_rejects_garbage_bytes(void **state)
{
	(void)state;
	parse_fails("\xff\xfe\xfd", "t:1:1: ", "expected an event name, found "
	    "byte 0xff");
	parse_fails("f(int\x01 a) \"\"", "t:1:6: ", "unexpected byte 0x01");
	parse_fails("f(int a) \"a\x01\"", "t:1:12: ", "control character "
	    "(byte 0x01) in string literal");
	parse_fails("f(int a) \"a\x7f\"", "t:1:12: ", "control character");
	parse_fails("f(int a) \"a\rb\"", "t:1:12: ", "control character "
	    "(byte 0x0d)");
	parse_fails("f(int \xc3\xa9) \"\"", "t:1:7: ", "unexpected byte 0xc3");
	/* Invalid UTF-8: lone continuation, overlong, surrogate, cut. */
	parse_fails("f(void) \"a\x80\"", "t:1:11: ", "invalid UTF-8");
	parse_fails("f(void) \"a\xc0\xaf\"", "t:1:11: ", "invalid UTF-8");
	parse_fails("f(void) \"a\xed\xa0\x80\"", "t:1:11: ", "invalid UTF-8");
	parse_fails("f(void) \"a\xf4\x90\x80\x80\"", "t:1:11: ",
	    "invalid UTF-8");
	parse_fails("f(void) \"a\xe2\x82", "t:1:11: ", "invalid UTF-8");
}

static void
test_tevents_rejects_nul_bytes(void **state)
{
	static const char t1[] = "ok(void)\nf(int a) \"x\0y\"\n";
	static const char t2[] = "# comment \0 with NUL\n";
	static const char t3[] = "\0";

	(void)state;
	parse_fails_n(t1, sizeof(t1) - 1, "t:2:12: ", "NUL byte in input");
	parse_fails_n(t2, sizeof(t2) - 1, "t:1:11: ", "NUL byte in input");
	parse_fails_n(t3, sizeof(t3) - 1, "t:1:1: ", "NUL byte in input");
}

static void
test_tevents_rejects_overlong_names(void **state)
{
	char name[TEVENTS_NAME_MAX + 2], text[4096];

	(void)state;
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';

	snprintf(text, sizeof(text), "%s(int x) \"\"", name);
	parse_fails(text, "t:1:1: ", "event name too long (128 bytes, max "
	    "127)");
	snprintf(text, sizeof(text), "f(int %s) \"\"", name);
	parse_fails(text, "t:1:7: ", "argument name too long (128 bytes, "
	    "max 127)");
	snprintf(text, sizeof(text), "f(%s x) \"\"", name);
	parse_fails(text, "t:1:3: ", "argument type too long (max 127 bytes)");
	snprintf(text, sizeof(text), "f(const %s *x) \"\"", name);
	parse_fails(text, "t:1:3: ", "argument type too long");
	/* Stars alone can make a type too long. */
	memset(name, '*', sizeof(name) - 1);
	snprintf(text, sizeof(text), "f(void %s x) \"\"", name);
	parse_fails(text, "t:1:3: ", "argument type too long");
	/* A 1024-byte format. */
	memset(text, 0, sizeof(text));
	memcpy(text, "f(void) \"", 9);
	memset(text + 9, 'f', TEVENTS_FMT_MAX - 1);
	memcpy(text + 9 + TEVENTS_FMT_MAX - 1, "\"", 2);
	parse_fails(text, "t:1:9: ", "format too long (max 1023 bytes)");
	/* Split over several literals. */
	memset(text, 0, sizeof(text));
	memcpy(text, "f(void) \"", 9);
	memset(text + 9, 'f', 600);
	memcpy(text + 609, "\" \"", 3);
	memset(text + 612, 'g', 600);
	memcpy(text + 1212, "\"", 2);
	parse_fails(text, "t:1:612: ", "format too long");
}

static void
test_tevents_reports_errors_in_small_buffers(void **state)
{
	struct tevents_file f;
	char err[8];

	(void)state;
	memset(err, 'x', sizeof(err));
	assert_int_equal(tevents_parse("f(", 2, "file", &f, err, sizeof(err)),
	    -1);
	assert_string_equal(err, "file:1:");
	assert_int_equal(tevents_parse("f(", 2, "file", &f, NULL, 0), -1);
	assert_int_equal(tevents_parse("f(", 2, NULL, &f, err, 0), -1);
	assert_int_equal(tevents_parse(NULL, 0, NULL, &f, NULL, 0), 0);
	assert_int_equal(f.nevents, 0);
	tevents_free(&f);
	tevents_free(NULL);
}

/* Error messages stay short whatever the input holds. */
static void
test_tevents_shortens_long_words_in_errors(void **state)
{
	char text[2048], err[512];
	struct tevents_file f;

	(void)state;
	memset(text, 'p', 1000);
	snprintf(text + 1000, sizeof(text) - 1000, " f(void) \"\"");
	assert_int_equal(tevents_parse(text, strlen(text), "t", &f, err,
	    sizeof(err)), -1);
	assert_true(strlen(err) < 120);
	assert_non_null(strstr(err, "unknown property 'pppp"));
	assert_non_null(strstr(err, "...'"));
}

/* xorshift: the same sequence on every run. */
static uint32_t
rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/*
 * Hostile input: fragments of valid syntax spliced with random bytes.
 * Every result must be a clean success (that round-trips) or a clean
 * error naming the file; ASan and UBSan watch the rest.
 */
static void
test_tevents_survives_random_input(void **state)
{
	static const char *const frags[] = {
		"disable ", "ev", "(", ")", ", ", "int ", "a", "b", "const ",
		"char ", "*", "\"fmt %d\"", " PRIx64 ", "\"", "\\", "\n",
		"# c\n", "void", "unsigned ", "long ", "struct s ", "\t",
		"\r\n", "x_enabled", "_", "9", "\xc3\xa9", "\xff", "\0",
		"tcg ", "bool ", "uint64_t ", "e2(void) \"\"\n",
	};
	struct tevents_file f;
	char text[512], err[256];
	uint32_t seed = 0x2545f491;
	size_t len, k;
	int i, ok = 0;

	(void)state;
	for (i = 0; i < 20000; i++) {
		len = 0;
		while (len < sizeof(text) - 32 && rnd(&seed) % 24 != 0) {
			if (rnd(&seed) % 4 == 0) {
				text[len++] = (char)rnd(&seed);
				continue;
			}
			k = rnd(&seed) % (sizeof(frags) / sizeof(frags[0]));
			/* "\0" is one NUL byte. */
			if (frags[k][0] == '\0')
				text[len++] = '\0';
			else {
				memcpy(text + len, frags[k], strlen(frags[k]));
				len += strlen(frags[k]);
			}
		}
		err[0] = '\0';
		if (tevents_parse(text, len, "t", &f, err, sizeof(err)) == 0) {
			assert_round_trip(&f);
			tevents_free(&f);
			ok++;
		} else {
			assert_true(strncmp(err, "t:", 2) == 0);
			assert_null(f.events);
		}
	}
	/* The generator does produce valid files now and then. */
	assert_true(ok > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tevents_classifies_every_type),
		cmocka_unit_test(test_tevents_parses_qemu_style_event),
		cmocka_unit_test(test_tevents_keeps_format_tokens_and_escapes),
		cmocka_unit_test(test_tevents_accepts_every_pri_macro),
		cmocka_unit_test(test_tevents_skips_comments_and_blank_lines),
		cmocka_unit_test(test_tevents_disable_property_turns_event_off),
		cmocka_unit_test(
		    test_tevents_vcpu_property_adds_the_cpu_argument),
		cmocka_unit_test(test_tevents_format_is_optional),
		cmocka_unit_test(test_tevents_accepts_two_formats),
		cmocka_unit_test(test_tevents_accepts_zero_argument_events),
		cmocka_unit_test(test_tevents_format_round_trips),
		cmocka_unit_test(test_tevents_format_truncates_like_snprintf),
		cmocka_unit_test(
		    test_tevents_accepts_names_and_lengths_at_the_limits),
		cmocka_unit_test(test_tevents_parses_many_events),
		cmocka_unit_test(test_tevents_rejects_more_than_max_events),
		cmocka_unit_test(test_tevents_rejects_missing_paren),
		cmocka_unit_test(test_tevents_rejects_space_before_paren),
		cmocka_unit_test(test_tevents_rejects_bad_argument_lists),
		cmocka_unit_test(test_tevents_rejects_bad_identifiers),
		cmocka_unit_test(
		    test_tevents_accepts_names_the_generator_renames),
		cmocka_unit_test(test_tevents_rejects_unknown_type_words),
		cmocka_unit_test(test_tevents_rejects_unsupported_types),
		cmocka_unit_test(test_tevents_rejects_duplicate_event),
		cmocka_unit_test(
		    test_tevents_reports_the_first_clash_in_the_file),
		cmocka_unit_test(test_tevents_checks_names_in_n_log_n),
		cmocka_unit_test(test_tevents_rejects_duplicate_argument),
		cmocka_unit_test(test_tevents_rejects_too_many_arguments),
		cmocka_unit_test(test_tevents_rejects_bad_properties),
		cmocka_unit_test(test_tevents_rejects_bad_formats),
		cmocka_unit_test(
		    test_tevents_rejects_errno_and_newline_formats),
		cmocka_unit_test(test_tevents_rejects_a_missing_final_newline),
		cmocka_unit_test(test_tevents_rejects_unterminated_string),
		cmocka_unit_test(test_tevents_rejects_garbage_bytes),
		cmocka_unit_test(test_tevents_rejects_nul_bytes),
		cmocka_unit_test(test_tevents_rejects_overlong_names),
		cmocka_unit_test(test_tevents_reports_errors_in_small_buffers),
		cmocka_unit_test(test_tevents_shortens_long_words_in_errors),
		cmocka_unit_test(test_tevents_survives_random_input),
	};

	return cmocka_run_group_tests_name("tevents", tests, NULL, NULL);
}
