/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The control commands.  The table itself is proto/commands.def, shared
 * with tracectl; cmd_exec() looks the command up (exact name, then
 * unique prefix), checks arity and permission (state-changing commands
 * need uid 0, the daemon's uid or its group) and calls the handler
 * below, which answers through the reply builder of control.c: lines
 * for people, or one JSON object per line with --json.  Loop thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "command.h"
#include "traced.h"

typedef int (*cmd_exec_cb)(struct reply *, int, char **);

static const char *cause_names[TRACED_DROP_NCAUSES] = {
	"ring_full", "nested", "disconnected", "paused", "write_error",
	"invalid",
};

/*
 * JSON string literal of s (quoted, escaped) into buf; returns buf.
 * Cut short, still valid, if it does not fit.
 */
const char *
json_str(char *buf, size_t size, const char *s)
{
	size_t o = 0;

	if (size < 3)
		return "\"\"";
	buf[o++] = '"';
	for (; *s != '\0' && o + 8 < size; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)ch;
		} else if (ch < 0x20 || ch == 0x7f) {
			o += (size_t)snprintf(buf + o, size - o, "\\u%04x", ch);
		} else
			buf[o++] = (char)ch;
	}
	if (*s != '\0') {
		/* Cut short: not in the middle of a UTF-8 sequence. */
		size_t k = 0;

		while (k < 3 && o - k > 1 &&
		    ((unsigned char)buf[o - k - 1] & 0xc0) == 0x80)
			k++;
		if (o - k > 1 && (unsigned char)buf[o - k - 1] >= 0xc0) {
			unsigned char lead = (unsigned char)buf[o - k - 1];
			size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;

			if (k + 1 < need)
				o -= k + 1;
		}
	}
	buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}

static int
cmd_help_exec(struct reply *r, int argc, char **argv)
{
	const struct command_def *t, *d;
	char err[256], usage[512], j1[128], j2[512], j3[512];
	size_t n, i;
	int consumed;

	if (argc > 0) {
		d = command_lookup(argc, argv, &consumed, err, sizeof(err));
		if (d == NULL) {
			reply_error(r, "%s", err);
			return TRACED_CTL_USAGE;
		}
		if (consumed != argc) {
			reply_error(r, "usage: tracectl help [COMMAND]");
			return TRACED_CTL_USAGE;
		}
		command_format_usage(d, usage, sizeof(usage));
		if (reply_json(r))
			reply_line(r, "{\"name\":%s,\"usage\":%s,\"help\":%s,"
			    "\"changes_state\":%s}",
			    json_str(j1, sizeof(j1), d->name),
			    json_str(j2, sizeof(j2), usage),
			    json_str(j3, sizeof(j3), d->help),
			    d->flags & CMD_F_PRIVILEGED ? "true" : "false");
		else {
			reply_line(r, "%s", usage);
			reply_line(r, "  %s", d->help);
		}
		return TRACED_CTL_OK;
	}
	t = command_table(&n);
	for (i = 0; i < n; i++) {
		if (reply_json(r))
			reply_line(r, "{\"name\":%s,\"usage\":%s,\"help\":%s,"
			    "\"changes_state\":%s}",
			    json_str(j1, sizeof(j1), t[i].name),
			    json_str(j2, sizeof(j2), t[i].usage),
			    json_str(j3, sizeof(j3), t[i].help),
			    t[i].flags & CMD_F_PRIVILEGED ? "true" : "false");
		else
			reply_line(r, "%-18s %-24s %s", t[i].name, t[i].usage,
			    t[i].help);
	}
	return TRACED_CTL_OK;
}

