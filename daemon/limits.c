/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * What each uid holds of the daemon, against the limits of traced.conf
 * (LIMIT_*, see config.c and traced(8)).
 *
 * The system daemon serves every user of the machine: without a bound,
 * one user's programs (or a hand-written client) could take its memory,
 * its descriptors or its time from everyone else.  So every resource a
 * client can make the daemon hold is charged to the client's uid (from
 * SO_PEERCRED) when it is taken, refused with a message naming the
 * setting when the uid is at its limit, and given back when it is
 * released.  Per-session limits (providers) are checked where the
 * session keeps its count.
 *
 * Besides the per-uid limits, the descriptors the daemon has left are
 * shared out: no uid but root (and the daemon's own) may take the last
 * LIMITS_FD_RESERVE of them, so that root's programs stay traced and
 * root's tracectl gets an answer whatever others hold.
 *
 * The same table rate-limits what clients make the daemon log: each
 * uid but root and the daemon's own has a budget of lines (a token bucket, LOG_BURST lines, refilled
 * at LOG_RATE a second); lines beyond it are counted and summed up in
 * one line once the budget returns.
 *
 * Loop thread only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "dclock.h"
#include "limits.h"
#include "log.h"

#define LIMITS_BUCKETS		64
#define LIMITS_FD_RESERVE	256
#define LOG_BURST		50	/* lines a uid may log at once */
#define LOG_RATE		5	/* and then a second */

struct uidacct {
	struct uidacct	*next;
	uid_t		 uid;
	uint64_t	 held[LIMIT_N];	/* in the units of the limit */
	uint64_t	 fds;		/* descriptors its clients hold */
	/* Logging budget. */
	double		 tokens;
	uint64_t	 refilled;	/* ns, CLOCK_MONOTONIC */
	uint64_t	 suppressed;
	/* The loop's time its clients took: this window's and the last. */
	uint64_t	 loop_at;	/* ns, CLOCK_MONOTONIC: window start */
	uint64_t	 loop_ns, loop_prev_ns;
};

static struct uidacct *buckets[LIMITS_BUCKETS];
static uint64_t fds_held;		/* by every client */
static uint64_t fds_closing;		/* given back, not yet closed */
static uint64_t fd_limit;		/* RLIMIT_NOFILE, soft, raised */

static struct uidacct *
uidacct_find(uid_t uid, int create)
{
	struct uidacct *a;
	size_t b = (size_t)uid % LIMITS_BUCKETS;

	for (a = buckets[b]; a != NULL; a = a->next)
		if (a->uid == uid)
			return a;
	if (!create || (a = calloc(1, sizeof(*a))) == NULL)
		return NULL;
	a->uid = uid;
	a->tokens = LOG_BURST;
	a->next = buckets[b];
	buckets[b] = a;
	return a;
}

/* Drop an entry that holds nothing and owes no summary. */
static void
uidacct_maybe_free(struct uidacct *a)
{
	struct uidacct **pp;
	int l;

	for (l = 0; l < LIMIT_N; l++)
		if (a->held[l] != 0)
			return;
	if (a->fds != 0 || a->suppressed != 0 || a->tokens < LOG_BURST)
		return;
	for (pp = &buckets[(size_t)a->uid % LIMITS_BUCKETS]; *pp != a;
	    pp = &(*pp)->next)
		;
	*pp = a->next;
	free(a);
}

/*
 * The kernel grows a process's descriptor table by doubling it, and
 * while other threads share the table each growth waits for an RCU
 * grace period: 0.1 to 0.6 s measured here, under another user's disk
 * writes, for the loop thread that happened to open descriptor 1024,
 * 2048 or 4096.  So the table is grown once at start, before any
 * thread, to what a busy daemon uses (the kernel never shrinks it, but
 * a fork() sizes the child's to its open descriptors: after
 * daemonizing): FD_TABLE_START entries cost 8 bytes each of kernel
 * memory.  Loop thread, before any other.
 */
#define FD_TABLE_START	65536

/*
 * Descriptors given back (limits_put()) but still open, while the
 * files thread closes them (intake_close()): +1 when one is handed to
 * it, -1 when closed.  They count against the daemon's limit as held.
 * Loop thread.
 */
void
limits_fds_closing(int delta)
{
	if (delta < 0 && fds_closing < (uint64_t)-delta)
		fds_closing = 0;
	else
		fds_closing += (uint64_t)(int64_t)delta;
}

void
limits_grow_fd_table(void)
{
	int fd, n;

	n = fd_limit < FD_TABLE_START ? (int)fd_limit : FD_TABLE_START;
	if (n <= 3 || (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		return;
	/* Never over a descriptor that is open (inherited). */
	if (fd < n - 1 && fcntl(n - 1, F_GETFD) == -1 && errno == EBADF &&
	    dup3(fd, n - 1, O_CLOEXEC) != -1)
		close(n - 1);
	close(fd);
}

/*
 * Raise the descriptor limit to its hard maximum (a session holds a
 * socket and a directory, each ring a stream file) and remember it.
 * Once, at start.
 */
void
limits_init(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
			(void)getrlimit(RLIMIT_NOFILE, &rl);
		}
		fd_limit = rl.rlim_cur == RLIM_INFINITY ? 1u << 20 :
		    (uint64_t)rl.rlim_cur;
	} else
		fd_limit = 1024;
}

