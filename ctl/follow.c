/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * tracectl print --follow: what the daemon writes, as it writes it, like
 * tail -f on every stream of every session, merged by time, with the
 * filters of print (follow.h).
 *
 * DESIGN
 *
 * Reading the files, not asking the daemon for records.  The daemon
 * already writes a quiet thread's events within its drain interval
 * (drain.c: every ring is visited at least that often, 100 ms by
 * default, and what a visit read is written at once as whole packets),
 * so the files are as fresh as a copy of the records would be, cost
 * the daemon nothing more, and are read by the checked walk every
 * other reader uses (tracedir-stream.c).  The daemon is only asked,
 * every FW_ASK_MS, 'info trace': its running sessions and their
 * directories, the sessions that ended lately, its drain interval.
 *
 * Which sessions.  Every session directory the daemon names, running
 * or ended after print --follow began (with --since, after that time).
 * Those running at the start are read from their end as it was then
 * (with --since: from their beginning, the older events filtered out);
 * those found later, and every stream file that appears later, from
 * their beginning.  A directory the daemon no longer names as a running
 * session's (it ended, or 'trace-file set' moved it) is read to its end
 * and dropped once nothing came for FW_GRACE_NS: the daemon ends a
 * session only after its last packet is written.  The daemon keeps the
 * last 32 ended sessions: a burst of more short sessions between two
 * asks may go unseen, and is said.
 *
 * Whole packets only.  The daemon writes each packet with one pwritev()
 * at the end of its file, and cuts a failed write back to the last
 * whole packet, so the file's size can stop inside a packet for a
 * moment, and the bytes of an unfinished packet can change.  A probe
 * walk per file (its own copy of the walk's state) reads the packet
 * headers past what is known to be whole, and a packet counts as
 * whole once the file holds all of its packet_size; the walk of the
 * events is told the file ends there (tracedir_stream_grow()), so it
 * never reads a byte past a whole packet.  The metadata is read again
 * after the probes and before the walks go on when it grew (the daemon
 * appends a provider's description before any of its events reaches a
 * stream), so that the walk knows every event it meets.  A stream cut
 * into parts (stream-max-size) goes on in its next file once that file
 * has a whole packet: the daemon never writes the old part again.
 *
 * Order.  Each stream is read in order, so the events of one thread
 * are shown in order, each once.  Across threads and sessions, the
 * streams' next items are merged by time (a heap, as reader.c), and an
 * item is shown once it is older than the window (the drain interval
 * plus FW_SLACK_NS, 200 ms by default) or has waited that long since it
 * was read: a thread drained later than that shows its events late,
 * out of order with the others, never lost (its delta is then
 * negative).  An event is on screen within about the window plus one
 * tick after its trace call.
 *
 * Stopping.  SIGINT and SIGTERM end it at the next tick with status 0
 * (what the window still holds is not shown); so do --limit and
 * --until.  A reader that closed stdout's pipe ends it quietly.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "follow.h"
#include "tracectl.h"

#define FW_TICK_NS	(50 * INT64_C(1000000))	/* look at the files */
#define FW_ASK_MS	250			/* ask the daemon */
#define FW_SLACK_NS	(100 * INT64_C(1000000)) /* window: drain + this */
#define FW_GRACE_NS	(1000 * INT64_C(1000000)) /* a gone directory */
#define FW_META_WAIT_NS	(2000 * INT64_C(1000000)) /* metadata that fails */
#define FW_HDR_READ	4096u		/* bytes read at a packet header */
#define FW_WINDOW	(64u << 10)	/* a stream's window, at first */
#define FW_STREAM_ERRORS 10u		/* said per stream; then counted */

/* One version of a directory's metadata (it grows: new providers). */
struct fw_meta {
	struct tracedir_meta *m;	/* owned */
	struct reader_session pub;	/* what items point to */
	uint8_t		*selected;	/* owned: --event, per class */
	struct fw_meta	*older;		/* owned: held items may point
					   into it */
};

struct fw_stream;

/* One stream file. */
struct fw_file {
	char		*path;		/* owned */
	int		 fd;
	uint64_t	 done;		/* bytes of whole packets */
	struct tracedir_stream probe;	/* the header walk, up to done */
	int		 has_packet;	/* a whole one */
	int		 broken;	/* the probe met damage: the walk
					   reads the rest and says it */
	uint64_t	 instance;	/* of its first packet */
	uint64_t	 first_ticks;
	struct tracedir_stream *snap;	/* owned: the probe at the end of
					   the first look, to start from */
	struct fw_stream *stream;	/* borrowed: the one it joined */
};

/* One stream: its files in order, its walk, its next item. */
struct fw_stream {
	struct fw_dir	*dir;		/* borrowed */
	struct fw_meta	*fm;		/* borrowed: the walk's metadata */
	struct fw_file	**files;	/* owned array; files the dir's */
	size_t		 nfiles;
	size_t		 cur;
	int		 started;
	int		 dead;		/* a read failed: not read again */
	struct tracedir_stream st;
	struct tracedir_event ev;
	uint8_t		*win;		/* owned, wcap bytes */
	size_t		 wcap;
	size_t		 wlen;
	uint64_t	 wbase;
	unsigned	 nerrors;
	int		 pkt_open;	/* as in reader.c */
	int		 pkt_skipped;
	uint64_t	 pkt_end_ticks;
	uint64_t	 pkt_discarded;
	uint64_t	 pkt_recorded;
	int		 have_pending;
	const struct reader_thread *thread; /* the current packet's */
	struct reader_item item;
	int		 has_item;
	int64_t		 arrived;	/* ns, CLOCK_MONOTONIC */
	size_t		 order;		/* ties in the merge */
};

/* One session directory. */
struct fw_dir {
	char		*path;		/* owned */
	const char	*name;		/* into path */
	int		 from_start;	/* its streams from their beginning */
	int		 failed;	/* said; not read any more */
	int		 skipped;	/* the filters leave it out */
	int		 looked;	/* its files were listed once */
	struct fw_meta	*meta;		/* owned: the newest first */
	off_t		 meta_size;
	int64_t		 meta_bad_since; /* ns mono, 0: fine */
	struct timespec	 mtime;		/* of the directory, last listed */
	struct fw_file	**files;	/* owned */
	size_t		 nfiles;
	struct fw_stream **streams;	/* owned */
	size_t		 nstreams;
	struct reader_thread **threads;	/* owned */
	size_t		 nthreads;
	int		 finished;	/* read to its end, emptied: kept
					   while the daemon names it, so
					   that it is not read again */
	int		 named;		/* a running session's, in the
					   daemon's last answer */
	int		 listed;	/* in it at all (ended lately too) */
	int64_t		 gone_at;	/* ns mono: not named since; or 0 */
	int64_t		 moved_at;	/* ns mono: last progress */
	struct fw_dir	*next;
};

struct follow {
	const struct reader_opts *opts;	/* borrowed */
	follow_item_cb	 cb;
	reader_error_cb	 err;
	void		*arg;
	size_t		 nerrors;
	struct fw_dir	*dirs;		/* owned list */
	struct fw_stream **heap;	/* owned */
	size_t		 nheap;
	size_t		 heapcap;
	size_t		 next_index;	/* of a reader_session */
	size_t		 next_thread;
	size_t		 next_order;
	int64_t		 start;		/* ns, CLOCK_REALTIME */
	int64_t		 since_ns;	/* INT64_MIN: none */
	int64_t		 until_ns;	/* INT64_MAX: none */
	int64_t		 window;	/* ns */
	int		 asked;		/* the daemon answered once */
	int		 lost_daemon;	/* said */
	int64_t		 max_id;	/* session ids seen */
	uint64_t	 given;
	int		 nomem;
	int		 done;
};

static volatile sig_atomic_t fw_stop;

static void	fw_error(struct follow *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

static void
fw_error(struct follow *f, const char *fmt, ...)
{
	char	 msg[TRACEDIR_ERR_MAX + 2 * PATH_MAX];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	f->nerrors++;
	if (f->err != NULL)
		f->err(f->arg, msg);
}

static int64_t
fw_now(clockid_t clock)
{
	struct timespec	 ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void
fw_on_signal(int sig)
{
	(void)sig;
	fw_stop = 1;
}

/* ---- metadata ----------------------------------------------------------- */

static void
fw_meta_free(struct fw_meta *fm)
{
	struct fw_meta	*older;

	for (; fm != NULL; fm = older) {
		older = fm->older;
		tracedir_meta_free(fm->m);
		free(fm->selected);
		free(fm);
	}
}

/* The session number: the last '-' part of "comm-pid-number". */
static int64_t
fw_session_number(const char *name)
{
	const char	*dash = strrchr(name, '-');
	char		*end;
	long long	 v;

	if (dash == NULL || dash[1] < '0' || dash[1] > '9')
		return -1;
	errno = 0;
	v = strtoll(dash + 1, &end, 10);
	return errno != 0 || *end != '\0' ? -1 : v;
}

/*
 * Read the directory's metadata if it changed (or was never read), as
 * a new version the walks go on with.  Returns 1 when it is current, 0
 * when it cannot be read now (tried again; said if that lasts), -1
 * when out of memory.
 */
static int
fw_meta_load(struct follow *f, struct fw_dir *d)
{
	char		 path[PATH_MAX], err[TRACEDIR_ERR_MAX];
	struct tracedir_meta *m;
	struct fw_meta	*fm;
	struct stat	 st;
	uint8_t		*text;
	size_t		 len, i;
	int64_t		 now;

	snprintf(path, sizeof(path), "%s/metadata", d->path);
	if (stat(path, &st) == -1) {
		if (errno == ENOENT)
			return 0;	/* not written yet */
		snprintf(err, sizeof(err), "%s", strerror(errno));
		goto bad;
	}
	if (d->meta != NULL && st.st_size == d->meta_size)
		return 1;
	if (tracedir_read_file(path, TRACEDIR_METADATA_MAX, &text, &len, err,
	    sizeof(err)) == -1)
		goto bad;
	if (tracedir_meta_parse((const char *)text, len, path, &m, err,
	    sizeof(err)) == -1) {
		free(text);
		goto bad;
	}
	free(text);
	if ((fm = calloc(1, sizeof(*fm))) == NULL || (m->nclasses > 0 &&
	    (fm->selected = calloc(m->nclasses, 1)) == NULL)) {
		free(fm);
		tracedir_meta_free(m);
		return -1;
	}
	fm->m = m;
	fm->pub.index = f->next_index++;
	fm->pub.name = d->name;
	fm->pub.path = d->path;
	fm->pub.comm = m->procname != NULL ? m->procname : "?";
	fm->pub.hostname = m->hostname != NULL ? m->hostname : "";
	fm->pub.pid = m->vpid;
	fm->pub.number = fw_session_number(d->name);
	fm->pub.meta = m;
	for (i = 0; i < m->nclasses; i++)
		fm->selected[i] = (uint8_t)reader_opts_class(f->opts,
		    &m->classes[i]);
	fm->older = d->meta;
	d->meta = fm;
	d->meta_size = st.st_size;
	d->meta_bad_since = 0;
	d->skipped = !reader_opts_session(f->opts, &fm->pub);
	/* Every walk goes on with the new version. */
	for (i = 0; i < d->nstreams; i++) {
		d->streams[i]->fm = fm;
		d->streams[i]->st.meta = m;
	}
	for (i = 0; i < d->nfiles; i++)
		d->files[i]->probe.meta = m;
	return 1;
bad:
	/* An append seen half done parses badly: say it if it lasts. */
	now = fw_now(CLOCK_MONOTONIC);
	if (d->meta_bad_since == 0)
		d->meta_bad_since = now;
	else if (now - d->meta_bad_since > FW_META_WAIT_NS) {
		fw_error(f, "%s: %s (the session is not followed)", path, err);
		d->failed = 1;
	}
	return 0;
}

/* ---- files and their whole packets -------------------------------------- */

/*
 * Probe a file's packet headers past 'done' and move 'done' to the end
 * of the last whole packet.  Returns whether it moved.
 */
static int
fw_probe(struct follow *f, struct fw_file *ff)
{
	static struct tracedir_event ev;	/* never filled: see below */
	struct tracedir_stream	 save;
	uint8_t			 buf[FW_HDR_READ];
	struct stat		 st;
	uint64_t		 size, off, start = ff->done;
	ssize_t			 n;

	if (ff->broken || fstat(ff->fd, &st) == -1 || st.st_size < 0 ||
	    (uint64_t)st.st_size <= ff->done)
		return 0;
	size = (uint64_t)st.st_size;
	for (;;) {
		save = ff->probe;
		switch (tracedir_stream_next(&ff->probe, &ev)) {
		case TRACEDIR_MORE:
			off = tracedir_stream_keep(&ff->probe);
			if (off >= size || (ff->probe.buf != NULL &&
			    ff->probe.base == off &&
			    off + ff->probe.blen >= size))
				goto out;	/* a header not all there */
			if (ff->probe.buf != NULL && ff->probe.base == off)
				goto damage;	/* a 4 KiB header */
			n = pread(ff->fd, buf, size - off < sizeof(buf) ?
			    (size_t)(size - off) : sizeof(buf), (off_t)off);
			if (n <= 0)
				goto out;
			tracedir_stream_feed(&ff->probe, buf, (size_t)n, off);
			continue;
		case TRACEDIR_PACKET:
			if (ff->probe.pkt_end > size) {
				ff->probe = save;
				goto out;	/* being written */
			}
			if (!ff->has_packet) {
				ff->has_packet = 1;
				ff->instance = ff->probe.packet.instance;
				ff->first_ticks = ff->probe.packet.ts_begin;
			}
			tracedir_stream_skip_packet(&ff->probe);
			ff->done = ff->probe.pos;
			continue;
		case TRACEDIR_EVENT:	/* none: each packet is skipped */
			continue;
		case TRACEDIR_ERROR:
		case TRACEDIR_END:
		default:
			goto damage;
		}
	}
damage:
	/* Not a packet being written: the walk says what is wrong. */
	ff->broken = 1;
	ff->done = size;
	if (!ff->has_packet) {
		ff->has_packet = 1;
		ff->first_ticks = 0;
	}
out:
	(void)f;
	tracedir_stream_feed(&ff->probe, NULL, 0, ff->probe.pos);
	return ff->done > start;
}

static void
fw_file_free(struct fw_file *ff)
{
	if (ff == NULL)
		return;
	if (ff->fd != -1)
		close(ff->fd);
	free(ff->snap);
	free(ff->path);
	free(ff);
}

/* Open a stream file found in the directory.  -1 when out of memory. */
static int
fw_file_add(struct follow *f, struct fw_dir *d, const char *name)
{
	struct fw_file	*ff, **nf;
	struct stat	 st;

	if ((ff = calloc(1, sizeof(*ff))) == NULL)
		return -1;
	ff->fd = -1;
	if (asprintf(&ff->path, "%s/%s", d->path, name) == -1) {
		free(ff);
		return -1;
	}
	if ((nf = reallocarray(d->files, d->nfiles + 1, sizeof(*nf))) ==
	    NULL) {
		fw_file_free(ff);
		return -1;
	}
	d->files = nf;
	d->files[d->nfiles++] = ff;
	/* As reader.c: no symlink, no FIFO, only a regular file. */
	ff->fd = open(ff->path, O_RDONLY | O_CLOEXEC | O_NOCTTY |
	    O_NONBLOCK | O_NOFOLLOW);
	if (ff->fd == -1 || fstat(ff->fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		fw_error(f, "%s: %s", ff->path, ff->fd == -1 ?
		    strerror(errno) : "not a regular file");
		ff->broken = 1;		/* listed, never read */
		ff->has_packet = 0;
		return 0;
	}
	tracedir_stream_open(&ff->probe, d->meta->m, UINT64_MAX);
	fw_probe(f, ff);
	/* What was there at the first look is not shown (see DESIGN). */
	if (!d->looked && !d->from_start && ff->done > 0 &&
	    (ff->snap = malloc(sizeof(*ff->snap))) != NULL) {
		*ff->snap = ff->probe;
		ff->snap->flen = ff->done;
	} else if (!d->looked && !d->from_start && ff->done > 0)
		return -1;
	return 0;
}

/* Is 'name' one of d's files already? */
static int
fw_file_known(const struct fw_dir *d, const char *name)
{
	size_t	 i, n = strlen(d->path);

	for (i = 0; i < d->nfiles; i++)
		if (strcmp(d->files[i]->path + n + 1, name) == 0)
			return 1;
	return 0;
}

/*
 * List the directory's stream files when it changed (a new file
 * changes its mtime; one made in the same clock tick as the last look
 * may not, so a directory changed lately is listed again).  -1 when
 * out of memory.
 */
static int
fw_list(struct follow *f, struct fw_dir *d)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*dir;
	int64_t		 mt;

	if (stat(d->path, &st) == -1) {
		if (errno != ENOENT) {
			fw_error(f, "%s: %s (the session is not followed)",
			    d->path, strerror(errno));
			d->failed = 1;
		}
		return 0;	/* deleted: the daemon goes on elsewhere */
	}
	mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (d->looked && st.st_mtim.tv_sec == d->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == d->mtime.tv_nsec &&
	    fw_now(CLOCK_REALTIME) - mt > FW_GRACE_NS)
		return 0;
	d->mtime = st.st_mtim;
	if ((dir = opendir(d->path)) == NULL) {
		fw_error(f, "%s: %s (the session is not followed)", d->path,
		    strerror(errno));
		d->failed = 1;
		return 0;
	}
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, "metadata") ==
		    0 || (de->d_type != DT_REG && de->d_type != DT_UNKNOWN) ||
		    fw_file_known(d, de->d_name))
			continue;
		if (fw_file_add(f, d, de->d_name) == -1) {
			closedir(dir);
			return -1;
		}
	}
	closedir(dir);
	d->looked = 1;
	return 0;
}

