/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The trust rule for runtime directories and daemons (rundir.h): what
 * to try, and what lstat(), fstat(), connect() and SO_PEERCRED results
 * mean.  Every decision is a function of its arguments, so that the unit
 * tests and the fuzzer can feed it any file system and any peer; only
 * rundir_stat_at() and rundir_open(), at the end, apply it to the file
 * system.  Nothing here allocates: libtraced calls it from its
 * connection thread inside any program.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "rundir.h"

uid_t
rundir_system_uid(const struct rundir_stat *run,
    const struct rundir_stat *run_traced)
{
	if (run->err != 0 || !S_ISDIR(run->mode) || run->uid != 0 ||
	    (run->mode & 022) != 0)
		return RUNDIR_NO_UID;
	if (run_traced->err != 0 || !S_ISDIR(run_traced->mode))
		return RUNDIR_NO_UID;
	return run_traced->uid;
}

int
rundir_trusted(const struct rundir_self *self, uid_t uid)
{
	if (uid == RUNDIR_NO_UID)
		return 0;
	if (uid == 0 || uid == self->system_uid)
		return 1;
	return !self->secure && (uid == self->uid || uid == self->euid);
}

/* Copy "a" then "b" into dst; returns 0, or -1 when cut short. */
static int
rundir_join(char *dst, size_t size, const char *a, const char *b)
{
	int n = snprintf(dst, size, "%s%s", a, b);

	return n >= 0 && (size_t)n < size ? 0 : -1;
}

int
rundir_candidates(const struct rundir_self *self, const char *explicit_dir,
    const char *xdg, struct rundir_cand out[RUNDIR_CAND_MAX])
{
	char tmp[32];
	size_t len;
	int n = 0;

	memset(out, 0, sizeof(*out) * RUNDIR_CAND_MAX);
	if (!self->secure && explicit_dir != NULL && explicit_dir[0] != '\0') {
		out[0].kind = RUNDIR_EXPLICIT;
		out[0].too_long = rundir_join(out[0].dir, sizeof(out[0].dir),
		    explicit_dir, "") == -1;
		/* "dir/" would follow a symlink "dir", O_NOFOLLOW or not. */
		n = (int)strlen(out[0].dir);
		while (n > 1 && out[0].dir[n - 1] == '/')
			out[0].dir[--n] = '\0';
		return 1;
	}
	if (!self->secure && xdg != NULL && xdg[0] == '/') {
		len = strlen(xdg);
		while (len > 1 && xdg[len - 1] == '/')
			len--;
		out[n].kind = RUNDIR_XDG;
		if (len + sizeof("/traced") > sizeof(out[n].dir)) {
			out[n].too_long = 1;
			(void)rundir_join(out[n].dir, sizeof(out[n].dir), xdg,
			    "/traced");
		} else {
			memcpy(out[n].dir, xdg, len);
			memcpy(out[n].dir + len, "/traced", sizeof("/traced"));
			out[n].parent_len = len;
		}
		n++;
	}
	if (!self->secure) {
		snprintf(tmp, sizeof(tmp), "/tmp/traced-%u",
		    (unsigned)self->uid);
		out[n].kind = RUNDIR_TMP;
		(void)rundir_join(out[n].dir, sizeof(out[n].dir), tmp, "");
		n++;
	}
	out[n].kind = RUNDIR_SYSTEM_DAEMON;
	(void)rundir_join(out[n].dir, sizeof(out[n].dir), RUNDIR_SYSTEM, "");
	return n + 1;
}

static struct rundir_verdict
rundir_verdict(const struct rundir_self *self, enum rundir_why why,
    uid_t uid, int err)
{
	struct rundir_verdict v;

	v.why = why;
	v.uid = uid;
	v.err = err;
	v.secure = self != NULL && self->secure;
	return v;
}

/* A failed open() or lstat(). */
static struct rundir_verdict
rundir_errno(int err)
{
	switch (err) {
	case ENOENT:
		return rundir_verdict(NULL, RUNDIR_MISSING, RUNDIR_NO_UID, 0);
	case ENOTDIR:
		return rundir_verdict(NULL, RUNDIR_NOT_DIR, RUNDIR_NO_UID, 0);
	case ELOOP:
		return rundir_verdict(NULL, RUNDIR_SYMLINK, RUNDIR_NO_UID, 0);
	case EACCES:
	case EPERM:
		return rundir_verdict(NULL, RUNDIR_DENIED, RUNDIR_NO_UID, 0);
	case ENAMETOOLONG:
		return rundir_verdict(NULL, RUNDIR_TOO_LONG, RUNDIR_NO_UID, 0);
	default:
		return rundir_verdict(NULL, RUNDIR_ERRNO, RUNDIR_NO_UID, err);
	}
}

