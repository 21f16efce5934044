/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Function tracing and the daemon: setup, what the connection thread
 * sends (MODULE, FUNCS, TRACER, FUNC_STATS: proto/wire.h) and what it
 * does with a FUNC_APPLY (rescan the objects, apply the tracer rules,
 * patch the sites, report).
 *
 * Setup runs from libtraced's constructor, before main(): it finds the
 * instrumented objects and, if there are any, registers the built-in
 * provider (graph's records), which connects to the daemon; it then
 * waits, as long as the provider did, until the daemon carried out the
 * functions of every object, so that a short program's first calls are
 * traced when rules say so.  Without instrumented code nothing more
 * happens.  A dlopen() that brings instrumented objects does the same
 * before it returns (dlopen.c, ft_dlopen_done()).
 *
 * ft.lock; when lib.lock is held too, it was taken first.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "functrace.h"
#include "../internal.h"

struct ft_state ft = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static pthread_once_t ft_once = PTHREAD_ONCE_INIT;

static void
ft_cond_init(void)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ft.cond, &ca);
	pthread_condattr_destroy(&ca);
}

static void
ft_init_once(void)
{
	pthread_mutex_lock(&ft.lock);
	ft_cond_init();
	ft_tracers_init();
	__atomic_store_n(&ft.initialized, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ft.lock);
}

/* Set up the tracer registry and the library, once.  Thread-safe. */
void
ft_init(void)
{
	pthread_once(&ft_once, ft_init_once);
	pthread_mutex_lock(&lib.lock);
	lib_init_locked();
	pthread_mutex_unlock(&lib.lock);
}

static uint64_t
ft_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * The FUNCS this connection will have sent once every object loaded
 * now is told: those sent (gone since or not) and those to send.  The
 * daemon's 'funcs' counts the same, so a dlclose()d object, once told,
 * still counts.  ft.lock held.
 */
static uint32_t
ft_funcs_due_locked(void)
{
	const struct ft_module *m;
	uint32_t n = 0;

	for (m = ft.modules; m != NULL; m = m->next)
		if (m->state != NULL && (m->sent || !m->gone))
			n++;
	return n;
}

/* Register the built-in provider (graph's records), once. */
static void
ft_provider_start(void)
{
	if (__atomic_exchange_n(&ft.provider_done, 1, __ATOMIC_ACQ_REL) == 0)
		traced_provider_register(&ft_provider);
}

/*
 * Wait until the daemon carried out the functions of every object
 * loaded now, as the provider waits for its rules: at most
 * TRACED_CONNECT_TIMEOUT_MS, and not at all without a connection.
 * 'when' names the moment for TRACED_DEBUG.  No lock held.
 *
 * The caller may hold the loader's lock (a constructor run by
 * dlopen()): what it waits for, the connection thread's scan and
 * patch, takes only the lock dl_iterate_phdr() takes, which dlopen()
 * does not hold while constructors run, and loads libelf only for an
 * object it has not read, which the caller has read already.
 */
static void
ft_wait_applied(const char *when)
{
	struct timespec deadline;
	uint32_t want;

	if (!__atomic_load_n(&lib.connected, __ATOMIC_RELAXED))
		return;
	lib_deadline_after(&deadline, lib.connect_timeout_ms);
	pthread_mutex_lock(&ft.lock);
	want = ft_funcs_due_locked();
	while ((ft.gen_applied == 0 || ft.funcs_applied < want) &&
	    __atomic_load_n(&lib.connected, __ATOMIC_RELAXED))
		if (pthread_cond_timedwait(&ft.cond, &ft.lock, &deadline) ==
		    ETIMEDOUT) {
			DEBUG("function tracing: %s: %u of %u objects' "
			    "functions carried out in %d ms, going on", when,
			    ft.funcs_applied, want, lib.connect_timeout_ms);
			break;
		}
	pthread_mutex_unlock(&ft.lock);
}

/* TRACED=0: no tracing at all, function tracing included. */
static int
ft_off_by_env(void)
{
	const char *env = getenv("TRACED");

	return env != NULL && strcmp(env, "0") == 0;
}

/*
 * Before main(): find the instrumented objects; with some, register the
 * built-in provider and wait for the daemon's word on all of them.
 * When libtraced itself comes with a dlopen() (a program that does not
 * link it loads an instrumented library that does), this runs inside
 * that dlopen(), before the library's own constructors: the same wait
 * then makes the library patched before any of its code runs.
 */
static void ft_ctor(void) __attribute__((constructor));

