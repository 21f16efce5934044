/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The session index: <state-dir>/index.db, an SQLite database of every
 * traced process (sessions, their threads, streams, per-event counts and
 * drops by cause), of the daemon's runs, of the enable rules, of the
 * snapshot triggers and of the trace-file history.  `tracectl info
 * sessions` and `info session ID` read it; state.c keeps the rules in
 * it, trigger.c the triggers.
 *
 * DESIGN
 *
 * One connection, the loop thread's, and prepared statements only (each
 * prepared once and kept).  Nothing here runs on a drain's path: the
 * drain thread counts events per class into each chunk, and the session
 * layer adds them up in memory when the chunk comes back (record.c,
 * record_counts()) and marks the session dirty.  Dirty sessions are
 * written, through index_put_*() by the writer record.c registers
 * (index_set_writer()), by a timer once a second, in one transaction;
 * a session's end, a rule change and a trace-file set are written at
 * once, in a transaction that commits at the end of the current loop
 * turn, so that many sessions ending together cost one commit.  Journal
 * in WAL mode, synchronous=NORMAL as the checkpoint thread syncs it
 * (ixckpt.c; the loop's own commits do not sync): a daemon killed at
 * any moment leaves a database that passes integrity_check and holds
 * every transaction committed before the kill (a power failure may
 * lose the last ones, never the file).
 *
 * A daemon killed with SIGKILL leaves its run and its sessions open.  The
 * next index_open() runs PRAGMA integrity_check (set aside a database
 * that fails it and starts afresh), then closes that run and its
 * sessions as "interrupted", their end time the last batch that wrote
 * them: their counts are those of that batch, at most a second short.
 *
 * index_open() does that start-up work before the daemon forks into the
 * background, on a connection it closes again: an SQLite connection must
 * not cross fork() (its POSIX locks stay with the parent).  The loop
 * thread's connection and the timer are made on first use.  A flock() on
 * <state-dir>/index.lock, which does cross fork(), keeps a second daemon
 * off the same database.
 *
 * The schema is versioned with PRAGMA user_version; migrations[v] takes
 * a database from version v to v + 1 in one transaction.  Add a version
 * by appending a script, never by editing an old one.
 *
 * Loop thread only.  If the database cannot be used the daemon runs on
 * without it: sessions are traced, rules apply but are not kept, and the
 * info commands say why.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <sqlite3.h>

#include "cause.h"
#include "config.h"
#include "dclock.h"
#include "index.h"
#include "log.h"
#include "outdir.h"
#include "repair.h"
#include "text.h"

#define INDEX_BUSY_MS		100	/* an outside reader or writer */
#define INDEX_WARN_NS		(60 * UINT64_C(1000000000))

/*
 * The schema, one script per version step.  Times are ns since the
 * Epoch (CLOCK_REALTIME); counts only grow.
 *
 *   runs        one row per daemon start; stopped_ns and how stay NULL
 *               while it runs ("stopped" or "interrupted" after)
 *   trace_dirs  where traces went: the --trace-dir of each run ("start"),
 *               every trace-file set ("set") and reload ("reload")
 *   rules       the enable rules in order (the last match wins)
 *   func_rules  the trace-func (kind func) and tracer (kind tracer) rules,
 *               each kind in order
 *   triggers    the snapshot triggers (trigger add), in the order added:
 *               what fires on the events that match glob, and its times
 *   sessions    one per traced process connection; id is the daemon's
 *               session number, unique across runs; how is NULL while it
 *               runs, then exited, disconnected, daemon-stopped or
 *               interrupted; name is the executable's file name (the
 *               process name when the executable is unknown)
 *   threads     one per ring (a traced thread) of a session
 *   drops       events lost, per ring and cause (only causes with losses)
 *   streams     every stream file a ring wrote to (a new one after each
 *               trace-file set)
 *   events      events written, per session and event id
 */
static const char *const migrations[] = {
	/* 0 -> 1 */
	"CREATE TABLE runs ("
	"  id INTEGER PRIMARY KEY,"
	"  pid INTEGER NOT NULL,"
	"  version TEXT NOT NULL,"
	"  started_ns INTEGER NOT NULL,"
	"  stopped_ns INTEGER,"
	"  how TEXT);"
	"CREATE TABLE trace_dirs ("
	"  id INTEGER PRIMARY KEY,"
	"  run INTEGER NOT NULL,"
	"  set_ns INTEGER NOT NULL,"
	"  path TEXT NOT NULL,"
	"  how TEXT NOT NULL);"
	"CREATE TABLE rules ("
	"  pos INTEGER PRIMARY KEY,"
	"  pattern TEXT NOT NULL UNIQUE,"
	"  state INTEGER NOT NULL CHECK (state IN (0, 1)));"
	"CREATE TABLE sessions ("
	"  id INTEGER PRIMARY KEY,"
	"  run INTEGER NOT NULL,"
	"  pid INTEGER NOT NULL,"
	"  uid INTEGER NOT NULL,"
	"  gid INTEGER NOT NULL,"
	"  comm TEXT NOT NULL,"
	"  name TEXT NOT NULL,"
	"  exe TEXT,"
	"  cmdline TEXT,"
	"  clock TEXT,"
	"  dir TEXT,"
	"  started_ns INTEGER NOT NULL,"
	"  updated_ns INTEGER NOT NULL,"
	"  ended_ns INTEGER,"
	"  how TEXT,"
	"  events INTEGER NOT NULL DEFAULT 0,"
	"  lost INTEGER NOT NULL DEFAULT 0,"
	"  lost_before_connect INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX sessions_by_start ON sessions (started_ns);"
	"CREATE INDEX sessions_by_pid ON sessions (pid, started_ns);"
	"CREATE INDEX sessions_by_name ON sessions (name, started_ns);"
	"CREATE INDEX sessions_by_exe ON sessions (exe, started_ns);"
	"CREATE INDEX sessions_open ON sessions (id) WHERE ended_ns IS NULL;"
	"CREATE TABLE threads ("
	"  session INTEGER NOT NULL,"
	"  ring INTEGER NOT NULL,"
	"  tid INTEGER NOT NULL,"
	"  ring_size INTEGER NOT NULL,"
	"  events INTEGER NOT NULL,"
	"  bytes INTEGER NOT NULL,"
	"  lost_records INTEGER NOT NULL,"
	"  state TEXT NOT NULL,"
	"  PRIMARY KEY (session, ring)) WITHOUT ROWID;"
	"CREATE TABLE drops ("
	"  session INTEGER NOT NULL,"
	"  ring INTEGER NOT NULL,"
	"  cause TEXT NOT NULL,"
	"  count INTEGER NOT NULL,"
	"  PRIMARY KEY (session, ring, cause)) WITHOUT ROWID;"
	"CREATE TABLE streams ("
	"  session INTEGER NOT NULL,"
	"  path TEXT NOT NULL,"
	"  ring INTEGER NOT NULL,"
	"  tid INTEGER NOT NULL,"
	"  seen_ns INTEGER NOT NULL,"
	"  PRIMARY KEY (session, path)) WITHOUT ROWID;"
	"CREATE TABLE events ("
	"  session INTEGER NOT NULL,"
	"  id INTEGER NOT NULL,"
	"  provider TEXT NOT NULL,"
	"  name TEXT NOT NULL,"
	"  count INTEGER NOT NULL,"
	"  PRIMARY KEY (session, id)) WITHOUT ROWID;"
	"PRAGMA user_version = 1;",
	/* 1 -> 2: function tracing's rules (trace-func, tracer) */
	"CREATE TABLE func_rules ("
	"  kind TEXT NOT NULL CHECK (kind IN ('func', 'tracer')),"
	"  pos INTEGER NOT NULL,"
	"  pattern TEXT NOT NULL,"
	"  state INTEGER NOT NULL CHECK (state IN (0, 1)),"
	"  PRIMARY KEY (kind, pos)) WITHOUT ROWID;"
	"PRAGMA user_version = 2;",
	/* 2 -> 3: the status a process gave exit() (NULL: not said) */
	"ALTER TABLE sessions ADD COLUMN exit_status INTEGER;"
	"PRAGMA user_version = 3;",
	/* 3 -> 4: the flight recorder's snapshots */
	"CREATE TABLE snapshots ("
	"  id INTEGER PRIMARY KEY,"
	"  time_ns INTEGER NOT NULL,"
	"  dir TEXT NOT NULL,"
	"  reason TEXT NOT NULL,"
	"  sessions INTEGER NOT NULL,"
	"  events INTEGER NOT NULL,"
	"  bytes INTEGER NOT NULL,"
	"  uid INTEGER);"		/* whose, charged to its quota; NULL:
					   every user's (tracectl snapshot) */
	"PRAGMA user_version = 4;",
	/* 4 -> 5: the snapshot triggers (trigger.c), in the order added */
	"CREATE TABLE triggers ("
	"  pos INTEGER PRIMARY KEY,"
	"  glob TEXT NOT NULL UNIQUE,"
	"  action TEXT NOT NULL,"
	"  after_ns INTEGER NOT NULL CHECK (after_ns >= 0),"
	"  every_ns INTEGER NOT NULL CHECK (every_ns > 0));"
	"PRAGMA user_version = 5;",
};

_Static_assert(sizeof(migrations) / sizeof(migrations[0]) ==
    INDEX_SCHEMA_VERSION, "one migration per schema version");

/* The statements the loop thread's connection keeps prepared. */
enum {
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_SESSION_PUT,
	ST_THREAD_PUT,
	ST_DROP_PUT,
	ST_STREAM_PUT,
	ST_EVENT_PUT,
	ST_RULES_CLEAR,
	ST_RULE_PUT,
	ST_TRACE_DIR_PUT,
	ST_RUN_STOP,
	ST_SESSION_GET,
	ST_SESSION_CAUSES,
	ST_THREADS_GET,
	ST_THREAD_DROPS,
	ST_STREAMS_GET,
	ST_EVENTS_GET,
	ST_COUNT
};

#define SESSION_COLS	"id, run, pid, uid, gid, comm, name, exe, cmdline, " \
	"clock, dir, how, started_ns, ended_ns, events, lost, " \
	"lost_before_connect, exit_status"

static const char *const stmt_sql[ST_COUNT] = {
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	[ST_SESSION_PUT] =
	    "INSERT INTO sessions (id, run, pid, uid, gid, comm, name, exe, "
	    "cmdline, clock, dir, started_ns, updated_ns, ended_ns, how, "
	    "events, lost, lost_before_connect, exit_status) VALUES (?1, ?2, "
	    "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
	    "?17, ?18, ?19) "
	    "ON CONFLICT (id) DO UPDATE SET comm = excluded.comm, "
	    "name = excluded.name, clock = excluded.clock, dir = excluded.dir, "
	    "updated_ns = excluded.updated_ns, ended_ns = excluded.ended_ns, "
	    "how = excluded.how, events = excluded.events, "
	    "exit_status = excluded.exit_status, "
	    "lost = excluded.lost, "
	    "lost_before_connect = excluded.lost_before_connect",
	[ST_THREAD_PUT] =
	    "INSERT INTO threads (session, ring, tid, ring_size, events, "
	    "bytes, lost_records, state) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
	    "?8) ON CONFLICT (session, ring) DO UPDATE SET "
	    "events = excluded.events, bytes = excluded.bytes, "
	    "lost_records = excluded.lost_records, state = excluded.state",
	[ST_DROP_PUT] =
	    "INSERT INTO drops (session, ring, cause, count) VALUES (?1, ?2, "
	    "?3, ?4) ON CONFLICT (session, ring, cause) DO UPDATE SET "
	    "count = excluded.count",
	[ST_STREAM_PUT] =
	    "INSERT INTO streams (session, path, ring, tid, seen_ns) VALUES "
	    "(?1, ?2, ?3, ?4, ?5) ON CONFLICT (session, path) DO NOTHING",
	[ST_EVENT_PUT] =
	    "INSERT INTO events (session, id, provider, name, count) VALUES "
	    "(?1, ?2, ?3, ?4, ?5) ON CONFLICT (session, id) DO UPDATE SET "
	    "count = excluded.count",
	[ST_RULES_CLEAR] = "DELETE FROM rules",
	[ST_RULE_PUT] = "INSERT INTO rules (pos, pattern, state) VALUES "
	    "(?1, ?2, ?3)",
	[ST_TRACE_DIR_PUT] = "INSERT INTO trace_dirs (run, set_ns, path, how) "
	    "VALUES (?1, ?2, ?3, ?4)",
	[ST_RUN_STOP] = "UPDATE runs SET stopped_ns = ?2, how = 'stopped' "
	    "WHERE id = ?1",
	[ST_SESSION_GET] = "SELECT " SESSION_COLS " FROM sessions "
	    "WHERE id = ?1",
	[ST_SESSION_CAUSES] = "SELECT cause, sum(count) FROM drops "
	    "WHERE session = ?1 GROUP BY cause",
	[ST_THREADS_GET] = "SELECT ring, tid, ring_size, events, bytes, "
	    "lost_records, state FROM threads WHERE session = ?1 ORDER BY ring",
	[ST_THREAD_DROPS] = "SELECT cause, count FROM drops "
	    "WHERE session = ?1 AND ring = ?2",
	[ST_STREAMS_GET] = "SELECT ring, tid, path, seen_ns FROM streams "
	    "WHERE session = ?1 ORDER BY seen_ns, ring, path",
	[ST_EVENTS_GET] = "SELECT id, provider, name, count FROM events "
	    "WHERE session = ?1 ORDER BY provider, name, id",
};

/* info sessions: one statement per combination of filters. */
#define LIST_PID	0x1u
#define LIST_NAME	0x2u
#define LIST_PATH	0x4u
#define LIST_VARIANTS	8

/* The index; loop thread only. */
struct index {
	char		*path;		/* owned: <state-dir>/index.db */
	char		*at;		/* owned: the same, through the state
					   directory's descriptor: opened */
	int		 lock_fd;	/* flock()ed: our database */
	int		 usable;	/* index_open() made it ready */
	sqlite3		*db;		/* the loop's connection, once used */
	sqlite3_stmt	*st[ST_COUNT];	/* prepared on first use */
	sqlite3_stmt	*list[LIST_VARIANTS];
	int64_t		 run;		/* this run's row in runs */
	int		 in_txn;	/* BEGIN done, COMMIT to come */
	int		 txn_failed;	/* a write failed: roll back */
	struct event	*ev_batch;	/* every INDEX_BATCH_MS */
	struct event	*ev_commit;	/* the end of this loop turn */
	uint64_t	 warn_next;	/* ns, CLOCK_MONOTONIC */
	struct event_base *base;	/* borrowed: the loop's */
	char		*state_dir;	/* owned: for messages */
	char		*state_at;	/* owned: the same, through its
					   descriptor when it can be */
	struct rule	*rules;		/* loaded at open, for the caller */
	size_t		 nrules;
	struct index_writer writer;	/* who writes the live sessions */
	uint32_t	 next_session;	/* after the index's last */
};

static struct index ix = { .lock_fd = -1 };

/* The state directory, reached through its descriptor when it can be. */
static const char *
ix_state_at(void)
{
	return ix.state_at != NULL ? ix.state_at : ix.state_dir;
}

static int	ix_open(void);

/* ---- helpers ------------------------------------------------------- */

static void
ix_warn(const char *what)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	/* A full disk would say so every second: once a minute is news. */
	if (now < ix.warn_next)
		return;
	ix.warn_next = now + INDEX_WARN_NS;
	log_warnx("index %s: %s: %s", ix.path, what,
	    ix.db != NULL ? sqlite3_errmsg(ix.db) : "not open");
}

