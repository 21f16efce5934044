/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of daemon/state.c, event state: the daemon's enable rules (the
 * order they apply in, a pattern given again moving to the end, delete
 * and reset, each change saved) and what they decide for an event; and
 * a process's own rules (RULES), which win over the daemon's, with the
 * hostile RULES a client could send.
 *
 * Linked with state.o and proto only.  The test stands in for the rest
 * of the daemon: the index (index_rules_save(), which records what it
 * was given and can be made to fail), the limits (a budget of event ids
 * per uid), the log, and client_check_fd() (sealed memfds, as client.c
 * checks them).
 */
#include <sys/mman.h>
#include <sys/stat.h>

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

#include "daemon/index.h"
#include "daemon/limits.h"
#include "daemon/log.h"
#include "daemon/pdesc.h"
#include "daemon/session.h"
#include "daemon/state.h"
#include "ring.h"
#include "rule.h"
#include "tevents.h"
#include "wire.h"

/* ---- what the rest of the daemon would be --------------------------- */

static struct {
	int		 save_fails;	/* index_rules_save() says -1 */
	unsigned	 saves;
	size_t		 nsaved;	/* what the last save was given */
	char		 saved[8][64];
	int		 saved_on[8];
	uint64_t	 ids_held;	/* LIMIT_EVENT_IDS charged */
	uint64_t	 ids_max;
} f;

int
index_rules_save(const struct rule *rules, size_t n)
{
	size_t i;

	f.saves++;
	f.nsaved = n;
	for (i = 0; i < n && i < 8; i++) {
		snprintf(f.saved[i], sizeof(f.saved[i]), "%s",
		    rules[i].pattern);
		f.saved_on[i] = rules[i].on;
	}
	return f.save_fails ? -1 : 0;
}

int
limits_take(uid_t uid, int l, uint64_t n, unsigned fds, char *why,
    size_t whysize)
{
	(void)uid;
	(void)fds;
	assert_int_equal(l, LIMIT_EVENT_IDS);
	if (f.ids_held + n > f.ids_max) {
		snprintf(why, whysize, "event-ids-per-uid");
		return -1;
	}
	f.ids_held += n;
	return 0;
}

void
limits_put(uid_t uid, int l, uint64_t n, unsigned fds)
{
	(void)uid;
	(void)fds;
	assert_int_equal(l, LIMIT_EVENT_IDS);
	assert_true(n <= f.ids_held);
	f.ids_held -= n;
}

void
limits_force(uid_t uid, int l, uint64_t n)
{
	(void)uid;
	assert_int_equal(l, LIMIT_EVENT_IDS);
	f.ids_held += n;
}

void
limits_logx(uid_t uid, const char *fmt, ...)
{
	(void)uid;
	(void)fmt;
}

void
log_warn(const char *fmt, ...)
{
	(void)fmt;
}

void
log_warnx(const char *fmt, ...)
{
	(void)fmt;
}

void
log_debug(const char *fmt, ...)
{
	(void)fmt;
}

/* As client.c checks a memfd: sealed as asked, and long enough. */
int
client_check_fd(int fd, size_t size, int need_seals, const char **why)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);

	if (seals == -1 || (seals & need_seals) != need_seals) {
		*why = "memfd not sealed against writing";
		return -1;
	}
	if (fstat(fd, &st) == -1 || (uint64_t)st.st_size < size) {
		*why = "memfd smaller than announced";
		return -1;
	}
	return 0;
}

/* ---- a session with one provider of three events -------------------- */

struct t_sess {
	struct session	 s;
	struct sprov	 prov;
	struct sprov	*provs[1];
	struct pdesc	 pd;
	struct tevents_event ev[3];
};

static struct t_sess *
t_session(void)
{
	static char n0[] = "cache_hit", n1[] = "cache_miss", n2[] = "net_rx";
	char *names[] = { n0, n1, n2 };
	struct t_sess *x = calloc(1, sizeof(*x));
	int i;

	assert_non_null(x);
	for (i = 0; i < 3; i++)
		x->ev[i].name = names[i];
	x->ev[2].disabled = 1;		/* 'disable net_rx(...)' */
	snprintf(x->pd.name, sizeof(x->pd.name), "app");
	x->pd.tf.events = x->ev;
	x->pd.tf.nevents = 3;
	x->prov.index = 0;
	x->prov.nevents = 3;
	x->prov.d = &x->pd;
	snprintf(x->prov.name, sizeof(x->prov.name), "app");
	x->provs[0] = &x->prov;
	x->s.id = 7;
	x->s.uid = 1000;
	x->s.welcomed = 1;
	x->s.provs = x->provs;
	x->s.nprovs = 1;
	return x;
}

static void
t_session_free(struct t_sess *x)
{
	state_session_free(&x->s);
	free(x);
}