/* ---- streams ------------------------------------------------------------ */

static int
fw_file_order(const void *a, const void *b)
{
	const struct fw_file *x = *(struct fw_file *const *)a;
	const struct fw_file *y = *(struct fw_file *const *)b;

	if (x->first_ticks != y->first_ticks)
		return x->first_ticks < y->first_ticks ? -1 : 1;
	return strverscmp(x->path, y->path);
}

/*
 * Give each file with a whole packet to its stream (by the stream
 * instance of its first packet), or to a new one.  -1 when out of
 * memory.
 */
static int
fw_join(struct follow *f, struct fw_dir *d)
{
	struct fw_stream *s, **ns;
	struct fw_file	*ff, **nf;
	size_t		 i, j;

	for (i = 0; i < d->nfiles; i++) {
		ff = d->files[i];
		if (ff->stream != NULL || !ff->has_packet || ff->fd == -1)
			continue;
		for (s = NULL, j = 0; j < d->nstreams && !ff->broken; j++)
			if (!d->streams[j]->files[0]->broken &&
			    d->streams[j]->files[0]->instance == ff->instance) {
				s = d->streams[j];
				break;
			}
		if (s == NULL) {
			if ((s = calloc(1, sizeof(*s))) == NULL)
				return -1;
			if ((ns = reallocarray(d->streams, d->nstreams + 1,
			    sizeof(*ns))) == NULL) {
				free(s);
				return -1;
			}
			d->streams = ns;
			d->streams[d->nstreams++] = s;
			s->dir = d;
			s->fm = d->meta;
			s->order = f->next_order++;
		}
		if ((nf = reallocarray(s->files, s->nfiles + 1,
		    sizeof(*nf))) == NULL)
			return -1;
		s->files = nf;
		s->files[s->nfiles++] = ff;
		ff->stream = s;
		/* A part that comes later starts later; until a stream
		 * starts, its files may be sorted. */
		if (!s->started && s->nfiles > 1)
			qsort(s->files, s->nfiles, sizeof(*s->files),
			    fw_file_order);
	}
	return 0;
}

