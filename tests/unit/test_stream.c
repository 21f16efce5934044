/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of daemon/stream.c, the CTF stream writer, the pipeline's first
 * consumer: what reaches a stream file from the chunks handed to it.
 * Whole packets only; packet_seq_num 0, 1, 2...; events_discarded a
 * running total that starts at 0 (losses before the first packet go
 * after an empty one); a write that fails counted as lost and carried
 * by the next packet that makes it; the last, empty packet that closes
 * the books; a feed given up on writes nothing; a stream cut into parts
 * goes on counting across them; a finished thread's file stays open.
 *
 * Linked with stream.o and ctf.o only.  The test stands in for
 * writeout.c (the one struct writeout stream.c reads, wo_global) and
 * the log, and calls the consumer as a writer thread would, on real
 * files.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/ctf.h"
#include "daemon/log.h"
#include "daemon/writeout.h"

/* ---- what writeout.c and log.c would be ----------------------------- */

struct writeout *wo_global;

void
log_info(const char *fmt, ...)
{
	(void)fmt;
}

void
log_warn(const char *fmt, ...)
{
	(void)fmt;
}

/* ---- fixtures -------------------------------------------------------- */

static const uint8_t t_uuid[16] = { 0xa1, 0xb2, 0xc3, 0xd4 };

struct t_stream {
	char		 dir[64];
	char		 path[96];
	struct pfeed	 feed;
	struct pring	 r;
	struct writer	 w;
	struct chunk_list list;
};

