/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Directories the daemon writes into, opened once and checked.
 *
 * The system daemon writes as root (or as its own user) on behalf of
 * every user of the machine, so a path it resolves twice is a path a
 * hostile user may have changed in between: a session directory swapped
 * for a symlink turned a metadata rewrite into an overwrite of any root
 * file.  So every directory the daemon writes into (trace, state,
 * runtime) is opened here once, component by component from "/", and
 * everything in it is then created relative to that descriptor (openat,
 * mkdirat, renameat with O_NOFOLLOW and O_EXCL), never by a path.
 *
 * A directory is accepted when it is a real directory owned by the
 * daemon's user or by root, and writable by neither its group nor
 * others: then nobody else can add, rename or remove anything in it.
 * On the way to it, a symlink is followed only when root or the
 * daemon's user owns it and nobody else could have replaced it (its
 * directory is not writable by others, or is sticky); '..' is refused.
 * Directories on the way that belong to others are allowed (a private
 * test directory under /tmp, say): what they could swap is checked at
 * the end, and once open, a directory stays the one that was checked.
 *
 * Pure system calls, no daemon state; any thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "text.h"
#include "fsdir.h"

#define FSDIR_SYMLINKS_MAX	40

static int
fsdir_trusted_uid(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/*
 * Is the directory 'st' (at 'path') one the daemon may write into?
 * 0, or -1 with the reason and the fix in err.
 */
int
fsdir_check_stat(const struct stat *st, const char *path, char *err,
    size_t errsize)
{
	if (!S_ISDIR(st->st_mode)) {
		text_errf(err, errsize, "%s is not a directory", path);
		return -1;
	}
	if (!fsdir_trusted_uid(st->st_uid)) {
		text_errf(err, errsize, "%s belongs to uid %u, not to the "
		    "daemon's user (uid %u) or root: another user could "
		    "replace what the daemon writes there; choose a "
		    "directory the daemon owns, or "
		    "'chown %u %s'", path, (unsigned)st->st_uid,
		    (unsigned)geteuid(), (unsigned)geteuid(), path);
		return -1;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		text_errf(err, errsize, "%s is writable by %s (mode %04o): "
		    "others could replace what the daemon writes there; "
		    "'chmod go-w %s', or choose another directory", path,
		    (st->st_mode & S_IWOTH) ? "others" : "its group",
		    (unsigned)(st->st_mode & 07777), path);
		return -1;
	}
	return 0;
}

/* May the symlink 'name' in directory 'dfd' be followed? */
static int
fsdir_symlink_ok(int dfd, const char *name, const struct stat *lst,
    const char *shown, char *err, size_t errsize)
{
	struct stat dst;

	if (fstat(dfd, &dst) == -1) {
		text_errf(err, errsize, "%s: %s", shown, strerror(errno));
		return -1;
	}
	(void)name;
	if (!fsdir_trusted_uid(lst->st_uid) ||
	    ((dst.st_mode & (S_IWGRP | S_IWOTH)) &&
	    !(dst.st_mode & S_ISVTX))) {
		text_errf(err, errsize, "%s is a symlink that another user "
		    "%s: the daemon follows only symlinks that root or its "
		    "own user made where nobody else can change them; give "
		    "the real path", shown, fsdir_trusted_uid(lst->st_uid) ?
		    "could replace" : "owns");
		return -1;
	}
	return 0;
}

/*
 * Open the directory 'path' for writing into, as the top of this file
 * says: each component with O_NOFOLLOW (symlinks only when trusted),
 * the missing ones created with 'mode' (exactly: the umask does not
 * apply) as 'create' allows (FSDIR_CREATE_*), the last one checked with
 * fsdir_check_stat().  A relative path is taken from the daemon's
 * working directory.  Returns an O_DIRECTORY descriptor (close-on-exec)
 * or -1 with the reason in err.  Any thread.
 */
int
fsdir_open(const char *path, int create, mode_t mode, char *err,
    size_t errsize)
{
	char *buf = NULL, *rest, *comp, *next, shown[PATH_MAX];
	char target[PATH_MAX];
	struct stat st;
	int fd = -1, nfd, links = 0, created, tries;
	size_t len;
	ssize_t n;

	if (path == NULL || path[0] == '\0') {
		text_errf(err, errsize, "empty directory name");
		return -1;
	}
	if (path[0] == '/')
		buf = strdup(path);
	else {
		char cwd[PATH_MAX];

		if (getcwd(cwd, sizeof(cwd)) == NULL) {
			text_errf(err, errsize, "%s: working directory: %s",
			    path, strerror(errno));
			return -1;
		}
		if (asprintf(&buf, "%s/%s", cwd, path) == -1)
			buf = NULL;
	}
	if (buf == NULL) {
		text_errf(err, errsize, "out of memory");
		return -1;
	}
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1) {
		text_errf(err, errsize, "/: %s", strerror(errno));
		goto fail;
	}
	snprintf(shown, sizeof(shown), "/");
	rest = buf;
	for (;;) {
		while (*rest == '/')
			rest++;
		if (*rest == '\0')
			break;
		comp = rest;
		next = strchr(comp, '/');
		if (next != NULL)
			*next++ = '\0';
		else
			next = comp + strlen(comp);
		rest = next;
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			text_errf(err, errsize, "%s: '..' in the path: give "
			    "the directory's real path", path);
			goto fail;
		}
		len = strlen(shown);
		snprintf(shown + len, sizeof(shown) - len, "%s%s",
		    len > 1 ? "/" : "", comp);
		created = 0;
		tries = 0;
again:
		nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (nfd != -1) {
			if (created && fchmod(nfd, mode) == -1) {
				text_errf(err, errsize, "%s: chmod: %s", shown,
				    strerror(errno));
				close(nfd);
				goto fail;
			}
			close(fd);
			fd = nfd;
			continue;
		}
		if (errno == ENOENT && (create == FSDIR_CREATE_ALL ||
		    (create == FSDIR_CREATE_LAST &&
		    rest[strspn(rest, "/")] == '\0')) &&
		    tries++ < 3) {
			if (mkdirat(fd, comp, mode) == 0)
				created = 1;
			else if (errno != EEXIST) {
				text_errf(err, errsize, "cannot create %s: %s",
				    shown, strerror(errno));
				goto fail;
			}
			goto again;
		}
		if (errno != ELOOP && errno != ENOTDIR) {
			text_errf(err, errsize, "%s: %s", shown,
			    strerror(errno));
			goto fail;
		}
		if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == -1) {
			text_errf(err, errsize, "%s: %s", shown,
			    strerror(errno));
			goto fail;
		}
		if (!S_ISLNK(st.st_mode)) {
			text_errf(err, errsize, "%s is not a directory", shown);
			goto fail;
		}
		if (++links > FSDIR_SYMLINKS_MAX) {
			text_errf(err, errsize, "%s: too many symlinks", path);
			goto fail;
		}
		if (fsdir_symlink_ok(fd, comp, &st, shown, err, errsize) == -1)
			goto fail;
		n = readlinkat(fd, comp, target, sizeof(target) - 1);
		if (n <= 0) {
			text_errf(err, errsize, "%s: %s", shown,
			    n == 0 ? "empty symlink" : strerror(errno));
			goto fail;
		}
		target[n] = '\0';
		/* Continue with target + the rest of the path. */
		{
			char *nb;

			if (asprintf(&nb, "%s/%s", target, rest) == -1) {
				text_errf(err, errsize, "out of memory");
				goto fail;
			}
			free(buf);
			buf = rest = nb;
		}
		/* The link's directory stays where we are, or restart. */
		len = strlen(shown);
		while (len > 1 && shown[len - 1] != '/')
			len--;
		shown[len > 1 ? len - 1 : 1] = '\0';
		if (target[0] == '/') {
			close(fd);
			fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fd == -1) {
				text_errf(err, errsize, "/: %s",
				    strerror(errno));
				goto fail;
			}
			snprintf(shown, sizeof(shown), "/");
		}
	}
	if (fstat(fd, &st) == -1) {
		text_errf(err, errsize, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (fsdir_check_stat(&st, path, err, errsize) == -1)
		goto fail;
	free(buf);
	return fd;
fail:
	if (fd != -1)
		close(fd);
	free(buf);
	return -1;
}

/*
 * Has the directory open on 'fd' been removed (rm -rf)?  Files made in
 * it would be written and lost.  1 yes, 0 no, -1 cannot tell.
 */
int
fsdir_deleted(int fd)
{
	struct stat st;

	if (fstat(fd, &st) == -1)
		return -1;
	return st.st_nlink == 0;
}

/*
 * A path that reaches the directory open on 'fd' through that
 * descriptor ("/proc/self/fd/N"), for the rare callers that can only
 * take a path (SQLite, bind()): then what they open is inside the
 * checked directory whatever happens to its name.  Without /proc, the
 * name it was opened by ('fallback').  Writes into buf; returns buf.
 */
const char *
fsdir_path(int fd, const char *fallback, char *buf, size_t size)
{
	struct stat a, b;

	snprintf(buf, size, "/proc/self/fd/%d", fd);
	if (stat(buf, &a) == 0 && fstat(fd, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return buf;
	snprintf(buf, size, "%s", fallback);
	return buf;
}
