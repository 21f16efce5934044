/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of ctl/calls.c: function records named from a session's
 * functions/module-N files (written here, in a temporary directory) and
 * matched into calls per thread, with the steps in the order a viewer
 * draws them, when records were lost and when the trace ends with calls
 * still open.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctl/calls.h"
#include "ctl/reader.h"
#include "ctl/tracedir.h"

#define T_BASE	0x555500000000ull

static char t_dir[64];
static struct tracedir_decl t_decls[2];
static struct tracedir_class t_entry, t_exit, t_other;
static struct reader_session t_sess;
static struct reader_thread t_thr[2];

/* What the steps said, one line each: "O name level" or "C name level
 * end start..end self". */
static char t_log[4096];
static size_t t_len;

static int
t_step(void *arg, const struct call_step *s)
{
	(void)arg;
	if (s->how == CALL_OPEN)
		t_len += (size_t)snprintf(t_log + t_len, sizeof(t_log) - t_len,
		    "O %s %u\n", s->fn->name, s->level);
	else
		t_len += (size_t)snprintf(t_log + t_len, sizeof(t_log) - t_len,
		    "C %s %u %s %lld..%lld self %lld\n", s->fn->name, s->level,
		    s->end == CALL_RETURNED ? "ret" : s->end == CALL_NO_EXIT ?
		    "noexit" : "unfinished", (long long)s->start_ns,
		    (long long)s->end_ns, (long long)s->self_ns);
	return 0;
}

static int
t_setup(void **state)
{
	char path[128];
	FILE *f;

	(void)state;
	snprintf(t_dir, sizeof(t_dir), "/tmp/test_calls.XXXXXX");
	assert_non_null(mkdtemp(t_dir));
	snprintf(path, sizeof(path), "%s/functions", t_dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/functions/module-0", t_dir);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "traced-module 1\nindex 0\npath /usr/bin/app\n"
	    "base 0x%llx\nstart 0x%llx\nend 0x%llx\nbuild-id -\nfuncs 3\n",
	    T_BASE, T_BASE + 0x1000, T_BASE + 0x9000);
	fprintf(f, "1100 32 p main\n1200 16 p parse\n1300 16 p leaf\n");
	assert_int_equal(fclose(f), 0);

	t_decls[0].name = (char *)"addr";
	t_decls[0].shown = "addr";
	t_decls[1].name = (char *)"depth";
	t_decls[1].shown = "depth";
	t_entry.name = (char *)"traced:func_entry";
	t_exit.name = (char *)"traced:func_exit";
	t_other.name = (char *)"app:tick";
	t_sess.index = 0;
	t_sess.path = t_dir;
	t_sess.comm = "app";
	t_thr[0].index = 0;
	t_thr[0].sess = &t_sess;
	t_thr[0].tid = 10;
	t_thr[1].index = 1;
	t_thr[1].sess = &t_sess;
	t_thr[1].tid = 11;
	return 0;
}

static int
t_teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t_dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Feed one record: 'E' entry, 'X' exit, 'T' another event. */
static void
t_feed(struct calls *c, int thr, int64_t ns, char what, uint64_t off,
    uint64_t depth)
{
	struct tracedir_event ev;
	struct reader_item it;

	memset(&ev, 0, sizeof(ev));
	memset(&it, 0, sizeof(it));
	ev.cls = what == 'E' ? &t_entry : what == 'X' ? &t_exit : &t_other;
	if (what != 'T') {
		ev.nvalues = 2;
		ev.values[0].decl = &t_decls[0];
		ev.values[0].u = T_BASE + off;
		ev.values[1].decl = &t_decls[1];
		ev.values[1].u = depth;
	}
	it.kind = READER_EVENT;
	it.sess = &t_sess;
	it.thread = &t_thr[thr];
	it.ns = ns;
	it.ev = &ev;
	assert_int_equal(calls_feed(c, &it, t_step, NULL), 0);
}

static struct calls *
t_new(void)
{
	struct calls *c = calls_new(1, 2, NULL, NULL);

	assert_non_null(c);
	t_len = 0;
	t_log[0] = '\0';
	return c;
}

/* Names: object:function, wherever in the function; else by number. */
static void
test_calls_names(void **state)
{
	struct calls *c = t_new();
	const struct call_fn *a, *b;

	(void)state;
	a = calls_name(c, &t_sess, T_BASE + 0x1200);
	b = calls_name(c, &t_sess, T_BASE + 0x1204);	/* after endbr64 */
	assert_non_null(a);
	assert_string_equal(a->name, "app:parse");
	assert_ptr_equal(a, b);
	assert_string_equal(calls_name(c, &t_sess, T_BASE + 0x1400)->name,
	    "app+0x1400");
	assert_string_equal(calls_name(c, &t_sess, 0x1234)->name, "0x1234");
	assert_int_equal(calls_nfns(c), 3);
	assert_ptr_equal(calls_fn(c, a->id), a);
	calls_free(c);
}

