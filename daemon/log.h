/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The daemon's log (log.c): log_warn adds strerror(errno), log_warnx
 * does not, fatal and fatalx exit.  Daemon-internal; any thread.
 */
#ifndef TRACED_DAEMON_LOG_H
#define TRACED_DAEMON_LOG_H

extern int log_verbose;

void	log_init(void);
int	log_to_file(int dirfd, const char *dir, const char *say);
void	log_rotate_check(void);
int	log_start(void);
void	log_stop(void);
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif /* TRACED_DAEMON_LOG_H */
