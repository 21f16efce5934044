/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The one reader: every stream of every session under the paths given,
 * merged by time, filtered, in bounded memory.  See reader.h for the
 * interface.
 *
 * DESIGN
 *
 * Loading (tracedir-io.c) parses each session's metadata and lists its
 * stream files.  reader_start() then reads the packet headers of each
 * file (a few hundred bytes each) to learn its stream instance, start
 * time and threads (the daemon gives an ended thread's stream to the
 * process's next new thread, so a stream may hold several, one after
 * the other, each packet naming its own), groups the files of one
 * stream (the daemon may cut a long stream into several files;
 * babeltrace2 groups them the same way, by stream instance, in time
 * order), and sorts the streams by start time.  Each item carries its
 * packet's thread.
 *
 * The merge is a binary heap of open cursors keyed by (time of their
 * next item, order), plus the sorted list of streams not yet opened: a
 * stream is opened only when the merge reaches its start, and closed at
 * its end, so the open streams are the threads that ran at the same
 * time, not all the threads of the trace.  Each cursor reads its file
 * with pread() into one window (64 KiB), slid forward as the walk goes
 * (tracedir_stream_feed()); an item larger than the window grows it, up
 * to READER_ITEM_MAX.  At most READER_FDS_MAX files stay open: past
 * that, a cursor opens its file for each read.
 *
 * Losses come from two places and are reported once each: a traced:lost
 * record (the producer's count by cause, where it happened), and the
 * CTF events_discarded counter of each packet, whose increase covers
 * the traced:lost records of that packet plus what no record says
 * (write errors, a thread that ended before reporting): that remainder
 * is an item of cause "other" at the end of the packet.  A gap in
 * packet_seq_num is an item too.
 *
 * Filters on sessions and threads drop whole streams before they are
 * opened; --since skips whole packets that end before it; --until ends
 * the merge at the first item after it.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cause.h"
#include "text.h"
#include "reader.h"

#define READER_WINDOW		(64u << 10)
#define READER_FIRST_READ	4096u
#define READER_FDS_MAX		256u
/* Errors reported per stream; past that they are counted. */
#define READER_STREAM_ERRORS	10u

/* One file of a stream. */
struct rd_file {
	const struct tracedir_file *f;	/* borrowed from the set */
	uint64_t	 instance;	/* of its first packet */
	uint64_t	 tid;
	uint64_t	 first_ticks;	/* its first packet's ts_begin */
	struct rd_tid	*tids;		/* owned: the threads of its packets */
	size_t		 ntids;
};

/*
 * A thread whose packets a file holds.  The daemon gives the stream of
 * an ended thread to the process's next new one (daemon/sring.c), so
 * a stream may hold the packets of several threads, one after the
 * other; each packet names its thread.
 */
struct rd_tid {
	uint64_t	 tid;
	uint64_t	 first_ticks;	/* its first packet's ts_begin */
	int64_t		 first_ns;	/* reader_start(): the same, and */
	size_t		 sess;		/* its session */
};

/* A session's thread, found by tid. */
struct rd_tidx {
	uint64_t	 tid;
	size_t		 index;		/* in reader.threads */
};

/* Threads told apart in one file, at most (more: the first's). */
#define READER_FILE_TIDS	65536u
/* Bytes read at each packet when looking for the threads of a file. */
#define READER_SCAN_READ	512u

/* One stream: its files, in order, and its walk; its packets may be
 * of several threads, one after the other. */
struct rd_stream {
	struct reader_thread thread;	/* its first packet's thread */
	size_t		 cur_thread;	/* the current packet's (index) */
	struct rd_session *rs;		/* borrowed */
	struct rd_file	*files;		/* owned */
	size_t		 nfiles;
	size_t		 cur;		/* the file being read */
	size_t		 order;		/* ties in the merge */
	int		 fd;		/* -1 when closed */
	uint8_t		*win;		/* owned, wcap bytes */
	size_t		 wcap;
	size_t		 wlen;
	uint64_t	 wbase;
	struct tracedir_stream st;
	struct tracedir_event ev;
	unsigned	 nerrors;
	/* The packet being read, for the losses no record says. */
	int		 pkt_open;
	int		 pkt_skipped;
	uint64_t	 pkt_end_ticks;
	uint64_t	 pkt_discarded;	/* its events_discarded increase */
	uint64_t	 pkt_recorded;	/* counts of its traced:lost */
	int		 have_pending;	/* a PACKET read, not yet handled */
	struct reader_item item;	/* the current item */
	int		 done;
};

/* One session of the set that reads, with its per-class filter. */
struct rd_session {
	struct reader_session pub;
	const struct tracedir_session *ts; /* borrowed from the set */
	struct rd_tidx	*by_tid;	/* owned: its threads, by tid */
	size_t		 nby_tid;
	uint8_t		*selected;	/* owned: per class index */
};

struct reader {
	struct reader_opts opts;	/* pids, tids owned (copies) */
	reader_error_cb	 cb;
	void		*arg;
	size_t		 nerrors;
	struct tracedir_set set;
	int		 started;
	struct rd_session *sessions;	/* owned */
	size_t		 nsessions;
	struct reader_session *pub_sessions; /* owned copies, by index */
	struct rd_stream *streams;	/* owned, by start time */
	size_t		 nstreams;
	struct reader_thread *threads;	/* owned copies, by index */
	size_t		 nthreads;
	size_t		 next_pending;	/* streams[next_pending..] unopened */
	struct rd_stream **heap;	/* owned, nstreams slots */
	size_t		 nheap;
	struct rd_stream *last;		/* gave the last item: advance it */
	unsigned	 nfds;
	int64_t		 since_ns;	/* resolved; INT64_MIN: none */
	int64_t		 until_ns;	/* INT64_MAX: none */
	uint64_t	 given;		/* items returned */
	int		 ended;
};

static void	rd_error(struct reader *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

const char reader_opts_help[] =
    "  --event GLOB     only events whose provider:event or event name "
    "matches\n"
    "                   (repeatable)\n"
    "  --pid PID        only this process (repeatable)\n"
    "  --tid TID        only this thread (repeatable)\n"
    "  --session NAME   only this session: directory name (glob) or "
    "number\n"
    "  --since TIME     from TIME: 'YYYY-MM-DD HH:MM:SS[.NS]', "
    "'HH:MM:SS[.NS]',\n"
    "                   '@SECONDS[.NS]' since the Epoch, or '+2s' after "
    "the start\n"
    "  --until TIME     up to TIME (same forms)\n"
    "  --lost           only where events were lost\n"
    "  --limit N        stop after N items\n";

static void
rd_error(struct reader *r, const char *fmt, ...)
{
	char	 msg[TRACEDIR_ERR_MAX + 2 * PATH_MAX];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->nerrors++;
	if (r->cb != NULL)
		r->cb(r->arg, msg);
}

static void
rd_load_error(void *arg, const char *msg)
{
	struct reader	*r = arg;

	r->nerrors++;
	if (r->cb != NULL)
		r->cb(r->arg, msg);
}

/* ---- options ------------------------------------------------------------ */

/*
 * Empty filters.  Contract in reader.h.
 */
void
reader_opts_init(struct reader_opts *o)
{
	memset(o, 0, sizeof(*o));
}

/*
 * Free the filters.  Contract in reader.h.
 */
void
reader_opts_free(struct reader_opts *o)
{
	free(o->events);
	free(o->pids);
	free(o->tids);
	free(o->sessions);
	memset(o, 0, sizeof(*o));
}

static int
rd_push_str(char ***v, size_t *n, char *s)
{
	char	**nv;

	if ((nv = reallocarray(*v, *n + 1, sizeof(*nv))) == NULL)
		return -1;
	nv[(*n)++] = s;
	*v = nv;
	return 0;
}

static int
rd_push_int(int64_t **v, size_t *n, int64_t x)
{
	int64_t	*nv;

	if ((nv = reallocarray(*v, *n + 1, sizeof(*nv))) == NULL)
		return -1;
	nv[(*n)++] = x;
	*v = nv;
	return 0;
}

/* A decimal number of 0 or more that fits an int64_t. */
static int
rd_parse_uint(const char *s, int64_t *out)
{
	char		*end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > INT64_MAX)
		return -1;
	*out = (int64_t)v;
	return 0;
}

/* "2s", "1.5ms"...: proto/text.c parses it (the daemon's triggers and
 * snapshots take the same).  Contract in reader.h. */
int
reader_parse_duration(const char *s, int64_t *ns)
{
	return text_parse_duration(s, ns);
}

/*
 * An absolute time: '@SEC[.NS]' since the Epoch, 'YYYY-MM-DD
 * HH:MM:SS[.NS]' (or with 'T'), local time, or 'HH:MM:SS[.NS]' on the
 * day of the trace's start (resolved later: ns is then the time of day
 * and relative is 2).
 */
static int
rd_parse_time(const char *s, struct reader_time *t)
{
	struct tm	 tm;
	const char	*p;
	int64_t		 v, frac = 0;
	int		 n = 0, nfrac = 0;
	time_t		 secs;

	memset(t, 0, sizeof(*t));
	t->set = 1;
	if (*s == '+') {
		t->relative = 1;
		return reader_parse_duration(s + 1, &t->ns);
	}
	if (*s == '@') {
		if (reader_parse_duration(s + 1, &v) == -1)
			return -1;
		t->ns = v;
		return 0;
	}
	memset(&tm, 0, sizeof(tm));
	tm.tm_isdst = -1;
	if (sscanf(s, "%4d-%2d-%2d%*[ T]%2d:%2d:%2d%n", &tm.tm_year,
	    &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec,
	    &n) == 6 && n > 0) {
		tm.tm_year -= 1900;
		tm.tm_mon -= 1;
	} else if (sscanf(s, "%2d:%2d:%2d%n", &tm.tm_hour, &tm.tm_min,
	    &tm.tm_sec, &n) == 3 && n > 0) {
		t->relative = 2;
	} else
		return -1;
	p = s + n;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, nfrac++)
			if (nfrac < 9)
				frac = frac * 10 + (*p - '0');
	if (*p != '\0' || tm.tm_hour > 23 || tm.tm_min > 59 ||
	    tm.tm_sec > 60 || (t->relative != 2 && (tm.tm_mon < 0 ||
	    tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31)))
		return -1;
	for (; nfrac < 9; nfrac++)
		frac *= 10;
	if (t->relative == 2) {
		t->ns = ((int64_t)tm.tm_hour * 3600 + tm.tm_min * 60 +
		    tm.tm_sec) * 1000000000 + frac;
		return 0;
	}
	if ((secs = mktime(&tm)) == (time_t)-1)
		return -1;
	t->ns = (int64_t)secs * 1000000000 + frac;
	return 0;
}

