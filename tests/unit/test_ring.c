/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of the producer side of the per-thread rings: the real inline
 * traced_reserve()/traced_commit() of traced.h and the slow paths of
 * client-lib/ring.c, against a consumer written here that plays the
 * daemon: it walks [tail, head) through the producer's own double
 * mapping, checks every record, and stores tail to free space.
 *
 * No daemon runs: TRACED_RUNTIME_DIR points at an empty directory, so
 * the library's connection thread fails to connect and keeps retrying,
 * and every event that does not fit is lost as "disconnected".  Rings
 * are 4 KiB (TRACED_RING_SIZE) so that wrap and full come fast.
 *
 * Each scenario runs in a thread of its own, which gets a fresh ring.
 * cmocka's assertions longjmp and must stay on the main thread, so a
 * scenario checks with T_TRUE/T_EQ, which record the first failure and
 * end the scenario; the main thread reports it after the join.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "client-lib/internal.h"

#define RING_ORDER	12
#define RING_BYTES	(1u << RING_ORDER)
#define HALF		(RING_BYTES / 2)
/* The producer asks for a drain at half full (TRACED_WAKE_FRACTION). */
#define WAKE		(RING_BYTES / 2)

/* ---- checks inside a scenario thread ------------------------------- */

static __thread jmp_buf t_jmp;
static __thread int t_caller;	/* scenario line of the helper running */
static char t_failure[1024];	/* written by the scenario, read after join */

static void t_fail(int line, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

static void
t_fail(int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t_caller != 0)
		n = snprintf(t_failure, sizeof(t_failure),
		    "test_ring.c:%d (in a check called at line %d): ", line,
		    t_caller);
	else
		n = snprintf(t_failure, sizeof(t_failure), "test_ring.c:%d: ",
		    line);
	va_start(ap, fmt);
	vsnprintf(t_failure + n, sizeof(t_failure) - (size_t)n, fmt, ap);
	va_end(ap);
	longjmp(t_jmp, 1);
}

#define T_TRUE(c) do {							\
	if (!(c))							\
		t_fail(__LINE__, "%s", #c);				\
} while (0)

#define T_EQ(a, b) do {							\
	uint64_t t_a_ = (uint64_t)(a), t_b_ = (uint64_t)(b);		\
	if (t_a_ != t_b_)						\
		t_fail(__LINE__, "%s == %s: %llu != %llu", #a, #b,	\
		    (unsigned long long)t_a_, (unsigned long long)t_b_); \
} while (0)

struct scenario {
	void	(*fn)(void);
};

static void *
scenario_main(void *arg)
{
	struct scenario *s = arg;

	t_caller = 0;
	if (setjmp(t_jmp) == 0)
		s->fn();
	return NULL;
}

/* Run fn in a new thread (a new ring) and fail the test if it did. */
static void
run_scenario(void (*fn)(void))
{
	struct scenario s = { fn };
	pthread_t th;

	t_failure[0] = '\0';
	assert_int_equal(pthread_create(&th, NULL, scenario_main, &s), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	if (t_failure[0] != '\0')
		fail_msg("%s", t_failure);
}

/* ---- the provider ----------------------------------------------------- */

static _Alignas(TRACED_STATE_PAGE) uint8_t test_state[TRACED_STATE_PAGE];
static const char test_desc[] =
    "ev_u64s(uint64_t a)\nev_str(uint64_t a, const char *s)\n"
    "ev_str_u64(uint64_t a, const char *s, uint64_t b)\n"
    "ev_null(uint64_t a, const char *s)\n";
static struct traced_provider test_prov = {
	.abi = TRACED_ABI_VERSION,
	.nevents = 4,
	.name = "test",
	.desc = test_desc,
	.desc_len = sizeof(test_desc) - 1,
	.state_size = sizeof(test_state),
	.state = test_state,
};

#define ID(k)	(test_prov.id_base + (k))

/* ---- records, as generated code writes them ------------------------- */

enum { K_U64S, K_STR, K_STR_U64, K_NULLSTR, K_NKINDS };

/*
 * One event: K_U64S has n integers; K_STR/K_NULLSTR are (u64 v,
 * string) with the padding zeroed; K_STR_U64 is (u64 v, string, u64 ~v),
 * the last integer aligned after the string.
 */
struct spec {
	int		kind;
	uint32_t	n;		/* K_U64S: integers */
	uint32_t	slen;		/* string length */
	uint64_t	v;
};

#define SLEN_MAX	600

static uint64_t
u64_at(const void *rec, uint32_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)rec + off, sizeof(v));
	return v;
}

static uint64_t
spec_word(const struct spec *sp, uint32_t i)
{
	return sp->v * 0x100000001b3ull + i * 0x9e3779b97f4a7c15ull;
}

/* The string argument of sp into buf, or NULL for K_NULLSTR. */
static const char *
spec_string(const struct spec *sp, char *buf)
{
	uint32_t i;

	if (sp->kind == K_NULLSTR)
		return NULL;
	for (i = 0; i < sp->slen; i++)
		buf[i] = (char)('a' + (sp->v + i) % 26);
	buf[sp->slen] = '\0';
	return buf;
}

static uint32_t
spec_size(const struct spec *sp)
{
	char s[SLEN_MAX + 1];
	uint32_t ns;

	if (sp->kind == K_U64S)
		return TRACED_REC_HDR_SIZE + 8 * sp->n;
	ns = traced_str_size(spec_string(sp, s));
	if (sp->kind == K_STR_U64)
		return traced_align8(24 + ns) + 8;
	return traced_align8(24 + ns);
}

static uint32_t
spec_id(const struct spec *sp)
{
	return ID((uint32_t)sp->kind);
}

/* Trace sp.  Returns 1 if recorded, 0 if dropped. */
static int
spec_emit(const struct spec *sp)
{
	char s[SLEN_MAX + 1];
	const char *str = spec_string(sp, s);
	uint32_t size = spec_size(sp), ns, o, i;
	char *r;

	r = traced_reserve(spec_id(sp), size);
	if (r == NULL)
		return 0;
	switch (sp->kind) {
	case K_U64S:
		for (i = 0; i < sp->n; i++)
			traced_put_u64(r + 16 + 8 * i, spec_word(sp, i));
		break;
	case K_STR:
	case K_NULLSTR:
		ns = traced_str_size(str);
		traced_put_u64(r + size - 8, 0);
		traced_put_u64(r + 16, sp->v);
		traced_put_str(r + 24, str, ns);
		break;
	case K_STR_U64:
		ns = traced_str_size(str);
		o = traced_align8(24 + ns);
		traced_put_u64(r + 16, sp->v);
		traced_put_str(r + 24, str, ns);
		traced_put_u64(r + o, ~sp->v);
		break;
	}
	traced_commit(size);
	return 1;
}

