/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of daemon/index.c, the session index, on real SQLite files in a
 * scratch state directory: opening and migrating (no file, an empty v0
 * file, a file at the current version, one from a newer daemon, one that
 * is not a database), sessions from start to end with their threads,
 * streams, drops and per-event counts, the enable rules (saved, loaded,
 * imported once from the old rules file), info sessions' filters and
 * limit, and the repair after a daemon killed mid-run: a copy of the
 * database and its WAL taken while the index is open is what a SIGKILL
 * leaves behind.
 *
 * Live sessions reach the index through record.c, the session layer's
 * writer of rows, linked in.  The test provides what the rest of the
 * daemon would: the settings (cfg), the sessions list, the clocks'
 * names and now_ns(), whose CLOCK_REALTIME answers come from t_now (an
 * injectable clock), and the trace directory.  The transaction a
 * record_end() opens commits at the end of a loop turn: the tests run
 * one with t_loop().
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>
#include <sqlite3.h>

#include "daemon/config.h"
#include "daemon/dclock.h"
#include "daemon/index.h"
#include "daemon/log.h"
#include "daemon/outdir.h"
#include "daemon/pdesc.h"
#include "daemon/session.h"

static uint64_t t_now = UINT64_C(1700000000000000000);

/* In place of config.c, client.c and outdir.c. */
struct config cfg;
struct session_list sessions = TAILQ_HEAD_INITIALIZER(sessions);

const char *
outdir_path(void)
{
	return "/traces";
}

/* In place of dclock.c: the clocks' names. */
const struct dclock *
dclock_get(int dclock)
{
	static const struct dclock mono = { .name = "monotonic" };
	static const struct dclock tsc = { .name = "tsc" };

	return dclock == DCLOCK_TSC ? &tsc : &mono;
}

/* What t_index_open() gives back, and the loop. */
static struct {
	struct event_base *base;
	const char	*state_dir;
	struct rule	*rules;
	size_t		 nrules;
	uint32_t	 next_session;
} t_d;

static int
t_index_open(void)
{
	return index_open(t_d.base, t_d.state_dir, NULL, &t_d.rules,
	    &t_d.nrules, &t_d.next_session);
}