/* Nested calls, self time, and another thread's calls apart. */
static void
test_calls_nested(void **state)
{
	struct calls *c = t_new();

	(void)state;
	t_feed(c, 0, 100, 'E', 0x1100, 0);	/* main */
	t_feed(c, 0, 110, 'E', 0x1200, 1);	/* parse */
	t_feed(c, 1, 115, 'E', 0x1300, 0);	/* leaf on thread 11 */
	t_feed(c, 0, 120, 'E', 0x1300, 2);	/* leaf */
	t_feed(c, 0, 130, 'X', 0x1300, 2);
	t_feed(c, 0, 150, 'X', 0x1200, 1);
	t_feed(c, 1, 160, 'X', 0x1300, 0);
	t_feed(c, 0, 200, 'X', 0x1100, 0);
	assert_string_equal(t_log,
	    "O app:main 0\n"
	    "O app:parse 1\n"
	    "O app:leaf 0\n"
	    "O app:leaf 2\n"
	    "C app:leaf 2 ret 120..130 self 10\n"
	    "C app:parse 1 ret 110..150 self 30\n"
	    "C app:leaf 0 ret 115..160 self 45\n"
	    "C app:main 0 ret 100..200 self 60\n");
	calls_free(c);
}

/*
 * Lost records: an exit further out closes the call inside whose exit
 * was lost; an entry at an open call's depth closes it; an exit whose
 * entry was never seen closes nothing; what is open at the end closes
 * at its thread's last record, whatever its kind.
 */
static void
test_calls_lost_and_unfinished(void **state)
{
	struct calls *c = t_new();

	(void)state;
	t_feed(c, 0, 100, 'E', 0x1100, 0);	/* main */
	t_feed(c, 0, 110, 'E', 0x1200, 1);	/* parse, exit lost */
	t_feed(c, 0, 120, 'E', 0x1300, 2);	/* leaf, exit lost */
	t_feed(c, 0, 140, 'E', 0x1200, 1);	/* parse again: closes both */
	t_feed(c, 0, 150, 'X', 0x1300, 5);	/* never entered */
	t_feed(c, 0, 160, 'X', 0x1100, 0);	/* main: closes parse */
	t_feed(c, 1, 170, 'E', 0x1100, 0);
	t_feed(c, 1, 190, 'T', 0, 0);		/* the thread's last record */
	assert_int_equal(calls_finish(c, t_step, NULL), 0);
	assert_string_equal(t_log,
	    "O app:main 0\n"
	    "O app:parse 1\n"
	    "O app:leaf 2\n"
	    "C app:leaf 2 noexit 120..140 self 20\n"
	    "C app:parse 1 noexit 110..140 self 10\n"
	    "O app:parse 1\n"
	    "C app:parse 1 noexit 140..160 self 20\n"
	    "C app:main 0 ret 100..160 self 10\n"
	    "O app:main 0\n"
	    "C app:main 0 unfinished 170..190 self 20\n");
	calls_free(c);
}

/*
 * A module file written after the first lookups (a library the program
 * loaded later, seen by print --follow) names its functions once
 * functions/ changed and a second has passed.
 */
static void
test_calls_module_written_later(void **state)
{
	struct calls *c = t_new();
	struct timespec ts = { 1, 100000000 };
	char path[128];
	FILE *f;

	(void)state;
	assert_string_equal(calls_name(c, &t_sess, T_BASE + 0x10100)->name,
	    "0x555500010100");
	snprintf(path, sizeof(path), "%s/functions/module-1", t_dir);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "traced-module 1\nindex 1\npath /usr/lib/libdyn.so\n"
	    "base 0x%llx\nstart 0x%llx\nend 0x%llx\nbuild-id -\nfuncs 1\n"
	    "100 64 p dyn_first\n", T_BASE + 0x10000, T_BASE + 0x10000,
	    T_BASE + 0x20000);
	assert_int_equal(fclose(f), 0);
	nanosleep(&ts, NULL);
	assert_string_equal(calls_name(c, &t_sess, T_BASE + 0x10100)->name,
	    "libdyn.so:dyn_first");
	/* The first module's names still hold. */
	assert_string_equal(calls_name(c, &t_sess, T_BASE + 0x1200)->name,
	    "app:parse");
	assert_int_equal(unlink(path), 0);
	calls_free(c);
}

/* A provider's own event named traced:func_entry, without the fields,
 * is not a call. */
static void
test_calls_not_a_record(void **state)
{
	struct calls *c = t_new();
	struct tracedir_event ev;
	struct reader_item it;
	uint64_t addr, depth;
	int exit_;

	(void)state;
	memset(&ev, 0, sizeof(ev));
	memset(&it, 0, sizeof(it));
	ev.cls = &t_entry;
	it.kind = READER_EVENT;
	it.sess = &t_sess;
	it.thread = &t_thr[0];
	it.ev = &ev;
	assert_int_equal(calls_record(&it, &exit_, &addr, &depth), 0);
	assert_int_equal(calls_feed(c, &it, t_step, NULL), 0);
	assert_string_equal(t_log, "");
	calls_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calls_names),
		cmocka_unit_test(test_calls_nested),
		cmocka_unit_test(test_calls_lost_and_unfinished),
		cmocka_unit_test(test_calls_not_a_record),
		cmocka_unit_test(test_calls_module_written_later),
	};

	return cmocka_run_group_tests(tests, t_setup, t_teardown);
}