/* The record r must be exactly what spec_emit(sp) wrote. */
static void
spec_check(const struct traced_rec_hdr *r, const struct spec *sp)
{
	const char *p = (const char *)r;
	char s[SLEN_MAX + 1];
	const char *str = spec_string(sp, s);
	uint32_t size = spec_size(sp), ns, i;

	T_EQ(r->id, spec_id(sp));
	T_EQ(r->size, size);
	switch (sp->kind) {
	case K_U64S:
		for (i = 0; i < sp->n; i++)
			T_EQ(u64_at(r, 16 + 8 * i), spec_word(sp, i));
		break;
	case K_STR:
	case K_NULLSTR:
		ns = traced_str_size(str);
		T_EQ(u64_at(r, 16), sp->v);
		T_TRUE(memcmp(p + 24, str ? str : "(null)", ns) == 0);
		T_EQ(p[24 + ns - 1], '\0');
		for (i = 24 + ns; i < size; i++)
			T_EQ(p[i], 0);		/* padding */
		break;
	case K_STR_U64:
		ns = traced_str_size(str);
		T_EQ(u64_at(r, 16), sp->v);
		T_TRUE(memcmp(p + 24, str, ns) == 0);
		T_EQ(u64_at(r, traced_align8(24 + ns)), ~sp->v);
		break;
	}
}

static struct spec
u64s(uint32_t n, uint64_t v)
{
	struct spec sp = { K_U64S, n, 0, v };

	return sp;
}

/* A 32-byte event. */
static int
emit32(uint64_t v)
{
	struct spec sp = u64s(2, v);

	return spec_emit(&sp);
}

static uint64_t
rng(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static struct spec
spec_random(uint64_t *s, uint32_t maxn, uint32_t maxslen)
{
	struct spec sp;

	sp.kind = (int)(rng(s) % K_NKINDS);
	sp.n = (uint32_t)(rng(s) % (maxn + 1));
	sp.slen = (uint32_t)(rng(s) % (maxslen + 1));
	sp.v = rng(s);
	return sp;
}

/* ---- the consumer ---------------------------------------------------- */

/* Checks called from scenarios: failures also name the caller's line. */
#define CALLED(f, ...)	(t_caller = __LINE__, f(__VA_ARGS__), t_caller = 0)
#define cons_expect_spec(...)	CALLED(cons_expect_spec_, __VA_ARGS__)
#define cons_expect_end(...)	CALLED(cons_expect_end_, __VA_ARGS__)
#define cons_expect_lost(...)	CALLED(cons_expect_lost_, __VA_ARGS__)
#define expect_dropped(...)	CALLED(expect_dropped_, __VA_ARGS__)
#define expect_big(...)		CALLED(expect_big_, __VA_ARGS__)

struct cons {
	struct traced_ring_hdr *hdr;
	const uint8_t	*data;
	uint64_t	 size, mask;
	uint64_t	 tail;		/* next record */
	uint64_t	 pos;		/* position of the last one returned */
	uint64_t	 last_ts;
	unsigned	 pads;		/* PAD records skipped */
};

/* Attach to this thread's ring; it must exist. */
static void
cons_attach(struct cons *c)
{
	T_TRUE(traced_tls.hdr != NULL);
	T_TRUE(traced_tls.data != NULL);
	c->hdr = traced_tls.hdr;
	c->data = traced_tls.data;
	c->mask = traced_tls.mask;
	c->size = c->mask + 1;
	T_EQ(c->size, traced_ring_size(c->hdr->order));
	T_TRUE(c->size == RING_BYTES || lib.ring_order != RING_ORDER);
	c->tail = __atomic_load_n(&c->hdr->tail, __ATOMIC_ACQUIRE);
	c->last_ts = 0;
}

static uint64_t
cons_head(const struct cons *c)
{
	/* Pairs with the producer's store-release in traced_commit(). */
	return __atomic_load_n(&c->hdr->head, __ATOMIC_ACQUIRE);
}

/*
 * The next published record, framing checked (aligned, sized, inside
 * [tail, head), not running past a lap end, timestamp not going back),
 * or NULL at head.  PAD records are checked (they end on a lap end) and
 * skipped, as the daemon does; 'pads' counts them.
 */
static const struct traced_rec_hdr *
cons_next(struct cons *c)
{
	uint64_t head = cons_head(c);
	const struct traced_rec_hdr *r;
	uint32_t idsize[2], order;

	/* The size of the ring, after head, as the daemon loads it. */
	order = __atomic_load_n(&c->hdr->order, __ATOMIC_RELAXED);
	if (traced_ring_size(order) != c->size) {
		T_TRUE(traced_ring_size(order) > c->size);
		T_TRUE(order <= c->hdr->max_order);
		c->size = traced_ring_size(order);
		c->mask = c->size - 1;
	}
	for (;;) {
		if (c->tail == head)
			return NULL;
		T_TRUE(head - c->tail <= c->size);
		T_EQ(c->tail % 8, 0);
		memcpy(idsize, c->data + (c->tail & c->mask), sizeof(idsize));
		if (idsize[0] != TRACED_EVENT_PAD)
			break;
		T_TRUE(idsize[1] >= TRACED_PAD_MIN && idsize[1] % 8 == 0);
		T_EQ((c->tail + idsize[1]) % TRACED_RING_LAP_MIN, 0);
		T_TRUE(idsize[1] <= head - c->tail);
		c->tail += idsize[1];
		c->pads++;
	}
	r = (const void *)(c->data + (c->tail & c->mask));
	T_TRUE(r->size >= TRACED_REC_HDR_SIZE);
	T_EQ(r->size % 8, 0);
	T_TRUE(r->size <= head - c->tail);
	T_TRUE((c->tail & c->mask) + r->size <= c->size);
	T_TRUE(r->ts != 0);
	T_TRUE(r->ts >= c->last_ts);
	c->last_ts = r->ts;
	c->pos = c->tail;
	c->tail += r->size;
	return r;
}

/* Give the space of everything walked back to the producer. */
static void
cons_release(struct cons *c)
{
	__atomic_store_n(&c->hdr->tail, c->tail, __ATOMIC_RELEASE);
}

static const struct traced_rec_hdr *
cons_expect(struct cons *c)
{
	const struct traced_rec_hdr *r = cons_next(c);

	if (r == NULL)
		t_fail(__LINE__, "ring empty at %llu, a record was due",
		    (unsigned long long)c->tail);
	return r;
}

static void
cons_expect_spec_(struct cons *c, const struct spec *sp)
{
	spec_check(cons_expect(c), sp);
}

static void
cons_expect_end_(struct cons *c)
{
	const struct traced_rec_hdr *r = cons_next(c);

	if (r != NULL)
		t_fail(__LINE__, "unexpected record id %u size %u at %llu",
		    r->id, r->size, (unsigned long long)c->pos);
}

/* The next record is a LOST record with exactly these counts. */
static void
cons_expect_lost_(struct cons *c, uint64_t full, uint64_t nested,
    uint64_t disc, uint64_t paused)
{
	const struct traced_rec_hdr *r = cons_expect(c);
	struct traced_lost l;
	uint64_t sum = 0;
	int i;

	if (r->id != TRACED_EVENT_LOST)
		t_fail(__LINE__, "record id %u at %llu, expected a LOST record",
		    r->id, (unsigned long long)c->pos);
	T_EQ(r->size, TRACED_LOST_REC_SIZE);
	memcpy(&l, r + 1, sizeof(l));
	T_EQ(l.cause[TRACED_DROP_RING_FULL], full);
	T_EQ(l.cause[TRACED_DROP_NESTED], nested);
	T_EQ(l.cause[TRACED_DROP_DISCONNECTED], disc);
	T_EQ(l.cause[TRACED_DROP_PAUSED], paused);
	for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES; i++)
		sum += l.cause[i];
	T_EQ(l.count, sum);
	T_EQ(l.count, full + nested + disc + paused);
}

