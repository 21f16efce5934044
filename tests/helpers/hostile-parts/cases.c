/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The hostile helper's cases that get things wrong on purpose: (a)
 * ring contents, (b) messages, (c) the wrong kind of descriptor, the
 * process's own rules, (e) shrinking what the daemon maps, and (d) many
 * connections.  Each prints one line of what happened and checks what
 * it can see from its side; hostile.c lists them with the log line
 * each expects.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "functab.h"
#include "hostile.h"
#include "ring.h"
#include "tevents.h"
#include "wire.h"

/*
 * A ring, and events in it, from a session that never registered a
 * provider: the daemon has no event table for it, so every id is
 * unknown and the ring is refused (it once took the table's reference
 * count through a NULL pointer).
 */
void
case_ring_no_provider(const char *name)
{
	struct hring r;
	int sock = h_session();

	if (sock == -1) {
		check(0, name, "no session");
		return;
	}
	if (ring_make(&r, 0, ORDER, F_SEAL_SHRINK) == -1) {
		close(sock);
		return;
	}
	ring_send_fd(sock, &r, r.fd);
	put_tick(&r, 1);
	ring_publish(&r);
	notify(sock, r.index);
	sleep_ms(200);
	check(__atomic_load_n(&r.h->tail, __ATOMIC_ACQUIRE) == 0, name,
	    "events of no provider were drained");
	printf("%s: refused, connection %s\n", name,
	    h_closed(sock, 100) ? "closed" : "kept");
	ring_unmake(&r);
	close(sock);
}

/* ---- (a) ring contents -------------------------------------------- */

void
case_ring(const char *name)
{
	struct hring r;
	uint64_t bad;
	int sock = ring_session(&r, name);
	struct traced_lost lost;
	char rec[64];

	if (sock == -1)
		return;
	bad = r.head;
	if (strcmp(name, "ring-head-beyond") == 0) {
		r.head = bad + r.size + 8;
	} else if (strcmp(name, "ring-head-back") == 0) {
		r.head = bad - 8;
	} else if (strcmp(name, "ring-head-max") == 0) {
		r.head = UINT64_MAX - 7;
	} else if (strcmp(name, "ring-huge-size") == 0) {
		rec_put(&r, ID_TICK, 1u << 20, now_ts(), NULL, 0);
		r.head = bad + 64;
	} else if (strcmp(name, "ring-tiny-size") == 0) {
		rec_put(&r, ID_TICK, 8, now_ts(), NULL, 0);
		r.head = bad + 64;
	} else if (strcmp(name, "ring-odd-size") == 0) {
		rec_put(&r, ID_TICK, 28, now_ts(), NULL, 0);
		r.head = bad + 64;
	} else if (strcmp(name, "ring-unknown-id") == 0) {
		rec_put(&r, 4242, 24, now_ts(), NULL, 0);
	} else if (strcmp(name, "ring-reserved-id") == 0) {
		rec_put(&r, 5, 24, now_ts(), NULL, 0);
	} else if (strcmp(name, "ring-past-head") == 0) {
		rec_put(&r, ID_TICK, 24, now_ts(), NULL, 0);
		r.head = bad + 16;
	} else if (strcmp(name, "ring-ts-back") == 0) {
		rec_put(&r, ID_TICK, 24, r.ts - 1000000, NULL, 0);
	} else if (strcmp(name, "ring-no-nul") == 0) {
		memset(rec, 'x', sizeof(rec));
		rec_put(&r, ID_STR, 40, now_ts(), rec, 24);
	} else if (strcmp(name, "ring-size-mismatch") == 0) {
		rec_put(&r, ID_TICK, 32, now_ts(), NULL, 0);
	} else if (strcmp(name, "ring-str-short") == 0) {
		/* The string ends, the integer after it does not fit. */
		memcpy(rec, "abcdefg", 8);
		rec_put(&r, ID_STR, 24, now_ts(), rec, 8);
	} else if (strcmp(name, "ring-bad-lost") == 0) {
		memset(&lost, 0, sizeof(lost));
		lost.count = 10;
		lost.cause[0] = 3;
		rec_put(&r, TRACED_EVENT_LOST, TRACED_LOST_REC_SIZE, now_ts(),
		    &lost, sizeof(lost));
	} else if (strcmp(name, "ring-lost-size") == 0) {
		memset(&lost, 0, sizeof(lost));
		rec_put(&r, TRACED_EVENT_LOST, 32, now_ts(), &lost, 16);
	} else if (strcmp(name, "ring-pad-misplaced") == 0) {
		/* Padding that does not reach the end of the ring. */
		uint32_t pad[2] = { TRACED_EVENT_PAD, 16 };

		memcpy(r.data + (r.head & (r.size - 1)), pad, sizeof(pad));
		r.head += 16;
		put_tick(&r, 5);
	} else if (strcmp(name, "ring-cross-lap") == 0) {
		/* Good records up to 16 bytes before the end of the ring,
		 * then one that runs 8 bytes past it instead of a PAD. */
		while (r.head % r.size != r.size - 16)
			put_tick(&r, r.head);
		bad = r.head;
		rec_put_raw(&r, ID_TICK, 24, now_ts(), &bad, 8);
	} else if (strcmp(name, "ring-thread-size") == 0) {
		struct traced_thread_rec tr = { 4242, 9 };

		rec_put(&r, TRACED_EVENT_THREAD, TRACED_THREAD_REC_SIZE + 8,
		    now_ts(), &tr, sizeof(tr));
	} else if (strcmp(name, "ring-thread-tid") == 0) {
		struct traced_thread_rec tr = { 0, 9 };

		rec_put(&r, TRACED_EVENT_THREAD, TRACED_THREAD_REC_SIZE,
		    now_ts(), &tr, sizeof(tr));
	} else if (strcmp(name, "ring-zeros") == 0) {
		/* Punch the data pages out: F_SEAL_SHRINK allows it, and
		 * the daemon then reads zeros, never a SIGBUS. */
		put_tick(&r, 7);
		if (fallocate(r.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		    TRACED_RING_HDR_SIZE, (off_t)r.size) == -1)
			check(0, name, "fallocate: %s", strerror(errno));
	}
	ring_publish(&r);
	ring_expect_refused(sock, &r, bad, name);
}

