/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The daemon's two listening sockets, and accepting on them.
 *
 * When systemd passes listening sockets (LISTEN_FDS, named "client"
 * and "control" by FileDescriptorName=), they are used as they are,
 * never chmod'ed or unlinked; any socket not passed is made in the
 * runtime directory (checked: it must be the daemon's and closed to
 * others' writes, or anyone could stand in for the daemon; fsdir.c),
 * and removed at exit.
 *
 * Accepting takes the peer's credentials from SO_PEERCRED, never from
 * a message.  Out of descriptors, a listening socket stays readable and
 * the loop would spin: it stops listening for 100 ms, and says so once
 * a second at most.
 *
 * Loop thread; sock_open() before any thread exists.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <systemd/sd-daemon.h>

#include "dclock.h"
#include "fsdir.h"
#include "log.h"
#include "sock.h"
#include "wire.h"

static struct {
	int	 runtime_dirfd;		/* -1 when systemd gave both */
	int	 client_ours;		/* we made client.sock: unlink it */
	int	 control_ours;		/* we made control.sock */
	int	 passed;		/* how many systemd gave us */
} sk = { .runtime_dirfd = -1 };

/*
 * The runtime directory holds the sockets.  It must be the daemon's
 * and closed to others' writes, or anyone could stand in for the daemon
 * (fsdir.c).  Made if missing: 0755 for the system daemon, so that
 * every user's programs reach client.sock, whatever the umask; 0700 for
 * a user's.
 */
static void
runtime_dir_prepare(const char *dir, int user)
{
	char err[PATH_MAX + 256];

	sk.runtime_dirfd = fsdir_open(dir, FSDIR_CREATE_ALL,
	    user ? 0700 : 0755, err, sizeof(err));
	if (sk.runtime_dirfd == -1)
		fatalx("runtime directory: %s (or choose another with "
		    "--runtime-dir)", err);
}

static int
listen_unix(const char *dir, const char *name, mode_t mode)
{
	struct sockaddr_un sun;
	char at[64];
	mode_t old;
	int fd, probe;

	/* Through the directory's descriptor: the name bound is in the
	 * directory that was checked. */
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if ((size_t)snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/%s",
	    fsdir_path(sk.runtime_dirfd, dir, at, sizeof(at)), name) >=
	    sizeof(sun.sun_path))
		fatalx("socket path %s/%s is too long", dir, name);
	/* A socket file that answers means a daemon already runs there. */
	probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (probe != -1 && connect(probe, (struct sockaddr *)&sun,
	    sizeof(sun)) == 0)
		fatalx("another traced is already listening on %s/%s (stop "
		    "it, or give this one another --runtime-dir)", dir, name);
	if (probe != -1)
		close(probe);
	(void)unlinkat(sk.runtime_dirfd, name, 0);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		fatal("socket");
	/* The socket file is born with its mode: no window with another. */
	old = umask((mode_t)(~mode & 0777));
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		fatal("bind %s/%s", dir, name);
	umask(old);
	if (listen(fd, 128) == -1)
		fatal("listen %s/%s", dir, name);
	return fd;
}

/*
 * Which of our sockets a passed descriptor is: by its name
 * (FileDescriptorName=, systemd-socket-activate --fdname), else by the
 * file it is bound to.  Returns 0 (client), 1 (control) or -1.
 */
static int
socket_role(int fd, const char *name)
{
	struct sockaddr_un sun;
	socklen_t len = sizeof(sun);
	const char *base;

	if (name != NULL && strcmp(name, "client") == 0)
		return 0;
	if (name != NULL && strcmp(name, "control") == 0)
		return 1;
	memset(&sun, 0, sizeof(sun));
	if (getsockname(fd, (struct sockaddr *)&sun, &len) == -1 ||
	    len <= offsetof(struct sockaddr_un, sun_path) ||
	    sun.sun_path[0] == '\0')
		return -1;
	sun.sun_path[sizeof(sun.sun_path) - 1] = '\0';
	base = strrchr(sun.sun_path, '/');
	base = base != NULL ? base + 1 : sun.sun_path;
	if (strcmp(base, TRACED_CLIENT_SOCK) == 0)
		return 0;
	if (strcmp(base, TRACED_CONTROL_SOCK) == 0)
		return 1;
	return -1;
}

/*
 * Take the listening sockets systemd passed (socket activation), if
 * any, into *client_fd and *control_fd.  They stay as systemd made them
 * (owner, mode, path); only O_NONBLOCK and FD_CLOEXEC are set.  A
 * socket that is not ours or not a listening SOCK_SEQPACKET Unix
 * socket stops the start.
 */
static void
sockets_inherit(int *client_fd, int *control_fd)
{
	static const char *const role_name[] = { "client", "control" };
	char **names = NULL;
	int n, i, fd, role, fl, *slot;

	n = sd_listen_fds_with_names(1, &names);
	if (n < 0)
		fatalx("LISTEN_FDS: cannot take the sockets systemd passed: "
		    "%s", strerror(-n));
	for (i = 0; i < n; i++) {
		fd = SD_LISTEN_FDS_START + i;
		role = socket_role(fd, names != NULL ? names[i] : NULL);
		if (role == -1)
			fatalx("passed socket %d (name '%s') is neither "
			    "client.sock nor control.sock: name it with "
			    "FileDescriptorName=client or control", fd,
			    names != NULL && names[i] != NULL ? names[i] : "");
		if (sd_is_socket(fd, AF_UNIX, SOCK_SEQPACKET, 1) <= 0)
			fatalx("passed socket %d (%s) is not a listening "
			    "AF_UNIX SOCK_SEQPACKET socket (ListenSequential"
			    "Packet=)", fd, role_name[role]);
		slot = role == 0 ? client_fd : control_fd;
		if (*slot != -1)
			fatalx("systemd passed two %s sockets (%d and %d)",
			    role_name[role], *slot, fd);
		if ((fl = fcntl(fd, F_GETFL)) == -1 ||
		    fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1 ||
		    fcntl(fd, F_SETFD, FD_CLOEXEC) == -1)
			fatal("passed socket %d", fd);
		*slot = fd;
	}
	if (names != NULL) {
		for (i = 0; i < n; i++)
			free(names[i]);
		free(names);
	}
	sk.passed = n;
}

