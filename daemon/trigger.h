/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Snapshot triggers (trigger.c): 'tracectl trigger add GLOB snapshot'
 * makes the daemon write a flight recorder snapshot by itself when it
 * drains an event that matches GLOB, of the windows of that event's
 * user only.  The set of triggers, kept in the index; what each
 * session's event classes set off; the timers of --after.
 * Daemon-internal; loop thread.
 */
#ifndef TRACED_DAEMON_TRIGGER_H
#define TRACED_DAEMON_TRIGGER_H

#include <stddef.h>
#include <stdint.h>

struct chunk;
struct command_trigger;
struct event_base;
struct session;

/*
 * Triggers the daemon keeps: each is a bit in a session's masks by
 * event class, and the command's own limit (a glob per trigger, matched
 * against every event class of every session when triggers change).
 */
#define TRIGGER_MAX		32

/* Users whose firings one trigger remembers (--every is per user). */
#define TRIGGER_UIDS_MAX	256

/* One trigger as listed (trigger list, info trace); strings borrowed. */
struct trigger_info {
	const char	*glob;
	const char	*action;	/* "snapshot" */
	uint64_t	 after_ns;
	uint64_t	 every_ns;
	uint64_t	 fired;		/* since the daemon started */
	uint64_t	 suppressed;	/* chunks with a match it let pass:
					   within --every, or one pending */
	uint64_t	 failed;	/* firings that wrote no snapshot */
	uint64_t	 last_fired;	/* ns, CLOCK_REALTIME; 0: never */
	const char	*last_dir;	/* its last snapshot, or NULL */
	unsigned	 pending;	/* snapshots waiting for --after or
					   being written */
};

void	trigger_init(struct event_base *base);
void	trigger_stop(void);
void	trigger_fini(void);
int	trigger_add(const struct command_trigger *ct, char *err,
	    size_t errsize);
int	trigger_delete(const char *glob);
size_t	trigger_count(void);
void	trigger_get(size_t i, struct trigger_info *out);
void	trigger_chunk(struct session *s, const struct chunk *c);
void	trigger_session_free(struct session *s);

#endif /* TRACED_DAEMON_TRIGGER_H */
