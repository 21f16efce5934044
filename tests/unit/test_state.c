/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of daemon/state.c, the enable rules: the daemon's rules (added,
 * moved to the end when given again, deleted, reset, each change saved
 * and numbered), what they say of an event ("provider:event" patterns
 * and bare names, the last match deciding, the trace-events default),
 * and a process's own rules, which arrive as a RULES message with a
 * sealed memfd and win over the daemon's.  Hostile RULES (too large,
 * fewer rules than announced, a table naming no rule or of the wrong
 * size, a memfd not sealed or shorter than announced) are refused, and
 * the event ids a process's tables hold are charged to its uid and
 * given back.
 *
 * state.c is linked with the real per-uid accounting (limits.c, with
 * config.c for the settings and log.c for its lines); the rest of the
 * daemon is faked here: the index (index_rules_save() keeps a copy of
 * what it is given, and fails when a test says so), client.c's memfd
 * check (its contract, on the real descriptor, so that what state.c
 * asks for decides what is refused) and the clock limits.c reads.  The
 * RULES memfd is built as client-lib/rules.c builds it.
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

#include "daemon/config.h"
#include "daemon/dclock.h"
#include "daemon/index.h"
#include "daemon/limits.h"
#include "daemon/log.h"
#include "daemon/pdesc.h"
#include "daemon/session.h"
#include "daemon/state.h"
#include "rule.h"
#include "wire.h"

#define SEALS_ALL	(F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | \
			    F_SEAL_SEAL)

/* What the fake index was last given, and what it answers. */
static struct {
	unsigned	 calls;
	struct rule	*rules;		/* owned: copies */
	size_t		 n;
	int		 rc;		/* index_rules_save()'s answer */
} t_saved;

/* What state.c last asked of the memfd check. */
static struct {
	unsigned	 calls;
	size_t		 size;
	int		 seals;
} t_check;

static void
t_saved_clear(void)
{
	size_t i;

	for (i = 0; i < t_saved.n; i++)
		free(t_saved.rules[i].pattern);
	free(t_saved.rules);
	t_saved.rules = NULL;
	t_saved.n = 0;
}

/* In place of index.c: keep a copy of the rules, as the index would. */
int
index_rules_save(const struct rule *rules, size_t n)
{
	size_t i;

	t_saved.calls++;
	t_saved_clear();
	if (n > 0) {
		t_saved.rules = calloc(n, sizeof(*t_saved.rules));
		assert_non_null(t_saved.rules);
	}
	for (i = 0; i < n; i++) {
		t_saved.rules[i].pattern = strdup(rules[i].pattern);
		assert_non_null(t_saved.rules[i].pattern);
		t_saved.rules[i].on = rules[i].on;
	}
	t_saved.n = n;
	return t_saved.rc;
}

/*
 * In place of client.c: what its comment promises (a regular file with
 * need_seals and at least 'size' bytes), checked on the real memfd.
 */
int
client_check_fd(int fd, size_t size, int need_seals, const char **why)
{
	struct stat st;
	int seals;

	t_check.calls++;
	t_check.size = size;
	t_check.seals = need_seals;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		*why = "not a memfd";
		return -1;
	}
	if ((seals = fcntl(fd, F_GET_SEALS)) == -1) {
		*why = "not a sealable memfd";
		return -1;
	}
	if ((seals & need_seals) != need_seals) {
		*why = "memfd not sealed";
		return -1;
	}
	if ((uint64_t)st.st_size < size) {
		*why = "memfd smaller than announced";
		return -1;
	}
	return 0;
}