static int
bind_text(sqlite3_stmt *st, int i, const char *s)
{
	char *c;
	size_t n;

	if (s == NULL)
		return sqlite3_bind_null(st, i);
	n = strlen(s);
	c = malloc(n + 1);
	if (c == NULL)
		return SQLITE_NOMEM;
	memcpy(c, s, n + 1);
	text_clean(c, n);
	return sqlite3_bind_text(st, i, c, (int)n, free);
}

static int
bind_u64(sqlite3_stmt *st, int i, uint64_t v)
{
	return sqlite3_bind_int64(st, i, (sqlite3_int64)(v > INT64_MAX ?
	    INT64_MAX : v));
}

static uint64_t
col_u64(sqlite3_stmt *st, int i)
{
	sqlite3_int64 v = sqlite3_column_int64(st, i);

	return v < 0 ? 0 : (uint64_t)v;
}

static const char *
col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

/* Step a statement that returns no row; reset it.  0 or -1. */
static int
step_done(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/*
 * Prepare, run to the end and finalize a statement without parameters
 * on a start-up connection.  If 'out' is not NULL it gets column 0 of
 * the first row (0 if none).  0 or -1.
 */
static int
once(sqlite3 *db, const char *sql, int64_t *out)
{
	sqlite3_stmt *st;
	int rc;

	if (out != NULL)
		*out = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (out != NULL) {
			*out = sqlite3_column_int64(st, 0);
			out = NULL;
		}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Run every statement of a constant script, in order.  0 or -1. */
static int
script(sqlite3 *db, const char *sql)
{
	const char *tail = sql;
	sqlite3_stmt *st;
	int rc;

	while (*tail != '\0') {
		if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK)
			return -1;
		if (st == NULL)
			continue;	/* only blanks were left */
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			;
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return -1;
	}
	return 0;
}

/* ---- opening, migrating, recovering ------------------------------- */

/*
 * Bring the database from its user_version to INDEX_SCHEMA_VERSION, one
 * transaction per step.  A database newer than this daemon is left
 * alone.  0 or -1 (logged).
 */
static int
ix_migrate(sqlite3 *db)
{
	int64_t v;

	if (once(db, "PRAGMA user_version", &v) == -1) {
		log_warnx("index %s: %s", ix.path, sqlite3_errmsg(db));
		return -1;
	}
	if (v > INDEX_SCHEMA_VERSION) {
		log_warnx("index %s has schema version %" PRId64 ", newer than "
		    "this traced's (%d): not using it (run the newer traced, "
		    "or move the file away)", ix.path, v, INDEX_SCHEMA_VERSION);
		return -1;
	}
	for (; v < INDEX_SCHEMA_VERSION; v++) {
		if (script(db, "BEGIN IMMEDIATE") == -1 ||
		    script(db, migrations[v]) == -1 ||
		    script(db, "COMMIT") == -1) {
			log_warnx("index %s: migrating from version %" PRId64
			    ": %s", ix.path, v, sqlite3_errmsg(db));
			(void)script(db, "ROLLBACK");
			return -1;
		}
		log_info("index %s: schema version %" PRId64, ix.path, v + 1);
	}
	return 0;
}

/*
 * Open path with the pragmas every connection of ours has.  Returns
 * SQLITE_OK, or the primary result code of the failure (logged).
 */
static int
ix_connect(const char *path, sqlite3 **out)
{
	sqlite3 *db = NULL;
	int rc;

	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_busy_timeout(db, INDEX_BUSY_MS);
		if (once(db, "PRAGMA journal_mode = WAL", NULL) == 0 &&
		    once(db, "PRAGMA synchronous = NORMAL", NULL) == 0) {
			*out = db;
			return SQLITE_OK;
		}
		rc = sqlite3_errcode(db);
	}
	log_warnx("index %s: %s", path, db != NULL ? sqlite3_errmsg(db) :
	    "out of memory");
	sqlite3_close(db);
	return rc & 0xff;
}