static int
setup(void **state)
{
	struct t_stream *t = calloc(1, sizeof(*t));
	int fd;

	if (t == NULL)
		return -1;
	wo_global = calloc(1, sizeof(*wo_global));
	if (wo_global == NULL)
		return -1;
	pthread_mutex_init(&wo_global->lock, NULL);
	snprintf(t->dir, sizeof(t->dir), "/tmp/test_stream.XXXXXX");
	if (mkdtemp(t->dir) == NULL)
		return -1;
	snprintf(t->path, sizeof(t->path), "%s/stream-1", t->dir);
	fd = open(t->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	if (fd == -1)
		return -1;
	t->r.feed = &t->feed;
	t->r.instance = 3;
	t->r.next_fd = -1;
	stream_start(&t->r.st, fd, t_uuid, 1);
	STAILQ_INIT(&t->list);
	*state = t;
	return 0;
}

static int
teardown(void **state)
{
	struct t_stream *t = *state;
	char part[128];
	int i;

	if (t->r.st.fd != -1)
		close(t->r.st.fd);
	unlink(t->path);
	for (i = 1; i < 4; i++) {
		snprintf(part, sizeof(part), "%s.%d", t->path, i);
		unlink(part);
	}
	rmdir(t->dir);
	pthread_mutex_destroy(&wo_global->lock);
	free(wo_global);
	free(t);
	return 0;
}

/*
 * A DATA chunk of 'nev' 16-byte records (id 16, timestamps from 'ts'),
 * as the drain thread makes one, 'discarded' events lost before it.
 */
static struct chunk *
t_data(uint64_t ts, unsigned nev, uint64_t discarded)
{
	struct chunk *c = calloc(1, sizeof(*c));
	struct ctf_packet pk;
	uint32_t len = 16 * nev;
	unsigned i;

	assert_non_null(c);
	c->kind = CHUNK_DATA;
	c->pkt = calloc(1, CTF_PACKET_HDR_SIZE + len);
	assert_non_null(c->pkt);
	for (i = 0; i < nev; i++) {
		uint32_t id = 16;
		uint64_t t64 = ts + i;

		memcpy(c->pkt + CTF_PACKET_HDR_SIZE + 16 * i, &id, 4);
		memcpy(c->pkt + CTF_PACKET_HDR_SIZE + 16 * i + 8, &t64, 8);
	}
	c->len = len;
	c->events = nev;
	c->discarded = discarded;
	c->ts_first = ts;
	c->tid = 42;
	memset(&pk, 0, sizeof(pk));
	pk.uuid = t_uuid;
	pk.stream_instance_id = 3;
	pk.ts_begin = ts;
	pk.ts_end = ts + nev - 1;
	pk.content_bytes = CTF_PACKET_HDR_SIZE + len;
	pk.tid = 42;
	ctf_packet_header(c->pkt, &pk);
	return c;
}

static struct chunk *
t_marker(enum chunk_kind kind)
{
	struct chunk *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	c->kind = kind;
	return c;
}

static void
t_add(struct t_stream *t, struct chunk *c)
{
	c->r = &t->r;
	STAILQ_INSERT_TAIL(&t->list, c, entry);
}

/* Hand the queued chunks to the consumer, as a writer does. */
static void
t_write(struct t_stream *t)
{
	stream_consumer.write(&stream_consumer, &t->r, &t->list, &t->w);
}

static void
t_free_list(struct t_stream *t)
{
	struct chunk *c;

	while ((c = STAILQ_FIRST(&t->list)) != NULL) {
		STAILQ_REMOVE_HEAD(&t->list, entry);
		free(c->pkt);
		free(c);
	}
}

static uint64_t
get64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* A packet of a file, as a reader finds it. */
struct t_pkt {
	uint64_t	 seq;
	uint64_t	 discarded;
	uint64_t	 size;		/* bytes */
	uint64_t	 content;	/* bytes */
	uint32_t	 magic;
	uint8_t		 uuid[16];
	uint64_t	 first_ts;	/* of its first event, 0: none */
};

/* Read the packets of file 'path' into p[]; their number. */
static int
t_read(const char *path, struct t_pkt *p, int max)
{
	uint8_t buf[1 << 16];
	ssize_t n;
	size_t off = 0;
	int fd, k = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd != -1);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	assert_true(n >= 0);
	while (off < (size_t)n && k < max) {
		assert_true((size_t)n - off >= CTF_PACKET_HDR_SIZE);
		memcpy(&p[k].magic, buf + off, 4);
		memcpy(p[k].uuid, buf + off + 4, 16);
		p[k].content = get64(buf + off + 48) / 8;
		p[k].size = get64(buf + off + 56) / 8;
		p[k].seq = get64(buf + off + 64);
		p[k].discarded = get64(buf + off + 72);
		p[k].first_ts = p[k].content > CTF_PACKET_CONTEXT_END ?
		    get64(buf + off + CTF_PACKET_HDR_SIZE + 8) : 0;
		assert_true(p[k].size >= CTF_PACKET_HDR_SIZE);
		/* Whole packets only. */
		assert_true(off + p[k].size <= (size_t)n);
		off += p[k].size;
		k++;
	}
	assert_int_equal(off, (size_t)n);
	return k;
}

/* ---- tests ------------------------------------------------------------- */

static void
test_stream_packets_numbered_in_order(void **state)
{
	struct t_stream *t = *state;
	struct t_pkt p[8];
	int i;

	t_add(t, t_data(100, 3, 0));
	t_add(t, t_data(200, 2, 0));
	t_write(t);
	t_free_list(t);
	t_add(t, t_data(300, 1, 0));
	t_write(t);
	assert_int_equal(STAILQ_FIRST(&t->list)->write_errno, 0);
	assert_int_equal(STAILQ_FIRST(&t->list)->fgen, 1);
	t_free_list(t);
	assert_int_equal(t_read(t->path, p, 8), 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(p[i].magic, CTF_MAGIC);
		assert_memory_equal(p[i].uuid, t_uuid, 16);
		assert_int_equal(p[i].seq, (uint64_t)i);
		assert_int_equal(p[i].discarded, 0);
	}
	assert_int_equal(p[0].first_ts, 100);
	assert_int_equal(p[1].first_ts, 200);
	assert_int_equal(p[2].first_ts, 300);
	assert_int_equal(p[0].content, CTF_PACKET_HDR_SIZE + 3 * 16);
}

