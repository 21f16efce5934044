/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The I/O half of the trace directory reader: find the session
 * directories under a path, read each one's metadata and parse it with
 * the pure core (tsdl.c), and list its stream files with their
 * sizes.  The stream files themselves are read later, a window at a
 * time, by the reader that walks them (reader.c): nothing here holds a
 * stream's bytes, so a trace of any size loads in memory proportional
 * to its number of files and the size of its metadata.
 *
 * A session directory is one that holds a file named 'metadata'; its
 * streams are its other regular files, except those whose name starts
 * with '.', as CTF readers do (traced names them stream-<tid>).  A
 * directory without metadata is searched for sessions, a few levels
 * deep, in name order, so that a trace directory, a session directory
 * or a directory of trace directories all work.
 *
 * Metadata is read whole with read(), never mapped: a file that
 * shrinks while it is read gives a short read, where a mapping would
 * give SIGBUS.  It has a size limit, checked before anything is
 * allocated for it, and the number of files is bounded.  Problems are
 * reported through a callback and loading goes on with the other
 * files; only running out of memory stops it.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracedir.h"

/* What one load is doing. */
struct tdio_load {
	struct tracedir_set *set;
	tracedir_error_cb cb;
	void		*arg;
	int		 nerr;		/* problems reported */
	int		 nomem;
};