/*
 * Probe a stream's files, the newest first: once a part has a whole
 * packet, the one before it is final, and probing it after the newer
 * one reads the last of it.  Returns whether any moved.
 */
static int
fw_probe_stream(struct follow *f, struct fw_stream *s)
{
	size_t	 i;
	int	 moved = 0;

	for (i = s->nfiles; i > s->cur; i--)
		moved |= fw_probe(f, s->files[i - 1]);
	return moved;
}

/*
 * Start a stream's walk: at the end of what its files held at the
 * first look (their snapshots), or at the beginning.
 */
static void
fw_start(struct fw_stream *s)
{
	size_t	 i;

	s->started = 1;
	for (i = s->nfiles; i > 0; i--)
		if (s->files[i - 1]->snap != NULL)
			break;
	if (i > 0) {
		s->cur = i - 1;
		s->st = *s->files[s->cur]->snap;
		s->st.meta = s->fm->m;
		tracedir_stream_feed(&s->st, NULL, 0, s->st.pos);
		s->wbase = s->st.pos;
	} else {
		s->cur = 0;
		tracedir_stream_open(&s->st, s->fm->m, 0);
	}
	tracedir_stream_grow(&s->st, s->files[s->cur]->done);
}

/* Let the walks read what the probes found whole. */
static void
fw_grant(struct fw_dir *d)
{
	struct fw_stream *s;
	size_t		 i;

	for (i = 0; i < d->nstreams; i++) {
		s = d->streams[i];
		if (!s->started)
			fw_start(s);
		else
			tracedir_stream_grow(&s->st, s->files[s->cur]->done);
	}
}

