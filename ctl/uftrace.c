/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Writing a uftrace.data directory (ctl/uftrace.h) as uftrace 0.13
 * reads it (shared/formats/uftrace.md):
 *
 *   info          40-byte header, then exename, build_id, exit_status,
 *                 cmdline, taskinfo, record_date and elapsed_time lines,
 *                 in the order of their bits (from the session's
 *                 traced/process file, which the daemon writes when it ends:
 *                 without it, the executable stands for the command
 *                 line, and the exit status and times are left out)
 *   task.txt      a SESS line per session, a TASK line per thread, by
 *                 time, each no later than its first record
 *   sid-SID.map   per session: its objects with functions, as
 *                 /proc/PID/maps lines, and the [stack] line uftrace
 *                 splits user from kernel addresses with
 *   NAME.sym      per object: "<hex offset from its map start> T name"
 *                 (the 3-column layout 0.13 reads), then __sym_end
 *   TID.dat       per thread: 16-byte records, time and one word of
 *                 type, magic, depth and address
 *   events.txt    "EVENT: <id> provider:event" for the other events
 *
 * Depths: a record's depth is how many calls are open in the thread's
 * file, so that uftrace always sees calls nested.  An exit that closes
 * a call deeper than the innermost open one closes those in between
 * first; an exit of a call the thread's file never saw begin (a fork()ed
 * child's inherited calls, or an entry lost) is left out; an entry at a
 * depth traced recorded as no deeper than an open call closes that call
 * first (its exit was lost).  Losses are LOST records.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calls.h"
#include "functab.h"
#include "tracedir.h"
#include "uftrace.h"

#define UF_MAGIC	5		/* RECORD_MAGIC_V4 */
#define UF_ENTRY	0
#define UF_EXIT		1
#define UF_LOST		2
#define UF_EVENT	3
#define UF_DEPTH_MAX	1023		/* 10 bits */
#define UF_ADDR_MASK	UINT64_C(0xffffffffffff)
#define UF_EVENT_BASE	1000000		/* EVENT_ID_USER */

/* uftrace.h's feat_mask and info_mask bits. */
#define UF_FEAT_TASK_SESSION	(1u << 1)
#define UF_FEAT_SYM_REL_ADDR	(1u << 5)
#define UF_FEAT_MAX_STACK	(1u << 6)
#define UF_FEAT_EVENT		(1u << 7)
#define UF_INFO_EXE_NAME	(1u << 0)
#define UF_INFO_BUILD_ID	(1u << 1)
#define UF_INFO_EXIT_STATUS	(1u << 2)
#define UF_INFO_CMDLINE		(1u << 3)
#define UF_INFO_TASKINFO	(1u << 7)
#define UF_INFO_RECORD_DATE	(1u << 11)
#define UF_PROCESS_MAX		(64u << 10)	/* bytes of 'process' */

struct uf_frame {
	uint64_t	 addr;
	uint64_t	 depth;		/* as traced recorded it */
};

struct uf_thread {
	int		 set;
	size_t		 sess;
	uint64_t	 tid;
	FILE		*dat;		/* opened at its first record */
	int		 skip;		/* its file cannot be written */
	int64_t		 first_ns;
	struct uf_frame	*stack;		/* owned */
	size_t		 n, cap;
	uint64_t	 dropped;	/* exits of calls it never saw begin */
};

struct uf_session {
	int		 set;
	char		*path;		/* owned */
	char		*comm;		/* owned */
	int64_t		 pid;
	int64_t		 number;
	char		 sid[17];
	struct functab_module *mods;	/* owned */
	size_t		 nmods;
	int64_t		 first_ns;	/* 0: no record */
	/* From its 'process' file, if any. */
	char		*cmdline;	/* owned; NULL: none */
	int64_t		 started_ns;	/* 0: not said */
	int64_t		 ended_ns;
	int		 has_exit;
	int		 exit_status;
};

struct uftrace {
	int		 dirfd;		/* borrowed */
	uftrace_error_cb cb;
	void		*arg;
	struct uf_session *sess;	/* owned, by index */
	size_t		 nsess;
	struct uf_thread *thr;		/* owned, by index */
	size_t		 nthr;
	char		**events;	/* owned: names, id UF_EVENT_BASE + i */
	size_t		 nevents;
	int		 failed;
};

static void	uf_error(struct uftrace *w, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));

static void
uf_error(struct uftrace *w, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	w->failed = 1;
	if (w->cb != NULL)
		w->cb(w->arg, msg);
}