/*
 * The two listening sockets, in *client_fd and *control_fd: systemd's,
 * else our own in 'runtime_dir' (0666 and 0660 for the system daemon,
 * 0600 for a user's).  Returns how many systemd passed.  Fatal if they
 * cannot be had (another daemon listens there, say).  Before any thread
 * exists.
 */
int
sock_open(const char *runtime_dir, int user, int *client_fd,
    int *control_fd)
{
	*client_fd = *control_fd = -1;
	sockets_inherit(client_fd, control_fd);
	if (*client_fd != -1 && *control_fd != -1)
		return sk.passed;
	runtime_dir_prepare(runtime_dir, user);
	if (*client_fd == -1) {
		*client_fd = listen_unix(runtime_dir, TRACED_CLIENT_SOCK,
		    user ? 0600 : 0666);
		sk.client_ours = 1;
	}
	if (*control_fd == -1) {
		*control_fd = listen_unix(runtime_dir, TRACED_CONTROL_SOCK,
		    user ? 0600 : 0660);
		sk.control_ours = 1;
	}
	return sk.passed;
}

/* Close the sockets; remove the files of those we made.  At exit. */
void
sock_close(int client_fd, int control_fd)
{
	close(client_fd);
	close(control_fd);
	if (sk.client_ours)
		(void)unlinkat(sk.runtime_dirfd, TRACED_CLIENT_SOCK, 0);
	if (sk.control_ours)
		(void)unlinkat(sk.runtime_dirfd, TRACED_CONTROL_SOCK, 0);
	if (sk.runtime_dirfd != -1)
		close(sk.runtime_dirfd);
	sk.runtime_dirfd = -1;
}

static void
accept_resume_cb(int fd, short what, void *arg)
{
	struct event *ev = arg;

	(void)fd;
	(void)what;
	event_add(ev, NULL);
}

/*
 * accept() failed on listening event 'ev'.  Out of descriptors (or
 * memory), the socket stays readable and the loop would spin: stop
 * listening for a moment, and say so once a second at most.  Other
 * errors are logged.
 */
static void
accept_failed(struct event_base *base, struct event *ev, const char *what)
{
	static uint64_t last_warn;
	struct timeval tv = { 0, 100000 };
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	int saved = errno;
	int pause = saved == EMFILE || saved == ENFILE || saved == ENOMEM ||
	    saved == ENOBUFS;

	if (saved == EAGAIN || saved == EINTR || saved == ECONNABORTED)
		return;
	if (now - last_warn > 1000000000u) {
		errno = saved;
		if (saved == EMFILE)
			log_warn("accept on %s socket (not accepting for "
			    "100 ms; traced's descriptor limit is too low "
			    "for its connections: raise LimitNOFILE= in "
			    "traced.service, or 'ulimit -n')", what);
		else
			log_warn("accept on %s socket%s", what, pause ?
			    " (not accepting for 100 ms)" : "");
		last_warn = now;
	}
	if (pause) {
		event_del(ev);
		event_base_once(base, -1, EV_TIMEOUT, accept_resume_cb, ev,
		    &tv);
	}
}

/*
 * Accept a connection on the listening socket lfd (watched by ev;
 * 'what' names it in the log): its descriptor, non-blocking and
 * close-on-exec, with the peer's credentials in *cred; or -1 (nothing
 * to accept, or logged).
 */
int
sock_accept(struct event_base *base, int lfd, struct event *ev,
    const char *what, struct ucred *cred)
{
	socklen_t len = sizeof(*cred);
	int fd;

	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd == -1) {
		accept_failed(base, ev, what);
		return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, &len) == -1) {
		log_warn("%s socket: SO_PEERCRED", what);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A peer that is root only by a setuid-root program (its real uid
 * another's) counts as that real uid: whoever ran it is who it works
 * for, and root's limits (none) and pool rings are root's own.  Read
 * from /proc/PID/status just after the accept; only ever lowers root
 * to the real ids (a pid reused meanwhile by a root process changes
 * nothing), and leaves them as they were if the file cannot be read.
 */
void
sock_peer_real_ids(struct ucred *cred)
{
	char path[64], line[256];
	unsigned long ruid = 0, euid = 0, rgid = 0;
	int have_uid = 0, have_gid = 0;
	FILE *f;

	if (cred->uid != 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)cred->pid);
	if ((f = fopen(path, "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "Uid: %lu %lu", &ruid, &euid) == 2)
			have_uid = 1;
		else if (sscanf(line, "Gid: %lu", &rgid) == 1)
			have_gid = 1;
	}
	fclose(f);
	if (!have_uid || !have_gid || euid != 0 || ruid == 0)
		return;
	log_debug("pid %d: setuid root, run by uid %lu: counted as uid %lu",
	    (int)cred->pid, ruid, ruid);
	cred->uid = (uid_t)ruid;
	cred->gid = (gid_t)rgid;
}