/* A session's thread by tid, made on its first packet.  NULL: no memory. */
static const struct reader_thread *
fw_thread(struct follow *f, struct fw_stream *s, uint64_t tid)
{
	struct fw_dir	*d = s->dir;
	struct reader_thread *t, **nt;
	size_t		 i;

	for (i = d->nthreads; i > 0; i--)
		if (d->threads[i - 1]->tid == tid)
			return d->threads[i - 1];
	if ((t = calloc(1, sizeof(*t))) == NULL ||
	    (nt = reallocarray(d->threads, d->nthreads + 1,
	    sizeof(*nt))) == NULL) {
		free(t);
		f->nomem = 1;
		return NULL;
	}
	d->threads = nt;
	d->threads[d->nthreads++] = t;
	t->index = f->next_thread++;
	t->sess = &s->fm->pub;
	t->tid = tid;
	t->first_ns = tracedir_ns(s->fm->m, s->st.packet.ts_begin);
	return t;
}

/* Say an error of the walk, at most FW_STREAM_ERRORS per stream. */
static void
fw_stream_error(struct follow *f, struct fw_stream *s, uint64_t off,
    const char *what, const char *then)
{
	const char	*path = s->files[s->cur]->path;

	s->nerrors++;
	if (s->nerrors < FW_STREAM_ERRORS)
		fw_error(f, "%s: offset %llu: %s%s", path,
		    (unsigned long long)off, what, then);
	else if (s->nerrors == FW_STREAM_ERRORS)
		fw_error(f, "%s: offset %llu: %s%s (and more errors in this "
		    "stream are not shown)", path, (unsigned long long)off,
		    what, then);
	else
		f->nerrors++;
}

