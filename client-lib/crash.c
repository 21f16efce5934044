/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The crash record: a thread that gets SIGSEGV, SIGBUS, SIGILL, SIGFPE
 * or SIGABRT leaves a traced:crash record (proto/ring.h, struct
 * traced_crash) at the end of its ring, so that the trace of a program
 * that died says how, right after its last events.  Then the signal
 * goes where it would have gone without libtraced.
 *
 * DESIGN
 *
 * At library init (lib_init_locked()), unless TRACED_CRASH=0 or TRACED=0,
 * the library notes each signal's disposition and installs its handler
 * over it, with SA_SIGINFO | SA_ONSTACK, the old one's mask and its
 * SA_RESTART.  A program that installs a handler of its own later
 * simply replaces ours: its thread's crash then writes nothing.
 *
 * The handler writes the record (ring_write_crash(): no lock, no
 * allocation, the header's head published with a release store and the
 * connection thread woken for a drain; the daemon reads the ring after
 * the process is gone anyway, since the memory is shared), then chains:
 *
 *   - to the old handler, with the same arguments (a plain handler gets
 *     the signal number only), the old SA_NODEFER (the signal unblocked
 *     while it runs) and SA_RESETHAND (the default disposition put back
 *     first, as the kernel would have at delivery); its mask was ours;
 *   - to the default action (SIG_DFL): the default is put back and the
 *     signal comes again as the handler returns, so the process dies of
 *     the same signal, with the same core and wait status: a fault the
 *     kernel raised comes again by itself from the same instruction (and
 *     the core keeps its siginfo), a signal someone sent is raised again
 *     (blocked in the handler, it is delivered as the handler returns);
 *   - to SIG_IGN: a sent signal is ignored, and writes no record, since
 *     nothing crashed; a fault is fatal, as the kernel makes it when the
 *     signal is ignored.
 *
 * A signal that comes while the thread is inside a trace call (its
 * nest count is up) finds a record half written where the crash
 * record would go.  If the process dies of it for sure (the default
 * action comes next), nothing of the interrupted call runs again, and
 * the crash record goes at the last published head, over it.
 * Otherwise the old handler may return into that call (or longjmp
 * away), and the crash is counted lost as nested, like any event a
 * signal handler traces there.  A handler that returns to a fault that
 * comes again records it once.
 *
 * The signal stack.  A thread that overflows its stack gets SIGSEGV
 * with no stack left to run a handler on, unless it has an alternate
 * signal stack.  Each ring carries one (64 KiB, or twice SIGSTKSZ,
 * below a guard page), made the first time a thread without a signal
 * stack of its own takes the ring, and registered by every thread that
 * takes it, unregistered when the thread exits: rings go from thread to
 * thread (ring.c, Handover), so a program that starts thread after
 * thread maps no stack per thread, and the cost is two sigaltstack()
 * calls at a thread's first event and one at its exit.  A thread that
 * never traced has no ring to write into and gets no stack: its
 * overflow kills the process as it would without libtraced.  A thread
 * with a signal stack of its own keeps it.  The old handler runs on
 * the stack ours runs on: on a thread that overflowed, that is what
 * lets it run at all.
 *
 * Nothing here may allocate, lock or print in the handler; it keeps
 * errno.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "internal.h"

#define CRASH_STACK_MIN	(64u << 10)

static const int crash_signals[] = {
	SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT
};
#define CRASH_NSIGNALS	(sizeof(crash_signals) / sizeof(crash_signals[0]))

/* Each signal's disposition before ours: written once at init, before
 * ours is installed; read-only after, by the handler. */
static struct sigaction crash_prev[CRASH_NSIGNALS];
static int crash_on;			/* our handlers are installed */
/* Bytes of a ring's signal stack, its guard page aside. */
static size_t crash_stack_size;

/* The signal stack this thread registered (its ring's), or NULL. */
static __thread uint8_t *crash_stack_mine
    __attribute__((tls_model("initial-exec")));
/* Inside the handler's ring write: a fault there (a page the ring
 * could not get) must not recurse into it. */
static __thread int crash_busy __attribute__((tls_model("initial-exec")));
/* The last crash this thread recorded. */
static __thread struct traced_crash crash_last
    __attribute__((tls_model("initial-exec")));

static int
crash_index(int sig)
{
	size_t i;

	for (i = 0; i < CRASH_NSIGNALS; i++)
		if (crash_signals[i] == sig)
			return (int)i;
	return -1;
}

/* The instruction pointer of the interrupted code, where we know it. */
static uint64_t
crash_ip(const void *ucv)
{
	const ucontext_t *uc = ucv;

	if (uc == NULL)
		return 0;
#if defined(__x86_64__)
	return (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__i386__)
	return (uint64_t)(uint32_t)uc->uc_mcontext.gregs[REG_EIP];
#elif defined(__aarch64__)
	return (uint64_t)uc->uc_mcontext.pc;
#else
	return 0;
#endif
}

/* Put the default disposition of sig back. */
static void
crash_default(int sig)
{
	struct sigaction dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	(void)sigaction(sig, &dfl, NULL);
}