static void
test_stream_losses_before_the_first_packet_go_after_an_empty_one(
    void **state)
{
	struct t_stream *t = *state;
	struct t_pkt p[8];
	struct chunk *c;

	t_add(t, t_data(100, 2, 5));	/* 5 lost before it */
	t_add(t, t_data(200, 2, 1));
	t_write(t);
	c = STAILQ_FIRST(&t->list);
	/* The empty packet's bytes are the first chunk's. */
	assert_int_equal(c->bytes, 2 * CTF_PACKET_HDR_SIZE + 2 * 16);
	t_free_list(t);
	assert_int_equal(t_read(t->path, p, 8), 3);
	assert_int_equal(p[0].seq, 0);
	assert_int_equal(p[0].discarded, 0);
	assert_int_equal(p[0].first_ts, 0);	/* no event */
	assert_int_equal(p[1].seq, 1);
	assert_int_equal(p[1].discarded, 5);
	assert_int_equal(p[2].discarded, 6);
}

static void
test_stream_failed_write_is_lost_and_carried_by_the_next(void **state)
{
	struct t_stream *t = *state;
	struct t_pkt p[8];
	struct chunk *c;
	int good = t->r.st.fd;

	t_add(t, t_data(100, 2, 0));
	t_write(t);
	t_free_list(t);
	/* The disk refuses: a descriptor open read-only fails EBADF. */
	t->r.st.fd = open(t->path, O_RDONLY | O_CLOEXEC);
	assert_true(t->r.st.fd != -1);
	t_add(t, t_data(200, 3, 1));
	t_write(t);
	c = STAILQ_FIRST(&t->list);
	assert_int_equal(c->write_errno, EBADF);
	assert_int_equal(c->lost_write, 3);
	t_free_list(t);
	close(t->r.st.fd);
	t->r.st.fd = good;
	/* It comes back: the next packet says what was lost meanwhile. */
	t_add(t, t_data(300, 1, 0));
	t_write(t);
	assert_int_equal(STAILQ_FIRST(&t->list)->write_errno, 0);
	t_free_list(t);
	assert_int_equal(t_read(t->path, p, 8), 2);
	assert_int_equal(p[1].seq, 1);
	assert_int_equal(p[1].discarded, 3 + 1);
	assert_int_equal(p[1].first_ts, 300);
}

static void
test_stream_end_closes_the_books(void **state)
{
	struct t_stream *t = *state;
	struct t_pkt p[8];
	struct chunk *end;

	t_add(t, t_data(100, 2, 0));
	end = t_marker(CHUNK_END);
	end->how = END_CLOSED;
	end->last_ts = 150;
	end->unrecorded[TRACED_DROP_RING_FULL] = 4;
	end->unrecorded[TRACED_DROP_NESTED] = 1;
	t_add(t, end);
	t_write(t);
	assert_int_equal(end->write_errno, 0);
	assert_int_equal(end->bytes, CTF_PACKET_HDR_SIZE);
	/* The process ended: its file is closed. */
	assert_int_equal(t->r.st.fd, -1);
	t_free_list(t);
	assert_int_equal(t_read(t->path, p, 8), 2);
	assert_int_equal(p[1].seq, 1);
	assert_int_equal(p[1].discarded, 5);
	assert_int_equal(p[1].first_ts, 0);
}

static void
test_stream_finished_thread_keeps_its_file(void **state)
{
	struct t_stream *t = *state;
	struct t_pkt p[8];
	struct chunk *end;

	t_add(t, t_data(100, 1, 0));
	end = t_marker(CHUNK_END);
	end->how = END_FINISHED;	/* nothing unrecorded: no packet */
	t_add(t, end);
	t_write(t);
	assert_true(t->r.st.fd != -1);	/* the loop may park it */
	t_free_list(t);
	assert_int_equal(t_read(t->path, p, 8), 1);
}

static void
test_stream_feed_given_up_writes_nothing(void **state)
{
	struct t_stream *t = *state;
	struct stat st;
	struct chunk *c;

	t->feed.discard_errno = ENOSPC;	/* its metadata never made it */
	t_add(t, t_data(100, 4, 0));
	t_write(t);
	c = STAILQ_FIRST(&t->list);
	assert_int_equal(c->write_errno, ENOSPC);
	assert_int_equal(c->lost_write, 4);
	t_free_list(t);
	assert_int_equal(stat(t->path, &st), 0);
	assert_int_equal(st.st_size, 0);
}