static int
cmd_trace_event_exec(struct reply *r, int argc, char **argv)
{
	struct session *s;
	char err[256];
	unsigned events = 0, procs = 0;
	int on = command_parse_onoff(argv[1]);
	uint32_t i, k;

	(void)argc;
	if (command_pattern_valid(argv[0], err, sizeof(err)) == -1) {
		reply_error(r, "%s", err);
		return TRACED_CTL_USAGE;
	}
	if (on == -1) {
		reply_error(r, "expected 'on' or 'off', not '%s'", argv[1]);
		return TRACED_CTL_USAGE;
	}
	if (state_rule_add(argv[0], on) == -1)
		reply_error(r, "the rule applies now but could not be saved "
		    "in %s (see the daemon's log): a restarted daemon will "
		    "not have it", td->cfg.state_dir);
	TAILQ_FOREACH(s, &td->sessions, entry) {
		unsigned before = events;

		for (i = 0; i < s->nprovs; i++)
			for (k = 0; k < s->provs[i]->nevents; k++)
				if (state_glob_match(argv[0],
				    s->provs[i]->tf.events[k].name))
					events++;
		if (events != before)
			procs++;
	}
	if (reply_failed(r))
		return TRACED_CTL_ERROR;
	reply_message(r, "'%s' %s: applies now to %u event%s in %u running "
	    "process%s and to every process that starts later%s", argv[0],
	    on ? "on" : "off", events, events == 1 ? "" : "s", procs,
	    procs == 1 ? "" : "es",
	    td->paused && on ? " (trace-file is off: nothing is recorded "
	    "until 'trace-file on')" : "");
	return TRACED_CTL_OK;
}

struct known_event {
	char		 name[TRACED_NAME_MAX + TEVENTS_NAME_MAX + 2];
	int		 on;
	char		 procs[512];
	size_t		 nprocs;
};

static int
known_cmp(const void *a, const void *b)
{
	return strcmp(((const struct known_event *)a)->name,
	    ((const struct known_event *)b)->name);
}

static int
cmd_info_trace_events_exec(struct reply *r, int argc, char **argv)
{
	struct known_event *ke = NULL, *nk;
	size_t nke = 0, cap = 0, i, j;
	struct session *s;
	char full[sizeof(ke->name)], j1[512], j2[1024];
	uint32_t p, k;

	TAILQ_FOREACH(s, &td->sessions, entry) {
		for (p = 0; p < s->nprovs; p++)
			for (k = 0; k < s->provs[p]->nevents; k++) {
				const struct tevents_event *ev =
				    &s->provs[p]->tf.events[k];

				snprintf(full, sizeof(full), "%s:%s",
				    s->provs[p]->name, ev->name);
				if (argc > 0 &&
				    !state_glob_match(argv[0], ev->name) &&
				    !state_glob_match(argv[0], full))
					continue;
				for (i = 0; i < nke; i++)
					if (strcmp(ke[i].name, full) == 0)
						break;
				if (i == nke) {
					if (nke == cap) {
						cap = cap ? cap * 2 : 64;
						nk = reallocarray(ke, cap,
						    sizeof(*ke));
						if (nk == NULL) {
							free(ke);
							reply_error(r, "out of "
							    "memory");
							return TRACED_CTL_ERROR;
						}
						ke = nk;
					}
					memset(&ke[i], 0, sizeof(ke[i]));
					snprintf(ke[i].name,
					    sizeof(ke[i].name), "%s", full);
					ke[i].on = state_event_on(
					    s->provs[p]->name, ev);
					nke++;
				}
				j = strlen(ke[i].procs);
				if (j + 40 < sizeof(ke[i].procs))
					snprintf(ke[i].procs + j,
					    sizeof(ke[i].procs) - j, "%s%s[%d]",
					    j ? " " : "", s->comm, (int)s->pid);
				ke[i].nprocs++;
			}
	}
	if (ke != NULL)
		qsort(ke, nke, sizeof(*ke), known_cmp);
	for (i = 0; i < nke; i++) {
		if (reply_json(r))
			reply_line(r, "{\"name\":%s,\"state\":\"%s\","
			    "\"recording\":%s,\"processes\":%zu,"
			    "\"where\":%s}",
			    json_str(j1, sizeof(j1), ke[i].name),
			    ke[i].on ? "on" : "off",
			    ke[i].on && !td->paused ? "true" : "false",
			    ke[i].nprocs, json_str(j2, sizeof(j2),
			    ke[i].procs));
		else
			reply_line(r, "%-40s %-3s  %s", ke[i].name,
			    ke[i].on ? "on" : "off", ke[i].procs);
	}
	free(ke);
	if (nke == 0)
		reply_message(r, argc > 0 ? "no connected process has an "
		    "event matching '%s'" : "no connected process has "
		    "events%s", argc > 0 ? argv[0] : "");
	else if (td->paused)
		reply_message(r, "trace-file is off: no event is recorded "
		    "until 'trace-file on'");
	return TRACED_CTL_OK;
}

