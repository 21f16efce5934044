/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The flight recorder's commands: snapshot, info snapshots, trace-file
 * recorder SIZE|off, and its part of info trace.  A snapshot's reply
 * waits (reply_wait()) until the snapshot thread wrote it, with no
 * timeout: the disk decides, and tracing goes on meanwhile.  Loop
 * thread.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "command.h"
#include "config.h"
#include "index.h"
#include "outdir.h"
#include "recorder.h"
#include "text.h"

/*
 * A snapshot's reply and the recorder's callback share this: whichever
 * of the two comes last frees it (the connection may go first).
 */
struct snap_wait {
	int		 finished;	/* the callback came */
	int		 gone;		/* the reply is no more */
	char		*dir;
	char		*errmsg;
	unsigned	 sessions;
	uint64_t	 events;
	uint64_t	 bytes;
	uint64_t	 id;
};

static void
snap_wait_free(struct snap_wait *sw)
{
	free(sw->dir);
	free(sw->errmsg);
	free(sw);
}

static void
snap_done(void *arg, const struct snapshot_result *res)
{
	struct snap_wait *sw = arg;

	sw->finished = 1;
	sw->dir = res->dir != NULL ? strdup(res->dir) : NULL;
	sw->errmsg = res->errmsg != NULL ? strdup(res->errmsg) : NULL;
	sw->sessions = res->sessions;
	sw->events = res->events;
	sw->bytes = res->bytes;
	sw->id = res->id;
	if (sw->gone)
		snap_wait_free(sw);
	else
		replies_check();
}

static int
snap_wait_cb(struct reply *r, void *arg, int timed_out)
{
	struct snap_wait *sw = arg;

	if (r == NULL || (timed_out && !sw->finished)) {
		if (r != NULL)		/* the daemon stops */
			reply_error(r, "the daemon stops: the snapshot is "
			    "still being written; see its log");
		if (sw->finished)
			snap_wait_free(sw);
		else
			sw->gone = 1;
		return 1;
	}
	if (!sw->finished)
		return 0;
	if (reply_json(r))
		reply_item(r, json_pack("{s:s, s:o, s:I, s:I, s:I, s:I, s:o}",
		    "type", "snapshot", "dir", jstr(sw->dir), "id",
		    (json_int_t)sw->id, "sessions", (json_int_t)sw->sessions,
		    "events", (json_int_t)sw->events, "bytes",
		    (json_int_t)sw->bytes, "error", jstr(sw->errmsg)));
	if (sw->errmsg != NULL && sw->sessions == 0)
		reply_error(r, "snapshot not written: %s", sw->errmsg);
	else if (sw->errmsg != NULL)
		reply_error(r, "snapshot %s: %u session%s written, but %s",
		    sw->dir, sw->sessions, sw->sessions == 1 ? "" : "s",
		    sw->errmsg);
	else
		reply_message(r, "snapshot written to %s: %u session%s, %"
		    PRIu64 " events, %" PRIu64 " KiB", sw->dir, sw->sessions,
		    sw->sessions == 1 ? "" : "s", sw->events,
		    (sw->bytes + 1023) / 1024);
	snap_wait_free(sw);
	return 1;
}