struct uftrace *
uftrace_new(int dirfd, uftrace_error_cb cb, void *arg)
{
	struct uftrace *w = calloc(1, sizeof(*w));

	if (w == NULL)
		return NULL;
	w->dirfd = dirfd;
	w->cb = cb;
	w->arg = arg;
	return w;
}

/* Make room for index i in an array of n elements of 'size' bytes. */
static int
uf_grow(void **a, size_t *n, size_t i, size_t size)
{
	size_t cap = *n ? *n : 8;
	char *na;

	if (i < *n)
		return 0;
	while (cap <= i)
		cap *= 2;
	if ((na = realloc(*a, cap * size)) == NULL)
		return -1;
	memset(na + *n * size, 0, (cap - *n) * size);
	*a = na;
	*n = cap;
	return 0;
}

/* Problems reading a session's functions/ files. */
static void
uf_say(void *arg, const char *msg)
{
	uf_error(arg, "%s", msg);
}

/*
 * The session's traced/process file (daemon/record.c): the command line,
 * start, end and exit status, each kept only if it reads right.  A
 * missing or unreadable file leaves them unknown, silently: traces
 * from before the file existed, or of a killed daemon, have none.
 */
static void
uf_load_process(struct uf_session *s)
{
	char		 path[4200], err[128], *line, *next, *v, *end;
	uint8_t		*data;
	size_t		 len;
	long long	 n;

	snprintf(path, sizeof(path), "%s/traced/process", s->path);
	if (tracedir_read_file(path, UF_PROCESS_MAX, &data, &len, err,
	    sizeof(err)) == -1)
		return;
	if (strncmp((char *)data, "traced-process 1\n", 17) != 0) {
		free(data);
		return;
	}
	for (line = (char *)data; line != NULL && *line != '\0';
	    line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if ((v = strchr(line, ' ')) == NULL)
			continue;
		*v++ = '\0';
		if (strcmp(line, "cmdline") == 0 && s->cmdline == NULL)
			s->cmdline = strdup(v);
		else if (strcmp(line, "started_ns") == 0 ||
		    strcmp(line, "ended_ns") == 0 ||
		    strcmp(line, "exit_status") == 0) {
			errno = 0;
			n = strtoll(v, &end, 10);
			if (errno != 0 || end == v || *end != '\0')
				continue;
			if (line[0] == 's' && n > 0)
				s->started_ns = n;
			else if (line[0] == 'e' && line[1] == 'n' && n > 0)
				s->ended_ns = n;
			else if (line[0] == 'e' && line[1] == 'x') {
				s->has_exit = 1;
				s->exit_status = (int)n;
			}
		}
	}
	free(data);
}

int
uftrace_session(struct uftrace *w, size_t idx, const char *path,
    int64_t pid, int64_t number, const char *comm)
{
	struct uf_session *s;

	if (uf_grow((void **)&w->sess, &w->nsess, idx, sizeof(*w->sess)) ==
	    -1)
		return -1;
	s = &w->sess[idx];
	if (s->set)
		return 0;
	s->set = 1;
	s->pid = pid;
	s->number = number;
	if ((s->path = strdup(path)) == NULL ||
	    (s->comm = strdup(comm != NULL ? comm : "?")) == NULL)
		return -1;
	/* SESSION_ID_LEN: 16 characters. */
	snprintf(s->sid, sizeof(s->sid), "%016" PRIx64,
	    number >= 0 ? (uint64_t)number : (uint64_t)idx);
	uf_load_process(s);
	return calls_load_modules(s->path, &s->mods, &s->nmods, uf_say, w);
}

int
uftrace_thread(struct uftrace *w, size_t idx, size_t sess, uint64_t tid)
{
	struct uf_thread *t;

	if (uf_grow((void **)&w->thr, &w->nthr, idx, sizeof(*w->thr)) == -1)
		return -1;
	t = &w->thr[idx];
	t->set = 1;
	t->sess = sess;
	t->tid = tid;
	return 0;
}

/* The executable of a session: its module 0, else its name. */
static const char *
uf_exename(const struct uf_session *s)
{
	size_t i;

	for (i = 0; i < s->nmods; i++)
		if (s->mods[i].index == 0)
			return s->mods[i].path;
	return s->comm;
}

