/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Snapshot triggers: 'trigger add GLOB snapshot [--after D] [--every D]'
 * writes a flight recorder snapshot (recorder.h) when the daemon drains
 * an event that matches GLOB, as 'tracectl snapshot' would without -o,
 * but of the windows of that event's user only: what one user's event
 * sets off is that user's, so a hostile client can make no snapshot of
 * anyone else's processes.  A glob is a rule's pattern (proto/rule.h):
 * with a ':' it matches "provider:event", without it the event name;
 * the tracer's own events are "traced:NAME" (traced:lost, traced:crash).
 *
 * DESIGN
 *
 * Firing is decided here, on the loop thread, from what the drain
 * thread already counted while it checked the records: each chunk that
 * comes back carries its events per class (pipeline.h, struct chunk),
 * and sring_chunk_done() hands it to trigger_chunk().  The globs are
 * matched once per session and class, when the triggers change or the
 * session registers a provider, into a mask per class (bit i: trigger
 * i); a chunk then costs one test when no trigger is set or none
 * matches the session, and otherwise a lookup per class it holds.
 *
 * What a matching chunk sets off is bounded per trigger and user: at
 * most one snapshot per --every (10 s by default, 1 s at the least),
 * and none while the last one waits for its --after timer or is being
 * written.  Every other match is counted as suppressed and costs
 * nothing more, so a client that emits the event a million times a
 * second costs one mask test per chunk and one snapshot per --every.
 * The counts (fired, suppressed, failed) live as long as the daemon;
 * the triggers themselves are kept in the index (index.c: triggers),
 * so that a restarted daemon has them, like the event rules.
 *
 * A snapshot that was started outlives a trigger deleted meanwhile: its
 * done callback finds its trigger by serial number, not by pointer.
 * Loop thread only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include <event2/event.h>

#include "command.h"
#include "dclock.h"
#include "index.h"
#include "limits.h"
#include "log.h"
#include "pdesc.h"
#include "quota.h"
#include "recorder.h"
#include "rule.h"
#include "session.h"
#include "sock.h"
#include "trigger.h"

/* The provider name of the tracer's own events. */
#define TRIGGER_TRACER_SCOPE	"traced"

/* A chunk with a traced:lost record (the LOST records it holds). */
static int
chunk_has_lost(const struct chunk *c)
{
	return c->lost_records > 0;
}

/* A chunk with a traced:crash record: a thread died of a signal. */
static int
chunk_has_crash(const struct chunk *c)
{
	return c->crashes > 0;
}

/*
 * The tracer's own events a trigger may name ("traced:NAME"), and how a
 * chunk says it holds one: they are no class of the session's, each
 * has its count in the chunk's books.  A new one is a line here.
 */
static const struct {
	const char	*name;
	int		(*in)(const struct chunk *);
} tracer_events[] = {
	{ "lost", chunk_has_lost },
	{ "crash", chunk_has_crash },
};

#define NTRACER_EVENTS	(sizeof(tracer_events) / sizeof(tracer_events[0]))

struct trigger;

/* One user's firings of one trigger: what --every is counted from. */
struct tfire {
	LIST_ENTRY(tfire) entry;	/* its trigger's fires */
	struct trigger	*t;		/* borrowed: its trigger */
	uid_t		 uid;
	uint64_t	 last;		/* ns, CLOCK_MONOTONIC: it fired;
					   0: never */
	struct event	*timer;		/* owned: --after; NULL until used */
	int		 waiting;	/* the timer runs */
	int		 writing;	/* the recorder writes its snapshot */
	uint32_t	 session;	/* who set it off last, for the log */
	pid_t		 pid;
	char		 comm[TRACED_COMM_MAX];
};

LIST_HEAD(tfire_list, tfire);

