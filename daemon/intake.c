/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The intake thread: work whose cost a client decides, done off the
 * loop thread.
 *
 * DESIGN
 *
 * Parsing a provider's description costs about 10 us an event (QEMU's
 * 5,000 events: 50 ms; a hostile client's 65,536: most of a second),
 * and so does writing a session's metadata.  On the loop thread that
 * is time every other client and every tracectl waits.  So the loop
 * hands such work to this thread as a job (a function to run here and
 * one to run back on the loop with the result), keeps the client it
 * concerns waiting meanwhile (its socket is not read, its rings not
 * drained), and goes on.  Jobs run one at a time, in the order given;
 * completions come back through a list and an eventfd, like the
 * writeout pool's.  The thread runs at the drain thread's niceness
 * (--writeout-nice): a new session's rings are not read until its
 * first metadata is written here, so at nice 19 next to two busy loops
 * it waited long enough for 16 MiB rings to fill (tens of thousands of
 * events lost in the first second, measured).  What one client can
 * make it do is bounded by the per-uid limits instead (traced(8)).
 *
 * A job owns its inputs (copies, or references the loop keeps alive
 * until done() runs) and touches no daemon state in work().
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <event2/event.h>

#include "intake.h"
#include "worker.h"

static struct {
	pthread_mutex_t	 lock;
	pthread_cond_t	 cond;
	struct intake_job *todo, **todo_tail;	/* under lock */
	struct intake_job *done, **done_tail;	/* under lock */
	int		 stop;			/* under lock */
	pthread_t	 thread;
	int		 running;
	int		 efd;			/* done -> loop */
	struct event	*ev;
	unsigned	 outstanding;		/* loop: jobs not done */
	int		 nice;
} ik = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
	.efd = -1,
};

static void *
intake_main(void *arg)
{
	struct intake_job *j;
	uint64_t one = 1;

	(void)arg;
	worker_self("traced-intake", ik.nice);
	pthread_mutex_lock(&ik.lock);
	for (;;) {
		while (!ik.stop && ik.todo == NULL)
			pthread_cond_wait(&ik.cond, &ik.lock);
		if ((j = ik.todo) == NULL)
			break;		/* stopping, queue empty */
		if ((ik.todo = j->next) == NULL)
			ik.todo_tail = &ik.todo;
		pthread_mutex_unlock(&ik.lock);

		j->work(j);

		pthread_mutex_lock(&ik.lock);
		j->next = NULL;
		*ik.done_tail = j;
		ik.done_tail = &j->next;
		(void)!write(ik.efd, &one, sizeof(one));
	}
	pthread_mutex_unlock(&ik.lock);
	return NULL;
}

static void
intake_done_cb(int fd, short what, void *arg)
{
	struct intake_job *j, *next;
	uint64_t n;

	(void)fd;
	(void)what;
	(void)arg;
	(void)!read(ik.efd, &n, sizeof(n));
	pthread_mutex_lock(&ik.lock);
	j = ik.done;
	ik.done = NULL;
	ik.done_tail = &ik.done;
	pthread_mutex_unlock(&ik.lock);
	for (; j != NULL; j = next) {
		next = j->next;
		ik.outstanding--;
		j->done(j);	/* frees j */
	}
}

/* Start the thread at niceness 'nice'.  0, or -1 (logged).  Loop
 * thread, once. */
int
intake_start(struct event_base *base, int nice)
{
	ik.nice = nice;
	ik.stop = 0;		/* after an intake_stop(): a new thread */
	ik.todo_tail = &ik.todo;
	ik.done_tail = &ik.done;
	if (worker_start(base, "intake", intake_main, NULL, intake_done_cb,
	    &ik.efd, &ik.ev, &ik.thread) == -1)
		return -1;
	ik.running = 1;
	return 0;
}

/*
 * Queue j: j->work runs on the intake thread, then j->done on the loop
 * thread, which must free j.  Loop thread.
 */
void
intake_submit(struct intake_job *j)
{
	j->next = NULL;
	ik.outstanding++;
	pthread_mutex_lock(&ik.lock);
	*ik.todo_tail = j;
	ik.todo_tail = &j->next;
	pthread_cond_signal(&ik.cond);
	pthread_mutex_unlock(&ik.lock);
}

/* No job out?  Loop thread. */
int
intake_idle(void)
{
	return ik.outstanding == 0;
}

/*
 * Finish every job (their done() runs here), stop the thread.  At
 * shutdown, after the loop.
 */
void
intake_stop(void)
{
	if (!ik.running)
		return;
	pthread_mutex_lock(&ik.lock);
	ik.stop = 1;
	pthread_cond_broadcast(&ik.cond);
	pthread_mutex_unlock(&ik.lock);
	pthread_join(ik.thread, NULL);
	intake_done_cb(ik.efd, EV_READ, NULL);
	event_free(ik.ev);
	close(ik.efd);
	ik.running = 0;
}