/* In place of dclock.c: limits.c's log budget reads it; time stands. */
uint64_t
now_ns(int clock)
{
	(void)clock;
	return UINT64_C(1000000000);
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

/* Stop capturing; what was logged meanwhile, NUL-terminated, in buf. */
static void
t_captured(char *buf, size_t size)
{
	ssize_t n;

	if (t_err.saved == -1)
		return;
	dup2(t_err.saved, STDERR_FILENO);
	close(t_err.saved);
	t_err.saved = -1;
	n = pread(t_err.fd, buf, size - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	close(t_err.fd);
}

/* A uid that is neither root nor the daemon's: its log is budgeted. */
static uid_t
t_uid(void)
{
	return geteuid() == 1000 ? 1001 : 1000;
}

/* ---- a session with two providers, as state.c reads it -------------- */

/*
 * Provider 0 "net": rx, tx, drop ('disable'); provider 1 "disk": io.
 * Provider numbers are the client's (sprov.index).
 */
static char t_rx[] = "rx", t_tx[] = "tx", t_drop[] = "drop", t_io[] = "io";
static struct tevents_event t_net_ev[3] = {
	{ .name = t_rx }, { .name = t_tx }, { .name = t_drop, .disabled = 1 },
};
static struct tevents_event t_disk_ev[1] = { { .name = t_io } };

struct t_sess {
	struct pdesc	 d[2];
	struct sprov	 p[2];
	struct sprov	*provs[2];
	struct session	 s;
};

static void
t_sess_init(struct t_sess *t)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->d[0].name, sizeof(t->d[0].name), "net");
	t->d[0].tf.events = t_net_ev;
	t->d[0].tf.nevents = 3;
	snprintf(t->d[1].name, sizeof(t->d[1].name), "disk");
	t->d[1].tf.events = t_disk_ev;
	t->d[1].tf.nevents = 1;
	for (int i = 0; i < 2; i++) {
		t->p[i].index = (uint32_t)i;
		t->p[i].nevents = (uint32_t)t->d[i].tf.nevents;
		t->p[i].d = &t->d[i];
		snprintf(t->p[i].name, sizeof(t->p[i].name), "%s",
		    t->d[i].name);
		t->provs[i] = &t->p[i];
	}
	t->s.id = 7;
	t->s.uid = t_uid();
	t->s.welcomed = 1;
	t->s.provs = t->provs;
	t->s.nprovs = 2;
}

/* ---- RULES memfds, laid out as proto/wire.h says ------------------- */

struct t_buf {
	uint8_t		 b[256];
	size_t		 len;
	uint32_t	 nrules;
};

static void
t_put(struct t_buf *b, const void *p, size_t n)
{
	assert_true(b->len + n <= sizeof(b->b));
	memcpy(b->b + b->len, p, n);
	b->len += n;
}

static void
t_le32(struct t_buf *b, uint32_t v)
{
	uint8_t le[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
	    (uint8_t)(v >> 24) };

	t_put(b, le, 4);
}

static void
t_pad(struct t_buf *b)
{
	static const uint8_t zero[4];

	t_put(b, zero, (4 - b->len % 4) % 4);
}

/* A rule: its flags byte, its pattern and a NUL.  Rules come first. */
static void
t_rule(struct t_buf *b, unsigned flags, const char *pattern)
{
	uint8_t f = (uint8_t)flags;

	t_put(b, &f, 1);
	t_put(b, pattern, strlen(pattern) + 1);
	b->nrules++;
}

/*
 * A provider's table, after the rules (padded to 4 first): dec[k] is 0
 * or the number of the rule that decides event k, plus one.
 */
static void
t_table(struct t_buf *b, uint32_t index, uint32_t nevents,
    const uint16_t *dec)
{
	uint32_t k;

	t_pad(b);
	t_le32(b, index);
	t_le32(b, nevents);
	for (k = 0; k < nevents; k++) {
		uint8_t le[2] = { (uint8_t)dec[k], (uint8_t)(dec[k] >> 8) };

		t_put(b, le, 2);
	}
	t_pad(b);
}