/* Does this failure say that the file is not (or no longer) a database? */
static int
damaged(int rc)
{
	rc &= 0xff;
	return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB;
}

/*
 * After a run that did not stop cleanly: is the database sound?  1 yes,
 * 0 no (logged), -1 cannot tell.
 */
static int
ix_check(sqlite3 *db)
{
	sqlite3_stmt *st;
	const char *first = NULL;
	int rc, ok = 1;

	if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st,
	    NULL) != SQLITE_OK)
		return 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		first = col_text(st, 0);
		if (first == NULL || strcmp(first, "ok") != 0) {
			log_warnx("index %s: integrity_check: %s", ix.path,
			    first != NULL ? first : "?");
			ok = 0;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB ? 0 : -1;
	if (ok)
		log_info("index %s: integrity_check ok", ix.path);
	return ok;
}

/* Move a broken database (and its WAL) out of the way. */
static void
ix_set_aside(void)
{
	char to[PATH_MAX], from[PATH_MAX];
	const char *sfx[] = { "", "-wal", "-shm" };
	time_t now = time(NULL);
	size_t i;

	for (i = 0; i < 3; i++) {
		snprintf(from, sizeof(from), "%s%s", ix.at, sfx[i]);
		snprintf(to, sizeof(to), "%s.broken-%lld%s", ix.at,
		    (long long)now, sfx[i]);
		if (rename(from, to) == -1 && errno != ENOENT)
			log_warn("index: rename %s", from);
	}
	log_warnx("index %s was damaged and is kept as %s.broken-%lld; a new "
	    "one starts empty: the session history and the enable rules "
	    "before now are in the old file", ix.path, ix.path,
	    (long long)now);
}

/* Append a rule, or move an earlier rule of the same pattern to the end. */
static int
rule_push(struct rule **rules, size_t *n, const char *pattern, int on)
{
	struct rule *nr;
	size_t i;

	for (i = 0; i < *n; i++)
		if (strcmp((*rules)[i].pattern, pattern) == 0) {
			free((*rules)[i].pattern);
			memmove(&(*rules)[i], &(*rules)[i + 1],
			    (*n - i - 1) * sizeof(**rules));
			(*n)--;
			break;
		}
	nr = reallocarray(*rules, *n + 1, sizeof(*nr));
	if (nr == NULL)
		return -1;
	*rules = nr;
	if ((nr[*n].pattern = strdup(pattern)) == NULL)
		return -1;
	nr[*n].on = on;
	(*n)++;
	return 0;
}

/*
 * The rules file of older daemons (<state-dir>/rules: "on|off PATTERN"
 * lines) into ix.rules.  1 if there was one, 0 if not, -1 on error.
 */
static int
rules_file_read(const char *path)
{
	char line[512];
	unsigned lineno = 0;
	FILE *f;

	f = fopen(path, "re");
	if (f == NULL) {
		if (errno == ENOENT)
			return 0;
		log_warn("%s", path);
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = line, *pat;
		int on;

		lineno++;
		p[strcspn(p, "\n")] = '\0';
		if (*p == '#' || *p == '\0')
			continue;
		if (strncmp(p, "on ", 3) == 0) {
			on = 1;
			pat = p + 3;
		} else if (strncmp(p, "off ", 4) == 0) {
			on = 0;
			pat = p + 4;
		} else {
			log_warnx("%s:%u: expected 'on PATTERN' or "
			    "'off PATTERN'; line ignored", path, lineno);
			continue;
		}
		if (*pat == '\0' || rule_push(&ix.rules, &ix.nrules, pat,
		    on) == -1)
			log_warnx("%s:%u: line ignored", path, lineno);
	}
	fclose(f);
	return 1;
}

/* Write rules[0..n) as the rules table, in the caller's transaction. */
static int
rules_write(sqlite3 *db, const struct rule *rules, size_t n)
{
	sqlite3_stmt *st;
	size_t i;
	int rc = 0;

	if (script(db, "DELETE FROM rules") == -1 ||
	    sqlite3_prepare_v2(db, "INSERT INTO rules (pos, pattern, state) "
	    "VALUES (?1, ?2, ?3)", -1, &st, NULL) != SQLITE_OK)
		return -1;
	for (i = 0; i < n && rc == 0; i++) {
		sqlite3_bind_int64(st, 1, (sqlite3_int64)i);
		sqlite3_bind_text(st, 2, rules[i].pattern, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 3, rules[i].on != 0);
		rc = step_done(st);
	}
	sqlite3_finalize(st);
	return rc;
}

/*
 * The rules: from the old rules file the first time (imported, then
 * renamed to rules.imported), from the index after that.
 */