static void
test_stream_sync_is_an_fdatasync(void **state)
{
	struct t_stream *t = *state;
	struct chunk *s;

	t_add(t, t_data(100, 1, 0));
	s = t_marker(CHUNK_SYNC);
	t_add(t, s);
	t_write(t);
	assert_int_equal(s->write_errno, 0);
	t_free_list(t);
	/* On a descriptor that cannot be synced, the error is said. */
	close(t->r.st.fd);
	t->r.st.fd = 1000;		/* not open */
	s = t_marker(CHUNK_SYNC);
	t_add(t, s);
	t_write(t);
	assert_int_equal(s->write_errno, EBADF);
	t_free_list(t);
	t->r.st.fd = -1;
}

static void
test_stream_parts_go_on_counting(void **state)
{
	struct t_stream *t = *state;
	struct t_pkt p[8];
	char part[128];
	int fd;

	t_add(t, t_data(100, 8, 0));		/* 88 + 128 bytes */
	t_write(t);
	t_free_list(t);
	/* The loop opened the next part, for after 350 bytes. */
	snprintf(part, sizeof(part), "%s.1", t->path);
	fd = open(part, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	assert_true(fd != -1);
	t->r.next_fd = fd;
	t->r.next_part_at = 350;
	/* Still fits (216 + 104): it stays in the first file. */
	t_add(t, t_data(200, 1, 2));		/* 88 + 16 */
	t_write(t);
	t_free_list(t);
	assert_int_equal(t->r.next_fd, fd);
	/* Would pass 350: the next part, numbers and discards go on. */
	t_add(t, t_data(300, 1, 1));
	t_write(t);
	assert_int_equal(STAILQ_FIRST(&t->list)->fpart, 1);
	t_free_list(t);
	assert_int_equal(t->r.next_fd, -1);
	assert_int_equal(t_read(t->path, p, 8), 2);
	assert_int_equal(p[1].seq, 1);
	assert_int_equal(p[1].discarded, 2);
	assert_int_equal(t_read(part, p, 8), 1);
	assert_int_equal(p[0].seq, 2);
	assert_int_equal(p[0].discarded, 3);
	assert_memory_equal(p[0].uuid, t_uuid, 16);
}

static void
test_stream_new_trace_starts_from_zero(void **state)
{
	static const uint8_t other[16] = { 0x55, 0x66 };
	struct t_stream *t = *state;
	struct t_pkt p[8];
	char path2[128];
	int fd;

	t_add(t, t_data(100, 1, 1));
	t_write(t);
	t_free_list(t);
	/* trace-file set: a new directory, a new trace. */
	snprintf(path2, sizeof(path2), "%s.1", t->path);
	fd = open(path2, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	assert_true(fd != -1);
	t->r.next_fd = fd;
	memcpy(t->r.next_uuid, other, 16);
	t->r.next_gen = 2;
	t->r.next_part_at = 0;
	t_add(t, t_data(200, 1, 0));
	t_write(t);
	assert_int_equal(STAILQ_FIRST(&t->list)->fgen, 2);
	t_free_list(t);
	assert_int_equal(t_read(path2, p, 8), 1);
	assert_int_equal(p[0].seq, 0);
	assert_int_equal(p[0].discarded, 0);
	assert_memory_equal(p[0].uuid, other, 16);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_stream_packets_numbered_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_stream_losses_before_the_first_packet_go_after_an_empty_one,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_stream_failed_write_is_lost_and_carried_by_the_next,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_stream_end_closes_the_books, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_stream_finished_thread_keeps_its_file, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_stream_feed_given_up_writes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_stream_sync_is_an_fdatasync, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_stream_parts_go_on_counting, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_stream_new_trace_starts_from_zero, setup, teardown),
	};

	return cmocka_run_group_tests_name("stream", tests, NULL, NULL);
}