struct trigger {
	uint64_t	 id;		/* serial number, unique in this run */
	char		*glob;		/* owned */
	uint64_t	 after_ns;
	uint64_t	 every_ns;
	uint64_t	 fired;
	uint64_t	 suppressed;
	uint64_t	 failed;
	uint64_t	 last_fired;	/* ns, CLOCK_REALTIME; 0: never */
	char		*last_dir;	/* owned: its last snapshot, or NULL */
	struct tfire_list fires;	/* owned, one per user it fired for */
	unsigned	 nfires;
};

/* A snapshot asked of the recorder, until its done callback. */
struct tshot {
	LIST_ENTRY(tshot) entry;	/* tg.shots */
	uint64_t	 trigger;	/* its trigger's id (it may be gone) */
	uid_t		 uid;
	uint32_t	 session;	/* who set it off */
	pid_t		 pid;
	char		 comm[TRACED_COMM_MAX];
	char		 reason[COMMAND_PATTERN_MAX + 16]; /* "trigger 'GLOB'" */
};

/* The triggers; trigger.c's alone. */
static struct {
	struct event_base *base;	/* borrowed: the loop's */
	struct trigger	*t[TRIGGER_MAX]; /* owned, in the order added */
	size_t		 n;
	uint64_t	 gen;		/* changes with the set: a session's
					   masks are for one generation */
	uint64_t	 next_id;
	uint32_t	 tracer_mask[NTRACER_EVENTS]; /* triggers each of the
					   tracer's events sets off */
	uint32_t	 tracer_any;	/* all of those */
	LIST_HEAD(, tshot) shots;	/* owned: snapshots being written */
} tg = { .gen = 1, .next_id = 1 };

/* The triggers whose glob matches 'name' of provider 'scope': a mask. */
static uint32_t
trigger_mask(const char *scope, const char *name)
{
	uint32_t m = 0;
	size_t i;

	for (i = 0; i < tg.n; i++)
		if (rule_match(tg.t[i]->glob, scope, name))
			m |= UINT32_C(1) << i;
	return m;
}

/*
 * The set changed: every session's masks are to be made again (at its
 * next chunk), the tracer's events' now.
 */
static void
trigger_changed(void)
{
	size_t k;

	tg.gen++;
	tg.tracer_any = 0;
	for (k = 0; k < NTRACER_EVENTS; k++) {
		tg.tracer_mask[k] = trigger_mask(TRIGGER_TRACER_SCOPE,
		    tracer_events[k].name);
		tg.tracer_any |= tg.tracer_mask[k];
	}
}

static void
tfire_free(struct tfire *f)
{
	LIST_REMOVE(f, entry);
	f->t->nfires--;
	if (f->timer != NULL)
		event_free(f->timer);
	free(f);
}

static void
trigger_free(struct trigger *t)
{
	while (!LIST_EMPTY(&t->fires))
		tfire_free(LIST_FIRST(&t->fires));
	free(t->glob);
	free(t->last_dir);
	free(t);
}

static struct trigger *
trigger_new(const char *glob, uint64_t after_ns, uint64_t every_ns)
{
	struct trigger *t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	if ((t->glob = strdup(glob)) == NULL) {
		free(t);
		return NULL;
	}
	t->id = tg.next_id++;
	t->after_ns = after_ns;
	t->every_ns = every_ns;
	LIST_INIT(&t->fires);
	return t;
}

static struct trigger *
trigger_by_id(uint64_t id)
{
	size_t i;

	for (i = 0; i < tg.n; i++)
		if (tg.t[i]->id == id)
			return tg.t[i];
	return NULL;
}

static struct tfire *
tfire_find(struct trigger *t, uid_t uid)
{
	struct tfire *f;

	LIST_FOREACH(f, &t->fires, entry)
		if (f->uid == uid)
			return f;
	return NULL;
}

/*
 * Forget the users for whom t is idle and its --every has passed: they
 * suppress nothing any more.
 */
static void
tfire_prune(struct trigger *t, uint64_t now)
{
	struct tfire *f, *next;

	for (f = LIST_FIRST(&t->fires); f != NULL; f = next) {
		next = LIST_NEXT(f, entry);
		if (!f->waiting && !f->writing && now - f->last >= t->every_ns)
			tfire_free(f);
	}
}

