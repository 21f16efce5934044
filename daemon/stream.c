/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Writing a ring's CTF stream file: every byte that reaches a stream
 * goes through stream_write(), the one place that knows the rules.
 *
 *   - Whole packets only: a write that fails or comes up short is cut
 *     back (ftruncate) to the last whole packet, and the events of the
 *     packets that did not make it are counted as lost to a write
 *     error; the next packet's events_discarded includes them.
 *   - packet_seq_num runs 0, 1, 2... in each file, events_discarded is
 *     a running total, and a stream's first packet says 0 discarded
 *     (readers report a first non-zero value without a count): losses
 *     before the first packet go after an empty one.
 *   - A ring's packets are written in the order the drain thread read
 *     them, as many as are queued in one pwritev() at the end of the
 *     file: a busy ring's backlog is one system call, whatever the
 *     number of packets.
 *   - When the ring ends, the losses no LOST record will report, and
 *     those of writes that failed after the last packet that made it
 *     (a disk full to the end), go into one last, empty packet, so
 *     that events_discarded is exact.
 *   - Each file is a trace of its own (a session's new directory has a
 *     new uuid): the writer puts its file's uuid in every packet.
 *   - A feed whose metadata could never be written (given up on:
 *     pfeed.discard_errno) has nothing written: its events are
 *     counted as lost to that error.
 *
 *   - With stream-max-size, a ring's stream in one directory is cut
 *     into parts: stream-TID, stream-TID.1, ... (the first free
 *     names).  The loop opens the next part when the current one is
 *     half full; the writer switches to it when its queued packets
 *     would take the current one past the size (stream_switch_due()),
 *     so a part passes it only when one write alone is larger.  Parts
 *     share the trace uuid and stream instance, and packet numbers
 *     and events_discarded go on from one to the next: babeltrace2
 *     and tracectl read them as one stream.  A part opened but never
 *     switched to stays empty; both readers skip empty files.
 *
 * Writer threads only, holding the ring (pring.wbusy); the loop thread
 * opens the files (sring.c) and hands over new ones with
 * writeout_stream_next().
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "writeout.h"

/* At most this many packets, or bytes, in one batch. */
#define STREAM_IOV_MAX		256
#define STREAM_BATCH_MAX	(16u << 20)
/*
 * At most this many bytes in one pwritev().  Measured on this project's
 * machines (Linux 6.18, ext4): a buffered write of 512 KiB or more
 * costs 25-130 ns of CPU per 64 bytes, most of it in the kernel's copy
 * into the page cache, against 10 ns for writes of 64-256 KiB (the page
 * cache's folios are sized by the write, and large new ones are dear
 * on a virtual machine).  LTTng's consumer writes 256 KiB sub-buffers.
 * A batch is still one visit of the writer; its system calls are a few
 * microseconds per 256 KiB, 0.3 ns per event.
 */
#define STREAM_WRITE_MAX	(256u << 10)
/*
 * Direct writes (stream_pwritev_direct()) skip the page cache: 3.3 ns
 * of CPU per 64 bytes in writes of 1 MiB, 6.7 in writes of 256 KiB,
 * against 17-22 for buffered 256 KiB writes with the drop-behind below
 * (this project's machines, ext4 on virtio, two writers, each 512 MiB,
 * a copy into the buffer included).  Each one costs the same again
 * whatever its size (a block allocation, a wait for the disk, a
 * notification of the virtual disk that exits to the host), so they
 * take what a batch of the drain thread holds, up to its 4 MiB
 * (drain.c, DRAIN_HOLD_BYTES).
 */
#define STREAM_DIRECT_MAX	(4u << 20)
/*
 * A stream's written bytes leave the page cache behind it, in steps of
 * this size: each whole step is handed to the disk (writeback started)
 * once written, and dropped from the cache two steps later and again
 * over the next STREAM_WB_AGAIN steps, once it is on the disk.  A
 * tracer writes far more than anyone reads back at once; left in the
 * cache, its pages push out everything else, and the kernel must find
 * new memory for every page it writes (dear on a virtual machine,
 * where memory the guest freed goes back to the host: new page cache
 * pages cost the copy into them 4-10x).  Pages recycled at once cost
 * the copy alone.  LTTng's consumer does the same per sub-buffer, but
 * waits for the disk; the writers never do: pages a slow disk has not
 * taken yet stay in the cache, dirty, as they would without this, so
 * the page cache still absorbs what the disk cannot follow at once.
 */
