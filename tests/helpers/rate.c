/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Test helper: traces at a fixed total rate, to show that a program
 * keeps every event while something else loads the daemon.
 *
 *   rate [-t THREADS] [-r EVENTS_PER_S] [-s STOPFILE] [-T SECONDS]
 *
 * Each thread emits test_tick(seq) for seq = 0, 1, ..., its share of
 * EVENTS_PER_S (default 500000, over 2 threads), in a batch every
 * millisecond on an absolute schedule: a thread that wakes up late
 * emits what it owes at once, so the rate holds on average whatever the
 * scheduler does.  It stops when STOPFILE exists or after SECONDS
 * (default 10).  At exit, one line per thread and a total:
 *
 *   thread TID emitted N dropped D
 *   emitted N dropped D
 *
 * 'dropped' is what the thread's ring counted as lost (proto/ring.h:
 * ring full, nested, no daemon, paused), read from its header.  Exit
 * status 0, or 2 on a usage error.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

#define RATE_THREADS_MAX	16

static double rate = 500000;
static int nthreads = 2;
static const char *stopfile;
static double seconds = 10;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long total_emitted, total_dropped;

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
	double per_ns = rate / nthreads / 1e9;
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(seconds * 1e9), seq = 0;
	uint64_t tick, owed, dropped = 0;
	struct timespec next;
	int i;

	(void)arg;
	for (tick = 1; ; tick++) {
		uint64_t now = now_ns();

		if (now >= end || (stopfile != NULL && tick % 16 == 0 &&
		    access(stopfile, F_OK) == 0))
			break;
		/* Events owed by now, on the schedule since t0. */
		owed = (uint64_t)((double)(now - t0) * per_ns);
		while (seq < owed)
			trace_test_tick(seq++);
		next.tv_sec = (time_t)((t0 + tick * 1000000u) / 1000000000u);
		next.tv_nsec = (long)((t0 + tick * 1000000u) % 1000000000u);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
		    NULL) != 0)
			;
	}
	/* The ring header is this thread's: see traced.h. */
	if (traced_tls.hdr != NULL)
		for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES; i++)
			dropped += __atomic_load_n(&traced_tls.hdr->dropped[i],
			    __ATOMIC_RELAXED);
	pthread_mutex_lock(&out_lock);
	printf("thread %d emitted %llu dropped %llu\n", gettid(),
	    (unsigned long long)seq, (unsigned long long)dropped);
	total_emitted += seq;
	total_dropped += dropped;
	pthread_mutex_unlock(&out_lock);
	return NULL;
}

int
main(int argc, char *argv[])
{
	pthread_t t[RATE_THREADS_MAX];
	int ch, i;

	while ((ch = getopt(argc, argv, "t:r:s:T:")) != -1) {
		switch (ch) {
		case 't': nthreads = atoi(optarg); break;
		case 'r': rate = atof(optarg); break;
		case 's': stopfile = optarg; break;
		case 'T': seconds = atof(optarg); break;
		default:
			goto usage;
		}
	}
	if (optind != argc || nthreads < 1 || nthreads > RATE_THREADS_MAX ||
	    rate <= 0 || seconds <= 0)
		goto usage;
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0) {
			perror("rate: pthread_create");
			return 1;
		}
	for (i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	printf("emitted %llu dropped %llu\n", total_emitted, total_dropped);
	return 0;
usage:
	fprintf(stderr, "usage: rate [-t THREADS] [-r EVENTS_PER_S] "
	    "[-s STOPFILE] [-T SECONDS]\n");
	return 2;
}