/* One record into thread t's file. */
static int
uf_record(struct uftrace *w, struct uf_thread *t, int64_t ns, unsigned type,
    uint64_t depth, uint64_t addr)
{
	unsigned char rec[16];
	uint64_t word, time = ns > 0 ? (uint64_t)ns : 0;
	char name[32];
	int fd, i;

	if (t->skip)
		return 0;
	if (t->dat == NULL) {
		snprintf(name, sizeof(name), "%" PRIu64 ".dat", t->tid);
		fd = openat(w->dirfd, name, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd == -1 || (t->dat = fdopen(fd, "w")) == NULL) {
			uf_error(w, "%s: %s%s", name, strerror(errno),
			    errno == EEXIST ? " (two threads of the traces "
			    "have this tid: this one is left out)" : "");
			if (fd != -1)
				close(fd);
			t->skip = 1;
			return errno == EEXIST ? 0 : -1;
		}
		t->first_ns = ns;
		if (w->sess[t->sess].first_ns == 0 ||
		    ns < w->sess[t->sess].first_ns)
			w->sess[t->sess].first_ns = ns;
	}
	if (depth > UF_DEPTH_MAX)
		depth = UF_DEPTH_MAX;
	word = type | (uint64_t)UF_MAGIC << 3 | depth << 6 |
	    (addr & UF_ADDR_MASK) << 16;
	for (i = 0; i < 8; i++) {
		rec[i] = (unsigned char)(time >> (8 * i));
		rec[8 + i] = (unsigned char)(word >> (8 * i));
	}
	if (fwrite(rec, sizeof(rec), 1, t->dat) != 1) {
		uf_error(w, "%" PRIu64 ".dat: %s", t->tid, strerror(errno));
		t->skip = 1;
		return -1;
	}
	return 0;
}

static struct uf_thread *
uf_thr(struct uftrace *w, size_t thr)
{
	if (thr >= w->nthr || !w->thr[thr].set ||
	    w->thr[thr].sess >= w->nsess || !w->sess[w->thr[thr].sess].set)
		return NULL;
	return &w->thr[thr];
}

/* Close the innermost open call, at 'ns' (its exit came late or not). */
static int
uf_pop(struct uftrace *w, struct uf_thread *t, int64_t ns)
{
	t->n--;
	return uf_record(w, t, ns, UF_EXIT, t->n, t->stack[t->n].addr);
}

int
uftrace_entry(struct uftrace *w, size_t thr, int64_t ns, uint64_t addr,
    uint64_t depth)
{
	struct uf_thread *t = uf_thr(w, thr);

	if (t == NULL)
		return 0;
	/* Open calls at its depth or deeper lost their exits. */
	while (t->n > 0 && t->stack[t->n - 1].depth >= depth)
		if (uf_pop(w, t, ns) == -1)
			return -1;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct uf_frame *ns_ = reallocarray(t->stack, cap,
		    sizeof(*ns_));

		if (ns_ == NULL)
			return -1;
		t->stack = ns_;
		t->cap = cap;
	}
	t->stack[t->n].addr = addr;
	t->stack[t->n].depth = depth;
	t->n++;
	return uf_record(w, t, ns, UF_ENTRY, t->n - 1, addr);
}

int
uftrace_exit(struct uftrace *w, size_t thr, int64_t ns, uint64_t addr,
    uint64_t depth)
{
	struct uf_thread *t = uf_thr(w, thr);
	size_t i;

	if (t == NULL)
		return 0;
	for (i = t->n; i-- > 0; )
		if (t->stack[i].addr == addr && t->stack[i].depth == depth)
			break;
	if (i == (size_t)-1) {
		t->dropped++;
		return 0;
	}
	while (t->n > i + 1)
		if (uf_pop(w, t, ns) == -1)
			return -1;
	return uf_pop(w, t, ns);
}

int
uftrace_event(struct uftrace *w, size_t thr, int64_t ns, const char *name)
{
	struct uf_thread *t = uf_thr(w, thr);
	size_t i;
	char **ne;

	if (t == NULL)
		return 0;
	for (i = 0; i < w->nevents; i++)
		if (strcmp(w->events[i], name) == 0)
			break;
	if (i == w->nevents) {
		if ((ne = reallocarray(w->events, w->nevents + 1,
		    sizeof(*ne))) == NULL)
			return -1;
		w->events = ne;
		if ((ne[i] = strdup(name)) == NULL)
			return -1;
		w->nevents++;
	}
	return uf_record(w, t, ns, UF_EVENT, t->n, UF_EVENT_BASE + i);
}

