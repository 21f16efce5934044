/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Test helper: traces, forks, and both processes go on tracing.
 *
 *   forker COUNT [late]
 *
 * The parent emits test_marker(0..COUNT-1) before the fork (not with
 * "late": its first event is after the fork, so it forks with no ring
 * yet, and with a pool ring from the daemon if it has one) and
 * test_marker(COUNT..2*COUNT-1) after; the child emits
 * test_tick(0..COUNT-1).  The parent waits for the child and exits with
 * its status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace.h"

int
main(int argc, char *argv[])
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100, i;
	int status;
	pid_t pid;

	for (i = 0; argc < 3 && i < n; i++)
		trace_test_marker(i);
	pid = fork();
	if (pid == -1)
		return 1;
	if (pid == 0) {
		for (i = 0; i < n; i++)
			trace_test_tick(i);
		_exit(0);
	}
	for (i = n; i < 2 * n; i++)
		trace_test_marker(i);
	if (waitpid(pid, &status, 0) == -1)
		return 1;
	printf("child %d\n", (int)pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
