/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * A program for the function tracing tests, built with each kind of
 * instrumentation (mk/tests.mk): ftcalls (-fpatchable-function-entry=5,
 * PIE), ftcalls-mcount (-pg -mfentry -mnop-mcount -mrecord-mcount, not
 * PIE) and ftcalls-cyg (-finstrument-functions).  Its functions are
 * noinline and noclone, so that each keeps its name and its calls, and
 * every call count below is exact.
 *
 *   ftcalls names
 *	print "fn NAME ADDR" for the functions below (ADDR: what a graph
 *	record carries for it: its entry, after endbr64 if any)
 *   ftcalls recurse N THREADS
 *	THREADS threads each run worker(): rec() N times (nested), leaf()
 *	once at the bottom, then twice more from worker()
 *   ftcalls phases DIR COUNT NPHASES
 *	phase p = 1..NPHASES: wait for DIR/go-p, test_marker(p), COUNT
 *	calls of work() (each calls leaf() once), test_marker(100 + p),
 *	create DIR/done-p
 *   ftcalls tracers DIR COUNT NPHASES
 *	the same, with a tracer of its own ("count") registered, which
 *	counts entries and exits per phase; then it is unregistered while
 *	another thread is inside its callback, and the program checks that
 *	no callback ran once traced_tracer_unregister() returned
 *   ftcalls fork COUNT
 *	work() COUNT times, fork(); the child work() COUNT times and exits
 *	from inside a traced function, the parent waits and calls work()
 *	COUNT times more
 *   ftcalls signal COUNT
 *	a handler (on an alternate stack, and on the thread's own) that
 *	calls sig_leaf() while the thread is deep in rec(); one that
 *	siglongjmp()s out of a traced function
 *   ftcalls longjmp COUNT
 *	COUNT times: jump_a() -> jump_b() -> jump_c() -> longjmp() out;
 *	then after_jumps(); more than 1024 frames are left behind in all
 *   ftcalls thread-exit
 *	a thread calls ex_a() -> ex_b() -> ex_c() -> pthread_exit(); main
 *	joins it and calls work() 10 times
 *   ftcalls exit
 *	main -> ex_a() -> ex_b() -> exit(0) from ex_c(); an atexit handler
 *	calls leaf()
 *   ftcalls status N
 *	work() 10 times, then main() returns N (its exit status)
 *   ftcalls depth N [DIR]
 *	rec(N): calls past depth 1024 are not traced, only counted; with
 *	DIR, then create DIR/done-1 and wait for DIR/go-1
 *
 * Prints "done" (or what the mode says) when it ends well.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

#define NOINLINE	__attribute__((noinline, noclone))

static volatile int sink;

static NOINLINE int
leaf(int x)
{
	__asm__ __volatile__("" : : : "memory");
	return x * 3 + 1;
}

static NOINLINE int
rec(int n)
{
	int r;

	if (n <= 1)
		return leaf(n);
	r = rec(n - 1);
	__asm__ __volatile__("" : : : "memory");
	return r + 1;
}

static NOINLINE int
work(int i)
{
	return leaf(i) + 1;
}

static NOINLINE void *
worker(void *arg)
{
	int n = (int)(long)arg;

	sink = rec(n);
	sink = leaf(1);
	sink = leaf(2);
	return NULL;
}

static void
wait_file(const char *dir, const char *what, int p)
{
	char path[4096];
	struct stat st;
	int i;

	snprintf(path, sizeof(path), "%s/%s-%d", dir, what, p);
	for (i = 0; stat(path, &st) == -1; i++) {
		if (i > 30000) {
			fprintf(stderr, "ftcalls: no %s after 30 s\n", path);
			exit(3);
		}
		usleep(1000);
	}
}

static void
touch_file(const char *dir, const char *what, int p)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s-%d", dir, what, p);
	if ((f = fopen(path, "w")) == NULL) {
		perror(path);
		exit(3);
	}
	fclose(f);
}

static NOINLINE void
run_phase(int p, int count)
{
	int i;

	trace_test_marker((uint64_t)p);
	for (i = 0; i < count; i++)
		sink = work(i);
	trace_test_marker((uint64_t)(100 + p));
}

static void
phases(const char *dir, int count, int nphases)
{
	int p;

	for (p = 1; p <= nphases; p++) {
		wait_file(dir, "go", p);
		run_phase(p, count);
		traced_flush();
		touch_file(dir, "done", p);
	}
}

/* ---- a tracer of the program's own ------------------------------------ */

static int cur_phase;
static unsigned long entries[16], exits[16];
static int unregistered, slow_cb, late_calls;	/* atomics */