/*
 * THREAD records, as many as the ring takes, lap after lap: more
 * threads than the daemon keeps books of one by one (a program would
 * need 20,000 threads; this costs 480 KB of ring).  The daemon counts
 * the rest together and goes on reading the ring: good records after
 * the flood are drained.
 */
void
case_ring_thread_flood(const char *name)
{
	struct traced_thread_rec tr;
	struct hring r;
	uint64_t i, lap;
	int sock = ring_session(&r, name);

	if (sock == -1)
		return;
	for (i = 0; i < 20000; ) {
		lap = r.head + r.size / 2;
		while (r.head < lap && i < 20000) {
			tr.tid = (uint32_t)(1000 + i % 50000);
			tr.index = (uint32_t)(1 + i);
			rec_put(&r, TRACED_EVENT_THREAD, TRACED_THREAD_REC_SIZE,
			    now_ts(), &tr, sizeof(tr));
			i++;
		}
		ring_publish(&r);
		/* The ring goes by the number of its last thread. */
		notify(sock, tr.index);
		if (!ring_wait_tail(&r, r.head, 5000)) {
			check(0, name, "the ring is not drained after %llu "
			    "thread records", (unsigned long long)i);
			break;
		}
	}
	put_tick(&r, 1);
	put_tick(&r, 2);
	ring_publish(&r);
	notify(sock, tr.index);
	check(ring_wait_tail(&r, r.head, 5000), name,
	    "good records after the flood not drained");
	printf("%s: %llu thread records read\n", name,
	    (unsigned long long)i);
	ring_unmake(&r);
	close(sock);
}

/* Good records across the wrap, a valid loss record, a lying tail. */
void
case_ring_good(const char *name)
{
	struct hring r;
	struct traced_lost lost;
	uint64_t i, want;
	int sock = ring_session(&r, name);
	char rec[32];

	if (sock == -1)
		return;
	for (i = 3; i < 3 + 2 * RSIZE / 24; i++) {
		if (r.head + 128 - __atomic_load_n(&r.h->tail,
		    __ATOMIC_ACQUIRE) > r.size) {
			ring_publish(&r);
			notify(sock, r.index);
			ring_wait_tail(&r, r.head, 3000);
		}
		if (i % 50 == 0) {
			memset(&lost, 0, sizeof(lost));
			lost.count = lost.cause[TRACED_DROP_RING_FULL] = 2;
			rec_put(&r, TRACED_EVENT_LOST, TRACED_LOST_REC_SIZE,
			    now_ts(), &lost, sizeof(lost));
		}
		if (i % 7 == 0) {
			memset(rec, 0, sizeof(rec));
			snprintf(rec, sizeof(rec), "s%llu",
			    (unsigned long long)i);
			want = strlen(rec) + 1;
			memcpy(rec + ((16 + want + 7) & ~7u) - 16, &i, 8);
			rec_put(&r, ID_STR, (uint32_t)(((16 + want + 7) & ~7u) +
			    8), now_ts(), rec, sizeof(rec) - 8);
		} else
			put_tick(&r, i);
	}
	ring_publish(&r);
	notify(sock, r.index);
	check(ring_wait_tail(&r, r.head, 3000), name,
	    "good records across the wrap not drained");
	/* The producer may scribble on the daemon's fields: the daemon
	 * keeps its own tail and overwrites ours at its next drain. */
	__atomic_store_n(&r.h->tail, 8, __ATOMIC_RELEASE);
	r.h->wakeup = 7;
	for (i = 0; i < 3; i++)
		put_tick(&r, 1000 + i);
	ring_publish(&r);
	notify(sock, r.index);
	check(ring_wait_tail(&r, r.head, 3000), name,
	    "not drained after the producer wrote tail");
	printf("%s: %llu bytes drained across the wrap\n", name,
	    (unsigned long long)r.head);
	ring_unmake(&r);
	close(sock);
}

/* Garbage in the data area and head, changing while the daemon reads. */
struct scribble {
	struct hring	*r;
	volatile int	 stop;
};

static void *
scribble_main(void *arg)
{
	struct scribble *sc = arg;
	uint64_t x = 88172645463325252ull, base = sc->r->head;
	size_t i;

	while (!sc->stop) {
		for (i = 0; i < sc->r->size / 8; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			memcpy(sc->r->data + i * 8, &x, 8);
		}
		__atomic_store_n(&sc->r->h->head, base + (x % (2 *
		    sc->r->size)), __ATOMIC_RELEASE);
	}
	return NULL;
}

void
case_ring_scribble(const char *name)
{
	struct hring r;
	struct scribble sc;
	pthread_t th;
	int sock = ring_session(&r, name), i;

	if (sock == -1)
		return;
	sc.r = &r;
	sc.stop = 0;
	pthread_create(&th, NULL, scribble_main, &sc);
	for (i = 0; i < 500; i++) {
		notify(sock, r.index);
		sleep_ms(2);
	}
	sc.stop = 1;
	pthread_join(th, NULL);
	printf("%s: scribbled for 1 s, connection %s\n", name,
	    h_closed(sock, 100) ? "closed" : "kept");
	ring_unmake(&r);
	close(sock);
}