/* Walk and release everything published. */
static void
cons_skip_all(struct cons *c)
{
	while (cons_next(c) != NULL)
		;
	cons_release(c);
}

static uint64_t
dropped(const struct cons *c, enum traced_drop_cause cause)
{
	return __atomic_load_n(&c->hdr->dropped[cause], __ATOMIC_RELAXED);
}

static void
expect_dropped_(const struct cons *c, uint64_t full, uint64_t nested,
    uint64_t disc, uint64_t paused)
{
	T_EQ(dropped(c, TRACED_DROP_RING_FULL), full);
	T_EQ(dropped(c, TRACED_DROP_NESTED), nested);
	T_EQ(dropped(c, TRACED_DROP_DISCONNECTED), disc);
	T_EQ(dropped(c, TRACED_DROP_PAUSED), paused);
}

/* Create this thread's ring with one event and consume it. */
static void
start_ring(struct cons *c)
{
	struct spec sp = u64s(1, 0xfeed);

	T_TRUE(traced_tls.hdr == NULL);
	T_TRUE(spec_emit(&sp));
	cons_attach(c);
	T_EQ(c->tail, 0);
	cons_expect_spec(c, &sp);
	cons_expect_end(c);
	cons_release(c);
}

/* The library's record of this thread's ring. */
static struct lring *
my_lring(void)
{
	struct lring *r;

	pthread_mutex_lock(&lib.lock);
	for (r = lib.rings; r != NULL && r->hdr != traced_tls.hdr;
	    r = r->next)
		;
	pthread_mutex_unlock(&lib.lock);
	T_TRUE(r != NULL);
	return r;
}

/* ---- scenarios -------------------------------------------------------- */

static void
sc_records_in_order(void)
{
	struct spec specs[32];
	struct cons c;
	uint64_t pos = 0;
	size_t n = 0, i;
	uint32_t k;

	for (k = 0; k <= 4; k++)
		specs[n++] = u64s(k, 100 + k);
	for (k = 0; k <= 9; k++) {	/* every padding length */
		struct spec sp = { K_STR, 0, k, 200 + k };

		specs[n++] = sp;
	}
	for (k = 0; k <= 8; k++) {
		struct spec sp = { K_STR_U64, 0, k, 300 + k };

		specs[n++] = sp;
	}
	{
		struct spec sp = { K_NULLSTR, 0, 0, 400 };

		specs[n++] = sp;
	}
	for (i = 0; i < n; i++) {
		T_TRUE(spec_emit(&specs[i]));
		pos += spec_size(&specs[i]);
	}
	T_TRUE(pos < HALF);

	cons_attach(&c);
	T_EQ(c.hdr->magic, TRACED_RING_MAGIC);
	T_EQ(c.hdr->version, TRACED_RING_VERSION);
	T_EQ(c.hdr->order, RING_ORDER);
	T_EQ(c.hdr->tid, gettid());
	T_EQ(c.hdr->flags, 0);
	T_EQ(cons_head(&c), pos);
	pos = 0;
	for (i = 0; i < n; i++) {
		T_EQ(c.tail, pos);	/* back to back from 0 */
		cons_expect_spec(&c, &specs[i]);
		pos += spec_size(&specs[i]);
	}
	cons_expect_end(&c);
	cons_release(&c);
	expect_dropped(&c, 0, 0, 0, 0);
}

static void
test_ring_records_in_order_intact(void **state)
{
	(void)state;
	run_scenario(sc_records_in_order);
}

/* The bytes of a record as the daemon reads them: from the memfd. */
static void
check_file_bytes(int fd, uint64_t pos, const void *rec, uint32_t size)
{
	uint8_t buf[RING_BYTES];
	uint32_t off = (uint32_t)(pos & (RING_BYTES - 1));
	uint32_t first = size < RING_BYTES - off ? size : RING_BYTES - off;

	T_TRUE(size <= sizeof(buf));
	T_EQ(pread(fd, buf, first, TRACED_RING_HDR_SIZE + off), first);
	if (first < size)
		T_EQ(pread(fd, buf + first, size - first, TRACED_RING_HDR_SIZE),
		    size - first);
	T_TRUE(memcmp(buf, rec, size) == 0);
}

static void
sc_wraps(void)
{
	uint64_t prod_rs = 42, cons_rs = 42, order_rs = 7;
	uint64_t emitted = 0, consumed = 0, bytes = 0, checked = 0;
	struct lring *lr;
	struct cons c;
	struct spec sp, want;

	start_ring(&c);
	lr = my_lring();
	while (bytes < 64 * RING_BYTES) {
		sp = spec_random(&prod_rs, 60, 400);
		/* Make room, consuming a random amount more than needed
		 * (a record may need the rest of the lap for padding). */
		if (RING_BYTES - (cons_head(&c) - c.tail) <
		    2 * spec_size(&sp)) {
			uint64_t want_free = 2 * spec_size(&sp) +
			    rng(&order_rs) % RING_BYTES;
			const struct traced_rec_hdr *r;

			while (RING_BYTES - (cons_head(&c) - c.tail) <
			    want_free && (r = cons_next(&c)) != NULL) {
				want = spec_random(&cons_rs, 60, 400);
				spec_check(r, &want);
				consumed++;
				/* Near the lap end: what the daemon reads. */
				if ((c.pos & c.mask) + r->size >
				    c.size - 512) {
					check_file_bytes(lr->fd, c.pos, r,
					    r->size);
					checked++;
				}
			}
			cons_release(&c);
		}
		T_TRUE(spec_emit(&sp));
		emitted++;
		bytes += spec_size(&sp);
	}
	{
		const struct traced_rec_hdr *r;

		while ((r = cons_next(&c)) != NULL) {
			want = spec_random(&cons_rs, 60, 400);
			spec_check(r, &want);
			consumed++;
		}
	}
	cons_release(&c);
	T_EQ(consumed, emitted);
	T_TRUE(c.pads >= 20);
	T_TRUE(checked >= 20);
	expect_dropped(&c, 0, 0, 0, 0);
}

static void
test_ring_wraps_with_contiguous_records(void **state)
{
	(void)state;
	run_scenario(sc_wraps);
}

