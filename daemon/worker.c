/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Starting the daemon's threads, the one way: every signal blocked
 * from birth (signals are the loop thread's, as libevent events), a
 * name the thread gives itself (ps, top and traced's own SIGHUP find
 * threads by it), and, for a thread that reports to the loop, an
 * eventfd the loop watches.  The drain thread, the writers, the intake
 * thread and the pool thread all start here; each module stops its own
 * (a flag under its lock, a wakeup, pthread_join()) in the order
 * main.c states.
 *
 * Loop thread, but worker_self(), which a new thread calls
 * on itself.
 */
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "sock.h"
#include "worker.h"

/*
 * Start a thread running main(arg), every signal blocked from its
 * birth.  'what' names it in the log.  0, or -1 (logged).
 */
int
worker_spawn(const char *what, void *(*main)(void *), void *arg,
    pthread_t *th)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(th, NULL, main, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		log_warnx("%s: cannot start its thread: %s", what,
		    strerror(rc));
		return -1;
	}
	return 0;
}

/*
 * A thread of the daemon that reports to the loop: an eventfd in *efd
 * that the loop watches (*ev, calling cb with 'arg'), and the thread,
 * running main(arg) (worker_spawn()).  0, or -1 (logged).
 */
int
worker_start(struct event_base *base, const char *what,
    void *(*main)(void *), void *arg, void (*cb)(int, short, void *),
    int *efd, struct event **ev, pthread_t *th)
{
	*efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (*efd == -1) {
		log_warn("%s: eventfd", what);
		return -1;
	}
	*ev = event_new(base, *efd, EV_READ | EV_PERSIST, cb, arg);
	/* What the threads finished comes before clients' work
	 * (sock.h). */
	if (*ev == NULL || event_priority_set(*ev, LOOP_PRI_FIRST) == -1 ||
	    event_add(*ev, NULL) == -1) {
		log_warnx("%s: cannot watch its eventfd", what);
		return -1;
	}
	return worker_spawn(what, main, arg, th);
}

/*
 * What a new thread does first: block every signal (again: a thread
 * started elsewhere is covered too), take its name (at most 15 bytes)
 * and niceness 'nice' (logged if refused).  The calling thread's own.
 */
void
worker_self(const char *name, int nice)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	(void)prctl(PR_SET_NAME, name, 0, 0, 0);
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), nice) == -1)
		log_warn("%s thread: setpriority %d", name, nice);
}
