/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Test helper: stands in for systemd's notification socket.
 *
 *   notify-listen PATH
 *
 * Binds a SOCK_DGRAM Unix socket at PATH (what a test then gives the
 * daemon as NOTIFY_SOCKET) and prints every datagram it receives on
 * stdout, followed by a newline, flushed at once.  A datagram of
 * several assignments ("READY=1\nSTATUS=...") therefore prints one per
 * line.  Exits 0, removing PATH, on SIGTERM or SIGINT.  It traces
 * nothing (run it with TRACED=0); it is linked like every helper.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int
main(int argc, char *argv[])
{
	struct sockaddr_un sun;
	struct sigaction sa;
	struct pollfd pfd;
	sigset_t block, wait_mask;
	char buf[4096];
	ssize_t n;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: notify-listen PATH\n");
		return 2;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(argv[1]) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "notify-listen: %s: path too long\n", argv[1]);
		return 2;
	}
	strcpy(sun.sun_path, argv[1]);

	/* The signals are blocked except inside ppoll(), so one that
	 * comes between the test of 'stop' and the wait is not missed. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &wait_mask);
	sigdelset(&wait_mask, SIGTERM);
	sigdelset(&wait_mask, SIGINT);

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		perror("notify-listen: socket");
		return 1;
	}
	(void)unlink(sun.sun_path);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		fprintf(stderr, "notify-listen: bind %s: %s\n", sun.sun_path,
		    strerror(errno));
		return 1;
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (!stop) {
		if (ppoll(&pfd, 1, NULL, &wait_mask) == -1) {
			if (errno == EINTR)
				continue;
			perror("notify-listen: ppoll");
			break;
		}
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == -1) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			perror("notify-listen: recv");
			break;
		}
		fwrite(buf, 1, (size_t)n, stdout);
		if (n == 0 || buf[n - 1] != '\n')
			putchar('\n');
		fflush(stdout);
	}
	close(fd);
	unlink(sun.sun_path);
	return 0;
}