/*
 * The size a ring says it has: it may only grow, and only as far as its
 * memory goes.  A ring of twice the smallest size is drained once, then
 * says it went back to the smallest, or beyond its memory.
 */
void
case_ring_order(const char *name)
{
	struct hring r;
	uint64_t bad, i;
	int sock = h_provider_session();

	if (sock == -1 || ring_make(&r, 0, ORDER + 1, F_SEAL_SHRINK) == -1) {
		check(0, name, "no session or ring");
		return;
	}
	ring_send_fd(sock, &r, r.fd);
	for (i = 0; i < 3; i++)
		put_tick(&r, i);
	ring_publish(&r);
	notify(sock, r.index);
	if (!ring_wait_tail(&r, r.head, 3000)) {
		check(0, name, "good records not drained");
		ring_unmake(&r);
		close(sock);
		return;
	}
	bad = r.head;
	__atomic_store_n(&r.h->order, strcmp(name, "ring-order-back") == 0 ?
	    ORDER : ORDER + 2, __ATOMIC_RELAXED);
	put_tick(&r, 3);
	ring_publish(&r);
	ring_expect_refused(sock, &r, bad, name);
}

/*
 * The size a ring says it has, changed while the daemon takes the ring
 * (issue 25, finding 5): the loop checks the header when the RING
 * message comes, the drain thread reads it again when it adopts the
 * ring; between the two the size becomes 2^64 (a shift by 64 in the
 * daemon, and a uid charged 2^63 bytes, if it were taken).  1,000
 * rings, each on a session of its own, the change made at once or
 * after up to 200 us, so that it lands on either side of the check.
 * The daemon refuses the header or ends the ring, and goes on (092
 * checks it lives, and under ASan and UBSan that nothing is reported).
 */
void
case_ring_order_race(const char *name)
{
	struct timespec ts = { 0, 0 };
	struct hring r;
	int i, sock, done = 0;

	for (i = 0; i < 1000; i++) {
		if ((sock = h_provider_session()) == -1)
			break;
		if (ring_make(&r, 0, ORDER + 1, F_SEAL_SHRINK) == -1) {
			close(sock);
			break;
		}
		put_tick(&r, 1);
		ring_publish(&r);
		ring_send_fd(sock, &r, r.fd);
		ts.tv_nsec = (long)(i % 5) * 50000;
		if (ts.tv_nsec > 0)
			nanosleep(&ts, NULL);
		__atomic_store_n(&r.h->order, 64, __ATOMIC_RELAXED);
		notify(sock, r.index);
		ring_unmake(&r);
		close(sock);
		done++;
	}
	check(done == 1000, name, "only %d of 1000 sessions made", done);
	printf("%s: %d rings changed their size under the daemon\n", name,
	    done);
}

/*
 * A ring whose tail, where the daemon starts reading, is off an 8-byte
 * boundary (records never are): refused at its first visit, nothing
 * read.
 */
void
case_ring_tail(const char *name)
{
	struct hring r;
	int sock = h_provider_session();

	if (sock == -1 || ring_make(&r, 0, ORDER, F_SEAL_SHRINK) == -1) {
		check(0, name, "no session or ring");
		return;
	}
	r.h->tail = 4;
	r.head = 4;
	put_tick(&r, 1);
	ring_publish(&r);
	ring_send_fd(sock, &r, r.fd);
	notify(sock, r.index);
	sleep_ms(300);
	check(__atomic_load_n(&r.h->tail, __ATOMIC_ACQUIRE) == 4, name,
	    "daemon read a ring from a tail off a record boundary");
	printf("%s: refused, connection %s\n", name,
	    h_closed(sock, 100) ? "closed" : "kept");
	ring_unmake(&r);
	close(sock);
}

/* Ring messages whose memfd header lies. */
void
case_ring_header(const char *name)
{
	struct hring r;
	int sock = h_provider_session();

	if (sock == -1 || ring_make(&r, 0, ORDER, F_SEAL_SHRINK) == -1) {
		check(0, name, "no session or ring");
		return;
	}
	if (strcmp(name, "ring-bad-magic") == 0)
		r.h->magic = 0xdeadbeef;
	else if (strcmp(name, "ring-bad-version") == 0)
		r.h->version = 99;
	else
		r.h->order = ORDER + 1;
	ring_send_fd(sock, &r, r.fd);
	check(h_closed(sock, 2000), name, "daemon kept the connection");
	printf("%s: refused, connection closed\n", name);
	ring_unmake(&r);
	close(sock);
}

/* ---- (b) messages ----------------------------------------------------- */