int
uftrace_lost(struct uftrace *w, size_t thr, int64_t ns, uint64_t count)
{
	struct uf_thread *t = uf_thr(w, thr);

	if (t == NULL)
		return 0;
	return uf_record(w, t, ns, UF_LOST, 0,
	    count > UF_ADDR_MASK ? UF_ADDR_MASK : count);
}

/* ---- the other files ------------------------------------------------- */

static FILE *
uf_open(struct uftrace *w, const char *name)
{
	FILE *f;
	int fd;

	(void)unlinkat(w->dirfd, name, 0);
	fd = openat(w->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644);
	if (fd == -1 || (f = fdopen(fd, "w")) == NULL) {
		uf_error(w, "%s: %s", name, strerror(errno));
		if (fd != -1)
			close(fd);
		return NULL;
	}
	return f;
}

static int
uf_close(struct uftrace *w, FILE *f, const char *name)
{
	if (ferror(f) | (fclose(f) == EOF)) {
		uf_error(w, "%s: %s", name, strerror(errno));
		return -1;
	}
	return 0;
}

/* A string uftrace pastes between quotes, or reads up to a space. */
static void
uf_plain(char *dst, size_t size, const char *s)
{
	size_t i;

	for (i = 0; i + 1 < size && s[i] != '\0'; i++)
		dst[i] = s[i] == '"' || s[i] == '\\' || (unsigned char)s[i] <
		    0x20 || s[i] == 0x7f ? '_' : s[i];
	dst[i] = '\0';
}

static void
uf_ts(char *buf, size_t size, int64_t ns)
{
	if (ns < 0)
		ns = 0;
	snprintf(buf, size, "%" PRId64 ".%09" PRId64, ns / 1000000000,
	    ns % 1000000000);
}

static int
uf_write_info(struct uftrace *w, const struct uf_session *s, size_t ntids)
{
	unsigned char hdr[40];
	uint64_t feat = UF_FEAT_TASK_SESSION | UF_FEAT_SYM_REL_ADDR |
	    UF_FEAT_MAX_STACK | (w->nevents > 0 ? UF_FEAT_EVENT : 0);
	uint64_t info = UF_INFO_EXE_NAME | UF_INFO_CMDLINE | UF_INFO_TASKINFO;
	const struct functab_module *exe_mod = NULL;
	const char *exe = s != NULL ? uf_exename(s) : "?";
	const char *sep = "";
	char plain[4096], date[64];
	struct tm tm;
	time_t t;
	uint64_t el;
	size_t i;
	FILE *f;
	int k;

	for (i = 0; s != NULL && i < s->nmods; i++)
		if (s->mods[i].index == 0 && s->mods[i].build_id_len > 0)
			exe_mod = &s->mods[i];
	if (exe_mod != NULL)
		info |= UF_INFO_BUILD_ID;
	if (s != NULL && s->has_exit)
		info |= UF_INFO_EXIT_STATUS;
	if (s != NULL && s->started_ns > 0 && s->ended_ns >= s->started_ns)
		info |= UF_INFO_RECORD_DATE;
	if ((f = uf_open(w, "info")) == NULL)
		return -1;
	memset(hdr, 0, sizeof(hdr));
	memcpy(hdr, "Ftrace!", 8);
	hdr[8] = 4;			/* version */
	hdr[12] = 40;			/* header size */
	hdr[14] = 1;			/* ELFDATA2LSB */
	hdr[15] = 2;			/* ELFCLASS64 */
	for (k = 0; k < 8; k++) {
		hdr[16 + k] = (unsigned char)(feat >> (8 * k));
		hdr[24 + k] = (unsigned char)(info >> (8 * k));
	}
	hdr[32] = (UF_DEPTH_MAX + 1) & 0xff;	/* max_stack: 1024 */
	hdr[33] = (UF_DEPTH_MAX + 1) >> 8;
	fwrite(hdr, sizeof(hdr), 1, f);
	/* One block per bit, in bit order. */
	uf_plain(plain, sizeof(plain), exe);
	fprintf(f, "exename:%s\n", plain);
	if (info & UF_INFO_BUILD_ID) {
		fputs("build_id:", f);
		for (i = 0; i < exe_mod->build_id_len; i++)
			fprintf(f, "%02x", exe_mod->build_id[i]);
		fputc('\n', f);
	}
	/* A wait status, as uftrace keeps it: exit(n) is n << 8. */
	if (info & UF_INFO_EXIT_STATUS)
		fprintf(f, "exit_status:%d\n", (s->exit_status & 0xff) << 8);
	if (s != NULL && s->cmdline != NULL)
		uf_plain(plain, sizeof(plain), s->cmdline);
	fprintf(f, "cmdline:%s\n", plain);
	fprintf(f, "taskinfo:lines=2\ntaskinfo:nr_tid=%zu\ntaskinfo:tids=",
	    ntids);
	for (i = 0; i < w->nthr; i++)
		if (w->thr[i].dat != NULL) {
			fprintf(f, "%s%" PRIu64, sep, w->thr[i].tid);
			sep = ",";
		}
	fputc('\n', f);
	if (info & UF_INFO_RECORD_DATE) {
		t = (time_t)(s->started_ns / 1000000000);
		if (localtime_r(&t, &tm) == NULL ||
		    strftime(date, sizeof(date), "%a %b %e %H:%M:%S %Y",
		    &tm) == 0)
			snprintf(date, sizeof(date), "?");
		el = (uint64_t)(s->ended_ns - s->started_ns);
		fprintf(f, "record_date:%s\nelapsed_time:%" PRIu64 ".%09"
		    PRIu64 " sec\n", date, el / 1000000000, el % 1000000000);
	}
	return uf_close(w, f, "info");
}

