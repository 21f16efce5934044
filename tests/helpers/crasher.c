/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Test helper: a traced program that dies of a signal, for the
 * traced:crash record (test 134).
 *
 *   crasher abort|segv|overflow [COUNT]
|segv [COUNT]
 *
 * The main thread traces test_marker(0) and starts a thread, which
 * traces test_tick(0) to test_tick(COUNT - 1) (default 5) and then
 * calls abort() or stores to a field of a NULL struct pointer (at
 * 0x1230, printed first as "fault at 0x1230").  overflow: it recurses
 * until its stack (256 KiB) ends.
 * The main thread waits for it, so the crash is the other thread's.
 *
 * With CRASHER_PAUSE_MS=N, the thread waits N ms between its ticks and
 * its crash (the daemon drains the ticks first).
 *
 * With CRASHER_OWN_HANDLER=1 in the environment, a constructor that
 * runs before libtraced is set up installs a SIGSEGV handler of the
 * program's own (SA_SIGINFO | SA_RESETHAND) that prints "own handler:
 * signal N code N addr 0x..." and returns: the store faults again, and
 * with the default disposition back, the process dies of SIGSEGV.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"

static unsigned long count = 5;
static const char *mode;
/*
 * Where a field 0x1230 bytes into a struct lies when the struct pointer
 * is NULL: a store there is what dereferencing it does.  Opaque to the
 * compiler, so that the store is a real one (and not UB that UBSan
 * stops at first).
 */
static volatile uintptr_t nowhere = 0x1230;

static void
own_handler(int sig, siginfo_t *si, void *uc)
{
	char line[128];
	int n;

	(void)uc;
	n = snprintf(line, sizeof(line), "own handler: signal %d code %d "
	    "addr %p\n", sig, si->si_code, si->si_addr);
	(void)!write(STDOUT_FILENO, line, (size_t)n);
}

/* Priority 101: before the generated constructor that sets libtraced
 * up (default priority), so libtraced finds this handler and keeps it. */
static void __attribute__((constructor(101)))
own_handler_install(void)
{
	struct sigaction sa;
	const char *s = getenv("CRASHER_OWN_HANDLER");

	if (s == NULL || strcmp(s, "1") != 0)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = own_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) == -1) {
		perror("sigaction");
		exit(1);
	}
}

/* Deeper and deeper, until the thread's stack ends (long before this). */
static volatile unsigned long depth_max = ~0ul;

static unsigned long __attribute__((noinline))
recurse(unsigned long depth)
{
	volatile char frame[512];

	frame[0] = (char)depth;
	if (depth == depth_max)
		return depth;
	return recurse(depth + 1) + frame[0];
}

static void *
worker(void *arg)
{
	unsigned long i;

	(void)arg;
	for (i = 0; i < count; i++)
		trace_test_tick(i);
	/* CRASHER_PAUSE_MS: the ticks are drained before the crash, which
	 * then comes alone in its packet. */
	if (getenv("CRASHER_PAUSE_MS") != NULL)
		usleep((useconds_t)strtoul(getenv("CRASHER_PAUSE_MS"), NULL,
		    10) * 1000);
	if (strcmp(mode, "abort") == 0)
		abort();
	if (strcmp(mode, "overflow") == 0)
		return (void *)recurse(0);
	printf("fault at %p\n", (void *)nowhere);
	fflush(stdout);
	*(volatile int *)nowhere = 1;
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_attr_t attr;
	pthread_t t;

	if (argc < 2 || argc > 3 || (strcmp(argv[1], "abort") != 0 &&
	    strcmp(argv[1], "segv") != 0 &&
	    strcmp(argv[1], "overflow") != 0)) {
		fprintf(stderr, "usage: crasher abort|segv|overflow "
		    "[COUNT]\n");
		return 2;
	}
	mode = argv[1];
	if (argc == 3)
		count = strtoul(argv[2], NULL, 10);
	trace_test_marker(0);
	/* A small stack: an overflow comes soon. */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);
	if (pthread_create(&t, &attr, worker, NULL) != 0) {
		fprintf(stderr, "crasher: cannot start a thread\n");
		return 1;
	}
	pthread_join(t, NULL);
	fprintf(stderr, "crasher: still alive\n");
	return 1;
}