static void
count_entry(void *st, const struct traced_func_call *c)
{
	unsigned long *mine = st;

	(void)c;
	mine[0]++;
	__atomic_add_fetch(&entries[__atomic_load_n(&cur_phase, __ATOMIC_ACQUIRE)],
	    1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&unregistered, __ATOMIC_ACQUIRE))
		__atomic_add_fetch(&late_calls, 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&slow_cb, __ATOMIC_ACQUIRE)) {
		/* Stay inside a while: unregister must wait for us. */
		struct timespec ts = { 0, 20000000 };

		nanosleep(&ts, NULL);
		if (__atomic_load_n(&unregistered, __ATOMIC_ACQUIRE))
			__atomic_add_fetch(&late_calls, 1, __ATOMIC_RELAXED);
	}
}

static void
count_exit(void *st, const struct traced_func_call *c)
{
	unsigned long *mine = st;

	mine[1]++;
	if (c->entry_ts == 0 || c->ts < c->entry_ts)
		mine[2]++;		/* an exit without its entry's time */
	__atomic_add_fetch(&exits[__atomic_load_n(&cur_phase, __ATOMIC_ACQUIRE)],
	    1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&unregistered, __ATOMIC_ACQUIRE))
		__atomic_add_fetch(&late_calls, 1, __ATOMIC_RELAXED);
}

static int spin_stop;			/* atomic */

static void *
spinner(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&spin_stop, __ATOMIC_ACQUIRE))
		sink = work(1);
	return NULL;
}

static void
tracers(const char *dir, int count, int nphases)
{
	struct traced_tracer t = {
		.name = "count",
		.entry = count_entry,
		.exit = count_exit,
		.state_size = 3 * sizeof(unsigned long),
	};
	pthread_t th;
	int p, rc;

	if ((rc = traced_tracer_register(&t)) != 0) {
		printf("register: %s\n", strerror(-rc));
		exit(1);
	}
	if (traced_tracer_register(&t) != -EEXIST) {
		printf("registered twice\n");
		exit(1);
	}
	for (p = 1; p <= nphases && p < 16; p++) {
		wait_file(dir, "go", p);
		__atomic_store_n(&cur_phase, p, __ATOMIC_RELEASE);
		run_phase(p, count);
		traced_flush();
		touch_file(dir, "done", p);
	}
	for (p = 1; p <= nphases && p < 16; p++)
		printf("count phase %d entries %lu exits %lu\n", p,
		    entries[p], exits[p]);
	/* Removal while another thread sits in a callback. */
	__atomic_store_n(&cur_phase, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&slow_cb, 1, __ATOMIC_RELEASE);
	pthread_create(&th, NULL, spinner, NULL);
	usleep(100000);
	rc = traced_tracer_unregister("count");
	__atomic_store_n(&unregistered, 1, __ATOMIC_RELEASE);
	usleep(100000);
	__atomic_store_n(&spin_stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	printf("unregister %d late %d entries %lu\n", rc, late_calls,
	    entries[0]);
	if (traced_tracer_unregister("count") != -ENOENT)
		printf("unregistered twice\n");
}

/* ---- fork ------------------------------------------------------------- */

static NOINLINE void
child_exit(void)
{
	traced_flush();
	exit(0);
}

static void
do_fork(int count)
{
	int i, st;
	pid_t pid;

	for (i = 0; i < count; i++)
		sink = work(i);
	fflush(stdout);
	pid = fork();
	if (pid == -1) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		for (i = 0; i < count; i++)
			sink = work(i);
		child_exit();
	}
	if (waitpid(pid, &st, 0) == -1 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		printf("child failed: %#x\n", st);
		exit(1);
	}
	for (i = 0; i < count; i++)
		sink = work(i);
	printf("child %d\n", (int)pid);
}

/* ---- signals ---------------------------------------------------------- */

static volatile sig_atomic_t handled;
static sigjmp_buf sjb;

static NOINLINE int
sig_leaf(int x)
{
	return leaf(x) + 2;
}

static void
on_signal(int sig)
{
	(void)sig;
	sink = sig_leaf(7);
	handled++;
}

static void
on_jump(int sig)
{
	(void)sig;
	sink = sig_leaf(9);
	siglongjmp(sjb, 1);
}

static NOINLINE int
deep_then_signal(int n, int sig)
{
	int r;

	if (n <= 0) {
		raise(sig);
		return leaf(0);
	}
	r = deep_then_signal(n - 1, sig);
	__asm__ __volatile__("" : : : "memory");
	return r + 1;
}

static NOINLINE void
jump_victim(void)
{
	sink = deep_then_signal(20, SIGUSR2);
}

