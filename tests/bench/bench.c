/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The benchmark program, built twice: with traced (BENCH_TRACED) and
 * with LTTng-UST (BENCH_LTTNG), tracing the same six-uint64_t event.
 *
 *   bench loop THREADS EVENTS ROUNDS
 *	Each round, THREADS threads start together and each emits EVENTS
 *	events in a tight loop, timing its loop.  Prints the ns per event
 *	over all rounds and threads (median, 10th and 90th percentile,
 *	min, max) and the events emitted:
 *	  ns median P10 P90 MIN MAX emitted N
 *   bench rate THREADS RATE SECONDS
 *	THREADS threads emit RATE events per second in all, paced in
 *	batches every millisecond, for SECONDS.  Prints "emitted N behind B"
 *	(B: batches that started late, i.e. the producer could not keep
 *	the pace).
 *   bench threads N EVENTS
 *	N threads, started one after the other, each emitting EVENTS
 *	events and exiting.  Prints "threads N seconds S peak_kb K" (the
 *	time from the first start to the last join; the peak resident
 *	memory of the process).
 *   bench lap EVENTS ROUNDS
 *	One thread emits one event (its buffers are made), then ROUNDS
 *	rounds of EVENTS events, each timed.  Prints "lap" and each
 *	round's ns/event: the first rounds run through fresh buffer
 *	memory, the later ones through memory used before.
 *
 * Timing is clock_gettime(CLOCK_MONOTONIC) around each thread's whole
 * loop, so its own cost is spread over EVENTS events.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(BENCH_TRACED)
#include "trace.h"
#define EMIT(i)	trace_bench_ev((i), (i) + 1, (i) + 2, (i) + 3, (i) + 4, (i) + 5)
#elif defined(BENCH_LTTNG)
#include "bench-lttng-tp.h"
#define EMIT(i)	lttng_ust_tracepoint(bench, ev, (i), (i) + 1, (i) + 2, \
	    (i) + 3, (i) + 4, (i) + 5)
#else
#error "build with -DBENCH_TRACED or -DBENCH_LTTNG"
#endif

static unsigned long nevents, rounds, rate_per_thread;
static double seconds;
static int nthreads;
static pthread_barrier_t barrier;
static double *samples;		/* ns per event, rounds x threads */
static unsigned long behind_total;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *
loop_thread(void *arg)
{
	long id = (long)arg;
	unsigned long r, i;
	uint64_t t0, t1;

	/* A thread's first event sets its buffers up: not timed. */
	EMIT(0);
	for (r = 0; r < rounds; r++) {
		pthread_barrier_wait(&barrier);
		t0 = now_ns();
		for (i = 0; i < nevents; i++)
			EMIT(i);
		t1 = now_ns();
		samples[r * (unsigned long)nthreads + (unsigned long)id] =
		    (double)(t1 - t0) / (double)nevents;
		pthread_barrier_wait(&barrier);
		/* Let the consumer catch up: about 0.5 s per 256 MB. */
		if (id == 0)
			usleep((useconds_t)(100000 + nevents *
			    (unsigned long)nthreads / 8));
	}
	return NULL;
}

static void *
rate_thread(void *arg)
{
	unsigned long per_batch, i, seq = 0, behind = 0;
	uint64_t start, next, end, step = 1000000;	/* 1 ms */
	struct timespec ts;

	(void)arg;
	per_batch = rate_per_thread / 1000;
	if (per_batch == 0)
		per_batch = 1;
	pthread_barrier_wait(&barrier);
	start = next = now_ns();
	end = start + (uint64_t)(seconds * 1e9);
	while (next < end) {
		for (i = 0; i < per_batch; i++, seq++)
			EMIT(seq);
		next += step;
		if (now_ns() > next) {
			behind++;
			continue;
		}
		ts.tv_sec = (time_t)(next / 1000000000u);
		ts.tv_nsec = (long)(next % 1000000000u);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	__atomic_add_fetch(&behind_total, behind, __ATOMIC_RELAXED);
	return (void *)seq;
}

/* threads mode: each thread emits 'nevents' events and exits. */
static void *
short_thread(void *arg)
{
	unsigned long i;

	(void)arg;
	for (i = 0; i < nevents; i++)
		EMIT(i);
	return NULL;
}

/* The process's peak resident memory, KiB (VmHWM). */
static unsigned long
peak_rss_kb(void)
{
	char line[256];
	unsigned long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmHWM: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * bench threads N EVENTS: N threads, started one after the other (each
 * may still run when the next starts), each emitting EVENTS events;
 * prints "threads N seconds S peak_kb K".
 */
static int
run_threads(unsigned long n)
{
	pthread_t *t = calloc(n, sizeof(*t));
	uint64_t t0, t1;
	unsigned long i;

	if (t == NULL)
		return 1;
	t0 = now_ns();
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, short_thread, NULL) != 0)
			return 1;
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	t1 = now_ns();
	printf("threads %lu seconds %.4f peak_kb %lu\n", n,
	    (double)(t1 - t0) / 1e9, peak_rss_kb());
	free(t);
	return 0;
}

