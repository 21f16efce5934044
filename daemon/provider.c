/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * A session's providers: what a PROVIDER message brings (a provider's
 * name, its event ids, its description in a sealed memfd and its state
 * array in another) and what the session makes of it.
 *
 * The message is checked (order, ids, sizes, the memfds), then the
 * limits: a provider over one (providers-per-session,
 * events-per-session, event-classes-per-uid, event-ids-per-uid) is
 * refused on its own, its events switched off and its ids skipped,
 * while the session and its other providers go on.  A description this
 * uid sent before is shared (pdesc.c); a new one is parsed on the
 * intake thread, the session's socket left unread meanwhile so that its
 * messages keep their order.  An added provider maps the process's
 * state array, gets its event classes (the next range of the session's
 * event table, published to the drain thread in the session's feed),
 * its states by the rules, and its metadata appended (meta.c).
 *
 * Loop thread only, but the parse jobs' work().
 */
#include <sys/mman.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "config.h"
#include "dclock.h"
#include "intake.h"
#include "limits.h"
#include "log.h"
#include "pdesc.h"
#include "session.h"
#include "state.h"

/* Answer a PROVIDER: status 0, or a negative errno when refused. */
static void
session_provider_ack(struct session *s, uint32_t index, int status)
{
	struct traced_msg_provider_ack ack;

	memset(&ack, 0, sizeof(ack));
	wire_hdr_init(&ack.hdr, TRACED_MSG_PROVIDER_ACK, sizeof(ack));
	ack.index = index;
	ack.status = status;
	session_send(s, &ack, sizeof(ack));
}

/*
 * A provider refused for a limit: its events must stay off, whatever
 * an earlier daemon left in its state bytes, or the process would
 * trace events this daemon cannot read.  The state memfd is the
 * process's; clear it if it is one we could map.
 */
static void
session_provider_silence(int state_fd, uint32_t nevents)
{
	const char *why;
	size_t size = ((size_t)nevents + 4095) / 4096 * 4096;
	uint8_t *state;

	if (nevents == 0 || client_check_fd(state_fd, size, F_SEAL_SHRINK,
	    &why) == -1)
		return;
	state = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
	    state_fd, 0);
	if (state == MAP_FAILED)
		return;
	memset(state, 0, nevents);
	munmap(state, size);
}

/*
 * Refuse a provider for a limit (why): the session and its other
 * providers go on, its events are switched off, its ids skipped.
 */
static void
session_provider_refuse(struct session *s, const struct traced_msg_provider *m,
    const char *name, int state_fd, const char *why)
{
	limits_logx(s->uid, "session %u: %s[%d]: provider %s refused: %s",
	    s->id, s->comm, (int)s->pid, name, why);
	s->refused_providers++;
	session_provider_silence(state_fd, m->nevents);
	session_provider_ack(s, m->index, -EDQUOT);
	s->next_prov = m->index + 1;
	s->next_id = m->id_base + m->nevents;
}

/*
 * Add provider m, described by d (a reference, given to the session),
 * with its state array on state_fd.  Its event ids are charged already.
 * Returns 0, or -1 (logged; d released, the ids given back): the client
 * is to be disconnected.
 */
static int
session_provider_add(struct session *s, const struct traced_msg_provider *m,
    struct pdesc *d, int state_fd)
{
	struct sprov *p, **np;
	struct evtab *et;
	const char *why = NULL;
	uint32_t nr, k;

	if (d->tf.nevents != m->nevents) {
		limits_logx(s->uid, "session %u: provider %s announces %u "
		    "events and describes %zu", s->id, d->name, m->nevents,
		    d->tf.nevents);
		goto fail;
	}
	if (!state_session_provider_ok(s, m->index, m->nevents)) {
		limits_logx(s->uid, "session %u: provider %s: its process's "
		    "rules were sent for a provider of another size", s->id,
		    d->name);
		goto fail;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL)
		goto fail;
	p->d = d;
	p->index = m->index;
	p->id_base = m->id_base;
	p->nevents = m->nevents;
	p->cls = s->nclasses;
	snprintf(p->name, sizeof(p->name), "%s", d->name);
	/*
	 * The state memfd is the process's: sealed against shrinking, so
	 * that our stores into it can never fault, and writable.  F_SEAL_
	 * WRITE (the description's memfd passed twice, say) fails the
	 * mapping.
	 */
	p->state_size = ((size_t)m->nevents + 4095) / 4096 * 4096;
	if (p->state_size > 0) {
		if (client_check_fd(state_fd, p->state_size, F_SEAL_SHRINK,
		    &why) == -1) {
			limits_logx(s->uid, "session %u: provider %s: state "
			    "array: %s", s->id, p->name, why);
			goto fail_p;
		}
		p->state = mmap(NULL, p->state_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, state_fd, 0);
		if (p->state == MAP_FAILED) {
			p->state = NULL;
			limits_logx(s->uid, "session %u: provider %s: cannot "
			    "map its state array writable: %s", s->id,
			    p->name, strerror(errno));
			goto fail_p;
		}
	}

