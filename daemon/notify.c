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
 * per status (notify_init()'s count callback).  Nothing is added to the
 * drain path.  A session that ended since the last status is counted
 * from its final numbers, so the totals do not fall back when a process
 * exits.
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

#include "dclock.h"
#include "log.h"
#include "notify.h"
#include "sock.h"

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
	notify_count_cb	 count;		/* the caller's: what to say */
} nt;

/* Update the rate and the total of lost events. */
static void
sample(struct notify_counts *c)
{
	uint64_t now = now_ns(CLOCK_REALTIME), d;

	memset(c, 0, sizeof(*c));
	nt.count(c, nt.last);
	/* Never negative: more sessions may have gone than are kept. */
	d = c->events + c->gone_events > nt.live_events ? c->events +
	    c->gone_events - nt.live_events : 0;
	if (nt.last != 0 && now > nt.last)
		nt.rate = (uint64_t)((long double)d * 1e9L /
		    (long double)(now - nt.last) + 0.5L);
	if (c->lost + c->gone_lost > nt.live_lost)
		nt.lost += c->lost + c->gone_lost - nt.live_lost;
	nt.live_events = c->events;
	nt.live_lost = c->lost;
	nt.last = now;
}

/* Send 'first' (READY=1...) followed by a fresh STATUS= line. */
static void
send_status(const char *first)
{
	struct notify_counts c;

	sample(&c);
	sd_notifyf(0, "%s%sSTATUS=%s%u session%s, %" PRIu64 " events/s, %"
	    PRIu64 " lost", first, first[0] != '\0' ? "\n" : "",
	    c.paused ? "paused (trace-file off), " : "", c.sessions,
	    c.sessions == 1 ? "" : "s", nt.rate, nt.lost);
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
 * watchdog; count() says what the status lines tell.  Without
 * NOTIFY_SOCKET, does nothing.
 */
void
notify_init(struct event_base *base, notify_count_cb count)
{
	struct timeval tv = { 0, 0 };
	uint64_t usec = 0;
	int r;

	if (getenv("NOTIFY_SOCKET") == NULL)
		return;
	nt.on = 1;
	nt.count = count;
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
	/* Before clients' work (sock.h): systemd stops a daemon that
	 * does not ping. */
	if (nt.watchdog == NULL ||
	    event_priority_set(nt.watchdog, LOOP_PRI_FIRST) == -1 ||
	    event_add(nt.watchdog, &tv) == -1)
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
	struct notify_counts c;

	if (!nt.on)
		return;
	memset(&c, 0, sizeof(c));
	nt.count(&c, nt.last);
	sd_notifyf(0, "STOPPING=1\nSTATUS=stopping: draining %u session%s",
	    c.sessions, c.sessions == 1 ? "" : "s");
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
