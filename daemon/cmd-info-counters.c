/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * info counters: the daemon's running totals as they are now, what
 * tracectl top turns into rates by asking again each second.  No rate
 * is computed here and nothing is kept per asker: two answers and the
 * time between them (now_ns, CLOCK_MONOTONIC) are all a rate needs, so
 * any number of viewers cost the daemon nothing between their asks.
 *
 * The counts are those the loop thread already keeps from the chunks
 * the pipeline hands back (sring.c sring_chunk_done(), record.c
 * record_counts()): events written, by session, by thread (ring) and
 * by event class.  Counting them again in the drain thread would cost
 * the hot path for nothing.  Ring fill and the losses a LOST record did
 * not report yet come from each ring's header (ring_now()).  The
 * daemon's own cost is its CPU time, the whole process's and each
 * thread's (/proc/self/task: the loop, the drain, the writers...).
 *
 * Who sees what: a user sees the sessions of their own uid; root, the
 * daemon's uid and its group see every one (reply_may_see()).  The
 * daemon's CPU times and its count of every session's events are the
 * daemon's, shown to all.  Loop thread.
 */
#include <sys/types.h>

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cause.h"
#include "cmd.h"
#include "dclock.h"
#include "pdesc.h"
#include "session.h"

/* Read a small /proc file into buf, NUL-terminated.  Its length or -1. */
static ssize_t
counters_read(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/*
 * A thread's CPU time in ns: schedstat's first field (the scheduler's
 * own count, in ns), else utime + stime from stat, in clock ticks.
 * Returns 0 when neither can be read.
 */
static uint64_t
counters_thread_cpu(long tid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	long hz;
	int i;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/schedstat", tid);
	if (counters_read(path, buf, sizeof(buf)) > 0)
		return strtoull(buf, NULL, 10);
	snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", tid);
	if (counters_read(path, buf, sizeof(buf)) <= 0 ||
	    (p = strrchr(buf, ')')) == NULL)
		return 0;
	/* After "(comm) ": state is field 3, utime 14 and stime 15. */
	for (i = 2; i < 14 && p != NULL; i++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p, " %llu %llu", &ut, &st) != 2 ||
	    (hz = sysconf(_SC_CLK_TCK)) <= 0)
		return 0;
	return (ut + st) * (UINT64_C(1000000000) / (uint64_t)hz);
}

/*
 * The daemon's threads: name and CPU time of each.  The main thread's
 * name is the program's: it is the loop.
 */