#define STREAM_WB_STEP		(UINT64_C(1) << 20)
#define STREAM_WB_AGAIN		8	/* steps dropped again each time */

static uint64_t
clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A new, empty stream file 'fd' of trace 'uuid', the ring's file 'gen'. */
void
stream_start(struct stream *st, int fd, const uint8_t uuid[16], uint64_t gen)
{
	st->fd = fd;
	st->size = 0;
	st->gen = gen;
	memcpy(st->uuid, uuid, sizeof(st->uuid));
	st->seq = 0;
	st->discarded = st->discarded_written = 0;
	st->part = 0;
	st->wb_started = 0;
	st->nodirect = 0;
}

/*
 * The ring's stream goes on in the file the loop handed over
 * (writeout_stream_next()): a new trace's, or the next part of this
 * one (stream-max-size), where the packet numbers and the running
 * discarded count go on, so that readers see one stream.  Writer,
 * locked.
 */
static void
stream_switch(struct pring *r)
{
	int part = r->next_part_at != 0 && r->st.fd != -1;

	if (r->st.fd != -1)
		close(r->st.fd);
	if (part) {
		r->st.fd = r->next_fd;
		r->st.size = 0;
		r->st.wb_started = 0;
		r->st.part++;
	} else
		stream_start(&r->st, r->next_fd, r->next_uuid, r->next_gen);
	r->next_fd = -1;
	r->next_part_at = 0;
}

/*
 * Does the ring switch to the file waiting for it before writing the
 * chunks of 'list'?  A new trace's file at once; the next part of this
 * one when the current part would pass its size.  Writer, locked.
 */
static int
stream_switch_due(const struct pring *r, const struct chunk_list *list)
{
	const struct chunk *c;
	uint64_t pending = 0;

	if (r->next_fd == -1)
		return 0;
	if (r->next_part_at == 0 || r->st.fd == -1)
		return 1;
	if (r->st.size == 0)
		return 0;
	STAILQ_FOREACH(c, list, entry)
		if (c->kind == CHUNK_DATA)	/* and its padding, at most */
			pending += CTF_PACKET_HDR_SIZE + c->len +
			    (c->dio ? DIO_ALIGN - 1 : 0);
	return (uint64_t)r->st.size + pending > r->next_part_at;
}

/* An empty packet: header only. */
static void
stream_empty_packet(uint8_t hdr[CTF_PACKET_HDR_SIZE], const struct pring *r,
    pid_t tid, uint64_t ts, uint64_t seq, uint64_t discarded)
{
	ctf_packet_empty(hdr, r->st.uuid, r->instance, (uint32_t)tid, ts, seq,
	    discarded);
}

/*
 * pwritev() of iov[0, n) ('want' bytes in all) at 'off', in writes of
 * at most 'max' bytes.  Returns the bytes written, short at the first
 * write that was, or -1 (errno) if a write failed (the caller cuts the
 * file back either way).
 */
static ssize_t
stream_pwritev(int fd, const struct iovec *iov, int n, size_t want,
    off_t off, size_t max)
{
	struct iovec part[STREAM_IOV_MAX + 2];
	size_t done = 0, skip = 0, len;
	ssize_t got;
	int i = 0, k;

	while (done < want) {
		/* The next STREAM_WRITE_MAX bytes, from iov[i] + skip. */
		len = 0;
		for (k = 0; i + k < n && len < max &&
		    k < (int)(sizeof(part) / sizeof(part[0])); k++) {
			size_t take = iov[i + k].iov_len - (k == 0 ? skip : 0);

			if (take > max - len)
				take = max - len;
			part[k].iov_base = (uint8_t *)iov[i + k].iov_base +
			    (k == 0 ? skip : 0);
			part[k].iov_len = take;
			len += take;
		}
		got = pwritev(fd, part, k, off + (off_t)done);
		if (got == -1)
			return -1;
		done += (size_t)got;
		if ((size_t)got < len)
			break;
		/* Step over what was written. */
		skip += (size_t)got;
		while (i < n && skip >= iov[i].iov_len) {
			skip -= iov[i].iov_len;
			i++;
		}
	}
	return (ssize_t)done;
}