/* The type checks shared by a runtime directory and $XDG_RUNTIME_DIR. */
static int
rundir_is_dir(const struct rundir_stat *st, struct rundir_verdict *v)
{
	if (st->err != 0) {
		*v = rundir_errno(st->err);
		return 0;
	}
	if (S_ISLNK(st->mode)) {
		*v = rundir_verdict(NULL, RUNDIR_SYMLINK, RUNDIR_NO_UID, 0);
		return 0;
	}
	if (!S_ISDIR(st->mode)) {
		*v = rundir_verdict(NULL, RUNDIR_NOT_DIR, RUNDIR_NO_UID, 0);
		return 0;
	}
	return 1;
}

struct rundir_verdict
rundir_check_dir(const struct rundir_self *self, const struct rundir_stat *st)
{
	struct rundir_verdict v;

	if (!rundir_is_dir(st, &v))
		return v;
	if (!rundir_trusted(self, st->uid))
		return rundir_verdict(self, RUNDIR_NOT_OWNER, st->uid, 0);
	/* Sticky or not: whoever may write there may replace a socket. */
	if ((st->mode & 022) != 0)
		return rundir_verdict(self, RUNDIR_WRITABLE, st->uid, 0);
	return rundir_verdict(self, RUNDIR_OK, st->uid, 0);
}

struct rundir_verdict
rundir_check_xdg(const struct rundir_self *self, const struct rundir_stat *st)
{
	struct rundir_verdict v;

	if (!rundir_is_dir(st, &v))
		return v;
	/* The user's alone, as pam_systemd makes it (0700). */
	if (st->uid != self->uid)
		return rundir_verdict(self, RUNDIR_NOT_YOURS, st->uid, 0);
	if ((st->mode & 022) != 0)
		return rundir_verdict(self, RUNDIR_WRITABLE, st->uid, 0);
	return rundir_verdict(self, RUNDIR_OK, st->uid, 0);
}

struct rundir_verdict
rundir_check_socket(const struct rundir_stat *st)
{
	if (st->err != 0)
		return rundir_errno(st->err);
	if (S_ISLNK(st->mode))
		return rundir_verdict(NULL, RUNDIR_SYMLINK, RUNDIR_NO_UID, 0);
	if (!S_ISSOCK(st->mode))
		return rundir_verdict(NULL, RUNDIR_NOT_SOCKET, RUNDIR_NO_UID,
		    0);
	return rundir_verdict(NULL, RUNDIR_OK, st->uid, 0);
}

struct rundir_verdict
rundir_check_connect(int err)
{
	if (err == 0)
		return rundir_verdict(NULL, RUNDIR_OK, RUNDIR_NO_UID, 0);
	if (err == ECONNREFUSED)
		return rundir_verdict(NULL, RUNDIR_NOT_LISTENING,
		    RUNDIR_NO_UID, 0);
	if (err == ENOTDIR || err == ELOOP)	/* not ours to describe */
		return rundir_verdict(NULL, RUNDIR_ERRNO, RUNDIR_NO_UID, err);
	return rundir_errno(err);
}

struct rundir_verdict
rundir_check_peer(const struct rundir_self *self, uid_t peer)
{
	return rundir_verdict(self, rundir_trusted(self, peer) ? RUNDIR_OK :
	    RUNDIR_PEER, peer, 0);
}

char *
rundir_describe(char *buf, size_t size, const struct rundir_verdict *v)
{
	const char *who = v->secure ?
	    "not root or the system daemon's user (a setuid program trusts "
	    "no one else)" : "not you, root or the system daemon's user";

	switch (v->why) {
	case RUNDIR_OK:
		snprintf(buf, size, "trusted");
		break;
	case RUNDIR_MISSING:
		snprintf(buf, size, "missing");
		break;
	case RUNDIR_SYMLINK:
		snprintf(buf, size, "a symlink: not trusted");
		break;
	case RUNDIR_NOT_DIR:
		snprintf(buf, size, "not a directory");
		break;
	case RUNDIR_NOT_OWNER:
		snprintf(buf, size, "owned by uid %u, %s", (unsigned)v->uid,
		    who);
		break;
	case RUNDIR_NOT_YOURS:
		snprintf(buf, size, "owned by uid %u, not you",
		    (unsigned)v->uid);
		break;
	case RUNDIR_WRITABLE:
		snprintf(buf, size, "writable by group or others");
		break;
	case RUNDIR_TOO_LONG:
		snprintf(buf, size, "path too long");
		break;
	case RUNDIR_NOT_SOCKET:
		snprintf(buf, size, "not a socket");
		break;
	case RUNDIR_DENIED:
		snprintf(buf, size, "permission denied");
		break;
	case RUNDIR_NOT_LISTENING:
		snprintf(buf, size, "nobody listening: a stale socket");
		break;
	case RUNDIR_PEER:
		snprintf(buf, size, "the daemon there runs as uid %u, %s",
		    (unsigned)v->uid, who);
		break;
	case RUNDIR_ERRNO:
	default:
		snprintf(buf, size, "%s", strerror(v->err));
		break;
	}
	return buf;
}

