/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Which daemon a traced program or tracectl may talk to: the runtime
 * directories to try, in order, and whether a directory, a socket and
 * the process listening on it can be trusted (doc/DESIGN.md section 10;
 * libtraced(3), FINDING THE DAEMON).  A local user who can make
 * /tmp/traced-0, or a symlink there, or a socket in a directory of
 * theirs, must never receive root's providers and rings, nor answer
 * root's tracectl.
 *
 * The rule.  Trusted users are the user (getuid(), geteuid()), root and
 * the system daemon's user; in a secure-execution process (AT_SECURE:
 * setuid, setgid, file capabilities) only root and the system daemon's
 * user, and only the system daemon is tried.  A runtime directory is
 * trusted when it is a directory (not a symlink) owned by a trusted user
 * and not writable by group or others; $XDG_RUNTIME_DIR, above the
 * user's own daemon's, must be the user's and not writable by others.
 * The socket must be a socket, and the process that listens on it
 * (SO_PEERCRED) a trusted user.  The system daemon's user is the owner
 * of /run/traced when /run/traced is a real directory in a root-owned
 * /run that others cannot write: no getpwnam(), whose NSS modules could
 * block or load code inside any traced program.
 *
 * Pure: each program does its own I/O (open with O_PATH | O_NOFOLLOW,
 * fstat, connect, SO_PEERCRED) and asks these functions what the
 * results mean, so that libtraced and tracectl follow one rule.  No
 * allocation; any thread.
 */
#ifndef TRACED_PROTO_RUNDIR_H
#define TRACED_PROTO_RUNDIR_H

#include <stddef.h>
#include <sys/types.h>

#define RUNDIR_SYSTEM		"/run/traced"
#define RUNDIR_SYSTEM_PARENT	"/run"
#define RUNDIR_NO_UID		((uid_t)-1)
#define RUNDIR_CAND_MAX		3	/* candidates tried, at most */
#define RUNDIR_PATH_MAX		4096	/* a directory's path, NUL included */

/* Who is looking. */
struct rundir_self {
	uid_t		 uid;		/* getuid() */
	uid_t		 euid;		/* geteuid() */
	uid_t		 system_uid;	/* rundir_system_uid(), or NO_UID */
	int		 secure;	/* getauxval(AT_SECURE) != 0 */
};

/* What lstat() or fstat() said: err 0 and the fields, or an errno. */
struct rundir_stat {
	int		 err;
	mode_t		 mode;
	uid_t		 uid;
};

enum rundir_kind {
	RUNDIR_EXPLICIT,		/* TRACED_RUNTIME_DIR, tracectl -r */
	RUNDIR_XDG,			/* $XDG_RUNTIME_DIR/traced */
	RUNDIR_TMP,			/* /tmp/traced-$UID */
	RUNDIR_SYSTEM_DAEMON,		/* /run/traced */
};

/* A runtime directory to try. */
struct rundir_cand {
	enum rundir_kind kind;
	char		 dir[RUNDIR_PATH_MAX];
	size_t		 parent_len;	/* RUNDIR_XDG: dir[0..parent_len) is
					   $XDG_RUNTIME_DIR, checked first;
					   else 0 */
	int		 too_long;	/* dir was cut short: unusable */
};

enum rundir_why {
	RUNDIR_OK,
	RUNDIR_MISSING,			/* no such file (ENOENT) */
	RUNDIR_SYMLINK,			/* a symlink where a directory or
					   socket must be */
	RUNDIR_NOT_DIR,
	RUNDIR_NOT_OWNER,		/* owned by an untrusted uid */
	RUNDIR_NOT_YOURS,		/* $XDG_RUNTIME_DIR: not the user's */
	RUNDIR_WRITABLE,		/* group or others may write in it */
	RUNDIR_TOO_LONG,		/* path too long for a socket */
	RUNDIR_NOT_SOCKET,
	RUNDIR_DENIED,			/* EACCES, EPERM */
	RUNDIR_NOT_LISTENING,		/* ECONNREFUSED: a stale socket */
	RUNDIR_PEER,			/* the listener is an untrusted uid */
	RUNDIR_ERRNO,			/* another error, in err */
};

