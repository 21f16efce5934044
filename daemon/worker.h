/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The one way the daemon starts its threads (worker.c): with every
 * signal blocked from birth, and, for a thread that reports to the
 * loop, an eventfd the loop watches.  Daemon-internal; loop thread.
 */
#ifndef TRACED_DAEMON_WORKER_H
#define TRACED_DAEMON_WORKER_H

#include <pthread.h>

struct event;
struct event_base;

int	worker_spawn(const char *what, void *(*main)(void *), void *arg,
	    pthread_t *th);
int	worker_start(struct event_base *base, const char *what,
	    void *(*main)(void *), void *arg,
	    void (*cb)(int, short, void *), int *efd, struct event **ev,
	    pthread_t *th);
void	worker_self(const char *name, int nice);

#endif /* TRACED_DAEMON_WORKER_H */