static int
cmd_trace_file_exec(struct reply *r, int argc, char **argv)
{
	struct session *s;
	char *path;
	int on;

	if (strcmp(argv[0], "flush") == 0) {
		if (argc != 1) {
			reply_error(r, "usage: tracectl trace-file flush");
			return TRACED_CTL_USAGE;
		}
		td->flush_gen++;
		writeout_drain_all(1);
		reply_wait_flush(r, td->flush_gen);
		return TRACED_CTL_OK;
	}
	if (strcmp(argv[0], "set") == 0) {
		if (argc != 2 || argv[1][0] == '\0') {
			reply_error(r, "usage: tracectl trace-file set PATH");
			return TRACED_CTL_USAGE;
		}
		if (argv[1][0] != '/') {
			reply_error(r, "'%s' is relative: give an absolute "
			    "path (the daemon does not share your working "
			    "directory)", argv[1]);
			return TRACED_CTL_USAGE;
		}
		if (mkdir_p(argv[1], 0750) == -1 || access(argv[1],
		    W_OK | X_OK) == -1) {
			reply_error(r, "cannot write to %s: %s", argv[1],
			    strerror(errno));
			return TRACED_CTL_ERROR;
		}
		path = strdup(argv[1]);
		if (path == NULL) {
			reply_error(r, "out of memory");
			return TRACED_CTL_ERROR;
		}
		free(td->cfg.trace_dir);
		td->cfg.trace_dir = path;
		(void)index_trace_dir_set(path, "set");
		TAILQ_FOREACH(s, &td->sessions, entry)
			if (!s->closing && s->welcomed &&
			    session_rotate(s) == -1)
				reply_error(r, "session %u could not move to "
				    "%s (see the daemon's log)", s->id, path);
		log_info("trace output now goes to %s", path);
		if (reply_failed(r))
			return TRACED_CTL_ERROR;
		reply_message(r, "tracing to %s", path);
		return TRACED_CTL_OK;
	}
	on = command_parse_onoff(argv[0]);
	if (on == -1 || argc != 1) {
		reply_error(r, "usage: tracectl trace-file on|off|flush|set PATH");
		return TRACED_CTL_USAGE;
	}
	if (td->paused == !on) {
		reply_message(r, "trace-file is already %s", on ? "on" : "off");
		return TRACED_CTL_OK;
	}
	td->paused = !on;
	state_apply_all();
	if (!on)
		writeout_drain_all(0);
	log_info("trace-file %s", on ? "on" : "off");
	reply_message(r, on ? "tracing resumed: events follow their rules "
	    "again" : "tracing paused: every event is off in every process; "
	    "the rules are kept");
	return TRACED_CTL_OK;
}

/*
 * Losses by cause into buf: "ring_full 3, nested 1" for people (causes
 * with none left out), "\"ring_full\":3,..." for JSON.  Returns the total.
 */
static uint64_t
format_causes(char *buf, size_t size, const uint64_t *lost, int json)
{
	uint64_t total = 0;
	size_t o = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < TRACED_DROP_NCAUSES; i++) {
		total += lost[i];
		if ((lost[i] == 0 && !json) || o >= size)
			continue;
		o += (size_t)snprintf(buf + o, size - o,
		    json ? "%s\"%s\":%" PRIu64 : "%s%s %" PRIu64,
		    o ? (json ? "," : ", ") : "", cause_names[i], lost[i]);
	}
	return total;
}

