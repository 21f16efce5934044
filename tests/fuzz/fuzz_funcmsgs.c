/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * libFuzzer target: sequences of a process's function-tracing messages
 * (MODULE, FUNCS, TRACER, FUNC_STATS) through the daemon's own code for
 * them, daemon/func.c, with the per-uid accounting of daemon/limits.c
 * (issue 25): each message is built from the input, checked by
 * wire_decode() as the daemon's socket reader does, and handed to
 * func_msg() for one session, until the input ends or the daemon would
 * disconnect the process; then the session is freed.  The rest of the
 * daemon is stubbed below: intake jobs run at once, nothing is written
 * (the session has no directory), nothing is sent.
 *
 * The input is a list of messages, each a kind byte and its fields:
 *
 *   0  MODULE      u8 index, u8 flags, u8 n, n path bytes (NUL added)
 *   1  FUNCS       u8 module, u16 nfuncs, u16 n, n bytes of table
 *                  (a memfd sealed as a process seals it; the state
 *                  memfd sized from nfuncs, or off by the next u8)
 *   2  TRACER      u8 index, u8 flags, 32 name bytes
 *   3  FUNC_STATS  u32 gen
 *   4  rule        u8 kind, u8 on, u8 n, n pattern bytes: a trace-func
 *                  or tracer rule added, applied to the session
 *
 * Oracles: what the uid holds of modules-per-uid is the session's
 * objects kept, and of functions-per-uid its functions (after every
 * message, and 0 after the session is freed); objects are kept in
 * strictly increasing order; no object past modules-per-uid (set low
 * here, 8) is kept; a state byte is 0 or 1, and 0 while trace-file is
 * off.
 */
#include <assert.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <event2/event.h>

#include "daemon/config.h"
#include "daemon/dclock.h"
#include "daemon/func.h"
#include "daemon/index.h"
#include "daemon/intake.h"
#include "daemon/limits.h"
#include "daemon/log.h"
#include "daemon/outdir.h"
#include "daemon/session.h"
#include "functab.h"
#include "wire.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_UID		1000
#define FZ_MODULES	8	/* modules-per-uid, low */
#define FZ_FUNCTIONS	4096	/* functions-per-uid */

/* ---- the rest of the daemon, stubbed ------------------------------- */

struct session_list sessions = TAILQ_HEAD_INITIALIZER(sessions);
static int fz_paused;

void log_debug(const char *fmt, ...) { (void)fmt; }
void log_info(const char *fmt, ...) { (void)fmt; }
void log_warn(const char *fmt, ...) { (void)fmt; }
void log_warnx(const char *fmt, ...) { (void)fmt; }
void fatal(const char *fmt, ...) { (void)fmt; abort(); }
void fatalx(const char *fmt, ...) { (void)fmt; abort(); }

uint64_t
now_ns(int clock)
{
	(void)clock;
	return 1000000000u;
}

const struct dclock *
dclock_get(int which)
{
	static struct dclock c = { .freq = 1000000000u };

	(void)which;
	return &c;
}

int
outdir_paused(void)
{
	return fz_paused;
}

void client_changed(void) { }
void session_send(struct session *s, const void *m, size_t n)
{
	(void)s;
	(void)m;
	(void)n;
}
void session_job_done(struct session *s) { (void)s; }
void session_check_done(struct session *s) { (void)s; }
int session_ensure_dir(struct session *s) { (void)s; return 0; }
int event_del(struct event *ev) { (void)ev; return 0; }

int
client_check_fd(int fd, size_t size, int need_seals, const char **why)
{
	off_t end = lseek(fd, 0, SEEK_END);
	int seals = fcntl(fd, F_GET_SEALS);

	if (end < 0 || (size_t)end < size || seals == -1 ||
	    (seals & need_seals) != need_seals) {
		*why = "bad memfd";
		return -1;
	}
	return 0;
}

int
index_func_rules_load(const char *kind, struct rule **rules, size_t *n)
{
	(void)kind;
	*rules = NULL;
	*n = 0;
	return 0;
}

int
index_func_rules_save(const char *kind, const struct rule *rules, size_t n)
{
	(void)kind;
	(void)rules;
	(void)n;
	return 0;
}

/* Intake jobs run at once, on this thread. */
void
intake_submit(struct intake_job *j)
{
	j->work(j);
	j->done(j);
}

int
intake_accepting(void)
{
	return 1;
}

void
intake_close(int fd, uid_t uid)
{
	(void)uid;
	if (fd != -1)
		close(fd);
}

/* ---- messages from the input ----------------------------------------- */

struct in {
	const uint8_t	*p;
	size_t		 left;
};

static int
take(struct in *in, void *out, size_t n)
{
	if (in->left < n)
		return -1;
	memcpy(out, in->p, n);
	in->p += n;
	in->left -= n;
	return 0;
}