/*
 * iov[0, n) at 'off' with O_DIRECT: from staging to the disk, no copy
 * into the page cache.  The caller made every part DIO_ALIGN-aligned,
 * in memory and in length, and 'off' is on a boundary.  A file system
 * that refuses (no direct I/O, a larger alignment) gets the same bytes
 * through the page cache, now and from then on for this file, and
 * *cached says so.  As stream_pwritev().
 */
static ssize_t
stream_pwritev_direct(struct stream *st, const struct iovec *iov, int n,
    size_t want, off_t off, int *cached)
{
	ssize_t got = -1;
	int fl, err = EINVAL;

	if (!wo_global->test_nodirect &&
	    (fl = fcntl(st->fd, F_GETFL)) != -1 &&
	    fcntl(st->fd, F_SETFL, fl | O_DIRECT) == 0) {
		got = stream_pwritev(st->fd, iov, n, want, off,
		    STREAM_DIRECT_MAX);
		err = errno;
		if (fcntl(st->fd, F_SETFL, fl) == -1) {
			/* Unaligned writes would fail from now on. */
			log_warn("stream: cannot turn O_DIRECT off again");
			st->nodirect = 1;
		}
	}
	*cached = 0;
	if (got != -1 || err != EINVAL) {
		errno = err;	/* the write's, not the fcntl()'s */
		return got;
	}
	*cached = 1;
	st->nodirect = 1;
	if (!__atomic_exchange_n(&wo_global->said_nodirect, 1,
	    __ATOMIC_RELAXED))
		log_info("a trace file's file system refuses O_DIRECT: its "
		    "streams are written through the page cache (direct-io "
		    "= off in traced.conf says so for every file)");
	return stream_pwritev(st->fd, iov, n, want, off, STREAM_WRITE_MAX);
}

/*
 * After a write: start writing back the stream's new whole steps, and
 * drop from the page cache the steps up to two before, the last
 * STREAM_WB_AGAIN of them once more (POSIX_FADV_DONTNEED leaves pages
 * not on the disk yet, and costs little where nothing is left).
 * Errors only mean pages stay cached (a file system without
 * sync_file_range(), say): a writeback that fails is the kernel's own,
 * and a later fdatasync() reports it (trace-file flush).
 */
static void
stream_writeback(struct stream *st)
{
	off_t step = (off_t)(st->size & ~(off_t)(STREAM_WB_STEP - 1));
	off_t behind = st->wb_started - (off_t)STREAM_WB_STEP;
	off_t from = behind - STREAM_WB_AGAIN * (off_t)STREAM_WB_STEP;

	if (step <= st->wb_started)
		return;
	if (behind > 0)
		(void)posix_fadvise(st->fd, from > 0 ? from : 0,
		    from > 0 ? behind - from : behind, POSIX_FADV_DONTNEED);
	(void)sync_file_range(st->fd, st->wb_started, step - st->wb_started,
	    SYNC_FILE_RANGE_WRITE);
	st->wb_started = step;
}

/*
 * Write iov[0, n) at the end of the stream, whole or not at all: runs
 * of parts marked in direct[] (NULL: none) directly
 * (stream_pwritev_direct()), the others through the page cache.
 * Returns 0, or an errno.
 */
