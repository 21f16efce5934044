/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Provider registration and the library's one-time setup.  Each
 * generated trace.c registers its provider from a constructor, before
 * main(): the provider gets its event ids, the connection thread is
 * started, and the constructor waits (bounded by
 * TRACED_CONNECT_TIMEOUT_MS) until the daemon took the provider and
 * wrote its state bytes, or said no, or could not be reached.  With no
 * daemon listening, connect() fails at once and there is no wait at all.
 *
 * Configuration comes from the environment, read once here; a value
 * the library cannot take is refused on stderr, never guessed at:
 *   TRACED=0|no|off|false       tracing off for this process
 *   TRACED_RUNTIME_DIR          where the daemon's sockets are
 *   XDG_RUNTIME_DIR             where the user's own daemon's are
 *   TRACED_RING_SIZE            ring bytes per thread (K/M/G suffix)
 *   TRACED_RING_START           ring bytes a thread starts with
 *   TRACED_CONNECT_TIMEOUT_MS   longest wait before main() (200)
 *   TRACED_DEBUG                print what the library does on stderr
 *   TRACED_EVENTS               the process's own rules (rules.c)
 *   TRACED_CLOCK=monotonic      no TSC (proto/clock.h)
 *   TRACED_CRASH=0|1            traced:crash records (crash.c), on
 * always with secure_getenv(): a setuid, setgid or file-capability
 * program (AT_SECURE) reads none of them, since its caller wrote them,
 * and traces to the system daemon only (conn.c, proto/rundir.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "clock.h"
#include "ringsize.h"
#include "functrace/functrace.h"

struct lib lib = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake_fd = -1,
	.pager_fd = -1,
	.sock = -1,
	.spare_fd = -1,
	.ring_order = TRACED_RING_ORDER_DEFAULT,
	.ring_start_order = TRACED_RING_ORDER_INIT,
	.connect_timeout_ms = 200,
	.crash = 1,
	.next_id = TRACED_EVENT_ID_BASE,
};

TRACED_EXPORT int traced_clock_tsc;

/*
 * TRACED= and TRACED_CRASH=: 1 (on), 0 (off), or -1 for a word it does
 * not know.
 */
static int
env_onoff(const char *s)
{
	static const char *const off[] = { "0", "no", "off", "false" };
	static const char *const on[] = { "1", "yes", "on", "true" };
	size_t i;

	for (i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
		if (strcasecmp(s, off[i]) == 0)
			return 0;
		if (strcasecmp(s, on[i]) == 0)
			return 1;
	}
	return -1;
}

/*
 * Read the settings of the environment.  A value the library cannot
 * take is refused out loud (lib_warnx()), never rounded, clamped or
 * ignored in silence: the user asked for it and must know.
 */