/* uid's firings of t, made if need be; NULL when none can be. */
static struct tfire *
tfire_get(struct trigger *t, uid_t uid, uint64_t now)
{
	struct tfire *f;

	if ((f = tfire_find(t, uid)) != NULL)
		return f;
	if (t->nfires >= TRIGGER_UIDS_MAX)
		tfire_prune(t, now);
	if (t->nfires >= TRIGGER_UIDS_MAX || (f = calloc(1, sizeof(*f))) ==
	    NULL)
		return NULL;
	f->t = t;
	f->uid = uid;
	LIST_INSERT_HEAD(&t->fires, f, entry);
	t->nfires++;
	return f;
}

/* Save the set in the index.  0, or -1 (logged). */
static int
trigger_save(void)
{
	struct index_trigger it[TRIGGER_MAX];
	size_t i;

	for (i = 0; i < tg.n; i++) {
		it[i].glob = tg.t[i]->glob;
		it[i].action = "snapshot";
		it[i].after_ns = tg.t[i]->after_ns;
		it[i].every_ns = tg.t[i]->every_ns;
	}
	return index_triggers_save(it, tg.n);
}

/* ---- snapshots --------------------------------------------------- */

/*
 * A snapshot is written (or failed): say where, once, and let its user
 * fire again once --every has passed.  The recorder's callback, on the
 * loop thread.
 */
static void
trigger_done(void *arg, const struct snapshot_result *res)
{
	struct tshot *sh = arg;
	struct trigger *t = trigger_by_id(sh->trigger);
	struct tfire *f = t != NULL ? tfire_find(t, sh->uid) : NULL;
	char *dir;

	LIST_REMOVE(sh, entry);
	if (f != NULL)
		f->writing = 0;
	/* Its user's traces, against its quota until the next scan finds
	 * the directory (the index names it that user's). */
	quota_written(sh->uid, res->bytes);
	if (res->err != 0) {
		if (t != NULL)
			t->failed++;
		log_warnx("%s, set off by session %u (%s[%d], uid %u): the "
		    "snapshot failed: %s", sh->reason, sh->session, sh->comm,
		    (int)sh->pid, (unsigned)sh->uid, res->errmsg != NULL ?
		    res->errmsg : strerror(res->err));
	} else {
		log_info("%s, set off by session %u (%s[%d], uid %u): "
		    "snapshot of %u session%s of uid %u, %llu events, %llu "
		    "bytes, in %s", sh->reason, sh->session, sh->comm,
		    (int)sh->pid, (unsigned)sh->uid, res->sessions,
		    res->sessions == 1 ? "" : "s", (unsigned)sh->uid,
		    (unsigned long long)res->events,
		    (unsigned long long)res->bytes, res->dir);
		if (t != NULL && res->dir != NULL &&
		    (dir = strdup(res->dir)) != NULL) {
			free(t->last_dir);
			t->last_dir = dir;
		}
	}
	free(sh);
}

/* Ask the recorder for f's user's snapshot.  The one call to it. */
static void
trigger_snapshot(struct tfire *f)
{
	struct trigger *t = f->t;
	struct snapshot_req req;
	struct tshot *sh;
	char err[256];

	/* What a trigger writes is its user's, and counts against the
	 * user's share of the trace directory (quota.c). */
	if (quota_over(f->uid)) {
		t->failed++;
		limits_logx(f->uid, "trigger '%s', set off by session %u "
		    "(%s[%d], uid %u): no snapshot: the uid is over its "
		    "trace-dir-bytes-per-uid quota (traced.conf(5)); delete "
		    "its traces or snapshots", t->glob, f->session, f->comm,
		    (int)f->pid, (unsigned)f->uid);
		return;
	}
	if ((sh = calloc(1, sizeof(*sh))) == NULL) {
		t->failed++;
		log_warn("trigger '%s': no snapshot", t->glob);
		return;
	}
	sh->trigger = t->id;
	sh->uid = f->uid;
	sh->session = f->session;
	sh->pid = f->pid;
	memcpy(sh->comm, f->comm, sizeof(sh->comm));
	snprintf(sh->reason, sizeof(sh->reason), "trigger '%s'", t->glob);
	/* That user's windows only, never any_uid: see the top. */
	memset(&req, 0, sizeof(req));
	req.any_uid = 0;
	req.uid = f->uid;
	req.reason = sh->reason;
	req.done = trigger_done;
	req.arg = sh;
	if (recorder_snapshot(&req, err, sizeof(err)) == 0) {
		f->writing = 1;
		LIST_INSERT_HEAD(&tg.shots, sh, entry);
		return;
	}
	t->failed++;
	log_warnx("%s, set off by session %u (%s[%d], uid %u): no snapshot: "
	    "%s", sh->reason, sh->session, sh->comm, (int)sh->pid,
	    (unsigned)sh->uid, err);
	free(sh);
}