/*
 * Slide the window over the whole packets (never past st.flen): keep
 * from tracedir_stream_keep() on, read what follows.  0, or -1 with
 * the stream given up (said) or out of memory (f->nomem).
 */
static int
fw_refill(struct follow *f, struct fw_stream *s)
{
	struct fw_file	*ff = s->files[s->cur];
	uint64_t	 keep = tracedir_stream_keep(&s->st), have;
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
			fw_stream_error(f, s, keep, "an item larger than 4 MiB "
			    "(corrupt?)", "; the rest of the stream is not "
			    "read");
			return -1;
		}
		ncap = s->wcap != 0 ? s->wcap * 2 : FW_WINDOW;
		if ((nw = realloc(s->win, ncap)) == NULL) {
			f->nomem = 1;
			return -1;
		}
		s->win = nw;
		s->wcap = ncap;
	}
	have = s->st.flen - (s->wbase + s->wlen);
	do
		n = pread(ff->fd, s->win + s->wlen, have < s->wcap - s->wlen ?
		    (size_t)have : s->wcap - s->wlen,
		    (off_t)(s->wbase + s->wlen));
	while (n == -1 && errno == EINTR);
	if (n <= 0) {
		fw_stream_error(f, s, s->wbase + s->wlen, n == 0 ? "the file "
		    "is shorter than it was" : strerror(errno), "; the rest "
		    "of the stream is not read");
		return -1;
	}
	s->wlen += (size_t)n;
	tracedir_stream_feed(&s->st, s->win, s->wlen, s->wbase);
	return 0;
}

static void
fw_item_at(struct fw_stream *s, enum reader_kind kind, uint64_t ticks)
{
	struct reader_item *it = &s->item;

	memset(it, 0, sizeof(*it));
	it->kind = kind;
	it->sess = &s->fm->pub;
	it->thread = s->thread;
	it->ticks = ticks;
	it->ns = tracedir_ns(s->fm->m, ticks);
}

/* The losses of the finished packet that no traced:lost record said. */
static int
fw_packet_rest(struct fw_stream *s)
{
	uint64_t	 rest;

	if (!s->pkt_open)
		return 0;
	s->pkt_open = 0;
	if (s->pkt_skipped || s->pkt_discarded <= s->pkt_recorded)
		return 0;
	rest = s->pkt_discarded - s->pkt_recorded;
	fw_item_at(s, READER_LOST, s->pkt_end_ticks);
	s->item.lost = rest;
	s->item.causes[READER_CAUSE_OTHER] = rest;
	return 1;
}

/* A packet was just read: note it, filter it, say a gap before it. */
static int
fw_packet_begin(struct follow *f, struct fw_stream *s)
{
	const struct tracedir_packet *p = &s->st.packet;
	const struct reader_opts *o = f->opts;
	size_t		 i;
	int		 tid_ok = o->ntids == 0;

	s->pkt_open = 1;
	s->pkt_skipped = 0;
	s->pkt_end_ticks = p->ts_end;
	s->pkt_discarded = p->discarded_new;
	s->pkt_recorded = 0;
	if ((s->thread = fw_thread(f, s, p->tid)) == NULL)
		return 0;
	for (i = 0; i < o->ntids; i++)
		tid_ok |= o->tids[i] == (int64_t)p->tid;
	if (!tid_ok || (f->since_ns != INT64_MIN &&
	    tracedir_ns(s->fm->m, p->ts_end) < f->since_ns)) {
		tracedir_stream_skip_packet(&s->st);
		s->pkt_skipped = 1;
		return 0;
	}
	if (p->seq_gap == 0)
		return 0;
	fw_item_at(s, READER_LOST, p->prev_end);
	s->item.packets = p->seq_gap;
	return 1;
}

/* A traced:lost record as an item. */
static void
fw_lost_record(struct fw_stream *s)
{
	const struct tracedir_event *ev = &s->ev;
	unsigned	 i;

	fw_item_at(s, READER_LOST, ev->ts);
	s->item.lost = ev->values[0].u;
	for (i = 1; i < ev->nvalues && i - 1 < READER_CAUSE_OTHER; i++)
		s->item.causes[i - 1] = ev->values[i].u;
	if (__builtin_add_overflow(s->pkt_recorded, ev->values[0].u,
	    &s->pkt_recorded))
		s->pkt_recorded = UINT64_MAX;
}

/*
 * Move a stream to its next item that passes the filters, in what is
 * whole so far.  Returns 1 with s->item set, 0 when there is none yet.
 */
