/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The daemon's two listening sockets, client.sock and control.sock
 * (sock.c): systemd's when it passes them, else made in the runtime
 * directory; and accepting on them, with the peer's credentials.
 * Daemon-internal; loop thread.
 */
#ifndef TRACED_DAEMON_SOCK_H
#define TRACED_DAEMON_SOCK_H

#include <sys/socket.h>

struct event;
struct event_base;

int	sock_open(const char *runtime_dir, int user, int *client_fd,
	    int *control_fd);
void	sock_close(int client_fd, int control_fd);
int	sock_accept(struct event_base *base, int lfd, struct event *ev,
	    const char *what, struct ucred *cred);
void	sock_peer_real_ids(struct ucred *cred);

#endif /* TRACED_DAEMON_SOCK_H */
