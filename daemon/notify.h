/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * What traced tells systemd (notify.c).  Daemon-internal; loop thread.
 */
#ifndef TRACED_DAEMON_NOTIFY_H
#define TRACED_DAEMON_NOTIFY_H

#include <stdint.h>

struct event_base;

/*
 * What the STATUS= line says, asked of the caller of notify_init()
 * every few seconds: the sessions now, with the events written and lost
 * so far by those alive, and by those that ended after 'since' (ns,
 * CLOCK_REALTIME): their final counts, so that the totals do not fall
 * back when a process exits.
 */
struct notify_counts {
	unsigned	 sessions;
	uint64_t	 events;
	uint64_t	 lost;
	uint64_t	 gone_events;
	uint64_t	 gone_lost;
	int		 paused;	/* trace-file off */
};

typedef void (*notify_count_cb)(struct notify_counts *, uint64_t since);

void	notify_init(struct event_base *base, notify_count_cb count);
void	notify_reloading(void);
void	notify_reloaded(void);
void	notify_stopping(void);
void	notify_fini(void);

#endif /* TRACED_DAEMON_NOTIFY_H */