static void	tdio_error(struct tdio_load *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

static void
tdio_error(struct tdio_load *L, const char *fmt, ...)
{
	char	msg[TRACEDIR_ERR_MAX + PATH_MAX];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	L->nerr++;
	if (L->cb != NULL)
		L->cb(L->arg, msg);
}

/*
 * Read a file whole, with a size limit.  Contract in tracedir.h.
 */
int
tracedir_read_file(const char *path, size_t max, uint8_t **data, size_t *len,
    char *err, size_t errlen)
{
	struct stat	 st;
	uint8_t		*buf = NULL;
	size_t		 size, got = 0;
	ssize_t		 n;
	int		 fd, saved;

	*data = NULL;
	*len = 0;
	/* Input from a trace directory: a FIFO planted there must not
	 * hold tracectl at open() (O_NONBLOCK), nor a symlink lead it to a
	 * file the directory's writer could not read itself. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
	    O_NOFOLLOW)) == -1) {
		saved = errno;
		if (saved == ELOOP)
			snprintf(err, errlen, "a symbolic link (not "
			    "followed)");
		else
			snprintf(err, errlen, "%s", strerror(saved));
		errno = saved;
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s", strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "not a regular file");
		errno = EINVAL;
		goto fail;
	}
	if (st.st_size < 0 || (uint64_t)st.st_size > max) {
		snprintf(err, errlen, "%lld bytes: larger than the %zu bytes "
		    "tracectl reads (a corrupt or foreign file?)",
		    (long long)st.st_size, max);
		errno = EFBIG;
		goto fail;
	}
	size = (size_t)st.st_size;
	if ((buf = malloc(size + 1)) == NULL) {
		snprintf(err, errlen, "out of memory for %zu bytes", size);
		errno = ENOMEM;
		goto fail;
	}
	/* Up to the size fstat() gave: a file that grows meanwhile is
	 * read as it was; one that shrinks ends early. */
	while (got < size) {
		n = read(fd, buf + got, size - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(err, errlen, "%s", strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = 0;
	close(fd);
	*data = buf;
	*len = got;
	return 0;
fail:
	saved = errno;
	free(buf);
	close(fd);
	errno = saved;
	return -1;
}

static int
tdio_name_cmp(const void *a, const void *b)
{
	const struct tracedir_file *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* ".", ".." and hidden files are neither streams nor sessions. */
static int
tdio_skip_name(const char *name)
{
	return name[0] == '.';
}

/* path + "/" + name in a new string, or NULL. */
static char *
tdio_join(const char *path, const char *name)
{
	char	*s;

	if (asprintf(&s, "%s/%s", path, name) == -1)
		return NULL;
	return s;
}

static struct tracedir_session *
tdio_session_add(struct tdio_load *L, const char *path)
{
	struct tracedir_set	*set = L->set;
	struct tracedir_session	*ns, *s;
	const char		*slash;
	size_t			 cap;

	if (set->nsessions == set->cap) {
		cap = set->cap != 0 ? set->cap * 2 : 16;
		if ((ns = reallocarray(set->sessions, cap, sizeof(*ns))) ==
		    NULL)
			return NULL;
		set->sessions = ns;
		set->cap = cap;
	}
	s = &set->sessions[set->nsessions];
	memset(s, 0, sizeof(*s));
	if ((s->path = strdup(path)) == NULL)
		return NULL;
	slash = strrchr(s->path, '/');
	s->name = slash != NULL && slash[1] != '\0' ? slash + 1 : s->path;
	set->nsessions++;
	return s;
}

/* Read the stream files of session s (its metadata is good). */
static int
tdio_session_files(struct tdio_load *L, struct tracedir_session *s)
{
	struct dirent	**list = NULL;
	struct tracedir_file *f, *nf;
	struct stat	 st;
	char		*path;
	size_t		 cap = 0;
	int		 i, n;

	if ((n = scandir(s->path, &list, NULL, alphasort)) == -1) {
		tdio_error(L, "%s: %s", s->path, strerror(errno));
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (tdio_skip_name(list[i]->d_name) ||
		    strcmp(list[i]->d_name, "metadata") == 0)
			continue;
		if ((path = tdio_join(s->path, list[i]->d_name)) == NULL)
			goto nomem;
		/* Sub-directories (LTTng's index/) are not streams; nor
		 * is anything else but a regular file, and a symbolic
		 * link is not followed (said: a trace directory's writer
		 * may have planted it). */
		if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
			if (!S_ISDIR(st.st_mode))
				tdio_error(L, "%s: %s: not read", path,
				    S_ISLNK(st.st_mode) ? "a symbolic link" :
				    "not a regular file");
			free(path);
			continue;
		}
		if (L->set->nfiles == TRACEDIR_FILES_MAX) {
			tdio_error(L, "%s: more than %u stream files: the "
			    "rest is not read", path, TRACEDIR_FILES_MAX);
			free(path);
			break;
		}
		if (s->nfiles == cap) {
			cap = cap != 0 ? cap * 2 : 8;
			if ((nf = reallocarray(s->files, cap,
			    sizeof(*nf))) == NULL) {
				free(path);
				goto nomem;
			}
			s->files = nf;
		}
		f = &s->files[s->nfiles];
		memset(f, 0, sizeof(*f));
		f->path = path;
		f->name = path + strlen(s->path) + 1;
		if (stat(path, &st) == -1) {
			tdio_error(L, "%s: %s", path, strerror(errno));
			free(path);
			continue;
		}
		f->len = (uint64_t)st.st_size;
		s->nfiles++;
		L->set->nfiles++;
	}
	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
	if (s->nfiles > 1)
		qsort(s->files, s->nfiles, sizeof(*s->files), tdio_name_cmp);
	return 0;
nomem:
	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
	L->nomem = 1;
	return -1;
}

/* A directory holding 'metadata' at mdpath. */
static int
tdio_session(struct tdio_load *L, const char *path, const char *mdpath)
{
	struct tracedir_session *s;
	char		 err[TRACEDIR_ERR_MAX + PATH_MAX];
	uint8_t		*text;
	size_t		 len;
	int		 ret;

	if ((s = tdio_session_add(L, path)) == NULL) {
		L->nomem = 1;
		return -1;
	}
	if (tracedir_read_file(mdpath, TRACEDIR_METADATA_MAX, &text, &len,
	    err, sizeof(err)) == -1) {
		tdio_error(L, "%s: %s", mdpath, err);
		return 0;
	}
	ret = tracedir_meta_parse((const char *)text, len, mdpath, &s->meta,
	    err, sizeof(err));
	free(text);
	if (ret == -1) {
		tdio_error(L, "%s", err);
		return 0;
	}
	return tdio_session_files(L, s);
}

/* Find sessions at or below 'path'; depth counts the levels left. */
static int
tdio_walk(struct tdio_load *L, const char *path, int depth, int *found)
{
	struct dirent	**list = NULL;
	struct stat	 st;
	char		*md, *sub;
	int		 i, n, ret = 0;

	if ((md = tdio_join(path, "metadata")) == NULL)
		goto nomem;
	if (stat(md, &st) == 0 && S_ISREG(st.st_mode)) {
		(*found)++;
		ret = tdio_session(L, path, md);
		free(md);
		return ret;
	}
	free(md);
	if (depth == 0)
		return 0;
	if ((n = scandir(path, &list, NULL, alphasort)) == -1) {
		tdio_error(L, "%s: %s", path, strerror(errno));
		return 0;
	}
	for (i = 0; i < n && ret == 0; i++) {
		if (tdio_skip_name(list[i]->d_name))
			continue;
		if ((sub = tdio_join(path, list[i]->d_name)) == NULL) {
			ret = -1;
			L->nomem = 1;
			break;
		}
		if (stat(sub, &st) == 0 && S_ISDIR(st.st_mode))
			ret = tdio_walk(L, sub, depth - 1, found);
		free(sub);
	}
	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return ret;
nomem:
	L->nomem = 1;
	return -1;
}

/*
 * Load the sessions at or below a path.  Contract in tracedir.h.
 */
int
tracedir_load(struct tracedir_set *set, const char *path,
    tracedir_error_cb cb, void *arg)
{
	struct tdio_load L;
	struct stat	 st;
	char		*p;
	size_t		 len;
	int		 found = 0;

	memset(&L, 0, sizeof(L));
	L.set = set;
	L.cb = cb;
	L.arg = arg;
	if (stat(path, &st) == -1) {
		tdio_error(&L, "%s: %s", path, strerror(errno));
		return L.nerr;
	}
	if (!S_ISDIR(st.st_mode)) {
		tdio_error(&L, "%s: not a directory (give a session or trace "
		    "directory)", path);
		return L.nerr;
	}
	/* "dir/" and "dir" name the same session. */
	if ((p = strdup(path)) == NULL) {
		tdio_error(&L, "out of memory");
		return -1;
	}
	for (len = strlen(p); len > 1 && p[len - 1] == '/'; len--)
		p[len - 1] = '\0';
	if (tdio_walk(&L, p, TRACEDIR_DEPTH_MAX, &found) == -1 || L.nomem) {
		free(p);
		tdio_error(&L, "out of memory");
		return -1;
	}
	if (found == 0)
		tdio_error(&L, "%s: no trace here (no 'metadata' file in it "
		    "or in the directories below it)", p);
	free(p);
	return L.nerr;
}

/*
 * Free what a set owns.  Contract in tracedir.h.
 */
void
tracedir_set_free(struct tracedir_set *set)
{
	struct tracedir_session	*s;
	size_t			 i, j;

	for (i = 0; i < set->nsessions; i++) {
		s = &set->sessions[i];
		for (j = 0; j < s->nfiles; j++)
			free(s->files[j].path);
		free(s->files);
		tracedir_meta_free(s->meta);
		free(s->path);
	}
	free(set->sessions);
	memset(set, 0, sizeof(*set));
}