static void
ft_ctor(void)
{
	const char *env;
	int have;

	/*
	 * The library itself is set up only if there is something to
	 * trace: a program without instrumented code pays the scan only.
	 */
	if (ft_off_by_env())
		return;
	if (!lib.initialized) {
		env = getenv("TRACED_DEBUG");
		lib_debug = env != NULL && *env != '\0' &&
		    strcmp(env, "0") != 0;
	}
	pthread_once(&ft_once, ft_init_once);
	if (ft.unsupported)
		return;
	pthread_mutex_lock(&ft.lock);
	(void)ft_modules_scan_locked();
	have = ft.have_funcs;
	ft.scan_at = ft_now_ms() + 1000;
	pthread_mutex_unlock(&ft.lock);
	if (!have)
		return;
	ft_init();
	if (lib.disabled)
		return;
	ft_provider_start();
	/*
	 * Until the daemon carried out the functions of every object
	 * loaded now: the executable and each library alike.  A FUNC_APPLY
	 * comes after each object's table is parsed; waiting for the
	 * first one only let main() start before a big library was
	 * patched (issue 29).
	 */
	ft_wait_applied("before main()");
}

/*
 * A dlopen() of the program's returned (functrace/dlopen.c): if it
 * brought instrumented objects, read them, tell the daemon and wait for
 * its word, as ft_ctor() does before main(), so that they are patched
 * as the rules say before dlopen() returns.  Their constructors have
 * run already.  Any application thread, no lock held.
 */
void
ft_dlopen_done(void)
{
	const struct ft_module *m;
	uint32_t first;
	int added = 0;

	if (ft_off_by_env())
		return;
	pthread_once(&ft_once, ft_init_once);
	if (ft.unsupported)
		return;
	pthread_mutex_lock(&ft.lock);
	first = ft.nmodules;
	(void)ft_modules_scan_locked();
	for (m = ft.modules; m != NULL; m = m->next)
		if (m->index >= first && m->state != NULL)
			added = 1;
	ft.scan_at = ft_now_ms() + 1000;
	pthread_mutex_unlock(&ft.lock);
	if (!added)
		return;
	ft_init();
	if (lib.disabled)
		return;
	/* The first instrumented code may come now: its records need
	 * the provider, which connects if nothing did yet. */
	ft_provider_start();
	lib_wake();
	ft_wait_applied("dlopen()");
}

/* ---- sending ---------------------------------------------------------- */

static int
ft_send_module(int sock, struct ft_module *m)
{
	struct {
		struct traced_msg_module m;
		char path[TRACED_PATH_MAX];
	} msg;
	struct traced_msg_funcs f;
	size_t plen = strlen(m->path) + 1;
	int fds[2];

	if (plen > TRACED_PATH_MAX)
		plen = TRACED_PATH_MAX;
	memset(&msg, 0, sizeof(msg));
	wire_hdr_init(&msg.m.hdr, TRACED_MSG_MODULE,
	    (uint32_t)(sizeof(msg.m) + plen));
	msg.m.index = m->index;
	msg.m.flags = m->state != NULL ? TRACED_MODULE_FUNCS : 0;
	msg.m.base = m->base;
	msg.m.start = m->lo;
	msg.m.end = m->hi;
	msg.m.build_id_len = m->build_id_len;
	memcpy(msg.m.build_id, m->build_id, m->build_id_len);
	memcpy(msg.path, m->path, plen - 1);
	if (conn_send_msg(sock, &msg, sizeof(msg.m) + plen, NULL, 0) == -1)
		return -1;
	if (m->state != NULL) {
		int dfd = memfd_create("traced-functab",
		    MFD_CLOEXEC | MFD_ALLOW_SEALING);
		int rc;

		if (dfd == -1)
			return -1;
		if (write(dfd, m->desc, m->desc_len) !=
		    (ssize_t)m->desc_len || fcntl(dfd, F_ADD_SEALS,
		    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE |
		    F_SEAL_SEAL) == -1) {
			close(dfd);
			return -1;
		}
		memset(&f, 0, sizeof(f));
		wire_hdr_init(&f.hdr, TRACED_MSG_FUNCS, sizeof(f));
		f.module = m->index;
		f.nfuncs = m->nfuncs;
		f.desc_size = (uint32_t)m->desc_len;
		f.stats_off = m->stats_off;
		f.state_size = m->state_size;
		fds[0] = dfd;
		fds[1] = m->state_fd;
		rc = conn_send_msg(sock, &f, sizeof(f), fds, 2);
		close(dfd);
		if (rc == -1)
			return -1;
	}
	m->sent = 1;
	return 0;
}