static void
sc_full(void)
{
	uint64_t fit = 0, failed = 0, i, lib_lost0;
	struct cons c;

	lib_lost0 = __atomic_load_n(&lib.lost_disconnected, __ATOMIC_RELAXED);
	while (emit32(fit))
		fit++;
	failed++;
	for (i = 0; i < 1000; i++)
		if (!emit32(fit + 1 + i))
			failed++;
	cons_attach(&c);
	/* Nothing was consumed: exactly a ring's worth of 32-byte records. */
	T_EQ(fit, RING_BYTES / 32);
	T_EQ(failed, 1001);
	T_EQ(cons_head(&c), RING_BYTES);
	/*
	 * No daemon is connected (lib.connected == 0), so ring.c counts a
	 * record that does not fit as TRACED_DROP_DISCONNECTED, not
	 * TRACED_DROP_RING_FULL: the loss is due to nobody draining.
	 */
	expect_dropped(&c, 0, 0, failed, 0);
	/* ...and in the process total the next HELLO reports. */
	T_EQ(__atomic_load_n(&lib.lost_disconnected, __ATOMIC_RELAXED) -
	    lib_lost0, failed);
	/* Every record that fit is intact. */
	for (i = 0; i < fit; i++) {
		struct spec sp = u64s(2, i);

		cons_expect_spec(&c, &sp);
	}
	cons_expect_end(&c);
	T_EQ(fit + failed, i + dropped(&c, TRACED_DROP_DISCONNECTED));
}

static void
test_ring_full_counts_every_drop(void **state)
{
	(void)state;
	run_scenario(sc_full);
}

/*
 * How many 32-byte records fit in an empty ring whose head is at h: to
 * the lap end, then (after the padding) up to the ring's size from h.
 */
static uint64_t
fits32(uint64_t h)
{
	uint64_t o = h % RING_BYTES;

	return (RING_BYTES - o) / 32 + o / 32;
}

static void
sc_lost_record(void)
{
	struct spec e1 = u64s(3, 1001), e2 = u64s(0, 1002),
	    e3 = u64s(1, 1003), e4 = u64s(2, 1004);
	uint64_t i, n, head;
	struct cons c;

	start_ring(&c);
	head = cons_head(&c);
	n = 0;
	while (emit32(n))
		n++;
	T_EQ(n, fits32(head));
	for (i = 1; i < 7; i++)			/* 7 with the one above */
		T_TRUE(!emit32(0));
	for (i = 0; i < 3; i++)			/* larger than the ring */
		T_TRUE(traced_reserve(ID(0), RING_BYTES + 8) == NULL);
	expect_dropped(&c, 3, 0, 7, 0);

	/* Room for the event but not for the LOST record before it. */
	T_TRUE(cons_next(&c) != NULL);
	cons_release(&c);
	T_TRUE(!emit32(0));
	expect_dropped(&c, 3, 0, 8, 0);
	while (cons_next(&c) != NULL)
		;
	cons_release(&c);

	/* The next event that fits comes after one LOST record. */
	T_TRUE(spec_emit(&e1));
	T_TRUE(spec_emit(&e2));
	cons_expect_lost(&c, 3, 0, 8, 0);
	cons_expect_spec(&c, &e1);
	cons_expect_spec(&c, &e2);		/* only one LOST record */
	cons_expect_end(&c);
	cons_release(&c);

	/* A second round: the record counts only the new losses. */
	head = cons_head(&c);
	n = 0;
	while (emit32(n))
		n++;
	T_EQ(n, fits32(head));
	for (i = 1; i < 5; i++)
		T_TRUE(!emit32(0));
	expect_dropped(&c, 3, 0, 13, 0);	/* running totals */
	cons_skip_all(&c);
	T_TRUE(spec_emit(&e3));
	T_TRUE(spec_emit(&e4));
	cons_expect_lost(&c, 0, 0, 5, 0);
	cons_expect_spec(&c, &e3);
	cons_expect_spec(&c, &e4);
	cons_expect_end(&c);
	expect_dropped(&c, 3, 0, 13, 0);
}

static void
test_ring_lost_record_precedes_next_event(void **state)
{
	(void)state;
	run_scenario(sc_lost_record);
}

/* Fill a record of 'size' bytes with a pattern and commit it. */
static int
emit_big(uint32_t size, uint8_t seed)
{
	char *r = traced_reserve(ID(1), size);
	uint32_t i;

	if (r == NULL)
		return 0;
	for (i = TRACED_REC_HDR_SIZE; i < size; i++)
		r[i] = (char)(seed + i);
	traced_commit(size);
	return 1;
}

static void
expect_big_(struct cons *c, uint32_t size, uint8_t seed)
{
	const struct traced_rec_hdr *r = cons_expect(c);
	const uint8_t *p = (const void *)r;
	uint32_t i;

	T_EQ(r->id, ID(1));
	T_EQ(r->size, size);
	for (i = TRACED_REC_HDR_SIZE; i < size; i++)
		if (p[i] != (uint8_t)(seed + i))
			t_fail(__LINE__, "byte %u of a %u-byte record", i, size);
}

static void
sc_oversized_first_event(void)
{
	struct cons c;

	/* The thread's first event creates the ring, then is refused:
	 * a record must fit the ring with a LOST record in front. */
	T_TRUE(traced_reserve(ID(1), RING_BYTES - TRACED_LOST_REC_SIZE + 8)
	    == NULL);
	cons_attach(&c);
	T_EQ(cons_head(&c), 0);
	expect_dropped(&c, 1, 0, 0, 0);
	T_TRUE(traced_reserve(ID(1), TRACED_REC_MAX + 8) == NULL);
	T_EQ(cons_head(&c), 0);
	expect_dropped(&c, 2, 0, 0, 0);
	/* More than half the ring is allowed, after the LOST record. */
	T_TRUE(emit_big(HALF + 8, 3));
	T_EQ(cons_head(&c), TRACED_LOST_REC_SIZE + HALF + 8);
	cons_expect_lost(&c, 2, 0, 0, 0);
	expect_big(&c, HALF + 8, 3);
	cons_expect_end(&c);
	cons_release(&c);
	T_TRUE(emit32(5));
	{
		struct spec sp = u64s(2, 5);

		cons_expect_spec(&c, &sp);
	}
	cons_expect_end(&c);
}

static void
test_ring_oversized_first_event_dropped(void **state)
{
	(void)state;
	run_scenario(sc_oversized_first_event);
}

/*
 * A record larger than the ring can never fit: the fast path sends it
 * to the slow path (it cannot fit below limit), which drops and counts
 * it without touching the ring.  One of three quarters of the ring
 * fits and comes out intact.
 */
static void
sc_oversized_on_fast_path(void)
{
	struct cons c;

	start_ring(&c);
	T_TRUE(traced_reserve(ID(1), RING_BYTES + 8) == NULL);
	expect_dropped(&c, 1, 0, 0, 0);
	/* The ring is untouched; the next event says what was lost. */
	T_EQ(cons_head(&c), c.tail);
	T_TRUE(emit_big(64, 9));
	cons_expect_lost(&c, 1, 0, 0, 0);
	expect_big(&c, 64, 9);
	cons_expect_end(&c);
	cons_release(&c);
	T_TRUE(emit_big(3 * RING_BYTES / 4, 4));
	expect_big(&c, 3 * RING_BYTES / 4, 4);
	cons_expect_end(&c);
}