static void
info_ring(struct reply *r, const struct session *s, const struct sring *rg)
{
	uint64_t size = traced_ring_size(rg->order);
	/*
	 * rg->tail belongs to the worker while the ring is out: the tail
	 * it last published in the header does for a fill level (client
	 * memory, so checked, and only this ring's line can be wrong).
	 */
	uint64_t head = __atomic_load_n(&rg->hdr->head, __ATOMIC_RELAXED);
	uint64_t tail = __atomic_load_n(&rg->hdr->tail, __ATOMIC_RELAXED);
	uint64_t fill = head >= tail && head - tail <= size ?
	    (head - tail) * 100 / size : 0;
	char causes[256], j1[PATH_MAX + 16];
	uint64_t lost, all[TRACED_DROP_NCAUSES], d, rec;
	int i;

	/* Losses not yet reported by a LOST record count too (client
	 * memory: a total that went backwards is no loss). */
	memcpy(all, rg->lost, sizeof(all));
	for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES && !rg->books_closed; i++) {
		d = __atomic_load_n(&rg->hdr->dropped[i], __ATOMIC_RELAXED);
		rec = __atomic_load_n(&rg->hdr->recorded[i], __ATOMIC_RELAXED);
		if (d > rec && d - rec < (UINT64_C(1) << 48))
			all[i] += d - rec;
	}
	lost = format_causes(causes, sizeof(causes), all, reply_json(r));
	if (reply_json(r)) {
		reply_line(r, "{\"type\":\"ring\",\"session\":%u,\"tid\":%d,"
		    "\"size\":%" PRIu64 ",\"fill_percent\":%" PRIu64 ","
		    "\"events\":%" PRIu64 ",\"bytes\":%" PRIu64 ","
		    "\"lost\":%" PRIu64 ",\"lost_by_cause\":{%s},"
		    "\"lost_records\":%" PRIu64 ","
		    "\"state\":\"%s\",\"stream\":%s,\"write_error\":%s}",
		    s->id, (int)rg->tid, size, fill, rg->events, rg->bytes,
		    lost, causes, rg->lost_records, rg->quarantined ? "refused" :
		    rg->finished ? "finished" : "active",
		    json_str(j1, sizeof(j1), rg->stream_path ?
		    rg->stream_path : ""),
		    rg->write_errno ? "true" : "false");
		return;
	}
	reply_line(r, "    thread %-7d ring %6" PRIu64 " KiB %3" PRIu64 "%% "
	    "full  events %" PRIu64 "  bytes %" PRIu64 "  lost %" PRIu64
	    "%s%s%s%s%s%s", (int)rg->tid, size / 1024, fill, rg->events,
	    rg->bytes, lost, lost ? " (" : "", causes, lost ? ")" : "",
	    rg->quarantined ? "  REFUSED (bad ring contents)" : "",
	    rg->finished ? "  finished" : "",
	    rg->write_errno ? "  WRITE ERROR" : "");
	if (rg->write_errno)
		reply_line(r, "      cannot write %s: %s", rg->stream_path ?
		    rg->stream_path : "(no file)", strerror(rg->write_errno));
}