static void
counters_threads(struct reply *r)
{
	char path[64], comm[32];
	struct dirent *de;
	DIR *d;
	long tid;
	ssize_t n;

	if ((d = opendir("/proc/self/task")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if ((tid = strtol(de->d_name, NULL, 10)) <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%ld/comm", tid);
		if ((n = counters_read(path, comm, sizeof(comm))) <= 0)
			continue;
		if (comm[n - 1] == '\n')
			comm[n - 1] = '\0';
		if (tid == (long)getpid())
			snprintf(comm, sizeof(comm), "loop");
		if (reply_json(r))
			reply_item(r, json_pack("{s:s, s:o, s:I, s:o}", "type",
			    "daemon_thread", "name", jstr(comm), "tid",
			    (json_int_t)tid, "cpu_ns",
			    jnum(counters_thread_cpu(tid))));
		else
			reply_line(r, "  thread %-16s %7ld  cpu %" PRIu64
			    " ms", comm, tid,
			    counters_thread_cpu(tid) / 1000000);
	}
	closedir(d);
}

/* The events of one session by event name, those it wrote any of. */
static void
counters_events(struct reply *r, const struct session *s)
{
	const struct sprov *p;
	const char *name;
	uint32_t i, k, cls;
	uint64_t n;

	for (i = 0; i < s->nprovs; i++) {
		if ((p = s->provs[i]) == NULL)
			continue;
		for (k = 0; k < p->nevents; k++) {
			cls = p->cls + k;
			if (cls >= s->nev_counts || (n = s->ev_counts[cls]) == 0)
				continue;
			name = p->d->tf.events[k].name;
			if (reply_json(r))
				reply_item(r, json_pack("{s:s, s:I, s:o, "
				    "s:o, s:o}", "type", "event", "session",
				    (json_int_t)s->id, "provider",
				    jstr(p->name), "name", jstr(name),
				    "events", jnum(n)));
			else
				reply_line(r, "    event %s:%s  %" PRIu64,
				    p->name, name, n);
		}
	}
}

/* One session's thread: its events, losses and ring fill. */
static void
counters_ring(struct reply *r, const struct session *s,
    const struct sring *rg)
{
	struct ring_now n;

	ring_now(rg, &n);
	if (reply_json(r)) {
		reply_item(r, json_pack("{s:s, s:I, s:i, s:o, s:o, s:o, s:I, "
		    "s:o, s:s, s:o}", "type", "thread", "session",
		    (json_int_t)s->id, "tid", (int)rg->tid, "events",
		    jnum(rg->events), "lost", jnum(n.total_lost),
		    "lost_by_cause", jcauses(n.lost), "fill_percent",
		    (json_int_t)n.fill, "size", jnum(n.size), "state",
		    rg->quarantined ? "refused" : rg->finished ? "finished" :
		    "active", "counted_ns", jns(rg->counted_at)));
		return;
	}
	reply_line(r, "    thread %-7d events %" PRIu64 "  lost %" PRIu64
	    "  ring %" PRIu64 " KiB %" PRIu64 "%% full", (int)rg->tid,
	    rg->events, n.total_lost, n.size / 1024, n.fill);
}

/* A session, then its threads and events. */
static void
counters_session(struct reply *r, const struct session *s)
{
	const struct sring *rg;
	uint64_t ev, all[TRACED_DROP_NCAUSES];
	char causes[256];
	uint64_t lost;

	session_now(s, &ev, all);
	lost = format_causes(causes, sizeof(causes), all);
	if (reply_json(r))
		reply_item(r, json_pack("{s:s, s:I, s:i, s:I, s:o, s:I, s:o, "
		    "s:o, s:o, s:s, s:o}", "type", "session", "session",
		    (json_int_t)s->id, "pid", (int)s->pid, "uid",
		    (json_int_t)s->uid, "comm", jstr(s->comm), "threads",
		    (json_int_t)s->nrings, "events", jnum(ev), "lost",
		    jnum(lost), "lost_by_cause", jcauses(all), "state",
		    s->closing ? "ending" : "connected", "counted_ns",
		    jns(s->counted_at)));
	else
		reply_line(r, "  session %u: %s[%d] uid %u  events %" PRIu64
		    "  lost %" PRIu64 "%s%s%s", s->id, s->comm, (int)s->pid,
		    (unsigned)s->uid, ev, lost, lost ? " (" : "", causes,
		    lost ? ")" : "");
	TAILQ_FOREACH(rg, &s->rings, entry)
		counters_ring(r, s, rg);
	counters_events(r, s);
}

int
cmd_info_counters_exec(struct reply *r, int argc, char **argv)
{
	const struct session *s;
	struct timespec cpu;
	uint64_t cpu_ns = 0;

	(void)argc;
	(void)argv;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) == 0)
		cpu_ns = (uint64_t)cpu.tv_sec * 1000000000u +
		    (uint64_t)cpu.tv_nsec;
	if (reply_json(r))
		reply_item(r, json_pack("{s:s, s:o, s:o, s:o, s:i, s:I}",
		    "type", "daemon", "now_ns", jns(now_ns(CLOCK_MONOTONIC)),
		    "cpu_ns", jnum(cpu_ns), "events_all",
		    jnum(sring_events_all()), "pid", (int)getpid(), "cpus",
		    (json_int_t)sysconf(_SC_NPROCESSORS_ONLN)));
	else
		reply_line(r, "daemon: pid %d, cpu %" PRIu64 " ms, %" PRIu64
		    " events written since start", (int)getpid(),
		    cpu_ns / 1000000, sring_events_all());
	counters_threads(r);
	TAILQ_FOREACH(s, &sessions, entry)
		if (reply_may_see(r, s->uid))
			counters_session(r, s);
	return TRACED_CTL_OK;
}
