/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The function tracing benchmark's program: recursion plus short leaf
 * functions, the same source built several ways (mk/tests.mk): plain
 * (no instrumentation), with -fpatchable-function-entry=5 for traced,
 * and with -pg for uftrace.
 *
 *   funcbench THREADS DEPTH ROUNDS [SYNC]
 *	Each round, THREADS threads start together and each calls
 *	tree(DEPTH) once, timing it: 5 * 2^DEPTH - 2 calls (tree() and its
 *	leaves).  With SYNC (a path), it first runs one round untimed,
 *	creates SYNC.ready and waits for SYNC.go (the benchmark switches
 *	tracing meanwhile).  Prints
 *	  calls N ns_per_round_median M min X max Y
 *	(N: calls per thread per round; times over all rounds and threads).
 *	Between rounds it sleeps FUNCBENCH_PAUSE_MS (default 50) so that
 *	a daemon drains the rings before the next one.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE	__attribute__((noinline, noclone))

static int depth, rounds, nthreads, pause_ms = 50;
static pthread_barrier_t barrier;
static double *samples;

static NOINLINE unsigned
leaf_a(unsigned x)
{
	return x * 2654435761u;
}

static NOINLINE unsigned
leaf_b(unsigned x)
{
	return x ^ (x >> 7);
}

static NOINLINE unsigned
leaf_c(unsigned x)
{
	return x + 0x9e3779b9u;
}

/* 5 * 2^d - 2 calls, itself included. */
static NOINLINE unsigned
tree(int d, unsigned x)
{
	if (d == 0)
		return leaf_a(x) + leaf_b(x);
	return tree(d - 1, x + 1) + tree(d - 1, x + 2) + leaf_c(x);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static volatile unsigned sink;

static void *
run(void *arg)
{
	long id = (long)arg;
	uint64_t t0, t1;
	int r;

	for (r = 0; r < rounds; r++) {
		pthread_barrier_wait(&barrier);
		t0 = now_ns();
		sink = tree(depth, (unsigned)r);
		t1 = now_ns();
		samples[r * nthreads + id] = (double)(t1 - t0);
		pthread_barrier_wait(&barrier);
		/* Let a daemon drain between rounds. */
		if (id == 0 && pause_ms > 0)
			usleep((useconds_t)pause_ms * 1000);
	}
	return NULL;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void
sync_with(const char *base)
{
	char path[4096];
	struct stat st;
	FILE *f;
	int i;

	sink = tree(depth, 0);
	snprintf(path, sizeof(path), "%s.ready", base);
	if ((f = fopen(path, "w")) != NULL)
		fclose(f);
	snprintf(path, sizeof(path), "%s.go", base);
	for (i = 0; stat(path, &st) == -1 && i < 60000; i++)
		usleep(1000);
}

int
main(int argc, char **argv)
{
	pthread_t th[64];
	long i;
	int n;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: funcbench THREADS DEPTH ROUNDS [SYNC]\n");
		return 2;
	}
	nthreads = atoi(argv[1]);
	depth = atoi(argv[2]);
	rounds = atoi(argv[3]);
	if (nthreads < 1 || nthreads > 64 || depth < 1 || depth > 30 ||
	    rounds < 1)
		return 2;
	if (getenv("FUNCBENCH_PAUSE_MS") != NULL)
		pause_ms = atoi(getenv("FUNCBENCH_PAUSE_MS"));
	if (argc == 5)
		sync_with(argv[4]);
	n = nthreads * rounds;
	samples = calloc((size_t)n, sizeof(*samples));
	pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
	for (i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, run, (void *)i);
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	qsort(samples, (size_t)n, sizeof(*samples), cmp);
	printf("calls %lu ns_per_round_median %.0f min %.0f max %.0f\n",
	    5ul * (1ul << depth) - 2, samples[n / 2], samples[0],
	    samples[n - 1]);
	return 0;
}