/* Root and the daemon's own user: no per-uid limit applies. */
int
limits_privileged(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/*
 * Charge 'n' of limit 'l' (a per-uid LIMIT_*) and 'fds' descriptors to
 * 'uid'.  Returns 0, or -1 with nothing charged and, in why, which
 * limit refused it and the setting that raises it.
 */
int
limits_take(uid_t uid, int l, uint64_t n, unsigned fds, char *why,
    size_t whysize)
{
	struct uidacct *a = uidacct_find(uid, 1);
	uint64_t max = cfg.limit[l];

	if (a == NULL) {
		snprintf(why, whysize, "out of memory");
		return -1;
	}
	if (n > max || a->held[l] > max - n) {
		snprintf(why, whysize, "uid %u holds %llu of its %s limit "
		    "(%llu; raise it in traced.conf(5) or with traced --set "
		    "%s=N)", (unsigned)uid, (unsigned long long)a->held[l],
		    config_limit_name(l), (unsigned long long)max,
		    config_limit_name(l));
		uidacct_maybe_free(a);
		return -1;
	}
	if (fds > 0 && !limits_privileged(uid) &&
	    fds_held + fds_closing + fds + LIMITS_FD_RESERVE > fd_limit) {
		snprintf(why, whysize, "the daemon is short of descriptors "
		    "(%llu of %llu held by clients; the last %u are kept "
		    "for root): raise LimitNOFILE= in traced.service",
		    (unsigned long long)fds_held,
		    (unsigned long long)fd_limit, LIMITS_FD_RESERVE);
		uidacct_maybe_free(a);
		return -1;
	}
	a->held[l] += n;
	a->fds += fds;
	fds_held += fds;
	return 0;
}

/*
 * Charge n of limit l to uid whatever the limit: for what must go out
 * (the end of a reply), so that limits_put() balances.
 */
void
limits_force(uid_t uid, int l, uint64_t n)
{
	struct uidacct *a = uidacct_find(uid, 1);

	if (a != NULL)
		a->held[l] += n;
}

/* Give back what limits_take() charged. */
void
limits_put(uid_t uid, int l, uint64_t n, unsigned fds)
{
	struct uidacct *a = uidacct_find(uid, 0);

	if (a == NULL)
		return;
	a->held[l] -= n <= a->held[l] ? n : a->held[l];
	a->fds -= fds <= a->fds ? fds : a->fds;
	fds_held -= fds <= fds_held ? fds : fds_held;
	uidacct_maybe_free(a);
}

/* What 'uid' holds of limit l. */
uint64_t
limits_held(uid_t uid, int l)
{
	struct uidacct *a = uidacct_find(uid, 0);

	return a != NULL ? a->held[l] : 0;
}

/* a's loop windows as of 'now'. */
static void
loop_roll(struct uidacct *a, uint64_t now)
{
	if (now - a->loop_at < LIMITS_LOOP_WINDOW_NS)
		return;
	a->loop_prev_ns = now - a->loop_at < 2 * LIMITS_LOOP_WINDOW_NS ?
	    a->loop_ns : 0;
	a->loop_ns = 0;
	a->loop_at = now;
}

/*
 * The uid's clients took 'ns' of the loop's time from 'start' (ns,
 * CLOCK_MONOTONIC) on.
 */
void
limits_loop_charge(uid_t uid, uint64_t start, uint64_t ns)
{
	struct uidacct *a = uidacct_find(uid, 1);

	if (a == NULL)
		return;
	loop_roll(a, start);
	a->loop_ns += ns;
}

/*
 * Did the uid's clients take more than their share of the loop in this
 * window or the last (LIMITS_LOOP_SHARE_NS of LIMITS_LOOP_WINDOW_NS)?
 */
int
limits_loop_over(uid_t uid, uint64_t now)
{
	struct uidacct *a = uidacct_find(uid, 0);

	if (a == NULL)
		return 0;
	loop_roll(a, now);
	return a->loop_ns > LIMITS_LOOP_SHARE_NS ||
	    a->loop_prev_ns > LIMITS_LOOP_SHARE_NS;
}

/*
 * May a line caused by a client of 'uid' be logged now?  Takes one from
 * the uid's budget; when the budget is spent, counts the line instead.
 * The first line allowed after some were not says how many were not.
 */
int
limits_log_ok(uid_t uid)
{
	struct uidacct *a;
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	/* Root and the daemon's user are trusted with the log. */
	if (limits_privileged(uid))
		return 1;
	if ((a = uidacct_find(uid, 1)) == NULL)
		return 0;
	if (a->refilled == 0)
		a->refilled = now;
	a->tokens += (double)(now - a->refilled) * LOG_RATE / 1e9;
	if (a->tokens > LOG_BURST)
		a->tokens = LOG_BURST;
	a->refilled = now;
	if (a->tokens < 1) {
		a->suppressed++;
		return 0;
	}
	a->tokens -= 1;
	if (a->suppressed > 0) {
		log_warnx("uid %u: %llu more messages about its clients were "
		    "not logged (at most %d a second)", (unsigned)uid,
		    (unsigned long long)a->suppressed, LOG_RATE);
		a->suppressed = 0;
	}
	return 1;
}

/* A warning a client of 'uid' caused, through the uid's budget. */
void
limits_logx(uid_t uid, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	if (!limits_log_ok(uid))
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_warnx("%s", buf);
}

/* The same for news (a session starts, ends): info level. */
void
limits_info(uid_t uid, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	if (!limits_log_ok(uid))
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_info("%s", buf);
}