/* A memfd holding len bytes of buf (and 'extra' zero bytes), sealed. */
static int
t_memfd(const void *buf, size_t len, size_t extra, int seals)
{
	int fd = memfd_create("rules", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	assert_int_not_equal(fd, -1);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	if (extra > 0)
		assert_int_equal(ftruncate(fd, (off_t)(len + extra)), 0);
	if (seals != 0)
		assert_int_equal(fcntl(fd, F_ADD_SEALS, seals), 0);
	return fd;
}

/*
 * Send RULES to s: the memfd holds b (which ends padded), sealed with
 * 'seals', and the message announces b's size plus 'more' bytes and
 * b's rules plus 'more_rules' (which may be negative).
 */
static int
t_send(struct session *s, struct t_buf *b, int seals, uint32_t more,
    int more_rules)
{
	struct traced_msg_rules m;
	int fd, rc;

	t_pad(b);
	memset(&m, 0, sizeof(m));
	wire_hdr_init(&m.hdr, TRACED_MSG_RULES, sizeof(m));
	m.gen = 1;
	m.nrules = (uint32_t)((int)b->nrules + more_rules);
	m.size = (uint32_t)b->len + more;
	fd = t_memfd(b->b, b->len, 0, seals);
	rc = state_session_rules(s, &m, fd);
	close(fd);
	return rc;
}

/*
 * The process rules the tests use: 1 "net:rx" on (an environment
 * rule), 2 "tx" off; net's table: rx by rule 1, tx by rule 2, drop by
 * none.  disk has no table: no process rule matches its event.
 */
static void
t_rules_net(struct t_buf *b)
{
	static const uint16_t dec[3] = { 1, 2, 0 };

	memset(b, 0, sizeof(*b));
	t_rule(b, TRACED_RULE_ON | TRACED_RULE_ENV, "net:rx");
	t_rule(b, 0, "tx");
	t_table(b, 0, 3, dec);
}

/* ---- fixtures ------------------------------------------------------- */

static int
setup(void **state)
{
	(void)state;
	memset(&t_check, 0, sizeof(t_check));
	t_saved.calls = 0;
	t_saved.rc = 0;
	cfg.limit[LIMIT_EVENT_IDS] = 65536;
	state_init(NULL, 0);
	return 0;
}

static int
teardown(void **state)
{
	char buf[16];

	(void)state;
	t_captured(buf, sizeof(buf));	/* if a test failed capturing */
	/*
	 * A test that failed before freeing its sessions leaves their
	 * charge: give it all back, so that the next test starts clean.
	 */
	limits_put(t_uid(), LIMIT_EVENT_IDS, UINT64_MAX, 0);
	state_fini();
	t_saved_clear();
	return 0;
}

/* The patterns of the daemon's rules, "+a -b": on or off, in order. */
static const char *
t_list(const struct rule *r, size_t n)
{
	static char buf[256];
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
		    "%s%c%s", i > 0 ? " " : "", r[i].on ? '+' : '-',
		    r[i].pattern);
	return buf;
}

static const char *
t_rules(void)
{
	const struct rule *r;
	size_t n;

	r = state_rules(&n);
	return t_list(r, n);
}

/* ---- the daemon's rules ------------------------------------------- */

static void
test_state_init_takes_the_rules_the_index_kept(void **state)
{
	struct rule *r = calloc(2, sizeof(*r));
	uint64_t gen = state_rules_gen();

	(void)state;
	assert_non_null(r);
	state_fini();
	r[0].pattern = strdup("net:*");
	r[0].on = 0;
	r[1].pattern = strdup("rx");
	r[1].on = 1;
	state_init(r, 2);
	assert_string_equal(t_rules(), "-net:* +rx");
	assert_int_not_equal(state_rules_gen(), gen);
	/* Taking them is no change to save. */
	assert_int_equal(t_saved.calls, 0);
	assert_int_equal(state_event_on("net", &t_net_ev[0]), 1);
	assert_int_equal(state_event_on("net", &t_net_ev[1]), 0);
}

static void
test_state_rule_add_appends_and_saves(void **state)
{
	uint64_t g0 = state_rules_gen(), g1;

	(void)state;
	assert_int_equal(state_rule_add("net:*", 0), 0);
	g1 = state_rules_gen();
	assert_int_not_equal(g1, g0);
	assert_int_equal(state_rule_add("rx", 1), 0);
	assert_int_not_equal(state_rules_gen(), g1);
	assert_string_equal(t_rules(), "-net:* +rx");
	assert_int_equal(t_saved.calls, 2);
	assert_string_equal(t_list(t_saved.rules, t_saved.n), "-net:* +rx");
}

static void
test_state_rule_given_again_moves_to_the_end(void **state)
{
	(void)state;
	assert_int_equal(state_rule_add("rx", 1), 0);
	assert_int_equal(state_rule_add("net:*", 0), 0);
	assert_int_equal(state_event_on("net", &t_net_ev[0]), 0);
	/* Given again, "rx" is the newest: it decides for rx again. */
	assert_int_equal(state_rule_add("rx", 1), 0);
	assert_string_equal(t_rules(), "-net:* +rx");
	assert_string_equal(t_list(t_saved.rules, t_saved.n), "-net:* +rx");
	assert_int_equal(state_event_on("net", &t_net_ev[0]), 1);
	/* With the other setting, once, in the same place. */
	assert_int_equal(state_rule_add("rx", 0), 0);
	assert_string_equal(t_rules(), "-net:* -rx");
}