/* Call the program's old handler as the kernel would have (DESIGN). */
static void
crash_chain(const struct sigaction *prev, int sig, siginfo_t *si, void *uc)
{
	sigset_t unblock;

	if (prev->sa_flags & SA_RESETHAND)
		crash_default(sig);
	sigemptyset(&unblock);
	sigaddset(&unblock, sig);
	if (prev->sa_flags & SA_NODEFER)
		(void)pthread_sigmask(SIG_UNBLOCK, &unblock, NULL);
	if (prev->sa_flags & SA_SIGINFO)
		prev->sa_sigaction(sig, si, uc);
	else
		prev->sa_handler(sig);
	if (prev->sa_flags & SA_NODEFER)
		(void)pthread_sigmask(SIG_BLOCK, &unblock, NULL);
}

static void
crash_handler(int sig, siginfo_t *si, void *uc)
{
	const struct sigaction *prev;
	struct traced_crash c;
	int saved_errno = errno, i, fault, dies;

	if ((i = crash_index(sig)) == -1)
		return;			/* not ours: cannot happen */
	prev = &crash_prev[i];
	/* Raised by the kernel for an instruction, which faults again. */
	fault = si != NULL && si->si_code > 0 && sig != SIGABRT;
	if (prev->sa_handler == SIG_IGN && !fault)
		goto out;		/* ignored, as it would have been */
	/* (SIG_DFL and SIG_IGN are no functions, whatever the flags say.) */
	dies = prev->sa_handler == SIG_DFL || prev->sa_handler == SIG_IGN;

	memset(&c, 0, sizeof(c));
	c.signal = sig;
	if (si != NULL) {
		c.code = si->si_code;
		if (fault)
			c.addr = (uint64_t)(uintptr_t)si->si_addr;
		else if (si->si_code <= 0)
			c.sender = si->si_pid;
	}
	c.ip = crash_ip(uc);
	if (!crash_busy && memcmp(&c, &crash_last, sizeof(c)) != 0) {
		crash_busy = 1;
		if (ring_write_crash(&c, dies))
			crash_last = c;
		crash_busy = 0;
	}

	if (!dies)
		crash_chain(prev, sig, si, uc);
	else {
		crash_default(sig);
		if (!fault)
			(void)raise(sig);	/* delivered on return */
	}
out:
	errno = saved_errno;
}

/*
 * Install the handler over each signal's disposition, unless
 * TRACED_CRASH or TRACED turned it off.  Once, at library init.
 * Locked.
 */
void
crash_init_locked(void)
{
	struct sigaction sa;
	size_t i;
	long min;

	if (!lib.crash || lib.disabled || crash_on)
		return;
	crash_stack_size = CRASH_STACK_MIN;
	min = sysconf(_SC_SIGSTKSZ);
	if (min > 0 && (size_t)min * 2 > crash_stack_size)
		crash_stack_size = ((size_t)min * 2 + TRACED_STATE_PAGE - 1) &
		    ~(size_t)(TRACED_STATE_PAGE - 1);
	for (i = 0; i < CRASH_NSIGNALS; i++) {
		if (sigaction(crash_signals[i], NULL, &crash_prev[i]) == -1)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = crash_handler;
		sa.sa_mask = crash_prev[i].sa_mask;
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK |
		    (crash_prev[i].sa_flags & SA_RESTART);
		if (sigaction(crash_signals[i], &sa, NULL) == -1)
			DEBUG("crash: no handler for signal %d: %s",
			    crash_signals[i], strerror(errno));
	}
	crash_on = 1;
	DEBUG("crash: traced:crash records on (TRACED_CRASH=0 turns them "
	    "off)");
}

/*
 * This thread took r (ring.c, ring_attach()): give it r's signal stack
 * if it has none, made now if r has none yet.  A failure leaves the
 * thread without one.
 */
void
crash_thread_start(struct lring *r)
{
	stack_t ss, cur;
	uint8_t *p;
	size_t len;

	if (!crash_on || crash_stack_mine != NULL ||
	    sigaltstack(NULL, &cur) == -1 || !(cur.ss_flags & SS_DISABLE))
		return;			/* the thread's own, or ours already */
	if (r->sigstack == NULL) {
		len = TRACED_STATE_PAGE + crash_stack_size;
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			return;
		/* The guard: an overflow of the handler faults, rather
		 * than write over whatever lies below. */
		if (mprotect(p, TRACED_STATE_PAGE, PROT_NONE) == -1) {
			munmap(p, len);
			return;
		}
		r->sigstack = p;
	}
	memset(&ss, 0, sizeof(ss));
	ss.ss_sp = r->sigstack + TRACED_STATE_PAGE;
	ss.ss_size = crash_stack_size;
	if (sigaltstack(&ss, NULL) == 0)
		crash_stack_mine = ss.ss_sp;
}

/*
 * This thread gives its ring up (it exits, or is the child of fork()
 * about to free its parent's rings): unregister the ring's signal
 * stack, if it is still the thread's, before another thread may take
 * it.
 */
void
crash_thread_end(void)
{
	stack_t cur, off;

	if (crash_stack_mine == NULL)
		return;
	if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == crash_stack_mine &&
	    !(cur.ss_flags & (SS_ONSTACK | SS_DISABLE))) {
		memset(&off, 0, sizeof(off));
		off.ss_flags = SS_DISABLE;
		(void)sigaltstack(&off, NULL);
	}
	crash_stack_mine = NULL;
}

/* Unmap r's signal stack, which no thread has any more. */
void
crash_stack_free(struct lring *r)
{
	if (r->sigstack != NULL)
		munmap(r->sigstack, TRACED_STATE_PAGE + crash_stack_size);
	r->sigstack = NULL;
}
