/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Test helper for tracectl print, stats and export: events with every
 * kind of argument and known values, and jobs whose start and end pair
 * up.
 *
 *   jobs [-t THREADS] [-n JOBS] [-b BURST]
 *
 * The main thread emits, once each, in this order:
 *   test_crc(0x0badcafe, 0xfedcba9876543210, INT64_MIN + 1,
 *       (void *)0xdeadbeef)
 *   test_words("alpha", NULL, true, -5, 'x')
 *   test_words("(null)", "(null)", false, 9007199254740993, 'y')
 *   test_small(-1, 255, -300, 65535)
 *   test_raw(-42, "tab\there")
 * then each of THREADS (default 2) worker threads w (0-based) runs JOBS
 * (default 5) jobs j = 1000 * w + k, k = 0..JOBS-1:
 *   test_job_start(j, w), then test_job_done(j, w, ns it took)
 * and with -b, each worker then emits BURST test_tick events at once
 * (to overflow a small ring: lost events).  Prints "jobs N" (jobs in
 * all) and exits 0.
 */
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

static unsigned long njobs = 5;
static unsigned long burst;

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
	int w = (int)(long)arg;
	unsigned long k;
	uint64_t t0;

	for (k = 0; k < njobs; k++) {
		int job = 1000 * w + (int)k;

		t0 = now_ns();
		trace_test_job_start(job, w);
		usleep(100 + 50 * (useconds_t)k);
		trace_test_job_done(job, w, now_ns() - t0);
	}
	for (k = 0; k < burst; k++)
		trace_test_tick(k);
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t *th;
	int c, i, nthreads = 2;

	while ((c = getopt(argc, argv, "b:n:t:")) != -1) {
		switch (c) {
		case 'b':
			burst = strtoul(optarg, NULL, 10);
			break;
		case 'n':
			njobs = strtoul(optarg, NULL, 10);
			break;
		case 't':
			nthreads = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: jobs [-t THREADS] [-n JOBS] "
			    "[-b BURST]\n");
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > 64)
		return 2;
	trace_test_crc(0x0badcafe, 0xfedcba9876543210ull, INT64_MIN + 1,
	    (void *)0xdeadbeef);
	trace_test_words("alpha", NULL, true, -5, 'x');
	trace_test_words("(null)", "(null)", false, 9007199254740993L, 'y');
	trace_test_small(-1, 255, -300, 65535);
	trace_test_raw(-42, "tab\there");
	if ((th = calloc((size_t)nthreads, sizeof(*th))) == NULL)
		return 1;
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(long)i) != 0)
			return 1;
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	free(th);
	printf("jobs %lu\n", njobs * (unsigned long)nthreads);
	return 0;
}
