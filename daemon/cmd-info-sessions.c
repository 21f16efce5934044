/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * info sessions and info session: the history of traced processes, as
 * the index keeps it (index.c), newest first, filtered by time, pid or
 * executable; and everything it has of one session: its threads with
 * their losses, its stream files and its events by name.  The live
 * sessions are written first (index_sync()), so that the answer has
 * the latest counts.  Loop thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cmd.h"
#include "index.h"
#include "tevents.h"

#define INFO_SESSIONS_LIMIT	100	/* sessions listed by default */

static int
parse_since(const char *s, uint64_t *out)
{
	struct tm tm;
	char *end;
	unsigned long long v;
	time_t now = time(NULL), t;

	memset(&tm, 0, sizeof(tm));
	if ((end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) != NULL &&
	    *end == '\0')
		goto local;
	memset(&tm, 0, sizeof(tm));
	if ((end = strptime(s, "%Y-%m-%d", &tm)) != NULL && *end == '\0')
		goto local;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s)
		return -1;
	switch (*end) {
	case '\0':
		t = (time_t)v;
		break;
	case 'm': t = now - (time_t)v * 60; end++; break;
	case 'h': t = now - (time_t)v * 3600; end++; break;
	case 'd': t = now - (time_t)v * 86400; end++; break;
	default:
		return -1;
	}
	if (*end != '\0')
		return -1;
	*out = (uint64_t)t * 1000000000u;
	return 0;
local:
	tm.tm_isdst = -1;
	t = mktime(&tm);
	if (t == (time_t)-1)
		return -1;
	*out = (uint64_t)t * 1000000000u;
	return 0;
}

/* Local time of ns (CLOCK_REALTIME) as fmt (strftime) into buf. */
static const char *
fmt_time(char *buf, size_t size, uint64_t ns, const char *fmt)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;

	if (localtime_r(&t, &tm) == NULL || strftime(buf, size, fmt, &tm) == 0)
		snprintf(buf, size, "?");
	return buf;
}

/* The members every session item has. */
static json_t *
session_json(const struct index_session *s)
{
	return json_pack("{s:I, s:I, s:i, s:I, s:I, s:o, s:o, s:o, s:o, s:o, "
	    "s:o, s:o, s:o, s:o, s:I, s:I, s:I, s:o}", "session", (json_int_t)s->id,
	    "run", (json_int_t)s->run, "pid", (int)s->pid, "uid",
	    (json_int_t)s->uid, "gid", (json_int_t)s->gid, "comm",
	    jstr(s->comm), "name", jstr(s->name), "exe", jstr(s->exe),
	    "cmdline", jstr(s->cmdline), "clock", jstr(s->clock), "dir",
	    jstr(s->dir), "started_ns", jns(s->started), "ended_ns",
	    s->how != NULL ? jns(s->ended) : json_null(), "how",
	    jstr(s->how != NULL ? s->how : "running"), "events",
	    (json_int_t)s->events, "lost", (json_int_t)s->lost,
	    "lost_before_connect", (json_int_t)s->lost_before_connect,
	    "exit_status", s->has_exit ? json_integer(s->exit_status) :
	    json_null());
}

/* One line of info sessions. */
static void
sessions_row(void *arg, const struct index_session *s)
{
	struct reply *r = arg;
	char start[32], end[32], d1[16], d2[16];

	if (reply_json(r)) {
		reply_item(r, session_json(s));
		return;
	}
	fmt_time(start, sizeof(start), s->started, "%Y-%m-%d %H:%M:%S");
	if (s->how == NULL)
		snprintf(end, sizeof(end), "-");
	else if (strcmp(fmt_time(d1, sizeof(d1), s->started, "%F"),
	    fmt_time(d2, sizeof(d2), s->ended, "%F")) == 0)
		fmt_time(end, sizeof(end), s->ended, "%H:%M:%S");
	else
		fmt_time(end, sizeof(end), s->ended, "%Y-%m-%d %H:%M:%S");
	reply_line(r, "%6u %s  %-8s  %-14s %7d %6u %10" PRIu64 " %8" PRIu64
	    "  %-16s %s", s->id, start, end, s->how != NULL ? s->how :
	    "running", (int)s->pid, (unsigned)s->uid, s->events, s->lost,
	    s->name, s->dir != NULL ? s->dir : "-");
}