struct uf_task {
	int64_t		 ns;
	int		 sess_line;	/* SESS before TASK at equal times */
	size_t		 i;		/* session or thread */
};

static int
uf_task_cmp(const void *a, const void *b)
{
	const struct uf_task *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	if (x->sess_line != y->sess_line)
		return y->sess_line - x->sess_line;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int
uf_write_tasks(struct uftrace *w)
{
	struct uf_task *tk;
	char ts[40], plain[4096];
	size_t i, n = 0;
	FILE *f;

	if ((tk = calloc(w->nsess + w->nthr + 1, sizeof(*tk))) == NULL)
		return -1;
	for (i = 0; i < w->nsess; i++)
		if (w->sess[i].set && w->sess[i].first_ns != 0)
			tk[n++] = (struct uf_task){ w->sess[i].first_ns - 1, 1,
			    i };
	for (i = 0; i < w->nthr; i++)
		if (w->thr[i].dat != NULL)
			tk[n++] = (struct uf_task){ w->thr[i].first_ns - 1, 0,
			    i };
	qsort(tk, n, sizeof(*tk), uf_task_cmp);
	if ((f = uf_open(w, "task.txt")) == NULL) {
		free(tk);
		return -1;
	}
	for (i = 0; i < n; i++) {
		uf_ts(ts, sizeof(ts), tk[i].ns);
		if (tk[i].sess_line) {
			const struct uf_session *s = &w->sess[tk[i].i];

			uf_plain(plain, sizeof(plain), uf_exename(s));
			fprintf(f, "SESS timestamp=%s pid=%" PRId64 " sid=%s "
			    "exename=\"%s\"\n", ts, s->pid, s->sid, plain);
		} else {
			const struct uf_thread *t = &w->thr[tk[i].i];

			fprintf(f, "TASK timestamp=%s tid=%" PRIu64 " pid=%"
			    PRId64 "\n", ts, t->tid, w->sess[t->sess].pid);
		}
	}
	free(tk);
	return uf_close(w, f, "task.txt");
}

/* The maps of session s: its objects with functions, then [stack]. */
static int
uf_write_map(struct uftrace *w, const struct uf_session *s)
{
	char name[64], plain[4096];
	size_t i;
	FILE *f;

	snprintf(name, sizeof(name), "sid-%s.map", s->sid);
	if ((f = uf_open(w, name)) == NULL)
		return -1;
	for (i = 0; i < s->nmods; i++) {
		if (s->mods[i].tab.n == 0)
			continue;
		uf_plain(plain, sizeof(plain), s->mods[i].path);
		fprintf(f, "%012" PRIx64 "-%012" PRIx64 " r-xp 00000000 00:00 "
		    "0 %s\n", s->mods[i].start, s->mods[i].end, plain);
	}
	fprintf(f, "7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0 "
	    "[stack]\n");
	return uf_close(w, f, name);
}

static const char *
uf_base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s != NULL ? s + 1 : path;
}

/*
 * NAME.sym of module m: offsets from its map start (SYM_REL_ADDR), in
 * order, and __sym_end to give the last its size.
 */
