/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The intake and files threads (intake.c): work whose cost a client
 * decides, or that waits for the disk, done off the loop thread.  Daemon-internal; loop thread.
 */
#ifndef TRACED_DAEMON_INTAKE_H
#define TRACED_DAEMON_INTAKE_H

#include <sys/types.h>

struct event_base;

/*
 * A job for the intake thread: embed it first in a struct of the job's
 * own.  work() runs there, touching no daemon state; done() runs on the
 * loop thread afterwards and frees the job.  uid: whose it is (the
 * uid of the client it concerns): jobs of different uids take turns.
 * files: it writes or closes files (the files thread), else it parses
 * (the intake thread).
 */
struct intake_job {
	struct intake_job *next;
	uid_t	 uid;
	int	 files;
	void	(*work)(struct intake_job *);
	void	(*done)(struct intake_job *);
};

int	intake_start(struct event_base *base, int nice);
void	intake_submit(struct intake_job *j);
int	intake_idle(void);
int	intake_accepting(void);
void	intake_close(int fd, uid_t uid);
void	intake_set_close_hook(void (*hook)(int delta));
void	intake_stop(void);

#endif /* TRACED_DAEMON_INTAKE_H */