static void
test_ring_oversized_record_dropped_on_fast_path(void **state)
{
	(void)state;
	run_scenario(sc_oversized_on_fast_path);
}

static void
sc_nested_reserve(void)
{
	struct spec after = u64s(1, 77), again = u64s(1, 78);
	struct traced_rec_hdr *outer;
	uint64_t head0;
	struct cons c;
	char *inner;

	start_ring(&c);
	head0 = cons_head(&c);
	outer = (void *)traced_reserve(ID(0), 40);
	T_TRUE(outer != NULL);
	traced_put_u64((char *)outer + 16, 1);
	/* What a signal handler's event does mid-event: */
	inner = traced_reserve(ID(2), 24);
	T_TRUE(inner == NULL);
	expect_dropped(&c, 0, 1, 0, 0);
	/* The outer record's header and payload are untouched. */
	T_EQ(outer->id, ID(0));
	T_EQ(outer->size, 40);
	T_EQ(u64_at(outer, 16), 1);
	traced_put_u64((char *)outer + 24, 2);
	traced_put_u64((char *)outer + 32, 3);
	T_EQ(cons_head(&c), head0);	/* nothing published yet */
	traced_commit(40);
	T_EQ(cons_head(&c), head0 + 40);
	{
		const struct traced_rec_hdr *r = cons_expect(&c);

		T_EQ(r->id, ID(0));
		T_EQ(r->size, 40);
		T_EQ(u64_at(r, 16), 1);
		T_EQ(u64_at(r, 24), 2);
		T_EQ(u64_at(r, 32), 3);
	}
	cons_expect_end(&c);
	/* The thread is usable again, and reports the loss once. */
	T_TRUE(spec_emit(&after));
	T_TRUE(spec_emit(&again));
	cons_expect_lost(&c, 0, 1, 0, 0);
	cons_expect_spec(&c, &after);
	cons_expect_spec(&c, &again);
	cons_expect_end(&c);
	expect_dropped(&c, 0, 1, 0, 0);
}

static void
test_ring_nested_reserve_dropped(void **state)
{
	(void)state;
	run_scenario(sc_nested_reserve);
}

static volatile sig_atomic_t sig_ran;
static char *volatile sig_rec;

static void
on_sigusr1(int sig)
{
	char *r = traced_reserve(ID(2), 24);

	(void)sig;
	sig_rec = r;
	if (r != NULL) {
		traced_put_u64(r + 16, 0x5151);
		traced_commit(24);
	}
	sig_ran++;
}

static void
sc_signal_handler(void)
{
	struct sigaction sa, old;
	struct traced_rec_hdr *outer;
	const struct traced_rec_hdr *r;
	struct spec after = u64s(1, 99);
	struct cons c;
	int ran;

	start_ring(&c);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigusr1;
	sigemptyset(&sa.sa_mask);
	T_EQ(sigaction(SIGUSR1, &sa, &old), 0);

	/* Outside an event, the handler's event is recorded. */
	ran = sig_ran;
	T_EQ(pthread_kill(pthread_self(), SIGUSR1), 0);
	T_EQ(sig_ran, ran + 1);		/* delivered before pthread_kill returned */
	T_TRUE(sig_rec != NULL);
	r = cons_expect(&c);
	T_EQ(r->id, ID(2));
	T_EQ(r->size, 24);
	T_EQ(u64_at(r, 16), 0x5151);
	cons_expect_end(&c);

	/* Between reserve and commit, it is dropped as nested. */
	outer = (void *)traced_reserve(ID(0), 32);
	T_TRUE(outer != NULL);
	traced_put_u64((char *)outer + 16, 11);
	T_EQ(pthread_kill(pthread_self(), SIGUSR1), 0);
	T_EQ(sig_ran, ran + 2);
	T_TRUE(sig_rec == NULL);
	traced_put_u64((char *)outer + 24, 12);
	traced_commit(32);
	T_EQ(sigaction(SIGUSR1, &old, NULL), 0);
	expect_dropped(&c, 0, 1, 0, 0);
	r = cons_expect(&c);
	T_EQ(r->id, ID(0));
	T_EQ(r->size, 32);
	T_EQ(u64_at(r, 16), 11);
	T_EQ(u64_at(r, 24), 12);
	cons_expect_end(&c);
	T_TRUE(spec_emit(&after));
	cons_expect_lost(&c, 0, 1, 0, 0);
	cons_expect_spec(&c, &after);
	cons_expect_end(&c);
}

static void
test_ring_signal_handler_event_dropped_mid_event(void **state)
{
	(void)state;
	run_scenario(sc_signal_handler);
}

/*
 * A nested drop sets traced_tls.limit = 0 so that the next event takes
 * the slow path and writes the LOST record first.  When the outer
 * event's traced_commit() crosses wake_at, traced_wake_slow() must not
 * restore limit while that loss is pending (it once did, and the LOST
 * record could be lost with it).
 */
static void
sc_nested_then_wakeup(void)
{
	struct spec next = u64s(1, 5);
	char *outer;
	struct cons c;
	uint64_t head;

	start_ring(&c);
	/* Bring head to just below the first wakeup check (half the
	 * ring), keeping the ring empty. */
	while (cons_head(&c) + 32 <= HALF - 32) {
		T_TRUE(emit32(0));
		cons_skip_all(&c);
	}
	head = cons_head(&c);
	T_TRUE(head <= HALF && head + 64 > HALF);
	outer = traced_reserve(ID(0), 64);
	T_TRUE(outer != NULL);
	memset(outer + 16, 0x33, 48);
	T_TRUE(traced_reserve(ID(2), 24) == NULL);	/* nested */
	traced_commit(64);				/* crosses wake_at */
	expect_dropped(&c, 0, 1, 0, 0);
	T_TRUE(spec_emit(&next));
	{
		const struct traced_rec_hdr *r = cons_expect(&c);

		T_EQ(r->id, ID(0));
		T_EQ(r->size, 64);
	}
	cons_expect_lost(&c, 0, 1, 0, 0);
	cons_expect_spec(&c, &next);
	cons_expect_end(&c);
}

static void
test_ring_nested_drop_then_wakeup_keeps_lost_record(void **state)
{
	(void)state;
	run_scenario(sc_nested_then_wakeup);
}

/*
 * Write 32-byte events until the ring holds 'until' bytes, checking the
 * wakeup flag and the drain request (lring.notify) after each commit:
 * the producer never arms the flag, and asks for a drain only when it
 * clears it.  With 'strict' (armed while less than half full), the flag
 * must stay armed while the ring is less than half full and be cleared
 * by the first commit that fills it past half.  Returns how many times
 * the producer cleared the flag.
 */