/* lap mode: one thread, rounds of nevents, each timed. */
static void *
lap_thread(void *arg)
{
	unsigned long r, i;
	uint64_t t0, t1;

	(void)arg;
	EMIT(0);		/* makes the thread's buffers: not timed */
	for (r = 0; r < rounds; r++) {
		t0 = now_ns();
		for (i = 0; i < nevents; i++)
			EMIT(i);
		t1 = now_ns();
		samples[r] = (double)(t1 - t0) / (double)nevents;
		/* Let the consumer catch up between rounds. */
		usleep((useconds_t)(100000 + nevents / 8));
	}
	return NULL;
}

/*
 * bench lap EVENTS ROUNDS: one thread, ROUNDS rounds of EVENTS events;
 * prints "lap" and each round's ns/event, in order.
 */
static int
run_lap(void)
{
	pthread_t t;
	unsigned long r;

	samples = calloc(rounds, sizeof(*samples));
	if (samples == NULL)
		return 1;
	pthread_create(&t, NULL, lap_thread, NULL);
	pthread_join(t, NULL);
	printf("lap");
	for (r = 0; r < rounds; r++)
		printf(" %.2f", samples[r]);
	printf("\n");
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char *argv[])
{
	pthread_t t[64];
	unsigned long n, total = 0;
	void *ret;
	long i;

	if (argc == 4 && strcmp(argv[1], "threads") == 0) {
		nevents = strtoul(argv[3], NULL, 10);
		return run_threads(strtoul(argv[2], NULL, 10));
	}
	if (argc == 4 && strcmp(argv[1], "lap") == 0) {
		nevents = strtoul(argv[2], NULL, 10);
		rounds = strtoul(argv[3], NULL, 10);
		return run_lap();
	}
	if (argc != 5 || (strcmp(argv[1], "loop") && strcmp(argv[1], "rate"))) {
		fprintf(stderr, "usage: bench loop THREADS EVENTS ROUNDS\n"
		    "       bench rate THREADS RATE SECONDS\n"
		    "       bench threads N EVENTS\n"
		    "       bench lap EVENTS ROUNDS\n");
		return 2;
	}
	nthreads = atoi(argv[2]);
	if (nthreads < 1 || nthreads > 64)
		return 2;
	pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
	if (strcmp(argv[1], "loop") == 0) {
		nevents = strtoul(argv[3], NULL, 10);
		rounds = strtoul(argv[4], NULL, 10);
		samples = calloc(rounds * (unsigned long)nthreads,
		    sizeof(*samples));
		for (i = 0; i < nthreads; i++)
			pthread_create(&t[i], NULL, loop_thread, (void *)i);
		for (i = 0; i < nthreads; i++)
			pthread_join(t[i], NULL);
		n = rounds * (unsigned long)nthreads;
		qsort(samples, n, sizeof(*samples), cmp_double);
		printf("ns %.2f %.2f %.2f %.2f %.2f emitted %lu\n",
		    samples[n / 2], samples[n / 10], samples[n * 9 / 10],
		    samples[0], samples[n - 1], nevents * n +
		    (unsigned long)nthreads);
		return 0;
	}
	rate_per_thread = strtoul(argv[3], NULL, 10) / (unsigned long)nthreads;
	seconds = atof(argv[4]);
	for (i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, rate_thread, (void *)i);
	for (i = 0; i < nthreads; i++) {
		pthread_join(t[i], &ret);
		total += (unsigned long)ret;
	}
	printf("emitted %lu behind %lu\n", total, behind_total);
	return 0;
}