/*
 * A RULES memfd: the rules (flags byte, pattern, NUL), padding, then
 * one table for provider 0 with decisions dec[0..n).  Sealed with
 * 'seals'; its size in *size.
 */
static int
t_rules_memfd(const unsigned *flags, const char *const *pat, unsigned nrules,
    const uint16_t *dec, uint32_t ndec, int seals, uint32_t *size)
{
	uint8_t buf[1024];
	size_t off = 0, len;
	uint32_t v;
	unsigned i;
	int fd;

	memset(buf, 0, sizeof(buf));
	for (i = 0; i < nrules; i++) {
		len = strlen(pat[i]);
		buf[off++] = (uint8_t)flags[i];
		memcpy(buf + off, pat[i], len + 1);
		off += len + 1;
	}
	off = (off + 3) & ~(size_t)3;
	if (ndec > 0) {
		v = 0;
		memcpy(buf + off, &v, 4);
		memcpy(buf + off + 4, &ndec, 4);
		off += 8;
		for (i = 0; i < ndec; i++) {
			buf[off++] = (uint8_t)(dec[i] & 0xff);
			buf[off++] = (uint8_t)(dec[i] >> 8);
		}
		off = (off + 3) & ~(size_t)3;
	}
	fd = memfd_create("rules", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	assert_true(fd != -1);
	assert_int_equal(write(fd, buf, off), (ssize_t)off);
	if (seals != 0)
		assert_int_equal(fcntl(fd, F_ADD_SEALS, seals), 0);
	*size = (uint32_t)off;
	return fd;
}

static void
t_rules_msg(struct traced_msg_rules *m, unsigned nrules, uint32_t size)
{
	memset(m, 0, sizeof(*m));
	wire_hdr_init(&m->hdr, TRACED_MSG_RULES, sizeof(*m));
	m->gen = 1;
	m->nrules = nrules;
	m->size = size;
}

static int
setup(void **state)
{
	(void)state;
	memset(&f, 0, sizeof(f));
	f.ids_max = 1000;
	state_init(NULL, 0);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	state_fini();
	return 0;
}

/* ---- the daemon's rules ---------------------------------------------- */

static void
test_state_no_rule_follows_the_default(void **state)
{
	struct t_sess *x = t_session();
	struct state_why why;

	(void)state;
	assert_true(state_event_on("app", &x->ev[0]));
	assert_false(state_event_on("app", &x->ev[2]));	/* disable */
	assert_true(state_session_event(&x->s, &x->prov, 0, &why));
	assert_int_equal(why.src, STATE_SRC_DEFAULT);
	assert_false(state_session_event(&x->s, &x->prov, 2, &why));
	assert_int_equal(why.src, STATE_SRC_DISABLE);
	t_session_free(x);
}

static void
test_state_last_matching_rule_decides(void **state)
{
	struct t_sess *x = t_session();
	struct state_why why;

	(void)state;
	assert_int_equal(state_rule_add("*", 0), 0);
	assert_int_equal(state_rule_add("cache_*", 1), 0);
	assert_int_equal(state_rule_add("app:cache_miss", 0), 0);
	assert_true(state_event_on("app", &x->ev[0]));
	assert_false(state_event_on("app", &x->ev[1]));
	assert_false(state_event_on("app", &x->ev[2]));
	/* A scoped rule of another provider does not touch ours. */
	assert_int_equal(state_rule_add("other:*", 1), 0);
	assert_false(state_event_on("app", &x->ev[1]));
	/* A rule turns a 'disable' event on. */
	assert_int_equal(state_rule_add("net_*", 1), 0);
	assert_true(state_session_event(&x->s, &x->prov, 2, &why));
	assert_int_equal(why.src, STATE_SRC_RULE);
	assert_string_equal(why.pattern, "net_*");
	t_session_free(x);
}

static void
test_state_pattern_again_moves_to_the_end(void **state)
{
	const struct rule *r;
	size_t n;
	uint64_t gen;

	(void)state;
	assert_int_equal(state_rule_add("a*", 1), 0);
	assert_int_equal(state_rule_add("b*", 0), 0);
	gen = state_rules_gen();
	assert_int_equal(state_rule_add("a*", 0), 0);
	assert_true(state_rules_gen() != gen);
	r = state_rules(&n);
	assert_int_equal(n, 2);
	assert_string_equal(r[0].pattern, "b*");
	assert_string_equal(r[1].pattern, "a*");
	assert_int_equal(r[1].on, 0);
	/* Saved, in the order they apply. */
	assert_int_equal(f.nsaved, 2);
	assert_string_equal(f.saved[0], "b*");
	assert_string_equal(f.saved[1], "a*");
}

static void
test_state_delete_and_reset(void **state)
{
	size_t n;
	uint64_t gen;

	(void)state;
	assert_int_equal(state_rule_add("a*", 1), 0);
	assert_int_equal(state_rule_add("b*", 0), 0);
	assert_int_equal(state_rule_delete("c*"), 0);	/* no such rule */
	gen = state_rules_gen();
	assert_int_equal(state_rule_delete("a*"), 1);
	assert_true(state_rules_gen() != gen);
	(void)state_rules(&n);
	assert_int_equal(n, 1);
	assert_int_equal(f.nsaved, 1);
	assert_string_equal(f.saved[0], "b*");
	assert_int_equal(state_rules_reset(), 0);
	(void)state_rules(&n);
	assert_int_equal(n, 0);
	assert_int_equal(f.nsaved, 0);
}

static void
test_state_unsaved_change_applies_and_says_so(void **state)
{
	struct t_sess *x = t_session();
	size_t n;

	(void)state;
	f.save_fails = 1;
	assert_int_equal(state_rule_add("cache_hit", 0), -1);
	(void)state_rules(&n);
	assert_int_equal(n, 1);
	assert_false(state_event_on("app", &x->ev[0]));
	assert_int_equal(state_rule_delete("cache_hit"), -1);
	assert_true(state_event_on("app", &x->ev[0]));
	t_session_free(x);
}

static void
test_state_init_takes_the_index_rules(void **state)
{
	struct rule *r = calloc(2, sizeof(*r));
	struct t_sess *x = t_session();
	size_t n;

	(void)state;
	state_fini();
	assert_non_null(r);
	r[0].pattern = strdup("*");
	r[0].on = 0;
	r[1].pattern = strdup("app:cache_hit");
	r[1].on = 1;
	state_init(r, 2);
	(void)state_rules(&n);
	assert_int_equal(n, 2);
	assert_true(state_event_on("app", &x->ev[0]));
	assert_false(state_event_on("app", &x->ev[1]));
	t_session_free(x);
}

/* ---- a process's own rules (RULES) ------------------------------------ */

static void
test_state_process_rules_win(void **state)
{
	static const unsigned fl[] = { TRACED_RULE_ON, TRACED_RULE_ENV };
	static const char *const pat[] = { "cache_*", "cache_miss" };
	static const uint16_t dec[] = { 1, 2, 0 };	/* rule 0, rule 1, none */
	struct traced_msg_rules m;
	struct t_sess *x = t_session();
	struct state_why why;
	const struct ptable *t;
	uint32_t size;
	int fd;

	(void)state;
	assert_int_equal(state_rule_add("*", 0), 0);	/* the daemon: off */
	fd = t_rules_memfd(fl, pat, 2, dec, 3, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_WRITE, &size);
	t_rules_msg(&m, 2, size);
	assert_int_equal(state_session_rules(&x->s, &m, fd), 0);
	close(fd);
	/* Its table's events are charged as event ids. */
	assert_int_equal(f.ids_held, 3);
	t = state_ptable(&x->s, 0);
	assert_non_null(t);
	assert_int_equal(state_ptable_on(&x->s, t, 0), 1);
	assert_int_equal(state_ptable_on(&x->s, t, 1), 0);
	assert_int_equal(state_ptable_on(&x->s, t, 2), -1);
	assert_null(state_ptable(&x->s, 1));
	assert_true(state_session_event(&x->s, &x->prov, 0, &why));
	assert_int_equal(why.src, STATE_SRC_PROCESS);
	assert_string_equal(why.pattern, "cache_*");
	assert_false(state_session_event(&x->s, &x->prov, 1, &why));
	assert_int_equal(why.src, STATE_SRC_PROCESS);
	assert_true(why.flags & TRACED_RULE_ENV);
	/* No process rule: the daemon's decides. */
	assert_false(state_session_event(&x->s, &x->prov, 2, &why));
	assert_int_equal(why.src, STATE_SRC_RULE);
	assert_true(state_session_provider_ok(&x->s, 0, 3));
	assert_false(state_session_provider_ok(&x->s, 0, 4));
	t_session_free(x);
	/* And given back. */
	assert_int_equal(f.ids_held, 0);
}

static void
test_state_process_rules_replace_the_ones_before(void **state)
{
	static const unsigned fl[] = { TRACED_RULE_ON };
	static const char *const pat1[] = { "net_rx" };
	static const char *const pat2[] = { "cache_hit" };
	static const uint16_t dec1[] = { 0, 0, 1 };
	static const uint16_t dec2[] = { 1, 0, 0 };
	struct traced_msg_rules m;
	struct t_sess *x = t_session();
	uint32_t size;
	int fd;

	(void)state;
	fd = t_rules_memfd(fl, pat1, 1, dec1, 3, F_SEAL_SHRINK | F_SEAL_WRITE,
	    &size);
	t_rules_msg(&m, 1, size);
	assert_int_equal(state_session_rules(&x->s, &m, fd), 0);
	close(fd);
	assert_true(state_session_event(&x->s, &x->prov, 2, NULL));
	fd = t_rules_memfd(fl, pat2, 1, dec2, 3, F_SEAL_SHRINK | F_SEAL_WRITE,
	    &size);
	t_rules_msg(&m, 1, size);
	assert_int_equal(state_session_rules(&x->s, &m, fd), 0);
	close(fd);
	assert_false(state_session_event(&x->s, &x->prov, 2, NULL));
	assert_true(state_session_event(&x->s, &x->prov, 0, NULL));
	/* Charged once, not twice. */
	assert_int_equal(f.ids_held, 3);
	t_session_free(x);
	assert_int_equal(f.ids_held, 0);
}

static void
test_state_hostile_process_rules_refused(void **state)
{
	static const unsigned fl[] = { TRACED_RULE_ON };
	static const unsigned badfl[] = { 0x80 };
	static const char *const pat[] = { "cache_*" };
	static const uint16_t dec[] = { 1, 0, 0 };
	static const uint16_t unknown[] = { 2, 0, 0 };	/* rule 1 of 1 */
	struct traced_msg_rules m;
	struct t_sess *x = t_session();
	uint32_t size;
	int fd;

	(void)state;
	/* Not sealed against writing: the client could change it. */
	fd = t_rules_memfd(fl, pat, 1, dec, 3, F_SEAL_SHRINK, &size);
	t_rules_msg(&m, 1, size);
	assert_int_equal(state_session_rules(&x->s, &m, fd), -1);
	close(fd);
	/* Longer than the memfd. */
	fd = t_rules_memfd(fl, pat, 1, dec, 3, F_SEAL_SHRINK | F_SEAL_WRITE,
	    &size);
	t_rules_msg(&m, 1, size + 4096);
	assert_int_equal(state_session_rules(&x->s, &m, fd), -1);
	close(fd);
	/* A table naming a rule that is not there. */
	fd = t_rules_memfd(fl, pat, 1, unknown, 3, F_SEAL_SHRINK |
	    F_SEAL_WRITE, &size);
	t_rules_msg(&m, 1, size);
	assert_int_equal(state_session_rules(&x->s, &m, fd), -1);
	close(fd);
	/* Unknown flags. */
	fd = t_rules_memfd(badfl, pat, 1, dec, 3, F_SEAL_SHRINK |
	    F_SEAL_WRITE, &size);
	t_rules_msg(&m, 1, size);
	assert_int_equal(state_session_rules(&x->s, &m, fd), -1);
	close(fd);
	/* A table for provider 0 of another size than it has. */
	fd = t_rules_memfd(fl, pat, 1, dec, 2, F_SEAL_SHRINK | F_SEAL_WRITE,
	    &size);
	t_rules_msg(&m, 1, size);
	assert_int_equal(state_session_rules(&x->s, &m, fd), -1);
	close(fd);
	/* Before HELLO. */
	x->s.welcomed = 0;
	fd = t_rules_memfd(fl, pat, 1, dec, 3, F_SEAL_SHRINK | F_SEAL_WRITE,
	    &size);
	t_rules_msg(&m, 1, size);
	assert_int_equal(state_session_rules(&x->s, &m, fd), -1);
	close(fd);
	/* None of it was kept, nothing charged. */
	assert_null(state_ptable(&x->s, 0));
	assert_int_equal(f.ids_held, 0);
	t_session_free(x);
}

static void
test_state_process_rules_over_the_limit_keep_the_old(void **state)
{
	static const unsigned fl[] = { TRACED_RULE_ON };
	static const char *const pat[] = { "cache_*" };
	static const uint16_t dec[] = { 1, 0, 0 };
	struct traced_msg_rules m;
	struct t_sess *x = t_session();
	uint32_t size;
	int fd;

	(void)state;
	f.ids_max = 2;		/* the table's 3 events do not fit */
	fd = t_rules_memfd(fl, pat, 1, dec, 3, F_SEAL_SHRINK | F_SEAL_WRITE,
	    &size);
	t_rules_msg(&m, 1, size);
	assert_int_equal(state_session_rules(&x->s, &m, fd), 1);
	close(fd);
	assert_null(state_ptable(&x->s, 0));
	assert_int_equal(f.ids_held, 0);
	t_session_free(x);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_state_no_rule_follows_the_default, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_state_last_matching_rule_decides, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_state_pattern_again_moves_to_the_end, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_state_delete_and_reset,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_state_unsaved_change_applies_and_says_so, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_state_init_takes_the_index_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_process_rules_win,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_state_process_rules_replace_the_ones_before, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_state_hostile_process_rules_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_state_process_rules_over_the_limit_keep_the_old,
		    setup, teardown),
	};

	return cmocka_run_group_tests_name("state", tests, NULL, NULL);
}
