/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Test helper: an impostor daemon, as a hostile local user would run
 * one, to show that traced programs and tracectl never talk to it.
 *
 *   fake-daemon [-u UID -g GID] [-m MODE] LOG PATH...
 *
 * Binds a SOCK_SEQPACKET Unix socket at each PATH (mode MODE, octal,
 * default 0666), then, with -u and -g, drops to that user and group
 * before listen(): the kernel records the listener's credentials at
 * listen(), so a client's SO_PEERCRED names UID even though the socket
 * file was made by the caller (root, in a root-owned directory).
 * It appends to LOG one line "listening" once every socket listens,
 * then one line per thing a client does:
 *
 *   connection PATH uid UID pid PID    a client connected
 *   message PATH BYTES bytes FDS fds   it sent something (HELLO, ...)
 *   closed PATH                        it hung up
 *
 * It answers nothing.  A test asserts "no message" (nothing was handed
 * over) or "no connection" (not even a connect()).  It traces nothing:
 * run it with TRACED=0 (it is linked like every helper).  Exits 0 on
 * SIGTERM or SIGINT, removing nothing (the test owns the files).
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LISTEN_MAX	8
#define CONN_MAX	56

static volatile sig_atomic_t stop;
static int logfd = -1;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void
logline(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	(void)!write(logfd, buf, (size_t)n);
}

static void
usage(void)
{
	fprintf(stderr, "usage: fake-daemon [-u UID -g GID] [-m MODE] LOG "
	    "PATH...\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	struct pollfd pfd[LISTEN_MAX + CONN_MAX];
	const char *path[LISTEN_MAX + CONN_MAX];
	struct sockaddr_un sun;
	struct sigaction sa;
	struct ucred uc;
	socklen_t len;
	long uid = -1, gid = -1;
	mode_t mode = 0666;
	int ch, i, n, nl, np, fd;

	while ((ch = getopt(argc, argv, "g:m:u:")) != -1) {
		switch (ch) {
		case 'g':
			gid = strtol(optarg, NULL, 10);
			break;
		case 'm':
			mode = (mode_t)strtol(optarg, NULL, 8);
			break;
		case 'u':
			uid = strtol(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 2 || argc - 1 > LISTEN_MAX || (uid == -1) != (gid == -1))
		usage();
	logfd = open(argv[0], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
	    0644);
	if (logfd == -1) {
		perror(argv[0]);
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	nl = argc - 1;
	for (i = 0; i < nl; i++) {
		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		if (strlen(argv[i + 1]) >= sizeof(sun.sun_path)) {
			fprintf(stderr, "%s: too long\n", argv[i + 1]);
			return 1;
		}
		strcpy(sun.sun_path, argv[i + 1]);
		fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (fd == -1 || bind(fd, (struct sockaddr *)&sun,
		    sizeof(sun)) == -1 || chmod(sun.sun_path, mode) == -1) {
			fprintf(stderr, "%s: %s\n", argv[i + 1],
			    strerror(errno));
			return 1;
		}
		pfd[i].fd = fd;
		pfd[i].events = POLLIN;
		path[i] = argv[i + 1];
	}
	if (uid != -1 && (setgroups(0, NULL) == -1 ||
	    setresgid((gid_t)gid, (gid_t)gid, (gid_t)gid) == -1 ||
	    setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) == -1)) {
		fprintf(stderr, "cannot become uid %ld: %s\n", uid,
		    strerror(errno));
		return 1;
	}
	for (i = 0; i < nl; i++) {
		if (listen(pfd[i].fd, 16) == -1) {
			fprintf(stderr, "listen %s: %s\n", path[i],
			    strerror(errno));
			return 1;
		}
	}
	logline("listening");

	np = nl;
	while (!stop) {
		if (poll(pfd, (nfds_t)np, 200) <= 0)
			continue;
		for (i = 0; i < np; i++) {
			union {
				struct cmsghdr	hdr;
				char	buf[CMSG_SPACE(8 * sizeof(int))];
			} cm;
			char buf[4096];
			struct iovec iov = { buf, sizeof(buf) };
			struct msghdr mh;
			struct cmsghdr *c;
			ssize_t got;
			int nfds, k;

			if (pfd[i].revents == 0)
				continue;
			if (i < nl) {
				fd = accept4(pfd[i].fd, NULL, NULL,
				    SOCK_CLOEXEC);
				if (fd == -1)
					continue;
				len = sizeof(uc);
				memset(&uc, 0, sizeof(uc));
				(void)getsockopt(fd, SOL_SOCKET, SO_PEERCRED,
				    &uc, &len);
				logline("connection %s uid %u pid %d", path[i],
				    (unsigned)uc.uid, (int)uc.pid);
				if (np == LISTEN_MAX + CONN_MAX) {
					close(fd);
					continue;
				}
				pfd[np].fd = fd;
				pfd[np].events = POLLIN;
				pfd[np].revents = 0;
				path[np++] = path[i];
				continue;
			}
			memset(&mh, 0, sizeof(mh));
			mh.msg_iov = &iov;
			mh.msg_iovlen = 1;
			mh.msg_control = cm.buf;
			mh.msg_controllen = sizeof(cm.buf);
			got = recvmsg(pfd[i].fd, &mh, MSG_CMSG_CLOEXEC);
			if (got > 0) {
				nfds = 0;
				for (c = CMSG_FIRSTHDR(&mh); c != NULL;
				    c = CMSG_NXTHDR(&mh, c)) {
					if (c->cmsg_type != SCM_RIGHTS)
						continue;
					n = (int)((c->cmsg_len - CMSG_LEN(0)) /
					    sizeof(int));
					for (k = 0; k < n; k++) {
						memcpy(&fd, CMSG_DATA(c) +
						    (size_t)k * sizeof(int),
						    sizeof(int));
						close(fd);
					}
					nfds += n;
				}
				logline("message %s %zd bytes %d fds", path[i],
				    got, nfds);
				continue;
			}
			if (got == -1 && errno == EINTR)
				continue;
			logline("closed %s", path[i]);
			close(pfd[i].fd);
			pfd[i] = pfd[--np];
			path[i] = path[np];
			i--;
		}
	}
	return 0;
}