static int
stream_append(struct pring *r, const struct iovec *iov, int n, size_t want,
    const uint8_t *direct, struct writer *w)
{
	size_t done = 0, len;
	uint64_t t0, c0, counted[2] = { 0, 0 };
	ssize_t got = 0;
	int i, j, err, cached;

	if (r->st.fd == -1)
		return EBADF;
	t0 = clock_ns(CLOCK_MONOTONIC);
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	__atomic_store_n(&w->write_since, t0, __ATOMIC_RELAXED);
	for (i = 0; i < n && got != -1; i = j) {
		int d = direct != NULL && direct[i];

		len = iov[i].iov_len;
		for (j = i + 1; j < n && (direct != NULL && direct[j]) == d;
		    j++)
			len += iov[j].iov_len;
		if (d && !r->st.nodirect) {
			got = stream_pwritev_direct(&r->st, iov + i, j - i,
			    len, r->st.size + (off_t)done, &cached);
			d = !cached;	/* refused: the cache after all */
		} else
			got = stream_pwritev(r->st.fd, iov + i, j - i, len,
			    r->st.size + (off_t)done, STREAM_WRITE_MAX);
		if (got > 0)
			counted[d] += (uint64_t)got;
		if (got != -1)
			done += (size_t)got;
		if (got != -1 && (size_t)got < len)
			break;
	}
	err = got == -1 ? errno : ENOSPC;
	if (done == want) {
		r->st.size += (off_t)want;
		stream_writeback(&r->st);	/* the write's own cost */
		__atomic_add_fetch(&wo_global->written_cached, counted[0],
		    __ATOMIC_RELAXED);
		__atomic_add_fetch(&wo_global->written_direct, counted[1],
		    __ATOMIC_RELAXED);
	}
	if (__atomic_load_n(&wo_global->stall_ns, __ATOMIC_RELAXED) != 0) {
		/* A test's disk that stops answering, once (writeout.h). */
		uint64_t ns = __atomic_exchange_n(&wo_global->stall_ns, 0,
		    __ATOMIC_RELAXED);
		struct timespec ts = { (time_t)(ns / 1000000000u),
		    (long)(ns % 1000000000u) };

		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
	}
	w->cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	w->io_ns += clock_ns(CLOCK_MONOTONIC) - t0;
	__atomic_store_n(&w->write_since, 0, __ATOMIC_RELAXED);
	if (done == want)
		return 0;
	(void)!ftruncate(r->st.fd, r->st.size);
	return err;
}

static const uint8_t stream_zeros[DIO_ALIGN];

/*
 * Add the packets of batch[0, n) to the parts to write, iov[*k...],
 * the stream being *pos bytes long before them; their lengths go to
 * bytes[], and which parts go to the disk directly to direct[].  When
 * the writers keep up (w->direct) and the file system has not refused,
 * each packet of at least DIO_MIN bytes with aligned staging memory
 * (small packets would each grow by up to DIO_ALIGN of padding) is
 * padded to end on a DIO_ALIGN
 * boundary of the file (packet_size grows, content_size stays, the
 * padding is zeros) and goes direct; so is a small packet after one
 * that went direct, which goes through the page cache.  One that does
 * not start on a boundary (after the small packets of a quiet thread)
 * is first moved up in its staging memory, so that the file's next
 * boundary falls on an aligned address: the bytes before it go through
 * the page cache, the rest direct.  Returns whether any part goes
 * direct.
 */
static int
stream_plan(const struct pring *r, struct chunk **batch, int n,
    struct iovec *iov, uint8_t *direct, int *k, off_t *pos, size_t *bytes,
    const struct writer *w)
{
	int i, any = 0, ok = w->direct && !r->st.nodirect;

	for (i = 0; i < n; i++) {
		size_t len = CTF_PACKET_HDR_SIZE + batch[i]->len, pad, sh, h;
		uint8_t *p = batch[i]->pkt;

		if (!ok || !batch[i]->dio || batch[i]->len < DIO_MIN) {
			iov[*k].iov_base = p;
			iov[*k].iov_len = len;
			direct[(*k)++] = 0;
			/*
			 * After a packet that went direct, a small one (the
			 * end of a visit) ends on a boundary too, padded
			 * with zeros: the first packet of the next batch
			 * then goes direct from where it is, rather than be
			 * moved up in its staging memory (at 2 M events/s,
			 * a tenth of the bytes: a memmove of 1 MiB a visit).
			 */
			pad = ok && any ? (size_t)((DIO_ALIGN -
			    ((uint64_t)*pos + len) % DIO_ALIGN) % DIO_ALIGN) : 0;
			if (pad > 0) {
				ctf_put64(p + 56, (len + pad) * 8);
				iov[*k].iov_base = (void *)(uintptr_t)stream_zeros;
				iov[*k].iov_len = pad;
				direct[(*k)++] = 0;
			}
			bytes[i] = len + pad;
			*pos += (off_t)(len + pad);
			continue;
		}
		sh = (size_t)((uint64_t)*pos % DIO_ALIGN);
		if (sh != 0) {
			memmove(p + sh, p, len);
			p += sh;
		}
		pad = (size_t)((DIO_ALIGN - ((uint64_t)*pos + len) %
		    DIO_ALIGN) % DIO_ALIGN);
		memset(p + len, 0, pad);
		ctf_put64(p + 56, (len + pad) * 8);
		bytes[i] = len + pad;
		*pos += (off_t)(len + pad);
		/* The file's next boundary is h bytes in, at p + h. */
		h = sh == 0 ? 0 : DIO_ALIGN - sh;
		if (h > 0) {
			iov[*k].iov_base = p;
			iov[*k].iov_len = h;
			direct[(*k)++] = 0;
		}
		if (len + pad > h) {
			iov[*k].iov_base = p + h;
			iov[*k].iov_len = len + pad - h;
			direct[(*k)++] = 1;
			any = 1;
		}
	}
	return any;
}

