/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of daemon/intake.c, the thread that does work a client's input
 * decides: each job's work() runs on that thread, not the loop's, one
 * job at a time in the order they were given; its done() runs back on
 * the loop thread; intake_idle() says whether a job is still out; and
 * intake_stop() finishes every job, running their done(), before it
 * returns.
 *
 * Linked with the real thread starter (worker.c) and log (log.c), and
 * driven by a real libevent loop, turned one step at a time
 * (EVLOOP_ONCE) until what a test waits for has happened or a deadline
 * has passed (a failure, never a pause: a timer wakes the loop so that
 * the deadline is seen).  A job can be held in its work() by a gate the
 * test opens, so that the tests see jobs queued behind it without
 * waiting on time.  The intake thread starts once, as in the daemon,
 * for the whole group; the test that stops it comes last.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "daemon/intake.h"
#include "daemon/log.h"

#define T_JOBS		9
#define T_DEADLINE_S	10	/* a job not done by then: failed */

/* A job of the tests. */
struct t_job {
	struct intake_job j;		/* first: intake.c's part */
	int		 n;		/* its place in the submit order */
	int		 gated;		/* its work() waits for the gate */
	pthread_t	 work_thread;	/* set by work() */
	int		 work_seq;	/* 1, 2...: the order work() ran in */
	int		 concurrent;	/* jobs in work() beside it, itself
					   included */
	pthread_t	 done_thread;	/* set by done() */
	int		 done;
};

static struct {
	struct event_base *base;
	struct event	*tick;		/* wakes the loop to see deadlines */
	pthread_t	 loop;		/* the test's thread: the loop's */
	int		 running;	/* intake started, not stopped */
	struct t_job	 jobs[T_JOBS];
	int		 order[T_JOBS];	/* done(): the jobs' n, in order */
	int		 ndone;		/* loop thread only */
	atomic_int	 seq;		/* work() calls so far */
	atomic_int	 in_work;	/* work() calls running now */
	/* The gate a job's work() waits at. */
	pthread_mutex_t	 lock;
	pthread_cond_t	 cond;
	int		 gate_open;	/* under lock */
	int		 entered;	/* under lock: a gated job waits */
	int		 left;		/* under lock: it went through */
	int		 open_at_join;	/* pthread_join() opens the gate */
} t = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static void
t_gate_open(void)
{
	pthread_mutex_lock(&t.lock);
	t.gate_open = 1;
	pthread_cond_broadcast(&t.cond);
	pthread_mutex_unlock(&t.lock);
}

/* Until a gated job waits at the gate (it is in its work()). */
static void
t_gate_entered(void)
{
	pthread_mutex_lock(&t.lock);
	while (!t.entered)
		pthread_cond_wait(&t.cond, &t.lock);
	pthread_mutex_unlock(&t.lock);
}

/* Until the gated job is through the gate (its work() returns). */
static void
t_gate_left(void)
{
	pthread_mutex_lock(&t.lock);
	while (!t.left)
		pthread_cond_wait(&t.cond, &t.lock);
	pthread_mutex_unlock(&t.lock);
}

/*
 * intake_stop() raises its stop flag, then joins the thread: the seam
 * where a job held at the gate is let go, so that the thread sees the
 * flag with jobs still queued behind that one, every time.  Other
 * joins pass through.
 */
int
pthread_join(pthread_t th, void **ret)
{
	static int (*real)(pthread_t, void **);

	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "pthread_join");
	if (t.open_at_join)
		t_gate_open();
	return real(th, ret);
}

/* Runs on the intake thread. */
static void
t_work(struct intake_job *ij)
{
	struct t_job *j = (struct t_job *)ij;

	j->concurrent = atomic_fetch_add(&t.in_work, 1) + 1;
	j->work_thread = pthread_self();
	j->work_seq = atomic_fetch_add(&t.seq, 1) + 1;
	if (j->gated) {
		pthread_mutex_lock(&t.lock);
		t.entered = 1;
		pthread_cond_broadcast(&t.cond);
		while (!t.gate_open)
			pthread_cond_wait(&t.cond, &t.lock);
		pthread_mutex_unlock(&t.lock);
	}
	atomic_fetch_sub(&t.in_work, 1);
	if (j->gated) {
		pthread_mutex_lock(&t.lock);
		t.left = 1;
		pthread_cond_broadcast(&t.cond);
		pthread_mutex_unlock(&t.lock);
	}
}

