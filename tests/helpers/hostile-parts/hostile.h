/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The hostile test helper (tests/helpers/hostile.c and the files in
 * this folder): what its parts share.  hostile.c has the socket and
 * ring helpers, the case table and main(); cases.c the cases that get
 * the protocol or the ring wrong ((a) to (e)); load.c the commands of
 * one client against everyone and the odd but valid names ((f), (g));
 * funcs.c those of function tracing ((h)).
 */
#ifndef TRACED_TESTS_HOSTILE_H
#define TRACED_TESTS_HOSTILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ring.h"
#include "wire.h"

#define HOSTILE_PATH_MAX	108	/* sun_path */

#define ORDER		12
#define RSIZE		(1u << ORDER)
#define ID_TICK		TRACED_EVENT_ID_BASE		/* (uint64_t seq) */
#define ID_STR		(TRACED_EVENT_ID_BASE + 1)	/* (str s, u64 n) */

extern const char desc[];		/* the provider's trace-events */
extern const size_t desc_len;		/* its length */
extern char sock_path[HOSTILE_PATH_MAX];	/* client.sock */
extern int failed;			/* a check failed */
extern int use_tsc;			/* timestamps: rdtsc */
extern char ctl_path[HOSTILE_PATH_MAX];	/* control.sock */
extern const char *hello_comm;		/* what HELLO says */

/* A ring as its producer sees it, mapped once like libtraced does. */
struct hring {
	int		 fd;
	uint32_t	 index;
	uint32_t	 order;
	uint64_t	 size;
	uint8_t		*base;
	struct traced_ring_hdr *h;
	uint8_t		*data;
	uint64_t	 head;		/* private; published by ring_publish */
	uint64_t	 ts;		/* last timestamp written */
};

int	check(int ok, const char *name, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
uint64_t now_ns(void);
uint64_t now_ts(void);
void	sleep_ms(int ms);
int	h_connect_to(const char *path, int nonblock);
int	h_connect(int nonblock);
int	h_sendmsg(int sock, const void *msg, size_t len, const int *fds,
	    int nfds, int split, int flags);
int	h_sendv(int sock, const void *msg, size_t len, const int *fds, int nfds,
	    int split);
int	h_send(int sock, const void *msg, size_t len, int fd);
ssize_t	h_recv(int sock, uint32_t type, void *buf, size_t size, int *fdp,
	    int ms);
int	h_closed(int sock, int ms);
void	hello_init(struct traced_msg_hello *m);
int	h_session(void);
int	memfd_with(const char *text, size_t len, size_t file_size, int seals);
int	state_memfd(uint32_t nevents);
int	provider_send_fds(int sock, const struct traced_msg_provider *m,
	    int desc_fd, int state_fd);
int	provider_send(int sock, const char *text, size_t len, uint32_t nevents,
	    uint32_t index, uint32_t id_base, int seals, uint32_t desc_size);
int	module_send(int sock, uint32_t index, uint32_t flags, const char *path);
int	funcs_send(int sock, uint32_t module, const char *text,
	    uint32_t nfuncs);
int	h_provider_session(void);
int	ring_make(struct hring *r, uint32_t index, uint32_t order, int seals);
void	ring_unmake(struct hring *r);
int	ring_send_fd(int sock, const struct hring *r, int fd);
int	notify(int sock, uint32_t index);
void	rec_put_raw(struct hring *r, uint32_t id, uint32_t size, uint64_t ts,
	    const void *payload, size_t plen);
void	rec_put(struct hring *r, uint32_t id, uint32_t size, uint64_t ts,
	    const void *payload, size_t plen);
void	put_tick(struct hring *r, uint64_t seq);
void	ring_publish(struct hring *r);
int	ring_wait_tail(struct hring *r, uint64_t pos, int ms);
int	ring_session(struct hring *r, const char *name);
void	ring_expect_refused(int sock, struct hring *r, uint64_t bad,
	    const char *name);
void	case_ring_no_provider(const char *name);
void	case_ring(const char *name);
void	case_ring_thread_flood(const char *name);
void	case_ring_good(const char *name);
void	case_ring_scribble(const char *name);
void	case_ring_order(const char *name);
void	case_ring_order_race(const char *name);
void	case_ring_tail(const char *name);
void	case_ring_header(const char *name);
void	case_msg(const char *name);
void	case_fd(const char *name);
void	case_state(const char *name);
void	case_rules(const char *name);
void	case_shrink(const char *name);
void	case_reset(const char *name);
int	flood(int n, double seconds, int hello);
void	case_ring_ts_future(const char *name);
int	run_command(int argc, char *argv[], int *rc);
int	funcs_command(int argc, char *argv[], int *rc);
uint64_t deadline_in(double seconds);
int	h_sendv_until(int sock, const void *msg, size_t len, const int *fds,
	    int nfds, uint64_t deadline);
int	h_hup(int sock);

#endif /* TRACED_TESTS_HOSTILE_H */