/*
 * Write the data chunks batch[0, n): their packets in one pwritev(),
 * with the file's uuid, seq and events_discarded filled in here, where
 * the file, the order and the failures are known.
 */
static void
stream_write_data(struct pring *r, struct chunk **batch, int n,
    struct writer *w)
{
	uint8_t empty[CTF_PACKET_HDR_SIZE];
	struct iovec iov[2 * STREAM_IOV_MAX + 1];
	uint8_t direct[2 * STREAM_IOV_MAX + 1];
	size_t bytes[STREAM_IOV_MAX];
	uint64_t seq = r->st.seq, disc = r->st.discarded, lost;
	off_t pos = r->st.size;
	int i, k = 0, err, any;

	for (i = 0; i < n; i++)
		batch[i]->fgen = r->st.gen;
	/* Pairs with the loop's store-release (meta.c). */
	err = __atomic_load_n(&r->feed->discard_errno, __ATOMIC_ACQUIRE);
	if (err != 0)
		goto lost;
	if (seq == 0 && disc + batch[0]->discarded > 0) {
		stream_empty_packet(empty, r, batch[0]->tid, batch[0]->ts_first,
		    0, 0);
		iov[k].iov_base = empty;
		iov[k].iov_len = CTF_PACKET_HDR_SIZE;
		direct[k++] = 0;
		pos += CTF_PACKET_HDR_SIZE;
		seq++;
	}
	for (i = 0; i < n; i++) {
		struct chunk *c = batch[i];

		disc += c->discarded;
		memcpy(c->pkt + 4, r->st.uuid, sizeof(r->st.uuid));
		ctf_put64(c->pkt + 64, seq++);
		ctf_put64(c->pkt + 72, disc);
	}
	any = stream_plan(r, batch, n, iov, direct, &k, &pos, bytes, w);
	err = stream_append(r, iov, k, (size_t)(pos - r->st.size),
	    any ? direct : NULL, w);
	if (err == 0) {
		r->st.seq = seq;
		r->st.discarded = r->st.discarded_written = disc;
		for (i = 0; i < n; i++) {
			batch[i]->bytes = bytes[i];
			batch[i]->fpart = r->st.part;
			batch[i]->fsize = (uint64_t)r->st.size;
		}
		batch[0]->bytes += k > 0 && iov[0].iov_base == empty ?
		    CTF_PACKET_HDR_SIZE : 0;
		return;
	}
lost:
	/* Lost, and the next packet that makes it says so. */
	lost = 0;
	for (i = 0; i < n; i++) {
		batch[i]->write_errno = err;
		batch[i]->lost_write = batch[i]->events;
		lost += batch[i]->events + batch[i]->discarded;
	}
	r->st.discarded += lost;
}

/*
 * The ring ended: the losses no record reported, and those of writes
 * that failed since the last packet that made it, go into a last,
 * empty packet (after an empty first one if the stream has none yet).
 */