void
case_msg(const char *name)
{
	_Alignas(8) char buf[TRACED_MSG_MAX + 1024];
	struct traced_msg_hello *hm = (void *)buf;
	struct traced_msg_notify *nm = (void *)buf;
	struct traced_msg_hdr *h = (void *)buf;
	struct hring r;
	int sock, fds[8], i, ev;
	size_t len;

	memset(buf, 0, sizeof(buf));
	if (strncmp(name, "msg-pre-", 8) == 0) {
		/* Cases before HELLO. */
		sock = h_connect(0);
		if (sock == -1) {
			check(0, name, "connect: %s", strerror(errno));
			return;
		}
		hello_init(hm);
		len = sizeof(*hm);
		if (strcmp(name, "msg-pre-truncated") == 0)
			len = 4;
		else if (strcmp(name, "msg-pre-size-field") == 0)
			hm->hdr.size = 400;
		else if (strcmp(name, "msg-pre-oversized") == 0) {
			len = TRACED_MSG_MAX + 512;
			hm->hdr.size = (uint32_t)len;
		} else if (strcmp(name, "msg-pre-long") == 0) {
			len = 600;
			hm->hdr.size = (uint32_t)len;
		} else if (strcmp(name, "msg-pre-type") == 0)
			hm->hdr.type = 77;
		else if (strcmp(name, "msg-pre-type-zero") == 0)
			hm->hdr.type = 0;
		else if (strcmp(name, "msg-pre-daemon-type") == 0) {
			struct traced_msg_welcome *w = (void *)buf;

			memset(buf, 0, sizeof(*w));
			w->hdr.type = TRACED_MSG_WELCOME;
			w->hdr.size = sizeof(*w);
			w->version = TRACED_PROTOCOL_VERSION;
			w->clock = TRACED_CLOCK_MONOTONIC;
			w->ring_order = ORDER;
			len = sizeof(*w);
		} else if (strcmp(name, "msg-pre-version") == 0)
			hm->version = TRACED_PROTOCOL_VERSION + 1;
		else if (strcmp(name, "msg-pre-type-size") == 0) {
			len = sizeof(*hm) + 8;
			hm->hdr.size = (uint32_t)len;
		} else if (strcmp(name, "msg-pre-comm") == 0)
			memset(hm->comm, 'A', sizeof(hm->comm));
		else if (strcmp(name, "msg-pre-comm-ctl") == 0)
			memcpy(hm->comm, "a\033[2Jb", 6);
		else if (strcmp(name, "msg-pre-flags") == 0)
			hm->flags = 0x80;
		else if (strcmp(name, "msg-pre-garbage") == 0) {
			uint64_t x = now_ns() | 1;

			for (i = 0; i < 64; i++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				buf[i] = (char)x;
			}
			len = 64;
		} else if (strcmp(name, "msg-pre-empty") == 0)
			len = 0;
		else if (strcmp(name, "msg-pre-ring") == 0) {
			if (ring_make(&r, 0, ORDER, F_SEAL_SHRINK) == -1)
				return;
			ring_send_fd(sock, &r, r.fd);
			ring_unmake(&r);
			len = (size_t)-1;
		} else if (strcmp(name, "msg-pre-notify") == 0) {
			notify(sock, 0);
			len = (size_t)-1;
		}
		if (len != (size_t)-1)
			h_send(sock, buf, len, -1);
		check(h_closed(sock, 2000), name,
		    "daemon kept the connection");
		printf("%s: connection closed\n", name);
		close(sock);
		return;
	}

	/* Cases after HELLO and our provider. */
	sock = h_provider_session();
	if (sock == -1) {
		check(0, name, "no session");
		return;
	}
	if (strcmp(name, "msg-second-hello") == 0) {
		hello_init(hm);
		h_send(sock, hm, sizeof(*hm), -1);
	} else if (strcmp(name, "msg-notify-unknown") == 0) {
		notify(sock, 7);
	} else if (strcmp(name, "msg-notify-fd") == 0) {
		memset(nm, 0, sizeof(*nm));
		nm->hdr.type = TRACED_MSG_NOTIFY;
		nm->hdr.size = sizeof(*nm);
		ev = eventfd(0, EFD_CLOEXEC);
		h_send(sock, nm, sizeof(*nm), ev);
		close(ev);
	} else if (strcmp(name, "msg-ring-no-fd") == 0) {
		struct traced_msg_ring *rm = (void *)buf;

		rm->hdr.type = TRACED_MSG_RING;
		rm->hdr.size = sizeof(*rm);
		rm->tid = 1;
		rm->max_order = ORDER;
		h_send(sock, rm, sizeof(*rm), -1);
	} else if (strcmp(name, "msg-ring-many-fds") == 0 ||
	    strcmp(name, "msg-ring-two-cmsgs") == 0) {
		int split = strcmp(name, "msg-ring-two-cmsgs") == 0;
		int n = split ? 2 : 8;
		struct traced_msg_ring rm;

		if (ring_make(&r, 0, ORDER, F_SEAL_SHRINK) == -1)
			return;
		for (i = 0; i < n; i++)
			fds[i] = r.fd;
		memset(&rm, 0, sizeof(rm));
		rm.hdr.type = TRACED_MSG_RING;
		rm.hdr.size = sizeof(rm);
		rm.tid = 1;
		rm.max_order = ORDER;
		h_sendv(sock, &rm, sizeof(rm), fds, n, split);
		ring_unmake(&r);
	} else if (strcmp(name, "msg-ring-twice") == 0) {
		if (ring_make(&r, 0, ORDER, F_SEAL_SHRINK) == -1)
			return;
		ring_send_fd(sock, &r, r.fd);
		ring_send_fd(sock, &r, r.fd);
		ring_unmake(&r);
	} else if (strcmp(name, "msg-ring-order") == 0) {
		struct traced_msg_ring rm;

		if (ring_make(&r, 0, ORDER, F_SEAL_SHRINK) == -1)
			return;
		memset(&rm, 0, sizeof(rm));
		rm.hdr.type = TRACED_MSG_RING;
		rm.hdr.size = sizeof(rm);
		rm.tid = 1;
		rm.max_order = 40;
		h_send(sock, &rm, sizeof(rm), r.fd);
		ring_unmake(&r);
	} else if (strcmp(name, "msg-provider-order") == 0) {
		/* Our provider was number 0: numbers only go up. */
		provider_send(sock, desc, desc_len, 2, 0,
		    TRACED_EVENT_ID_BASE + 2, F_SEAL_SHRINK | F_SEAL_WRITE, desc_len);
	} else if (strcmp(name, "msg-provider-ids-back") == 0) {
		/* Event ids overlapping our provider's (16 and 17). */
		provider_send(sock, desc, desc_len, 2, 1,
		    TRACED_EVENT_ID_BASE + 1, F_SEAL_SHRINK | F_SEAL_WRITE, desc_len);
	} else if (strcmp(name, "msg-provider-bad-text") == 0) {
		static const char junk[] = "this is not(trace events\n\"\n";

		provider_send(sock, junk, sizeof(junk) - 1, 2, 1,
		    TRACED_EVENT_ID_BASE + 2, F_SEAL_SHRINK | F_SEAL_WRITE, sizeof(junk) - 1);
	} else if (strcmp(name, "msg-provider-count") == 0) {
		struct traced_msg_provider pm;
		int fd = memfd_with(desc, desc_len, desc_len,
		    F_SEAL_SHRINK | F_SEAL_WRITE);

		memset(&pm, 0, sizeof(pm));
		pm.hdr.type = TRACED_MSG_PROVIDER;
		pm.hdr.size = sizeof(pm);
		pm.index = 1;
		pm.id_base = TRACED_EVENT_ID_BASE + 2;
		pm.nevents = 3;
		pm.desc_size = desc_len;
		snprintf(pm.name, sizeof(pm.name), "liar");
		provider_send_fds(sock, &pm, fd, -1);
		close(fd);
	} else if (strcmp(name, "msg-provider-unsealed") == 0) {
		provider_send(sock, desc, desc_len, 2, 1,
		    TRACED_EVENT_ID_BASE + 2, F_SEAL_SHRINK, desc_len);
	} else if (strcmp(name, "msg-provider-size") == 0) {
		struct traced_msg_provider pm;
		int fd = memfd_with(desc, desc_len, desc_len,
		    F_SEAL_SHRINK | F_SEAL_WRITE);

		memset(&pm, 0, sizeof(pm));
		pm.hdr.type = TRACED_MSG_PROVIDER;
		pm.hdr.size = sizeof(pm);
		pm.index = 1;
		pm.id_base = TRACED_EVENT_ID_BASE + 2;
		pm.nevents = 2;
		pm.desc_size = 1u << 20;
		snprintf(pm.name, sizeof(pm.name), "liar");
		provider_send_fds(sock, &pm, fd, -1);
		close(fd);
	} else if (strcmp(name, "msg-provider-zeros") == 0) {
		/* 16 MiB of NULs, sealed: a big, empty description. */
		struct traced_msg_provider pm;
		int fd = memfd_with(NULL, 0, TRACED_DESC_MAX,
		    F_SEAL_SHRINK | F_SEAL_WRITE);

		memset(&pm, 0, sizeof(pm));
		pm.hdr.type = TRACED_MSG_PROVIDER;
		pm.hdr.size = sizeof(pm);
		pm.index = 1;
		pm.id_base = TRACED_EVENT_ID_BASE + 2;
		pm.nevents = 2;
		pm.desc_size = TRACED_DESC_MAX;
		snprintf(pm.name, sizeof(pm.name), "zeros");
		provider_send_fds(sock, &pm, fd, -1);
		close(fd);
	} else if (strcmp(name, "msg-module-order") == 0) {
		module_send(sock, 1, 0, "/hostile/a");
		module_send(sock, 0, 0, "/hostile/b");
	} else if (strcmp(name, "msg-module-odd-path") == 0) {
		/* A C1 control (U+0085) and a byte that is not UTF-8
		 * (C0 controls are refused by the wire check). */
		module_send(sock, 0, 0, "/hostile/\xc2\x85" "c1\xff" "bad");
		/* Not an error: the path is kept, cleaned (092 reads it). */
		check(!h_closed(sock, 300), name, "daemon closed the "
		    "connection of a module with an odd but valid path");
		printf("%s: odd module path taken, connection kept\n", name);
		close(sock);
		return;
	} else if (strcmp(name, "msg-funcs-unannounced") == 0) {
		module_send(sock, 0, 0, "/hostile/a");
		funcs_send(sock, 0, "10 4 p f\n", 1);
	} else if (strcmp(name, "msg-funcs-bad-table") == 0) {
		module_send(sock, 0, TRACED_MODULE_FUNCS, "/hostile/a");
		funcs_send(sock, 0, "10 4 p f\n8 4 p g\n", 2);
	} else if (strcmp(name, "msg-funcs-count") == 0) {
		module_send(sock, 0, TRACED_MODULE_FUNCS, "/hostile/a");
		funcs_send(sock, 0, "10 4 p f\n20 4 p g\n", 3);
	} else if (strcmp(name, "msg-notify-flood") == 0) {
		/* Not an error: many drains asked for a good ring. */
		if (ring_make(&r, 0, ORDER, F_SEAL_SHRINK) == -1 ||
		    ring_send_fd(sock, &r, r.fd) == -1)
			return;
		for (i = 0; i < 20000; i++) {
			if (i % 10 == 0 && r.head + 24 - __atomic_load_n(
			    &r.h->tail, __ATOMIC_ACQUIRE) <= r.size) {
				put_tick(&r, (uint64_t)i);
				ring_publish(&r);
			}
			if (notify(sock, 0) == -1)
				break;
		}
		check(ring_wait_tail(&r, r.head, 5000), name,
		    "ring not drained after the flood");
		check(!h_closed(sock, 200), name, "daemon closed the "
		    "connection of a client that only asked often");
		printf("%s: 20000 notifies, ring drained, connection kept\n",
		    name);
		ring_unmake(&r);
		close(sock);
		return;
	} else
		check(0, name, "unknown case");
	(void)h;
	check(h_closed(sock, 3000), name, "daemon kept the connection");
	printf("%s: connection closed\n", name);
	close(sock);
}