/* snapshot [-o DIR] [--last DURATION] [--session GLOB] */
int
cmd_snapshot_exec(struct reply *r, int argc, char **argv)
{
	struct snapshot_req q = { .any_uid = 1, .reason = "tracectl" };
	struct snap_wait *sw;
	char err[512];
	int64_t ns;
	int i;

	for (i = 0; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(o, "-o") != 0 && strcmp(o, "--last") != 0 &&
		    strcmp(o, "--session") != 0) {
			reply_error(r, "snapshot: unknown argument '%s'; usage: "
			    "tracectl snapshot [-o DIR] [--last DURATION] "
			    "[--session GLOB]", o);
			return TRACED_CTL_USAGE;
		}
		if (v == NULL || v[0] == '\0') {
			reply_error(r, "snapshot: %s needs a value", o);
			return TRACED_CTL_USAGE;
		}
		i++;
		if (strcmp(o, "-o") == 0) {
			if (v[0] != '/') {
				reply_error(r, "snapshot: '%s' is relative: "
				    "give an absolute path (the daemon does "
				    "not share your working directory)", v);
				return TRACED_CTL_USAGE;
			}
			q.dir = v;
		} else if (strcmp(o, "--last") == 0) {
			if (text_parse_duration(v, &ns) == -1 || ns <= 0) {
				reply_error(r, "snapshot: --last '%s' is not a "
				    "duration (try 30s, 500ms, 2m)", v);
				return TRACED_CTL_USAGE;
			}
			q.last_ns = (uint64_t)ns;
		} else
			q.glob = v;
	}
	if ((sw = calloc(1, sizeof(*sw))) == NULL) {
		reply_error(r, "out of memory");
		return TRACED_CTL_ERROR;
	}
	q.done = snap_done;
	q.arg = sw;
	if (recorder_snapshot(&q, err, sizeof(err)) == -1) {
		free(sw);
		reply_error(r, "snapshot: %s", err);
		return TRACED_CTL_ERROR;
	}
	reply_wait(r, snap_wait_cb, sw, 0);
	return TRACED_CTL_OK;
}

