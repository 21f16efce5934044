/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Function tracing, the daemon's side: for each session, the objects
 * its process has loaded (MODULE), the table and state of each
 * instrumented one (FUNCS), its tracers (TRACER) and counters
 * (FUNC_STATS); the rules that say which functions are traced
 * (trace-func) and which tracers run (tracer); and FUNC_APPLY, which
 * tells a process that its state bytes or the tracer rules changed.
 *
 * Rules work like the event rules (state.c): globs, in order, the last
 * match wins; a function pattern with a ':' matches "object:function"
 * (the object's file name), one without the function name; functions
 * are off unless a rule turns them on, and all off while trace-file is
 * off.  A tracer with no rule stays as its program set it.  The rules
 * are kept in the index (func_rules), so processes started later and a
 * restarted daemon see them.
 *
 * Each session directory gets functions/module-<N> for every object
 * (proto/functab.h): the mapping, the build id and the function table,
 * so that tracectl names addresses with no process and no binary left.
 *
 * Everything from the process is checked: message order, memfd seals
 * and sizes, the table (functab_parse()); a bad one disconnects it.
 * Loop thread only.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "dclock.h"
#include "func.h"
#include "index.h"
#include "intake.h"
#include "limits.h"
#include "log.h"
#include "outdir.h"
#include "rule.h"
#include "session.h"
#include "text.h"

static struct rule *rules[2];
static size_t nrules[2];
static int rules_loaded;
static const char *const kind_names[2] = { "func", "tracer" };

static int	func_module_apply(struct smodule *md);
static int	func_send_apply(struct session *s, int changed);

static void
func_rules_load(void)
{
	int k;

	if (rules_loaded)
		return;
	rules_loaded = 1;
	for (k = 0; k < 2; k++)
		(void)index_func_rules_load(kind_names[k], &rules[k],
		    &nrules[k]);
}

const struct rule *
func_rules(int kind, size_t *n)
{
	func_rules_load();
	*n = nrules[kind];
	return rules[kind];
}

/*
 * Does 'pattern' match function 'name' of object m?  With a ':' it is
 * matched against "<object file name>:<name>".
 */
int
func_name_match(const char *pattern, const struct smodule *m,
    const char *name)
{
	return rule_match(pattern, m->base_name, name);
}

/* Is this function traced by the rules?  (trace-file aside) */
static int
func_on(const struct smodule *m, const char *name)
{
	size_t k = RULE_LAST(rules[FUNC_RULE_FUNC], nrules[FUNC_RULE_FUNC],
	    pattern, m->base_name, name);

	return k > 0 && rules[FUNC_RULE_FUNC][k - 1].on;
}

/* Does a rule decide tracer 'name'?  1 and *on, or 0. */
static int
tracer_rule(const char *name, int *on)
{
	size_t k = RULE_LAST(rules[FUNC_RULE_TRACER], nrules[FUNC_RULE_TRACER],
	    pattern, NULL, name);

	if (k == 0)
		return 0;
	*on = rules[FUNC_RULE_TRACER][k - 1].on;
	return 1;
}

/*
 * Add a rule (a pattern given again moves to the end), save the list,
 * and apply it to every session.  0, or -1 if it could not be saved (it
 * applies all the same).
 */
int
func_rule_add(int kind, const char *pattern, int on)
{
	struct rule *nr;
	size_t i, *n = &nrules[kind];
	char *p;

	func_rules_load();
	if ((p = strdup(pattern)) == NULL)
		return -1;
	for (i = 0; i < *n; i++)
		if (strcmp(rules[kind][i].pattern, pattern) == 0) {
			free(rules[kind][i].pattern);
			memmove(&rules[kind][i], &rules[kind][i + 1],
			    (*n - i - 1) * sizeof(**rules));
			(*n)--;
			break;
		}
	nr = reallocarray(rules[kind], *n + 1, sizeof(*nr));
	if (nr == NULL) {
		free(p);
		return -1;
	}
	rules[kind] = nr;
	nr[*n].pattern = p;
	nr[*n].on = on;
	(*n)++;
	func_apply_all();
	return index_func_rules_save(kind_names[kind], rules[kind], *n);
}

/*
 * Remove the rule of 'pattern' (trace-func/tracer PATTERN delete), save
 * the list and apply it.  1 if there was one, 0 if not, -1 if it could
 * not be saved (it is gone all the same).
 */
int
func_rule_delete(int kind, const char *pattern)
{
	size_t i, *n = &nrules[kind];

	func_rules_load();
	for (i = 0; i < *n; i++)
		if (strcmp(rules[kind][i].pattern, pattern) == 0)
			break;
	if (i == *n)
		return 0;
	free(rules[kind][i].pattern);
	memmove(&rules[kind][i], &rules[kind][i + 1],
	    (*n - i - 1) * sizeof(**rules));
	(*n)--;
	func_apply_all();
	return index_func_rules_save(kind_names[kind], rules[kind], *n) ==
	    -1 ? -1 : 1;
}

/*
 * Remove every rule of a kind (trace-func/tracer reset), save and apply.
 * The number removed, or -1 if that could not be saved.
 */
int
func_rules_reset(int kind)
{
	size_t n;

	func_rules_load();
	n = nrules[kind];
	func_rules_clear(kind);
	func_apply_all();
	return index_func_rules_save(kind_names[kind], NULL, 0) == -1 ? -1 :
	    (int)n;
}

/* Forget every rule of a kind (not saved: the caller saves, if it
 * means to).  Loop thread. */
void
func_rules_clear(int kind)
{
	func_rules_load();
	while (nrules[kind] > 0)
		free(rules[kind][--nrules[kind]].pattern);
	free(rules[kind]);
	rules[kind] = NULL;
}

/* ---- clocks ----------------------------------------------------------- */

uint64_t
func_ticks_ns(const struct session *s, uint64_t ticks)
{
	uint64_t f = dclock_get(s->clock)->freq;

	if (f == 0 || f == 1000000000u)
		return ticks;
	return (uint64_t)((unsigned __int128)ticks * 1000000000u / f);
}

/* The lower bound of histogram bucket b of a session, in ns. */
uint64_t
func_bucket_ns(const struct session *s, int bucket)
{
	return func_ticks_ns(s, bucket == 0 ? 0 : (uint64_t)1 << bucket);
}

/* ---- the session directory -------------------------------------------- */

/*
 * Write functions/module-<N> for m into session directory 'sdirfd'
 * (named sdir, of session sid, for messages): beside it, then renamed
 * over, made relative to the descriptor and never followed
 * (doc/DESIGN.md section 10), like the metadata.  Any thread: the
 * files thread writes the big ones.  Not fsync()ed: the streams beside
 * it are not either (the page cache writes both out), and an fsync a
 * file made a loaded disk commit its journal for each of thousands of
 * files, which stalled every directory operation, the loop thread's
 * included, for seconds.
 */
static void
func_module_write_at(int sdirfd, uint32_t sid, const char *sdir,
    const struct smodule *m)
{
	char name[32], tmp[32], line[FUNCTAB_LINE_MAX + 1];
	int dfd, fd, n;
	size_t i;
	FILE *f;

	if (sdirfd == -1)
		return;
	if (mkdirat(sdirfd, "functions", 0750) == -1 && errno != EEXIST) {
		log_warn("session %u: %s/functions", sid, sdir);
		return;
	}
	dfd = openat(sdirfd, "functions", O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
	if (dfd == -1) {
		log_warn("session %u: %s/functions", sid, sdir);
		return;
	}
	snprintf(name, sizeof(name), "module-%u", m->index);
	snprintf(tmp, sizeof(tmp), ".module-%u.tmp", m->index);
	(void)unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0640);
	if (fd == -1 || (f = fdopen(fd, "w")) == NULL) {
		log_warn("session %u: %s/functions/%s", sid, sdir, tmp);
		if (fd != -1)
			close(fd);
		close(dfd);
		return;
	}
	n = functab_module_format(line, sizeof(line), m->index, m->path,
	    m->base, m->start, m->end, m->build_id, m->build_id_len,
	    m->tab.n);
	if (n > 0 && (size_t)n < sizeof(line))
		fputs(line, f);
	else
		fprintf(f, "traced-module 1\n");	/* cut: unreadable */
	for (i = 0; i < m->tab.n; i++)
		if (functab_format_line(line, sizeof(line), m->tab.e[i].start,
		    m->tab.e[i].size, m->tab.e[i].kind, m->tab.e[i].name) > 0)
			fputs(line, f);
	if (fflush(f) == EOF || ferror(f)) {
		log_warn("session %u: writing %s/functions/%s", sid, sdir,
		    tmp);
		fclose(f);
		(void)unlinkat(dfd, tmp, 0);
		close(dfd);
		return;
	}
	fclose(f);
	if (renameat(dfd, tmp, dfd, name) == -1) {
		log_warn("session %u: rename to %s/functions/%s", sid,
		    sdir, name);
		(void)unlinkat(dfd, tmp, 0);
	}
	close(dfd);
}

/*
 * Module files are written on the files thread, with the session's
 * other jobs (a client decides how many: up to modules-per-uid, each
 * then with an fsync; rewriting 491,000 of them on the loop thread after a
 * trace-file set stalled it for over 30 s).  At most
 * FUNC_FILES_PER_JOB files a job, the rest in the next job, which
 * done() queues: other users' jobs take turns with them (intake.c).
 */
#define FUNC_FILES_PER_JOB	16

struct modfiles_job {
	struct intake_job j;
	struct session	*s;		/* kept: s->intake_out */
	struct smodule	*mods;		/* owned array of shallow copies:
					   path and tab are the session's,
					   which outlive the job */
	size_t		 n, next;	/* mods[next..n) are left */
	int		 dirfd;		/* dup of the session's */
	char		*dir;		/* owned, for messages */
	uint32_t	 sid;
	uint32_t	 rotations;	/* fn->rotations when queued */
};

static void
modfiles_free(struct modfiles_job *mj)
{
	intake_close(mj->dirfd, mj->j.uid);	/* maybe deleted */
	free(mj->mods);
	free(mj->dir);
	free(mj);
}

static void
modfiles_work(struct intake_job *j)
{
	struct modfiles_job *mj = (struct modfiles_job *)j;
	size_t end = mj->next + FUNC_FILES_PER_JOB;

	if (end > mj->n)
		end = mj->n;
	for (; mj->next < end; mj->next++)
		func_module_write_at(mj->dirfd, mj->sid, mj->dir,
		    &mj->mods[mj->next]);
}

static void
modfiles_done(struct intake_job *j)
{
	struct modfiles_job *mj = (struct modfiles_job *)j;
	struct session *s = mj->s;

	s->intake_out--;
	/* More, unless the session moved on (a newer job has them), is
	 * ending, or the daemon stops. */
	if (mj->next < mj->n && s->fn != NULL && !s->closing &&
	    s->fn->rotations == mj->rotations && intake_accepting()) {
		s->intake_out++;
		intake_submit(&mj->j);
		return;
	}
	modfiles_free(mj);
	session_check_done(s);		/* may free s */
}

/*
 * Write the module files of mods[0..n) of session s (copies taken:
 * the modules may change meanwhile) in its directory.  Loop thread.
 */
static void
func_modules_write(struct session *s, struct smodule *const *mods, size_t n)
{
	struct modfiles_job *mj;
	size_t i;

	if (n == 0 || s->dirfd == -1 || s->fn == NULL)
		return;
	if ((mj = calloc(1, sizeof(*mj))) == NULL ||
	    (mj->mods = calloc(n, sizeof(*mj->mods))) == NULL ||
	    (mj->dir = strdup(s->dir != NULL ? s->dir : "?")) == NULL ||
	    (mj->dirfd = fcntl(s->dirfd, F_DUPFD_CLOEXEC, 0)) == -1) {
		log_warn("session %u: %s: %zu module files not written",
		    s->id, s->dir != NULL ? s->dir : "?", n);
		if (mj != NULL) {
			free(mj->mods);
			free(mj->dir);
		}
		free(mj);
		return;
	}
	for (i = 0; i < n; i++)
		mj->mods[i] = *mods[i];
	mj->n = n;
	mj->s = s;
	mj->sid = s->id;
	mj->rotations = s->fn->rotations;
	mj->j.work = modfiles_work;
	mj->j.done = modfiles_done;
	mj->j.uid = s->uid;
	mj->j.files = 1;
	s->intake_out++;
	intake_submit(&mj->j);
}

/* trace-file set: the session's objects in its new directory too. */
void
func_session_rotate(struct session *s)
{
	if (s->fn == NULL)
		return;
	s->fn->rotations++;
	func_modules_write(s, s->fn->mods, s->fn->nmods);
}

/* ---- messages --------------------------------------------------------- */

static struct sfunc *
func_get(struct session *s)
{
	if (s->fn == NULL)
		s->fn = calloc(1, sizeof(*s->fn));
	return s->fn;
}

static struct smodule *
func_module(const struct sfunc *fn, uint32_t index)
{
	uint32_t i;

	for (i = 0; i < fn->nmods; i++)
		if (fn->mods[i]->index == index)
			return fn->mods[i];
	return NULL;
}

static int
func_module_msg(struct session *s, const struct wire_msg *m)
{
	const struct traced_msg_module *mo = m->u.module;
	struct sfunc *fn = func_get(s);
	struct smodule *md, **nm;
	const char *slash;
	char err[256];

	if (fn == NULL)
		return -1;
	if (mo->index < fn->next_mod) {
		limits_logx(s->uid, "session %u: module %u out of order",
		    s->id, mo->index);
		return -1;
	}
	/*
	 * Each object costs the daemon its path and a file; over its
	 * uid's limit it is not kept (nor are its functions traced), and
	 * the process keeps its session.
	 */
	if (limits_take(s->uid, LIMIT_MODULES, 1, 0, err, sizeof(err)) ==
	    -1) {
		if (fn->mods_refused++ == 0)
			limits_logx(s->uid, "session %u: %s[%d]: objects from "
			    "module %u on are not kept, nor their functions "
			    "traced: %s", s->id, s->comm, (int)s->pid,
			    mo->index, err);
		fn->next_mod = mo->index + 1;
		return 0;
	}
	md = calloc(1, sizeof(*md));
	nm = reallocarray(fn->mods, fn->nmods + 1, sizeof(*nm));
	if (md == NULL || nm == NULL || (md->path = strdup(m->payload)) ==
	    NULL) {
		free(md);
		if (nm != NULL)
			fn->mods = nm;
		limits_put(s->uid, LIMIT_MODULES, 1, 0);
		return -1;
	}
	fn->mods = nm;
	/* A path is any bytes but NUL: made printable UTF-8 at the door
	 * (module files, the log and uftrace's file names show it; a
	 * newline would write lines of its own into module-N). */
	text_clean(md->path, strlen(md->path));
	md->index = mo->index;
	md->flags = mo->flags;
	md->base = mo->base;
	md->start = mo->start;
	md->end = mo->end;
	md->build_id_len = mo->build_id_len;
	memcpy(md->build_id, mo->build_id, sizeof(md->build_id));
	slash = strrchr(md->path, '/');
	md->base_name = slash != NULL ? slash + 1 : md->path;
	fn->mods[fn->nmods++] = md;
	fn->next_mod = mo->index + 1;
	/* Objects are described only by a process that has some
	 * instrumented: not an empty session. */
	if (session_ensure_dir(s) == -1)
		return -1;
	func_modules_write(s, &md, 1);
	return 0;
}

/*
 * A function table being parsed, on the intake thread (intake.c): its
 * cost is the client's to decide (up to 16 MiB of text).  The session's
 * socket is not read meanwhile, and an instrumented program waits for
 * the answer, so the module file is written afterwards, by a files
 * job (func_modules_write()): a parse never waits for the disk.
 */
struct funcs_job {
	struct intake_job j;
	struct session	*s;		/* kept: s->intake_out */
	struct traced_msg_funcs f;
	struct smodule	 m;		/* a copy: path owned, tab the result */
	void		*desc;		/* mapped, f.desc_size bytes */
	int		 state_fd;	/* dup'ed */
	int		 ok;
	char		 err[256];
};

static void
funcs_work(struct intake_job *j)
{
	struct funcs_job *fj = (struct funcs_job *)j;

	fj->err[0] = '\0';
	if (functab_parse(fj->desc, fj->f.desc_size, fj->f.nfuncs, &fj->m.tab,
	    fj->err, sizeof(fj->err)) == -1)
		return;
	if (fj->m.tab.n != fj->f.nfuncs) {
		snprintf(fj->err, sizeof(fj->err), "%zu functions, %u "
		    "announced", fj->m.tab.n, fj->f.nfuncs);
		functab_free(&fj->m.tab);
		return;
	}
	fj->ok = 1;
}

static void
funcs_done(struct intake_job *j)
{
	struct funcs_job *fj = (struct funcs_job *)j;
	struct session *s = fj->s;
	struct smodule *md;

	munmap(fj->desc, fj->f.desc_size);
	s->intake_out--;
	if (s->fn != NULL)
		s->fn->funcs_done++;	/* told with the next FUNC_APPLY */
	md = s->fn != NULL ? func_module(s->fn, fj->f.module) : NULL;
	if (s->fd == -1 || md == NULL) {
		/* Gone meanwhile (or the daemon stops). */
		functab_free(&fj->m.tab);
		limits_put(s->uid, LIMIT_FUNCTIONS, fj->f.nfuncs, 0);
	} else if (!fj->ok) {
		limits_logx(s->uid, "session %u: %s[%d]: module %u (%s): bad "
		    "function table: %s; disconnecting it", s->id, s->comm,
		    (int)s->pid, fj->f.module, md->path, fj->err);
		limits_put(s->uid, LIMIT_FUNCTIONS, fj->f.nfuncs, 0);
		s->how = "disconnected";
	} else if ((md->state = mmap(NULL, fj->f.state_size,
	    PROT_READ | PROT_WRITE, MAP_SHARED, fj->state_fd, 0)) ==
	    MAP_FAILED) {
		md->state = NULL;
		log_warn("session %u: mapping function state", s->id);
		functab_free(&fj->m.tab);
		limits_put(s->uid, LIMIT_FUNCTIONS, fj->f.nfuncs, 0);
		s->how = "disconnected";
	} else {
		md->tab = fj->m.tab;
		md->state_size = fj->f.state_size;
		md->stats_off = fj->f.stats_off;
		md->has_funcs = 1;
		s->fn->funcs += md->tab.n;
		/* Its module file, in the session's directory now. */
		func_modules_write(s, &md, 1);
		log_debug("session %u: %s: %zu instrumented functions", s->id,
		    md->path, md->tab.n);
		/* Its functions only: the others are as they were. */
		if (s->fd != -1 && !s->closing) {
			func_rules_load();
			(void)func_module_apply(md);
			(void)func_send_apply(s, 1);
		}
	}
	close(fj->state_fd);
	free(fj->m.path);
	free(fj);
	session_job_done(s);		/* may free s */
}

/*
 * A FUNCS refused for a limit: done with all the same, and a FUNC_APPLY
 * says so (its 'funcs'), or a process waiting before main() for every
 * object it has would wait until its timeout.  0.
 */
static int
func_funcs_refused(struct session *s)
{
	s->fn->funcs_done++;
	(void)func_send_apply(s, 1);
	return 0;
}

static int
func_funcs_msg(struct session *s, const struct traced_msg_funcs *f, int dfd,
    int sfd)
{
	struct sfunc *fn = s->fn;
	struct smodule *md;
	struct funcs_job *fj;
	const char *why = NULL;
	char err[256];
	void *desc;

	/* An object not kept (modules-per-uid): its functions neither.
	 * The process hears it is done with (func_funcs_refused()). */
	if (fn != NULL && fn->mods_refused > 0 && f->module < fn->next_mod &&
	    func_module(fn, f->module) == NULL)
		return func_funcs_refused(s);
	if (fn == NULL || (md = func_module(fn, f->module)) == NULL ||
	    !(md->flags & TRACED_MODULE_FUNCS) || md->has_funcs) {
		limits_logx(s->uid, "session %u: functions for module %u, "
		    "which did not announce them", s->id, f->module);
		return -1;
	}
	if (client_check_fd(dfd, f->desc_size, F_SEAL_SHRINK | F_SEAL_WRITE,
	    &why) == -1 || client_check_fd(sfd, f->state_size, F_SEAL_SHRINK,
	    &why) == -1) {
		limits_logx(s->uid, "session %u: module %u: %s", s->id,
		    f->module, why);
		return -1;
	}
	/*
	 * Over its uid's limit the object is left untraced, not the
	 * process disconnected: its state bytes stay zero.
	 */
	if (limits_take(s->uid, LIMIT_FUNCTIONS, f->nfuncs, 0, err,
	    sizeof(err)) == -1) {
		limits_logx(s->uid, "session %u: %s: its functions are not "
		    "traced: %s", s->id, md->path, err);
		return func_funcs_refused(s);
	}
	desc = mmap(NULL, f->desc_size, PROT_READ, MAP_SHARED, dfd, 0);
	fj = calloc(1, sizeof(*fj));
	if (fj != NULL)
		fj->state_fd = -1;
	if (desc == MAP_FAILED || fj == NULL ||
	    (fj->m.path = strdup(md->path)) == NULL ||
	    (fj->state_fd = fcntl(sfd, F_DUPFD_CLOEXEC, 0)) == -1) {
		log_warn("session %u: a function table", s->id);
		if (desc != MAP_FAILED)
			munmap(desc, f->desc_size);
		if (fj != NULL) {
			if (fj->state_fd != -1)
				close(fj->state_fd);
			free(fj->m.path);
		}
		free(fj);
		limits_put(s->uid, LIMIT_FUNCTIONS, f->nfuncs, 0);
		return -1;
	}
	fj->s = s;
	fj->f = *f;
	fj->m.index = md->index;
	fj->m.base = md->base;
	fj->m.start = md->start;
	fj->m.end = md->end;
	memcpy(fj->m.build_id, md->build_id, sizeof(fj->m.build_id));
	fj->m.build_id_len = md->build_id_len;
	fj->desc = desc;
	fj->j.work = funcs_work;
	fj->j.done = funcs_done;
	fj->j.uid = s->uid;
	s->intake_out++;
	event_del(s->ev);	/* its next messages wait for this one */
	intake_submit(&fj->j);
	return 0;
}


/*
 * A function-tracing message of session s (MODULE, FUNCS, TRACER,
 * FUNC_STATS), decoded by wire_decode().  0, or -1: disconnect it.
 */
int
func_msg(struct session *s, const struct wire_msg *m, const int *fds)
{
	struct sfunc *fn;
	struct stracer *t;

	if (!s->welcomed) {
		limits_logx(s->uid, "session %u: function tracing before "
		    "HELLO", s->id);
		return -1;
	}
	switch (m->type) {
	case TRACED_MSG_MODULE:
		return func_module_msg(s, m);
	case TRACED_MSG_FUNCS:
		return func_funcs_msg(s, m->u.funcs, fds[0], fds[1]);
	case TRACED_MSG_TRACER:
		if ((fn = func_get(s)) == NULL)
			return -1;
		t = &fn->tracers[m->u.tracer->index];
		t->present = !(m->u.tracer->flags & TRACED_TRACER_GONE);
		t->flags = m->u.tracer->flags;
		memcpy(t->name, m->u.tracer->name, sizeof(t->name));
		/* The tracer rules only: no function changed (a TRACER
		 * message once went through every function of the
		 * session, 120-240 ms of the loop for a million). */
		func_rules_load();
		if (!s->closing)
			(void)func_send_apply(s, 0);
		return 0;
	case TRACED_MSG_FUNC_STATS:
		if ((fn = func_get(s)) == NULL)
			return -1;
		fn->stats = *m->u.func_stats;
		fn->stats_seen = 1;
		/* It cannot have carried out one we did not send. */
		if (fn->stats.gen <= fn->gen)
			fn->acked = fn->stats.gen;
		client_changed();
		return 0;
	default:
		return -1;
	}
}

/*
 * Bring the state bytes of md's functions in line with the rules (all
 * off while trace-file is off).  1 if one changed.
 */
static int
func_module_apply(struct smodule *md)
{
	int changed = 0;
	size_t k;

	if (!md->has_funcs)
		return 0;
	for (k = 0; k < md->tab.n; k++) {
		uint8_t want = !outdir_paused() &&
		    func_on(md, md->tab.e[k].name);

		if (md->state[k] != want) {
			__atomic_store_n(&md->state[k], want,
			    __ATOMIC_RELAXED);
			changed = 1;
		}
	}
	return changed;
}

/*
 * Send s a FUNC_APPLY if its state bytes changed ('changed') or the
 * tracer rules for its tracers did.  1 if one was sent.
 */
static int
func_send_apply(struct session *s, int changed)
{
	struct traced_msg_func_apply a;
	struct sfunc *fn = s->fn;
	uint32_t i, set = 0, on = 0;
	int o;

	for (i = 0; i < TRACED_TRACERS_MAX; i++)
		if (fn->tracers[i].present &&
		    tracer_rule(fn->tracers[i].name, &o)) {
			set |= 1u << i;
			if (o)
				on |= 1u << i;
		}
	if (set == fn->sent_set && on == fn->sent_on && !changed)
		return 0;
	memset(&a, 0, sizeof(a));
	wire_hdr_init(&a.hdr, TRACED_MSG_FUNC_APPLY, sizeof(a));
	a.gen = ++fn->gen;
	a.tracer_set = set;
	a.tracer_on = on;
	a.funcs = fn->funcs_done;
	fn->sent_set = set;
	fn->sent_on = on;
	session_send(s, &a, sizeof(a));
	return 1;
}

/*
 * Bring the session's state bytes in line with the rules (all off while
 * trace-file is off) and, if they or the tracer rules changed (or
 * 'force'), send a FUNC_APPLY.  Returns 1 if one was sent.  Goes
 * through every function of the session: for a rule or trace-file
 * change, not for what one message of a client says.
 */
int
func_session_apply(struct session *s, int force)
{
	struct sfunc *fn = s->fn;
	int changed = force;
	uint32_t i;

	if (fn == NULL || s->fd == -1 || s->closing)
		return 0;
	func_rules_load();
	for (i = 0; i < fn->nmods; i++)
		if (func_module_apply(fn->mods[i]))
			changed = 1;
	return func_send_apply(s, changed);
}

/* Rules or trace-file changed: every session. */
void
func_apply_all(void)
{
	struct session *s;

	TAILQ_FOREACH(s, &sessions, entry)
		(void)func_session_apply(s, 0);
}

void
func_session_free(struct session *s)
{
	struct sfunc *fn = s->fn;
	uint32_t i;

	if (fn == NULL)
		return;
	for (i = 0; i < fn->nmods; i++) {
		struct smodule *md = fn->mods[i];

		if (md->state != NULL)
			munmap(md->state, md->state_size);
		functab_free(&md->tab);
		free(md->path);
		free(md);
	}
	limits_put(s->uid, LIMIT_FUNCTIONS, fn->funcs, 0);
	limits_put(s->uid, LIMIT_MODULES, fn->nmods, 0);
	free(fn->mods);
	free(fn);
	s->fn = NULL;
}