static void
do_signal(int count)
{
	static char altstack[64 * 1024];
	struct sigaction sa;
	stack_t ss;
	volatile int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = on_jump;
	sa.sa_flags = 0;
	sigaction(SIGUSR2, &sa, NULL);
	ss.ss_sp = altstack;
	ss.ss_size = sizeof(altstack);
	ss.ss_flags = 0;
	sigaltstack(&ss, NULL);
	for (i = 0; i < count; i++) {
		sink = deep_then_signal(30, SIGUSR1);
		sink = deep_then_signal(30, SIGALRM);
		if (sigsetjmp(sjb, 1) == 0)
			jump_victim();
	}
	sink = work(5);
	printf("handled %d\n", (int)handled);
}

/* ---- longjmp ---------------------------------------------------------- */

static jmp_buf jb;

static NOINLINE void
jump_c(int i)
{
	sink = leaf(i);
	longjmp(jb, 1);
}

static NOINLINE void
jump_b(int i)
{
	jump_c(i);
	sink = 0;
}

static NOINLINE void
jump_a(int i)
{
	jump_b(i);
	sink = 0;
}

static NOINLINE int
after_jumps(int n)
{
	return rec(n);
}

static void
do_longjmp(int count)
{
	volatile int i;

	for (i = 0; i < count; i++)
		if (setjmp(jb) == 0)
			jump_a(i);
	sink = after_jumps(5);
}

/* ---- leaving from inside ---------------------------------------------- */

static NOINLINE void
ex_c(int how)
{
	sink = leaf(how);
	if (how == 0)
		pthread_exit(NULL);
	traced_flush();
	printf("done\n");
	fflush(stdout);
	exit(0);
}

static NOINLINE void
ex_b(int how)
{
	ex_c(how);
	sink = 0;
}

static NOINLINE void
ex_a(int how)
{
	ex_b(how);
	sink = 0;
}

static void *
exiter(void *arg)
{
	(void)arg;
	ex_a(0);
	return NULL;
}

static void
at_end(void)
{
	sink = leaf(42);
}

/* ---- names ------------------------------------------------------------- */

static void
print_name(const char *name, void *fn)
{
	const unsigned char *p = fn;

	/* A site after endbr64 is 4 bytes in. */
	if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
		p += 4;
	printf("fn %s %p\n", name, (const void *)p);
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int n = argc > 2 ? atoi(argv[2]) : 0;
	pthread_t th[16];
	int i;

	if (strcmp(mode, "names") == 0) {
#define NAME(f)	print_name(#f, (void *)f)
		NAME(leaf); NAME(rec); NAME(work); NAME(worker);
		NAME(run_phase); NAME(sig_leaf); NAME(deep_then_signal);
		NAME(jump_victim); NAME(jump_a); NAME(jump_b); NAME(jump_c);
		NAME(after_jumps); NAME(ex_a); NAME(ex_b); NAME(ex_c);
		NAME(child_exit); NAME(main);
#undef NAME
		return 0;
	}
	if (strcmp(mode, "recurse") == 0 && argc == 4) {
		int nt = atoi(argv[3]);

		if (nt < 1 || nt > 16 || n < 1)
			return 2;
		for (i = 0; i < nt; i++)
			pthread_create(&th[i], NULL, worker, (void *)(long)n);
		for (i = 0; i < nt; i++)
			pthread_join(th[i], NULL);
	} else if (strcmp(mode, "phases") == 0 && argc == 5)
		phases(argv[2], atoi(argv[3]), atoi(argv[4]));
	else if (strcmp(mode, "tracers") == 0 && argc == 5)
		tracers(argv[2], atoi(argv[3]), atoi(argv[4]));
	else if (strcmp(mode, "fork") == 0 && argc == 3)
		do_fork(n);
	else if (strcmp(mode, "signal") == 0 && argc == 3)
		do_signal(n);
	else if (strcmp(mode, "longjmp") == 0 && argc == 3)
		do_longjmp(n);
	else if (strcmp(mode, "thread-exit") == 0) {
		pthread_create(&th[0], NULL, exiter, NULL);
		pthread_join(th[0], NULL);
		for (i = 0; i < 10; i++)
			sink = work(i);
	} else if (strcmp(mode, "status") == 0 && argc == 3) {
		for (i = 0; i < 10; i++)
			sink = work(i);
		return n;
	} else if (strcmp(mode, "exit") == 0) {
		atexit(at_end);
		ex_a(1);
	} else if (strcmp(mode, "depth") == 0 && (argc == 3 || argc == 4)) {
		sink = rec(n);
		if (argc == 4) {
			/* Alive while the test asks info tracers. */
			touch_file(argv[3], "done", 1);
			wait_file(argv[3], "go", 1);
		}
	}
	else {
		fprintf(stderr, "usage: see tests/helpers/functrace/"
		    "ftcalls.c\n");
		return 2;
	}
	traced_flush();
	printf("done\n");
	return 0;
}