static int
ix_rules_load(sqlite3 *db)
{
	char path[PATH_MAX], done[PATH_MAX];
	sqlite3_stmt *st;
	int rc;

	snprintf(path, sizeof(path), "%s/rules", ix_state_at());
	snprintf(done, sizeof(done), "%s/rules.imported", ix_state_at());
	if (rules_file_read(path) == 1) {
		if (script(db, "BEGIN IMMEDIATE") == -1 ||
		    rules_write(db, ix.rules, ix.nrules) == -1 ||
		    script(db, "COMMIT") == -1) {
			log_warnx("index %s: importing %s: %s", ix.path, path,
			    sqlite3_errmsg(db));
			(void)script(db, "ROLLBACK");
			return -1;
		}
		if (rename(path, done) == -1)
			log_warn("rename %s", path);
		log_info("index: %zu rules imported from %s (now %s)",
		    ix.nrules, path, done);
		return 0;
	}
	if (sqlite3_prepare_v2(db, "SELECT pattern, state FROM rules ORDER BY "
	    "pos", -1, &st, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (col_text(st, 0) != NULL && rule_push(&ix.rules,
		    &ix.nrules, col_text(st, 0), sqlite3_column_int(st, 1)) ==
		    -1)
			rc = SQLITE_NOMEM;
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

#define INDEX_PRUNE_BATCH	2000	/* sessions removed at most at once */
#define INDEX_PRUNE_NS		(3600 * UINT64_C(1000000000))

/*
 * Retention: forget the ended sessions older than index-max-age days,
 * and the oldest ended ones beyond index-max-sessions, with their
 * threads, drops, streams and events, and the runs no session refers
 * to any more.  At most INDEX_PRUNE_BATCH sessions at a time, so that
 * the loop never waits long; the next call goes on.  Returns how many
 * sessions went, or -1 (logged).
 */
static int
ix_prune(sqlite3 *db)
{
	uint64_t now = now_ns(CLOCK_REALTIME);
	uint64_t age = cfg.limit[LIMIT_INDEX_DAYS] * 86400 *
	    UINT64_C(1000000000);
	sqlite3_stmt *st = NULL;
	int n;

	if (script(db, "BEGIN IMMEDIATE") == -1)
		return -1;
	if (script(db, "CREATE TEMP TABLE IF NOT EXISTS prune "
	    "(id INTEGER PRIMARY KEY); DELETE FROM temp.prune") == -1)
		goto rollback;
	if (sqlite3_prepare_v2(db, "INSERT INTO temp.prune SELECT id FROM "
	    "sessions WHERE ended_ns IS NOT NULL AND (ended_ns < ?1 OR id "
	    "NOT IN (SELECT id FROM sessions ORDER BY id DESC LIMIT ?2)) "
	    "ORDER BY id LIMIT ?3", -1, &st, NULL) != SQLITE_OK)
		goto rollback;
	bind_u64(st, 1, now > age ? now - age : 0);
	sqlite3_bind_int64(st, 2,
	    (int64_t)cfg.limit[LIMIT_INDEX_SESSIONS]);
	sqlite3_bind_int(st, 3, INDEX_PRUNE_BATCH);
	if (step_done(st) == -1)
		goto rollback;
	sqlite3_finalize(st);
	st = NULL;
	n = sqlite3_changes(db);
	if (n > 0 && (script(db, "DELETE FROM threads WHERE session IN "
	    "(SELECT id FROM temp.prune)") == -1 ||
	    script(db, "DELETE FROM drops WHERE session IN "
	    "(SELECT id FROM temp.prune)") == -1 ||
	    script(db, "DELETE FROM streams WHERE session IN "
	    "(SELECT id FROM temp.prune)") == -1 ||
	    script(db, "DELETE FROM events WHERE session IN "
	    "(SELECT id FROM temp.prune)") == -1 ||
	    script(db, "DELETE FROM sessions WHERE id IN "
	    "(SELECT id FROM temp.prune)") == -1))
		goto rollback;
	if (script(db, "DELETE FROM trace_dirs WHERE run NOT IN (SELECT run "
	    "FROM sessions) AND run IN (SELECT id FROM runs WHERE stopped_ns "
	    "IS NOT NULL)") == -1 ||
	    script(db, "DELETE FROM runs WHERE stopped_ns IS NOT NULL AND "
	    "id NOT IN (SELECT run FROM sessions)") == -1 ||
	    script(db, "COMMIT") == -1)
		goto rollback;
	if (n > 0)
		log_info("index %s: forgot %d ended session%s (older than "
		    "%llu days, or beyond the newest %llu: index-max-age, "
		    "index-max-sessions)", ix.path, n, n == 1 ? "" : "s",
		    (unsigned long long)cfg.limit[LIMIT_INDEX_DAYS],
		    (unsigned long long)cfg.limit[LIMIT_INDEX_SESSIONS]);
	return n;
rollback:
	log_warnx("index %s: pruning: %s", ix.path, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	(void)script(db, "ROLLBACK");
	return -1;
}

/*
 * A run that was killed may have left a stream ending in part of a
 * packet, or metadata in part of a declaration (repair.c): cut the
 * files of its open sessions back to what is whole, before anything
 * reads them.  Best effort; logged where something was cut.
 */
static void
ix_repair_killed(sqlite3 *db)
{
	sqlite3_stmt *st;
	char dir[PATH_MAX], last[PATH_MAX] = "";
	const char *path, *slash;

	if (sqlite3_prepare_v2(db, "SELECT path FROM streams WHERE session "
	    "IN (SELECT id FROM sessions WHERE ended_ns IS NULL) ORDER BY "
	    "path", -1, &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW) {
		path = (const char *)sqlite3_column_text(st, 0);
		if (path == NULL || (slash = strrchr(path, '/')) == NULL ||
		    (size_t)(slash - path) >= sizeof(dir))
			continue;
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
		if (strcmp(dir, last) != 0) {
			repair_session_files(dir, NULL);
			snprintf(last, sizeof(last), "%s", dir);
		}
		repair_session_files(dir, path);
	}
	sqlite3_finalize(st);
}

/*
 * Start-up work on a connection of its own: check after a crash, migrate,
 * close what a killed run left open, record this run, load the rules.
 * 0 or -1 (logged).
 */
static int
ix_start(sqlite3 *db)
{
	int64_t n, maxid;
	uint64_t now = now_ns(CLOCK_REALTIME);
	sqlite3_stmt *st;

	if (ix_migrate(db) == -1)
		return -1;
	ix_repair_killed(db);
	if (script(db, "BEGIN IMMEDIATE") == -1)
		goto fail;
	/*
	 * We hold the lock: a run or a session still open was left so by a
	 * daemon that died.  Its end is the last time it was written.
	 */
	if (script(db, "UPDATE runs SET how = 'interrupted', stopped_ns = "
	    "(SELECT max(coalesce(max(s.updated_ns), 0), runs.started_ns) "
	    "FROM sessions s WHERE s.run = runs.id) "
	    "WHERE stopped_ns IS NULL") == -1 ||
	    script(db, "UPDATE threads SET state = 'interrupted' "
	    "WHERE state = 'active' AND session IN "
	    "(SELECT id FROM sessions WHERE ended_ns IS NULL)") == -1 ||
	    script(db, "UPDATE sessions SET how = 'interrupted', "
	    "ended_ns = updated_ns WHERE ended_ns IS NULL") == -1)
		goto rollback;
	n = sqlite3_changes(db);
	if (sqlite3_prepare_v2(db, "INSERT INTO runs (pid, version, "
	    "started_ns) VALUES (?1, ?2, ?3)", -1, &st, NULL) != SQLITE_OK)
		goto rollback;
	sqlite3_bind_int64(st, 1, (int64_t)getpid());
	sqlite3_bind_text(st, 2, TRACED_VERSION, -1, SQLITE_STATIC);
	bind_u64(st, 3, now);
	if (step_done(st) == -1) {
		sqlite3_finalize(st);
		goto rollback;
	}
	sqlite3_finalize(st);
	ix.run = sqlite3_last_insert_rowid(db);
	if (sqlite3_prepare_v2(db, "INSERT INTO trace_dirs (run, set_ns, path, "
	    "how) VALUES (?1, ?2, ?3, 'start')", -1, &st, NULL) != SQLITE_OK)
		goto rollback;
	sqlite3_bind_int64(st, 1, ix.run);
	bind_u64(st, 2, now);
	bind_text(st, 3, outdir_path());
	if (step_done(st) == -1) {
		sqlite3_finalize(st);
		goto rollback;
	}
	sqlite3_finalize(st);
	if (script(db, "COMMIT") == -1)
		goto rollback;
	if (n > 0)
		log_warnx("index: %" PRId64 " session%s of a daemon that did "
		    "not stop cleanly marked interrupted (their counts are "
		    "those of the last second before it died)", n,
		    n == 1 ? "" : "s");

	/* Session ids go on from the last run's: one id, one session. */
	if (once(db, "SELECT max(id) FROM sessions", &maxid) == -1)
		goto fail;
	if (maxid >= 0 && maxid < UINT32_MAX)
		ix.next_session = (uint32_t)maxid + 1;

	if (ix_rules_load(db) == -1)
		goto fail;
	(void)ix_prune(db);
	return 0;
rollback:
	log_warnx("index %s: %s", ix.path, sqlite3_errmsg(db));
	(void)script(db, "ROLLBACK");
	return -1;
fail:
	log_warnx("index %s: %s", ix.path, sqlite3_errmsg(db));
	return -1;
}

/*
 * Open <state-dir>/index.db at start-up, before the daemon forks: take
 * the state directory's lock, check the database if the last run did
 * not stop cleanly (a damaged one is set aside and replaced), migrate it
 * to INDEX_SCHEMA_VERSION, close the sessions a killed daemon left open
 * as "interrupted", record this run, and load the enable rules
 * (importing the old <state-dir>/rules file the first time).
 * 'state_at' reaches the state directory through its descriptor (NULL:
 * 'state_dir' itself); the loop's connection is made on first use, in
 * 'base'.  The rules loaded go to *rules (the caller's to free) and the
 * first session id that continues the index's to *next_session (1 when
 * the index is new).  Returns 0, or -1 (logged) when the daemon must
 * run without the index (the rules then come from the old file if
 * there is one).  Loop thread, once.
 */
int
index_open(struct event_base *base, const char *state_dir,
    const char *state_at, struct rule **rules, size_t *nrules,
    uint32_t *next_session)
{
	int rc;

	*rules = NULL;		/* failed: no rules kept, ids from 1 */
	*nrules = 0;
	*next_session = 1;
	ix.base = base;
	ix.next_session = 1;
	if ((ix.state_dir = strdup(state_dir)) == NULL ||
	    (state_at != NULL && (ix.state_at = strdup(state_at)) == NULL))
		return -1;
	rc = ix_open();
	*rules = ix.rules;
	*nrules = ix.nrules;
	*next_session = ix.next_session;
	ix.rules = NULL;
	ix.nrules = 0;
	return rc;
}

static int
ix_open(void)
{
	char lock[PATH_MAX];
	sqlite3 *db = NULL;
	int64_t open_runs = 0, v;
	int rc;

	if (asprintf(&ix.path, "%s/%s", ix.state_dir, INDEX_FILE) ==
	    -1) {
		ix.path = NULL;
		return -1;
	}
	if (asprintf(&ix.at, "%s/%s", ix_state_at(), INDEX_FILE) == -1) {
		ix.at = NULL;
		return -1;
	}
	snprintf(lock, sizeof(lock), "%s/index.lock", ix_state_at());
	ix.lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
	if (ix.lock_fd == -1) {
		log_warn("index: %s", lock);
		goto without;
	}
	if (flock(ix.lock_fd, LOCK_EX | LOCK_NB) == -1) {
		log_warnx("index %s: another traced uses this state directory",
		    ix.path);
		goto without;
	}
	if ((rc = ix_connect(ix.at, &db)) != SQLITE_OK) {
		if (damaged(rc))
			goto aside;
		goto without;
	}
	/* A run that did not stop was killed: is the file sound? */
	if (once(db, "PRAGMA user_version", &v) == -1 ||
	    (v >= 1 && v <= INDEX_SCHEMA_VERSION && once(db, "SELECT count(*) "
	    "FROM runs WHERE stopped_ns IS NULL", &open_runs) == -1))
		goto failed;
	if (open_runs > 0 && (rc = ix_check(db)) != 1) {
		if (rc == 0)
			goto aside;
		goto failed;
	}
	if (ix_start(db) == -1)
		goto failed;
	sqlite3_close(db);
	ix.usable = 1;
	return 0;
failed:
	if (!damaged(sqlite3_errcode(db)))
		goto without;
aside:
	/* Not a database, or a damaged one: keep it aside, start afresh. */
	sqlite3_close(db);
	db = NULL;
	ix_set_aside();
	if (ix_connect(ix.at, &db) == SQLITE_OK && ix_start(db) == 0) {
		sqlite3_close(db);
		ix.usable = 1;
		return 0;
	}
without:
	sqlite3_close(db);
	log_warnx("running without the session index: 'info sessions' cannot "
	    "answer and rule changes are not kept");
	if (ix.nrules == 0) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/rules", ix_state_at());
		(void)rules_file_read(path);
	}
	if (ix.lock_fd != -1)
		close(ix.lock_fd);
	ix.lock_fd = -1;
	return -1;
}

/* ---- the loop's connection ---------------------------------------- */

static void
ix_commit_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	(void)index_commit();
}

static void ix_batch_cb(int fd, short what, void *arg);

/* The loop thread's connection, opened on first use.  NULL if none. */
static sqlite3 *
ix_db(void)
{
	struct timeval tv = { INDEX_BATCH_MS / 1000,
	    (INDEX_BATCH_MS % 1000) * 1000 };

	if (ix.db != NULL || !ix.usable)
		return ix.db;
	if (ix_connect(ix.at, &ix.db) == -1) {
		ix.usable = 0;
		return NULL;
	}
	/* Checkpoints (and so every wait for the disk) on a thread of
	 * their own (ixckpt.c); here if it cannot start. */
	if (ixckpt_start(ix.at, 0) == 0) {
		/* Replaces SQLite's automatic checkpoint (also a WAL hook). */
		sqlite3_wal_hook(ix.db, ixckpt_wal_hook, NULL);
		if (once(ix.db, "PRAGMA synchronous = OFF", NULL) == -1)
			ix_warn("leaving syncs to the checkpoint thread");
	}
	if (ix.base != NULL) {
		ix.ev_commit = event_new(ix.base, -1, 0, ix_commit_cb, NULL);
		ix.ev_batch = event_new(ix.base, -1, EV_PERSIST, ix_batch_cb,
		    NULL);
		if (ix.ev_batch != NULL)
			event_add(ix.ev_batch, &tv);
	}
	return ix.db;
}

static sqlite3_stmt *
ix_stmt(int which)
{
	sqlite3 *db = ix_db();

	if (db == NULL)
		return NULL;
	if (ix.st[which] == NULL && sqlite3_prepare_v3(db, stmt_sql[which],
	    -1, SQLITE_PREPARE_PERSISTENT, &ix.st[which], NULL) != SQLITE_OK) {
		log_warnx("index: preparing \"%.40s...\": %s", stmt_sql[which],
		    sqlite3_errmsg(db));
		ix.st[which] = NULL;
	}
	return ix.st[which];
}

/*
 * Open a transaction if none is.  It commits when the caller says
 * (index_commit()) or, at the latest, at the end of this loop turn.
 * 0, or -1 (no index, or it cannot be written).
 */
int
index_begin(void)
{
	sqlite3_stmt *st;

	if (ix.in_txn)
		return 0;
	if ((st = ix_stmt(ST_BEGIN)) == NULL || step_done(st) == -1) {
		ix_warn("cannot write");
		return -1;
	}
	ix.in_txn = 1;
	ix.txn_failed = 0;
	if (ix.ev_commit != NULL)
		event_active(ix.ev_commit, 0, 0);
	return 0;
}

/*
 * A write of this transaction failed ('what' was being written, for the
 * log): it is rolled back, and what it held written again, whole, by
 * the next batch.
 */
void
index_failed(const char *what)
{
	ix_warn(what);
	ix.txn_failed = 1;
}

/*
 * Commit the open transaction, if any, or roll it back if a write of it
 * failed (the writer then writes everything again: its lost()).  0 if
 * what it held is in the database, -1 if not.
 */
int
index_commit(void)
{
	sqlite3_stmt *st;

	if (!ix.in_txn)
		return 0;
	ix.in_txn = 0;
	if (!ix.txn_failed && (st = ix_stmt(ST_COMMIT)) != NULL &&
	    step_done(st) == 0)
		return 0;
	if (!ix.txn_failed)
		ix_warn("commit");
	if ((st = ix_stmt(ST_ROLLBACK)) != NULL)
		(void)step_done(st);
	if (ix.writer.lost != NULL)
		ix.writer.lost(ix.writer.arg);
	return -1;
}

/* ---- writing sessions --------------------------------------------- */

/* Write what changed in the live sessions: the writer's, and commit. */
static int
ix_flush(void)
{
	int rc = 0;

	if (ix.writer.flush != NULL && ix.writer.flush(ix.writer.arg) == -1)
		rc = -1;
	if (index_commit() == -1)
		rc = -1;
	return rc;
}

/*
 * Who writes the live sessions (record.c): flush() every INDEX_BATCH_MS
 * and when asked (index_sync()), lost() after a commit failed.  Once,
 * at start.
 */
void
index_set_writer(const struct index_writer *w)
{
	ix.writer = *w;
}

/*
 * Is the index there to write to?  The first call starts the batch
 * timer.
 */
int
index_ready(void)
{
	return ix_db() != NULL;
}

/*
 * A session's row (row->ended 0 while it runs; its how with its end),
 * as of 'now' (ns, CLOCK_REALTIME), in the open transaction
 * (index_begin()).  0, or -1 (index_failed() is the caller's to say).
 */
int
index_put_session(const struct index_session *row, uint64_t now)
{
	sqlite3_stmt *st;

	if ((st = ix_stmt(ST_SESSION_PUT)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, row->id);
	sqlite3_bind_int64(st, 2, ix.run);
	sqlite3_bind_int64(st, 3, row->pid);
	sqlite3_bind_int64(st, 4, row->uid);
	sqlite3_bind_int64(st, 5, row->gid);
	bind_text(st, 6, row->comm);
	bind_text(st, 7, row->name);
	bind_text(st, 8, row->exe);
	bind_text(st, 9, row->cmdline);
	bind_text(st, 10, row->clock);
	bind_text(st, 11, row->dir);
	bind_u64(st, 12, row->started);
	bind_u64(st, 13, now);
	if (row->ended != 0) {
		bind_u64(st, 14, row->ended);
		bind_text(st, 15, row->how != NULL ? row->how : "exited");
	}
	bind_u64(st, 16, row->events);
	bind_u64(st, 17, row->lost);
	bind_u64(st, 18, row->lost_before_connect);
	if (row->has_exit)
		sqlite3_bind_int64(st, 19, row->exit_status);
	return step_done(st);
}

/*
 * A thread of session 'id', with its losses by cause, in the open
 * transaction.  0 or -1.
 */
int
index_put_thread(uint32_t id, const struct index_thread *t)
{
	sqlite3_stmt *st;
	int c;

	if ((st = ix_stmt(ST_THREAD_PUT)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, t->ring);
	sqlite3_bind_int64(st, 3, t->tid);
	bind_u64(st, 4, t->ring_size);
	bind_u64(st, 5, t->events);
	bind_u64(st, 6, t->bytes);
	bind_u64(st, 7, t->lost_records);
	bind_text(st, 8, t->state);
	if (step_done(st) == -1)
		return -1;
	for (c = 0; c < TRACED_DROP_NCAUSES; c++) {
		if (t->lost[c] == 0)
			continue;
		if ((st = ix_stmt(ST_DROP_PUT)) == NULL)
			return -1;
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, t->ring);
		bind_text(st, 3, traced_cause_name(c));
		bind_u64(st, 4, t->lost[c]);
		if (step_done(st) == -1)
			return -1;
	}
	return 0;
}

/* A stream file of session 'id' (kept once), in the open transaction. */
int
index_put_stream(uint32_t id, const struct index_stream *m)
{
	sqlite3_stmt *st;

	if ((st = ix_stmt(ST_STREAM_PUT)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, m->path);
	sqlite3_bind_int64(st, 3, m->ring);
	sqlite3_bind_int64(st, 4, m->tid);
	bind_u64(st, 5, m->seen);
	return step_done(st);
}

/* An event's count in session 'id', in the open transaction. */
int
index_put_event(uint32_t id, const struct index_event *e)
{
	sqlite3_stmt *st;

	if ((st = ix_stmt(ST_EVENT_PUT)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, e->id);
	bind_text(st, 3, e->provider);
	bind_text(st, 4, e->name);
	bind_u64(st, 5, e->count);
	return step_done(st);
}

static void
ix_batch_cb(int fd, short what, void *arg)
{
	static uint64_t next_prune;
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	(void)fd;
	(void)what;
	(void)arg;
	(void)ix_flush();
	/* Retention: hourly, and again at once while a batch was full. */
	if (now >= next_prune && ix.db != NULL && !ix.in_txn) {
		int n = ix_prune(ix.db);

		next_prune = now + (n == INDEX_PRUNE_BATCH ?
		    INDEX_BATCH_MS * UINT64_C(1000000) : INDEX_PRUNE_NS);
	}
}

/*
 * Write every session that changed since the last batch, now (the info
 * commands call it so that they answer with the latest counts).  0, or
 * -1 if the index cannot be written.  Loop thread.
 */
int
index_sync(void)
{
	if (ix_db() == NULL)
		return -1;
	return ix_flush();
}

/*
 * Replace the saved rules with rules[0..n), committed before it returns.
 * 0, or -1 (logged) if they could not be saved.  Loop thread.
 */
int
index_rules_save(const struct rule *rules, size_t n)
{
	sqlite3_stmt *st;
	size_t i;

	if (ix_db() == NULL) {
		log_warnx("the rules cannot be saved: no session index");
		return -1;
	}
	if (index_begin() == -1)
		return -1;
	if ((st = ix_stmt(ST_RULES_CLEAR)) == NULL || step_done(st) == -1)
		goto fail;
	for (i = 0; i < n; i++) {
		if ((st = ix_stmt(ST_RULE_PUT)) == NULL)
			goto fail;
		sqlite3_bind_int64(st, 1, (sqlite3_int64)i);
		bind_text(st, 2, rules[i].pattern);
		sqlite3_bind_int(st, 3, rules[i].on != 0);
		if (step_done(st) == -1)
			goto fail;
	}
	return index_commit();
fail:
	log_warnx("index %s: saving the rules: %s", ix.path,
	    sqlite3_errmsg(ix.db));
	ix.txn_failed = 1;
	(void)index_commit();
	return -1;
}

/*
 * Record that traces now go to 'path', and why ('how': "set" for
 * trace-file set, "reload" for a configuration reload).  0 or -1.  Loop
 * thread.
 */
int
index_trace_dir_set(const char *path, const char *how)
{
	sqlite3_stmt *st;

	if (ix_db() == NULL || index_begin() == -1)
		return -1;
	if ((st = ix_stmt(ST_TRACE_DIR_PUT)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, ix.run);
	bind_u64(st, 2, now_ns(CLOCK_REALTIME));
	bind_text(st, 3, path);
	bind_text(st, 4, how);
	if (step_done(st) == -1) {
		index_failed("recording trace-file set");
		return -1;
	}
	return 0;
}

/*
 * The directory and uid of every ended session the index holds (runs
 * before this one included), to cb(arg, uid, dir).  The number given,
 * or -1.  Loop thread.
 */
long
index_ended_dirs(void (*cb)(void *, uid_t, const char *), void *arg)
{
	sqlite3_stmt *st;
	long n = 0;
	int rc;

	/* A user's snapshots (a trigger's) count as its traces. */
	if (ix_db() == NULL || sqlite3_prepare_v2(ix.db, "SELECT uid, dir "
	    "FROM sessions WHERE ended_ns IS NOT NULL AND dir IS NOT NULL "
	    "UNION ALL SELECT uid, dir FROM snapshots WHERE uid IS NOT NULL",
	    -1, &st, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *dir = sqlite3_column_text(st, 1);

		if (dir == NULL)
			continue;
		cb(arg, (uid_t)sqlite3_column_int64(st, 0),
		    (const char *)dir);
		n++;
	}
	if (rc != SQLITE_DONE) {
		log_warnx("index: listing session directories: %s",
		    sqlite3_errmsg(ix.db));
		n = -1;
	}
	sqlite3_finalize(st);
	return n;
}

/*
 * At exit, once every session has ended: commit, mark this run stopped,
 * close the database.  Loop thread.
 */
void
index_close(void)
{
	sqlite3_stmt *st;
	size_t i;

	if (ix_db() != NULL) {
		(void)ix_flush();
		if ((st = ix_stmt(ST_RUN_STOP)) != NULL) {
			sqlite3_bind_int64(st, 1, ix.run);
			bind_u64(st, 2, now_ns(CLOCK_REALTIME));
			if (step_done(st) == -1)
				ix_warn("recording the stop");
		}
	}
	for (i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(ix.st[i]);
	for (i = 0; i < LIST_VARIANTS; i++)
		sqlite3_finalize(ix.list[i]);
	if (ix.db != NULL && sqlite3_close(ix.db) != SQLITE_OK)
		log_warnx("index %s: %s", ix.path, sqlite3_errmsg(ix.db));
	ixckpt_stop();		/* the last checkpoint: after ours closed */
	if (ix.ev_batch != NULL)
		event_free(ix.ev_batch);
	if (ix.ev_commit != NULL)
		event_free(ix.ev_commit);
	if (ix.lock_fd != -1)
		close(ix.lock_fd);
	free(ix.path);
	free(ix.at);
	free(ix.state_dir);
	free(ix.state_at);
	free(ix.rules);
	memset(&ix, 0, sizeof(ix));
	ix.lock_fd = -1;
}

/* Is the index there to answer?  Loop thread. */
int
index_available(void)
{
	return ix.usable;
}

/* ---- reading ------------------------------------------------------ */

static void
row_session(sqlite3_stmt *st, struct index_session *o)
{
	memset(o, 0, sizeof(*o));
	o->id = (uint32_t)sqlite3_column_int64(st, 0);
	o->run = (uint32_t)sqlite3_column_int64(st, 1);
	o->pid = (pid_t)sqlite3_column_int64(st, 2);
	o->uid = (uid_t)sqlite3_column_int64(st, 3);
	o->gid = (gid_t)sqlite3_column_int64(st, 4);
	o->comm = col_text(st, 5);
	o->name = col_text(st, 6);
	o->exe = col_text(st, 7);
	o->cmdline = col_text(st, 8);
	o->clock = col_text(st, 9);
	o->dir = col_text(st, 10);
	o->how = col_text(st, 11);
	o->started = col_u64(st, 12);
	o->ended = col_u64(st, 13);
	o->events = col_u64(st, 14);
	o->lost = col_u64(st, 15);
	o->lost_before_connect = col_u64(st, 16);
	if (sqlite3_column_type(st, 17) != SQLITE_NULL) {
		o->has_exit = 1;
		o->exit_status = (int)sqlite3_column_int64(st, 17);
	}
	if (o->comm == NULL)
		o->comm = "";
	if (o->name == NULL)
		o->name = o->comm;
}

static int
cause_index(const char *name)
{
	return name != NULL ? traced_cause_find(name) : -1;
}

static sqlite3_stmt *
ix_list_stmt(unsigned variant)
{
	char sql[512];
	sqlite3 *db = ix_db();

	if (db == NULL)
		return NULL;
	if (ix.list[variant] != NULL)
		return ix.list[variant];
	/*
	 * The text is one of LIST_VARIANTS constant shapes; the values are
	 * bound.  Each shape has its own statement so that the planner
	 * picks the index of the filter it has.
	 */
	snprintf(sql, sizeof(sql), "SELECT " SESSION_COLS " FROM sessions "
	    "WHERE started_ns >= ?1%s%s%s ORDER BY started_ns DESC, id DESC "
	    "LIMIT ?4", variant & LIST_PID ? " AND pid = ?2" : "",
	    variant & LIST_NAME ? " AND name = ?3" : "",
	    variant & LIST_PATH ? " AND exe = ?3" : "");
	if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT,
	    &ix.list[variant], NULL) != SQLITE_OK) {
		log_warnx("index: %s", sqlite3_errmsg(db));
		ix.list[variant] = NULL;
	}
	return ix.list[variant];
}

/*
 * The sessions that match q, newest first, at most q->limit of them (all
 * if q->limit < 0), each given to cb.  q->exe matches the executable's
 * path when it has a '/', else its file name (the process name when the
 * executable is unknown).  *more (if not NULL) says whether more
 * sessions matched than were given.  Returns the number given, or -1 if
 * the index cannot answer.  Loop thread; the strings cb sees are valid
 * during the call only.
 */
long
index_sessions_list(const struct index_query *q, index_session_cb cb,
    void *arg, int *more)
{
	struct index_session row;
	sqlite3_stmt *st;
	unsigned variant = 0;
	long n = 0;
	int rc;

	if (more != NULL)
		*more = 0;
	if (q->pid > 0)
		variant |= LIST_PID;
	if (q->exe != NULL)
		variant |= strchr(q->exe, '/') != NULL ? LIST_PATH : LIST_NAME;
	if ((st = ix_list_stmt(variant)) == NULL)
		return -1;
	bind_u64(st, 1, q->since);
	sqlite3_bind_int64(st, 2, q->pid);
	if (q->exe != NULL)
		sqlite3_bind_text(st, 3, q->exe, -1, SQLITE_STATIC);
	/* One more than asked: is there more? */
	sqlite3_bind_int64(st, 4, q->limit < 0 ? -1 : (int64_t)q->limit + 1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (q->limit >= 0 && n == q->limit) {
			if (more != NULL)
				*more = 1;
			break;
		}
		row_session(st, &row);
		cb(arg, &row);
		n++;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		log_warnx("index: listing sessions: %s", sqlite3_errmsg(ix.db));
		n = -1;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return n;
}

/*
 * Everything the index has about session id, given to the visitor's
 * callbacks (any may be NULL) in this order: the session (with its
 * losses by cause), its threads, their streams, its per-event counts.
 * Returns 1, 0 if there is no such session, -1 if the index cannot
 * answer.  Loop thread; strings are valid during each call only.
 */
int
index_session_get(uint32_t id, const struct index_visitor *v)
{
	struct index_session s;
	struct index_thread t;
	struct index_stream m;
	struct index_event e;
	sqlite3_stmt *st, *sd;
	int rc, c, found = 0;

	if ((st = ix_stmt(ST_SESSION_GET)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		found = 1;
		row_session(st, &s);
		if ((sd = ix_stmt(ST_SESSION_CAUSES)) == NULL) {
			sqlite3_reset(st);
			return -1;
		}
		sqlite3_bind_int64(sd, 1, id);
		while (sqlite3_step(sd) == SQLITE_ROW)
			if ((c = cause_index(col_text(sd, 0))) >= 0)
				s.lost_by_cause[c] = col_u64(sd, 1);
		sqlite3_reset(sd);
		if (v->on_session != NULL)
			v->on_session(v->arg, &s);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE ? 0 : -1;

	if (v->on_thread != NULL && (st = ix_stmt(ST_THREADS_GET)) != NULL) {
		sqlite3_bind_int64(st, 1, id);
		while (sqlite3_step(st) == SQLITE_ROW) {
			memset(&t, 0, sizeof(t));
			t.ring = (uint32_t)sqlite3_column_int64(st, 0);
			t.tid = (pid_t)sqlite3_column_int64(st, 1);
			t.ring_size = col_u64(st, 2);
			t.events = col_u64(st, 3);
			t.bytes = col_u64(st, 4);
			t.lost_records = col_u64(st, 5);
			t.state = col_text(st, 6);
			if ((sd = ix_stmt(ST_THREAD_DROPS)) != NULL) {
				sqlite3_bind_int64(sd, 1, id);
				sqlite3_bind_int64(sd, 2, t.ring);
				while (sqlite3_step(sd) == SQLITE_ROW) {
					c = cause_index(col_text(sd, 0));
					if (c >= 0)
						t.lost[c] = col_u64(sd, 1);
				}
				sqlite3_reset(sd);
			}
			v->on_thread(v->arg, &t);
		}
		sqlite3_reset(st);
	}
	if (v->on_stream != NULL && (st = ix_stmt(ST_STREAMS_GET)) != NULL) {
		sqlite3_bind_int64(st, 1, id);
		while (sqlite3_step(st) == SQLITE_ROW) {
			m.ring = (uint32_t)sqlite3_column_int64(st, 0);
			m.tid = (pid_t)sqlite3_column_int64(st, 1);
			m.path = col_text(st, 2);
			m.seen = col_u64(st, 3);
			v->on_stream(v->arg, &m);
		}
		sqlite3_reset(st);
	}
	if (v->on_event != NULL && (st = ix_stmt(ST_EVENTS_GET)) != NULL) {
		sqlite3_bind_int64(st, 1, id);
		while (sqlite3_step(st) == SQLITE_ROW) {
			e.id = (uint32_t)sqlite3_column_int64(st, 0);
			e.provider = col_text(st, 1);
			e.name = col_text(st, 2);
			e.count = col_u64(st, 3);
			v->on_event(v->arg, &e);
		}
		sqlite3_reset(st);
	}
	return found;
}

/*
 * Replace the saved function-tracing rules of 'kind' ("func" or
 * "tracer") with rules[0..n), committed before it returns.  0, or -1
 * (logged).  Loop thread.
 */
int
index_func_rules_save(const char *kind, const struct rule *rules, size_t n)
{
	sqlite3_stmt *st = NULL;
	size_t i;

	if (ix_db() == NULL) {
		log_warnx("the %s rules cannot be saved: no session index",
		    kind);
		return -1;
	}
	if (index_begin() == -1)
		return -1;
	if (sqlite3_prepare_v2(ix.db, "DELETE FROM func_rules WHERE kind = ?1",
	    -1, &st, NULL) != SQLITE_OK)
		goto fail;
	bind_text(st, 1, kind);
	if (step_done(st) == -1)
		goto fail;
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(ix.db, "INSERT INTO func_rules (kind, pos, "
	    "pattern, state) VALUES (?1, ?2, ?3, ?4)", -1, &st, NULL) !=
	    SQLITE_OK)
		goto fail;
	for (i = 0; i < n; i++) {
		sqlite3_reset(st);
		bind_text(st, 1, kind);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
		bind_text(st, 3, rules[i].pattern);
		sqlite3_bind_int(st, 4, rules[i].on != 0);
		if (step_done(st) == -1)
			goto fail;
	}
	sqlite3_finalize(st);
	return index_commit();
fail:
	log_warnx("index %s: saving the %s rules: %s", ix.path, kind,
	    sqlite3_errmsg(ix.db));
	sqlite3_finalize(st);
	ix.txn_failed = 1;
	(void)index_commit();
	return -1;
}

/*
 * The saved function-tracing rules of 'kind', in order, appended to
 * *rules (the caller frees them).  0, or -1 (logged) when the index
 * cannot say.  Loop thread.
 */
int
index_func_rules_load(const char *kind, struct rule **rules, size_t *n)
{
	sqlite3_stmt *st;
	int rc;

	if (ix_db() == NULL)
		return -1;
	if (sqlite3_prepare_v2(ix.db, "SELECT pattern, state FROM func_rules "
	    "WHERE kind = ?1 ORDER BY pos", -1, &st, NULL) != SQLITE_OK) {
		log_warnx("index %s: %s", ix.path, sqlite3_errmsg(ix.db));
		return -1;
	}
	bind_text(st, 1, kind);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (col_text(st, 0) != NULL && rule_push(rules, n,
		    col_text(st, 0), sqlite3_column_int(st, 1)) == -1)
			rc = SQLITE_NOMEM;
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/*
 * Note a snapshot the recorder wrote, committed before it returns.  Its
 * id, or 0 (logged) when the index cannot take it.  Loop thread.
 */
uint64_t
index_snapshot_put(const struct index_snapshot *s)
{
	sqlite3_stmt *st = NULL;
	uint64_t id = 0;

	if (ix_db() == NULL || index_begin() == -1)
		return 0;
	if (sqlite3_prepare_v2(ix.db, "INSERT INTO snapshots (time_ns, dir, "
	    "reason, sessions, events, bytes, uid) VALUES (?1, ?2, ?3, ?4, "
	    "?5, ?6, ?7)", -1, &st, NULL) != SQLITE_OK) {
		index_failed("recording a snapshot");
		return 0;
	}
	bind_u64(st, 1, s->time);
	bind_text(st, 2, s->dir);
	bind_text(st, 3, s->reason);
	sqlite3_bind_int64(st, 4, s->sessions);
	bind_u64(st, 5, s->events);
	bind_u64(st, 6, s->bytes);
	if (s->has_uid)
		sqlite3_bind_int64(st, 7, s->uid);
	else
		sqlite3_bind_null(st, 7);
	if (step_done(st) == -1)
		index_failed("recording a snapshot");
	else
		id = (uint64_t)sqlite3_last_insert_rowid(ix.db);
	sqlite3_finalize(st);
	return index_commit() == 0 ? id : 0;
}

/*
 * The newest 'limit' snapshots (< 0: all), newest first, to cb; strings
 * valid during the call.  How many, or -1.  Loop thread.
 */
long
index_snapshots_list(long limit,
    void (*cb)(void *, const struct index_snapshot *), void *arg)
{
	struct index_snapshot s;
	sqlite3_stmt *st;
	long n = 0;
	int rc;

	if (ix_db() == NULL || sqlite3_prepare_v2(ix.db, "SELECT id, time_ns, "
	    "dir, reason, sessions, events, bytes FROM snapshots ORDER BY id "
	    "DESC LIMIT ?1", -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, limit);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		s.id = col_u64(st, 0);
		s.time = col_u64(st, 1);
		s.dir = col_text(st, 2);
		s.reason = col_text(st, 3);
		s.sessions = (unsigned)sqlite3_column_int64(st, 4);
		s.events = col_u64(st, 5);
		s.bytes = col_u64(st, 6);
		if (s.dir == NULL || s.reason == NULL)
			continue;
		cb(arg, &s);
		n++;
	}
	if (rc != SQLITE_DONE) {
		log_warnx("index: listing snapshots: %s", sqlite3_errmsg(ix.db));
		n = -1;
	}
	sqlite3_finalize(st);
	return n;
}

/*
 * Replace the saved triggers with t[0..n), in that order, committed
 * before it returns.  0, or -1 (logged).  Loop thread.
 */
int
index_triggers_save(const struct index_trigger *t, size_t n)
{
	sqlite3_stmt *st = NULL;
	size_t i;

	if (ix_db() == NULL) {
		log_warnx("the triggers cannot be saved: no session index");
		return -1;
	}
	if (index_begin() == -1)
		return -1;
	if (script(ix.db, "DELETE FROM triggers") == -1 ||
	    sqlite3_prepare_v2(ix.db, "INSERT INTO triggers (pos, glob, "
	    "action, after_ns, every_ns) VALUES (?1, ?2, ?3, ?4, ?5)", -1,
	    &st, NULL) != SQLITE_OK)
		goto fail;
	for (i = 0; i < n; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, (sqlite3_int64)i);
		bind_text(st, 2, t[i].glob);
		bind_text(st, 3, t[i].action);
		sqlite3_bind_int64(st, 4, (sqlite3_int64)t[i].after_ns);
		sqlite3_bind_int64(st, 5, (sqlite3_int64)t[i].every_ns);
		if (step_done(st) == -1)
			goto fail;
	}
	sqlite3_finalize(st);
	return index_commit();
fail:
	log_warnx("index %s: saving the triggers: %s", ix.path,
	    sqlite3_errmsg(ix.db));
	sqlite3_finalize(st);
	ix.txn_failed = 1;
	(void)index_commit();
	return -1;
}

/*
 * The saved triggers, in order, each given to cb(arg, t) (strings
 * borrowed for the call; the caller checks them: the file is on disk).
 * 0, or -1 (logged) when the index cannot say.  Loop thread.
 */
int
index_triggers_load(void (*cb)(void *, const struct index_trigger *),
    void *arg)
{
	struct index_trigger t;
	sqlite3_stmt *st;
	int rc;

	if (ix_db() == NULL)
		return -1;
	if (sqlite3_prepare_v2(ix.db, "SELECT glob, action, after_ns, "
	    "every_ns FROM triggers ORDER BY pos", -1, &st, NULL) !=
	    SQLITE_OK) {
		log_warnx("index %s: %s", ix.path, sqlite3_errmsg(ix.db));
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		t.glob = col_text(st, 0);
		t.action = col_text(st, 1);
		t.after_ns = col_u64(st, 2);
		t.every_ns = col_u64(st, 3);
		if (t.glob != NULL && t.action != NULL)
			cb(arg, &t);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		log_warnx("index %s: loading the triggers: %s", ix.path,
		    sqlite3_errmsg(ix.db));
		return -1;
	}
	return 0;
}