static void
lib_read_env(void)
{
	unsigned long long v;
	char err[160], *end;
	const char *s;
	uint32_t order;

	lib.secure = getauxval(AT_SECURE) != 0;
	s = secure_getenv("TRACED_DEBUG");
	lib_debug = s != NULL && *s != '\0' && strcmp(s, "0") != 0;
	s = secure_getenv("TRACED");
	if (s != NULL && *s != '\0') {
		switch (env_onoff(s)) {
		case 1:
			break;
		case 0:
			lib.disabled = 1;
			DEBUG("TRACED=%s: tracing off", s);
			break;
		default:
			/* Whoever set it did not ask for tracing. */
			lib.disabled = 1;
			lib_warnx("TRACED=%s is not understood: tracing is off "
			    "in this process (TRACED=0, no, off or false turns "
			    "it off; 1, yes, on or true on)", s);
			break;
		}
	}
	/* Copied: the connection thread must not race a setenv(). */
	if (((s = secure_getenv("TRACED_RUNTIME_DIR")) != NULL && *s != '\0' &&
	    (lib.runtime_dir = strdup(s)) == NULL) ||
	    ((s = secure_getenv("XDG_RUNTIME_DIR")) != NULL && *s != '\0' &&
	    (lib.xdg_runtime_dir = strdup(s)) == NULL)) {
		/* Not another daemon than the one named: none. */
		DEBUG("out of memory: tracing off");
		lib.disabled = 1;
	}
	s = secure_getenv("TRACED_RING_SIZE");
	if (s != NULL && *s != '\0') {
		if (ringsize_parse(s, &order, err, sizeof(err)) == 0) {
			lib.ring_order = order;
			lib.ring_order_env = 1;
		} else
			lib_warnx("TRACED_RING_SIZE=%s refused: %s; rings get "
			    "the daemon's size (traced --ring-size)", s, err);
	}
	s = secure_getenv("TRACED_RING_START");
	if (s != NULL && *s != '\0') {
		if (ringsize_parse(s, &order, err, sizeof(err)) == -1)
			lib_warnx("TRACED_RING_START=%s refused: %s; rings "
			    "start at 1M", s, err);
		else if (lib.ring_order_env && order > lib.ring_order) {
			ringsize_format(traced_ring_size(lib.ring_order), err,
			    sizeof(err));
			lib_warnx("TRACED_RING_START=%s refused: more than "
			    "TRACED_RING_SIZE=%s; rings start at 1M", s, err);
		}
		else
			lib.ring_start_order = order;
	}
	s = secure_getenv("TRACED_CONNECT_TIMEOUT_MS");
	if (s != NULL && *s != '\0') {
		errno = 0;
		v = strtoull(s, &end, 10);
		if (*s >= '0' && *s <= '9' && *end == '\0' && errno == 0 &&
		    v <= 60000)
			lib.connect_timeout_ms = (int)v;
		else
			lib_warnx("TRACED_CONNECT_TIMEOUT_MS=%s refused: not "
			    "a number of milliseconds from 0 to 60000; "
			    "waiting at most %d ms", s, lib.connect_timeout_ms);
	}
	s = secure_getenv("TRACED_CRASH");
	if (s != NULL && *s != '\0') {
		switch (env_onoff(s)) {
		case 1:
			break;
		case 0:
			lib.crash = 0;
			break;
		default:
			/* Not what was asked for: the signals are left
			 * alone, the one thing that cannot surprise. */
			lib.crash = 0;
			lib_warnx("TRACED_CRASH=%s is not understood: no "
			    "traced:crash records (TRACED_CRASH=0, no, off "
			    "or false turns them off; 1, yes, on or true "
			    "on)", s);
			break;
		}
	}
	s = secure_getenv("TRACED_CLOCK");
	if (s != NULL && *s != '\0' && strcmp(s, "monotonic") != 0 &&
	    strcmp(s, "tsc") != 0)
		lib_warnx("TRACED_CLOCK=%s is not understood (monotonic or "
		    "tsc): timestamps use the TSC where it is invariant", s);
	rules_read_env_locked();
}

/*
 * Put a memfd of the process's own under a provider's state array,
 * holding its current bytes, for the rest of the process's life: each
 * daemon it connects to maps the memfd and writes the bytes.  Mapping
 * once, here, before the provider's events can run, is the point: a
 * mapping replaced under running threads makes each of them fault on
 * its next event, and a fault waits for the mmap lock, for as long as
 * another thread holds it (1.2 ms seen while the connection thread
 * mapped a daemon's page).  MAP_POPULATE: not even the first read
 * faults.  Writable: the process writes the bytes of its own rules
 * while no daemon is connected (rules.c); a daemon writes them all.
 *
 * Returns the memfd, or -1 and the array is as it was.  Only system
 * calls: the child of fork() calls it.
 */
static int
state_memfd_map(struct traced_provider *p)
{
	int fd;

	fd = memfd_create("traced-state", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd == -1)
		return -1;
	if (ftruncate(fd, (off_t)p->state_size) == -1 ||
	    pwrite(fd, p->state, p->state_size, 0) !=
	    (ssize_t)p->state_size ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_SEAL) == -1 ||
	    mmap(p->state, p->state_size, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, 0) == MAP_FAILED) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * In the child of fork(), its only thread: the state arrays map the
 * parent's memfds, which the parent's daemon writes.  Give each a copy
 * of its own, for the child's own session.  If that fails, the child
 * keeps a private copy of its bytes and does not trace to a daemon.
 */