/* The sessions that ended lately, with their final counts. */
static void
info_ended(struct reply *r)
{
	const struct ended *e;
	char causes[256], j1[64], j2[PATH_MAX + 16];
	uint64_t lost;
	uint32_t i;

	if (!reply_json(r) && !TAILQ_EMPTY(&td->ended))
		reply_line(r, "ended sessions (the last %d):", ENDED_KEEP);
	TAILQ_FOREACH(e, &td->ended, entry) {
		if (reply_json(r))
			reply_line(r, "{\"type\":\"ended_session\",\"session\":%u,"
			    "\"pid\":%d,\"uid\":%u,\"comm\":%s,\"dir\":%s,"
			    "\"lost_before_connect\":%" PRIu64 "}", e->id,
			    (int)e->pid, (unsigned)e->uid,
			    json_str(j1, sizeof(j1), e->comm),
			    json_str(j2, sizeof(j2), e->dir ? e->dir : ""),
			    e->lost_disconnected);
		else
			reply_line(r, "  session %u: %s[%d] uid %u, ended; %s",
			    e->id, e->comm, (int)e->pid, (unsigned)e->uid,
			    e->dir ? e->dir : "-");
		for (i = 0; i < e->nthreads; i++) {
			const struct ended_thread *t = &e->threads[i];

			lost = format_causes(causes, sizeof(causes), t->lost,
			    reply_json(r));
			if (reply_json(r))
				reply_line(r, "{\"type\":\"ended_ring\","
				    "\"session\":%u,\"tid\":%d,\"events\":%"
				    PRIu64 ",\"lost\":%" PRIu64 ","
				    "\"lost_by_cause\":{%s},\"lost_records\":%"
				    PRIu64 "}", e->id, (int)t->tid, t->events,
				    lost, causes, t->lost_records);
			else
				reply_line(r, "    thread %-7d events %" PRIu64
				    "  lost %" PRIu64 "%s%s%s", (int)t->tid,
				    t->events, lost, lost ? " (" : "", causes,
				    lost ? ")" : "");
		}
	}
}

static int
cmd_info_trace_exec(struct reply *r, int argc, char **argv)
{
	const struct session *s;
	const struct sring *rg;
	char j1[PATH_MAX + 16], j2[64], j3[PATH_MAX + 16];
	unsigned nsessions = 0;

	(void)argc;
	(void)argv;
	TAILQ_FOREACH(s, &td->sessions, entry)
		nsessions++;
	if (reply_json(r))
		reply_line(r, "{\"type\":\"trace\",\"trace_dir\":%s,"
		    "\"state\":\"%s\",\"writeout_threads\":%u,\"writeout_nice\":%d,"
		    "\"drain_interval_ms\":%u,\"default_ring_size\":%" PRIu64
		    ",\"clock\":\"%s\",\"sessions\":%u}",
		    json_str(j1, sizeof(j1), td->cfg.trace_dir),
		    td->paused ? "off" : "on", writeout_nworkers(),
		    td->cfg.writeout_nice,
		    td->cfg.drain_ms, traced_ring_size(td->cfg.ring_order),
		    traced_clock_use_tsc() && td->have_tsc ? "tsc" : "monotonic",
		    nsessions);
	else {
		reply_line(r, "trace file: %s (%s)", td->cfg.trace_dir,
		    td->paused ? "off: paused" : "on");
		reply_line(r, "writeout: %u threads (nice %d), drain every %u ms; "
		    "default ring %" PRIu64 " KiB per thread; clock %s",
		    writeout_nworkers(), td->cfg.writeout_nice, td->cfg.drain_ms,
		    traced_ring_size(td->cfg.ring_order) / 1024,
		    td->have_tsc ? "tsc (monotonic for processes that ask)" :
		    "monotonic");
		reply_line(r, "sessions: %u", nsessions);
	}
	TAILQ_FOREACH(s, &td->sessions, entry) {
		uint64_t ev = 0, lost = s->lost_disconnected;
		int i;

		TAILQ_FOREACH(rg, &s->rings, entry) {
			ev += rg->events;
			for (i = 0; i < TRACED_DROP_NCAUSES; i++)
				lost += rg->lost[i];
			for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES &&
			    !rg->books_closed; i++) {
				uint64_t d = __atomic_load_n(
				    &rg->hdr->dropped[i], __ATOMIC_RELAXED);
				uint64_t rec = __atomic_load_n(
				    &rg->hdr->recorded[i], __ATOMIC_RELAXED);

				if (d > rec && d - rec < (UINT64_C(1) << 48))
					lost += d - rec;
			}
		}
		if (reply_json(r))
			reply_line(r, "{\"type\":\"session\",\"session\":%u,"
			    "\"pid\":%d,\"uid\":%u,\"comm\":%s,\"dir\":%s,"
			    "\"rings\":%u,\"events\":%" PRIu64 ",\"lost\":%"
			    PRIu64 ",\"lost_before_connect\":%" PRIu64 ","
			    "\"state\":\"%s\"}", s->id, (int)s->pid,
			    (unsigned)s->uid, json_str(j2, sizeof(j2), s->comm),
			    json_str(j3, sizeof(j3), s->dir ? s->dir : ""),
			    s->nrings, ev, lost, s->lost_disconnected,
			    s->closing ? "ending" : "connected");
		else {
			reply_line(r, "  session %u: %s[%d] uid %u%s", s->id,
			    s->comm, (int)s->pid, (unsigned)s->uid,
			    s->closing ? " (ended, draining)" : "");
			reply_line(r, "    dir %s", s->dir ? s->dir : "-");
			reply_line(r, "    events %" PRIu64 "  lost %" PRIu64
			    "%s", ev, lost, s->lost_disconnected ?
			    " (some while no daemon ran)" : "");
		}
		TAILQ_FOREACH(rg, &s->rings, entry)
			info_ring(r, s, rg);
	}
	info_ended(r);
	return TRACED_CTL_OK;
}

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