static int
ft_send_tracer(int sock, int i)
{
	struct ft_tracer *t = &ft.tracers[i];
	struct traced_msg_tracer msg;

	memset(&msg, 0, sizeof(msg));
	wire_hdr_init(&msg.hdr, TRACED_MSG_TRACER, sizeof(msg));
	msg.index = (uint32_t)i;
	msg.flags = (t->registered ? 0 : TRACED_TRACER_GONE) |
	    (t->registered && t->on ? TRACED_TRACER_ON : 0) |
	    (t->builtin ? TRACED_TRACER_BUILTIN : 0);
	snprintf(msg.name, sizeof(msg.name), "%s", t->name);
	if (conn_send_msg(sock, &msg, sizeof(msg), NULL, 0) == -1)
		return -1;
	t->sent = 1;
	return 0;
}

/* The counters of FUNC_STATS, summed over the threads. */
static void
ft_counters(uint64_t c[4])
{
	const struct ft_thread *t;

	c[0] = ft.patched;
	c[1] = ft.refused + ft.unapplied;
	c[2] = c[3] = 0;
	for (t = __atomic_load_n(&ft_threads, __ATOMIC_ACQUIRE); t != NULL;
	    t = t->next) {
		c[2] += __atomic_load_n(&t->skipped_depth, __ATOMIC_RELAXED);
		c[3] += __atomic_load_n(&t->skipped_nested, __ATOMIC_RELAXED);
	}
}

static int
ft_send_stats(int sock)
{
	struct traced_msg_func_stats msg;
	uint64_t c[4];

	ft_counters(c);
	memset(&msg, 0, sizeof(msg));
	wire_hdr_init(&msg.hdr, TRACED_MSG_FUNC_STATS, sizeof(msg));
	msg.gen = ft.gen_applied;
	msg.tracers_on = ft_tracers_on_locked();
	msg.patched = c[0];
	msg.refused = c[1];
	msg.skipped_depth = c[2];
	msg.skipped_nested = c[3];
	if (conn_send_msg(sock, &msg, sizeof(msg), NULL, 0) == -1)
		return -1;
	memcpy(ft.last_sent, c, sizeof(c));
	ft.stats_due = 0;
	return 0;
}

/*
 * Send what the daemon has not heard yet: objects, tracers, counters.
 * 0, or -1 if the connection failed.  lib.lock held.
 */