	/* A new table, one range longer. */
	nr = s->feed.newest != NULL ? s->feed.newest->nranges : 0;
	et = calloc(1, sizeof(*et) + (nr + 1) * sizeof(et->ranges[0]));
	p->fixed = calloc(m->nevents + 1, sizeof(*p->fixed));
	np = reallocarray(s->provs, s->nprovs + 1, sizeof(*np));
	if (et == NULL || p->fixed == NULL || np == NULL) {
		free(p->fixed);
		free(et);
		if (np != NULL)
			s->provs = np;
		if (p->state != NULL)
			munmap(p->state, p->state_size);
		goto fail_p;
	}
	s->provs = np;
	for (k = 0; k < m->nevents; k++) {
		const struct tevents_event *ev = &d->tf.events[k];
		uint32_t a, size = TRACED_REC_HDR_SIZE;

		/* Integers only: their record has one possible size. */
		for (a = 0; a < ev->nargs && size != 0; a++)
			size = ev->args[a].cls == TEVENTS_STRING ? 0 :
			    size + 8;
		p->fixed[k] = size;
	}
	if (nr > 0)
		memcpy(et->ranges, s->feed.newest->ranges,
		    nr * sizeof(et->ranges[0]));
	et->ranges[nr].first = m->id_base - TRACED_EVENT_ID_BASE;
	et->ranges[nr].n = m->nevents;
	et->ranges[nr].cls = p->cls;
	et->ranges[nr].ev = d->tf.events;
	et->ranges[nr].fixed = p->fixed;
	et->nranges = nr + 1;
	et->nclasses = p->cls + m->nevents;
	/*
	 * The drain thread may still walk with the old table: it stays.
	 * This one is what tells it that the new provider's events are
	 * to wait for their metadata, not refused (drain.c).
	 */
	et->older = s->feed.newest;
	__atomic_store_n(&s->feed.newest, et, __ATOMIC_RELEASE);
	s->provs[s->nprovs++] = p;
	s->nclasses += m->nevents;
	s->next_prov = m->index + 1;
	s->next_id = m->id_base + m->nevents;

	session_update_state(s);
	/*
	 * The directory comes with the first ring (the thread's first
	 * enabled event): a run that recorded nothing leaves nothing
	 * (issue 29).  Once there, the new provider is appended to its
	 * metadata, on the files thread.
	 */
	if (s->dirfd != -1)
		session_meta_want(s);
	session_provider_ack(s, m->index, 0);
	log_debug("session %u: provider %s, %u events", s->id, p->name,
	    p->nevents);
	return 0;
fail_p:
	free(p);
fail:
	pdesc_put(d);
	limits_put(s->uid, LIMIT_EVENT_IDS, m->nevents, 0);
	return -1;
}

/*
 * A description to parse, on the intake thread; meanwhile the session's
 * socket is not read, so its messages keep their order.
 */
struct parse_job {
	struct intake_job j;
	struct session	*s;		/* kept: s->intake_out */
	struct traced_msg_provider m;
	char		 name[TRACED_NAME_MAX];
	char		 fname[128];
	void		*desc;		/* mapped, desc_len bytes */
	size_t		 desc_len;
	int		 state_fd;	/* dup'ed */
	struct pdesc	*d;		/* result, not shared yet */
	uint64_t	 queued;	/* ns, CLOCK_MONOTONIC */
	char		 err[512];
};

/*
 * A program waits this long for the answer to its provider (libtraced's
 * TRACED_CONNECT_TIMEOUT_MS default), then goes on with its events off
 * until the answer comes: what it emitted meanwhile is not recorded,
 * and no one can count it.  An answer later than that is said.
 */
#define PROVIDER_ANSWER_NS	(200ull * 1000000u)

static void
parse_work(struct intake_job *j)
{
	struct parse_job *pj = (struct parse_job *)j;

	pj->d = pdesc_parse(pj->s->uid, pj->name, pj->desc != NULL ?
	    pj->desc : "", pj->desc_len, pj->fname, pj->err,
	    sizeof(pj->err));
}