/* A JSON string, or null for NULL. */
static const char *
json_str_null(char *buf, size_t size, const char *s)
{
	return s != NULL ? json_str(buf, size, s) : "null";
}

/*
 * The JSON members every session item has, without braces.  Sized so
 * that an item fits in one reply line with the longest strings cut.
 */
static void
session_json(char *out, size_t size, const struct index_session *s)
{
	char comm[64], name[600], exe[600], cmdline[3072], clock[32];
	char dir[2048], ended[32], how[64];

	if (s->how != NULL)
		snprintf(ended, sizeof(ended), "%" PRIu64, s->ended);
	else
		snprintf(ended, sizeof(ended), "null");
	snprintf(out, size, "\"session\":%u,\"run\":%u,\"pid\":%d,\"uid\":%u,"
	    "\"gid\":%u,\"comm\":%s,\"name\":%s,\"exe\":%s,\"cmdline\":%s,"
	    "\"clock\":%s,\"dir\":%s,\"started_ns\":%" PRIu64 ","
	    "\"ended_ns\":%s,\"how\":%s,\"events\":%" PRIu64 ","
	    "\"lost\":%" PRIu64 ",\"lost_before_connect\":%" PRIu64, s->id,
	    s->run, (int)s->pid, (unsigned)s->uid, (unsigned)s->gid,
	    json_str(comm, sizeof(comm), s->comm),
	    json_str(name, sizeof(name), s->name),
	    json_str_null(exe, sizeof(exe), s->exe),
	    json_str_null(cmdline, sizeof(cmdline), s->cmdline),
	    json_str_null(clock, sizeof(clock), s->clock),
	    json_str_null(dir, sizeof(dir), s->dir), s->started, ended,
	    json_str(how, sizeof(how), s->how != NULL ? s->how : "running"),
	    s->events, s->lost,
	    s->lost_before_connect);
}