static void
test_state_rule_delete_says_whether_it_was_there(void **state)
{
	uint64_t gen;

	(void)state;
	assert_int_equal(state_rule_add("a", 1), 0);
	assert_int_equal(state_rule_add("b", 0), 0);
	assert_int_equal(state_rule_add("c", 1), 0);
	gen = state_rules_gen();
	assert_int_equal(state_rule_delete("b"), 1);
	assert_string_equal(t_rules(), "+a +c");
	assert_string_equal(t_list(t_saved.rules, t_saved.n), "+a +c");
	assert_int_equal(t_saved.calls, 4);
	assert_int_not_equal(state_rules_gen(), gen);

	/* No such rule: nothing changes, nothing to save. */
	gen = state_rules_gen();
	assert_int_equal(state_rule_delete("b"), 0);
	assert_int_equal(state_rule_delete("a*"), 0);
	assert_int_equal(state_rules_gen(), gen);
	assert_int_equal(t_saved.calls, 4);
	assert_string_equal(t_rules(), "+a +c");
}

static void
test_state_rules_reset_goes_back_to_the_defaults(void **state)
{
	uint64_t gen;

	(void)state;
	assert_int_equal(state_rule_add("*", 1), 0);
	assert_int_equal(state_event_on("net", &t_net_ev[2]), 1);
	gen = state_rules_gen();
	assert_int_equal(state_rules_reset(), 0);
	assert_string_equal(t_rules(), "");
	assert_int_equal(t_saved.calls, 2);
	assert_int_equal(t_saved.n, 0);
	assert_int_not_equal(state_rules_gen(), gen);
	/* 'disable' in trace-events holds again. */
	assert_int_equal(state_event_on("net", &t_net_ev[2]), 0);
	assert_int_equal(state_event_on("net", &t_net_ev[0]), 1);
	/* And rules can be added after. */
	assert_int_equal(state_rule_add("rx", 0), 0);
	assert_string_equal(t_rules(), "-rx");
}

static void
test_state_rule_not_saved_applies_all_the_same(void **state)
{
	(void)state;
	t_saved.rc = -1;
	assert_int_equal(state_rule_add("rx", 0), -1);
	assert_string_equal(t_rules(), "-rx");
	assert_int_equal(state_event_on("net", &t_net_ev[0]), 0);
	assert_int_equal(state_rule_add("tx", 0), -1);
	assert_int_equal(state_rule_delete("rx"), -1);
	assert_string_equal(t_rules(), "-tx");
	assert_int_equal(state_event_on("net", &t_net_ev[0]), 1);
	assert_int_equal(state_rules_reset(), -1);
	assert_string_equal(t_rules(), "");
	assert_int_equal(t_saved.calls, 4);
	/* A rule that is not there is no change: nothing to fail. */
	assert_int_equal(state_rule_delete("rx"), 0);
}

static void
test_state_event_on_last_matching_rule_wins(void **state)
{
	(void)state;
	assert_int_equal(state_rule_add("*", 0), 0);
	assert_int_equal(state_rule_add("?x", 1), 0);
	assert_int_equal(state_rule_add("tx", 0), 0);
	assert_int_equal(state_event_on("net", &t_net_ev[0]), 1);
	assert_int_equal(state_event_on("net", &t_net_ev[1]), 0);
	assert_int_equal(state_event_on("net", &t_net_ev[2]), 0);
	assert_int_equal(state_event_on("disk", &t_disk_ev[0]), 0);
	/* The order decides, not how narrow a pattern is. */
	assert_int_equal(state_rule_add("*", 1), 0);
	assert_int_equal(state_event_on("net", &t_net_ev[1]), 1);
}

static void
test_state_event_on_provider_patterns_and_bare_names(void **state)
{
	(void)state;
	/* "provider:event" matches that provider's events only. */
	assert_int_equal(state_rule_add("disk:*", 0), 0);
	assert_int_equal(state_event_on("disk", &t_disk_ev[0]), 0);
	assert_int_equal(state_event_on("net", &t_net_ev[0]), 1);
	/* A bare name matches the event of any provider. */
	assert_int_equal(state_rule_add("io", 1), 0);
	assert_int_equal(state_event_on("disk", &t_disk_ev[0]), 1);
	assert_int_equal(state_event_on("net", &t_disk_ev[0]), 1);
	/* A bare pattern does not see the provider's name... */
	assert_int_equal(state_rule_add("net*", 0), 0);
	assert_int_equal(state_event_on("net", &t_net_ev[0]), 1);
	/* ...and one with ':' does not match a bare event name. */
	assert_int_equal(state_rule_add("*:rx", 0), 0);
	assert_int_equal(state_event_on("net", &t_net_ev[0]), 0);
	assert_int_equal(state_rule_add("net:r?", 1), 0);
	assert_int_equal(state_event_on("net", &t_net_ev[0]), 1);
	assert_int_equal(state_event_on("disk", &t_net_ev[0]), 0);
}