/* --after has passed. */
static void
trigger_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct tfire *f = arg;

	(void)fd;
	(void)what;
	f->waiting = 0;
	trigger_snapshot(f);
}

/*
 * Session s drained an event t matches, at 'now' (CLOCK_MONOTONIC):
 * fire for its user, unless that user's last firing is within --every
 * or its snapshot is still to come.
 */
static void
trigger_hit(struct trigger *t, const struct session *s, uint64_t now)
{
	struct timeval tv;
	struct tfire *f;

	f = tfire_get(t, s->uid, now);
	if (f == NULL || f->waiting || f->writing ||
	    (f->last != 0 && now - f->last < t->every_ns)) {
		t->suppressed++;
		return;
	}
	f->last = now;
	f->session = s->id;
	f->pid = s->pid;
	memcpy(f->comm, s->comm, sizeof(f->comm));
	t->fired++;
	t->last_fired = now_ns(CLOCK_REALTIME);
	if (t->after_ns == 0) {
		trigger_snapshot(f);
		return;
	}
	if (f->timer == NULL) {
		f->timer = evtimer_new(tg.base, trigger_timer_cb, f);
		if (f->timer == NULL) {
			t->failed++;
			log_warnx("trigger '%s': no timer for --after: "
			    "snapshot now", t->glob);
			trigger_snapshot(f);
			return;
		}
		/* Timers come before clients' work (sock.h). */
		(void)event_priority_set(f->timer, LOOP_PRI_FIRST);
	}
	tv.tv_sec = (time_t)(t->after_ns / 1000000000);
	tv.tv_usec = (suseconds_t)(t->after_ns % 1000000000 / 1000);
	evtimer_add(f->timer, &tv);
	f->waiting = 1;
}

/* ---- sessions ---------------------------------------------------- */

/*
 * Make session s's masks for the current set: all of them when the set
 * changed, else those of the classes its new providers brought.  The
 * work is its classes times the triggers, once per change.
 */
static void
trigger_session_match(struct session *s)
{
	uint32_t from = s->trig_nclasses, i, k, m, *nm;

	if (s->trig_gen != tg.gen) {
		free(s->trig_masks);
		s->trig_masks = NULL;
		s->trig_any = 0;
		s->trig_gen = tg.gen;
		from = 0;
	}
	if (s->trig_masks != NULL && s->nclasses > from) {
		nm = reallocarray(s->trig_masks, s->nclasses, sizeof(*nm));
		if (nm == NULL)
			goto fail;
		memset(nm + from, 0, (s->nclasses - from) * sizeof(*nm));
		s->trig_masks = nm;
	}
	for (i = 0; i < s->nprovs; i++) {
		const struct sprov *p = s->provs[i];

		if (p->cls + p->nevents <= from)
			continue;	/* matched before */
		for (k = p->cls < from ? from - p->cls : 0; k < p->nevents;
		    k++) {
			m = trigger_mask(p->d->name, p->d->tf.events[k].name);
			if (m == 0)
				continue;
			if (s->trig_masks == NULL && (s->trig_masks =
			    calloc(s->nclasses, sizeof(*nm))) == NULL)
				goto fail;
			s->trig_masks[p->cls + k] = m;
			s->trig_any |= m;
		}
	}
	s->trig_nclasses = s->nclasses;
	return;
fail:
	log_warn("session %u: the triggers' masks; its events set off no "
	    "trigger until the triggers change", s->id);
	free(s->trig_masks);
	s->trig_masks = NULL;
	s->trig_any = 0;
	s->trig_nclasses = s->nclasses;
}