int
cmd_info_sessions_exec(struct reply *r, int argc, char **argv)
{
	struct index_query q = { 0, 0, NULL, INFO_SESSIONS_LIMIT };
	int i, all = 0, limit = 0, more;
	long pid, n;
	char *end;

	for (i = 0; i < argc; i++) {
		const char *opt = argv[i], *val;

		if (strcmp(opt, "--all") == 0) {
			all = 1;
			continue;
		}
		if (strcmp(opt, "--since") != 0 && strcmp(opt, "--pid") != 0 &&
		    strcmp(opt, "--exe") != 0 && strcmp(opt, "--limit") != 0) {
			reply_error(r, "unknown option '%s' (--since, --pid, "
			    "--exe, --limit, --all)", opt);
			return TRACED_CTL_USAGE;
		}
		if (i + 1 >= argc) {
			reply_error(r, "%s needs a value", opt);
			return TRACED_CTL_USAGE;
		}
		val = argv[++i];
		if (strcmp(opt, "--since") == 0) {
			if (parse_since(val, &q.since) == -1) {
				reply_error(r, "--since: '%s' is not a time "
				    "(YYYY-MM-DD, YYYY-MM-DDTHH:MM:SS, epoch "
				    "seconds or an age like 30m, 2h, 7d)", val);
				return TRACED_CTL_USAGE;
			}
		} else if (strcmp(opt, "--pid") == 0) {
			errno = 0;
			pid = strtol(val, &end, 10);
			if (errno || *end || pid <= 0 || pid > INT32_MAX) {
				reply_error(r, "--pid: '%s' is not a process "
				    "id", val);
				return TRACED_CTL_USAGE;
			}
			q.pid = (pid_t)pid;
		} else if (strcmp(opt, "--exe") == 0) {
			if (*val == '\0') {
				reply_error(r, "--exe: give an executable's "
				    "name or path");
				return TRACED_CTL_USAGE;
			}
			q.exe = val;
		} else {
			errno = 0;
			n = strtol(val, &end, 10);
			if (errno || *end || n <= 0) {
				reply_error(r, "--limit: '%s' is not a "
				    "positive number", val);
				return TRACED_CTL_USAGE;
			}
			q.limit = n;
			limit = 1;
		}
	}
	if (all && limit) {
		reply_error(r, "--limit and --all exclude each other");
		return TRACED_CTL_USAGE;
	}
	if (all)
		q.limit = -1;
	if (!index_available()) {
		reply_error(r, "the session index is not available (see the "
		    "daemon's log)");
		return TRACED_CTL_ERROR;
	}
	/* Live sessions with the counts of now, not of the last batch. */
	(void)index_sync();
	if (!reply_json(r))
		reply_line(r, "%6s %-19s  %-8s  %-14s %7s %6s %10s %8s  %-16s "
		    "%s", "ID", "STARTED", "ENDED", "HOW", "PID", "UID",
		    "EVENTS", "LOST", "NAME", "TRACE DIRECTORY");
	n = index_sessions_list(&q, sessions_row, r, &more);
	if (n < 0) {
		reply_error(r, "the session index cannot answer (see the "
		    "daemon's log)");
		return TRACED_CTL_ERROR;
	}
	if (more)
		reply_message(r, "the newest %ld sessions, newest first; more "
		    "match: --limit N or --all for more", n);
	else if (n == 0)
		reply_message(r, "no session in the index matches");
	return TRACED_CTL_OK;
}

/* What info session prints, as index_session_get() reports it. */
struct session_info {
	struct reply	*r;
	uint32_t	 id;
	int		 events;	/* "events by name:" was written */
};

static void
info_session_main(void *arg, const struct index_session *s)
{
	struct session_info *si = arg;
	struct reply *r = si->r;
	char causes[256], t1[40], t2[40];
	uint64_t lost;
	json_t *o;

	if (reply_json(r)) {
		/* "type" first, as in every other item. */
		o = json_pack("{s:s}", "type", "session");
		if (o != NULL && json_object_update_new(o, session_json(s)) ==
		    0 && json_object_set_new(o, "lost_by_cause",
		    jcauses(s->lost_by_cause)) == 0) {
			reply_item(r, o);
			return;
		}
		json_decref(o);
		reply_item(r, NULL);
		return;
	}
	lost = format_causes(causes, sizeof(causes), s->lost_by_cause);
	reply_line(r, "session %u: %s[%d], %s", s->id, s->comm, (int)s->pid,
	    s->how != NULL ? s->how : "running");
	reply_line(r, "  executable  %s", s->exe != NULL ? s->exe :
	    "(unknown)");
	reply_line(r, "  command     %s", s->cmdline != NULL ? s->cmdline :
	    "(unknown)");
	reply_line(r, "  user        uid %u, gid %u", (unsigned)s->uid,
	    (unsigned)s->gid);
	fmt_time(t1, sizeof(t1), s->started, "%Y-%m-%d %H:%M:%S %z");
	reply_line(r, "  started     %s", t1);
	if (s->how != NULL) {
		fmt_time(t2, sizeof(t2), s->ended, "%Y-%m-%d %H:%M:%S %z");
		reply_line(r, "  ended       %s (%.3f s)", t2,
		    s->ended > s->started ?
		    (double)(s->ended - s->started) / 1e9 : 0.0);
	}
	if (s->has_exit)
		reply_line(r, "  exit status %d (given to exit())",
		    s->exit_status);
	reply_line(r, "  clock       %s", s->clock != NULL ? s->clock : "-");
	reply_line(r, "  trace dir   %s", s->dir != NULL ? s->dir : "-");
	reply_line(r, "  events      %" PRIu64, s->events);
	reply_line(r, "  lost        %" PRIu64 "%s%s%s", s->lost,
	    lost ? " (" : "", causes, lost ? ")" : "");
	if (s->lost_before_connect > 0)
		reply_line(r, "              %" PRIu64 " of them before it "
		    "connected", s->lost_before_connect);
	reply_line(r, "  daemon run  %u", s->run);
	if (s->how != NULL && strcmp(s->how, "interrupted") == 0)
		reply_line(r, "  (the daemon was killed while it ran: the "
		    "counts are those it last wrote, at most a second "
		    "earlier)");
}