/* One line of info sessions. */
static void
sessions_row(void *arg, const struct index_session *s)
{
	struct reply *r = arg;
	char json[TRACED_MSG_MAX], start[32], end[32], d1[16], d2[16];

	if (reply_json(r)) {
		session_json(json, sizeof(json), s);
		reply_line(r, "{%s}", json);
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

#define INFO_SESSIONS_LIMIT	100	/* sessions listed by default */

static int
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
	char json[TRACED_MSG_MAX], causes[256], t1[40], t2[40];
	uint64_t lost;

	lost = format_causes(causes, sizeof(causes), s->lost_by_cause,
	    reply_json(r));
	if (reply_json(r)) {
		session_json(json, sizeof(json), s);
		reply_line(r, "{\"type\":\"session\",%s,"
		    "\"lost_by_cause\":{%s}}", json, causes);
		return;
	}
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
	char causes[256], state[64];
	uint64_t lost;

	lost = format_causes(causes, sizeof(causes), t->lost, reply_json(r));
	if (reply_json(r))
		reply_line(r, "{\"type\":\"thread\",\"session\":%u,\"ring\":%u,"
		    "\"tid\":%d,\"ring_size\":%" PRIu64 ",\"events\":%" PRIu64
		    ",\"bytes\":%" PRIu64 ",\"lost\":%" PRIu64 ","
		    "\"lost_by_cause\":{%s},\"lost_records\":%" PRIu64 ","
		    "\"state\":%s}", si->id, t->ring, (int)t->tid,
		    t->ring_size, t->events, t->bytes, lost, causes,
		    t->lost_records, json_str(state, sizeof(state),
		    t->state != NULL ? t->state : ""));
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
	char path[PATH_MAX + 16];

	if (reply_json(si->r))
		reply_line(si->r, "{\"type\":\"stream\",\"session\":%u,"
		    "\"ring\":%u,\"tid\":%d,\"path\":%s,\"seen_ns\":%" PRIu64
		    "}", si->id, m->ring, (int)m->tid,
		    json_str(path, sizeof(path), m->path != NULL ? m->path :
		    ""), m->seen);
	else
		reply_line(si->r, "  stream      %s", m->path != NULL ?
		    m->path : "-");
}

static void
info_session_event(void *arg, const struct index_event *e)
{
	struct session_info *si = arg;
	char j1[160], j2[160], full[TRACED_NAME_MAX + TEVENTS_NAME_MAX + 2];

	if (reply_json(si->r)) {
		reply_line(si->r, "{\"type\":\"event\",\"session\":%u,"
		    "\"id\":%u,\"provider\":%s,\"name\":%s,"
		    "\"count\":%" PRIu64 "}",
		    si->id, e->id, json_str(j1, sizeof(j1), e->provider ?
		    e->provider : ""), json_str(j2, sizeof(j2), e->name ?
		    e->name : ""), e->count);
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

static int
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

static const cmd_exec_cb cmd_handlers[CMD_ID_COUNT] = {
	[CMD_ID_HELP] = cmd_help_exec,
	[CMD_ID_INFO_SESSION] = cmd_info_session_exec,
	[CMD_ID_INFO_SESSIONS] = cmd_info_sessions_exec,
	[CMD_ID_INFO_TRACE] = cmd_info_trace_exec,
	[CMD_ID_INFO_TRACE_EVENTS] = cmd_info_trace_events_exec,
	[CMD_ID_TRACE_EVENT] = cmd_trace_event_exec,
	[CMD_ID_TRACE_FILE] = cmd_trace_file_exec,
};

/*
 * Run the command line argv[0..argc) for a peer with uid/gid.  Returns
 * an enum traced_ctl_status; the reply says the rest.
 */
int
cmd_exec(struct reply *r, int argc, char **argv, uid_t uid, gid_t gid)
{
	const struct command_def *d;
	char err[512];
	int consumed;

	d = command_lookup(argc, argv, &consumed, err, sizeof(err));
	if (d == NULL) {
		reply_error(r, "%s", err);
		return TRACED_CTL_USAGE;
	}
	if (command_check_args(d, argc - consumed, err, sizeof(err)) == -1) {
		reply_error(r, "%s", err);
		return TRACED_CTL_USAGE;
	}
	if ((d->flags & CMD_F_PRIVILEGED) && uid != 0 && uid != td->uid &&
	    gid != td->gid) {
		reply_error(r, "'%s' changes the daemon's state: it needs "
		    "root, uid %u or group %u (you are uid %u)", d->name,
		    (unsigned)td->uid, (unsigned)td->gid, (unsigned)uid);
		return TRACED_CTL_DENIED;
	}
	if (cmd_handlers[d->id] == NULL) {
		reply_error(r, "'%s' is not available in this daemon", d->name);
		return TRACED_CTL_ERROR;
	}
	return cmd_handlers[d->id](r, argc - consumed, argv + consumed);
}