/*
 * A DATA chunk of session s came back: fire the triggers its events
 * match.  Cheap when nothing matches, and bounded when something does
 * (see the top).  Loop thread.
 */
void
trigger_chunk(struct session *s, const struct chunk *c)
{
	uint32_t mask = 0, i;
	uint64_t now;
	size_t k;

	if (tg.n == 0)
		return;
	if (s->trig_gen != tg.gen || s->trig_nclasses != s->nclasses)
		trigger_session_match(s);
	if (s->trig_any == 0 && tg.tracer_any == 0)
		return;
	if (s->trig_masks != NULL)
		for (i = 0; i < c->ncounts; i++)
			if (c->counts[i].cls < s->trig_nclasses)
				mask |= s->trig_masks[c->counts[i].cls];
	for (k = 0; k < NTRACER_EVENTS; k++)
		if (tg.tracer_mask[k] != 0 && tracer_events[k].in(c))
			mask |= tg.tracer_mask[k];
	if (mask == 0)
		return;
	now = now_ns(CLOCK_MONOTONIC);
	for (i = 0; i < tg.n; i++)
		if (mask & (UINT32_C(1) << i))
			trigger_hit(tg.t[i], s, now);
}

/* What trigger.c keeps in a session, freed with it. */
void
trigger_session_free(struct session *s)
{
	free(s->trig_masks);
	s->trig_masks = NULL;
	s->trig_any = 0;
	s->trig_nclasses = 0;
}

/* ---- the set ----------------------------------------------------- */

/* A trigger the index kept: checked again, since it comes from a file. */
static void
trigger_load_one(void *arg, const struct index_trigger *it)
{
	const char *why = NULL;
	char err[256];
	size_t i;

	(void)arg;
	if (command_pattern_valid(it->glob, err, sizeof(err)) == -1)
		why = err;
	else if (strcmp(it->action, "snapshot") != 0)
		why = "unknown action";
	else if (it->after_ns > COMMAND_TRIGGER_AFTER_MAX_NS ||
	    it->every_ns < COMMAND_TRIGGER_EVERY_MIN_NS ||
	    it->every_ns > COMMAND_TRIGGER_EVERY_MAX_NS)
		why = "a duration out of range";
	else if (tg.n == TRIGGER_MAX)
		why = "too many triggers";
	for (i = 0; why == NULL && i < tg.n; i++)
		if (strcmp(tg.t[i]->glob, it->glob) == 0)
			why = "given twice";
	if (why == NULL &&
	    (tg.t[tg.n] = trigger_new(it->glob, it->after_ns,
	    it->every_ns)) == NULL)
		why = strerror(errno);
	if (why != NULL) {
		log_warnx("index: trigger '%.*s' left out: %s",
		    COMMAND_PATTERN_MAX, it->glob, why);
		return;
	}
	tg.n++;
}

/*
 * Load the triggers the index kept; their timers will run on 'base'.
 * Once, at start, after the fork.
 */
void
trigger_init(struct event_base *base)
{
	tg.base = base;
	LIST_INIT(&tg.shots);
	(void)index_triggers_load(trigger_load_one, NULL);
	trigger_changed();
	if (tg.n > 0)
		log_info("%zu snapshot trigger%s from the index", tg.n,
		    tg.n == 1 ? "" : "s");
}

/* At exit, once the loop and the recorder are done: free everything. */
/*
 * The daemon stops: a snapshot still waiting for its --after is asked
 * for now, with what the windows hold, rather than never (the windows
 * go with the daemon).  Before recorder_stop(), which writes it.
 */