static void
test_state_event_on_default_is_trace_events(void **state)
{
	(void)state;
	assert_int_equal(state_event_on("net", &t_net_ev[0]), 1);
	assert_int_equal(state_event_on("net", &t_net_ev[2]), 0);
	/* A rule overrides 'disable', both ways. */
	assert_int_equal(state_rule_add("drop", 1), 0);
	assert_int_equal(state_event_on("net", &t_net_ev[2]), 1);
	assert_int_equal(state_rule_add("rx", 0), 0);
	assert_int_equal(state_event_on("net", &t_net_ev[0]), 0);
}

/* ---- a process's own rules ---------------------------------------- */

static void
test_state_session_event_names_the_daemons_rule(void **state)
{
	struct state_why why;
	struct t_sess t;

	(void)state;
	t_sess_init(&t);
	assert_int_equal(state_session_event(&t.s, &t.p[0], 0, &why), 1);
	assert_int_equal(why.src, STATE_SRC_DEFAULT);
	assert_null(why.pattern);
	assert_int_equal(state_session_event(&t.s, &t.p[0], 2, &why), 0);
	assert_int_equal(why.src, STATE_SRC_DISABLE);
	assert_int_equal(state_rule_add("net:t*", 0), 0);
	assert_int_equal(state_session_event(&t.s, &t.p[0], 1, &why), 0);
	assert_int_equal(why.src, STATE_SRC_RULE);
	assert_string_equal(why.pattern, "net:t*");
	assert_null(state_ptable(&t.s, 0));
	assert_int_equal(state_ptable_on(&t.s, NULL, 0), -1);
	/* why may be NULL. */
	assert_int_equal(state_session_event(&t.s, &t.p[0], 1, NULL), 0);
}

static void
test_state_session_rules_win_over_the_daemons(void **state)
{
	const struct ptable *tab;
	struct state_why why;
	struct t_sess t;
	struct t_buf b;

	(void)state;
	t_sess_init(&t);
	assert_int_equal(state_rule_add("*", 0), 0);
	assert_int_equal(state_rule_add("tx", 1), 0);
	t_rules_net(&b);
	assert_int_equal(t_send(&t.s, &b, SEALS_ALL, 0, 0), 0);
	/* What state.c asked of the memfd: its size, sealed. */
	assert_int_equal(t_check.size, b.len);
	assert_int_equal(t_check.seals & (F_SEAL_SHRINK | F_SEAL_WRITE),
	    F_SEAL_SHRINK | F_SEAL_WRITE);

	/* rx: the process turns it on, the daemon's "*" would not. */
	assert_int_equal(state_session_event(&t.s, &t.p[0], 0, &why), 1);
	assert_int_equal(why.src, STATE_SRC_PROCESS);
	assert_string_equal(why.pattern, "net:rx");
	assert_int_equal(why.flags, TRACED_RULE_ON | TRACED_RULE_ENV);
	/* tx: the process turns it off over the daemon's newer "tx". */
	assert_int_equal(state_session_event(&t.s, &t.p[0], 1, &why), 0);
	assert_int_equal(why.src, STATE_SRC_PROCESS);
	assert_string_equal(why.pattern, "tx");
	assert_int_equal(why.flags, 0);
	/* drop: no process rule; the daemon's decides. */
	assert_int_equal(state_session_event(&t.s, &t.p[0], 2, &why), 0);
	assert_int_equal(why.src, STATE_SRC_RULE);
	assert_string_equal(why.pattern, "*");
	/* disk has no table: the daemon's rules alone. */
	assert_int_equal(state_session_event(&t.s, &t.p[1], 0, &why), 0);
	assert_int_equal(why.src, STATE_SRC_RULE);
	assert_null(state_ptable(&t.s, 1));

	/* What the state bytes are computed from. */
	assert_non_null(tab = state_ptable(&t.s, 0));
	assert_int_equal(state_ptable_on(&t.s, tab, 0), 1);
	assert_int_equal(state_ptable_on(&t.s, tab, 1), 0);
	assert_int_equal(state_ptable_on(&t.s, tab, 2), -1);
	assert_int_equal(state_ptable_on(&t.s, tab, 3), -1);
	state_session_free(&t.s);
}