static void
snapshot_line(void *arg, const struct index_snapshot *s)
{
	struct reply *r = arg;
	char when[64];
	time_t t = (time_t)(s->time / 1000000000u);
	struct tm tm;

	if (reply_json(r)) {
		reply_item(r, json_pack("{s:s, s:I, s:o, s:o, s:o, s:I, s:I, "
		    "s:I}", "type", "snapshot", "id", (json_int_t)s->id,
		    "time_ns", jns(s->time), "dir", jstr(s->dir), "reason",
		    jstr(s->reason), "sessions", (json_int_t)s->sessions,
		    "events", (json_int_t)s->events, "bytes",
		    (json_int_t)s->bytes));
		return;
	}
	if (localtime_r(&t, &tm) == NULL ||
	    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(when, sizeof(when), "?");
	reply_line(r, "%4" PRIu64 "  %s  %-14s %3u session%s %10" PRIu64
	    " events %8" PRIu64 " KiB  %s", s->id, when, s->reason,
	    s->sessions, s->sessions == 1 ? " " : "s", s->events,
	    (s->bytes + 1023) / 1024, s->dir);
}

/* info snapshots [--limit N | --all] */
int
cmd_info_snapshots_exec(struct reply *r, int argc, char **argv)
{
	long limit = 20, n;
	char *end;

	if (argc == 1 && strcmp(argv[0], "--all") == 0)
		limit = -1;
	else if (argc == 2 && strcmp(argv[0], "--limit") == 0) {
		limit = strtol(argv[1], &end, 10);
		if (*end != '\0' || limit <= 0) {
			reply_error(r, "info snapshots: --limit '%s' is not a "
			    "positive number", argv[1]);
			return TRACED_CTL_USAGE;
		}
	} else if (argc != 0) {
		reply_error(r, "usage: tracectl info snapshots [--limit N | "
		    "--all]");
		return TRACED_CTL_USAGE;
	}
	if (!reply_json(r))
		reply_line(r, "  id  time                 reason         "
		    "sessions       events      size  directory");
	n = index_snapshots_list(limit, snapshot_line, r);
	if (n < 0) {
		reply_error(r, "the session index cannot say (see the daemon's "
		    "log)");
		return TRACED_CTL_ERROR;
	}
	if (n == 0 && !reply_json(r))
		reply_message(r, "no snapshot yet (tracectl snapshot writes "
		    "one)");
	return TRACED_CTL_OK;
}

/* trace-file recorder SIZE|off */
int
cmd_trace_file_recorder(struct reply *r, const char *value)
{
	struct config c;
	unsigned set = 0;
	char err[256];
	int k = CONFIG_LIMIT0 + LIMIT_RECORDER;

	memset(&c, 0, sizeof(c));
	if (strcmp(value, "off") == 0)
		value = "0";
	if (config_set(&c, &set, k, value, err, sizeof(err)) == -1) {
		reply_error(r, "trace-file recorder %s: %s", value, err);
		return TRACED_CTL_USAGE;
	}
	cfg.limit[LIMIT_RECORDER] = c.limit[LIMIT_RECORDER];
	recorder_configure(&cfg);
	if (recorder_size() == 0)
		reply_message(r, "recorder off: new sessions are written to "
		    "%s; recording ones go on until they end, and their "
		    "windows stay for snapshots", outdir_path());
	else
		reply_message(r, "recorder on: each new session keeps its "
		    "last %" PRIu64 " MiB of events in memory, written by "
		    "tracectl snapshot; running sessions go on as they "
		    "began", recorder_size() >> 20);
	return TRACED_CTL_OK;
}

static void
window_line(void *arg, const struct recorder_window_info *w)
{
	struct reply *r = arg;

	if (reply_json(r)) {
		reply_item(r, json_pack("{s:s, s:I, s:i, s:I, s:o, s:b, s:I, "
		    "s:I, s:I, s:I, s:I, s:I}", "type", "window", "session",
		    (json_int_t)w->session, "pid", (int)w->pid, "uid",
		    (json_int_t)w->uid, "comm", jstr(w->comm), "ended",
		    w->ended, "bytes", (json_int_t)w->bytes, "packets",
		    (json_int_t)w->packets, "threads", (json_int_t)w->threads,
		    "events", (json_int_t)w->events, "overwritten",
		    (json_int_t)w->overwritten, "lost", (json_int_t)w->lost));
		return;
	}
	reply_line(r, "  window of session %u: %s[%d] uid %u%s: %" PRIu64
	    " KiB in %" PRIu64 " packets, %u thread%s; events %" PRIu64
	    ", overwritten %" PRIu64 ", lost %" PRIu64, w->session, w->comm,
	    (int)w->pid, (unsigned)w->uid, w->ended ? " (ended)" : "",
	    w->bytes >> 10, w->packets, w->threads, w->threads == 1 ? "" : "s",
	    w->events, w->overwritten, w->lost);
}

/* info trace: the recorder's state and its windows. */
void
cmd_recorder_info(struct reply *r)
{
	struct recorder_stats st;

	recorder_stats(&st);
	if (reply_json(r))
		reply_item(r, json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, "
		    "s:I, s:I, s:I, s:I, s:I, s:I}", "type", "recorder",
		    "size", (json_int_t)st.size, "bytes_per_uid",
		    (json_int_t)st.per_uid, "keep", (json_int_t)st.keep,
		    "keep_s", (json_int_t)(st.keep_ns / 1000000000u),
		    "windows", (json_int_t)st.windows, "ended",
		    (json_int_t)st.ended, "bytes", (json_int_t)st.bytes,
		    "spare_bytes", (json_int_t)st.spare_bytes, "events",
		    (json_int_t)st.events, "overwritten",
		    (json_int_t)st.overwritten, "lost", (json_int_t)st.lost,
		    "snapshots", (json_int_t)st.snapshots));
	else if (st.size == 0 && st.windows == 0)
		reply_line(r, "recorder: off (traced --recorder SIZE, or "
		    "tracectl trace-file recorder SIZE)");
	else {
		char size[64];

		if (st.size == 0)
			snprintf(size, sizeof(size), "off for new sessions");
		else
			snprintf(size, sizeof(size), "%" PRIu64 " MiB per "
			    "session", st.size >> 20);
		reply_line(r, "recorder: %s, %" PRIu64 " MiB per uid; %u "
		    "window%s (%u of ended sessions, kept %" PRIu64 " s, %u "
		    "per uid) holding %" PRIu64 " MiB; %" PRIu64 " events "
		    "overwritten, %" PRIu64 " lost; %" PRIu64 " snapshot%s "
		    "written", size, st.per_uid >> 20, st.windows,
		    st.windows == 1 ? "" : "s", st.ended,
		    st.keep_ns / 1000000000u, st.keep, st.bytes >> 20,
		    st.overwritten, st.lost, st.snapshots, st.snapshots == 1 ?
		    "" : "s");
	}
	recorder_windows(window_line, r);
}