static unsigned
fill_watching_wakeup(struct cons *c, struct lring *lr, uint64_t until,
    int strict)
{
	unsigned clears = 0, asks = 0;
	int was = (int)__atomic_load_n(&c->hdr->wakeup, __ATOMIC_RELAXED);
	uint64_t fill;

	while ((fill = cons_head(c) - c->tail) + 32 <= until) {
		int now, asked;

		T_TRUE(emit32(fill));
		fill += 32;
		now = (int)__atomic_load_n(&c->hdr->wakeup, __ATOMIC_RELAXED);
		asked = __atomic_exchange_n(&lr->notify, 0, __ATOMIC_ACQUIRE);
		T_TRUE(now == 0 || now == 1);
		T_TRUE(!now || was);		/* the producer never arms */
		T_TRUE(!asked || (was && !now)); /* asks only when clearing */
		clears += was && !now;
		asks += asked != 0;
		if (strict && fill < WAKE)
			T_EQ(now, 1);
		if (strict && fill > WAKE)
			T_EQ(now, 0);
		was = now;
	}
	T_EQ(clears, asks);
	return clears;
}

static void
sc_wakeup(void)
{
	struct lring *lr;
	struct cons c;

	start_ring(&c);
	lr = my_lring();
	__atomic_store_n(&lr->notify, 0, __ATOMIC_RELEASE);

	/* Armed: cleared exactly once, when the ring fills past half. */
	__atomic_store_n(&c.hdr->wakeup, 1, __ATOMIC_RELAXED);
	T_EQ(fill_watching_wakeup(&c, lr, WAKE - 32, 1), 0);
	T_EQ(c.hdr->wakeup, 1);
	T_EQ(fill_watching_wakeup(&c, lr, WAKE + 32, 1), 1);
	T_EQ(c.hdr->wakeup, 0);
	/* Not re-armed: filling on asks nothing more. */
	T_EQ(fill_watching_wakeup(&c, lr, RING_BYTES - 256, 0), 0);
	T_EQ(c.hdr->wakeup, 0);

	/* The daemon drained and re-armed: the same again. */
	cons_skip_all(&c);
	__atomic_store_n(&c.hdr->wakeup, 1, __ATOMIC_RELAXED);
	T_EQ(fill_watching_wakeup(&c, lr, WAKE - 32, 1), 0);
	T_EQ(fill_watching_wakeup(&c, lr, WAKE + 32, 1), 1);
	T_EQ(fill_watching_wakeup(&c, lr, RING_BYTES - 1024, 0), 0);

	/* Re-armed while still over half full: asked once more before the
	 * ring is full, and only once. */
	__atomic_store_n(&c.hdr->wakeup, 1, __ATOMIC_RELAXED);
	T_EQ(fill_watching_wakeup(&c, lr, RING_BYTES, 0), 1);
	T_EQ(c.hdr->wakeup, 0);
	/* Full: no room for one more (but the padding of a lap). */
	T_TRUE(RING_BYTES - (cons_head(&c) - c.tail) < 32);
	expect_dropped(&c, 0, 0, 0, 0);
}

static void
test_ring_wakeup_cleared_once_per_arming(void **state)
{
	(void)state;
	run_scenario(sc_wakeup);
}

/* ---- memory and growth ------------------------------------------------ */

/*
 * Poll *p (atomic) until it is at least want; 1 if it got there in
 * WAIT_MS (a bound for a hang, not a measure).
 */
#define WAIT_MS		10000

static int
wait_u64(const uint64_t *p, uint64_t want)
{
	int i;

	for (i = 0; i < WAIT_MS; i++) {
		if (__atomic_load_n(p, __ATOMIC_ACQUIRE) >= want)
			return 1;
		usleep(1000);
	}
	return 0;
}

static int
wait_u32(const uint32_t *p, uint32_t want)
{
	int i;

	for (i = 0; i < WAIT_MS; i++) {
		if (__atomic_load_n(p, __ATOMIC_ACQUIRE) >= want)
			return 1;
		usleep(1000);
	}
	return 0;
}

/* Bytes of memory the ring's memfd holds (pages made). */
static uint64_t
ring_memory(const struct lring *lr)
{
	struct stat st;

	T_EQ(fstat(lr->fd, &st), 0);
	return (uint64_t)st.st_blocks * 512;
}

/*
 * Memory follows what the thread writes.  A ring that may hold 1 MiB
 * (and grow to 2) starts with its header and two pages made; as the
 * thread writes, the pager makes pages ahead of it, at most twice what
 * it wrote plus 16 KiB; never the whole ring up front.
 */
static void
sc_memory_follows_writes(void)
{
	uint64_t written, mem, i;
	struct lring *lr;
	struct cons c;

	start_ring(&c);
	lr = my_lring();
	T_EQ(c.hdr->init_order, 20);
	T_EQ(c.hdr->max_order, 21);
	mem = ring_memory(lr);
	T_TRUE(mem >= TRACED_RING_HDR_SIZE + 8192);
	T_TRUE(mem <= TRACED_RING_HDR_SIZE + 16384);
	/* 64 KiB of records, consumed as they come. */
	for (i = 0; i < 2048; i++) {
		T_TRUE(emit32(i));
		if (i % 64 == 0)
			cons_skip_all(&c);
	}
	cons_skip_all(&c);
	written = cons_head(&c);
	/*
	 * The pager was asked for pages ahead, and made them; unless the
	 * producer wrote less than 64 bytes a microsecond at the end
	 * (lring_slow(): it happens under ThreadSanitizer on a busy
	 * machine), and then faulted its pages in itself.
	 */
	if (!lring_slow(lr))
		T_TRUE(wait_u64(&lr->prep_end, written));
	mem = ring_memory(lr);
	T_TRUE(mem >= TRACED_RING_HDR_SIZE + written);
	T_TRUE(mem <= TRACED_RING_HDR_SIZE + 2 * written + 16384 + 4096);
	T_TRUE(__atomic_load_n(&lr->prep_end, __ATOMIC_RELAXED) <=
	    2 * written + 16384 + 4096);
	expect_dropped(&c, 0, 0, 0, 0);
}

/*
 * A connected producer whose consumer lags grows its ring.  At the end
 * of its first lap the ring is full: the producer asks for twice the
 * size and, the pager having the new half ready, switches at that odd
 * lap end on its next event.  Records before, across and after the
 * switch come out in order and intact, each at the offset the header's
 * order says, and the new half is made ready by the pager.
 */
