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

/*
 * The loop's priorities (libevent's, 0 first).  Clients' work comes in
 * many small callbacks: with hundreds of busy sessions one round of
 * them took seconds (a burst of rings, each a stream file to create),
 * and a tracectl request waited for the whole round at each of its
 * steps.  So control connections, the timers that keep the daemon
 * alive and the threads' completions come first, and the loop looks
 * for them again after at most LOOP_CLIENT_SLICE_MS of clients' work
 * (main.c).  Sessions of a uid that has had more than its share of the
 * loop lately come after everyone else's (client.c).
 */
#define LOOP_PRI_FIRST		0	/* control, timers, completions */
#define LOOP_PRI_CLIENT		1	/* sessions, new connections */
#define LOOP_PRI_OVER		2	/* sessions of a uid over its share */
#define LOOP_NPRI		3
#define LOOP_CLIENT_SLICE_MS	10

int	sock_open(const char *runtime_dir, int user, int *client_fd,
	    int *control_fd);
void	sock_close(int client_fd, int control_fd);
int	sock_accept(struct event_base *base, int lfd, struct event *ev,
	    const char *what, struct ucred *cred);
void	sock_peer_real_ids(struct ucred *cred);

#endif /* TRACED_DAEMON_SOCK_H */
