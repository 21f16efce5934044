/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The shadow stack of function tracing (client-lib/functrace/
 * dispatch.c), driven the way the stubs drive it: ft_enter() with a
 * stack slot holding a return address, ft_exit() with that slot, here
 * on slots of a fake stack (an array on this thread's real stack, so
 * that "this thread's own stack" is what it is).  A tracer of the test
 * records what it is told.  Every return address must come back, every
 * exit must follow its entry in order, and frames left behind (tail
 * calls, longjmp) must get their exits, late, while frames that may be
 * live elsewhere (another stack) must not.
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

#include "client-lib/functrace/functrace.h"

#define SITE(n)		((uintptr_t)0x10000 + (uintptr_t)(n) * 0x100)
#define RET(n)		((uintptr_t)0x70000 + (uintptr_t)(n))

struct rec {
	char		 kind;		/* 'E' or 'X' */
	uintptr_t	 addr;
	uint32_t	 depth;
	uint32_t	 flags;
};

static struct rec log_[4096];
static size_t nlog;

static void
on_entry(void *st, const struct traced_func_call *c)
{
	(void)st;
	if (nlog < sizeof(log_) / sizeof(log_[0]))
		log_[nlog++] = (struct rec){ 'E', c->addr, c->depth, c->flags };
}

static void
on_exit_(void *st, const struct traced_func_call *c)
{
	(void)st;
	if (nlog < sizeof(log_) / sizeof(log_[0]))
		log_[nlog++] = (struct rec){ 'X', c->addr, c->depth, c->flags };
}

static int
setup(void **state)
{
	static const struct traced_tracer t = {
		.name = "unit", .entry = on_entry, .exit = on_exit_,
	};

	(void)state;
	nlog = 0;
	return traced_tracer_register(&t) == 0 ? 0 : -1;
}

static int
teardown(void **state)
{
	struct ft_thread *t = ft_thread_self();

	(void)state;
	if (traced_tracer_unregister("unit") != 0)
		return -1;
	/* Every test leaves the shadow stack empty. */
	return t == NULL || t->depth == 0 ? 0 : -1;
}

/* Call function n with its return address in *slot. */
static void
call(uintptr_t *slot, int n)
{
	*slot = RET(n);
	ft_enter(SITE(n) + FT_SITE_LEN, slot);
	assert_true(*slot == (uintptr_t)ft_exit_stub);
}

/* Function n returns through *slot. */
static void
ret(uintptr_t *slot, int n)
{
	assert_true(ft_exit(slot) == RET(n));
}

static void
expect(size_t i, char kind, int n, uint32_t depth, uint32_t flags)
{
	if (i >= nlog)
		fail_msg("record %zu: none (%zu recorded)", i, nlog);
	if (log_[i].kind != kind || log_[i].addr != SITE(n) ||
	    log_[i].depth != depth || log_[i].flags != flags)
		fail_msg("record %zu: %c %#lx depth %u flags %u; expected %c "
		    "%#lx depth %u flags %u", i, log_[i].kind,
		    (unsigned long)log_[i].addr, log_[i].depth, log_[i].flags,
		    kind, (unsigned long)SITE(n), depth, flags);
}

static void
test_functrace_nesting(void **state)
{
	uintptr_t stk[64];

	(void)state;
	call(&stk[60], 1);
	call(&stk[50], 2);
	ret(&stk[50], 2);
	call(&stk[50], 3);
	call(&stk[40], 4);
	ret(&stk[40], 4);
	ret(&stk[50], 3);
	ret(&stk[60], 1);
	assert_int_equal(nlog, 8);
	expect(0, 'E', 1, 0, 0);
	expect(1, 'E', 2, 1, 0);
	expect(2, 'X', 2, 1, 0);
	expect(3, 'E', 3, 1, 0);
	expect(4, 'E', 4, 2, 0);
	expect(5, 'X', 4, 2, 0);
	expect(6, 'X', 3, 1, 0);
	expect(7, 'X', 1, 0, 0);
}

/* A jumps to B (a tail call): B returns where A would have. */
static void
test_functrace_tail_call(void **state)
{
	uintptr_t stk[64];

	(void)state;
	call(&stk[60], 1);
	call(&stk[50], 2);
	/* 2 jumps to 3: same slot, already ours. */
	ft_enter(SITE(3) + FT_SITE_LEN, &stk[50]);
	assert_true(stk[50] == (uintptr_t)ft_exit_stub);
	ret(&stk[50], 2);	/* 3 returns to 2's caller */
	ret(&stk[60], 1);
	assert_int_equal(nlog, 6);
	expect(0, 'E', 1, 0, 0);
	expect(1, 'E', 2, 1, 0);
	expect(2, 'X', 2, 1, 0);
	expect(3, 'E', 3, 1, 0);
	expect(4, 'X', 3, 1, 0);
	expect(5, 'X', 1, 0, 0);
}

/* longjmp from 4 back into 1: the next call of 1 closes 2, 3 and 4. */
static void
test_functrace_longjmp_on_entry(void **state)
{
	uintptr_t stk[64];

	(void)state;
	call(&stk[60], 1);
	call(&stk[50], 2);
	call(&stk[40], 3);
	call(&stk[30], 4);
	/* Back in 1, which calls 5 from where it called 2. */
	call(&stk[50], 5);
	ret(&stk[50], 5);
	ret(&stk[60], 1);
	assert_int_equal(nlog, 10);
	expect(4, 'X', 4, 3, TRACED_CALL_UNWOUND);
	expect(5, 'X', 3, 2, TRACED_CALL_UNWOUND);
	expect(6, 'X', 2, 1, TRACED_CALL_UNWOUND);
	expect(7, 'E', 5, 1, 0);
	expect(8, 'X', 5, 1, 0);
	expect(9, 'X', 1, 0, 0);
}