static int
memfd_of(const void *text, size_t len, size_t size, int seals)
{
	int fd = memfd_create("fz", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd == -1)
		return -1;
	if (ftruncate(fd, (off_t)size) == -1 ||
	    (len > 0 && pwrite(fd, text, len, 0) != (ssize_t)len) ||
	    fcntl(fd, F_ADD_SEALS, seals) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The session's books against the uid's: the oracles. */
static void
check(const struct session *s)
{
	const struct sfunc *fn = s->fn;
	uint64_t funcs = 0;
	uint32_t i;
	size_t k;

	if (fn == NULL) {
		assert(limits_held(FZ_UID, LIMIT_MODULES) == 0);
		return;
	}
	assert(limits_held(FZ_UID, LIMIT_MODULES) == fn->nmods);
	assert(fn->nmods <= FZ_MODULES);
	for (i = 0; i < fn->nmods; i++) {
		const struct smodule *md = fn->mods[i];

		assert(i == 0 || fn->mods[i - 1]->index < md->index);
		assert(md->index < fn->next_mod);
		if (!md->has_funcs)
			continue;
		funcs += md->tab.n;
		for (k = 0; k < md->tab.n; k++) {
			assert(md->state[k] <= 1);
			assert(!fz_paused || md->state[k] == 0);
		}
	}
	assert(funcs == fn->funcs);
	assert(limits_held(FZ_UID, LIMIT_FUNCTIONS) == fn->funcs);
}

/*
 * One message from the input, through wire_decode() and func_msg().
 * 0, 1 at the input's end, or -1 if the daemon would disconnect.
 */
static int
one(struct session *s, struct in *in)
{
	_Alignas(8) uint8_t buf[TRACED_MSG_MAX];
	struct traced_msg_hdr *h = (void *)buf;
	int fds[2] = { -1, -1 }, nfds = 0, rc;
	struct wire_msg m;
	const char *why;
	uint8_t kind, b[4];
	size_t len = 0;

	if (take(in, &kind, 1) == -1)
		return 1;
	memset(buf, 0, sizeof(buf));
	switch (kind % 5) {
	case 0: {
		struct traced_msg_module *mo = (void *)buf;
		uint8_t n;

		if (take(in, b, 2) == -1 || take(in, &n, 1) == -1 ||
		    take(in, buf + sizeof(*mo), n) == -1)
			return 1;
		mo->index = b[0];
		mo->flags = b[1] & 1 ? TRACED_MODULE_FUNCS : 0;
		mo->end = 0x1000;
		len = sizeof(*mo) + n + 1;
		wire_hdr_init(h, TRACED_MSG_MODULE, (uint32_t)len);
		break;
	}
	case 1: {
		struct traced_msg_funcs *f = (void *)buf;
		uint16_t nf, n;
		uint8_t text[65536], off = 0;

		if (take(in, b, 1) == -1 || take(in, &nf, 2) == -1 ||
		    take(in, &n, 2) == -1 || take(in, text, n) == -1)
			return 1;
		(void)take(in, &off, 1);
		f->module = b[0];
		f->nfuncs = nf;
		f->desc_size = n;
		f->stats_off = (uint32_t)((nf + 4095u) / 4096u * 4096u);
		if (f->stats_off == 0)
			f->stats_off = 4096;
		f->state_size = f->stats_off + (uint64_t)nf *
		    TRACED_FUNC_STAT_SIZE + (off & 1);
		len = sizeof(*f);
		wire_hdr_init(h, TRACED_MSG_FUNCS, (uint32_t)len);
		fds[0] = memfd_of(text, n, n, F_SEAL_SHRINK | F_SEAL_WRITE);
		fds[1] = memfd_of(NULL, 0, (size_t)f->state_size -
		    (off & 2 ? 1 : 0), F_SEAL_SHRINK);
		nfds = 2;
		break;
	}
	case 2: {
		struct traced_msg_tracer *t = (void *)buf;

		if (take(in, b, 2) == -1 || take(in, t->name,
		    sizeof(t->name)) == -1)
			return 1;
		t->index = b[0];
		t->flags = b[1];
		len = sizeof(*t);
		wire_hdr_init(h, TRACED_MSG_TRACER, (uint32_t)len);
		break;
	}
	case 3: {
		struct traced_msg_func_stats *st = (void *)buf;

		if (take(in, &st->gen, 4) == -1)
			return 1;
		len = sizeof(*st);
		wire_hdr_init(h, TRACED_MSG_FUNC_STATS, (uint32_t)len);
		break;
	}
	default: {
		char pattern[257];
		uint8_t n;

		if (take(in, b, 2) == -1 || take(in, &n, 1) == -1 ||
		    take(in, pattern, n) == -1)
			return 1;
		pattern[n] = '\0';
		if (strlen(pattern) == 0 || b[1] & 2)
			fz_paused = !fz_paused;
		else
			(void)func_rule_add(b[0] & 1, pattern, b[1] & 1);
		(void)func_session_apply(s, 0);
		return 0;
	}
	}
	rc = wire_decode(buf, len, nfds, &m, &why);
	if (rc == 0)
		rc = func_msg(s, &m, fds);
	if (fds[0] != -1)
		close(fds[0]);
	if (fds[1] != -1)
		close(fds[1]);
	return rc == 0 ? 0 : -1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	struct session *s;
	struct in in = { data, size };
	size_t k;
	int rc;

	if (!init) {
		config_defaults(&cfg, 1);
		cfg.limit[LIMIT_MODULES] = FZ_MODULES;
		cfg.limit[LIMIT_FUNCTIONS] = FZ_FUNCTIONS;
		limits_init();
		init = 1;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return 0;
	s->id = 1;
	s->uid = FZ_UID;
	s->fd = 3;		/* a live connection, never used */
	s->dirfd = -1;
	s->welcomed = 1;
	snprintf(s->comm, sizeof(s->comm), "fz");
	TAILQ_INSERT_TAIL(&sessions, s, entry);
	while ((rc = one(s, &in)) == 0)
		check(s);
	func_session_free(s);
	check(s);
	TAILQ_REMOVE(&sessions, s, entry);
	free(s);
	/* Rules and trace-file are the daemon's, not the session's:
	 * each input starts without them. */
	for (k = 0; k < 2; k++)
		func_rules_clear((int)k);
	fz_paused = 0;
	return 0;
}