/* Runs on the loop thread; the job is the test's: nothing to free. */
static void
t_done(struct intake_job *ij)
{
	struct t_job *j = (struct t_job *)ij;

	j->done_thread = pthread_self();
	j->done++;
	assert_true(t.ndone < T_JOBS);
	t.order[t.ndone++] = j->n;
}

/* Submit jobs 0 to n - 1; job 0 waits at the gate if 'gated'. */
static void
t_submit(int n, int gated)
{
	int i;

	for (i = 0; i < n; i++) {
		t.jobs[i].n = i;
		t.jobs[i].gated = gated && i == 0;
		t.jobs[i].j.work = t_work;
		t.jobs[i].j.done = t_done;
		intake_submit(&t.jobs[i].j);
	}
}

static uint64_t
t_mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

/*
 * Turn the loop until n jobs are done (n < 0: until none is out),
 * failing at the deadline.
 */
static void
t_loop_until(int n)
{
	uint64_t deadline = t_mono_s() + T_DEADLINE_S;

	while (n >= 0 ? t.ndone < n : !intake_idle()) {
		if (t_mono_s() > deadline)
			fail_msg("%d of %d jobs done after %d s", t.ndone, n,
			    T_DEADLINE_S);
		assert_int_not_equal(event_base_loop(t.base, EVLOOP_ONCE),
		    -1);
	}
}

/* Every job of the n ran once, work() off the loop, in order. */
static void
t_check_jobs(int n)
{
	int i;

	assert_int_equal(t.ndone, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(t.order[i], i);
		assert_int_equal(t.jobs[i].done, 1);
		assert_int_equal(t.jobs[i].work_seq, i + 1);
		assert_int_equal(t.jobs[i].concurrent, 1);
		assert_false(pthread_equal(t.jobs[i].work_thread, t.loop));
		assert_true(pthread_equal(t.jobs[i].work_thread,
		    t.jobs[0].work_thread));
		assert_true(pthread_equal(t.jobs[i].done_thread, t.loop));
	}
}

static void
t_tick_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

static int
group_setup(void **state)
{
	struct timeval tv = { 0, 20000 };

	(void)state;
	log_init();
	signal(SIGPIPE, SIG_IGN);	/* test_intake_close_closes */
	t.loop = pthread_self();
	if ((t.base = event_base_new()) == NULL)
		return -1;
	t.tick = event_new(t.base, -1, EV_PERSIST, t_tick_cb, NULL);
	if (t.tick == NULL || event_add(t.tick, &tv) == -1)
		return -1;
	if (intake_start(t.base, 0) == -1)
		return -1;
	t.running = 1;
	return 0;
}

static int
group_teardown(void **state)
{
	(void)state;
	if (t.running) {
		t_gate_open();
		intake_stop();
	}
	event_free(t.tick);
	event_base_free(t.base);
	return 0;
}

static int
setup(void **state)
{
	(void)state;
	memset(t.jobs, 0, sizeof(t.jobs));
	t.ndone = 0;
	atomic_store(&t.seq, 0);
	t.gate_open = t.entered = t.left = 0;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	/* A failed test must leave no job out for the next one. */
	t_gate_open();
	if (t.running)
		t_loop_until(-1);
	return 0;
}

static void
test_intake_work_off_the_loop_done_on_it(void **state)
{
	(void)state;
	t_submit(1, 0);
	t_loop_until(1);
	t_check_jobs(1);
}

static void
test_intake_jobs_run_one_at_a_time_in_order(void **state)
{
	(void)state;
	t_submit(T_JOBS, 1);
	t_gate_entered();
	/* The first holds the thread: the others wait their turn. */
	assert_int_equal(atomic_load(&t.seq), 1);
	assert_int_equal(t.ndone, 0);
	t_gate_open();
	t_loop_until(T_JOBS);
	t_check_jobs(T_JOBS);
}