static void
test_state_session_rules_replace_the_ones_before(void **state)
{
	static const uint16_t dec[1] = { 1 };
	struct state_why why;
	struct t_sess t;
	struct t_buf b;

	(void)state;
	t_sess_init(&t);
	t_rules_net(&b);
	assert_int_equal(t_send(&t.s, &b, SEALS_ALL, 0, 0), 0);
	memset(&b, 0, sizeof(b));
	t_rule(&b, 0, "io");
	t_table(&b, 1, 1, dec);
	assert_int_equal(t_send(&t.s, &b, SEALS_ALL, 0, 0), 0);
	assert_int_equal(t.s.nprules, 1);
	/* net's events are the daemon's again, disk's io the process's. */
	assert_int_equal(state_session_event(&t.s, &t.p[0], 0, &why), 1);
	assert_int_equal(why.src, STATE_SRC_DEFAULT);
	assert_null(state_ptable(&t.s, 0));
	assert_int_equal(state_session_event(&t.s, &t.p[1], 0, &why), 0);
	assert_int_equal(why.src, STATE_SRC_PROCESS);
	assert_string_equal(why.pattern, "io");
	assert_int_equal(limits_held(t.s.uid, LIMIT_EVENT_IDS), 1);

	/* An empty list: no process rule at all. */
	memset(&b, 0, sizeof(b));
	assert_int_equal(t_send(&t.s, &b, SEALS_ALL, 0, 0), 0);
	assert_int_equal(t.s.nprules, 0);
	assert_int_equal(state_session_event(&t.s, &t.p[1], 0, &why), 1);
	assert_int_equal(why.src, STATE_SRC_DEFAULT);
	assert_int_equal(limits_held(t.s.uid, LIMIT_EVENT_IDS), 0);
	state_session_free(&t.s);
}

static void
test_state_session_rules_charge_ids_until_freed(void **state)
{
	static const uint16_t dec[1] = { 2 };
	struct t_sess t, u;
	struct t_buf b;

	(void)state;
	t_sess_init(&t);
	t_sess_init(&u);
	u.s.id = 8;
	assert_int_equal(limits_held(t.s.uid, LIMIT_EVENT_IDS), 0);
	t_rules_net(&b);
	t_table(&b, 1, 1, dec);
	assert_int_equal(t_send(&t.s, &b, SEALS_ALL, 0, 0), 0);
	/* Both tables' events: 3 + 1. */
	assert_int_equal(limits_held(t.s.uid, LIMIT_EVENT_IDS), 4);
	/* Another session of the same uid adds to it. */
	t_rules_net(&b);
	assert_int_equal(t_send(&u.s, &b, SEALS_ALL, 0, 0), 0);
	assert_int_equal(limits_held(t.s.uid, LIMIT_EVENT_IDS), 7);
	state_session_free(&t.s);
	assert_int_equal(limits_held(t.s.uid, LIMIT_EVENT_IDS), 3);
	assert_null(t.s.prules);
	assert_null(state_ptable(&t.s, 0));
	state_session_free(&u.s);
	assert_int_equal(limits_held(t.s.uid, LIMIT_EVENT_IDS), 0);
	/* Freeing again gives back nothing more. */
	state_session_free(&u.s);
	assert_int_equal(limits_held(t.s.uid, LIMIT_EVENT_IDS), 0);
}

static void
test_state_session_rules_over_limit_keep_old_ones(void **state)
{
	static const uint16_t dec[1] = { 1 };
	struct state_why why;
	struct t_sess t;
	struct t_buf b;
	char log[2048];

	(void)state;
	t_sess_init(&t);
	cfg.limit[LIMIT_EVENT_IDS] = 3;
	t_rules_net(&b);
	assert_int_equal(t_send(&t.s, &b, SEALS_ALL, 0, 0), 0);
	assert_int_equal(limits_held(t.s.uid, LIMIT_EVENT_IDS), 3);
	/* 3 + 1 events: over event-ids-per-uid. */
	t_rules_net(&b);
	t_table(&b, 1, 1, dec);
	t_capture();
	assert_int_equal(t_send(&t.s, &b, SEALS_ALL, 0, 0), 1);
	t_captured(log, sizeof(log));
	assert_non_null(strstr(log, "session 7: process rules refused"));
	assert_non_null(strstr(log, "event-ids-per-uid"));
	/* Still charged for, and deciding by, the rules before. */
	assert_int_equal(limits_held(t.s.uid, LIMIT_EVENT_IDS), 3);
	assert_int_equal(state_session_event(&t.s, &t.p[0], 0, &why), 1);
	assert_int_equal(why.src, STATE_SRC_PROCESS);
	assert_null(state_ptable(&t.s, 1));
	/* The same size again fits: its own charge is given back first. */
	t_rules_net(&b);
	assert_int_equal(t_send(&t.s, &b, SEALS_ALL, 0, 0), 0);
	assert_int_equal(limits_held(t.s.uid, LIMIT_EVENT_IDS), 3);
	state_session_free(&t.s);
	assert_int_equal(limits_held(t.s.uid, LIMIT_EVENT_IDS), 0);
}