void
trigger_stop(void)
{
	struct tfire *f;
	size_t i;

	for (i = 0; i < tg.n; i++)
		LIST_FOREACH(f, &tg.t[i]->fires, entry) {
			if (!f->waiting)
				continue;
			evtimer_del(f->timer);
			f->waiting = 0;
			log_info("trigger '%s': the daemon stops: its snapshot "
			    "is written now, before its --after", tg.t[i]->glob);
			trigger_snapshot(f);
		}
}

void
trigger_fini(void)
{
	struct tshot *sh;
	size_t i;

	for (i = 0; i < tg.n; i++)
		trigger_free(tg.t[i]);
	tg.n = 0;
	while ((sh = LIST_FIRST(&tg.shots)) != NULL) {
		LIST_REMOVE(sh, entry);
		free(sh);
	}
}

/*
 * Add a trigger from a parsed 'trigger add' (command_parse_trigger())
 * and save the set.  Returns 0; 1 when it works but could not be saved
 * (the reason in err); or -1 when refused (a glob that has one already,
 * too many triggers, out of memory: the reason and the fix in err).
 */
int
trigger_add(const struct command_trigger *ct, char *err, size_t errsize)
{
	char a[32], e[32];
	size_t i;

	for (i = 0; i < tg.n; i++)
		if (strcmp(tg.t[i]->glob, ct->glob) == 0) {
			snprintf(err, errsize, "a trigger on '%s' exists "
			    "already (--after %s --every %s): 'tracectl "
			    "trigger delete %s' first to change it",
			    ct->glob, command_format_duration(
			    tg.t[i]->after_ns, a, sizeof(a)),
			    command_format_duration(tg.t[i]->every_ns, e,
			    sizeof(e)), ct->glob);
			return -1;
		}
	if (tg.n == TRIGGER_MAX) {
		snprintf(err, errsize, "%d triggers already, the most: "
		    "delete one first ('tracectl trigger list' shows them), "
		    "or use one glob for several events", TRIGGER_MAX);
		return -1;
	}
	if ((tg.t[tg.n] = trigger_new(ct->glob, ct->after_ns,
	    ct->every_ns)) == NULL) {
		snprintf(err, errsize, "out of memory");
		return -1;
	}
	tg.n++;
	trigger_changed();
	if (trigger_save() == -1) {
		snprintf(err, errsize, "the trigger works now but could not "
		    "be saved in the index (see the daemon's log): a "
		    "restarted daemon will not have it");
		return 1;
	}
	return 0;
}

/*
 * Delete the trigger on 'glob' (its timers with it; a snapshot being
 * written finishes).  Returns 1 (deleted and saved), 0 (no such
 * trigger), or -1 (deleted, not saved: logged).
 */
int
trigger_delete(const char *glob)
{
	size_t i;

	for (i = 0; i < tg.n; i++)
		if (strcmp(tg.t[i]->glob, glob) == 0)
			break;
	if (i == tg.n)
		return 0;
	trigger_free(tg.t[i]);
	memmove(&tg.t[i], &tg.t[i + 1], (tg.n - i - 1) * sizeof(tg.t[0]));
	tg.n--;
	trigger_changed();
	return trigger_save() == -1 ? -1 : 1;
}

/* How many triggers there are. */
size_t
trigger_count(void)
{
	return tg.n;
}

/* Trigger i (< trigger_count()), as listed; borrowed until it changes. */
void
trigger_get(size_t i, struct trigger_info *out)
{
	const struct trigger *t = tg.t[i];
	const struct tfire *f;

	memset(out, 0, sizeof(*out));
	out->glob = t->glob;
	out->action = "snapshot";
	out->after_ns = t->after_ns;
	out->every_ns = t->every_ns;
	out->fired = t->fired;
	out->suppressed = t->suppressed;
	out->failed = t->failed;
	out->last_fired = t->last_fired;
	out->last_dir = t->last_dir;
	LIST_FOREACH(f, &t->fires, entry)
		out->pending += f->waiting || f->writing;
}