static void
test_intake_idle_until_every_done_ran(void **state)
{
	(void)state;
	assert_int_equal(intake_idle(), 1);
	t_submit(2, 1);
	t_gate_entered();
	assert_int_equal(intake_idle(), 0);
	t_gate_open();
	t_gate_left();
	/* Its work() is over, but not its done(): still out. */
	assert_int_equal(intake_idle(), 0);
	t_loop_until(2);
	assert_int_equal(intake_idle(), 1);
	t_check_jobs(2);
}

/*
 * One uid queued 5 jobs, the first held in its work(); then two other
 * uids one job each, and a second for the third uid.  Once the gate
 * opens, the uids take turns: the second uid's job waits for one of
 * the first's, not for all four (a user's new program does not wait
 * for another user's flood of jobs); each uid's jobs in its order.
 */
static void
test_intake_uids_take_turns(void **state)
{
	static const uid_t uid[8] = { 1000, 1000, 1000, 1000, 1000, 0, 2000,
	    2000 };
	static const int want[8] = { 0, 1, 5, 6, 2, 7, 3, 4 };
	int i;

	(void)state;
	for (i = 0; i < 8; i++) {
		t.jobs[i].n = i;
		t.jobs[i].gated = i == 0;
		t.jobs[i].j.uid = uid[i];
		t.jobs[i].j.work = t_work;
		t.jobs[i].j.done = t_done;
		intake_submit(&t.jobs[i].j);
		if (i == 0)
			t_gate_entered();	/* it has the thread */
	}
	t_gate_open();
	t_loop_until(8);
	for (i = 0; i < 8; i++) {
		assert_int_equal(t.order[i], want[i]);
		assert_int_equal(t.jobs[want[i]].work_seq, i + 1);
		assert_int_equal(t.jobs[want[i]].concurrent, 1);
	}
}

/*
 * A job that writes (files) is held in its work(), as a directory
 * operation waits for a busy disk's journal; a parse queued after it,
 * of the same uid, runs and is done meanwhile, on another thread: a
 * new program's answer does not wait for the disk.
 */
static void
test_intake_parse_does_not_wait_for_files(void **state)
{
	(void)state;
	t.jobs[0].gated = 1;
	t.jobs[0].j.files = 1;
	t.jobs[1].n = 1;
	t.jobs[1].j.files = 0;
	t.jobs[0].j.work = t.jobs[1].j.work = t_work;
	t.jobs[0].j.done = t.jobs[1].j.done = t_done;
	intake_submit(&t.jobs[0].j);
	t_gate_entered();
	intake_submit(&t.jobs[1].j);
	t_loop_until(1);
	assert_int_equal(t.order[0], 1);
	assert_int_equal(t.jobs[0].done, 0);	/* still at the gate */
	assert_false(pthread_equal(t.jobs[0].work_thread,
	    t.jobs[1].work_thread));
	t_gate_open();
	t_loop_until(2);
	assert_int_equal(t.order[1], 0);
	assert_int_equal(t.jobs[0].done, 1);
}

/* intake_close(): the descriptor is closed, off the loop. */
static void
test_intake_close_closes(void **state)
{
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	intake_close(p[0], 1000);
	t_loop_until(-1);
	/* The read end is gone: a write finds no reader. */
	assert_int_equal(write(p[1], "x", 1), -1);
	assert_int_equal(errno, EPIPE);
	close(p[1]);
}

/* Last: the intake thread does not start again once stopped. */
static void
test_intake_stop_finishes_every_job(void **state)
{
	(void)state;
	t_submit(T_JOBS, 1);
	t_gate_entered();
	assert_int_equal(intake_idle(), 0);
	/* No loop turn: intake_stop() runs every done() itself. */
	t.open_at_join = 1;
	intake_stop();
	t.open_at_join = 0;
	t.running = 0;
	t_check_jobs(T_JOBS);
	assert_int_equal(intake_idle(), 1);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_intake_work_off_the_loop_done_on_it),
		T(test_intake_jobs_run_one_at_a_time_in_order),
		T(test_intake_idle_until_every_done_ran),
		T(test_intake_uids_take_turns),
		T(test_intake_parse_does_not_wait_for_files),
		T(test_intake_close_closes),
		T(test_intake_stop_finishes_every_job),
	};

	return cmocka_run_group_tests_name("intake", tests, group_setup,
	    group_teardown);
}