/* ---- (c) the wrong kind of descriptor for a ring ---------------------- */

void
case_fd(const char *name)
{
	struct hring r;
	int sock = h_provider_session(), fd = -1, p[2], sv[2], ring = 0;
	char path[64];

	if (sock == -1) {
		check(0, name, "no session");
		return;
	}
	memset(&r, 0, sizeof(r));
	r.order = ORDER;
	if (strcmp(name, "fd-pipe") == 0) {
		if (pipe(p) == 0) {
			fd = p[0];
			close(p[1]);
		}
	} else if (strcmp(name, "fd-socket") == 0) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0) {
			fd = sv[0];
			close(sv[1]);
		}
	} else if (strcmp(name, "fd-eventfd") == 0) {
		fd = eventfd(0, 0);
	} else if (strcmp(name, "fd-devnull") == 0) {
		fd = open("/dev/null", O_RDWR);
	} else if (strcmp(name, "fd-dir") == 0) {
		fd = open("/", O_RDONLY | O_DIRECTORY);
	} else if (strcmp(name, "fd-file") == 0) {
		/* A regular file, big enough, in the current directory. */
		snprintf(path, sizeof(path), "hostile-file.%d", (int)getpid());
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd != -1) {
			unlink(path);
			if (ftruncate(fd, TRACED_RING_HDR_SIZE + RSIZE) == -1)
				check(0, name, "ftruncate");
		}
	} else if (strcmp(name, "fd-unsealed") == 0) {
		if (ring_make(&r, 0, ORDER, 0) == 0) {
			ring = 1;
			fd = dup(r.fd);
		}
	} else if (strcmp(name, "fd-no-sealing") == 0) {
		fd = memfd_create("nosealing", MFD_CLOEXEC);
		if (fd != -1 && ftruncate(fd, TRACED_RING_HDR_SIZE + RSIZE) ==
		    -1)
			check(0, name, "ftruncate");
	} else if (strcmp(name, "fd-small") == 0) {
		fd = memfd_with(NULL, 0, TRACED_RING_HDR_SIZE + RSIZE / 2,
		    F_SEAL_SHRINK);
	} else if (strcmp(name, "fd-readonly") == 0) {
		/* A read-only descriptor of a good memfd. */
		if (ring_make(&r, 0, ORDER, F_SEAL_SHRINK) == 0) {
			ring = 1;
			snprintf(path, sizeof(path), "/proc/self/fd/%d", r.fd);
			fd = open(path, O_RDONLY);
		}
	} else if (strcmp(name, "fd-write-sealed") == 0) {
		/* Sealed against writing: the daemon cannot map it to
		 * store its tail.  No writable mapping may exist. */
		if (ring_make(&r, 0, ORDER, 0) == 0) {
			munmap(r.base, TRACED_RING_HDR_SIZE + r.size);
			if (fcntl(r.fd, F_ADD_SEALS, F_SEAL_SHRINK |
			    F_SEAL_WRITE) == -1)
				check(0, name, "F_SEAL_WRITE: %s",
				    strerror(errno));
			fd = r.fd;
		}
	}
	if (fd == -1) {
		check(0, name, "could not make the descriptor: %s",
		    strerror(errno));
		close(sock);
		return;
	}
	ring_send_fd(sock, &r, fd);
	close(fd);
	check(h_closed(sock, 2000), name, "daemon kept the connection");
	printf("%s: refused, connection closed\n", name);
	if (ring)
		ring_unmake(&r);
	close(sock);
}