/* The clock index.c reads: CLOCK_REALTIME is t_now, the rest real. */
uint64_t
now_ns(int clock)
{
	struct timespec ts;

	if (clock == CLOCK_REALTIME)
		return t_now;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct t_state {
	char	 dir[64];		/* the state directory */
	char	 db[128];		/* dir/index.db */
};

static int
rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void
t_rules_free(void)
{
	size_t i;

	for (i = 0; i < t_d.nrules; i++)
		free(t_d.rules[i].pattern);
	free(t_d.rules);
	t_d.rules = NULL;
	t_d.nrules = 0;
}

static int
setup(void **state)
{
	struct t_state *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return -1;
	snprintf(t->dir, sizeof(t->dir), "/tmp/test_index.XXXXXX");
	if (mkdtemp(t->dir) == NULL)
		return -1;
	snprintf(t->db, sizeof(t->db), "%s/index.db", t->dir);
	memset(&t_d, 0, sizeof(t_d));
	t_d.state_dir = t->dir;
	/* No retention but where a test asks for it. */
	cfg.limit[LIMIT_INDEX_DAYS] = 36500;
	cfg.limit[LIMIT_INDEX_SESSIONS] = 100000;
	t_d.next_session = 1;
	TAILQ_INIT(&sessions);
	t_d.base = event_base_new();
	record_init();
	*state = t;
	return t_d.base != NULL ? 0 : -1;
}

static int
teardown(void **state)
{
	struct t_state *t = *state;

	index_close();
	t_rules_free();
	event_base_free(t_d.base);
	nftw(t->dir, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
	free(t);
	return 0;
}

/* One turn of the loop: the end-of-turn commit runs. */
static void
t_loop(void)
{
	event_base_loop(t_d.base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
}

/* An integer from the database, through a connection of the test's. */
static int64_t
t_query(const char *db, const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	int64_t v = -1;

	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READWRITE,
	    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

/* A text from the database: the first column of the first row. */
static void
t_query_text(const char *db, const char *sql, char *out, size_t size)
{
	sqlite3 *h;
	sqlite3_stmt *st;

	out[0] = '\0';
	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READWRITE,
	    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(out, size, "%s", sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(h);
}

static void
t_exec(const char *db, const char *sql)
{
	sqlite3 *h;

	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
}

/* ---- a session as client.c builds it -------------------------------- */

static const char *t_event_names[] = { "ev_a", "ev_b", "ev_c" };

struct t_sess {
	struct session	 s;
	struct sprov	 prov;
	struct pdesc	 pd;
	struct sprov	*provs[1];
	struct tevents_event ev[3];
	struct sring	 ring[2];
};

static struct t_sess *
t_session(uint32_t id, pid_t pid, const char *comm, unsigned nrings)
{
	struct t_sess *x = calloc(1, sizeof(*x));
	unsigned i;

	assert_non_null(x);
	x->s.id = id;
	x->s.pid = pid;
	x->s.uid = 1000;
	x->s.gid = 100;
	x->s.fd = -1;
	x->s.welcomed = 1;
	x->s.clock = DCLOCK_TSC;
	x->s.started = t_now;
	snprintf(x->s.comm, sizeof(x->s.comm), "%s", comm);
	x->s.dir = strdup("/traces/x");
	TAILQ_INIT(&x->s.rings);
	for (i = 0; i < 3; i++)
		x->ev[i].name = (char *)t_event_names[i];
	x->prov.id_base = TRACED_EVENT_ID_BASE;
	x->prov.nevents = 3;
	snprintf(x->prov.name, sizeof(x->prov.name), "prov");
	x->pd.tf.events = x->ev;
	x->pd.tf.nevents = 3;
	x->prov.d = &x->pd;
	x->prov.cls = 0;
	x->s.nclasses = 3;
	x->provs[0] = &x->prov;
	x->s.provs = x->provs;
	x->s.nprovs = 1;
	for (i = 0; i < nrings && i < 2; i++) {
		x->ring[i].s = &x->s;
		x->ring[i].index = i;
		x->ring[i].tid = pid + 1 + (pid_t)i;
		x->ring[i].order = 16;
		x->ring[i].p.st.fd = -1;
		TAILQ_INSERT_TAIL(&x->s.rings, &x->ring[i], entry);
		x->s.nrings++;
	}
	TAILQ_INSERT_TAIL(&sessions, &x->s, entry);
	return x;
}

static void
t_session_free(struct t_sess *x)
{
	unsigned i;

	TAILQ_REMOVE(&sessions, &x->s, entry);
	for (i = 0; i < 2; i++)
		free(x->ring[i].stream_path);
	record_free(&x->s);
	free(x->s.dir);
	free(x);
}

/* What index_session_get() reported, copied. */
struct t_got {
	int		 found;
	struct index_session s;
	char		 comm[64], name[64], how[32], exe[300], cmdline[300];
	char		 clock[16];
	int		 has_exe, has_cmdline, running;
	unsigned	 nthreads, nstreams, nevents;
	struct index_thread th[4];
	char		 streams[4][128];
	char		 thstate[4][16];
	char		 evname[8][64];
	uint64_t	 evcount[8];
};

static void
got_session(void *arg, const struct index_session *s)
{
	struct t_got *g = arg;

	g->found = 1;
	g->s = *s;		/* its strings are copied below */
	snprintf(g->comm, sizeof(g->comm), "%s", s->comm);
	snprintf(g->name, sizeof(g->name), "%s", s->name);
	g->running = s->how == NULL;
	snprintf(g->how, sizeof(g->how), "%s", s->how ? s->how : "");
	snprintf(g->clock, sizeof(g->clock), "%s", s->clock ? s->clock : "");
	g->has_exe = s->exe != NULL;
	snprintf(g->exe, sizeof(g->exe), "%s", s->exe ? s->exe : "");
	g->has_cmdline = s->cmdline != NULL;
	snprintf(g->cmdline, sizeof(g->cmdline), "%s",
	    s->cmdline ? s->cmdline : "");
}

static void
got_thread(void *arg, const struct index_thread *t)
{
	struct t_got *g = arg;

	if (g->nthreads < 4) {
		g->th[g->nthreads] = *t;
		g->th[g->nthreads].state = NULL;
		snprintf(g->thstate[g->nthreads], sizeof(g->thstate[0]), "%s",
		    t->state);
	}
	g->nthreads++;
}

static void
got_stream(void *arg, const struct index_stream *m)
{
	struct t_got *g = arg;

	if (g->nstreams < 4)
		snprintf(g->streams[g->nstreams], sizeof(g->streams[0]), "%s",
		    m->path);
	g->nstreams++;
}

static void
got_event(void *arg, const struct index_event *e)
{
	struct t_got *g = arg;

	if (g->nevents < 8) {
		snprintf(g->evname[g->nevents], sizeof(g->evname[0]), "%s:%s",
		    e->provider, e->name);
		g->evcount[g->nevents] = e->count;
	}
	g->nevents++;
}

static int
t_get(uint32_t id, struct t_got *g)
{
	const struct index_visitor v = { got_session, got_thread, got_stream,
	    got_event, g };

	memset(g, 0, sizeof(*g));
	return index_session_get(id, &v);
}

/* ---- opening and migrating ------------------------------------------- */

static void
test_index_open_creates_schema(void **state)
{
	struct t_state *t = *state;
	char mode[16];

	assert_int_equal(t_index_open(), 0);
	assert_true(index_available());
	assert_int_equal(t_query(t->db, "PRAGMA user_version"),
	    INDEX_SCHEMA_VERSION);
	assert_int_equal(t_query(t->db, "SELECT count(*) FROM sqlite_schema "
	    "WHERE name IN ('runs', 'trace_dirs', 'rules', 'sessions', "
	    "'threads', 'drops', 'streams', 'events', 'triggers')"), 9);
	/* This run is open, with its trace directory. */
	assert_int_equal(t_query(t->db, "SELECT count(*) FROM runs WHERE "
	    "stopped_ns IS NULL"), 1);
	assert_int_equal(t_query(t->db, "SELECT count(*) FROM trace_dirs WHERE "
	    "path = '/traces' AND how = 'start'"), 1);
	index_close();
	assert_int_equal(t_query(t->db, "SELECT count(*) FROM runs WHERE "
	    "how = 'stopped' AND stopped_ns IS NOT NULL"), 1);
	t_query_text(t->db, "PRAGMA journal_mode", mode, sizeof(mode));
	assert_string_equal(mode, "wal");
}

static void
test_index_open_migrates_empty_v0_file(void **state)
{
	struct t_state *t = *state;
	int fd;

	/* An empty file is an SQLite database of version 0. */
	fd = open(t->db, O_WRONLY | O_CREAT | O_EXCL, 0640);
	assert_true(fd != -1);
	close(fd);
	assert_int_equal(t_index_open(), 0);
	index_close();
	assert_int_equal(t_query(t->db, "PRAGMA user_version"),
	    INDEX_SCHEMA_VERSION);
	assert_int_equal(t_query(t->db, "SELECT count(*) FROM runs"), 1);
}

static void
test_index_open_keeps_current_version(void **state)
{
	struct t_state *t = *state;

	assert_int_equal(t_index_open(), 0);
	index_close();
	t_exec(t->db, "INSERT INTO sessions (id, run, pid, uid, gid, comm, "
	    "name, started_ns, updated_ns, ended_ns, how) VALUES (41, 1, 7, 0, "
	    "0, 'old', 'old', 1, 2, 3, 'exited')");
	assert_int_equal(t_index_open(), 0);
	index_close();
	assert_int_equal(t_query(t->db, "PRAGMA user_version"),
	    INDEX_SCHEMA_VERSION);
	assert_int_equal(t_query(t->db, "SELECT count(*) FROM sessions"), 1);
	assert_int_equal(t_query(t->db, "SELECT count(*) FROM runs"), 2);
	/* Session ids continue those of the index. */
	assert_int_equal(t_d.next_session, 42);
}

static void
test_index_open_refuses_newer_schema(void **state)
{
	struct t_state *t = *state;

	t_exec(t->db, "CREATE TABLE future (x); PRAGMA user_version = 99");
	assert_int_equal(t_index_open(), -1);
	assert_false(index_available());
	index_close();
	/* Left as it was, for the newer daemon. */
	assert_int_equal(t_query(t->db, "PRAGMA user_version"), 99);
	assert_int_equal(t_query(t->db, "SELECT count(*) FROM sqlite_schema "
	    "WHERE name = 'future'"), 1);
}

static void
test_index_open_sets_aside_a_file_that_is_no_database(void **state)
{
	struct t_state *t = *state;
	char junk[4096];
	int fd;
	DIR *d;
	struct dirent *de;
	int aside = 0;

	memset(junk, 'x', sizeof(junk));
	fd = open(t->db, O_WRONLY | O_CREAT | O_EXCL, 0640);
	assert_true(fd != -1);
	assert_int_equal(write(fd, junk, sizeof(junk)), sizeof(junk));
	close(fd);
	assert_int_equal(t_index_open(), 0);
	index_close();
	assert_int_equal(t_query(t->db, "PRAGMA user_version"),
	    INDEX_SCHEMA_VERSION);
	d = opendir(t->dir);
	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, "index.db.broken-", 16) == 0 &&
		    strchr(de->d_name + 16, '-') == NULL)
			aside++;
	closedir(d);
	assert_int_equal(aside, 1);
}

static void
test_index_open_once_per_state_dir(void **state)
{
	char lock[128];
	int fd;
	struct t_state *t = *state;

	snprintf(lock, sizeof(lock), "%s/index.lock", t->dir);
	fd = open(lock, O_RDWR | O_CREAT, 0640);
	assert_true(fd != -1);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	/* Another daemon holds it. */
	assert_int_equal(t_index_open(), -1);
	assert_false(index_available());
	close(fd);
}

/* ---- sessions ------------------------------------------------------ */

static void
test_index_session_start_to_end(void **state)
{
	struct t_sess *x;
	struct t_got g;
	struct cls_count counts[2] = { { 0, 5 }, { 2, 7 } };
	struct cls_count more[2] = { { 0, 1 }, { 1, 0 } };
	char self[300];
	ssize_t n;

	(void)state;
	assert_int_equal(t_index_open(), 0);
	x = t_session(t_d.next_session++, getpid(), "prog", 2);
	record_start(&x->s);		/* our own /proc entries */
	x->ring[0].events = 12;
	x->ring[0].bytes = 500;
	x->ring[0].lost[TRACED_DROP_RING_FULL] = 3;
	x->ring[0].stream_path = strdup("/traces/x/stream-1");
	x->ring[1].events = 2;
	x->ring[1].lost[TRACED_DROP_NESTED] = 1;
	x->s.lost_disconnected = 4;
	record_counts(&x->s, counts, 2);
	/* Only the classes a drain saw come back. */
	record_counts(&x->s, more, 2);
	assert_int_equal(index_sync(), 0);

	assert_int_equal(t_get(x->s.id, &g), 1);
	assert_true(g.running);
	assert_string_equal(g.comm, "prog");
	assert_int_equal(g.s.events, 14);
	assert_int_equal(g.s.lost, 3 + 1 + 4);
	assert_int_equal(g.s.lost_before_connect, 4);
	assert_int_equal(g.s.lost_by_cause[TRACED_DROP_RING_FULL], 3);
	assert_int_equal(g.s.lost_by_cause[TRACED_DROP_NESTED], 1);
	assert_string_equal(g.clock, "tsc");
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	assert_true(g.has_exe);
	assert_string_equal(g.exe, self);
	assert_true(g.has_cmdline);
	assert_non_null(strstr(g.cmdline, "test_index"));
	assert_int_equal(g.nthreads, 2);
	assert_int_equal(g.th[0].events, 12);
	assert_int_equal(g.th[0].lost[TRACED_DROP_RING_FULL], 3);
	assert_int_equal(g.th[1].lost[TRACED_DROP_NESTED], 1);
	assert_int_equal(g.th[0].ring_size, traced_ring_size(16));
	assert_string_equal(g.thstate[0], "active");
	assert_int_equal(g.nstreams, 1);
	assert_string_equal(g.streams[0], "/traces/x/stream-1");
	assert_int_equal(g.nevents, 2);		/* ev_b counted nothing */
	assert_string_equal(g.evname[0], "prov:ev_a");
	assert_int_equal(g.evcount[0], 6);
	assert_string_equal(g.evname[1], "prov:ev_c");
	assert_int_equal(g.evcount[1], 7);

	/* More counts, a new stream (trace-file set), then the end. */
	x->ring[0].events = 20;
	record_counts(&x->s, (struct cls_count[1]){ { 1, 8 } }, 1);
	free(x->ring[0].stream_path);
	x->ring[0].stream_path = strdup("/traces/y/stream-1");
	x->s.how = "disconnected";
	t_now += 5000000000u;
	record_end(&x->s);
	t_loop();
	assert_int_equal(t_get(x->s.id, &g), 1);
	assert_false(g.running);
	assert_string_equal(g.how, "disconnected");
	assert_int_equal(g.s.ended - g.s.started, 5000000000u);
	assert_int_equal(g.s.events, 22);
	assert_int_equal(g.nstreams, 2);
	assert_int_equal(g.nevents, 3);
	assert_string_equal(g.evname[1], "prov:ev_b");
	assert_int_equal(g.evcount[1], 8);
	t_session_free(x);

	assert_int_equal(t_get(9999, &g), 0);
}

static void
test_index_session_end_default_is_exited(void **state)
{
	struct t_sess *x;
	struct t_got g;

	(void)state;
	assert_int_equal(t_index_open(), 0);
	x = t_session(t_d.next_session++, 999999, "bye", 0);
	record_end(&x->s);
	t_session_free(x);
	t_loop();
	assert_int_equal(t_get(1, &g), 1);
	assert_string_equal(g.how, "exited");
	/* A process we could not see: no executable, no command line;
	 * its name is its comm. */
	assert_false(g.has_exe);
	assert_false(g.has_cmdline);
	assert_string_equal(g.name, "bye");
}

static void
test_index_session_text_is_made_printable(void **state)
{
	struct t_sess *x;
	struct t_got g;

	(void)state;
	assert_int_equal(t_index_open(), 0);
	x = t_session(t_d.next_session++, 999999, "a\x01" "b\xff" "c", 0);
	record_end(&x->s);
	t_session_free(x);
	t_loop();
	assert_int_equal(t_get(1, &g), 1);
	assert_string_equal(g.comm, "a?b?c");
}

/* ---- rules ----------------------------------------------------------- */

static void
t_rules_set(const char *const *pat, const int *on, size_t n)
{
	size_t i;

	t_rules_free();
	t_d.rules = calloc(n, sizeof(*t_d.rules));
	assert_non_null(t_d.rules);
	for (i = 0; i < n; i++) {
		t_d.rules[i].pattern = strdup(pat[i]);
		t_d.rules[i].on = on[i];
	}
	t_d.nrules = n;
}

static void
test_index_rules_round_trip(void **state)
{
	static const char *const pat[] = {
		"virtio_*", "qemu:*", "virtio_ring",
	};
	static const int on[] = { 1, 0, 0 };
	size_t i;

	(void)state;
	assert_int_equal(t_index_open(), 0);
	assert_int_equal(t_d.nrules, 0);
	t_rules_set(pat, on, 3);
	assert_int_equal(index_rules_save(t_d.rules, t_d.nrules), 0);
	index_close();
	t_rules_free();

	assert_int_equal(t_index_open(), 0);
	assert_int_equal(t_d.nrules, 3);
	for (i = 0; i < 3; i++) {
		assert_string_equal(t_d.rules[i].pattern, pat[i]);
		assert_int_equal(t_d.rules[i].on, on[i]);
	}
	/* Fewer rules replace them all. */
	assert_int_equal(index_rules_save(t_d.rules + 2, 1), 0);
	index_close();
	t_rules_free();
	assert_int_equal(t_index_open(), 0);
	assert_int_equal(t_d.nrules, 1);
	assert_string_equal(t_d.rules[0].pattern, "virtio_ring");
}

/* What index_triggers_load() gave, copied. */
struct t_trig {
	char		 glob[64];
	char		 action[16];
	uint64_t	 after_ns, every_ns;
};

static struct t_trig t_trigs[8];
static size_t t_ntrigs;

static void
t_trig_got(void *arg, const struct index_trigger *it)
{
	struct t_trig *tt = &t_trigs[t_ntrigs++];

	(void)arg;
	assert_true(t_ntrigs <= 8);
	snprintf(tt->glob, sizeof(tt->glob), "%s", it->glob);
	snprintf(tt->action, sizeof(tt->action), "%s", it->action);
	tt->after_ns = it->after_ns;
	tt->every_ns = it->every_ns;
}

static void
test_index_triggers_round_trip(void **state)
{
	const struct index_trigger trig[] = {
		{ "app:boom", "snapshot", 300000000, UINT64_C(10000000000) },
		{ "traced:crash", "snapshot", 0, UINT64_C(1000000000) },
		{ "*fail*", "snapshot", UINT64_C(600000000000),
		    UINT64_C(86400000000000) },
	};
	size_t i;

	(void)state;
	assert_int_equal(t_index_open(), 0);
	t_ntrigs = 0;
	assert_int_equal(index_triggers_load(t_trig_got, NULL), 0);
	assert_int_equal(t_ntrigs, 0);
	assert_int_equal(index_triggers_save(trig, 3), 0);
	index_close();
	t_rules_free();

	/* A restarted daemon has them, in the order they were added. */
	assert_int_equal(t_index_open(), 0);
	t_ntrigs = 0;
	assert_int_equal(index_triggers_load(t_trig_got, NULL), 0);
	assert_int_equal(t_ntrigs, 3);
	for (i = 0; i < 3; i++) {
		assert_string_equal(t_trigs[i].glob, trig[i].glob);
		assert_string_equal(t_trigs[i].action, "snapshot");
		assert_int_equal(t_trigs[i].after_ns, trig[i].after_ns);
		assert_int_equal(t_trigs[i].every_ns, trig[i].every_ns);
	}
	/* Fewer replace them all; none leaves none. */
	assert_int_equal(index_triggers_save(trig + 1, 1), 0);
	t_ntrigs = 0;
	assert_int_equal(index_triggers_load(t_trig_got, NULL), 0);
	assert_int_equal(t_ntrigs, 1);
	assert_string_equal(t_trigs[0].glob, "traced:crash");
	assert_int_equal(index_triggers_save(NULL, 0), 0);
	t_ntrigs = 0;
	assert_int_equal(index_triggers_load(t_trig_got, NULL), 0);
	assert_int_equal(t_ntrigs, 0);
}

static void
test_index_rules_imported_once_from_the_old_file(void **state)
{
	struct t_state *t = *state;
	char path[128], done[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/rules", t->dir);
	snprintf(done, sizeof(done), "%s/rules.imported", t->dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("# traced enable rules\non test_*\noff test_tick\nbogus\n"
	    "on test_tick\n", f);
	fclose(f);
	assert_int_equal(t_index_open(), 0);
	/* "on test_tick" again moves it to the end. */
	assert_int_equal(t_d.nrules, 2);
	assert_string_equal(t_d.rules[0].pattern, "test_*");
	assert_string_equal(t_d.rules[1].pattern, "test_tick");
	assert_int_equal(t_d.rules[1].on, 1);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(access(done, F_OK), 0);
	index_close();
	t_rules_free();
	assert_int_equal(t_index_open(), 0);
	assert_int_equal(t_d.nrules, 2);
	assert_string_equal(t_d.rules[1].pattern, "test_tick");
}

/* ---- info sessions ---------------------------------------------------- */

struct t_list {
	unsigned	 n;
	uint32_t	 id[16];
};

static void
list_cb(void *arg, const struct index_session *s)
{
	struct t_list *l = arg;

	if (l->n < 16)
		l->id[l->n] = s->id;
	l->n++;
}

static long
t_list(uint64_t since, pid_t pid, const char *exe, long limit,
    struct t_list *l, int *more)
{
	struct index_query q = { since, pid, exe, limit };

	memset(l, 0, sizeof(*l));
	return index_sessions_list(&q, list_cb, l, more);
}

static void
test_index_list_filters_newest_first(void **state)
{
	struct t_state *t = *state;
	struct t_list l;
	int more;

	(void)state;
	assert_int_equal(t_index_open(), 0);
	index_close();
	/* Sessions 1..6: pids 10, 20, 10, 30, 10, 20; started 100..600. */
	t_exec(t->db,
	    "INSERT INTO sessions (id, run, pid, uid, gid, comm, name, exe, "
	    "started_ns, updated_ns, ended_ns, how) VALUES "
	    "(1, 1, 10, 0, 0, 'qemu-system-x86', 'qemu-system-x86_64', "
	    "  '/usr/bin/qemu-system-x86_64', 100, 101, 101, 'exited'),"
	    "(2, 1, 20, 0, 0, 'emit', 'emit', '/opt/emit', 200, 201, 201, "
	    "  'exited'),"
	    "(3, 1, 10, 0, 0, 'emit', 'emit', '/usr/bin/emit', 300, 301, 301, "
	    "  'exited'),"
	    "(4, 1, 30, 0, 0, 'gone', 'gone', NULL, 400, 401, 401, 'exited'),"
	    "(5, 1, 10, 0, 0, 'emit', 'emit', '/opt/emit', 500, 501, 501, "
	    "  'exited'),"
	    "(6, 1, 20, 0, 0, 'qemu-system-x86', 'qemu-system-x86_64', "
	    "  '/usr/bin/qemu-system-x86_64', 600, 601, 601, 'exited')");
	assert_int_equal(t_index_open(), 0);

	assert_int_equal(t_list(0, 0, NULL, -1, &l, &more), 6);
	assert_int_equal(more, 0);
	assert_int_equal(l.id[0], 6);
	assert_int_equal(l.id[5], 1);

	assert_int_equal(t_list(0, 0, NULL, 2, &l, &more), 2);
	assert_int_equal(more, 1);
	assert_int_equal(l.id[0], 6);
	assert_int_equal(l.id[1], 5);
	assert_int_equal(t_list(0, 0, NULL, 6, &l, &more), 6);
	assert_int_equal(more, 0);

	assert_int_equal(t_list(0, 10, NULL, -1, &l, NULL), 3);
	assert_int_equal(l.id[0], 5);
	assert_int_equal(l.id[2], 1);

	/* --exe NAME: the executable's file name, or comm without one. */
	assert_int_equal(t_list(0, 0, "emit", -1, &l, NULL), 3);
	assert_int_equal(t_list(0, 0, "qemu-system-x86_64", -1, &l, NULL), 2);
	assert_int_equal(t_list(0, 0, "gone", -1, &l, NULL), 1);
	/* --exe PATH: the executable itself. */
	assert_int_equal(t_list(0, 0, "/opt/emit", -1, &l, NULL), 2);
	assert_int_equal(l.id[0], 5);
	assert_int_equal(l.id[1], 2);

	assert_int_equal(t_list(300, 0, NULL, -1, &l, NULL), 4);
	assert_int_equal(l.id[3], 3);
	assert_int_equal(t_list(300, 10, "emit", -1, &l, NULL), 2);
	assert_int_equal(t_list(300, 20, "/opt/emit", 1, &l, &more), 0);
	assert_int_equal(more, 0);
	assert_int_equal(t_list(0, 99, NULL, -1, &l, NULL), 0);
}

/* ---- a daemon killed mid-run ------------------------------------------ */

static void
t_copy(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int in, out;

	in = open(from, O_RDONLY);
	if (in == -1 && errno == ENOENT)
		return;
	assert_true(in != -1);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0640);
	assert_true(out != -1);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
}

static void
test_index_open_closes_what_a_killed_daemon_left_open(void **state)
{
	struct t_state *t = *state;
	char killed[128], from[160], to[160];
	struct t_sess *x, *y;
	struct t_got g;
	struct cls_count counts[3] = { { 0, 3 }, { 1, 3 }, { 2, 3 } };
	uint64_t written;

	assert_int_equal(t_index_open(), 0);
	x = t_session(t_d.next_session++, 999999, "done", 1);
	x->ring[0].events = 9;
	record_counts(&x->s, counts, 3);
	record_end(&x->s);
	t_session_free(x);
	y = t_session(t_d.next_session++, 999998, "running", 1);
	y->ring[0].events = 9;
	y->ring[0].lost[TRACED_DROP_RING_FULL] = 2;
	record_counts(&y->s, counts, 3);
	written = t_now + 1000;
	t_now = written;
	assert_int_equal(index_sync(), 0);	/* the last batch */
	/* Counted after the last batch: lost with the daemon. */
	y->ring[0].events = 12;
	t_now += 1000000000u;

	/* SIGKILL now: the files as they are, WAL included. */
	snprintf(killed, sizeof(killed), "%s/killed", t->dir);
	assert_int_equal(mkdir(killed, 0750), 0);
	snprintf(to, sizeof(to), "%s/index.db", killed);
	t_copy(t->db, to);
	snprintf(from, sizeof(from), "%s-wal", t->db);
	snprintf(to, sizeof(to), "%s/index.db-wal", killed);
	t_copy(from, to);
	t_session_free(y);
	index_close();
	t_rules_free();

	t_d.state_dir = killed;
	t_d.next_session = 1;
	assert_int_equal(t_index_open(), 0);
	snprintf(to, sizeof(to), "%s/index.db", killed);
	assert_int_equal(t_query(to, "SELECT count(*) FROM runs WHERE "
	    "how = 'interrupted'"), 1);
	assert_int_equal(t_d.next_session, 3);
	assert_int_equal(t_get(1, &g), 1);
	assert_string_equal(g.how, "exited");
	assert_int_equal(t_get(2, &g), 1);
	assert_string_equal(g.how, "interrupted");
	assert_int_equal(g.s.ended, written);
	assert_int_equal(g.s.events, 9);
	assert_int_equal(g.s.lost, 2);
	assert_int_equal(g.nevents, 3);
	assert_int_equal(g.nthreads, 1);
	assert_string_equal(g.thstate[0], "interrupted");
	index_close();
	t_d.state_dir = t->dir;
}

static void
test_index_trace_file_history(void **state)
{
	struct t_state *t = *state;

	assert_int_equal(t_index_open(), 0);
	assert_int_equal(index_trace_dir_set("/elsewhere", "set"), 0);
	t_loop();
	index_close();
	assert_int_equal(t_query(t->db, "SELECT count(*) FROM trace_dirs "
	    "WHERE path = '/elsewhere' AND how = 'set'"), 1);
}

/*
 * Retention: at open (and hourly), ended sessions older than
 * index-max-age days go with their rows elsewhere; running and newer
 * ones stay; past index-max-sessions, the oldest ended go.
 */
static void
test_index_prunes_old_and_surplus_sessions(void **state)
{
	struct t_state *t = *state;
	struct t_sess *old, *recent, *newest;
	struct cls_count c[1] = { { 0, 4 } };
	uint64_t day = 86400 * UINT64_C(1000000000);

	cfg.limit[LIMIT_INDEX_DAYS] = 30;
	assert_int_equal(t_index_open(), 0);
	old = t_session(t_d.next_session++, 999990, "old", 1);
	record_counts(&old->s, c, 1);
	record_end(&old->s);
	t_loop();
	t_session_free(old);
	t_now += 20 * day;
	recent = t_session(t_d.next_session++, 999991, "recent", 1);
	record_end(&recent->s);
	t_loop();
	t_session_free(recent);
	newest = t_session(t_d.next_session++, 999992, "newest", 1);
	record_end(&newest->s);
	t_loop();
	t_session_free(newest);
	index_close();
	assert_int_equal(t_query(t->db, "SELECT count(*) FROM sessions"), 3);

	t_now += 15 * day;	/* old: 35 days ago, recent: 15 */
	assert_int_equal(t_index_open(), 0);
	index_close();
	assert_int_equal(t_query(t->db, "SELECT count(*) FROM sessions"), 2);
	assert_int_equal(t_query(t->db, "SELECT count(*) FROM sessions "
	    "WHERE comm = 'old'"), 0);
	assert_int_equal(t_query(t->db, "SELECT count(*) FROM events"), 0);
	assert_int_equal(t_query(t->db, "SELECT count(*) FROM threads "
	    "WHERE session NOT IN (SELECT id FROM sessions)"), 0);

	cfg.limit[LIMIT_INDEX_SESSIONS] = 1;
	assert_int_equal(t_index_open(), 0);
	index_close();
	assert_int_equal(t_query(t->db, "SELECT count(*) FROM sessions"), 1);
	assert_int_equal(t_query(t->db, "SELECT count(*) FROM sessions "
	    "WHERE comm = 'newest'"), 1);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_index_open_creates_schema),
		T(test_index_open_migrates_empty_v0_file),
		T(test_index_open_keeps_current_version),
		T(test_index_open_refuses_newer_schema),
		T(test_index_open_sets_aside_a_file_that_is_no_database),
		T(test_index_open_once_per_state_dir),
		T(test_index_session_start_to_end),
		T(test_index_session_end_default_is_exited),
		T(test_index_session_text_is_made_printable),
		T(test_index_rules_round_trip),
		T(test_index_triggers_round_trip),
		T(test_index_rules_imported_once_from_the_old_file),
		T(test_index_list_filters_newest_first),
		T(test_index_open_closes_what_a_killed_daemon_left_open),
		T(test_index_trace_file_history),
		T(test_index_prunes_old_and_surplus_sessions),
	};

	log_init();
	return cmocka_run_group_tests_name("index", tests, NULL, NULL);
}