static void
parse_done(struct intake_job *j)
{
	struct parse_job *pj = (struct parse_job *)j;
	struct session *s = pj->s;
	struct pdesc *d = pj->d;
	char err[512];

	if (pj->desc != NULL)
		munmap(pj->desc, pj->desc_len);
	s->intake_out--;
	if (s->fd == -1) {
		/* Gone meanwhile (or the daemon stops). */
		pdesc_free(d);
		limits_put(s->uid, LIMIT_EVENT_IDS, pj->m.nevents, 0);
	} else if (d == NULL) {
		limits_logx(s->uid, "session %u: %s[%d]: bad provider "
		    "description: %s; disconnecting it", s->id, s->comm,
		    (int)s->pid, pj->err);
		limits_put(s->uid, LIMIT_EVENT_IDS, pj->m.nevents, 0);
		s->how = "disconnected";
	} else if ((d = pdesc_adopt(d, err, sizeof(err))) == NULL) {
		limits_put(s->uid, LIMIT_EVENT_IDS, pj->m.nevents, 0);
		session_provider_refuse(s, &pj->m, pj->name, pj->state_fd, err);
	} else if (session_provider_add(s, &pj->m, d, pj->state_fd) == -1)
		s->how = "disconnected";
	else if (now_ns(CLOCK_MONOTONIC) - pj->queued > PROVIDER_ANSWER_NS)
		limits_logx(s->uid, "session %u: %s[%d]: provider %s was "
		    "answered %llu ms after it came, later than the %llu ms "
		    "a program waits by default (then it goes on with its "
		    "events off): events its rules enable that it emitted "
		    "before the answer may not be in the trace, and cannot "
		    "be counted", s->id, s->comm, (int)s->pid, pj->name,
		    (unsigned long long)((now_ns(CLOCK_MONOTONIC) -
		    pj->queued) / 1000000u),
		    (unsigned long long)(PROVIDER_ANSWER_NS / 1000000u));
	close(pj->state_fd);
	session_job_done(s);		/* may free s */
	free(pj);
}

/*
 * PROVIDER m, its description on fd and its state array on state_fd:
 * add it, refuse it for a limit, or parse it first (the session's next
 * messages wait).  0, or -1 when the client is to be disconnected
 * (logged).
 */