static int
fw_advance(struct follow *f, struct fw_stream *s)
{
	const struct tracedir_class *c;
	struct fw_file	*next;

	s->has_item = 0;
	if (s->dead || !s->started)
		return 0;
	for (;;) {
		if (f->nomem)
			return 0;
		if (s->have_pending) {
			s->have_pending = 0;
			if (fw_packet_begin(f, s) && s->item.ns >= f->since_ns)
				break;
			continue;
		}
		switch (tracedir_stream_next(&s->st, &s->ev)) {
		case TRACEDIR_MORE:
			if (fw_refill(f, s) == -1) {
				s->dead = 1;
				return 0;
			}
			continue;
		case TRACEDIR_PACKET:
			s->have_pending = 1;
			if (fw_packet_rest(s) && s->item.ns >= f->since_ns)
				break;
			continue;
		case TRACEDIR_EVENT:
			c = s->ev.cls;
			if (c->lost) {
				fw_lost_record(s);
				if (s->item.ns < f->since_ns)
					continue;
				break;
			}
			if (f->opts->lost_only ||
			    !s->fm->selected[c - s->fm->m->classes])
				continue;
			fw_item_at(s, READER_EVENT, s->ev.ts);
			if (s->item.ns < f->since_ns)
				continue;
			s->item.ev = &s->ev;
			break;
		case TRACEDIR_ERROR:
			fw_stream_error(f, s, s->st.err_off, s->st.err,
			    s->st.in_packet && s->st.err_off < s->st.pkt_end ?
			    "; the rest of the packet is skipped" :
			    "; reading goes on at the next packet found");
			s->pkt_skipped = 1;
			tracedir_stream_resync(&s->st);
			continue;
		case TRACEDIR_END:
		default:
			if (fw_packet_rest(s) && s->item.ns >= f->since_ns)
				break;
			/* The next part, once it has a whole packet. */
			if (s->cur + 1 >= s->nfiles ||
			    (next = s->files[s->cur + 1])->done == 0)
				return 0;
			s->cur++;
			s->wlen = 0;
			s->wbase = 0;
			tracedir_stream_next_file(&s->st, next->done);
			continue;
		}
		break;
	}
	s->has_item = 1;
	s->arrived = fw_now(CLOCK_MONOTONIC);
	return 1;
}

static void
fw_stream_free(struct fw_stream *s)
{
	free(s->win);
	free(s->files);
	free(s);
}

/* ---- the merge ---------------------------------------------------------- */

static int
fw_before(const struct fw_stream *a, const struct fw_stream *b)
{
	if (a->item.ns != b->item.ns)
		return a->item.ns < b->item.ns;
	return a->order < b->order;
}

static void
fw_sift_down(struct fw_stream **h, size_t n, size_t i)
{
	struct fw_stream *tmp;
	size_t		 l, r, min;

	for (;;) {
		l = 2 * i + 1;
		r = l + 1;
		min = i;
		if (l < n && fw_before(h[l], h[min]))
			min = l;
		if (r < n && fw_before(h[r], h[min]))
			min = r;
		if (min == i)
			return;
		tmp = h[i];
		h[i] = h[min];
		h[min] = tmp;
		i = min;
	}
}

static int
fw_heap_push(struct follow *f, struct fw_stream *s)
{
	struct fw_stream **nh, *tmp;
	size_t		 i, p, cap;

	if (f->nheap == f->heapcap) {
		cap = f->heapcap != 0 ? f->heapcap * 2 : 64;
		if ((nh = reallocarray(f->heap, cap, sizeof(*nh))) == NULL)
			return -1;
		f->heap = nh;
		f->heapcap = cap;
	}
	i = f->nheap++;
	f->heap[i] = s;
	while (i > 0) {
		p = (i - 1) / 2;
		if (!fw_before(f->heap[i], f->heap[p]))
			break;
		tmp = f->heap[i];
		f->heap[i] = f->heap[p];
		f->heap[p] = tmp;
		i = p;
	}
	return 0;
}

/* May the item be shown now (see DESIGN, Order)? */
static int
fw_ripe(const struct follow *f, const struct fw_stream *s, int64_t real,
    int64_t mono)
{
	return s->item.ns <= real - f->window ||
	    mono - s->arrived >= f->window;
}

/* Show the items the window lets go, in time order.  -1: no memory. */
static int
fw_emit(struct follow *f)
{
	int64_t		 real = fw_now(CLOCK_REALTIME);
	int64_t		 mono = fw_now(CLOCK_MONOTONIC);
	struct fw_stream *s;

	while (f->nheap > 0 && !f->done) {
		s = f->heap[0];
		if (!fw_ripe(f, s, real, mono))
			break;
		if (s->item.ns <= f->until_ns) {
			if (f->cb(f->arg, &s->item) == -1)
				return -1;
			if (f->opts->limit != 0 && ++f->given >=
			    f->opts->limit)
				f->done = 1;
		}
		/* The item's strings were in s's window: only now. */
		if (fw_advance(f, s))
			fw_sift_down(f->heap, f->nheap, 0);
		else {
			f->heap[0] = f->heap[--f->nheap];
			fw_sift_down(f->heap, f->nheap, 0);
		}
	}
	if (f->until_ns != INT64_MAX && real - f->window > f->until_ns &&
	    (f->nheap == 0 || f->heap[0]->item.ns > f->until_ns))
		f->done = 1;
	return f->nomem ? -1 : 0;
}

/* ---- directories -------------------------------------------------------- */

/* Free what a directory holds but its name (see fw_dir.finished). */
static void
fw_dir_finish(struct fw_dir *d)
{
	size_t	 i;

	for (i = 0; i < d->nstreams; i++)
		fw_stream_free(d->streams[i]);
	for (i = 0; i < d->nfiles; i++)
		fw_file_free(d->files[i]);
	for (i = 0; i < d->nthreads; i++)
		free(d->threads[i]);
	free(d->streams);
	free(d->files);
	free(d->threads);
	fw_meta_free(d->meta);
	d->streams = NULL;
	d->files = NULL;
	d->threads = NULL;
	d->meta = NULL;
	d->nstreams = d->nfiles = d->nthreads = 0;
	d->finished = 1;
}

static void
fw_dir_free(struct fw_dir *d)
{
	fw_dir_finish(d);
	free(d->path);
	free(d);
}

/*
 * One look at a directory: new files, whole packets, the metadata if
 * it grew, and the walks let on.  -1 when out of memory.
 */