static void
sc_grows(void)
{
	uint64_t n, i, next, at, total;
	struct lring *lr;
	struct cons c;

	start_ring(&c);
	lr = my_lring();
	T_EQ(c.hdr->order, 20);
	/*
	 * Fill without consuming until an event does not fit.  At the end
	 * of the first lap the ring is over half full: the producer asks
	 * for 2 MiB, and switches there (an odd lap end) at its first
	 * event once the pager has the new half ready, which may already
	 * be that event: then the ring fills up at 2 MiB, not at 1 MiB.
	 */
	n = 0;
	while (emit32(n))
		n++;
	at = cons_head(&c);
	if (n == ((1u << 20) - 24) / 32) {
		T_EQ(c.hdr->order, 20);	/* then 8 bytes of PAD */
		T_EQ(at, (1u << 20) - 8);
	} else {
		T_EQ(n, ((1u << 20) - 24) / 32 + (1u << 20) / 32);
		T_EQ(c.hdr->order, 21);
		T_EQ(at, 2u << 20);
	}
	T_TRUE(wait_u32(&lr->grow_ready, 21));
	expect_dropped(&c, 1, 0, 0, 0);
	/* The consumer catches up. */
	for (i = 0; i < n; i++) {
		struct spec sp = u64s(2, i);

		cons_expect_spec(&c, &sp);
	}
	cons_expect_end(&c);
	cons_release(&c);
	/* Two laps of the new size, consumed as they come. */
	next = n;
	total = 2 * (2u << 20) / 32;
	for (i = 0; i < total; i++) {
		struct spec sp = u64s(2, n + i);

		T_TRUE(spec_emit(&sp));
		if (i == 0) {
			/* Grown, if it was not yet: the LOST record, then the
			 * event, at the odd lap end, in the new half. */
			T_EQ(c.hdr->order, 21);
			T_EQ(traced_tls.mask, (2u << 20) - 1);
			T_EQ(cons_head(&c), (at == (2u << 20) ? at :
			    1u << 20) + TRACED_LOST_REC_SIZE + 32);
			cons_expect_lost(&c, 1, 0, 0, 0);
		}
		if (i % 1024 == 0 || i + 1 == total) {
			const struct traced_rec_hdr *r;

			while ((r = cons_next(&c)) != NULL) {
				struct spec want = u64s(2, next++);

				spec_check(r, &want);
			}
			cons_release(&c);
		}
	}
	T_EQ(next, n + total);
	T_EQ(c.size, 2u << 20);
	/*
	 * The whole new half, unless the producer wrote too slowly for the
	 * pager to run ahead of it (lring_slow(): it then makes pages only
	 * as far ahead as the producer's pace asks, pager.c).  Under
	 * ThreadSanitizer this producer is that slow about one run in three,
	 * and the pager rightly stops short of 2 MiB.
	 */
	if (!lring_slow(lr))
		T_TRUE(wait_u64(&lr->prep_end, 2u << 20));
	expect_dropped(&c, 1, 0, 0, 0);
}

/*
 * A burst the consumer does not follow at all: half way through the
 * first lap with nothing read, the producer asks for 16 times the size
 * (the most, 16 MiB here), and at the first lap end, the one place that
 * allows it, switches straight to it rather than doubling lap after
 * lap.  What it wrote before and after comes out in order, intact.
 */
static void
sc_jumps(void)
{
	uint64_t n, i, at, next;
	struct lring *lr;
	struct cons c;

	start_ring(&c);
	lr = my_lring();
	T_EQ(c.hdr->order, 20);
	n = 0;
	while (emit32(n))
		n++;
	/* Asked before the lap end, whatever the pager did by then. */
	T_EQ(__atomic_load_n(&lr->grow_want, __ATOMIC_RELAXED), 24);
	T_TRUE(wait_u32(&lr->grow_ready, 24));
	at = cons_head(&c);
	if (c.hdr->order == 20) {
		/* Filled up before the pager was done: at the lap end next. */
		expect_dropped(&c, 1, 0, 0, 0);
		for (i = 0; i < n; i++) {
			struct spec sp = u64s(2, i);

			cons_expect_spec(&c, &sp);
		}
		cons_expect_end(&c);
		cons_release(&c);
		T_TRUE(emit32(n));
		n++;
		T_EQ(c.hdr->order, 24);
		T_EQ(traced_tls.mask, (16u << 20) - 1);
		cons_expect_lost(&c, 1, 0, 0, 0);
		next = n - 1;
	} else {
		/* Switched at the lap end already: full at 16 MiB. */
		T_EQ(c.hdr->order, 24);
		T_EQ(at, 16u << 20);
		next = 0;
	}
	for (; next < n; next++) {
		struct spec sp = u64s(2, next);

		cons_expect_spec(&c, &sp);
	}
	cons_expect_end(&c);
	cons_release(&c);
}

/*
 * The scenarios below need a pace: a pass written fast (1 MiB in less
 * than TRACED_RING_HOLD_NS) or slowly.  They run on a clock of their
 * own, so that neither a busy machine nor ThreadSanitizer can change
 * the pace the library sees: the library's traced_clock_monotonic() is
 * wrapped at link time (-Wl,--wrap, mk/tests.mk), and on a thread that
 * set t_clock it returns t_clock, which the scenario moves on as far
 * as it means its writes to take.  Other threads (the pager) keep the
 * real clock.
 */
static __thread uint64_t t_clock;

uint64_t __real_traced_clock_monotonic(void);
uint64_t __wrap_traced_clock_monotonic(void);

uint64_t
__wrap_traced_clock_monotonic(void)
{
	return t_clock != 0 ? t_clock : __real_traced_clock_monotonic();
}

/* This thread's clock from now on: the scenario's own, at the real
 * time it starts. */
static void
clock_take(void)
{
	t_clock = __real_traced_clock_monotonic();
}

/* Event v, written ns after the one before on the scenario's clock. */
static int
emit32_after(uint64_t v, uint64_t ns)
{
	t_clock += ns;
	return emit32(v);
}

/* A fast pace: 32 bytes in 10 ns, 1 MiB in 328 us. */
#define FAST_NS		10

/* 256 KiB, a quarter of a 1 MiB ring's first lap, at a fast pace,
 * consumed as it comes; event values from *i. */
static void
fast_quarter(struct cons *c, uint64_t *i)
{
	uint64_t end = *i + (256u << 10) / 32;

	for (; *i < end; (*i)++) {
		T_TRUE(emit32_after(*i, FAST_NS));
		if (*i % 64 == 0)
			cons_skip_all(c);
	}
	cons_skip_all(c);
}

/*
 * A thread whose first pass would fill its ring in less than
 * TRACED_RING_HOLD_NS asks for a bigger ring while that pass is young,
 * though the consumer keeps up with it (a daemon that says nothing
 * yet), and switches at the end of the first lap; one that writes as
 * much over far longer does not ask.
 */
static void
sc_asks_when_fast(void)
{
	struct lring *lr;
	struct cons c;
	uint64_t i = 0;

	clock_take();
	start_ring(&c);
	lr = my_lring();
	T_EQ(c.hdr->order, 20);
	fast_quarter(&c, &i);
	T_EQ(__atomic_load_n(&lr->grow_want, __ATOMIC_RELAXED), 24);
	T_TRUE(wait_u32(&lr->grow_ready, 24));
	/* On to the lap end, consumed as it comes: 16 MiB from there. */
	while (cons_head(&c) < (1u << 20) + 64) {
		T_TRUE(emit32_after(i++, FAST_NS));
		cons_skip_all(&c);
	}
	T_EQ(c.hdr->order, 24);
	expect_dropped(&c, 0, 0, 0, 0);
}

static void
sc_slow_does_not_ask(void)
{
	struct lring *lr;
	struct cons c;
	uint64_t i;

	clock_take();
	start_ring(&c);
	lr = my_lring();
	/* 256 KiB over 160 ms: 1 MiB would take 640 ms. */
	for (i = 0; i < (256u << 10) / 32; i++) {
		T_TRUE(emit32_after(i, 5000000 / 256));
		if (i % 256 == 0)
			cons_skip_all(&c);
	}
	cons_skip_all(&c);
	T_TRUE(__atomic_load_n(&lr->grow_want, __ATOMIC_RELAXED) <= 20);
	T_EQ(c.hdr->order, 20);
}