void
rundir_tried_add(char *buf, size_t size, const char *path,
    const struct rundir_verdict *v)
{
	char why[160];
	size_t len = strnlen(buf, size);

	if (len + 1 >= size)
		return;
	snprintf(buf + len, size - len, "%s%s (%s)", len > 0 ? ", " : "",
	    path, rundir_describe(why, sizeof(why), v));
}

void
rundir_stat_at(int at, const char *name, int fd, struct rundir_stat *rs,
    struct stat *stp)
{
	struct stat st;
	int rc;

	rc = fd != -1 ? fstat(fd, &st) :
	    fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW);
	rs->err = rc == -1 ? errno : 0;
	rs->mode = rc == -1 ? 0 : st.st_mode;
	rs->uid = rc == -1 ? RUNDIR_NO_UID : st.st_uid;
	if (stp != NULL) {
		if (rc == -1)
			memset(stp, 0, sizeof(*stp));
		else
			*stp = st;
	}
}

/*
 * Open 'name' in 'at' as a directory, with no symlink at its end, and
 * check it with 'check'.  Returns the O_PATH descriptor, or -1 with *v
 * saying why not.  The descriptor is what we checked: nothing can be
 * swapped in behind it before we connect.
 */
static int
rundir_open_dir(int at, const char *name, const struct rundir_self *self,
    struct rundir_verdict (*check)(const struct rundir_self *,
    const struct rundir_stat *), struct rundir_verdict *v)
{
	struct rundir_stat rs;
	int fd;

	fd = openat(at, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 && errno != ENOTDIR && errno != ELOOP) {
		rs.err = errno;
		rs.mode = 0;
		rs.uid = RUNDIR_NO_UID;
	} else
		rundir_stat_at(at, name, fd, &rs, NULL); /* lstat: what is it? */
	*v = check(self, &rs);
	if (v->why != RUNDIR_OK && fd != -1) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int
rundir_open(const struct rundir_self *self, const struct rundir_cand *c,
    const char *sock, struct sockaddr_un *sun, struct stat *st,
    struct rundir_verdict *v, char *what, size_t whatsize)
{
	char parent[RUNDIR_PATH_MAX];
	const char *name = c->dir;
	struct rundir_stat rs;
	int pfd = AT_FDCWD, dfd, n;

	snprintf(what, whatsize, "%s", c->dir);
	if (c->too_long) {
		v->why = RUNDIR_TOO_LONG;
		return -1;
	}
	if (c->parent_len > 0) {
		/* $XDG_RUNTIME_DIR itself, then traced in it. */
		memcpy(parent, c->dir, c->parent_len);
		parent[c->parent_len] = '\0';
		pfd = rundir_open_dir(AT_FDCWD, parent, self, rundir_check_xdg,
		    v);
		if (pfd == -1) {
			snprintf(what, whatsize, "%s", parent);
			return -1;
		}
		name = c->dir + c->parent_len + 1;
	}
	dfd = rundir_open_dir(pfd, name, self, rundir_check_dir, v);
	if (pfd != AT_FDCWD)
		close(pfd);
	if (dfd == -1)
		return -1;

	snprintf(what, whatsize, "%s/%s", c->dir, sock);
	rundir_stat_at(dfd, sock, -1, &rs, st);
	if ((*v = rundir_check_socket(&rs)).why != RUNDIR_OK)
		goto fail;
	/*
	 * Through the directory we checked: /proc/self/fd/N is that
	 * directory, whatever its path now leads to.  Without /proc, by
	 * the path (the peer check after connect() still holds).
	 */
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (access("/proc/self/fd", F_OK) == 0)
		n = snprintf(sun->sun_path, sizeof(sun->sun_path),
		    "/proc/self/fd/%d/%s", dfd, sock);
	else
		n = snprintf(sun->sun_path, sizeof(sun->sun_path), "%s/%s",
		    c->dir, sock);
	if (n < 0 || (size_t)n >= sizeof(sun->sun_path)) {
		v->why = RUNDIR_TOO_LONG;
		goto fail;
	}
	return dfd;
fail:
	close(dfd);
	return -1;
}