static int
fw_look(struct follow *f, struct fw_dir *d, int64_t mono)
{
	size_t	 i;
	int	 moved = 0, rc;

	if (d->failed || d->skipped || d->finished)
		return 0;
	if (d->meta == NULL) {
		if ((rc = fw_meta_load(f, d)) <= 0)
			return rc;
		if (d->skipped)
			return 0;
	}
	if (fw_list(f, d) == -1)
		return -1;
	for (i = 0; i < d->nfiles; i++)
		if (d->files[i]->stream == NULL && d->files[i]->fd != -1 &&
		    !d->files[i]->has_packet)
			moved |= fw_probe(f, d->files[i]);
	if (fw_join(f, d) == -1)
		return -1;
	for (i = 0; i < d->nstreams; i++)
		moved |= fw_probe_stream(f, d->streams[i]);
	/*
	 * After the probes: the metadata then describes what they found.
	 * Until a version that failed to parse (an append seen half done)
	 * reads, the walks wait.
	 */
	if (moved)
		d->moved_at = mono;
	if ((moved || d->meta_bad_since != 0) &&
	    (rc = fw_meta_load(f, d)) <= 0)
		return rc;
	fw_grant(d);
	return 0;
}

/* Can a directory the daemon no longer names be dropped? */
static int
fw_dir_over(const struct fw_dir *d, int64_t mono)
{
	size_t	 i;

	if (d->finished || d->gone_at == 0 || mono - d->gone_at <
	    FW_GRACE_NS || mono - d->moved_at < FW_GRACE_NS)
		return 0;
	for (i = 0; i < d->nstreams; i++)
		if (d->streams[i]->has_item)
			return 0;
	return 1;
}

static struct fw_dir *
fw_dir_find(struct follow *f, const char *path)
{
	struct fw_dir	*d;

	for (d = f->dirs; d != NULL; d = d->next)
		if (strcmp(d->path, path) == 0)
			return d;
	return NULL;
}

/* Follow a directory the daemon named.  -1 when out of memory. */
static int
fw_dir_add(struct follow *f, const char *path, int from_start)
{
	struct fw_dir	*d;
	const char	*slash;

	if ((d = calloc(1, sizeof(*d))) == NULL ||
	    (d->path = strdup(path)) == NULL) {
		free(d);
		return -1;
	}
	slash = strrchr(d->path, '/');
	d->name = slash != NULL ? slash + 1 : d->path;
	d->from_start = from_start;
	d->named = 1;
	d->listed = 1;
	d->moved_at = fw_now(CLOCK_MONOTONIC);
	d->next = f->dirs;
	f->dirs = d;
	return 0;
}

/* ---- asking the daemon -------------------------------------------------- */

static int64_t
fw_jint(json_t *o, const char *key, int64_t dflt)
{
	json_t		*v = json_object_get(o, key);
	const char	*s;
	char		*end;
	long long	 n;

	if (json_is_integer(v))
		return json_integer_value(v);
	if (!json_is_string(v))
		return dflt;
	s = json_string_value(v);
	errno = 0;
	n = strtoll(s, &end, 10);
	return errno != 0 || end == s || *end != '\0' ? dflt : n;
}

/*
 * Note what the answer says of one session: follow its directory if it
 * is new to us.  -1 when out of memory.
 */
static int
fw_session_seen(struct follow *f, json_t *o, int live, int64_t *lo,
    int64_t *hi)
{
	const char	*dir = json_string_value(json_object_get(o, "dir"));
	int64_t		 id = fw_jint(o, "session", -1), ended;
	struct fw_dir	*d;

	if (id >= 0 && (*lo == -1 || id < *lo))
		*lo = id;
	if (id > *hi)
		*hi = id;
	/* No directory yet (nothing recorded), or not one we can use. */
	if (dir == NULL || dir[0] != '/')
		return 0;
	if ((d = fw_dir_find(f, dir)) != NULL) {
		d->named |= live;
		d->listed = 1;
		return 0;
	}
	if (live)
		return fw_dir_add(f, dir, f->asked ||
		    f->since_ns != INT64_MIN);
	/* Ended: only if it ended after we began (or after --since). */
	ended = fw_jint(o, "ended_ns", 0);
	if (ended < (f->since_ns != INT64_MIN ? f->since_ns : f->start))
		return 0;
	if (fw_dir_add(f, dir, 1) == -1)
		return -1;
	f->dirs->named = 0;
	return 0;
}

/*
 * Ask the daemon for its sessions.  Returns 0, -1 when out of memory,
 * or the exit status of a failure at the first ask (said).  Later
 * failures are said once, and the directories followed so far are
 * read on.
 */