/*
 * Send hostile RULES to a session that holds the rules of t_rules_net()
 * and check they are refused (-1: the client is disconnected) with
 * what the session had kept as it was.
 */
static void
t_refused(struct t_buf *b, int seals, uint32_t more, int more_rules,
    const char *reason)
{
	struct state_why why;
	struct t_sess t;
	struct t_buf good;
	char log[2048];

	t_sess_init(&t);
	t_rules_net(&good);
	assert_int_equal(t_send(&t.s, &good, SEALS_ALL, 0, 0), 0);
	t_capture();
	assert_int_equal(t_send(&t.s, b, seals, more, more_rules), -1);
	t_captured(log, sizeof(log));
	if (strstr(log, reason) == NULL)
		fail_msg("wanted \"%s\" in: %s", reason, log);
	assert_int_equal(t.s.nprules, 2);
	assert_int_equal(state_session_event(&t.s, &t.p[0], 0, &why), 1);
	assert_string_equal(why.pattern, "net:rx");
	assert_int_equal(limits_held(t.s.uid, LIMIT_EVENT_IDS), 3);
	state_session_free(&t.s);
	assert_int_equal(limits_held(t.s.uid, LIMIT_EVENT_IDS), 0);
}

static void
test_state_session_rules_refuse_an_unsealed_memfd(void **state)
{
	struct t_buf b;

	(void)state;
	t_rules_net(&b);
	t_refused(&b, 0, 0, 0, "not sealed");
	t_rules_net(&b);
	t_refused(&b, F_SEAL_SHRINK | F_SEAL_GROW, 0, 0, "not sealed");
	t_rules_net(&b);
	t_refused(&b, F_SEAL_WRITE | F_SEAL_GROW, 0, 0, "not sealed");
}

static void
test_state_session_rules_refuse_a_short_memfd(void **state)
{
	struct t_buf b;

	(void)state;
	t_rules_net(&b);
	t_refused(&b, SEALS_ALL, 4, 0, "smaller than announced");
	t_rules_net(&b);
	t_refused(&b, SEALS_ALL, 1u << 20, 0, "smaller than announced");
}

static void
test_state_session_rules_refuse_bad_sizes(void **state)
{
	static const uint16_t dec4[4] = { 1, 1, 1, 1 };
	struct traced_msg_rules m;
	struct t_sess t;
	struct t_buf b;
	char log[2048];
	int fd;

	(void)state;
	/* More rules announced than the memfd holds. */
	memset(&b, 0, sizeof(b));
	t_rule(&b, TRACED_RULE_ON, "rx");
	t_refused(&b, SEALS_ALL, 0, 1, "fewer rules than announced");
	/* The same with a table after the rules: not a rule either. */
	t_rules_net(&b);
	t_refused(&b, SEALS_ALL, 0, 1, "bad rule pattern length");
	/* Fewer: the rest is read as a table, and is not one. */
	t_rules_net(&b);
	t_refused(&b, SEALS_ALL, 0, -1, "process rules:");
	/* A table the size of no provider the session has. */
	memset(&b, 0, sizeof(b));
	t_rule(&b, TRACED_RULE_ON, "rx");
	t_table(&b, 0, 4, dec4);
	t_refused(&b, SEALS_ALL, 0, 0, "a table's size is not its "
	    "provider's");
	/* A table cut short. */
	memset(&b, 0, sizeof(b));
	t_rule(&b, TRACED_RULE_ON, "rx");
	t_table(&b, 0, 3, dec4);
	b.len -= 4;
	t_refused(&b, SEALS_ALL, 0, 0, "truncated table");

	/* Larger than any RULES may be, the memfd as large. */
	t_sess_init(&t);
	memset(&m, 0, sizeof(m));
	wire_hdr_init(&m.hdr, TRACED_MSG_RULES, sizeof(m));
	m.gen = 1;
	m.size = TRACED_RULES_SIZE_MAX + 4;
	fd = t_memfd("", 0, m.size, SEALS_ALL);
	t_capture();
	assert_int_equal(state_session_rules(&t.s, &m, fd), -1);
	t_captured(log, sizeof(log));
	close(fd);
	assert_non_null(strstr(log, "rules too large"));
	assert_int_equal(limits_held(t.s.uid, LIMIT_EVENT_IDS), 0);
	assert_int_equal(t.s.nprules, 0);
}