/*
 * The state array the daemon writes into is the client's memfd: the
 * wrong kind of descriptor there, or none, is refused like a bad ring.
 * state-written is the good case: the daemon wrote the default state
 * (both events on) into our memfd before it acked.
 */
void
case_state(const char *name)
{
	_Alignas(8) char buf[256];
	struct traced_msg_provider m;
	int sock = h_session(), dfd, sfd = -1, p[2], ok = 1;
	char path[64];
	unsigned char bytes[2] = { 0, 0 };

	if (sock == -1) {
		check(0, name, "no session");
		return;
	}
	/* A page long, so that as a state array it is big enough. */
	dfd = memfd_with(desc, desc_len, 4096,
	    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE);
	memset(&m, 0, sizeof(m));
	m.hdr.type = TRACED_MSG_PROVIDER;
	m.hdr.size = sizeof(m);
	m.id_base = TRACED_EVENT_ID_BASE;
	m.nevents = 2;
	m.desc_size = desc_len;
	snprintf(m.name, sizeof(m.name), "hostile");
	if (strcmp(name, "state-missing") == 0) {
		/* Protocol 1's PROVIDER: the description alone. */
		if (dfd != -1)
			h_sendv(sock, &m, sizeof(m), &dfd, 1, 0);
	} else {
		if (strcmp(name, "state-pipe") == 0) {
			if (pipe(p) == 0) {
				sfd = p[0];
				close(p[1]);
			}
		} else if (strcmp(name, "state-unsealed") == 0) {
			sfd = memfd_with(NULL, 0, 4096, 0);
		} else if (strcmp(name, "state-small") == 0) {
			sfd = memfd_with(NULL, 0, 1, F_SEAL_SHRINK);
		} else if (strcmp(name, "state-write-sealed") == 0) {
			sfd = memfd_with(NULL, 0, 4096,
			    F_SEAL_SHRINK | F_SEAL_WRITE);
		} else if (strcmp(name, "state-readonly") == 0) {
			int good = state_memfd(2);

			snprintf(path, sizeof(path), "/proc/self/fd/%d", good);
			sfd = open(path, O_RDONLY);
			close(good);
		} else if (strcmp(name, "state-is-desc") == 0) {
			sfd = dup(dfd);
		} else if (strcmp(name, "state-hugetlb") == 0) {
			sfd = memfd_create("hostile", MFD_CLOEXEC |
			    MFD_ALLOW_SEALING | MFD_HUGETLB);
			if (sfd == -1) {
				printf("%s: skipped: no hugetlbfs memfd here "
				    "(%s)\n", name, strerror(errno));
				close(dfd);
				close(sock);
				return;
			}
			if (ftruncate(sfd, 2 << 20) == -1 ||
			    fcntl(sfd, F_ADD_SEALS, F_SEAL_SHRINK) == -1) {
				close(sfd);
				sfd = -1;
			}
		} else
			sfd = state_memfd(2);		/* state-written */
		if (dfd == -1 || sfd == -1) {
			check(0, name, "could not make the descriptors: %s",
			    strerror(errno));
			ok = 0;
		} else
			provider_send_fds(sock, &m, dfd, sfd);
	}
	if (ok && strcmp(name, "state-written") == 0) {
		check(h_recv(sock, TRACED_MSG_PROVIDER_ACK, buf, sizeof(buf),
		    NULL, 3000) == sizeof(struct traced_msg_provider_ack),
		    name, "no PROVIDER_ACK");
		if (check(pread(sfd, bytes, 2, 0) == 2 && bytes[0] == 1 &&
		    bytes[1] == 1, name, "state bytes after the ack: %d %d, "
		    "not the default 1 1", bytes[0], bytes[1]))
			printf("%s: the daemon wrote the default state into "
			    "our memfd before its ack\n", name);
	} else if (ok) {
		check(h_closed(sock, 2000), name, "daemon kept the connection");
		printf("%s: refused, connection closed\n", name);
	}
	if (sfd != -1)
		close(sfd);
	if (dfd != -1)
		close(dfd);
	close(sock);
}

