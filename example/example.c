/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The example traced program that 'make run' traces: a few worker
 * threads emitting events with integer, bool, pointer and string
 * arguments.  Its events are declared in example/trace-events; tracegen
 * turns them into trace.h and trace.c.
 *
 *   traced-example [THREADS [ITEMS]]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "trace.h"

static unsigned long items_per_thread = 10;

static void *
worker(void *arg)
{
	int id = (int)(long)arg;
	char buf[32];
	unsigned long i;

	for (i = 0; i < items_per_thread; i++) {
		trace_example_work(i, id, i % 2 == 0, buf);
		trace_example_verbose(i);
		if (i % 5 == 0) {
			snprintf(buf, sizeof(buf), "hello %lu", i);
			trace_example_message(id, buf);
		}
	}
	return NULL;
}

int
main(int argc, char *argv[])
{
	pthread_t t[16];
	int n = argc > 1 ? atoi(argv[1]) : 2, i;

	if (n < 1 || n > 16) {
		fprintf(stderr, "usage: traced-example [THREADS (1-16) "
		    "[ITEMS]]\n");
		return 2;
	}
	if (argc > 2)
		items_per_thread = strtoul(argv[2], NULL, 10);
	trace_example_start(n, "the example");
	for (i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)(long)i);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	trace_example_done((uint64_t)n * items_per_thread,
	    (size_t)n * items_per_thread * sizeof(long));
	printf("example: %d threads, %lu items each\n", n, items_per_thread);
	return 0;
}
