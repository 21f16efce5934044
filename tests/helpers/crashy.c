/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Test helper: traces numbered events until it is killed, and says how
 * far it got, so that a test can SIGKILL it at any moment and check that
 * nothing it committed went missing.
 *
 *   crashy [-t THREADS] [-b BURST] [-p PAUSE_US] [-r EVERY] [-o FD]
 *          [-T SECONDS]
 *
 * Each thread emits test_tick(seq) for seq = 0, 1, ... in bursts of
 * BURST events (default 32) separated by PAUSE_US microseconds (default
 * 1000; 0: no pause), and after every EVERY-th event (default 8) writes
 * "TID SEQ\n" with one write(2) to descriptor FD (default 3): the last
 * such line of a thread names an event whose trace call had returned,
 * so it was committed to the ring or counted as dropped.  One write per
 * line keeps lines whole on a pipe or an O_APPEND file whatever moment
 * the process dies.  Stops by itself after SECONDS (default 30) so that
 * a test that forgot it does not leave it running.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

static unsigned long burst = 32;
static unsigned long pause_us = 1000;
static unsigned long every = 8;
static int report_fd = 3;
static double max_seconds = 30;
static struct timespec t0;

static double
elapsed(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)(ts.tv_sec - t0.tv_sec) +
	    (double)(ts.tv_nsec - t0.tv_nsec) / 1e9;
}

static void *
worker(void *arg)
{
	unsigned long seq = 0, i;
	char line[64];
	int n, tid = gettid();

	(void)arg;
	while (elapsed() < max_seconds) {
		for (i = 0; i < burst; i++, seq++) {
			trace_test_tick(seq);
			if (seq % every == every - 1) {
				n = snprintf(line, sizeof(line), "%d %lu\n",
				    tid, seq);
				if (write(report_fd, line, (size_t)n) != n)
					exit(1);
			}
		}
		if (pause_us)
			usleep((useconds_t)pause_us);
	}
	return NULL;
}

int
main(int argc, char *argv[])
{
	pthread_t t[16];
	int nthreads = 2, ch, i;

	while ((ch = getopt(argc, argv, "t:b:p:r:o:T:")) != -1) {
		switch (ch) {
		case 't': nthreads = atoi(optarg); break;
		case 'b': burst = strtoul(optarg, NULL, 10); break;
		case 'p': pause_us = strtoul(optarg, NULL, 10); break;
		case 'r': every = strtoul(optarg, NULL, 10); break;
		case 'o': report_fd = atoi(optarg); break;
		case 'T': max_seconds = atof(optarg); break;
		default:
			fprintf(stderr, "usage: crashy [-t THREADS] [-b BURST] "
			    "[-p PAUSE_US] [-r EVERY] [-o FD] [-T SECONDS]\n");
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > 16 || burst == 0 || every == 0)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			return 1;
	for (i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