static void
stream_close_books(struct pring *r, struct chunk *c, struct writer *w)
{
	uint8_t hdr[2][CTF_PACKET_HDR_SIZE];
	struct iovec iov[2];
	uint64_t n = 0, seq = r->st.seq;
	size_t want = 0;
	int i, k = 0, err;

	for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES; i++)
		n += c->unrecorded[i];
	c->fgen = r->st.gen;
	if (n == 0 && r->st.discarded == r->st.discarded_written)
		return;
	/* Pairs with the loop's store-release (meta.c). */
	err = __atomic_load_n(&r->feed->discard_errno, __ATOMIC_ACQUIRE);
	if (err == 0) {
		if (seq == 0) {
			stream_empty_packet(hdr[k], r, c->tid, c->last_ts, seq++,
			    0);
			iov[k].iov_base = hdr[k];
			iov[k].iov_len = CTF_PACKET_HDR_SIZE;
			want += CTF_PACKET_HDR_SIZE;
			k++;
		}
		stream_empty_packet(hdr[k], r, c->tid, c->last_ts, seq++,
		    r->st.discarded + n);
		iov[k].iov_base = hdr[k];
		iov[k].iov_len = CTF_PACKET_HDR_SIZE;
		want += CTF_PACKET_HDR_SIZE;
		k++;
		err = stream_append(r, iov, k, want, NULL, w);
	}
	if (err == 0) {
		r->st.seq = seq;
		r->st.discarded_written = r->st.discarded + n;
		c->bytes = want;
	} else
		c->write_errno = err;
	r->st.discarded += n;
}

/*
 * The CTF stream writer, the pipeline's first consumer: write a ring's
 * chunks, in order: data packets batched (across THREAD markers, which
 * are the loop's alone), a SYNC as an fdatasync() after what came
 * before it, the END by closing the books (and the file, unless its
 * thread finished: sring.c).  First, the file the loop handed over, if
 * it is time to switch to it.  Results go into each chunk for the
 * loop thread.  Adds the time spent in writes, and the CPU time of it,
 * to w's counts.  Writer thread w, holding the ring.
 */
static void
stream_write(const struct consumer *self, struct pring *r,
    struct chunk_list *list, struct writer *w)
{
	struct chunk *batch[STREAM_IOV_MAX], *c;
	size_t bytes = 0;
	int n = 0;

	(void)self;
	/* The flight recorder keeps it instead (recorder.c): no file. */
	if (__atomic_load_n(&r->feed->rec, __ATOMIC_ACQUIRE) != NULL) {
		STAILQ_FOREACH(c, list, entry)
			c->fgen = r->st.gen;
		return;
	}
	pthread_mutex_lock(&wo_global->lock);
	if (stream_switch_due(r, list))
		stream_switch(r);
	pthread_mutex_unlock(&wo_global->lock);

	STAILQ_FOREACH(c, list, entry) {
		/* A new thread in the ring: nothing for the file (its
		 * packets name it), so its packets join the batch. */
		if (c->kind == CHUNK_THREAD)
			continue;	/* the loop's (sring.c) */
		if (c->kind == CHUNK_DATA && n < STREAM_IOV_MAX &&
		    bytes < STREAM_BATCH_MAX) {
			batch[n++] = c;
			bytes += CTF_PACKET_HDR_SIZE + c->len;
			continue;
		}
		if (n > 0)
			stream_write_data(r, batch, n, w);
		n = 0;
		bytes = 0;
		switch (c->kind) {
		case CHUNK_DATA:
			batch[n++] = c;
			bytes += CTF_PACKET_HDR_SIZE + c->len;
			break;
		case CHUNK_SYNC:
			if (r->st.fd != -1 && fdatasync(r->st.fd) == -1)
				c->write_errno = errno;
			break;
		case CHUNK_THREAD:	/* (skipped above) */
			break;
		case CHUNK_END:
			if (c->how != END_INVALID)
				stream_close_books(r, c, w);
			/*
			 * A finished thread's stream stays open: the loop
			 * may park it for the ring's next thread (sring.c
			 * sring_finished()), and closes it otherwise.
			 */
			if (c->how != END_FINISHED && r->st.fd != -1) {
				close(r->st.fd);
				r->st.fd = -1;
			}
			break;
		}
	}
	if (n > 0)
		stream_write_data(r, batch, n, w);
}

/* The CTF stream writer, as a consumer of the pipeline (pipeline.h). */
const struct consumer stream_consumer = {
	.name = "ctf",
	.write = stream_write,
};