/* ---- the process's own rules (RULES) -------------------------------- */

/*
 * Send RULES: rules "+ev_*"... as in proto/wire.h, here two rules
 * ("hostile_tick" off, "x*" on) and a table for provider 0 of
 * 'nevents' events deciding event 0 by rule 'rule0' (0: none).
 */
static int
rules_send(int sock, uint32_t nevents, unsigned rule0, int seals)
{
	uint8_t img[64 + 2 * 16];
	struct traced_msg_rules m;
	size_t n = 0;
	uint32_t i;
	int fd, rc;

	memcpy(img, "\0hostile_tick\0\1x*\0", 18);	/* 14 + 4 */
	n = 18;
	for (; n % 4 != 0; n++)
		img[n] = 0;
	memset(img + n, 0, 8);
	img[n + 4] = (uint8_t)nevents;
	n += 8;
	for (i = 0; i < nevents && i < 16; i++) {
		img[n++] = i == 0 ? (uint8_t)rule0 : 0;
		img[n++] = 0;
	}
	for (; n % 4 != 0; n++)
		img[n] = 0;
	if ((fd = memfd_with((const char *)img, n, n, seals)) == -1)
		return -1;
	memset(&m, 0, sizeof(m));
	m.hdr.type = TRACED_MSG_RULES;
	m.hdr.size = sizeof(m);
	m.gen = 1;
	m.nrules = 2;
	m.size = (uint32_t)n;
	rc = h_send(sock, &m, sizeof(m), fd);
	close(fd);
	return rc;
}

/*
 * rules-good: RULES before PROVIDER turn event 0 off (the process's
 * rule 1, "hostile_tick" off), event 1 keeps the default (on), and the
 * daemon says so before its acks.  The others are refused.
 */
void
case_rules(const char *name)
{
	const int sealed = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
	_Alignas(8) char buf[256];
	struct traced_msg_provider m;
	unsigned char bytes[2] = { 9, 9 };
	int sock, dfd = -1, sfd = -1;

	if (strcmp(name, "rules-before-hello") == 0) {
		if ((sock = h_connect(0)) == -1 ||
		    rules_send(sock, 2, 1, sealed) == -1)
			check(0, name, "could not send");
		check(h_closed(sock, 2000), name, "daemon kept the connection");
		printf("%s: refused, connection closed\n", name);
		close(sock);
		return;
	}
	if (strcmp(name, "rules-late-size") == 0) {
		/* After the provider: the table must have its size. */
		if ((sock = h_provider_session()) == -1 ||
		    rules_send(sock, 3, 1, sealed) == -1)
			check(0, name, "could not send");
		check(h_closed(sock, 2000), name, "daemon kept the connection");
		printf("%s: refused, connection closed\n", name);
		close(sock);
		return;
	}
	if ((sock = h_session()) == -1) {
		check(0, name, "no session");
		return;
	}
	if (strcmp(name, "rules-bad-rule") == 0)
		rules_send(sock, 2, 3, sealed);
	else if (strcmp(name, "rules-unsealed") == 0)
		rules_send(sock, 2, 1, F_SEAL_SHRINK);
	else
		rules_send(sock, strcmp(name, "rules-early-size") == 0 ? 5 : 2,
		    1, sealed);
	if (strcmp(name, "rules-good") == 0 ||
	    strcmp(name, "rules-early-size") == 0) {
		check(h_recv(sock, TRACED_MSG_RULES_ACK, buf, sizeof(buf),
		    NULL, 3000) == sizeof(struct traced_msg_rules_ack), name,
		    "no RULES_ACK");
		dfd = memfd_with(desc, desc_len, desc_len,
		    sealed);
		sfd = state_memfd(2);
		memset(&m, 0, sizeof(m));
		m.hdr.type = TRACED_MSG_PROVIDER;
		m.hdr.size = sizeof(m);
		m.id_base = TRACED_EVENT_ID_BASE;
		m.nevents = 2;
		m.desc_size = desc_len;
		snprintf(m.name, sizeof(m.name), "hostile");
		if (dfd == -1 || sfd == -1)
			check(0, name, "memfds: %s", strerror(errno));
		else
			provider_send_fds(sock, &m, dfd, sfd);
	}
	if (strcmp(name, "rules-good") == 0) {
		check(h_recv(sock, TRACED_MSG_PROVIDER_ACK, buf, sizeof(buf),
		    NULL, 3000) == sizeof(struct traced_msg_provider_ack),
		    name, "no PROVIDER_ACK");
		if (check(pread(sfd, bytes, 2, 0) == 2 && bytes[0] == 0 &&
		    bytes[1] == 1, name, "state bytes %d %d, not 0 (our "
		    "rule) 1 (the default)", bytes[0], bytes[1]))
			printf("%s: our rule turned event 0 off, event 1 kept "
			    "its default\n", name);
	} else {
		check(h_closed(sock, 2000), name, "daemon kept the connection");
		printf("%s: refused, connection closed\n", name);
	}
	if (dfd != -1)
		close(dfd);
	if (sfd != -1)
		close(sfd);
	close(sock);
}

