/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Test helper: emits events with known values so that tests can check
 * what comes out of the other end.
 *
 *   emit [-t THREADS] [-w WAVES] [-n COUNT] [-i INTERVAL_US] [-r RATE]
 *        [-s STOPFILE] [-T SECONDS] [-W GOFILE] [-L LENGTH] [-H HOLDFILE]
 *
 * Each thread w (0-based) emits, for seq = 0, 1, ...:
 *   test_mixed(seq, w, (void *)(0x1000 * (w + 1) + seq), seq % 2,
 *       "w<w>-s<seq>")
 *   test_ints(-seq % 128, -1000, -100000, -seq, 4000000000, seq * 3)
 *   test_tick(seq), test_marker(seq)  (markers only with -i: see below)
 *   test_turned_off(seq), test_off_by_default(seq)
 * With -t 0 the main thread emits (as worker 0), and the program exits
 * without any thread ending first.
 * With -r, each thread emits RATE seq values a second, in batches every
 * millisecond (as a program with bursts does; RATE/1000 at once).
 * With -n it stops after COUNT; with -s it stops when STOPFILE exists,
 * with -T after SECONDS.  With -w, it starts THREADS new threads WAVES
 * times, each wave once the last one has exited: thread churn, so that
 * rings are created and finished while others are being drained; with
 * -W, each wave after the first waits until GOFILE exists (after
 * "wave N ended" on standard error).  With -L, test_mixed's string is
 * LENGTH bytes long (up to 4095): "w<w>-s<seq>-" and then 'x's.  With
 * -H, after the last wave it says "waves done" on standard error and
 * waits until HOLDFILE exists before it exits.  It
 * prints "emitted N" (events per kind, summed over threads) on stdout
 * and exits 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

static unsigned long count = 10;
static unsigned long interval_us;
static unsigned long rate;		/* seq values per second, or 0 */
static const char *stopfile;
static double max_seconds;
static size_t str_len;			/* -L: test_mixed's string, or 0 */
static double t0;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
should_stop(unsigned long seq)
{
	if (stopfile == NULL && max_seconds == 0)
		return seq >= count;
	if (stopfile != NULL && seq % 16 == 0 && access(stopfile, F_OK) == 0)
		return 1;
	if (max_seconds > 0 && now() - t0 > max_seconds)
		return 1;
	return 0;
}

static void *
worker(void *arg)
{
	int w = (int)(long)arg;
	unsigned long seq;
	char str[4096];

	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (seq = 0; !should_stop(seq); seq++) {
		if (rate > 0 && seq % (rate >= 1000 ? rate / 1000 : 1) == 0 &&
		    seq > 0) {
			/* The next batch, a millisecond after the last. */
			next.tv_nsec += 1000000;
			if (next.tv_nsec >= 1000000000) {
				next.tv_sec++;
				next.tv_nsec -= 1000000000;
			}
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
			    NULL);
		}
		if (str_len > 0) {
			int k = snprintf(str, sizeof(str), "w%d-s%lu-", w, seq);

			if ((size_t)k < str_len)
				memset(str + k, 'x', str_len - (size_t)k);
			str[str_len] = '\0';
		} else
			snprintf(str, sizeof(str), "w%d-s%lu", w, seq);
		trace_test_mixed(seq, w, (void *)(0x1000 * (w + 1) + seq),
		    seq % 2, str);
		trace_test_ints((int8_t)-(long)(seq % 128), -1000, -100000,
		    -(int64_t)seq, 4000000000u, seq * 3);
		trace_test_tick(seq);
		trace_test_marker(seq);
		trace_test_turned_off(seq);
		trace_test_off_by_default(seq);
		if (interval_us)
			usleep((useconds_t)interval_us);
	}
	return (void *)seq;
}

int
main(int argc, char *argv[])
{
	pthread_t *t;
	int nthreads = 1, waves = 1, ch, i, wave;
	unsigned long total = 0;
	void *ret;

	const char *gofile = NULL, *holdfile = NULL;

	while ((ch = getopt(argc, argv, "t:w:n:i:r:s:T:W:L:H:")) != -1) {
		switch (ch) {
		case 't': nthreads = atoi(optarg); break;
		case 'w': waves = atoi(optarg); break;
		case 'n': count = strtoul(optarg, NULL, 10); break;
		case 'i': interval_us = strtoul(optarg, NULL, 10); break;
		case 'r': rate = strtoul(optarg, NULL, 10); break;
		case 's': stopfile = optarg; break;
		case 'T': max_seconds = atof(optarg); break;
		case 'W': gofile = optarg; break;
		case 'L': str_len = strtoul(optarg, NULL, 10); break;
		case 'H': holdfile = optarg; break;
		default:
			fprintf(stderr, "usage: emit [-t THREADS] [-w WAVES] [-n COUNT] "
			    "[-i US] [-r RATE] [-s STOPFILE] [-T SECONDS] "
			    "[-W GOFILE] [-L LENGTH] [-H HOLDFILE]\n");
			return 2;
		}
	}
	if (nthreads < 0 || nthreads > 4096 || waves < 1 || str_len > 4095)
		return 2;
	t0 = now();
	/* -t 0: the main thread emits, and exits without a thread's end. */
	if (nthreads == 0) {
		total = (unsigned long)worker((void *)0L);
		printf("emitted %lu\n", total);
		return 0;
	}
	if ((t = calloc((size_t)nthreads, sizeof(*t))) == NULL)
		return 1;
	for (wave = 0; wave < waves; wave++) {
		if (wave > 0 && gofile != NULL) {
			fprintf(stderr, "wave %d ended\n", wave);
			for (i = 0; i < 6000 && access(gofile, F_OK) != 0; i++)
				usleep(10000);
		}
		for (i = 0; i < nthreads; i++)
			if (pthread_create(&t[i], NULL, worker,
			    (void *)(long)i) != 0) {
				fprintf(stderr, "emit: pthread_create failed\n");
				return 1;
			}
		for (i = 0; i < nthreads; i++) {
			pthread_join(t[i], &ret);
			total += (unsigned long)ret;
		}
	}
	free(t);
	if (holdfile != NULL) {
		fprintf(stderr, "waves done\n");
		for (i = 0; i < 6000 && access(holdfile, F_OK) != 0; i++)
			usleep(10000);
	}
	printf("emitted %lu\n", total);
	return 0;
}