int
provider_msg(struct session *s, const struct traced_msg_provider *m,
    int fd, int state_fd)
{
	struct parse_job *pj;
	struct pdesc *d;
	const char *why = NULL;
	char err[512], name[TRACED_NAME_MAX];
	uint64_t held, cost;
	void *desc;

	memcpy(name, m->name, sizeof(name));
	name[sizeof(name) - 1] = '\0';
	/* Gaps are a provider unloaded before this connection. */
	if (!s->welcomed || m->index < s->next_prov ||
	    m->id_base < s->next_id || m->id_base > TRACED_EVENT_ID_MAX ||
	    m->nevents > TRACED_EVENT_ID_MAX - m->id_base) {
		limits_logx(s->uid, "session %u: provider %s out of order: "
		    "number %u, event ids from %u; expected at least %u and "
		    "%u, and %u events below id %u", s->id, name, m->index,
		    m->id_base, s->next_prov, s->next_id, m->nevents,
		    TRACED_EVENT_ID_MAX);
		return -1;
	}
	if (pdesc_precheck(name, m->desc_size, err, sizeof(err)) == -1 ||
	    client_check_fd(fd, m->desc_size, F_SEAL_SHRINK | F_SEAL_WRITE,
	    &why) == -1) {
		limits_logx(s->uid, "session %u: provider %s: %s", s->id, name,
		    why != NULL ? why : err);
		return -1;
	}
	/* Limits: a refusal keeps the session and its other providers. */
	if (s->nprovs >= cfg.limit[LIMIT_PROVIDERS]) {
		snprintf(err, sizeof(err), "session %u has %u providers, its "
		    "%s limit (raise it in traced.conf(5))", s->id, s->nprovs,
		    config_limit_name(LIMIT_PROVIDERS));
		session_provider_refuse(s, m, name, state_fd, err);
		return 0;
	}
	/*
	 * A session describes at most events-per-session events (what a
	 * reader spends on its metadata grows faster than that), and its
	 * ids span no more: one id of 2^24 - 1 is refused, a gap (a
	 * plugin unloaded) within the span costs nothing.
	 */
	if ((uint64_t)s->nclasses + m->nevents >
	    cfg.limit[LIMIT_SESSION_EVENTS] ||
	    (uint64_t)m->id_base + m->nevents - TRACED_EVENT_ID_BASE >
	    cfg.limit[LIMIT_SESSION_EVENTS]) {
		snprintf(err, sizeof(err), "session %u would describe %llu "
		    "events with ids up to %u, past its %s limit (%llu; raise "
		    "it in traced.conf(5))", s->id,
		    (unsigned long long)s->nclasses + m->nevents,
		    m->id_base + m->nevents - 1,
		    config_limit_name(LIMIT_SESSION_EVENTS),
		    (unsigned long long)cfg.limit[LIMIT_SESSION_EVENTS]);
		session_provider_refuse(s, m, name, state_fd, err);
		return 0;
	}
	if (limits_take(s->uid, LIMIT_EVENT_IDS, m->nevents, 0, err,
	    sizeof(err)) == -1) {
		session_provider_refuse(s, m, name, state_fd, err);
		return 0;
	}
	desc = m->desc_size > 0 ? mmap(NULL, m->desc_size, PROT_READ,
	    MAP_SHARED, fd, 0) : NULL;
	if (desc == MAP_FAILED) {
		log_warn("session %u: mapping a provider", s->id);
		limits_put(s->uid, LIMIT_EVENT_IDS, m->nevents, 0);
		return -1;
	}
	/* Described before by this uid: shared, no parsing. */
	if ((d = pdesc_lookup(s->uid, name, desc != NULL ? desc : "",
	    m->desc_size)) != NULL) {
		if (desc != NULL)
			munmap(desc, m->desc_size);
		return session_provider_add(s, m, d, state_fd);
	}
	/* Refused before the cost of parsing if it could not fit. */
	held = limits_held(s->uid, LIMIT_EVENT_CLASSES);
	cost = m->nevents > 0 ? m->nevents : 1;
	if (held + cost > cfg.limit[LIMIT_EVENT_CLASSES]) {
		if (desc != NULL)
			munmap(desc, m->desc_size);
		limits_put(s->uid, LIMIT_EVENT_IDS, m->nevents, 0);
		snprintf(err, sizeof(err), "uid %u holds %llu of its %s limit "
		    "(%llu), and this provider describes %u more (raise it "
		    "in traced.conf(5))", (unsigned)s->uid,
		    (unsigned long long)held,
		    config_limit_name(LIMIT_EVENT_CLASSES),
		    (unsigned long long)cfg.limit[LIMIT_EVENT_CLASSES],
		    m->nevents);
		session_provider_refuse(s, m, name, state_fd, err);
		return 0;
	}
	if ((pj = calloc(1, sizeof(*pj))) == NULL ||
	    (pj->state_fd = fcntl(state_fd, F_DUPFD_CLOEXEC, 0)) == -1) {
		free(pj);
		if (desc != NULL)
			munmap(desc, m->desc_size);
		limits_put(s->uid, LIMIT_EVENT_IDS, m->nevents, 0);
		return -1;
	}
	pj->s = s;
	pj->m = *m;
	memcpy(pj->name, name, sizeof(pj->name));
	snprintf(pj->fname, sizeof(pj->fname), "%s[%d]:%s", s->comm,
	    (int)s->pid, name);
	pj->desc = desc;
	pj->desc_len = m->desc_size;
	pj->queued = now_ns(CLOCK_MONOTONIC);
	pj->j.work = parse_work;
	pj->j.done = parse_done;
	pj->j.uid = s->uid;
	s->intake_out++;
	event_del(s->ev);	/* its next messages wait for this one */
	intake_submit(&pj->j);
	return 0;
}

/*
 * Let go of every provider of s: their state mappings, descriptions,
 * charges and the event tables (no thread reads them any more).
 */
void
provider_free_all(struct session *s)
{
	uint32_t i;

	for (i = 0; i < s->nprovs; i++) {
		if (s->provs[i]->state != NULL)
			munmap(s->provs[i]->state, s->provs[i]->state_size);
		limits_put(s->uid, LIMIT_EVENT_IDS, s->provs[i]->nevents, 0);
		pdesc_put(s->provs[i]->d);
		free(s->provs[i]->fixed);
		free(s->provs[i]);
	}
	free(s->provs);
	s->provs = NULL;
	s->nprovs = 0;
	evtab_free(s->feed.newest);
	s->feed.newest = s->feed.tab = NULL;
}