/* A decision: OK, or why not. */
struct rundir_verdict {
	enum rundir_why	 why;
	uid_t		 uid;		/* NOT_OWNER, NOT_YOURS, PEER */
	int		 err;		/* ERRNO */
	int		 secure;	/* decided for a secure process */
};

/*
 * The system daemon's user, from lstat() of /run and of /run/traced:
 * the owner of /run/traced if it is a directory in a root-owned /run
 * that group and others cannot write; else RUNDIR_NO_UID.
 */
uid_t	rundir_system_uid(const struct rundir_stat *run,
	    const struct rundir_stat *run_traced);

/* Whether uid is one 'self' trusts (see the rule above). */
int	rundir_trusted(const struct rundir_self *self, uid_t uid);

/*
 * Fill out[] with the directories to try, in order, and return how
 * many (1 to RUNDIR_CAND_MAX).  explicit_dir (TRACED_RUNTIME_DIR or
 * tracectl -r) and xdg ($XDG_RUNTIME_DIR) may be NULL or empty; both are
 * ignored in a secure process, and a relative xdg is ignored.  With an
 * explicit directory it is the only candidate; otherwise the user's own
 * daemon ($XDG_RUNTIME_DIR/traced, /tmp/traced-$UID), then the system
 * daemon's.  Trailing slashes are dropped (with one, a symlink would be
 * followed).  A path that does not fit is marked too_long.
 */
int	rundir_candidates(const struct rundir_self *self,
	    const char *explicit_dir, const char *xdg,
	    struct rundir_cand out[RUNDIR_CAND_MAX]);

/*
 * A runtime directory, from fstat() of the descriptor open() gave with
 * O_PATH | O_DIRECTORY | O_NOFOLLOW, or, when open() failed, its errno,
 * or for ENOTDIR and ELOOP what lstat() says the path is.
 */
struct rundir_verdict rundir_check_dir(const struct rundir_self *self,
	    const struct rundir_stat *st);

/* $XDG_RUNTIME_DIR itself, found the same way as a runtime directory. */
struct rundir_verdict rundir_check_xdg(const struct rundir_self *self,
	    const struct rundir_stat *st);

/* The socket, from fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW). */
struct rundir_verdict rundir_check_socket(const struct rundir_stat *st);

/* connect()'s result: 0, or its errno. */
struct rundir_verdict rundir_check_connect(int err);

/* The listener's uid, from SO_PEERCRED after connect(). */
struct rundir_verdict rundir_check_peer(const struct rundir_self *self,
	    uid_t peer);

/*
 * Write why a verdict is not OK, in a few words, into buf ("missing",
 * "owned by uid 1001, not you, root or the system daemon's user", ...).
 * Always NUL-terminates (size > 0).  Returns buf.
 */
char	*rundir_describe(char *buf, size_t size,
	    const struct rundir_verdict *v);

/*
 * Append "PATH (why)" to the list in buf, after ", " when buf is not
 * empty; cut short, never overflowing, when buf is full.
 */
void	rundir_tried_add(char *buf, size_t size, const char *path,
	    const struct rundir_verdict *v);

/*
 * The rule applied to the file system, shared by libtraced and
 * tracectl.  rundir_stat_at(): what 'name' in 'at' is (fd: that open
 * file instead), without following a symlink; st (may be NULL) gets
 * the whole stat.  rundir_open(): open candidate c's directory (its
 * $XDG_RUNTIME_DIR first, when it has one), each checked, check the
 * socket 'sock' in it, and make the address that reaches it through
 * the directory we checked.  Returns that directory's O_PATH
 * descriptor (close it after connect()), or -1 with *v saying why and
 * 'what' the path it is about (always set: the socket's, on success).
 */
struct stat;
struct sockaddr_un;
void	rundir_stat_at(int at, const char *name, int fd,
	    struct rundir_stat *rs, struct stat *st);
int	rundir_open(const struct rundir_self *self,
	    const struct rundir_cand *c, const char *sock,
	    struct sockaddr_un *sun, struct stat *st,
	    struct rundir_verdict *v, char *what, size_t whatsize);

#endif /* TRACED_PROTO_RUNDIR_H */
