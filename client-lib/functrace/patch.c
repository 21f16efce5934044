/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Patching the sites of instrumented functions while the program runs:
 * a site becomes "call <trampoline>" when its function is to be traced
 * and some tracer is on, and a five-byte nop again when not.  x86-64
 * only.  Connection thread, under ft.lock.
 *
 * DESIGN
 *
 * A call rel32 reaches 2 GiB: each object gets a trampoline page next
 * to it (jmp *abs to ft_entry_stub), mapped with MAP_FIXED_NOREPLACE.
 *
 * While sites change, no other thread may run through them, and each
 * must see the new bytes whole.  Every patch is done with all other
 * threads stopped or proven outside the sites:
 *
 *   - a thread that is running and takes our signal is stopped: the
 *     signal (a free real-time signal, TRACED_FUNC_SIGNAL to choose)
 *     parks it in a handler that records where it was and waits on a
 *     futex until the patch is done, then serializes (cpuid) and goes
 *     on where it was;
 *   - a thread asleep in a system call is left asleep, not signalled
 *     (no EINTR for the program): /proc/self/task/TID/syscall says it
 *     is in the kernel, at an address in libc, and its run time
 *     (schedstat) is read again afterwards; since sites are written with
 *     one atomic 8- or 16-byte store, even a thread that woke meanwhile
 *     sees the old bytes or the new ones, never a mix;
 *   - a thread that runs with the signal blocked cannot be stopped:
 *     the patch waits for it to sleep, a few times, then is refused.
 *
 * The loader's lock is held throughout (the work runs inside
 * dl_iterate_phdr()), so no object is loaded or unloaded meanwhile; an
 * object found gone is never touched.
 *
 * -fpatchable-function-entry=5 sites are five one-byte nops: a thread
 * may be between two of them, or have been interrupted there by a signal
 * whose handler has not returned.  The first time an object's sites are
 * patched they are all turned into one five-byte nop ("converted"),
 * with every thread that can take the signal stopped, the stopped
 * threads' instruction pointers checked, and their stacks (and those of
 * the sleeping ones) scanned for signal frames (found by the address of
 * the signal return trampoline) whose saved instruction pointer is
 * inside a site.  If one is, the attempt is released and retried.
 *
 * Nothing here allocates while threads are stopped (one of them may
 * hold the allocator's lock); reasons are logged after the release.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "functrace.h"
#include "../internal.h"

#if defined(__x86_64__)

#define FT_STW_MAX		2048	/* threads a patch can deal with */
#define FT_PARK_WAIT_MS		500	/* for stopped threads to park */
#define FT_ATTEMPTS		20	/* a patch is refused after these */
#define FT_RETRY_MS		5
#define FT_SIGFRAME_SCAN	(1u << 20)	/* stack bytes scanned */
#define FT_SIGFRAME_RIP		176	/* pretcode to uc_mcontext's rip */

enum ft_how {
	FT_PARKED = 1,		/* signalled, parked in ft_park() */
	FT_ASLEEP,		/* in a system call, left alone */
	FT_EXITED_T,		/* gone before it parked */
};

/*
 * The stop-the-world rendezvous, shared with the handler (which may
 * only read it and write its own slot).
 */
static struct {
	uint32_t	 gen;		/* this request (in si_value) */
	uint32_t	 release;	/* == gen: stopped threads go on */
	uint32_t	 nparked;
	uint32_t	 nleft;		/* parked threads out of the handler */
	int		 ntids;
	pid_t		 tids[FT_STW_MAX];
	uint32_t	 parked[FT_STW_MAX];	/* gen it parked for */
	uintptr_t	 rip[FT_STW_MAX];
	uintptr_t	 rsp[FT_STW_MAX];
	uint8_t		 how[FT_STW_MAX];	/* enum ft_how */
	uint64_t	 runtime[FT_STW_MAX];	/* asleep: ns run so far */
} stw;

static int ft_sig;			/* our signal, once installed */
static uintptr_t ft_restorer;		/* the kernel's return from it */

/* One change of one site. */
struct ft_op {
	struct ft_module *m;
	uint32_t	 k;		/* function index */
	uint8_t		 want;		/* 1: a call */
	uint8_t		 convert;	/* it is five nops now */
	uint8_t		 failed;
	unsigned char	 bytes[FT_SITE_LEN];
};

struct ft_batch {
	struct ft_op	*op;
	size_t		 n;
	int		 convert;	/* some op converts */
	int		 plain;		/* some site crosses 16 bytes: no
					   atomic write; every thread is
					   stopped for it, as to convert */
	uintptr_t	*vma;		/* convert: pairs lo, hi */
	size_t		 nvma;
	char		 why[256];
};

static long
ft_futex(uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

static pid_t
ft_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* ---- the stopped thread's side ----------------------------------------- */

/*
 * Our signal.  Parks the thread when it is for the current request,
 * then waits for the release; anything else returns at once.  Runs on
 * an application thread at any point: async-signal-safe, no TLS.
 */
static void
ft_park(int sig, siginfo_t *si, void *ucv)
{
	const ucontext_t *uc = ucv;
	int saved = errno, i, n;
	uint32_t gen = __atomic_load_n(&stw.gen, __ATOMIC_ACQUIRE), rel;
	pid_t me;

	(void)sig;
	if (si->si_code != SI_QUEUE || si->si_pid != getpid() || gen == 0 ||
	    (uint32_t)si->si_value.sival_int != gen)
		goto out;
	me = ft_tid();
	n = __atomic_load_n(&stw.ntids, __ATOMIC_ACQUIRE);
	for (i = 0; i < n && i < FT_STW_MAX; i++)
		if (__atomic_load_n(&stw.tids[i], __ATOMIC_RELAXED) == me)
			break;
	if (i == n || i == FT_STW_MAX ||
	    __atomic_load_n(&stw.parked[i], __ATOMIC_RELAXED) == gen)
		goto out;
	stw.rip[i] = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	stw.rsp[i] = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	__atomic_store_n(&stw.parked[i], gen, __ATOMIC_RELEASE);
	__atomic_add_fetch(&stw.nparked, 1, __ATOMIC_ACQ_REL);
	(void)ft_futex(&stw.nparked, FUTEX_WAKE_PRIVATE, 1, NULL);
	/*
	 * Until this request is released, or a later one: a handler late
	 * for its request (the patcher gave up waiting, released it and
	 * went on to the next) must not wait for a release that passed.
	 * Requests are numbered upwards: the difference says which came
	 * first, across the wrap too.
	 */
	while ((int32_t)((rel = __atomic_load_n(&stw.release,
	    __ATOMIC_ACQUIRE)) - gen) < 0)
		(void)ft_futex(&stw.release, FUTEX_WAIT_PRIVATE, rel, NULL);
	__atomic_add_fetch(&stw.nleft, 1, __ATOMIC_ACQ_REL);
	(void)ft_futex(&stw.nleft, FUTEX_WAKE_PRIVATE, 1, NULL);
	/* Code may have changed under us: serialize before going on. */
	{
		unsigned a = 0, b, c = 0, d;

		__asm__ __volatile__("cpuid" : "+a"(a), "=b"(b), "+c"(c),
		    "=d"(d) : : "memory");
	}
out:
	errno = saved;
}

/* The kernel's idea of a signal action, for the restorer address. */
struct ft_ksigaction {
	void		*handler;
	unsigned long	 flags;
	void		*restorer;
	uint64_t	 mask;
};

/*
 * Install ft_park() on a free real-time signal, once; later, check it
 * is still ours.  0, or -1 with the reason in why.
 */
static int
ft_sig_install(char *why, size_t len)
{
	struct sigaction sa, old;
	struct ft_ksigaction ks;
	const char *env;
	int s, lo, hi;

	if (ft_sig != 0) {
		if (sigaction(ft_sig, NULL, &old) == 0 &&
		    (old.sa_flags & SA_SIGINFO) && old.sa_sigaction == ft_park)
			return 0;
		snprintf(why, len, "the program took signal %d, which function "
		    "tracing uses (set TRACED_FUNC_SIGNAL to another)", ft_sig);
		return -1;
	}
	lo = SIGRTMIN + 2;
	hi = SIGRTMAX - 2;
	if ((env = getenv("TRACED_FUNC_SIGNAL")) != NULL && *env != '\0') {
		lo = hi = atoi(env);
		if (lo < SIGRTMIN || lo > SIGRTMAX) {
			snprintf(why, len, "TRACED_FUNC_SIGNAL=%s is not a "
			    "real-time signal (%d to %d)", env, SIGRTMIN,
			    SIGRTMAX);
			return -1;
		}
	}
	for (s = hi; s >= lo; s--) {
		if (sigaction(s, NULL, &old) != 0 ||
		    (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = ft_park;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigfillset(&sa.sa_mask);
		if (sigaction(s, &sa, NULL) != 0)
			continue;
		if (syscall(SYS_rt_sigaction, s, NULL, &ks, 8) == 0)
			ft_restorer = (uintptr_t)ks.restorer;
		ft_sig = s;
		DEBUG("function tracing: stops threads with signal %d", s);
		return 0;
	}
	snprintf(why, len, "no free real-time signal to stop threads with "
	    "(set TRACED_FUNC_SIGNAL)");
	return -1;
}

/* ---- looking at other threads ----------------------------------------- */

/* Read /proc/self/task/TID/FILE into buf (NUL-terminated): its length. */
static ssize_t
ft_task_read(pid_t tid, const char *file, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* What a thread is doing, as /proc says. */
struct ft_task {
	char		 state;		/* R, S, D, ... */
	int		 sig_blocked;	/* it blocks ft_sig */
	int		 in_syscall;	/* asleep in a system call */
	uintptr_t	 sp, pc;	/* then: its user stack and pc */
	uint64_t	 runtime;	/* ns on a CPU so far */
};

static int
ft_task_look(pid_t tid, struct ft_task *t)
{
	char buf[2048], *p;
	unsigned long long v;

	memset(t, 0, sizeof(*t));
	if (ft_task_read(tid, "stat", buf, sizeof(buf)) <= 0 ||
	    (p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return -1;
	t->state = p[2];
	if (ft_task_read(tid, "status", buf, sizeof(buf)) <= 0 ||
	    (p = strstr(buf, "\nSigBlk:")) == NULL)
		return -1;
	v = strtoull(p + 8, NULL, 16);
	t->sig_blocked = (v >> (ft_sig - 1)) & 1;
	if (ft_task_read(tid, "schedstat", buf, sizeof(buf)) > 0)
		t->runtime = strtoull(buf, NULL, 10);
	if (ft_task_read(tid, "syscall", buf, sizeof(buf)) > 0 &&
	    buf[0] >= '0' && buf[0] <= '9') {
		/* "nr a1 a2 a3 a4 a5 a6 sp pc" */
		unsigned long f[9];
		int k;

		p = buf;
		for (k = 0; k < 9; k++) {
			char *end;

			f[k] = strtoul(p, &end, k == 0 ? 10 : 16);
			if (end == p)
				break;
			p = end;
		}
		if (k == 9) {
			t->in_syscall = 1;
			t->sp = f[7];
			t->pc = f[8];
		}
	}
	return 0;
}

/* The threads of the process, into tids (at most max): their count. */
static int
ft_tasks(pid_t *tids, int max)
{
	char buf[4096];
	int fd, n = 0;
	long k, off;

	fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1)
		return -1;
	while ((k = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (off = 0; off < k; ) {
			struct {
				uint64_t	 ino;
				int64_t		 off;
				unsigned short	 reclen;
				unsigned char	 type;
				char		 name[];
			} *d = (void *)(buf + off);

			if (d->name[0] >= '1' && d->name[0] <= '9') {
				if (n >= max) {
					close(fd);
					return -1;
				}
				tids[n++] = (pid_t)atoi(d->name);
			}
			off += d->reclen;
		}
	}
	close(fd);
	return n;
}

static void
ft_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static uint64_t
ft_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * Let every parked thread go, and see them out of the handler (up to
 * FT_LEAVE_WAIT_MS): one still in it has our signal blocked, and the
 * next request would find it asleep and refuse what needs it stopped.
 */
#define FT_LEAVE_WAIT_MS	100

static void
ft_release(void)
{
	uint32_t parked, left;
	uint64_t deadline;

	__atomic_store_n(&stw.release, stw.gen, __ATOMIC_RELEASE);
	(void)ft_futex(&stw.release, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
	parked = __atomic_load_n(&stw.nparked, __ATOMIC_ACQUIRE);
	deadline = ft_now_ms() + FT_LEAVE_WAIT_MS;
	while ((left = __atomic_load_n(&stw.nleft, __ATOMIC_ACQUIRE)) <
	    parked && ft_now_ms() < deadline) {
		struct timespec ts = { 0, 1000000 };

		(void)ft_futex(&stw.nleft, FUTEX_WAIT_PRIVATE, left, &ts);
	}
}

/*
 * Stop every other thread, or prove it asleep (see DESIGN).  With
 * 'all', asleep threads that take the signal are stopped too.  0, or
 * -1 with the reason in why (every thread released).
 */
static int
ft_stop(int all, char *why, size_t len)
{
	pid_t self = ft_tid(), tids[FT_STW_MAX];
	uint32_t want = 0, gen, have;
	int n, i, j, round, found_new;
	struct ft_task tk;
	siginfo_t si;
	uint64_t deadline;

	gen = stw.gen + 1 ? stw.gen + 1 : 1;
	__atomic_store_n(&stw.ntids, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&stw.nparked, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&stw.nleft, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&stw.gen, gen, __ATOMIC_RELEASE);
	for (round = 0; round < 8; round++) {
		if ((n = ft_tasks(tids, FT_STW_MAX)) < 0) {
			snprintf(why, len, "more than %d threads, or no "
			    "/proc/self/task", FT_STW_MAX);
			goto fail;
		}
		found_new = 0;
		for (j = 0; j < n; j++) {
			/* The pager runs only libtraced's own code, never
			 * a site: with its signals blocked it would count
			 * as asleep, and refuse every site a plain write
			 * must convert. */
			if (tids[j] == self || tids[j] ==
			    __atomic_load_n(&lib.pager_tid, __ATOMIC_ACQUIRE))
				continue;
			for (i = 0; i < stw.ntids; i++)
				if (stw.tids[i] == tids[j])
					break;
			if (i < stw.ntids)
				continue;
			found_new = 1;
			i = stw.ntids;
			/* A late handler of an older request may read these:
			 * atomics, though it only ever finds its gen stale. */
			__atomic_store_n(&stw.tids[i], tids[j], __ATOMIC_RELAXED);
			__atomic_store_n(&stw.parked[i], 0, __ATOMIC_RELAXED);
			stw.how[i] = 0;
			/* The handler may look from now on. */
			__atomic_store_n(&stw.ntids, i + 1, __ATOMIC_RELEASE);
			if (ft_task_look(tids[j], &tk) == -1) {
				stw.how[i] = FT_EXITED_T;
				continue;
			}
			if (tk.in_syscall && (tk.state == 'S' ||
			    tk.state == 'D') && (!all || tk.sig_blocked)) {
				stw.how[i] = FT_ASLEEP;
				stw.rsp[i] = tk.sp;
				stw.rip[i] = tk.pc;
				stw.runtime[i] = tk.runtime;
				continue;
			}
			if (tk.sig_blocked) {
				snprintf(why, len, "thread %d runs with signal "
				    "%d blocked", (int)tids[j], ft_sig);
				goto fail;
			}
			memset(&si, 0, sizeof(si));
			si.si_signo = ft_sig;
			si.si_code = SI_QUEUE;
			si.si_pid = getpid();
			si.si_uid = getuid();
			si.si_value.sival_int = (int)gen;
			if (syscall(SYS_rt_tgsigqueueinfo, getpid(), tids[j],
			    ft_sig, &si) == -1) {
				stw.how[i] = FT_EXITED_T;
				continue;
			}
			stw.how[i] = FT_PARKED;
			want++;
		}
		/* Wait for the signalled ones to park. */
		deadline = ft_now_ms() + FT_PARK_WAIT_MS;
		while ((have = __atomic_load_n(&stw.nparked,
		    __ATOMIC_ACQUIRE)) < want) {
			struct timespec ts = { 0, 2000000 };

			if (ft_now_ms() > deadline) {
				/* Threads that exited will never park. */
				for (i = 0; i < stw.ntids; i++)
					if (stw.how[i] == FT_PARKED &&
					    __atomic_load_n(&stw.parked[i],
					    __ATOMIC_ACQUIRE) != gen &&
					    ft_task_look(stw.tids[i], &tk) ==
					    -1) {
						stw.how[i] = FT_EXITED_T;
						want--;
					}
				if (__atomic_load_n(&stw.nparked,
				    __ATOMIC_ACQUIRE) >= want)
					break;
				snprintf(why, len, "a thread did not stop "
				    "within %d ms", FT_PARK_WAIT_MS);
				goto fail;
			}
			(void)ft_futex(&stw.nparked, FUTEX_WAIT_PRIVATE, have,
			    &ts);
		}
		if (!found_new)
			return 0;
	}
	snprintf(why, len, "threads kept being created");
fail:
	ft_release();
	return -1;
}

/* ---- proving threads outside the sites (conversions) ------------------- */

static int
ft_uintptr_cmp(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/* Is 'pc' strictly inside one of the n sorted sites? */
static int
ft_inside(const uintptr_t *sites, size_t n, uintptr_t pc)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (sites[mid] < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* sites[lo - 1] is the last site below pc. */
	return lo > 0 && pc - sites[lo - 1] < FT_SITE_LEN;
}

/* The mapping [lo, hi) holding 'a', from the batch's snapshot. */
static int
ft_vma(const struct ft_batch *b, uintptr_t a, uintptr_t *hi)
{
	size_t i;

	for (i = 0; i < b->nvma; i++)
		if (a >= b->vma[2 * i] && a < b->vma[2 * i + 1]) {
			*hi = b->vma[2 * i + 1];
			return 0;
		}
	return -1;
}

/* Stack bytes read per step by ft_thread_inside(), without faulting. */
static unsigned char ft_scan_buf[64 * 1024];

/*
 * Could thread i be, or return, inside a site being converted?  Its pc,
 * and the pc saved in each signal frame on its stack above sp.  The
 * stack is read with process_vm_readv(): a sleeping thread that woke
 * could unmap it under us.
 */
static int
ft_thread_inside(const struct ft_batch *b, const uintptr_t *sites, size_t n,
    int i)
{
	uintptr_t sp = stw.rsp[i] & ~(uintptr_t)7, end, a, w, pc;
	struct iovec lio, rio;
	size_t chunk, k;
	ssize_t got;

	if (ft_inside(sites, n, stw.rip[i]))
		return 1;
	if (ft_restorer == 0 || sp == 0 || ft_vma(b, sp, &end) == -1)
		return 0;
	if (end - sp > FT_SIGFRAME_SCAN)
		end = sp + FT_SIGFRAME_SCAN;
	/* Chunks overlap by a frame, so none is missed at a border. */
	for (a = sp; a < end; a += chunk - (FT_SIGFRAME_RIP + 8)) {
		chunk = end - a < sizeof(ft_scan_buf) ? end - a :
		    sizeof(ft_scan_buf);
		lio.iov_base = ft_scan_buf;
		lio.iov_len = chunk;
		rio.iov_base = (void *)a;
		rio.iov_len = chunk;
		got = process_vm_readv(getpid(), &lio, 1, &rio, 1, 0);
		if (got <= 0)
			return 0;
		for (k = 0; k + FT_SIGFRAME_RIP + 8 <= (size_t)got; k += 8) {
			memcpy(&w, ft_scan_buf + k, sizeof(w));
			if (w != ft_restorer)
				continue;
			memcpy(&pc, ft_scan_buf + k + FT_SIGFRAME_RIP,
			    sizeof(pc));
			if (ft_inside(sites, n, pc))
				return 1;
		}
		if (chunk <= FT_SIGFRAME_RIP + 8 || (size_t)got < chunk)
			break;
	}
	return 0;
}

/* /proc/self/maps as pairs lo, hi, into b->vma (malloc'ed). */
static int
ft_vma_snapshot(struct ft_batch *b)
{
	size_t cap = 256;
	char line[512];
	FILE *f;

	b->nvma = 0;
	if ((b->vma = malloc(cap * 2 * sizeof(*b->vma))) == NULL)
		return -1;
	if ((f = fopen("/proc/self/maps", "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if (b->nvma == cap) {
			uintptr_t *nv = reallocarray(b->vma, cap * 4,
			    sizeof(*nv));

			if (nv == NULL)
				break;
			b->vma = nv;
			cap *= 2;
		}
		b->vma[2 * b->nvma] = lo;
		b->vma[2 * b->nvma + 1] = hi;
		b->nvma++;
	}
	fclose(f);
	return 0;
}

/* ---- writing sites ---------------------------------------------------- */

static int
ft_cas16(void *p, uint64_t olo, uint64_t ohi, uint64_t nlo, uint64_t nhi)
{
	unsigned char ok;

	__asm__ __volatile__("lock cmpxchg16b %1\n\tsetz %0"
	    : "=q"(ok), "+m"(*(volatile unsigned char (*)[16])p),
	      "+a"(olo), "+d"(ohi)
	    : "b"(nlo), "c"(nhi)
	    : "memory", "cc");
	return ok;
}

/*
 * Code is read and written with instructions of our own, not C
 * accesses: a sanitizer instruments those, and ThreadSanitizer has no
 * shadow for an executable's text (writing it there faults).
 */
static uint64_t
ft_code_load8(uintptr_t a)
{
	uint64_t v;

	__asm__ __volatile__("movq (%1), %0" : "=r"(v) : "r"(a) : "memory");
	return v;
}

static int
ft_cas8(uintptr_t a, uint64_t old, uint64_t new)
{
	unsigned char ok;

	__asm__ __volatile__("lock cmpxchgq %3, (%2)\n\tsetz %0"
	    : "=q"(ok), "+a"(old) : "r"(a), "r"(new) : "memory", "cc");
	return ok;
}

static void
ft_code_store1(uintptr_t a, unsigned char b)
{
	__asm__ __volatile__("movb %1, (%0)" : : "r"(a), "q"(b) : "memory");
}

/*
 * Write the five bytes at 'site' in one atomic store.  0, or -1 if the
 * site crosses a 16-byte boundary (then only a plain write, with every
 * thread stopped, will do: ft_write_plain()).
 */
static int
ft_write_atomic(uintptr_t site, const unsigned char bytes[FT_SITE_LEN])
{
	uintptr_t w8 = site & ~(uintptr_t)7, w16 = site & ~(uintptr_t)15;
	unsigned char buf[16];

	if (site - w8 <= 8 - FT_SITE_LEN) {
		uint64_t old, new;

		do {
			old = ft_code_load8(w8);
			memcpy(buf, &old, 8);
			memcpy(buf + (site - w8), bytes, FT_SITE_LEN);
			memcpy(&new, buf, 8);
		} while (!ft_cas8(w8, old, new));
		return 0;
	}
	if (site - w16 <= 16 - FT_SITE_LEN) {
		uint64_t olo, ohi, nlo, nhi;

		do {
			olo = ft_code_load8(w16);
			ohi = ft_code_load8(w16 + 8);
			memcpy(buf, &olo, 8);
			memcpy(buf + 8, &ohi, 8);
			memcpy(buf + (site - w16), bytes, FT_SITE_LEN);
			memcpy(&nlo, buf, 8);
			memcpy(&nhi, buf + 8, 8);
		} while (!ft_cas16((void *)w16, olo, ohi, nlo, nhi));
		return 0;
	}
	return -1;
}

/* Byte by byte: only while every other thread is stopped. */
static void
ft_write_plain(uintptr_t site, const unsigned char bytes[FT_SITE_LEN])
{
	int i;

	for (i = 0; i < FT_SITE_LEN; i++)
		ft_code_store1(site + (uintptr_t)i, bytes[i]);
}

static const unsigned char ft_nop5[FT_SITE_LEN] = {
	0x0f, 0x1f, 0x44, 0x00, 0x00
};

/* A trampoline page within reach of every site of m.  0 or -1. */
static int
ft_tramp_make(struct ft_module *m)
{
	uintptr_t lo = m->lo & ~(uintptr_t)0xffff;
	uintptr_t hi = (m->hi + 0xffff) & ~(uintptr_t)0xffff;
	uintptr_t stub = (uintptr_t)ft_entry_stub, a;
	unsigned char *p;
	int k;

	if (m->tramp != 0 || m->tramp_failed)
		return m->tramp != 0 ? 0 : -1;
	for (k = 0; k < 1024; k++) {
		/* Alternately below the object and above it. */
		if (k % 2 == 0) {
			if (lo < (uintptr_t)(k / 2 + 1) * 0x10000 + 0x10000)
				continue;
			a = lo - (uintptr_t)(k / 2 + 1) * 0x10000;
			if (m->hi - a >= (1u << 31) - 4096)
				continue;
		} else {
			a = hi + (uintptr_t)(k / 2) * 0x10000;
			if (a + 4096 - m->lo >= (1u << 31) - 4096)
				continue;
		}
		p = mmap((void *)a, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == MAP_FAILED)
			continue;
		if ((uintptr_t)p != a) {
			munmap(p, 4096);
			continue;
		}
		/* jmp *0(%rip); .quad ft_entry_stub */
		p[0] = 0xff;
		p[1] = 0x25;
		memset(p + 2, 0, 4);
		memcpy(p + 6, &stub, sizeof(stub));
		if (mprotect(p, 4096, PROT_READ | PROT_EXEC) == -1) {
			munmap(p, 4096);
			break;
		}
		m->tramp = a;
		return 0;
	}
	m->tramp_failed = 1;
	return -1;
}

static int
ft_seg_prot(const struct ft_module *m, uintptr_t a)
{
	int i;

	for (i = 0; i < m->nseg; i++)
		if (a >= m->seg[i].start && a < m->seg[i].end)
			return m->seg[i].prot;
	return PROT_READ | PROT_EXEC;
}

/* Make the pages of the batch's sites writable (w) or as they were. */
static int
ft_pages(struct ft_batch *b, int w)
{
	uintptr_t pg, last = 0;
	size_t i;
	int rc = 0;

	for (i = 0; i < b->n; i++) {
		struct ft_op *o = &b->op[i];
		uintptr_t site = o->m->funcs[o->k].site;

		if (o->failed)
			continue;
		for (pg = site & ~(uintptr_t)4095;
		    pg < site + FT_SITE_LEN; pg += 4096) {
			if (pg == last)
				continue;
			last = pg;
			if (mprotect((void *)pg, 4096, w ? PROT_READ |
			    PROT_WRITE | PROT_EXEC : ft_seg_prot(o->m, pg)) ==
			    -1 && w) {
				snprintf(b->why, sizeof(b->why), "%s: cannot "
				    "make its code writable: %s", o->m->path,
				    strerror(errno));
				o->failed = 1;
				rc = -1;
			}
		}
	}
	return rc;
}

/* ---- one patch -------------------------------------------------------- */

struct ft_cb_arg {
	struct ft_batch	*b;
	int		 done;
	int		 rc;
};

static int
ft_loaded_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ft_module *m = arg;

	(void)size;
	/* Listed, and not loaded again meanwhile: its sites as we left them. */
	if (info->dlpi_addr == m->base && (m->index == 0 ||
	    (info->dlpi_name != NULL && strcmp(info->dlpi_name, m->dlname) ==
	    0)))
		return ft_module_intact(m);
	return 0;
}

/*
 * Under the loader's lock: stop, check, write, release.  Sets rc to 0,
 * or -1 with b->why (then nothing was written: try again later).
 */
static int
ft_patch_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ft_cb_arg *ca = arg;
	struct ft_batch *b = ca->b;
	struct ft_module *last = NULL;
	int last_ok = 0;
	uintptr_t *conv = NULL;
	size_t i, nconv = 0;
	int asleep = 0;

	(void)info;
	(void)size;
	if (ca->done)
		return 1;
	ca->done = 1;
	ca->rc = -1;
	/*
	 * An object unloaded (or loaded again) since the batch was made is
	 * left alone.  A module's ops follow each other: one look each.
	 */
	for (i = 0; i < b->n; i++) {
		if (b->op[i].failed)
			continue;
		if (b->op[i].m != last) {
			last = b->op[i].m;
			last_ok = !last->gone &&
			    dl_iterate_phdr(ft_loaded_cb, last) != 0;
			if (!last_ok)
				ft_module_forget(last);
		}
		b->op[i].failed = !last_ok;
	}
	if (b->convert) {
		conv = malloc(b->n * sizeof(*conv));
		if (conv == NULL) {
			snprintf(b->why, sizeof(b->why), "out of memory");
			return 1;
		}
		for (i = 0; i < b->n; i++)
			if (b->op[i].convert && !b->op[i].failed)
				conv[nconv++] =
				    b->op[i].m->funcs[b->op[i].k].site;
		qsort(conv, nconv, sizeof(*conv), ft_uintptr_cmp);
	}
	if (ft_stop(b->convert || b->plain, b->why, sizeof(b->why)) == -1) {
		free(conv);
		return 1;
	}
	for (i = 0; i < (size_t)stw.ntids; i++) {
		if (stw.how[i] == FT_ASLEEP)
			asleep = 1;
		if (b->convert && (stw.how[i] == FT_PARKED ||
		    stw.how[i] == FT_ASLEEP) &&
		    ft_thread_inside(b, conv, nconv, (int)i)) {
			ft_release();
			snprintf(b->why, sizeof(b->why), "thread %d is inside "
			    "a site (or will return into one)",
			    (int)stw.tids[i]);
			free(conv);
			return 1;
		}
	}
	for (i = 0; i < b->n; i++) {
		struct ft_op *o = &b->op[i];
		uintptr_t site = o->m->funcs[o->k].site;

		if (o->failed)
			continue;
		if (ft_write_atomic(site, o->bytes) == 0)
			continue;
		if (asleep) {
			o->failed = 1;	/* refused below */
			continue;
		}
		ft_write_plain(site, o->bytes);
	}
	ft_release();
	/* A sleeper that woke saw whole sites; say so for conversions. */
	for (i = 0; i < (size_t)stw.ntids && b->convert; i++) {
		struct ft_task tk;

		if (stw.how[i] == FT_ASLEEP &&
		    ft_task_look(stw.tids[i], &tk) == 0 &&
		    tk.runtime != stw.runtime[i])
			snprintf(b->why, sizeof(b->why), "thread %d woke "
			    "while its sites were converted", (int)stw.tids[i]);
	}
	free(conv);
	ca->rc = 0;
	return 1;
}

/* ---- what the sites should be ----------------------------------------- */

static void
ft_func_status(struct ft_module *m, uint32_t k)
{
	struct traced_func_stat *st = (struct traced_func_stat *)(void *)
	    (m->state + m->stats_off) + k;
	const struct ft_func *f = &m->funcs[k];

	__atomic_store_n(&st->status, (f->patched ? TRACED_FUNC_PATCHED : 0) |
	    (f->refused ? TRACED_FUNC_REFUSED : 0), __ATOMIC_RELAXED);
}

static void
ft_refuse(struct ft_module *m, uint32_t k, const char *why)
{
	if (m->funcs[k].refused)
		return;
	m->funcs[k].refused = 1;
	ft.refused++;
	ft_func_status(m, k);
	DEBUG("function tracing: %s in %s not patched: %s",
	    ft_func_name(m, &m->funcs[k]), m->path, why);
}

/* Collect the changes the state bytes and the tracers call for. */
static int
ft_batch_make(struct ft_batch *b)
{
	uint32_t on = __atomic_load_n(&ft_enabled, __ATOMIC_RELAXED) != 0;
	struct ft_module *m;
	size_t cap = 0;
	uint32_t k;

	for (m = ft.modules; m != NULL; m = m->next) {
		int need_conv = 0, any = 0;

		if (m->gone || m->state == NULL)
			continue;
		for (k = 0; k < m->nfuncs; k++) {
			struct ft_func *f = &m->funcs[k];
			int want;

			if (f->site == 0 || f->refused)
				continue;
			want = on && __atomic_load_n(&m->state[k],
			    __ATOMIC_RELAXED) != 0;
			if (want == f->patched)
				continue;
			if (want && ft_tramp_make(m) == -1) {
				ft_refuse(m, k, "no room for a trampoline "
				    "within 2 GiB");
				continue;
			}
			any = 1;
		}
		if (!any)
			continue;
		/* The first patch of an object converts all its sites. */
		for (k = 0; k < m->nfuncs; k++)
			if (m->funcs[k].site != 0 && !m->funcs[k].refused &&
			    !m->funcs[k].converted)
				need_conv = 1;
		for (k = 0; k < m->nfuncs; k++) {
			struct ft_func *f = &m->funcs[k];
			struct ft_op *o;
			int want;

			if (f->site == 0 || f->refused)
				continue;
			want = on && __atomic_load_n(&m->state[k],
			    __ATOMIC_RELAXED) != 0 && m->tramp != 0;
			if (want == f->patched && !(need_conv && !f->converted))
				continue;
			if (b->n == cap) {
				struct ft_op *no;

				cap = cap ? cap * 2 : 64;
				no = reallocarray(b->op, cap, sizeof(*no));
				if (no == NULL)
					return -1;
				b->op = no;
			}
			o = &b->op[b->n++];
			memset(o, 0, sizeof(*o));
			o->m = m;
			o->k = k;
			o->want = (uint8_t)want;
			o->convert = !f->converted;
			if (o->convert)
				b->convert = 1;
			if ((f->site & 15) > 16 - FT_SITE_LEN)
				b->plain = 1;
			if (want) {
				int32_t rel = (int32_t)((intptr_t)m->tramp -
				    (intptr_t)(f->site + FT_SITE_LEN));

				o->bytes[0] = 0xe8;
				memcpy(o->bytes + 1, &rel, 4);
			} else
				memcpy(o->bytes, ft_nop5, FT_SITE_LEN);
		}
	}
	return 0;
}

/*
 * Patch every site whose function's state byte and the tracers call for
 * a change.  Retries a busy moment a few times; a site that cannot be
 * patched safely is refused, with the reason under TRACED_DEBUG.
 * Returns the number of sites changed, or -1.  Locked; connection
 * thread (it never runs instrumented code, so it is not stopped).
 */
int
ft_patch_sync_locked(void)
{
	struct ft_batch b;
	struct ft_cb_arg ca;
	int attempt, changed = 0;
	size_t i;

	memset(&b, 0, sizeof(b));
	if (ft_batch_make(&b) == -1)
		goto out;
	if (b.n == 0)
		goto out;
	if (ft_sig_install(b.why, sizeof(b.why)) == -1)
		goto refuse;
	if (b.convert && ft_vma_snapshot(&b) == -1) {
		snprintf(b.why, sizeof(b.why), "cannot read /proc/self/maps");
		goto refuse;
	}
	for (attempt = 0; attempt < FT_ATTEMPTS; attempt++) {
		b.why[0] = '\0';
		if (ft_pages(&b, 1) == -1)
			DEBUG("function tracing: %s", b.why);
		memset(&ca, 0, sizeof(ca));
		ca.b = &b;
		dl_iterate_phdr(ft_patch_cb, &ca);
		(void)ft_pages(&b, 0);
		if (ca.rc == 0)
			break;
		DEBUG("function tracing: patch attempt %d: %s", attempt + 1,
		    b.why);
		ft_sleep_ms(FT_RETRY_MS * (attempt + 1));
	}
	if (attempt == FT_ATTEMPTS)
		goto busy;
	if (b.why[0] != '\0')
		DEBUG("function tracing: %s", b.why);
	for (i = 0; i < b.n; i++) {
		struct ft_op *o = &b.op[i];
		struct ft_func *f = &o->m->funcs[o->k];

		if (o->failed) {
			if (!o->m->gone)
				ft_refuse(o->m, o->k, b.why[0] ? b.why :
				    "its site crosses a 16-byte boundary and a "
				    "thread could not be stopped");
			continue;
		}
		if (o->want != f->patched) {
			changed++;
			if (o->want)
				ft.patched++;
			else
				ft.patched--;
		}
		f->patched = o->want;
		f->converted = 1;
		ft_func_status(o->m, o->k);
	}
	goto out;
busy:
	/* Not now: ft_service() tries again in a second. */
	ft.unapplied = b.n;
	DEBUG("function tracing: %zu sites not patched for now: %s", b.n,
	    b.why);
	free(b.op);
	free(b.vma);
	return 0;
refuse:
	for (i = 0; i < b.n; i++)
		if (!b.op[i].m->gone && !b.op[i].m->funcs[b.op[i].k].patched &&
		    b.op[i].want)
			ft_refuse(b.op[i].m, b.op[i].k, b.why);
	DEBUG("function tracing: patch refused: %s", b.why);
out:
	ft.unapplied = 0;
	free(b.op);
	free(b.vma);
	if (changed > 0)
		DEBUG("function tracing: %d sites changed, %llu patched now",
		    changed, (unsigned long long)ft.patched);
	return changed;
}

/* In the child of fork(): no stop is in progress (its one thread). */
void
ft_patch_atfork_child(void)
{
	stw.ntids = 0;
	__atomic_store_n(&stw.release, stw.gen, __ATOMIC_RELAXED);
}

#else /* !__x86_64__ */

/* No site exists here (module.c lists none): nothing to patch. */
int
ft_patch_sync_locked(void)
{
	return 0;
}

void
ft_patch_atfork_child(void)
{
}

#endif /* __x86_64__ */