static void
state_atfork_child(void)
{
	struct lprov *lp;
	void *tmp;
	int fd;

	for (lp = lib.providers; lp != NULL; lp = lp->next) {
		if (lp->p == NULL || lp->state_fd == -1)
			continue;
		fd = state_memfd_map(lp->p);
		if (fd != -1) {
			close(lp->state_fd);
			lp->state_fd = fd;
			continue;
		}
		tmp = mmap(NULL, lp->p->state_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (tmp != MAP_FAILED) {
			memcpy(tmp, lp->p->state, lp->p->state_size);
			if (mremap(tmp, lp->p->state_size, lp->p->state_size,
			    MREMAP_MAYMOVE | MREMAP_FIXED, lp->p->state) ==
			    MAP_FAILED)
				munmap(tmp, lp->p->state_size);
		}
		/* The parent's memfd is not ours to keep.  (No DEBUG here:
		 * its vsnprintf is not async-signal-safe.) */
		close(lp->state_fd);
		lp->state_fd = -1;
		lib.disabled = 1;
	}
}

static void
lib_atfork_prepare(void)
{
	pthread_mutex_lock(&lib.lock);
	ft_atfork_prepare();
}

static void
lib_atfork_parent(void)
{
	ft_atfork_parent();
	pthread_mutex_unlock(&lib.lock);
}

/*
 * In the child of fork(): it has one thread, the parent's rings and
 * connection.  Drop both; its next event starts a session of its own.
 */
static void
lib_cond_init(void)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&lib.cond, &ca);
	pthread_condattr_destroy(&ca);
}

static void
lib_atfork_child(void)
{
	pthread_mutex_init(&lib.lock, NULL);
	lib_cond_init();
	lib.pid = getpid();
	/* A child of a traced parent traces with the parent's rules until
	 * it has a session of its own: its first ring waits for one. */
	lib.child_wait = __atomic_load_n(&lib.connected, __ATOMIC_RELAXED);
	ring_atfork_child();
	conn_atfork_child();
	pager_atfork_child();
	state_atfork_child();
	ft_atfork_child();
}

/* One-time setup.  Called with lib.lock held. */
void
lib_init_locked(void)
{
	if (lib.initialized)
		return;
	lib.initialized = 1;
	lib_read_env();
	lib_cond_init();
	/* Before any ring exists, so before any timestamp. */
	traced_clock_tsc = traced_clock_use_tsc();
	lib.pid = getpid();
	if (sysconf(_SC_PAGESIZE) != TRACED_STATE_PAGE) {
		DEBUG("page size is not %u: tracing off", TRACED_STATE_PAGE);
		lib.disabled = 1;
	}
	lib.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (lib.wake_fd == -1) {
		DEBUG("eventfd: %s: tracing off", strerror(errno));
		lib.disabled = 1;
	}
	/* Before the ring's: its TLS destructor must run first. */
	ft_dispatch_init();
	ring_lib_init();
	pthread_atfork(lib_atfork_prepare, lib_atfork_parent,
	    lib_atfork_child);
	(void)on_exit(conn_on_exit, NULL);
	crash_init_locked();
}

/*
 * Wake the connection thread.  Async-signal-safe; keeps errno.
 */
void
lib_wake(void)
{
	uint64_t one = 1;
	int saved_errno = errno;

	if (lib.wake_fd != -1)
		(void)!write(lib.wake_fd, &one, sizeof(one));
	errno = saved_errno;
}