static int
fw_ask(struct follow *f)
{
	static char	 w_info[] = "info", w_trace[] = "trace";
	char		*words[] = { w_info, w_trace };
	struct fw_dir	*d, **pd;
	json_t		*items, *o;
	const char	*type;
	int64_t		 mono = fw_now(CLOCK_MONOTONIC), lo = -1, hi = -1;
	int64_t		 nended = 0, drain;
	size_t		 i;
	int		 rc;

	if ((rc = tracectl_ask(2, words, f->asked, &items)) != EXIT_DONE) {
		if (!f->asked)
			return rc;
		if (!f->lost_daemon)
			fw_error(f, "print: the daemon does not answer: the "
			    "sessions found so far are followed, new ones "
			    "once it answers again");
		f->lost_daemon = 1;
		return 0;
	}
	if (f->lost_daemon)
		fprintf(stderr, "tracectl: print: the daemon answers again\n");
	f->lost_daemon = 0;
	for (d = f->dirs; d != NULL; d = d->next)
		d->named = d->listed = 0;
	rc = 0;
	for (i = 0; rc == 0 && i < json_array_size(items); i++) {
		o = json_array_get(items, i);
		if ((type = json_string_value(json_object_get(o, "type"))) ==
		    NULL)
			continue;
		if (strcmp(type, "trace") == 0) {
			drain = fw_jint(o, "drain_interval_ms", 100);
			if (drain < 1 || drain > 60000)
				drain = 100;
			f->window = drain * 1000000 + FW_SLACK_NS;
		} else if (strcmp(type, "session") == 0)
			rc = fw_session_seen(f, o, 1, &lo, &hi);
		else if (strcmp(type, "ended_session") == 0) {
			nended++;
			rc = fw_session_seen(f, o, 0, &lo, &hi);
		}
	}
	json_decref(items);
	if (rc == -1)
		return -1;
	/*
	 * Session ids count up in one daemon's run; the daemon keeps the
	 * last 32 ended ones.  A full list that starts past the ids we
	 * saw had others before it.
	 */
	if (f->asked && nended >= 32 && lo > f->max_id + 1 && hi >= f->max_id)
		fw_error(f, "print: %lld sessions began and ended between two "
		    "looks at the daemon (it keeps the last 32): their events "
		    "are not shown", (long long)(lo - f->max_id - 1));
	if (hi >= 0)
		f->max_id = hi;
	for (pd = &f->dirs; (d = *pd) != NULL; ) {
		if (d->named)
			d->gone_at = 0;
		else if (d->gone_at == 0)
			d->gone_at = mono;
		/* Out of the daemon's list: it cannot come back. */
		if (d->finished && !d->listed) {
			*pd = d->next;
			fw_dir_free(d);
		} else
			pd = &d->next;
	}
	f->asked = 1;
	return 0;
}

/* ---- the loop ----------------------------------------------------------- */

/* One tick: every directory looked at, the walks filled, items shown. */
static int
fw_tick(struct follow *f)
{
	struct fw_dir	*d;
	int64_t		 mono = fw_now(CLOCK_MONOTONIC);
	size_t		 i;

	for (d = f->dirs; d != NULL; d = d->next)
		if (fw_look(f, d, mono) == -1)
			return -1;
	for (d = f->dirs; d != NULL; d = d->next)
		for (i = 0; i < d->nstreams; i++)
			if (!d->streams[i]->has_item &&
			    fw_advance(f, d->streams[i]) &&
			    fw_heap_push(f, d->streams[i]) == -1)
				return -1;
	if (f->nomem || fw_emit(f) == -1)
		return -1;
	for (d = f->dirs; d != NULL; d = d->next)
		if (fw_dir_over(d, mono))
			fw_dir_finish(d);
	return 0;
}

/*
 * Flush what was shown.  Returns 0, or 1 when stdout's reader is gone
 * (its buffer is dropped, quietly), -1 for another write error.
 */
static int
fw_flush(int is_pipe)
{
	struct pollfd	 pfd = { STDOUT_FILENO, 0, 0 };

	if (fflush(stdout) == EOF || ferror(stdout)) {
		if (errno != EPIPE)
			return -1;
		__fpurge(stdout);
		clearerr(stdout);
		return 1;
	}
	/* Nothing to write for a while: a closed pipe says POLLERR. */
	if (is_pipe && poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLERR))
		return 1;
	return 0;
}

/*
 * Follow the daemon's sessions.  Contract in follow.h.
 */
int
follow_main(const struct reader_opts *o, follow_item_cb cb,
    reader_error_cb err, void *arg)
{
	struct sigaction sa, old_int, old_term, old_pipe;
	struct timespec	 tick = { 0, FW_TICK_NS };
	struct follow	 f;
	struct fw_dir	*d;
	struct stat	 st;
	int64_t		 next_ask = 0, mono;
	int		 ret = EXIT_DONE, rc, is_pipe;

	memset(&f, 0, sizeof(f));
	f.opts = o;
	f.cb = cb;
	f.err = err;
	f.arg = arg;
	f.start = fw_now(CLOCK_REALTIME);
	f.window = 100 * INT64_C(1000000) + FW_SLACK_NS;
	f.max_id = -1;
	f.since_ns = reader_time_resolve(&o->since, f.start, INT64_MIN);
	f.until_ns = reader_time_resolve(&o->until, f.start, INT64_MAX);
	is_pipe = fstat(STDOUT_FILENO, &st) == 0 && S_ISFIFO(st.st_mode);

	/* No SA_RESTART: the tick's sleep ends at once. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fw_on_signal;
	sigemptyset(&sa.sa_mask);
	fw_stop = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, &old_pipe);

	while (!fw_stop && !f.done) {
		mono = fw_now(CLOCK_MONOTONIC);
		if (mono >= next_ask) {
			next_ask = mono + FW_ASK_MS * INT64_C(1000000);
			if ((rc = fw_ask(&f)) > 0) {
				ret = rc;	/* said by tracectl_ask() */
				goto out;
			}
			if (rc == -1)
				goto nomem;
		}
		if (fw_tick(&f) == -1)
			goto nomem;
		if ((rc = fw_flush(is_pipe)) == 1)
			goto out;
		if (rc == -1) {
			fprintf(stderr, "tracectl: print: cannot write the "
			    "output: %s\n", strerror(errno));
			ret = EXIT_FAILED;
			goto out;
		}
		if (!f.done)
			nanosleep(&tick, NULL);
	}
	goto out;
nomem:
	fw_error(&f, "out of memory");
	ret = EXIT_FAILED;
out:
	if (fw_flush(0) == 1)
		ret = ret == EXIT_FAILED ? ret : EXIT_DONE;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
	while ((d = f.dirs) != NULL) {
		f.dirs = d->next;
		fw_dir_free(d);
	}
	free(f.heap);
	if (ret == EXIT_DONE && f.nerrors > 0)
		ret = EXIT_FAILED;
	return ret;
}