/* longjmp from 3 to 1's caller... then 1 returns: 2 and 3 close first. */
static void
test_functrace_longjmp_on_exit(void **state)
{
	uintptr_t stk[64];

	(void)state;
	call(&stk[60], 1);
	call(&stk[50], 2);
	call(&stk[40], 3);
	/* Their slots were written over by later calls of 1 (libc). */
	stk[50] = 0x1234;
	stk[40] = 0x5678;
	ret(&stk[60], 1);
	assert_int_equal(nlog, 6);
	expect(3, 'X', 3, 2, TRACED_CALL_UNWOUND);
	expect(4, 'X', 2, 1, TRACED_CALL_UNWOUND);
	expect(5, 'X', 1, 0, 0);
}

/*
 * A frame on another stack (a coroutine's, on the heap) stays: its
 * function will return, and needs its address back.
 */
static void
test_functrace_other_stack_is_kept(void **state)
{
	uintptr_t stk[64], *co = calloc(64, sizeof(*co));

	(void)state;
	assert_non_null(co);
	call(&stk[60], 1);
	call(&co[40], 2);	/* switched to the coroutine */
	call(&stk[50], 3);	/* switched back: below 2's slot? no */
	ret(&stk[50], 3);
	ret(&co[40], 2);	/* the coroutine's function returns */
	ret(&stk[60], 1);
	assert_int_equal(nlog, 6);
	expect(0, 'E', 1, 0, 0);
	expect(1, 'E', 2, 1, 0);
	expect(2, 'E', 3, 2, 0);
	expect(3, 'X', 3, 2, 0);
	expect(4, 'X', 2, 1, 0);
	expect(5, 'X', 1, 0, 0);
	free(co);
}

/* Past FT_DEPTH_MAX calls are counted, not traced, and cost nothing. */
static void
test_functrace_depth_limit(void **state)
{
	static uintptr_t stk[FT_DEPTH_MAX + 64];
	struct ft_thread *t;
	uint64_t skipped;
	int i;

	(void)state;
	call(&stk[FT_DEPTH_MAX + 63], 0);
	t = ft_thread_self();
	assert_non_null(t);
	skipped = t->skipped_depth;
	for (i = 1; i < FT_DEPTH_MAX + 10; i++) {
		uintptr_t *slot = &stk[FT_DEPTH_MAX + 63 - i];

		*slot = RET(i);
		ft_enter(SITE(i) + FT_SITE_LEN, slot);
		if (i < FT_DEPTH_MAX)
			assert_true(*slot == (uintptr_t)ft_exit_stub);
		else
			assert_true(*slot == RET(i));	/* untouched */
	}
	assert_int_equal(t->depth, FT_DEPTH_MAX);
	assert_true(t->skipped_depth == skipped + 10);
	for (i = FT_DEPTH_MAX - 1; i >= 0; i--)
		ret(&stk[FT_DEPTH_MAX + 63 - i], i);
	assert_int_equal(nlog, 2 * FT_DEPTH_MAX);
	expect(FT_DEPTH_MAX - 1, 'E', FT_DEPTH_MAX - 1, FT_DEPTH_MAX - 1, 0);
	expect(FT_DEPTH_MAX, 'X', FT_DEPTH_MAX - 1, FT_DEPTH_MAX - 1, 0);
}

/* The tracer API: its refusals, its 32 slots, a tracer off and on. */
static void
test_functrace_tracer_api(void **state)
{
	static const struct traced_tracer bad_name = { .name = "Bad Name" };
	static const struct traced_tracer big = {
		.name = "big", .state_size = TRACED_TRACER_STATE_MAX + 1,
	};
	struct traced_tracer t = { .name = "x" };
	char names[40][8];
	int i, rc = 0;

	(void)state;
	assert_int_equal(traced_tracer_register(NULL), -EINVAL);
	assert_int_equal(traced_tracer_register(&bad_name), -EINVAL);
	assert_int_equal(traced_tracer_register(&big), -EINVAL);
	t.name = "unit";
	assert_int_equal(traced_tracer_register(&t), -EEXIST);
	t.name = "graph";
	assert_int_equal(traced_tracer_register(&t), -EEXIST);
	assert_int_equal(traced_tracer_unregister("graph"), -EPERM);
	assert_int_equal(traced_tracer_unregister("nosuch"), -ENOENT);
	assert_int_equal(traced_tracer_enable("nosuch", 1), -ENOENT);
	/* 32 slots: graph, latency, unit and 29 more. */
	for (i = 0; i < 40 && rc == 0; i++) {
		snprintf(names[i], sizeof(names[i]), "t%d", i);
		t.name = names[i];
		rc = traced_tracer_register(&t);
	}
	assert_int_equal(rc, -ENOSPC);
	assert_int_equal(i, 30);
	while (--i > 0)
		assert_int_equal(traced_tracer_unregister(names[i - 1]), 0);
	/* Off: told nothing; on again: told again. */
	assert_int_equal(traced_tracer_enable("unit", 0), 0);
	{
		uintptr_t stk[8];

		call(&stk[6], 1);
		ret(&stk[6], 1);
		assert_int_equal(nlog, 0);
		assert_int_equal(traced_tracer_enable("unit", 1), 0);
		call(&stk[6], 2);
		ret(&stk[6], 2);
		assert_int_equal(nlog, 2);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_functrace_nesting,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_functrace_tail_call,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_functrace_longjmp_on_entry,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_functrace_longjmp_on_exit,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_functrace_other_stack_is_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_functrace_depth_limit,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_functrace_tracer_api,
		    setup, teardown),
	};

	return cmocka_run_group_tests_name("functrace", tests, NULL, NULL);
}