/*
 * One filter option.  Contract in reader.h.
 */
int
reader_opt(struct reader_opts *o, int argc, char **argv, int *i, char *err,
    size_t errlen)
{
	const char	*opt = argv[*i], *val;
	const char	*eq = strchr(opt, '=');
	char		 name[32];
	size_t		 nlen = eq != NULL ? (size_t)(eq - opt) : strlen(opt);
	int64_t		 v;
	int		 takes;

	if (nlen >= sizeof(name))
		return 0;
	memcpy(name, opt, nlen);
	name[nlen] = '\0';
	if (strcmp(name, "--lost") == 0 && eq == NULL) {
		o->lost_only = 1;
		(*i)++;
		return 1;
	}
	takes = strcmp(name, "--event") == 0 || strcmp(name, "--pid") == 0 ||
	    strcmp(name, "--tid") == 0 || strcmp(name, "--session") == 0 ||
	    strcmp(name, "--since") == 0 || strcmp(name, "--until") == 0 ||
	    strcmp(name, "--limit") == 0;
	if (!takes)
		return 0;
	if (eq != NULL)
		val = eq + 1;
	else if (*i + 1 < argc)
		val = argv[++*i];
	else {
		snprintf(err, errlen, "%s needs a value", name);
		return -1;
	}
	(*i)++;
	if (strcmp(name, "--event") == 0) {
		if (*val == '\0') {
			snprintf(err, errlen, "--event: empty pattern");
			return -1;
		}
		if (rd_push_str(&o->events, &o->nevents, (char *)val) == -1)
			goto nomem;
	} else if (strcmp(name, "--session") == 0) {
		if (*val == '\0') {
			snprintf(err, errlen, "--session: empty name");
			return -1;
		}
		if (rd_push_str(&o->sessions, &o->nsessions, (char *)val) ==
		    -1)
			goto nomem;
	} else if (strcmp(name, "--pid") == 0 || strcmp(name, "--tid") == 0) {
		if (rd_parse_uint(val, &v) == -1) {
			snprintf(err, errlen, "%s '%.60s': expected a number",
			    name, val);
			return -1;
		}
		if ((name[2] == 'p' ? rd_push_int(&o->pids, &o->npids, v) :
		    rd_push_int(&o->tids, &o->ntids, v)) == -1)
			goto nomem;
	} else if (strcmp(name, "--limit") == 0) {
		if (rd_parse_uint(val, &v) == -1 || v == 0) {
			snprintf(err, errlen, "--limit '%.60s': expected a "
			    "number of 1 or more", val);
			return -1;
		}
		o->limit = (uint64_t)v;
	} else {
		if (rd_parse_time(val, name[2] == 's' ? &o->since :
		    &o->until) == -1) {
			snprintf(err, errlen, "%s '%.60s': not a time (give "
			    "'YYYY-MM-DD HH:MM:SS[.NS]', 'HH:MM:SS[.NS]', "
			    "'@SECONDS' or '+2s' from the start)", name, val);
			return -1;
		}
	}
	return 1;
nomem:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* ---- setting up ---------------------------------------------------------- */

/*
 * A new reader.  Contract in reader.h.
 */
struct reader *
reader_new(const struct reader_opts *o, reader_error_cb cb, void *arg)
{
	struct reader	*r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->opts = *o;
	r->opts.events = NULL;
	r->opts.sessions = NULL;
	r->opts.pids = NULL;
	r->opts.tids = NULL;
	if ((o->nevents > 0 && (r->opts.events = reallocarray(NULL,
	    o->nevents, sizeof(char *))) == NULL) ||
	    (o->nsessions > 0 && (r->opts.sessions = reallocarray(NULL,
	    o->nsessions, sizeof(char *))) == NULL) ||
	    (o->npids > 0 && (r->opts.pids = reallocarray(NULL, o->npids,
	    sizeof(int64_t))) == NULL) ||
	    (o->ntids > 0 && (r->opts.tids = reallocarray(NULL, o->ntids,
	    sizeof(int64_t))) == NULL)) {
		reader_opts_free(&r->opts);
		free(r);
		return NULL;
	}
	if (o->nevents > 0)
		memcpy(r->opts.events, o->events, o->nevents * sizeof(char *));
	if (o->nsessions > 0)
		memcpy(r->opts.sessions, o->sessions,
		    o->nsessions * sizeof(char *));
	if (o->npids > 0)
		memcpy(r->opts.pids, o->pids, o->npids * sizeof(int64_t));
	if (o->ntids > 0)
		memcpy(r->opts.tids, o->tids, o->ntids * sizeof(int64_t));
	r->cb = cb;
	r->arg = arg;
	r->since_ns = INT64_MIN;
	r->until_ns = INT64_MAX;
	return r;
}

/*
 * Add the sessions under a path.  Contract in reader.h.
 */
int
reader_add(struct reader *r, const char *path)
{
	if (r->started)
		return 0;
	return tracedir_load(&r->set, path, rd_load_error, r) == -1 ? -1 : 0;
}

static int
rd_in(const int64_t *v, size_t n, int64_t x)
{
	size_t	 i;

	if (n == 0)
		return 1;
	for (i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

/* The session number: the last '-' part of "comm-pid-number". */
static int64_t
rd_session_number(const char *name)
{
	const char	*dash = strrchr(name, '-');
	int64_t		 v;

	if (dash == NULL || rd_parse_uint(dash + 1, &v) == -1)
		return -1;
	return v;
}

/*
 * Do --pid and --session keep this session?  Contract in reader.h.
 */
int
reader_opts_session(const struct reader_opts *o,
    const struct reader_session *s)
{
	int64_t		 v;
	size_t		 i;

	if (!rd_in(o->pids, o->npids, s->pid))
		return 0;
	if (o->nsessions == 0)
		return 1;
	for (i = 0; i < o->nsessions; i++) {
		if (fnmatch(o->sessions[i], s->name, 0) == 0)
			return 1;
		if (rd_parse_uint(o->sessions[i], &v) == 0 &&
		    v == s->number)
			return 1;
	}
	return 0;
}

/*
 * Does --event select class c?  "GLOB" or "PROVIDER_GLOB:EVENT_GLOB".
 * Contract in reader.h.
 */
int
reader_opts_class(const struct reader_opts *o, const struct tracedir_class *c)
{
	size_t	 i;

	if (c->lost || o->nevents == 0)
		return 1;
	for (i = 0; i < o->nevents; i++) {
		if (fnmatch(o->events[i], c->name, 0) == 0 ||
		    (strchr(o->events[i], ':') == NULL &&
		    fnmatch(o->events[i], c->event, 0) == 0))
			return 1;
	}
	return 0;
}

/* Read from a file at an offset, all of it unless the file ends. */
static ssize_t
rd_pread(int fd, void *buf, size_t len, uint64_t off)
{
	size_t	 got = 0;
	ssize_t	 n;

	while (got < len) {
		n = pread(fd, (uint8_t *)buf + got, len - got,
		    (off_t)(off + got));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/*
 * Open a stream file to read: never through a symbolic link, never
 * held at open() by a FIFO, never anything but a regular file (a trace
 * directory is input like any other: its writer may have planted them
 * since it was listed).  The descriptor, or -1 and *why.
 */
static int
rd_open(const char *path, const char **why)
{
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
	    O_NOFOLLOW);
	if (fd == -1) {
		*why = errno == ELOOP ? "a symbolic link (not followed)" :
		    strerror(errno);
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		close(fd);
		return -1;
	}
	return fd;
}

/* Note that rf's packets include one of thread 'tid'.  0 or -1. */
static int
rd_file_tid(struct reader *r, struct rd_file *rf, uint64_t tid,
    uint64_t ticks)
{
	struct rd_tid	*t;
	size_t		 i;

	for (i = rf->ntids; i > 0; i--)
		if (rf->tids[i - 1].tid == tid)
			return 0;
	if (rf->ntids == READER_FILE_TIDS) {
		rd_error(r, "%s: more than %u threads in one stream; the "
		    "packets of the others are shown as thread %llu",
		    rf->f->path, READER_FILE_TIDS,
		    (unsigned long long)rf->tid);
		rf->ntids++;
		return 0;
	}
	if (rf->ntids > READER_FILE_TIDS)
		return 0;
	/* Room doubles at each power of two. */
	if ((rf->ntids & (rf->ntids - 1)) == 0) {
		t = reallocarray(rf->tids, rf->ntids ? rf->ntids * 2 : 1,
		    sizeof(*t));
		if (t == NULL)
			return -1;
		rf->tids = t;
	}
	rf->tids[rf->ntids].tid = tid;
	rf->tids[rf->ntids].first_ticks = ticks;
	rf->ntids++;
	return 0;
}

/*
 * Look at a stream file's packet headers: its instance and start (the
 * first packet's) and the threads of its packets.  Returns 0, 1 for a
 * file to leave out (empty, said if unreadable), or -1 when out of
 * memory.  Problems past the first packet are left for the walk, which
 * says them where it meets them.
 */
static int
rd_scan_file(struct reader *r, const struct tracedir_session *ts,
    struct rd_file *rf)
{
	struct tracedir_stream	 st;
	struct tracedir_event	*ev;
	uint8_t			 buf[READER_FIRST_READ];
	uint64_t		 off = 0;
	const char		*why;
	ssize_t			 n;
	int			 fd, ret = 1, first = 1;

	if (rf->f->len == 0)
		return 1;
	if ((fd = rd_open(rf->f->path, &why)) == -1) {
		rd_error(r, "%s: %s", rf->f->path, why);
		return 1;
	}
	if ((ev = malloc(sizeof(*ev))) == NULL) {
		close(fd);
		return -1;
	}
	tracedir_stream_open(&st, ts->meta, rf->f->len);
	n = rd_pread(fd, buf, sizeof(buf), 0);
	if (n == -1) {
		rd_error(r, "%s: %s", rf->f->path, strerror(errno));
		goto out;
	}
	tracedir_stream_feed(&st, buf, (size_t)n, 0);
	for (;;) {
		switch (tracedir_stream_next(&st, ev)) {
		case TRACEDIR_PACKET:
			if (first) {
				rf->instance = st.packet.instance;
				rf->tid = st.packet.tid;
				rf->first_ticks = st.packet.ts_begin;
				ret = 0;
				first = 0;
			}
			if (rd_file_tid(r, rf, st.packet.tid,
			    st.packet.ts_begin) == -1) {
				ret = -1;
				goto out;
			}
			tracedir_stream_skip_packet(&st);
			continue;
		case TRACEDIR_EVENT:
			continue;
		case TRACEDIR_MORE:
			if (first) {
				rd_error(r, "%s: the first packet header is "
				    "larger than %u bytes (the file is not "
				    "read)", rf->f->path, READER_FIRST_READ);
				goto out;
			}
			/* The next packet's header (if it does not fit in
			 * READER_SCAN_READ bytes, the walk reads it). */
			if (tracedir_stream_keep(&st) <= off)
				goto out;
			off = tracedir_stream_keep(&st);
			n = rd_pread(fd, buf, READER_SCAN_READ, (off_t)off);
			if (n <= 0)
				goto out;
			tracedir_stream_feed(&st, buf, (size_t)n, off);
			continue;
		case TRACEDIR_ERROR:
			if (first)
				rd_error(r, "%s: offset %llu: %s (the file is "
				    "not read)", rf->f->path,
				    (unsigned long long)st.err_off, st.err);
			goto out;	/* later ones: the walk says them */
		default:
			goto out;
		}
	}
out:
	close(fd);
	free(ev);
	if (ret != 0) {
		free(rf->tids);
		rf->tids = NULL;
		rf->ntids = 0;
	}
	return ret;
}

static int
rd_file_cmp(const void *a, const void *b)
{
	const struct rd_file *x = a, *y = b;

	if (x->instance != y->instance)
		return x->instance < y->instance ? -1 : 1;
	if (x->first_ticks != y->first_ticks)
		return x->first_ticks < y->first_ticks ? -1 : 1;
	return strverscmp(x->f->name, y->f->name);
}

static int
rd_stream_cmp(const void *a, const void *b)
{
	const struct rd_stream *x = a, *y = b;

	if (x->thread.first_ns != y->thread.first_ns)
		return x->thread.first_ns < y->thread.first_ns ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Free files[0, n) and what they own. */
static void
rd_files_free(struct rd_file *files, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		free(files[i].tids);
	free(files);
}

/* Has one of the n files a packet of a thread --tid asks for? */
static int
rd_files_tid_in(const struct reader *r, const struct rd_file *files,
    size_t n)
{
	size_t	 i, k;

	if (r->opts.ntids == 0)
		return 1;
	for (i = 0; i < n; i++)
		for (k = 0; k < files[i].ntids && k < READER_FILE_TIDS; k++)
			if (rd_in(r->opts.tids, r->opts.ntids,
			    (int64_t)files[i].tids[k].tid))
				return 1;
	return 0;
}

/* The streams of one session: packet headers read, files grouped. */
static int
rd_session_streams(struct reader *r, struct rd_session *rs, size_t *cap)
{
	const struct tracedir_session *ts = rs->ts;
	struct rd_file	*files, *g;
	struct rd_stream *ns, *s;
	size_t		 i, j, k, n = 0, ng;
	int		 ret;

	if (ts->nfiles == 0)
		return 0;
	if ((files = calloc(ts->nfiles, sizeof(*files))) == NULL)
		return -1;
	for (i = 0; i < ts->nfiles; i++) {
		files[n].f = &ts->files[i];
		if ((ret = rd_scan_file(r, ts, &files[n])) == -1)
			goto nomem;
		if (ret == 0)
			n++;
	}
	qsort(files, n, sizeof(*files), rd_file_cmp);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && files[j].instance ==
		    files[i].instance; j++)
			;
		ng = j - i;
		if (!rd_files_tid_in(r, &files[i], ng))
			continue;
		if (r->nstreams == *cap) {
			*cap = *cap != 0 ? *cap * 2 : 16;
			if ((ns = reallocarray(r->streams, *cap,
			    sizeof(*ns))) == NULL)
				goto nomem;
			r->streams = ns;
		}
		if ((g = calloc(ng, sizeof(*g))) == NULL)
			goto nomem;
		memcpy(g, &files[i], ng * sizeof(*g));
		for (k = i; k < j; k++)
			files[k].tids = NULL;	/* the stream's now */
		s = &r->streams[r->nstreams];
		memset(s, 0, sizeof(*s));
		s->rs = rs;
		s->files = g;
		s->nfiles = ng;
		s->fd = -1;
		s->order = r->nstreams;
		s->thread.tid = g[0].tid;
		s->thread.first_ns = tracedir_ns(ts->meta, g[0].first_ticks);
		r->nstreams++;
	}
	rd_files_free(files, n);
	return 0;
nomem:
	rd_files_free(files, n);
	return -1;
}

/* The start of the trace: the first stream's start, or 0. */
static int64_t
rd_trace_start(const struct reader *r)
{
	return r->nstreams > 0 ? r->streams[0].thread.first_ns : 0;
}

/* "HH:MM:SS" on the (local) day of 'day_of'. */
static int64_t
rd_time_of_day(int64_t tod_ns, int64_t day_of)
{
	struct tm	 tm;
	time_t		 t = (time_t)(day_of / 1000000000);

	if (localtime_r(&t, &tm) == NULL)
		return tod_ns;
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	tm.tm_isdst = -1;
	if ((t = mktime(&tm)) == (time_t)-1)
		return tod_ns;
	return (int64_t)t * 1000000000 + tod_ns;
}

/*
 * A time of the command line, in ns since the Epoch.  Contract in
 * reader.h.
 */
int64_t
reader_time_resolve(const struct reader_time *t, int64_t start,
    int64_t unset)
{
	int64_t	 v;

	if (!t->set)
		return unset;
	if (t->relative == 1)
		return __builtin_add_overflow(start, t->ns, &v) ?
		    INT64_MAX : v;
	if (t->relative == 2)
		return rd_time_of_day(t->ns, start);
	return t->ns;
}

static int
rd_tid_by_sess(const void *a, const void *b)
{
	const struct rd_tid *x = a, *y = b;

	if (x->sess != y->sess)
		return x->sess < y->sess ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->first_ns > y->first_ns) - (x->first_ns < y->first_ns);
}

static int
rd_tid_by_time(const void *a, const void *b)
{
	const struct rd_tid *x = a, *y = b;

	if (x->first_ns != y->first_ns)
		return x->first_ns < y->first_ns ? -1 : 1;
	if (x->sess != y->sess)
		return x->sess < y->sess ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static int
rd_tidx_cmp(const void *a, const void *b)
{
	const struct rd_tidx *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* The thread 'tid' of session rs (its index), or 'dflt'. */
static size_t
rd_thread_of(const struct rd_session *rs, uint64_t tid, size_t dflt)
{
	struct rd_tidx	 key = { tid, 0 }, *t;

	if (rs->nby_tid == 0)
		return dflt;
	t = bsearch(&key, rs->by_tid, rs->nby_tid, sizeof(*t), rd_tidx_cmp);
	return t != NULL ? t->index : dflt;
}

/*
 * The threads: each (session, tid) that has a packet, in the order of
 * their first packets; each session's, by tid; each stream's first.
 * 0 or -1 when out of memory.
 */
static int
rd_threads(struct reader *r)
{
	struct rd_tid	*all;
	struct rd_stream *s;
	struct rd_session *rs;
	size_t		 i, j, k, n = 0, u;

	for (i = 0; i < r->nstreams; i++)
		for (j = 0; j < r->streams[i].nfiles; j++)
			n += r->streams[i].files[j].ntids < READER_FILE_TIDS ?
			    r->streams[i].files[j].ntids : READER_FILE_TIDS;
	if (n == 0)
		return 0;
	if ((all = calloc(n, sizeof(*all))) == NULL)
		return -1;
	n = 0;
	for (i = 0; i < r->nstreams; i++) {
		s = &r->streams[i];
		for (j = 0; j < s->nfiles; j++)
			for (k = 0; k < s->files[j].ntids &&
			    k < READER_FILE_TIDS; k++) {
				all[n] = s->files[j].tids[k];
				all[n].sess = s->rs->pub.index;
				all[n].first_ns = tracedir_ns(s->rs->ts->meta,
				    all[n].first_ticks);
				n++;
			}
	}
	qsort(all, n, sizeof(*all), rd_tid_by_sess);
	for (u = 0, i = 0; i < n; i++)
		if (u == 0 || all[i].sess != all[u - 1].sess ||
		    all[i].tid != all[u - 1].tid)
			all[u++] = all[i];
	qsort(all, u, sizeof(*all), rd_tid_by_time);
	if ((r->threads = calloc(u, sizeof(*r->threads))) == NULL) {
		free(all);
		return -1;
	}
	r->nthreads = u;
	for (i = 0; i < u; i++) {
		r->threads[i].index = i;
		r->threads[i].sess = &r->pub_sessions[all[i].sess];
		r->threads[i].tid = all[i].tid;
		r->threads[i].first_ns = all[i].first_ns;
		r->sessions[all[i].sess].nby_tid++;
	}
	for (i = 0; i < r->nsessions; i++) {
		rs = &r->sessions[i];
		if (rs->nby_tid > 0 && (rs->by_tid = calloc(rs->nby_tid,
		    sizeof(*rs->by_tid))) == NULL) {
			free(all);
			return -1;
		}
		rs->nby_tid = 0;
	}
	for (i = 0; i < u; i++) {
		rs = &r->sessions[all[i].sess];
		rs->by_tid[rs->nby_tid].tid = all[i].tid;
		rs->by_tid[rs->nby_tid].index = i;
		rs->nby_tid++;
	}
	free(all);
	for (i = 0; i < r->nsessions; i++)
		if (r->sessions[i].nby_tid > 1)
			qsort(r->sessions[i].by_tid, r->sessions[i].nby_tid,
			    sizeof(*r->sessions[i].by_tid), rd_tidx_cmp);
	for (i = 0; i < r->nstreams; i++) {
		s = &r->streams[i];
		s->thread.index = rd_thread_of(s->rs, s->thread.tid, 0);
		s->cur_thread = s->thread.index;
	}
	return 0;
}

/*
 * Read the first packets, group, sort.  Contract in reader.h.
 */
int
reader_start(struct reader *r)
{
	const struct tracedir_session *ts;
	struct rd_session *rs;
	size_t		 i, j, cap = 0;

	if (r->started)
		return 0;
	r->started = 1;
	if (r->set.nsessions > 0 && ((r->sessions = calloc(r->set.nsessions,
	    sizeof(*r->sessions))) == NULL || (r->pub_sessions =
	    calloc(r->set.nsessions, sizeof(*r->pub_sessions))) == NULL))
		goto nomem;
	for (i = 0; i < r->set.nsessions; i++) {
		ts = &r->set.sessions[i];
		if (ts->meta == NULL)
			continue;
		rs = &r->sessions[r->nsessions];
		rs->ts = ts;
		rs->pub.name = ts->name;
		rs->pub.path = ts->path;
		rs->pub.comm = ts->meta->procname != NULL ?
		    ts->meta->procname : "?";
		rs->pub.hostname = ts->meta->hostname != NULL ?
		    ts->meta->hostname : "";
		rs->pub.pid = ts->meta->vpid;
		rs->pub.number = rd_session_number(ts->name);
		rs->pub.meta = ts->meta;
		if (!reader_opts_session(&r->opts, &rs->pub))
			continue;
		if (ts->meta->nclasses > 0 && (rs->selected =
		    calloc(ts->meta->nclasses, 1)) == NULL)
			goto nomem;
		for (j = 0; j < ts->meta->nclasses; j++)
			rs->selected[j] = (uint8_t)reader_opts_class(&r->opts,
			    &ts->meta->classes[j]);
		rs->pub.index = r->nsessions++;
		if (rd_session_streams(r, rs, &cap) == -1)
			goto nomem;
	}
	for (i = 0; i < r->nsessions; i++)
		r->pub_sessions[i] = r->sessions[i].pub;
	if (r->nstreams > 1)
		qsort(r->streams, r->nstreams, sizeof(*r->streams),
		    rd_stream_cmp);
	if (r->nstreams > 0 && (r->heap = calloc(r->nstreams,
	    sizeof(*r->heap))) == NULL)
		goto nomem;
	for (i = 0; i < r->nstreams; i++) {
		r->streams[i].order = i;
		r->streams[i].thread.sess =
		    &r->pub_sessions[r->streams[i].rs->pub.index];
	}
	if (rd_threads(r) == -1)
		goto nomem;
	r->since_ns = reader_time_resolve(&r->opts.since, rd_trace_start(r),
	    INT64_MIN);
	r->until_ns = reader_time_resolve(&r->opts.until, rd_trace_start(r),
	    INT64_MAX);
	return 0;
nomem:
	rd_error(r, "out of memory");
	return -1;
}

/* ---- walking one stream ------------------------------------------------- */

static void
rd_close_fd(struct reader *r, struct rd_stream *s)
{
	if (s->fd != -1) {
		close(s->fd);
		s->fd = -1;
		r->nfds--;
	}
}

static void
rd_stream_close(struct reader *r, struct rd_stream *s)
{
	rd_close_fd(r, s);
	free(s->win);
	s->win = NULL;
	s->wcap = s->wlen = 0;
	s->done = 1;
}

/* Say an error of the walk, at most READER_STREAM_ERRORS per stream. */
static void
rd_stream_error(struct reader *r, struct rd_stream *s, uint64_t off,
    const char *what, const char *then)
{
	const char	*path = s->files[s->cur].f->path;

	s->nerrors++;
	if (s->nerrors < READER_STREAM_ERRORS)
		rd_error(r, "%s: offset %llu: %s%s", path,
		    (unsigned long long)off, what, then);
	else if (s->nerrors == READER_STREAM_ERRORS)
		rd_error(r, "%s: offset %llu: %s%s (and more errors in this "
		    "stream are not shown)", path, (unsigned long long)off,
		    what, then);
	else
		r->nerrors++;
}

/*
 * Slide the window: keep from tracedir_stream_keep() on, read more
 * after it, growing the window if the item needs more than it holds.
 * Returns 0, or -1 with the stream given up (said) or out of memory
 * (r->ended set).
 */
static int
rd_refill(struct reader *r, struct rd_stream *s)
{
	const struct tracedir_file *f = s->files[s->cur].f;
	uint64_t	 keep = tracedir_stream_keep(&s->st), have;
	uint64_t	 flen = s->st.flen;
	const char	*why;
	size_t		 ncap;
	uint8_t		*nw;
	ssize_t		 n;

	if (keep < s->wbase || keep > s->wbase + s->wlen) {
		s->wbase = keep;
		s->wlen = 0;
	}
	have = s->wbase + s->wlen - keep;
	if (have > 0 && keep > s->wbase)
		memmove(s->win, s->win + (keep - s->wbase), (size_t)have);
	s->wbase = keep;
	s->wlen = (size_t)have;
	if (s->wlen == s->wcap) {
		if (s->wcap >= READER_ITEM_MAX) {
			rd_stream_error(r, s, keep, "an item larger than 4 MiB "
			    "(corrupt?)", "; the rest of the stream is not "
			    "read");
			return -1;
		}
		ncap = s->wcap != 0 ? s->wcap * 2 : READER_WINDOW;
		if ((nw = realloc(s->win, ncap)) == NULL) {
			rd_error(r, "out of memory");
			r->ended = 1;
			return -1;
		}
		s->win = nw;
		s->wcap = ncap;
	}
	if (s->fd == -1) {
		if ((s->fd = rd_open(f->path, &why)) == -1) {
			rd_stream_error(r, s, keep, why,
			    "; the rest of the stream is not read");
			return -1;
		}
		r->nfds++;
	}
	n = 0;
	if (s->wbase + s->wlen < flen) {
		have = flen - (s->wbase + s->wlen);
		n = rd_pread(s->fd, s->win + s->wlen, have < s->wcap - s->wlen ?
		    (size_t)have : s->wcap - s->wlen, s->wbase + s->wlen);
	}
	/* Past READER_FDS_MAX open files, each read opens its own. */
	if (r->nfds > READER_FDS_MAX)
		rd_close_fd(r, s);
	if (n == -1) {
		rd_stream_error(r, s, s->wbase + s->wlen, strerror(errno),
		    "; the rest of the stream is not read");
		return -1;
	}
	if (n == 0) {
		rd_stream_error(r, s, s->wbase + s->wlen, "the file is "
		    "shorter than when it was listed", "; the rest of the "
		    "stream is not read");
		return -1;
	}
	s->wlen += (size_t)n;
	tracedir_stream_feed(&s->st, s->win, s->wlen, s->wbase);
	return 0;
}

static int
rd_item_at(struct reader *r, struct rd_stream *s, enum reader_kind kind,
    uint64_t ticks)
{
	struct reader_item *it = &s->item;

	(void)r;
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	it->sess = s->thread.sess;
	it->thread = &r->threads[s->cur_thread];
	it->ticks = ticks;
	it->ns = tracedir_ns(s->rs->ts->meta, ticks);
	return 1;
}

/* The losses of the finished packet that no traced:lost record said. */
static int
rd_packet_rest(struct reader *r, struct rd_stream *s)
{
	uint64_t	 rest;

	if (!s->pkt_open)
		return 0;
	s->pkt_open = 0;
	if (s->pkt_skipped || s->pkt_discarded <= s->pkt_recorded)
		return 0;
	rest = s->pkt_discarded - s->pkt_recorded;
	rd_item_at(r, s, READER_LOST, s->pkt_end_ticks);
	s->item.lost = rest;
	s->item.causes[READER_CAUSE_OTHER] = rest;
	return 1;
}

/* A packet was just read: note it, and say a gap before it. */
static int
rd_packet_begin(struct reader *r, struct rd_stream *s)
{
	const struct tracedir_packet *p = &s->st.packet;

	s->pkt_open = 1;
	s->pkt_skipped = 0;
	s->pkt_end_ticks = p->ts_end;
	s->pkt_discarded = p->discarded_new;
	s->pkt_recorded = 0;
	/* Its thread: a stream may hold several, one after the other. */
	s->cur_thread = rd_thread_of(s->rs, p->tid, s->cur_thread);
	if (r->opts.ntids > 0 && !rd_in(r->opts.tids, r->opts.ntids,
	    (int64_t)p->tid)) {
		tracedir_stream_skip_packet(&s->st);
		s->pkt_skipped = 1;
		return 0;
	}
	if (r->since_ns != INT64_MIN &&
	    tracedir_ns(s->rs->ts->meta, p->ts_end) < r->since_ns) {
		tracedir_stream_skip_packet(&s->st);
		s->pkt_skipped = 1;
		return 0;
	}
	if (p->seq_gap == 0)
		return 0;
	rd_item_at(r, s, READER_LOST, p->prev_end);
	s->item.packets = p->seq_gap;
	return 1;
}

/* A traced:lost record as an item. */
static void
rd_lost_record(struct reader *r, struct rd_stream *s)
{
	const struct tracedir_event *ev = &s->ev;
	unsigned	 i;

	rd_item_at(r, s, READER_LOST, ev->ts);
	s->item.lost = ev->values[0].u;
	for (i = 1; i < ev->nvalues && i - 1 < READER_CAUSE_OTHER; i++)
		s->item.causes[i - 1] = ev->values[i].u;
	if (__builtin_add_overflow(s->pkt_recorded, ev->values[0].u,
	    &s->pkt_recorded))
		s->pkt_recorded = UINT64_MAX;
}

/*
 * Move a stream to its next item that passes the filters.  Returns 1
 * with s->item set, 0 when the stream is done (closed).
 */
static int
rd_advance(struct reader *r, struct rd_stream *s)
{
	const struct tracedir_class *c;
	const struct tracedir_meta *m = s->rs->ts->meta;
	enum tracedir_item it;

	if (s->done)
		return 0;
	for (;;) {
		if (s->have_pending) {
			s->have_pending = 0;
			if (rd_packet_begin(r, s) && s->item.ns >= r->since_ns)
				return 1;
			continue;
		}
		it = tracedir_stream_next(&s->st, &s->ev);
		switch (it) {
		case TRACEDIR_MORE:
			if (rd_refill(r, s) == -1)
				goto done;
			continue;
		case TRACEDIR_PACKET:
			s->have_pending = 1;
			if (rd_packet_rest(r, s) && s->item.ns >= r->since_ns)
				return 1;
			continue;
		case TRACEDIR_EVENT:
			c = s->ev.cls;
			if (c->lost) {
				rd_lost_record(r, s);
				if (s->item.ns < r->since_ns)
					continue;
				return 1;
			}
			if (r->opts.lost_only ||
			    !s->rs->selected[c - m->classes])
				continue;
			rd_item_at(r, s, READER_EVENT, s->ev.ts);
			if (s->item.ns < r->since_ns)
				continue;
			s->item.ev = &s->ev;
			return 1;
		case TRACEDIR_ERROR:
			rd_stream_error(r, s, s->st.err_off, s->st.err,
			    s->st.in_packet && s->st.err_off < s->st.pkt_end ?
			    "; the rest of the packet is skipped" :
			    "; reading goes on at the next packet found");
			s->pkt_skipped = 1;
			tracedir_stream_resync(&s->st);
			continue;
		case TRACEDIR_END:
		default:
			if (rd_packet_rest(r, s) && s->item.ns >= r->since_ns)
				return 1;
			if (s->cur + 1 >= s->nfiles)
				goto done;
			rd_close_fd(r, s);
			s->cur++;
			s->wlen = 0;
			s->wbase = 0;
			tracedir_stream_next_file(&s->st,
			    s->files[s->cur].f->len);
			continue;
		}
	}
done:
	rd_stream_close(r, s);
	return 0;
}

/* ---- the merge ----------------------------------------------------------- */

static int
rd_before(const struct rd_stream *a, const struct rd_stream *b)
{
	if (a->item.ns != b->item.ns)
		return a->item.ns < b->item.ns;
	return a->order < b->order;
}

static void
rd_sift_down(struct rd_stream **h, size_t n, size_t i)
{
	struct rd_stream *tmp;
	size_t		 l, rr, min;

	for (;;) {
		l = 2 * i + 1;
		rr = l + 1;
		min = i;
		if (l < n && rd_before(h[l], h[min]))
			min = l;
		if (rr < n && rd_before(h[rr], h[min]))
			min = rr;
		if (min == i)
			return;
		tmp = h[i];
		h[i] = h[min];
		h[min] = tmp;
		i = min;
	}
}

static void
rd_sift_up(struct rd_stream **h, size_t i)
{
	struct rd_stream *tmp;
	size_t		 p;

	while (i > 0) {
		p = (i - 1) / 2;
		if (!rd_before(h[i], h[p]))
			return;
		tmp = h[i];
		h[i] = h[p];
		h[p] = tmp;
		i = p;
	}
}

/* Open a stream and put it in the heap if it has an item. */
static void
rd_activate(struct reader *r, struct rd_stream *s)
{
	tracedir_stream_open(&s->st, s->rs->ts->meta, s->files[0].f->len);
	if (rd_advance(r, s)) {
		r->heap[r->nheap] = s;
		rd_sift_up(r->heap, r->nheap++);
	}
}

/*
 * The next item.  Contract in reader.h.
 */
int
reader_next(struct reader *r, const struct reader_item **out)
{
	struct rd_stream *s;

	if (!r->started && reader_start(r) == -1)
		return -1;
	if (r->ended)
		return 0;
	if (r->opts.limit != 0 && r->given >= r->opts.limit)
		goto end;
	/* The stream of the last item moves on only now: that item's
	 * strings pointed into its window. */
	if ((s = r->last) != NULL) {
		r->last = NULL;
		if (rd_advance(r, s))
			rd_sift_down(r->heap, r->nheap, 0);
		else {
			r->heap[0] = r->heap[--r->nheap];
			rd_sift_down(r->heap, r->nheap, 0);
		}
	}
	for (;;) {
		/* Open every stream that starts before the next item. */
		while (r->next_pending < r->nstreams && (r->nheap == 0 ||
		    r->streams[r->next_pending].thread.first_ns <=
		    r->heap[0]->item.ns))
			rd_activate(r, &r->streams[r->next_pending++]);
		if (r->ended)
			return -1;
		if (r->nheap == 0)
			goto end;
		s = r->heap[0];
		if (s->item.ns > r->until_ns)
			goto end;
		break;
	}
	r->last = s;
	r->given++;
	*out = &s->item;
	return 1;
end:
	r->ended = 1;
	return 0;
}

/* ---- the rest ------------------------------------------------------------ */

const struct reader_session *
reader_sessions(const struct reader *r, size_t *n)
{
	*n = r->nsessions;
	return r->pub_sessions;
}

const struct reader_thread *
reader_threads(const struct reader *r, size_t *n)
{
	*n = r->nthreads;
	return r->threads;
}

size_t
reader_nerrors(const struct reader *r)
{
	return r->nerrors;
}

/*
 * A cause's name.  Contract in reader.h.
 */
const char *
reader_cause_name(enum reader_cause c)
{
	if ((unsigned)c < TRACED_DROP_PRODUCER_NCAUSES)
		return traced_cause_name((int)c);
	return c == READER_CAUSE_OTHER ? "other" : "?";
}

/*
 * Free a reader.  Contract in reader.h.
 */
void
reader_free(struct reader *r)
{
	size_t	 i, j;

	if (r == NULL)
		return;
	for (i = 0; i < r->nstreams; i++) {
		rd_close_fd(r, &r->streams[i]);
		free(r->streams[i].win);
		for (j = 0; j < r->streams[i].nfiles; j++)
			free(r->streams[i].files[j].tids);
		free(r->streams[i].files);
	}
	for (i = 0; i < r->nsessions; i++) {
		free(r->sessions[i].selected);
		free(r->sessions[i].by_tid);
	}
	free(r->streams);
	free(r->sessions);
	free(r->pub_sessions);
	free(r->threads);
	free(r->heap);
	tracedir_set_free(&r->set);
	reader_opts_free(&r->opts);
	free(r);
}