/*
 * A burst at a thread's start looks like a fast pass a quarter of the
 * way in, and asks; the rest of the lap comes slowly, so at its end
 * the ring stays at 1 MiB and the ask is withdrawn (a thread that logs
 * a burst at start, then little, keeps a small ring).
 */
static void
sc_burst_then_slow_stays(void)
{
	struct lring *lr;
	struct cons c;
	uint64_t i;

	clock_take();
	start_ring(&c);
	lr = my_lring();
	i = 0;
	fast_quarter(&c, &i);
	T_EQ(__atomic_load_n(&lr->grow_want, __ATOMIC_RELAXED), 24);
	/* The lap now takes longer than TRACED_RING_HOLD_NS. */
	t_clock += TRACED_RING_HOLD_NS + 50000000;
	while (cons_head(&c) < (1u << 20) + 64) {
		T_TRUE(emit32_after(i++, FAST_NS));
		cons_skip_all(&c);
	}
	T_EQ(c.hdr->order, 20);
	T_EQ(__atomic_load_n(&lr->grow_want, __ATOMIC_RELAXED), 20);
	/* Nor at the next lap end. */
	while (cons_head(&c) < (2u << 20) + 64) {
		T_TRUE(emit32_after(i++, FAST_NS));
		cons_skip_all(&c);
	}
	T_EQ(c.hdr->order, 20);
	expect_dropped(&c, 0, 0, 0, 0);
}

/* fn with rings of 1 MiB that may grow to 2^max_order, as if a daemon
 * drained them. */
static void
run_grown_to(uint32_t max_order, void (*fn)(void))
{
	uint32_t order = lib.ring_order;

	__atomic_store_n(&lib.ring_order, max_order, __ATOMIC_RELAXED);
	__atomic_store_n(&lib.connected, 1, __ATOMIC_RELAXED);
	run_scenario(fn);
	__atomic_store_n(&lib.connected, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&lib.ring_order, order, __ATOMIC_RELAXED);
}

static void
test_ring_memory_follows_writes(void **state)
{
	(void)state;
	run_grown_to(21, sc_memory_follows_writes);
}

static void
test_ring_grows_when_the_consumer_lags(void **state)
{
	(void)state;
	run_grown_to(21, sc_grows);
}

static void
test_ring_jumps_to_the_size_a_burst_needs(void **state)
{
	(void)state;
	run_grown_to(24, sc_jumps);
}

static void
test_ring_fast_first_pass_asks_to_grow(void **state)
{
	(void)state;
	run_grown_to(24, sc_asks_when_fast);
	run_grown_to(24, sc_slow_does_not_ask);
	run_grown_to(24, sc_burst_then_slow_stays);
}

/* ---- before any provider is registered ------------------------------ */

/*
 * A thread whose first event comes before any traced_provider_register()
 * must still get a properly initialized library: TRACED_RING_SIZE and
 * TRACED=0 honoured, a wake fd, and its own pthread key (ring_create()
 * once used key 0, overwriting whatever the program kept there, and
 * never marked the ring finished at thread exit).  Generated code
 * cannot get there (state bytes are zero until registration), but a
 * direct traced_reserve() can.  Run in a child: the first group of
 * this file, before the provider is registered.
 */
static void
test_ring_first_event_before_register_initializes_lib(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	assert_int_equal(lib.initialized, 0);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		pthread_key_t key;
		static int marker;
		int rc = 0;
		char *r;

		if (pthread_key_create(&key, NULL) != 0 ||
		    pthread_setspecific(key, &marker) != 0)
			_exit(64);
		r = traced_reserve(TRACED_EVENT_ID_BASE, 16);
		if (r != NULL)
			traced_commit(16);
		if (traced_tls.hdr == NULL)
			_exit(32);
		if (traced_tls.hdr->order != RING_ORDER)
			rc |= 1;
		if (pthread_getspecific(key) != &marker)
			rc |= 2;
		if (!lib.initialized)
			rc |= 4;
		_exit(rc);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) != 0)
		fail_msg("child status %d:%s%s%s%s%s", WEXITSTATUS(status),
		    WEXITSTATUS(status) & 1 ? " TRACED_RING_SIZE ignored;" : "",
		    WEXITSTATUS(status) & 2 ? " another pthread key's value "
		    "overwritten;" : "",
		    WEXITSTATUS(status) & 4 ? " library not initialized;" : "",
		    WEXITSTATUS(status) == 32 ? " no ring created" : "",
		    WEXITSTATUS(status) == 64 ? " pthread key setup failed" :
		    "");
}

/* ---- setup ------------------------------------------------------------ */

static char runtime_dir[] = "/tmp/test_ring.XXXXXX";

static int
register_provider(void **state)
{
	(void)state;
	traced_provider_register(&test_prov);
	if (test_prov.id_base != TRACED_EVENT_ID_BASE || !lib.initialized ||
	    lib.ring_order != RING_ORDER || lib.disabled)
		return -1;
	return 0;
}

int
main(void)
{
	const struct CMUnitTest before[] = {
		cmocka_unit_test(
		    test_ring_first_event_before_register_initializes_lib),
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_records_in_order_intact),
		cmocka_unit_test(test_ring_wraps_with_contiguous_records),
		cmocka_unit_test(test_ring_full_counts_every_drop),
		cmocka_unit_test(test_ring_lost_record_precedes_next_event),
		cmocka_unit_test(test_ring_oversized_first_event_dropped),
		cmocka_unit_test(
		    test_ring_oversized_record_dropped_on_fast_path),
		cmocka_unit_test(test_ring_nested_reserve_dropped),
		cmocka_unit_test(
		    test_ring_signal_handler_event_dropped_mid_event),
		cmocka_unit_test(
		    test_ring_nested_drop_then_wakeup_keeps_lost_record),
		cmocka_unit_test(test_ring_wakeup_cleared_once_per_arming),
		cmocka_unit_test(test_ring_memory_follows_writes),
		cmocka_unit_test(test_ring_grows_when_the_consumer_lags),
		cmocka_unit_test(test_ring_jumps_to_the_size_a_burst_needs),
		cmocka_unit_test(test_ring_fast_first_pass_asks_to_grow),
	};
	int failed;

	/* Before the library reads its environment: no daemon, small rings. */
	if (mkdtemp(runtime_dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	setenv("TRACED_RUNTIME_DIR", runtime_dir, 1);
	setenv("TRACED_RING_SIZE", "4096", 1);
	unsetenv("TRACED");
	unsetenv("TRACED_DEBUG");

	failed = cmocka_run_group_tests_name("ring_before_register", before,
	    NULL, NULL);
	failed += cmocka_run_group_tests_name("ring", tests,
	    register_provider, NULL);
	rmdir(runtime_dir);
	return failed;
}