/* *ts = CLOCK_MONOTONIC now + ms, for pthread_cond_timedwait(&lib.cond). */
void
lib_deadline_after(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

void
traced_provider_register(struct traced_provider *p)
{
	struct timespec deadline;
	struct lprov *lp;
	unsigned attempts;

	if (p == NULL || p->abi != TRACED_ABI_VERSION || p->nevents == 0 ||
	    p->state_size < p->nevents ||
	    p->state_size % TRACED_STATE_PAGE != 0 ||
	    ((uintptr_t)p->state % TRACED_STATE_PAGE) != 0)
		return;
	pthread_mutex_lock(&lib.lock);
	lib_init_locked();
	if (lib.disabled || lib.next_id > TRACED_EVENT_ID_MAX - p->nevents ||
	    (lp = calloc(1, sizeof(*lp))) == NULL) {
		pthread_mutex_unlock(&lib.lock);
		return;
	}
	/* Without its memfd the provider stays unknown, its events off. */
	lp->state_fd = state_memfd_map(p);
	if (lp->state_fd == -1) {
		DEBUG("provider %s: state memfd: %s: its events stay off",
		    p->name, strerror(errno));
		free(lp);
		pthread_mutex_unlock(&lib.lock);
		return;
	}
	lp->p = p;
	lp->index = lib.nproviders++;
	p->id_base = lib.next_id;
	lib.next_id += p->nevents;
	p->priv = lp;
	/* Append: the daemon numbers events in registration order. */
	{
		struct lprov **pp = &lib.providers;

		while (*pp != NULL)
			pp = &(*pp)->next;
		*pp = lp;
	}
	DEBUG("provider %s: %u events from id %u", p->name, p->nevents,
	    p->id_base);
	/* The process's rules apply at once; a daemon gets them again,
	 * with this provider's events, before the provider. */
	if (lib.nrules > 0) {
		rules_apply_provider_locked(lp);
		lib.rules_gen++;
	}
	/* The pager too, now rather than in a thread's first event. */
	(void)pager_start_locked();
	if (conn_start_locked() == -1) {
		pthread_mutex_unlock(&lib.lock);
		return;
	}
	lib_wake();
	/* The connection thread (functrace/fconn.c) is what we would
	 * wait for: it sends the provider next. */
	if (pthread_equal(pthread_self(), lib.thread)) {
		pthread_mutex_unlock(&lib.lock);
		return;
	}
	/*
	 * Wait until the daemon wrote the state bytes, or a connection
	 * attempt failed, or the deadline: a short program's first events
	 * must see their rules, but no program waits long for the tracer.
	 */
	attempts = lib.attempts;
	lib_deadline_after(&deadline, lib.connect_timeout_ms);
	while (!lp->acked && !(lib.state == CONN_DOWN &&
	    lib.attempts != attempts)) {
		if (pthread_cond_timedwait(&lib.cond, &lib.lock,
		    &deadline) == ETIMEDOUT) {
			DEBUG("provider %s: no answer in %d ms, going on",
			    p->name, lib.connect_timeout_ms);
			break;
		}
	}
	pthread_mutex_unlock(&lib.lock);
}

void
traced_provider_unregister(struct traced_provider *p)
{
	/*
	 * The provider's code and state array go away with its object;
	 * the daemon keeps its description for the session.  Stop using
	 * the pointer: nothing else is needed while the process exits,
	 * and a dlclose()d provider's events can no longer be called.
	 */
	struct lprov *lp;

	if (p == NULL || p->priv == NULL)
		return;
	pthread_mutex_lock(&lib.lock);
	lp = p->priv;
	lp->p = NULL;
	/* Its memfd goes too: a plugin opened and closed again and again
	 * must not pile up descriptors.  (Never sent again: p is NULL.) */
	if (lp->state_fd != -1) {
		close(lp->state_fd);
		lp->state_fd = -1;
	}
	pthread_mutex_unlock(&lib.lock);
}

void
traced_flush(void)
{
	struct lring *r;

	pthread_mutex_lock(&lib.lock);
	for (r = lib.rings; r != NULL; r = r->next)
		__atomic_store_n(&r->notify, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lib.lock);
	lib_wake();
}

/*
 * Wait, at most TRACED_CONNECT_TIMEOUT_MS, until the daemon has taken
 * every provider and written its state, or a connection attempt failed.
 * Called with lib.lock held, by the first ring of a fork()ed child, so
 * that a child that traces and exits at once is not lost.
 */
void
lib_wait_session_locked(void)
{
	struct timespec deadline;
	unsigned attempts = lib.attempts;
	struct lprov *lp;

	lib_deadline_after(&deadline, lib.connect_timeout_ms);
	for (;;) {
		for (lp = lib.providers; lp != NULL; lp = lp->next)
			if (lp->p != NULL && !lp->acked)
				break;
		if (lp == NULL || (lib.state == CONN_DOWN &&
		    lib.attempts != attempts))
			return;
		if (pthread_cond_timedwait(&lib.cond, &lib.lock,
		    &deadline) == ETIMEDOUT)
			return;
	}
}