static int
uf_write_sym(struct uftrace *w, const struct functab_module *m)
{
	char name[310], plain[300];
	uint64_t end = 0, rel;
	size_t i;
	FILE *f;

	uf_plain(plain, sizeof(plain), uf_base_name(m->path));
	snprintf(name, sizeof(name), "%s.sym", plain);
	if ((f = uf_open(w, name)) == NULL)
		return -1;
	fprintf(f, "# symbols: %zu\n", m->tab.n);
	for (i = 0; i < m->tab.n; i++) {
		rel = m->base + m->tab.e[i].start - m->start;
		fprintf(f, "%016" PRIx64 " T %s\n", rel, m->tab.e[i].name);
		if (rel + (m->tab.e[i].size ? m->tab.e[i].size : 1) > end)
			end = rel + (m->tab.e[i].size ? m->tab.e[i].size : 1);
	}
	fprintf(f, "%016" PRIx64 " ? __sym_end\n", end);
	return uf_close(w, f, name);
}

int
uftrace_finish(struct uftrace *w)
{
	const struct uf_session *main_sess = NULL;
	size_t i, j, k, ntids = 0;
	FILE *f;

	for (i = 0; i < w->nthr; i++) {
		struct uf_thread *t = &w->thr[i];

		if (t->dat == NULL)
			continue;
		ntids++;
		if (uf_close(w, t->dat, "a .dat file") == -1)
			t->skip = 1;
		t->dat = (FILE *)1;	/* had records; closed */
	}
	if (ntids == 0) {
		uf_error(w, "no function call or event to export");
		goto out;
	}
	/* uftrace has one program: the first session with records. */
	for (i = 0; i < w->nsess && main_sess == NULL; i++)
		if (w->sess[i].set && w->sess[i].first_ns != 0)
			main_sess = &w->sess[i];
	(void)uf_write_info(w, main_sess, ntids);
	(void)uf_write_tasks(w);
	for (i = 0; i < w->nsess; i++)
		if (w->sess[i].set && w->sess[i].first_ns != 0)
			(void)uf_write_map(w, &w->sess[i]);
	/* One symbol file per object name: the first one seen. */
	for (i = 0; i < w->nsess; i++)
		for (j = 0; j < w->sess[i].nmods; j++) {
			const struct functab_module *m = &w->sess[i].mods[j];
			int seen = 0;

			if (m->tab.n == 0 || w->sess[i].first_ns == 0)
				continue;
			for (k = 0; k < i && !seen; k++) {
				size_t q;

				for (q = 0; q < w->sess[k].nmods; q++) {
					const struct functab_module *o =
					    &w->sess[k].mods[q];

					if (o->tab.n == 0 ||
					    w->sess[k].first_ns == 0 ||
					    strcmp(uf_base_name(o->path),
					    uf_base_name(m->path)) != 0)
						continue;
					seen = 1;
					if (o->build_id_len != m->build_id_len ||
					    memcmp(o->build_id, m->build_id,
					    m->build_id_len) != 0)
						uf_error(w, "%s and %s: two "
						    "objects named %s; uftrace "
						    "names the second one\x27s "
						    "functions from the first",
						    w->sess[k].path,
						    w->sess[i].path,
						    uf_base_name(m->path));
					break;
				}
			}
			if (!seen)
				(void)uf_write_sym(w, m);
		}
	if (w->nevents > 0 && (f = uf_open(w, "events.txt")) != NULL) {
		char plain[512];

		for (i = 0; i < w->nevents; i++) {
			uf_plain(plain, sizeof(plain), w->events[i]);
			fprintf(f, "EVENT: %zu %s\n", UF_EVENT_BASE + i, plain);
		}
		(void)uf_close(w, f, "events.txt");
	}
out:
	for (i = 0; i < w->nthr; i++)
		if (w->thr[i].dat == (FILE *)1)
			w->thr[i].dat = NULL;
	return w->failed ? -1 : 0;
}

void
uftrace_free(struct uftrace *w)
{
	size_t i, j;

	if (w == NULL)
		return;
	for (i = 0; i < w->nthr; i++) {
		if (w->thr[i].dat != NULL && w->thr[i].dat != (FILE *)1)
			fclose(w->thr[i].dat);
		free(w->thr[i].stack);
	}
	for (i = 0; i < w->nsess; i++) {
		for (j = 0; j < w->sess[i].nmods; j++)
			functab_module_free(&w->sess[i].mods[j]);
		free(w->sess[i].mods);
		free(w->sess[i].path);
		free(w->sess[i].cmdline);
		free(w->sess[i].comm);
	}
	for (i = 0; i < w->nevents; i++)
		free(w->events[i]);
	free(w->events);
	free(w->sess);
	free(w->thr);
	free(w);
}