int
ft_send_pending_locked(int sock)
{
	struct ft_module *m;
	int i, rc = 0;

	if (!__atomic_load_n(&ft.initialized, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&ft.lock);
	/* Objects and tracers matter only with instrumented code. */
	if (!ft.have_funcs || ft.unsupported)
		goto out;
	for (m = ft.modules; m != NULL && rc == 0; m = m->next)
		if (!m->sent && !m->gone)
			rc = ft_send_module(sock, m);
	for (i = 0; i < TRACED_TRACERS_MAX && rc == 0; i++)
		if (!ft.tracers[i].sent && (ft.tracers[i].registered ||
		    ft.tracers[i].name[0] != '\0'))
			rc = ft_send_tracer(sock, i);
	if (rc == 0 && ft.stats_due)
		rc = ft_send_stats(sock);
out:
	pthread_mutex_unlock(&ft.lock);
	return rc;
}

/* The connection is down: the next one hears everything again. */
void
ft_conn_down_locked(void)
{
	struct ft_module *m;
	int i;

	if (!__atomic_load_n(&ft.initialized, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&ft.lock);
	for (m = ft.modules; m != NULL; m = m->next)
		m->sent = 0;
	for (i = 0; i < TRACED_TRACERS_MAX; i++)
		ft.tracers[i].sent = 0;
	ft.stats_due = 1;
	/* A new connection is a new session: its daemon counts anew. */
	ft.apply_funcs = ft.funcs_applied = 0;
	pthread_mutex_unlock(&ft.lock);
}

/* A FUNC_APPLY arrived: carried out by ft_service().  lib.lock held. */
void
ft_apply_msg(const struct traced_msg_func_apply *m)
{
	if (!__atomic_load_n(&ft.initialized, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&ft.lock);
	ft.apply_due = 1;
	ft.apply_gen = m->gen;
	ft.apply_set = m->tracer_set;
	ft.apply_on = m->tracer_on;
	ft.apply_funcs = m->funcs;
	pthread_mutex_unlock(&ft.lock);
}

/*
 * The connection thread's share of function tracing, after each wakeup
 * and at least once a second: carry out a FUNC_APPLY, patch what the
 * tracer API changed, retry a refused patch, notice objects loaded or
 * unloaded, report counters that moved.  Returns 1 when there is
 * something to send (conn_flush_pending() sends it).  No lock held.
 */
int
ft_service(void)
{
	uint64_t now = ft_now_ms(), c[4];
	int send = 0, sync = 0, rc;

	if (!__atomic_load_n(&ft.initialized, __ATOMIC_ACQUIRE) ||
	    ft.unsupported)
		return 0;
	pthread_mutex_lock(&ft.lock);
	if (ft.apply_due || now >= ft.scan_at) {
		ft.scan_at = now + 1000;
		rc = ft_modules_scan_locked();
		if (rc > 0) {
			sync = 1;
			send = ft.have_funcs;
		}
		if (rc > 0 && ft.have_funcs &&
		    !__atomic_load_n(&ft.provider_done, __ATOMIC_ACQUIRE)) {
			/* Instrumented code came with a dlopen(). */
			ft.provider_wanted = 1;
		}
	}
	if (ft.apply_due) {
		ft.apply_due = 0;
		ft_tracers_apply_rules_locked(ft.apply_set, ft.apply_on);
		sync = 1;
	}
	if (ft.sync_due || (ft.unapplied > 0 && now >= ft.retry_at)) {
		ft.sync_due = 0;
		sync = 1;
	}
	if (sync && ft.have_funcs) {
		(void)ft_patch_sync_locked();
		ft.retry_at = now + 1000;
		ft.stats_due = 1;
	}
	if (ft.apply_gen != ft.gen_applied && !ft.apply_due) {
		ft.gen_applied = ft.apply_gen;
		ft.funcs_applied = ft.apply_funcs;
		ft.stats_due = 1;
		pthread_cond_broadcast(&ft.cond);
	}
	if (ft.have_funcs) {
		int i;

		ft_counters(c);
		if (memcmp(c, ft.last_sent, sizeof(c)) != 0 &&
		    now >= ft.stats_at) {
			ft.stats_due = 1;
			ft.stats_at = now + 1000;
		}
		for (i = 0; i < TRACED_TRACERS_MAX; i++)
			if (!ft.tracers[i].sent && ft.tracers[i].name[0])
				send = 1;
	}
	send |= ft.stats_due;
	pthread_mutex_unlock(&ft.lock);
	if (ft.provider_wanted)
		ft_provider_start();
	return send;
}

/* In the child of fork(), its only thread.  Only system calls. */
void
ft_atfork_child(void)
{
	struct ft_module *m;
	int i;

	if (!__atomic_load_n(&ft.initialized, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_init(&ft.lock, NULL);
	ft_cond_init();
	ft_thread_atfork_child();
	ft_patch_atfork_child();
	(void)ft_state_memfd_atfork_child();
	for (m = ft.modules; m != NULL; m = m->next)
		m->sent = 0;
	for (i = 0; i < TRACED_TRACERS_MAX; i++) {
		ft.tracers[i].sent = 0;
		ft.tracers[i].rule_known = 0;
	}
	ft.gen_applied = 0;
	ft.apply_gen = 0;
	ft.apply_due = 0;
	ft.apply_funcs = ft.funcs_applied = 0;
	ft.stats_due = 1;
}

void
ft_atfork_prepare(void)
{
	if (__atomic_load_n(&ft.initialized, __ATOMIC_ACQUIRE))
		pthread_mutex_lock(&ft.lock);
}

void
ft_atfork_parent(void)
{
	if (__atomic_load_n(&ft.initialized, __ATOMIC_ACQUIRE))
		pthread_mutex_unlock(&ft.lock);
}

/* ---- public lookups --------------------------------------------------- */

const char *
traced_func_name(uintptr_t addr, uintptr_t *offset)
{
	const struct ft_module *m;
	const char *name = NULL;
	uint32_t lo, hi, mid;

	if (!__atomic_load_n(&ft.initialized, __ATOMIC_ACQUIRE))
		return NULL;
	pthread_mutex_lock(&ft.lock);
	for (m = ft.modules; m != NULL && name == NULL; m = m->next) {
		if (m->gone || m->nfuncs == 0 || addr < m->lo || addr >= m->hi)
			continue;
		lo = 0;
		hi = m->nfuncs;
		while (lo < hi) {
			mid = lo + (hi - lo) / 2;
			if (m->funcs[mid].start <= addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > 0 && (addr - m->funcs[lo - 1].start <
		    m->funcs[lo - 1].size || addr == m->funcs[lo - 1].start)) {
			name = ft_func_name(m, &m->funcs[lo - 1]);
			if (offset != NULL)
				*offset = addr - m->funcs[lo - 1].start;
		}
	}
	pthread_mutex_unlock(&ft.lock);
	return name;
}