/* ---- (e) shrinking what the daemon maps ----------------------------- */

void
case_shrink(const char *name)
{
	struct hring r;
	int sock = ring_session(&r, name);
	uint64_t i;

	if (sock == -1)
		return;
	/* Sealed: it cannot shrink, whoever tries. */
	errno = 0;
	check(ftruncate(r.fd, TRACED_RING_HDR_SIZE) == -1 && errno == EPERM,
	    name, "ftruncate of a sealed ring did not fail with EPERM: %s",
	    strerror(errno));
	check(ftruncate(r.fd, 0) == -1, name, "ftruncate to 0 worked");
	/* Writing past the end: F_SEAL_GROW refuses it too. */
	check(pwrite(r.fd, "x", 1, (off_t)(TRACED_RING_HDR_SIZE + r.size +
	    4096)) == -1, name, "the sealed ring grew");
	/* Our own mapping going away changes nothing for the daemon. */
	for (i = 3; i < 40; i++)
		put_tick(&r, i);
	ring_publish(&r);
	munmap(r.base, TRACED_RING_HDR_SIZE + r.size);
	notify(sock, r.index);
	sleep_ms(300);
	printf("%s: ftruncate and growth refused (EPERM), records after "
	    "our munmap still drained\n", name);
	close(r.fd);
	close(sock);
}

/*
 * A connection that ends with a reset (we leave a reply unread) right
 * after the daemon received a descriptor from us: nothing of the next
 * client may suffer.  The daemon closes the descriptors it receives
 * once it has mapped them, so the next connection it accepts likely
 * gets the same number.
 */
void
case_reset(const char *name)
{
	_Alignas(8) char buf[256];
	struct traced_msg_hello m;
	int a = h_session(), b;

	if (a == -1) {
		check(0, name, "no session");
		return;
	}
	provider_send(a, desc, desc_len, 2, 0, TRACED_EVENT_ID_BASE,
	    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE, desc_len);
	sleep_ms(200);		/* handled; its ACK waits, unread */
	b = h_connect(0);
	if (b == -1) {
		check(0, name, "connect: %s", strerror(errno));
		close(a);
		return;
	}
	sleep_ms(200);		/* accepted */
	close(a);		/* unread data: the daemon's recvmsg fails */
	sleep_ms(200);
	hello_init(&m);
	h_send(b, &m, sizeof(m), -1);
	check(h_recv(b, TRACED_MSG_WELCOME, buf, sizeof(buf), NULL, 2000) ==
	    sizeof(struct traced_msg_welcome), name, "the next client got no "
	    "WELCOME after the first one reset its connection: the daemon "
	    "closed its socket (daemon/client.c session_read_cb reads the "
	    "control buffer after a failed recvmsg)");
	printf("%s: done\n", name);
	close(b);
}

/* ---- (d) many connections ------------------------------------------- */

int
flood(int n, double seconds, int hello)
{
	struct rlimit rl;
	struct traced_msg_hello m;
	uint64_t deadline;
	int *socks, i, ok = 0, refused = 0;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	socks = calloc((size_t)n, sizeof(*socks));
	if (socks == NULL)
		return 1;
	hello_init(&m);
	deadline = now_ns() + 1000000000u;
	for (i = 0; i < n; i++) {
		/* Non-blocking: a full backlog must not stop us; we try
		 * again for a while, as a patient attacker would. */
		while ((socks[i] = h_connect(1)) == -1 && errno == EAGAIN &&
		    now_ns() < deadline)
			sleep_ms(1);
		if (socks[i] == -1) {
			refused++;
			continue;
		}
		ok++;
		if (hello)
			(void)send(socks[i], &m, sizeof(m), MSG_NOSIGNAL);
	}
	printf("flood: %d connections open, %d refused; holding %.1f s\n",
	    ok, refused, seconds);
	fflush(stdout);
	sleep_ms((int)(seconds * 1000));
	for (i = 0; i < n; i++)
		if (socks[i] != -1)
			close(socks[i]);
	free(socks);
	printf("flood: closed\n");
	return 0;
}