static void
info_session_thread(void *arg, const struct index_thread *t)
{
	struct session_info *si = arg;
	struct reply *r = si->r;
	char causes[256];
	uint64_t lost;

	lost = format_causes(causes, sizeof(causes), t->lost);
	if (reply_json(r))
		reply_item(r, json_pack("{s:s, s:I, s:I, s:i, s:I, s:I, s:I, "
		    "s:I, s:o, s:I, s:o}", "type", "thread", "session",
		    (json_int_t)si->id, "ring", (json_int_t)t->ring, "tid",
		    (int)t->tid, "ring_size", (json_int_t)t->ring_size,
		    "events", (json_int_t)t->events, "bytes",
		    (json_int_t)t->bytes, "lost", (json_int_t)lost,
		    "lost_by_cause", jcauses(t->lost), "lost_records",
		    (json_int_t)t->lost_records, "state", jstr(t->state)));
	else
		reply_line(r, "  thread %-7d ring %" PRIu64 " KiB  events %"
		    PRIu64 "  bytes %" PRIu64 "  lost %" PRIu64 "%s%s%s  %s",
		    (int)t->tid, t->ring_size / 1024, t->events, t->bytes,
		    lost, lost ? " (" : "", causes, lost ? ")" : "",
		    t->state != NULL ? t->state : "");
}

static void
info_session_stream(void *arg, const struct index_stream *m)
{
	struct session_info *si = arg;

	if (reply_json(si->r))
		reply_item(si->r, json_pack("{s:s, s:I, s:I, s:i, s:o, s:o}",
		    "type", "stream", "session", (json_int_t)si->id, "ring",
		    (json_int_t)m->ring, "tid", (int)m->tid, "path",
		    jstr(m->path), "seen_ns", jns(m->seen)));
	else
		reply_line(si->r, "  stream      %s", m->path != NULL ?
		    m->path : "-");
}

static void
info_session_event(void *arg, const struct index_event *e)
{
	struct session_info *si = arg;
	char full[TRACED_NAME_MAX + TEVENTS_NAME_MAX + 2];

	if (reply_json(si->r)) {
		reply_item(si->r, json_pack("{s:s, s:I, s:I, s:o, s:o, s:I}",
		    "type", "event", "session", (json_int_t)si->id, "id",
		    (json_int_t)e->id, "provider", jstr(e->provider), "name",
		    jstr(e->name), "count", (json_int_t)e->count));
		return;
	}
	if (!si->events) {
		reply_line(si->r, "  events by name:");
		si->events = 1;
	}
	snprintf(full, sizeof(full), "%s:%s", e->provider ? e->provider : "",
	    e->name ? e->name : "");
	reply_line(si->r, "    %-40s %" PRIu64, full, e->count);
}

int
cmd_info_session_exec(struct reply *r, int argc, char **argv)
{
	struct session_info si = { r, 0, 0 };
	const struct index_visitor v = {
		info_session_main, info_session_thread, info_session_stream,
		info_session_event, &si,
	};
	unsigned long id;
	char *end;
	int rc;

	(void)argc;
	errno = 0;
	id = strtoul(argv[0], &end, 10);
	if (errno || *end || end == argv[0] || id == 0 || id > UINT32_MAX ||
	    argv[0][0] == '-') {
		reply_error(r, "'%s' is not a session id (see 'tracectl info "
		    "sessions')", argv[0]);
		return TRACED_CTL_USAGE;
	}
	si.id = (uint32_t)id;
	if (!index_available()) {
		reply_error(r, "the session index is not available (see the "
		    "daemon's log)");
		return TRACED_CTL_ERROR;
	}
	(void)index_sync();
	rc = index_session_get(si.id, &v);
	if (rc == 0) {
		reply_error(r, "no session %lu in the index", id);
		return TRACED_CTL_ERROR;
	}
	if (rc < 0) {
		reply_error(r, "the session index cannot answer (see the "
		    "daemon's log)");
		return TRACED_CTL_ERROR;
	}
	return TRACED_CTL_OK;
}
