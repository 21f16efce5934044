/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The intake and files threads: work whose cost a client decides, or
 * that waits for the disk, done off the loop thread.
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
 * The thread is shared by every user, so each uid has a queue of its
 * own and the queues take turns, one job each: a user who queues
 * thousands of jobs (a session each, 512 sessions a uid) makes another
 * user's new program wait for one of them, not for all (issue 25).  A
 * job is kept short for the same reason: work that can be long is cut
 * into jobs that each queue the next (func.c's module files).
 *
 * There are two such threads, alike.  "intake" parses (a provider's
 * description: what a new program's first events wait for); "files"
 * writes (metadata, module files, the remembered trace directory) and
 * closes what may wait for the disk (intake_close()).  A directory
 * operation waits for the filesystem's journal, and under another
 * user's writes that took seconds (measured: 1.9 s to close a deleted
 * session directory): a parse queued behind it would leave a new
 * program running without its events (it waits 200 ms for the daemon's
 * answer).  The job says which thread (intake_job.files).
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
#include "log.h"
#include "worker.h"

/* The jobs of one uid, in the order given. */
struct intake_queue {
	uid_t		 uid;
	struct intake_job *head, **tail;
};

#define INTAKE_QUEUES_START	16

/* One thread and its queues. */
struct intake {
	const char	*name;			/* "intake", "files" */
	pthread_mutex_t	 lock;
	pthread_cond_t	 cond;
	struct intake_queue *q;			/* under lock: the uids */
	size_t		 nq, capq;		/* with jobs to do */
	size_t		 turn;			/* under lock: the next */
	struct intake_job *done, **done_tail;	/* under lock */
	int		 stop;			/* under lock */
	pthread_t	 thread;
	int		 running;
	int		 efd;			/* done -> loop */
	struct event	*ev;
	unsigned	 outstanding;		/* loop: jobs not done */
	int		 nice;
};

static struct intake threads[2] = {
	{
		.name = "intake",
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
		.efd = -1,
	}, {
		.name = "files",
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
		.efd = -1,
	},
};

/* The next job, the uids taking turns; NULL if none.  Under lock. */
static struct intake_job *
intake_next_locked(struct intake *ik)
{
	struct intake_queue *q;
	struct intake_job *j;

	if (ik->nq == 0)
		return NULL;
	if (ik->turn >= ik->nq)
		ik->turn = 0;
	q = &ik->q[ik->turn];
	j = q->head;
	if ((q->head = j->next) != NULL) {
		ik->turn++;
		return j;
	}
	/* Its uid has nothing left: the last queue takes its place (and
	 * its turn, which comes next). */
	if (ik->turn != --ik->nq) {
		*q = ik->q[ik->nq];
		if (q->tail == &ik->q[ik->nq].head)
			q->tail = &q->head;
	}
	return j;
}

static void *
intake_main(void *arg)
{
	struct intake *ik = arg;
	struct intake_job *j;
	char name[16];
	uint64_t one = 1;

	snprintf(name, sizeof(name), "traced-%s", ik->name);
	worker_self(name, ik->nice);
	pthread_mutex_lock(&ik->lock);
	for (;;) {
		while (!ik->stop && ik->nq == 0)
			pthread_cond_wait(&ik->cond, &ik->lock);
		if ((j = intake_next_locked(ik)) == NULL)
			break;		/* stopping, queues empty */
		pthread_mutex_unlock(&ik->lock);

		j->work(j);

		pthread_mutex_lock(&ik->lock);
		j->next = NULL;
		*ik->done_tail = j;
		ik->done_tail = &j->next;
		(void)!write(ik->efd, &one, sizeof(one));
	}
	pthread_mutex_unlock(&ik->lock);
	return NULL;
}

static void
intake_done_cb(int fd, short what, void *arg)
{
	struct intake *ik = arg;
	struct intake_job *j, *next;
	uint64_t n;

	(void)fd;
	(void)what;
	(void)!read(ik->efd, &n, sizeof(n));
	pthread_mutex_lock(&ik->lock);
	j = ik->done;
	ik->done = NULL;
	ik->done_tail = &ik->done;
	pthread_mutex_unlock(&ik->lock);
	for (; j != NULL; j = next) {
		next = j->next;
		ik->outstanding--;
		j->done(j);	/* frees j */
	}
}

/* Start one thread.  0, or -1 (logged). */
static int
intake_start_one(struct intake *ik, struct event_base *base, int nice)
{
	ik->nice = nice;
	ik->stop = 0;		/* after an intake_stop(): a new thread */
	ik->done_tail = &ik->done;
	if (ik->q == NULL) {
		ik->q = calloc(INTAKE_QUEUES_START, sizeof(*ik->q));
		if (ik->q == NULL) {
			log_warn("%s", ik->name);
			return -1;
		}
		ik->capq = INTAKE_QUEUES_START;
	}
	if (worker_start(base, ik->name, intake_main, ik, intake_done_cb,
	    &ik->efd, &ik->ev, &ik->thread) == -1)
		return -1;
	ik->running = 1;
	return 0;
}

/* Start both threads at niceness 'nice'.  0, or -1 (logged).  Loop
 * thread, once. */
int
intake_start(struct event_base *base, int nice)
{
	if (intake_start_one(&threads[0], base, nice) == -1 ||
	    intake_start_one(&threads[1], base, nice) == -1) {
		intake_stop();
		return -1;
	}
	return 0;
}

/* The queue of 'uid', made if need be.  Under lock. */
static struct intake_queue *
intake_queue_locked(struct intake *ik, uid_t uid)
{
	struct intake_queue *q;
	size_t i, n;

	for (i = 0; i < ik->nq; i++)
		if (ik->q[i].uid == uid)
			return &ik->q[i];
	if (ik->nq == ik->capq) {
		n = ik->capq * 2;
		q = reallocarray(ik->q, n, sizeof(*q));
		if (q == NULL)		/* never 0 queues: capq >= 16 */
			return &ik->q[ik->nq - 1];	/* shares a turn */
		/* The queues moved: their tails with them. */
		for (i = 0; i < ik->nq; i++)
			if (q[i].tail == &ik->q[i].head)
				q[i].tail = &q[i].head;
		ik->q = q;
		ik->capq = n;
	}
	q = &ik->q[ik->nq++];
	q->uid = uid;
	q->head = NULL;
	q->tail = &q->head;
	return q;
}

/*
 * Queue j: j->work runs on its thread (j->files: the files thread,
 * else the intake thread), then j->done on the loop thread, which must
 * free j.  Jobs of one uid on one thread run in the order given; the
 * uids take turns.  Loop thread.
 */
void
intake_submit(struct intake_job *j)
{
	struct intake *ik = &threads[j->files ? 1 : 0];
	struct intake_queue *q;

	j->next = NULL;
	ik->outstanding++;
	pthread_mutex_lock(&ik->lock);
	q = intake_queue_locked(ik, j->uid);
	*q->tail = j;
	q->tail = &j->next;
	pthread_cond_signal(&ik->cond);
	pthread_mutex_unlock(&ik->lock);
}

/* No job out, on either thread?  Loop thread. */
int
intake_idle(void)
{
	return threads[0].outstanding == 0 && threads[1].outstanding == 0;
}

/* Do the threads take jobs (started, not stopping)?  Loop thread. */
int
intake_accepting(void)
{
	return threads[0].running && !threads[0].stop &&
	    threads[1].running && !threads[1].stop;
}

struct close_job {
	struct intake_job j;
	int		 fd;
};

static void (*close_hook)(int);		/* limits_fds_closing() */

/*
 * hook(+1) when a descriptor is handed to the files thread to close,
 * hook(-1) once it is closed (on the loop thread).  Loop thread.
 */
void
intake_set_close_hook(void (*hook)(int delta))
{
	close_hook = hook;
}

static void
close_work(struct intake_job *j)
{
	close(((struct close_job *)j)->fd);
}

static void
close_done(struct intake_job *j)
{
	if (close_hook != NULL)
		close_hook(-1);
	free(j);
}

/*
 * Close fd on the files thread, as a job of uid's: the last descriptor
 * of a deleted file or directory frees it then, and that waits for the
 * filesystem's journal.  Here if the thread does not take jobs.  Loop
 * thread.
 */
void
intake_close(int fd, uid_t uid)
{
	struct close_job *cj;

	if (fd == -1)
		return;
	if (!intake_accepting() || (cj = calloc(1, sizeof(*cj))) == NULL) {
		close(fd);
		return;
	}
	cj->fd = fd;
	cj->j.uid = uid;
	cj->j.files = 1;
	cj->j.work = close_work;
	cj->j.done = close_done;
	if (close_hook != NULL)
		close_hook(1);
	intake_submit(&cj->j);
}

static void
intake_stop_one(struct intake *ik)
{
	if (!ik->running)
		return;
	pthread_mutex_lock(&ik->lock);
	ik->stop = 1;
	pthread_cond_broadcast(&ik->cond);
	pthread_mutex_unlock(&ik->lock);
	pthread_join(ik->thread, NULL);
	intake_done_cb(ik->efd, EV_READ, ik);
	event_free(ik->ev);
	close(ik->efd);
	free(ik->q);
	ik->q = NULL;
	ik->nq = ik->capq = 0;
	ik->running = 0;
}

/*
 * Finish every job (their done() runs here), stop the threads.  At
 * shutdown, after the loop.  A done() may queue a job on the files
 * thread (a close), so that one stops last.
 */
void
intake_stop(void)
{
	intake_stop_one(&threads[0]);
	intake_stop_one(&threads[1]);
}