static void
test_state_session_rules_refuse_a_table_naming_no_rule(void **state)
{
	static const uint16_t dec[3] = { 1, 3, 0 };
	static const uint16_t dec1[1] = { 1 };
	struct t_buf b;

	(void)state;
	memset(&b, 0, sizeof(b));
	t_rule(&b, TRACED_RULE_ON, "rx");
	t_rule(&b, 0, "tx");
	t_table(&b, 0, 3, dec);
	t_refused(&b, SEALS_ALL, 0, 0, "table names an unknown rule");
	/* Two tables for one provider. */
	memset(&b, 0, sizeof(b));
	t_rule(&b, TRACED_RULE_ON, "io");
	t_table(&b, 1, 1, dec1);
	t_table(&b, 1, 1, dec1);
	t_refused(&b, SEALS_ALL, 0, 0, "tables out of order");
	/* Flags no library sends. */
	memset(&b, 0, sizeof(b));
	t_rule(&b, 0x80, "rx");
	t_refused(&b, SEALS_ALL, 0, 0, "unknown rule flags");
}

static void
test_state_session_rules_before_hello_refused(void **state)
{
	struct t_sess t;
	struct t_buf b;
	char log[2048];

	(void)state;
	t_sess_init(&t);
	t.s.welcomed = 0;
	t_rules_net(&b);
	t_capture();
	assert_int_equal(t_send(&t.s, &b, SEALS_ALL, 0, 0), -1);
	t_captured(log, sizeof(log));
	assert_non_null(strstr(log, "RULES before HELLO"));
	assert_int_equal(t.s.nprules, 0);
	assert_int_equal(limits_held(t.s.uid, LIMIT_EVENT_IDS), 0);
}

static void
test_state_session_provider_ok_checks_its_table_size(void **state)
{
	static const uint16_t dec[2] = { 1, 0 };
	struct t_sess t;
	struct t_buf b;

	(void)state;
	t_sess_init(&t);
	/* Provider 5 has not come yet; its table says 2 events. */
	memset(&b, 0, sizeof(b));
	t_rule(&b, TRACED_RULE_ON, "a");
	t_table(&b, 5, 2, dec);
	assert_int_equal(t_send(&t.s, &b, SEALS_ALL, 0, 0), 0);
	assert_int_equal(state_session_provider_ok(&t.s, 5, 2), 1);
	assert_int_equal(state_session_provider_ok(&t.s, 5, 3), 0);
	/* No table: any size. */
	assert_int_equal(state_session_provider_ok(&t.s, 4, 9), 1);
	state_session_free(&t.s);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_state_init_takes_the_rules_the_index_kept),
		T(test_state_rule_add_appends_and_saves),
		T(test_state_rule_given_again_moves_to_the_end),
		T(test_state_rule_delete_says_whether_it_was_there),
		T(test_state_rules_reset_goes_back_to_the_defaults),
		T(test_state_rule_not_saved_applies_all_the_same),
		T(test_state_event_on_last_matching_rule_wins),
		T(test_state_event_on_provider_patterns_and_bare_names),
		T(test_state_event_on_default_is_trace_events),
		T(test_state_session_event_names_the_daemons_rule),
		T(test_state_session_rules_win_over_the_daemons),
		T(test_state_session_rules_replace_the_ones_before),
		T(test_state_session_rules_charge_ids_until_freed),
		T(test_state_session_rules_over_limit_keep_old_ones),
		T(test_state_session_rules_refuse_an_unsealed_memfd),
		T(test_state_session_rules_refuse_a_short_memfd),
		T(test_state_session_rules_refuse_bad_sizes),
		T(test_state_session_rules_refuse_a_table_naming_no_rule),
		T(test_state_session_rules_before_hello_refused),
		T(test_state_session_provider_ok_checks_its_table_size),
	};

	log_init();
	return cmocka_run_group_tests_name("state", tests, NULL, NULL);
}
