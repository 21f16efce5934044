/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * What traced tells systemd (sd_notify(3)): READY=1 once the loop runs
 * and accepts clients, a STATUS= line every STATUS_INTERVAL_S seconds,
 * WATCHDOG=1 when the service asks for it, RELOADING=1 around a SIGHUP
 * and STOPPING=1 when a signal starts the shutdown.  Without
 * NOTIFY_SOCKET nothing here runs: no timer, no message, so the daemon
 * behaves exactly as it does outside systemd.
 *
 * WATCHDOG=1 is sent by a timer of the event loop, at half the interval
 * systemd gave in WATCHDOG_USEC, never from another thread: a loop that
 * hangs stops the pings, and systemd restarts the daemon.
 *
 * STATUS reads "3 sessions, 12345 events/s, 0 lost": the rate and the
 * running total of lost events come from counters the loop keeps anyway
 * (each ring's events and lost[]), summed by a walk of the rings once
 * per status.  Nothing is added to the drain path.  A session that ended
 * since the last status is counted from its final numbers in td->ended,
 * so the totals do not fall back when a process exits.
 *
 * Loop thread only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <systemd/sd-daemon.h>

#include "traced.h"

#define STATUS_INTERVAL_S	2

static struct {
	int		 on;		/* NOTIFY_SOCKET is set */
	struct event	*ready;		/* one-shot: first turn of the loop */
	struct event	*watchdog;
	struct event	*status;
	uint64_t	 last;		/* ns, CLOCK_REALTIME: last sample */
	uint64_t	 live_events;	/* sessions alive at the last sample */
	uint64_t	 live_lost;
	uint64_t	 lost;		/* since start */
	uint64_t	 rate;		/* events/s over the last interval */
} nt;

/* Events and lost events of a session so far. */
static void
session_counts(const struct session *s, uint64_t *events, uint64_t *lost)
{
	const struct sring *r;
	int i;

	*lost += s->lost_disconnected;
	TAILQ_FOREACH(r, &s->rings, entry) {
		*events += r->events;
		for (i = 0; i < TRACED_DROP_NCAUSES; i++)
			*lost += r->lost[i];
	}
}

/* Update the rate and the total of lost events. */
static void
sample(void)
{
	const struct session *s;
	const struct ended *e;
	uint64_t now = now_ns(CLOCK_REALTIME), ev = 0, lost = 0;
	uint64_t gone_ev = 0, gone_lost = 0, d;
	uint32_t i;
	int j;

	TAILQ_FOREACH(s, &td->sessions, entry)
		session_counts(s, &ev, &lost);
	TAILQ_FOREACH(e, &td->ended, entry) {
		if (e->ended_at <= nt.last)
			continue;
		gone_lost += e->lost_disconnected;
		for (i = 0; i < e->nthreads; i++) {
			gone_ev += e->threads[i].events;
			for (j = 0; j < TRACED_DROP_NCAUSES; j++)
				gone_lost += e->threads[i].lost[j];
		}
	}
	/* Never negative: more than ENDED_KEEP sessions may have gone. */
	d = ev + gone_ev > nt.live_events ? ev + gone_ev - nt.live_events : 0;
	if (nt.last != 0 && now > nt.last)
		nt.rate = (uint64_t)((long double)d * 1e9L /
		    (long double)(now - nt.last) + 0.5L);
	if (lost + gone_lost > nt.live_lost)
		nt.lost += lost + gone_lost - nt.live_lost;
	nt.live_events = ev;
	nt.live_lost = lost;
	nt.last = now;
}

/* Send 'first' (READY=1...) followed by a fresh STATUS= line. */
static void
send_status(const char *first)
{
	const struct session *s;
	unsigned n = 0;

	sample();
	TAILQ_FOREACH(s, &td->sessions, entry)
		n++;
	sd_notifyf(0, "%s%sSTATUS=%s%u session%s, %" PRIu64 " events/s, %"
	    PRIu64 " lost", first, first[0] != '\0' ? "\n" : "",
	    td->paused ? "paused (trace-file off), " : "", n,
	    n == 1 ? "" : "s", nt.rate, nt.lost);
}

static void
ready_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	send_status("READY=1");
}

static void
status_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	send_status("");
}

static void
watchdog_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	sd_notify(0, "WATCHDOG=1");
}

/*
 * Under systemd, arm READY=1 for the loop's first turn (call it when
 * the listening sockets are watched, just before the loop runs), the
 * status timer and, when WATCHDOG_USEC is set for this process, the
 * watchdog.  Without NOTIFY_SOCKET, does nothing.
 */
void
notify_init(struct event_base *base)
{
	struct timeval tv = { 0, 0 };
	uint64_t usec = 0;
	int r;

	if (getenv("NOTIFY_SOCKET") == NULL)
		return;
	nt.on = 1;
	nt.last = now_ns(CLOCK_REALTIME);
	if ((nt.ready = evtimer_new(base, ready_cb, NULL)) == NULL ||
	    evtimer_add(nt.ready, &tv) == -1)
		fatalx("libevent: cannot schedule the ready notification");

	nt.status = event_new(base, -1, EV_PERSIST, status_cb, NULL);
	tv.tv_sec = STATUS_INTERVAL_S;
	if (nt.status == NULL || event_add(nt.status, &tv) == -1)
		fatalx("libevent: cannot start the status timer");

	if ((r = sd_watchdog_enabled(0, &usec)) < 0)
		log_warnx("WATCHDOG_USEC: %s: no watchdog pings",
		    strerror(-r));
	if (r <= 0)
		return;
	if (usec < 2)
		usec = 2;
	tv.tv_sec = (time_t)(usec / 2 / 1000000);
	tv.tv_usec = (suseconds_t)(usec / 2 % 1000000);
	nt.watchdog = event_new(base, -1, EV_PERSIST, watchdog_cb, NULL);
	if (nt.watchdog == NULL || event_add(nt.watchdog, &tv) == -1)
		fatalx("libevent: cannot start the watchdog timer");
	log_info("systemd watchdog: %" PRIu64 " ms, pinged every %" PRIu64
	    " ms", usec / 1000, usec / 2000);
}

/* A SIGHUP is being handled: RELOADING=1. */
void
notify_reloading(void)
{
	struct timespec ts;

	if (!nt.on)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64 "\n"
	    "STATUS=reloading the configuration",
	    (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u);
}

/* The SIGHUP is handled: READY=1 again. */
void
notify_reloaded(void)
{
	if (nt.on)
		send_status("READY=1");
}

/* Shutdown has begun: STOPPING=1, and the sessions left to drain. */
void
notify_stopping(void)
{
	const struct session *s;
	unsigned n = 0;

	if (!nt.on)
		return;
	TAILQ_FOREACH(s, &td->sessions, entry)
		n++;
	sd_notifyf(0, "STOPPING=1\nSTATUS=stopping: draining %u session%s",
	    n, n == 1 ? "" : "s");
	if (nt.status != NULL)
		event_del(nt.status);
}

/* Free the timers (the loop has ended). */
void
notify_fini(void)
{
	if (nt.ready != NULL)
		event_free(nt.ready);
	if (nt.status != NULL)
		event_free(nt.status);
	if (nt.watchdog != NULL)
		event_free(nt.watchdog);
	memset(&nt, 0, sizeof(nt));
}
