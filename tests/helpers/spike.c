/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Test helper: a steady stream of events with a rare one in it, at a
 * moment the test chooses, for the snapshot triggers.
 *
 *   spike -g GOFILE -s STOPFILE [-i INTERVAL_US]
 *
 * Emits test_tick(seq) for seq = 0, 1, ..., sleeping INTERVAL_US
 * (default 1000) between events, until STOPFILE exists.  Whenever
 * GOFILE exists it emits test_marker(seq) once, with the seq of the
 * tick just before it, removes GOFILE and prints
 *
 *   marker SEQ at NS
 *
 * on stdout (NS: CLOCK_REALTIME, when the event was emitted), so the
 * test knows which events came before and after.  Exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

static unsigned long long
realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull +
	    (unsigned long long)ts.tv_nsec;
}

int
main(int argc, char *argv[])
{
	const char *gofile = NULL, *stopfile = NULL;
	unsigned long interval_us = 1000;
	uint64_t seq;
	int ch;

	while ((ch = getopt(argc, argv, "g:s:i:")) != -1) {
		switch (ch) {
		case 'g': gofile = optarg; break;
		case 's': stopfile = optarg; break;
		case 'i': interval_us = strtoul(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: spike -g GOFILE -s STOPFILE "
			    "[-i INTERVAL_US]\n");
			return 2;
		}
	}
	if (gofile == NULL || stopfile == NULL) {
		fprintf(stderr, "spike: -g and -s are needed\n");
		return 2;
	}
	for (seq = 0;; seq++) {
		trace_test_tick(seq);
		/* Looking for the files costs two system calls: not on
		 * every tick. */
		if (seq % 16 == 0 && access(stopfile, F_OK) == 0)
			break;
		if (seq % 16 == 0 && access(gofile, F_OK) == 0) {
			trace_test_marker(seq);
			printf("marker %llu at %llu\n",
			    (unsigned long long)seq, realtime_ns());
			fflush(stdout);
			unlink(gofile);
		}
		usleep((useconds_t)interval_us);
	}
	return 0;
}
