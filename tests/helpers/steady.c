/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Test helper: traces at a steady pace and measures every trace call,
 * to show that tracing never makes a program wait, whatever its daemon
 * does (dies, restarts, stalls).
 *
 *   steady [-t THREADS] [-i INTERVAL_US] [-s STOPFILE] [-T SECONDS]
 *          [-l LATE_MS]
 *
 * Each thread emits test_tick(seq) for seq = 0, 1, ..., sleeping
 * INTERVAL_US (default 200) between events, until STOPFILE exists or
 * SECONDS (default 60) passed.  With -l, the last thread starts LATE_MS
 * after the others (a ring registered while the daemon is busy).  Each call is timed with CLOCK_MONOTONIC,
 * and the thread's context switches are read around it
 * (getrusage(RUSAGE_THREAD)): a voluntary switch inside a trace call
 * means it waited for something, an involuntary one only that the
 * scheduler ran another task meanwhile, which says nothing about the
 * tracer (two CPUs, many busy tasks) and is left out of the maximum.
 * Page faults are counted the same way: after a thread's first call,
 * which maps its ring, a trace call touches only memory mapped and
 * populated before, so it never faults, and a fault is how it could
 * come to wait (for the mmap lock, which another thread may hold).
 * At exit, one line per thread on stdout:
 *
 *   thread TID calls N max_ns M first_ns F ring_full A nested B
 *       disconnected C paused D blocked E preempted P faulted G
 *
 * max_ns is the longest call but the first among those not preempted,
 * first_ns the first (which creates the thread's ring), the next four
 * the ring's running loss totals by cause (proto/ring.h), read from its
 * header, 'blocked' how many calls but the first switched voluntarily
 * (counted in max_ns), 'preempted' how many were left out of it, and
 * 'faulted' how many calls but the first took a page fault.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

static unsigned long interval_us = 200;
static const char *stopfile;
static double max_seconds = 60;
static unsigned long late_ms;
static uint64_t t_start;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *
worker(void *arg)
{
	uint64_t seq, t0, t1, d, max = 0, first = 0, blocked = 0, preempted = 0;
	uint64_t faulted = 0;
	struct rusage ru0, ru1;
	uint64_t lost[TRACED_DROP_PRODUCER_NCAUSES] = { 0 };
	int i;

	(void)arg;
	for (seq = 0; ; seq++) {
		if (seq % 64 == 0) {
			if (stopfile != NULL && access(stopfile, F_OK) == 0)
				break;
			if ((double)(now_ns() - t_start) / 1e9 > max_seconds)
				break;
		}
		getrusage(RUSAGE_THREAD, &ru0);
		t0 = now_ns();
		trace_test_tick(seq);
		t1 = now_ns();
		getrusage(RUSAGE_THREAD, &ru1);
		d = t1 - t0;
		if (seq == 0)
			first = d;
		else if (ru1.ru_nivcsw != ru0.ru_nivcsw)
			preempted++;
		else if (d > max)
			max = d;
		if (seq != 0 && ru1.ru_nvcsw != ru0.ru_nvcsw)
			blocked++;
		if (seq != 0 && (ru1.ru_minflt != ru0.ru_minflt ||
		    ru1.ru_majflt != ru0.ru_majflt))
			faulted++;
		if (interval_us)
			usleep((useconds_t)interval_us);
	}
	/* The ring header is this thread's: see traced.h. */
	if (traced_tls.hdr != NULL)
		for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES; i++)
			lost[i] = __atomic_load_n(&traced_tls.hdr->dropped[i],
			    __ATOMIC_RELAXED);
	pthread_mutex_lock(&out_lock);
	printf("thread %d calls %llu max_ns %llu first_ns %llu ring_full %llu "
	    "nested %llu disconnected %llu paused %llu blocked %llu "
	    "preempted %llu faulted %llu\n", gettid(),
	    (unsigned long long)seq, (unsigned long long)max,
	    (unsigned long long)first,
	    (unsigned long long)lost[TRACED_DROP_RING_FULL],
	    (unsigned long long)lost[TRACED_DROP_NESTED],
	    (unsigned long long)lost[TRACED_DROP_DISCONNECTED],
	    (unsigned long long)lost[TRACED_DROP_PAUSED],
	    (unsigned long long)blocked, (unsigned long long)preempted,
	    (unsigned long long)faulted);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
	return NULL;
}

int
main(int argc, char *argv[])
{
	pthread_t t[16];
	int nthreads = 2, ch, i;

	while ((ch = getopt(argc, argv, "t:i:s:T:l:")) != -1) {
		switch (ch) {
		case 't': nthreads = atoi(optarg); break;
		case 'i': interval_us = strtoul(optarg, NULL, 10); break;
		case 's': stopfile = optarg; break;
		case 'T': max_seconds = atof(optarg); break;
		case 'l': late_ms = strtoul(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: steady [-t THREADS] "
			    "[-i INTERVAL_US] [-s STOPFILE] [-T SECONDS] "
			    "[-l LATE_MS]\n");
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > 16)
		return 2;
	t_start = now_ns();
	for (i = 0; i < nthreads; i++) {
		if (late_ms && i == nthreads - 1)
			usleep((useconds_t)(late_ms * 1000));
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			return 1;
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
