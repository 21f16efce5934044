/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The hot path of function tracing: what runs at every traced call, on
 * the program's threads.  ft_enter() and ft_exit() are called by the
 * stubs of stub-x86_64.S; __cyg_profile_func_enter() and _exit() by
 * programs built with -finstrument-functions.  Built with
 * -mgeneral-regs-only: the stubs save no vector register unless a tracer
 * of the program's is on.
 *
 * DESIGN
 *
 * Each thread has a shadow stack of frames (struct ft_frame), at most
 * FT_DEPTH_MAX; a call beyond that is not traced, only counted.  Entry
 * pushes a frame holding the function's return address and the address
 * of the stack slot it came from, then replaces the return address with
 * ft_exit_stub, so that the function "returns" into ft_exit(), which
 * pops the frame and gives the stub the real address.  Exit finds its
 * frame by slot, not by position: frames above it that a longjmp, a
 * tail call or a coroutine switch left behind are handled on the way.
 *
 * A frame is dead once its slot no longer holds ft_exit_stub (the stack
 * was reused), once a newer frame took the same slot, or once it is on
 * this thread's own stack below the slot of a call being made or
 * returning (what longjmp leaves).  Dead frames get their exit callback
 * late (TRACED_CALL_UNWOUND) and are popped.  A frame that may still be
 * live (another stack, a sigaltstack) is never dropped: dropping a live
 * one would lose the address its function returns to.
 *
 * Signal safety: no lock, no allocation after a thread's first call
 * (its state is mmap()ed), and the frame of the top is reserved (depth
 * raised) before it is filled and released after it is read, so a
 * signal handler's traced calls, which push and pop above it, never
 * see a half-made frame.  Tracer callbacks run with in_cb set: a traced
 * function they call is not traced (counted as nested).
 *
 * Tracers: slot 0 'graph' writes an entry and an exit record into the
 * thread's ring with traced_reserve()/traced_commit() (the ring's own
 * loss accounting applies); slot 1 'latency' adds each call's duration
 * to its function's histogram; slots 2 and up are the program's.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/*
 * The ring's slow paths are built without -mgeneral-regs-only and may
 * use vector registers, which the fast stubs do not save: the inline
 * traced_reserve() and traced_commit() below reach them through
 * ft_fp_call() (stub-x86_64.S), which keeps xmm0-7.
 */
#if defined(__x86_64__)
#define traced_reserve_slow	ft_reserve_slow_fp
#define traced_wake_slow	ft_wake_slow_fp
#endif
#include "functrace.h"
#include "../internal.h"
#if defined(__x86_64__)
#undef traced_reserve_slow
#undef traced_wake_slow

void	*traced_reserve_slow(uint32_t id, uint32_t size);
void	 traced_wake_slow(void);
uintptr_t ft_fp_call(uintptr_t fn, uintptr_t a, uintptr_t b, uintptr_t c)
	    TRACED_HIDDEN;

void *
ft_reserve_slow_fp(uint32_t id, uint32_t size)
{
	return (void *)ft_fp_call((uintptr_t)traced_reserve_slow, id, size, 0);
}

void
ft_wake_slow_fp(void)
{
	(void)ft_fp_call((uintptr_t)traced_wake_slow, 0, 0, 0);
}
#else
/*
 * Elsewhere no site is ever patched (fconn.c says function tracing is
 * unsupported): only -finstrument-functions programs reach this file,
 * and nothing calls the stubs.
 */
void
ft_entry_stub(void)
{
}

void
ft_exit_stub(void)
{
	abort();
}

static uintptr_t
ft_fp_call(uintptr_t fn, uintptr_t a, uintptr_t b, uintptr_t c)
{
	(void)c;
	return ((uintptr_t (*)(uintptr_t, uintptr_t))fn)(a, b);
}
#endif

/* Byte loops: glibc's memset and strcmp use vector registers. */
static void
ft_zero(void *p, size_t n)
{
	volatile unsigned char *c = p;

	while (n-- > 0)
		*c++ = 0;
}

static int
ft_streq(const char *a, const char *b, size_t n)
{
	for (; n > 0; a++, b++, n--) {
		if (*a != *b)
			return 0;
		if (*a == '\0')
			return 1;
	}
	return 1;
}

uint32_t ft_enabled;
uint8_t ft_full;
struct ft_ftab *ft_ftab;
struct ft_thread *ft_threads;

#define FT_EXITED	((struct ft_thread *)(uintptr_t)1)

static __thread struct ft_thread *ft_self
    __attribute__((tls_model("initial-exec")));
static pthread_key_t ft_key;
static int ft_key_ok;

/*
 * The built-in provider: graph's records.  Registered when the process
 * turns out to have instrumented functions (fconn.c).
 */
static const char ft_provider_desc[] =
    "func_entry(void *addr, uint32_t depth) \"%p depth %u\"\n"
    "func_exit(void *addr, uint32_t depth) \"%p depth %u\"\n";
static uint8_t ft_provider_state[TRACED_STATE_PAGE]
    __attribute__((aligned(TRACED_STATE_PAGE)));

struct traced_provider ft_provider = {
	.abi = TRACED_ABI_VERSION,
	.nevents = 2,
	.name = "traced",
	.desc = ft_provider_desc,
	.desc_len = sizeof(ft_provider_desc) - 1,
	.state_size = TRACED_STATE_PAGE,
	.state = ft_provider_state,
};

#define FT_REC_SIZE	32u	/* header, addr, depth */

/* ---- per-thread state ---------------------------------------------- */

static pid_t
ft_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/*
 * The calling thread's state, made at its first traced call: a record
 * an exited thread left, or a new mapping.  NULL if there is none to
 * be had (the call is not traced).  Async-signal-safe.
 */
static __attribute__((noinline, cold)) struct ft_thread *
ft_thread_new(void)
{
	struct ft_thread *t, *head;
	void *p;

	for (t = __atomic_load_n(&ft_threads, __ATOMIC_ACQUIRE); t != NULL;
	    t = t->next)
		if (!__atomic_load_n(&t->used, __ATOMIC_RELAXED) &&
		    !__atomic_exchange_n(&t->used, 1, __ATOMIC_ACQUIRE))
			goto found;
	p = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	t = p;
	t->used = 1;
	head = __atomic_load_n(&ft_threads, __ATOMIC_RELAXED);
	do
		t->next = head;
	while (!__atomic_compare_exchange_n(&ft_threads, &head, t, 1,
	    __ATOMIC_RELEASE, __ATOMIC_RELAXED));
found:
	/* cb_seq stays as it was: even, and only ever growing; so do the
	 * skip counters, running totals of the process that the connection
	 * thread sums. */
	t->depth = 0;
	t->dead = 0;
	t->in_cb = 0;
	t->stack_known = 0;
	ft_zero(t->tstate_gen, sizeof(t->tstate_gen));
	t->tid = ft_gettid();
	ft_self = t;
	if (ft_key_ok)
		(void)ft_fp_call((uintptr_t)pthread_setspecific, ft_key,
		    (uintptr_t)t, 0);
	return t;
}

struct ft_thread *
ft_thread_self(void)
{
	struct ft_thread *t = ft_self;

	return t == FT_EXITED ? NULL : t;
}

/* This tracer's per-thread state, zeroed the first time. */
static void *
ft_tstate(struct ft_thread *t, uint32_t i)
{
	const struct ft_tracer *tr = &ft.tracers[i];
	uint8_t gen = __atomic_load_n(&tr->gen, __ATOMIC_RELAXED);

	if (t->tstate_gen[i] != gen) {
		ft_zero(t->tstate + tr->state_off, tr->ops.state_size);
		t->tstate_gen[i] = gen;
	}
	return t->tstate + tr->state_off;
}

/* ---- the tracers ------------------------------------------------------ */

/*
 * graph: a func_entry or func_exit record.  Returns its timestamp, or
 * 0 if it was not written (event off, ring full: counted as lost).
 */
static inline uint64_t
ft_graph(uint32_t ev, uintptr_t addr, uint32_t depth)
{
	char *r;
	uint64_t ts;

	if (ft_provider.id_base == 0 || !traced_state_on(ft_provider.state, ev))
		return 0;
	r = traced_reserve(ft_provider.id_base + ev, FT_REC_SIZE);
	if (r == NULL)
		return 0;
	memcpy(&ts, r + offsetof(struct traced_rec_hdr, ts), sizeof(ts));
	traced_put_u64(r + 16, addr);
	traced_put_u64(r + 24, depth);
	traced_commit(FT_REC_SIZE);
	return ts;
}

/* latency: the call's duration into its function's histogram. */
static void
ft_latency(const struct ft_frame *f, uint64_t now)
{
	const struct ft_fref *r;
	struct traced_func_stat *st;
	uint64_t d, max;
	int b;

	if (f->ts == 0 || now < f->ts || (r = ft_lookup(f->addr)) == NULL)
		return;
	st = r->stat;
	d = now - f->ts;
	b = d < 2 ? 0 : 63 - __builtin_clzll(d);
	__atomic_fetch_add(&st->calls, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&st->sum, d, __ATOMIC_RELAXED);
	__atomic_fetch_add(&st->buckets[b], 1, __ATOMIC_RELAXED);
	max = __atomic_load_n(&st->max, __ATOMIC_RELAXED);
	while (d > max && !__atomic_compare_exchange_n(&st->max, &max, d, 1,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/*
 * The program's tracers, bits 2 and up of 'mask'.  in_cb keeps the
 * functions they call untraced; cb_seq, odd meanwhile, tells
 * traced_tracer_unregister() to wait.  The odd cb_seq store and the
 * ft_enabled load here, like the ft_enabled store and the cb_seq load
 * there, are sequentially consistent: either this thread sees the
 * tracer's bit cleared, or the unregistering one sees cb_seq odd and
 * waits.  (Atomic operations rather than fences: TSan follows those.)
 */
static void
ft_user(struct ft_thread *t, uint32_t mask, int is_exit,
    const struct traced_func_call *c, uintptr_t sp)
{
	void (*cb)(void *, const struct traced_func_call *);
	uint32_t i;

	t->in_cb = 1;
	t->cb_sp = sp;
	__atomic_store_n(&t->cb_seq, t->cb_seq + 1, __ATOMIC_SEQ_CST);
	/* Also pairs with the store in ft_dispatch_set(), after which a
	 * tracer's registration is whole. */
	mask &= __atomic_load_n(&ft_enabled, __ATOMIC_SEQ_CST);
	for (i = 2; i < TRACED_TRACERS_MAX; i++) {
		if (!(mask & (1u << i)))
			continue;
		cb = __atomic_load_n(is_exit ? &ft.tracers[i].ops.exit :
		    &ft.tracers[i].ops.entry, __ATOMIC_ACQUIRE);
		if (cb != NULL)
			cb(ft_tstate(t, i), c);
	}
	__atomic_store_n(&t->cb_seq, t->cb_seq + 1, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->in_cb = 0;
}

/* Is this thread inside tracer callbacks (a live one)?  See ft_user(). */
static int
ft_in_cb(struct ft_thread *t, uintptr_t sp)
{
	if (!t->in_cb)
		return 0;
	/* A callback left by siglongjmp: its frame is gone. */
	if (sp > t->cb_sp) {
		t->in_cb = 0;
		return 0;
	}
	return 1;
}

/* Inlined into each way in: the hot path is the stubs, this and one ring
 * record. */
#define FT_INLINE	inline __attribute__((always_inline))

/*
 * The tracers other than graph: latency and the program's.  Out of line:
 * the common case (graph alone) keeps the hot path small.  Returns the
 * timestamp the tracers were given.
 */
static __attribute__((noinline)) uint64_t
ft_others_entry(struct ft_thread *t, struct ft_frame *f, uint32_t mask,
    uintptr_t sp, uint64_t ts)
{
	struct traced_func_call c;

	if (ts == 0)
		ts = traced_clock_now();
	if ((mask & ~3u) && !ft_in_cb(t, sp)) {
		c.addr = f->addr;
		c.ts = ts;
		c.entry_ts = 0;
		c.depth = f->depth;
		c.flags = 0;
		ft_user(t, mask, 0, &c, sp);
	}
	return ts;
}

static FT_INLINE void
ft_dispatch_entry(struct ft_thread *t, struct ft_frame *f, uint32_t mask,
    uintptr_t sp)
{
	uint64_t ts = 0;

	if (mask & (1u << FT_GRAPH))
		ts = ft_graph(0, f->addr, f->depth);
	if (__builtin_expect(mask & ~(1u << FT_GRAPH), 0))
		ts = ft_others_entry(t, f, mask, sp, ts);
	f->ts = ts;
	f->mask = mask;
}

static __attribute__((noinline)) void
ft_others_exit(struct ft_thread *t, const struct ft_frame *f, uint32_t mask,
    uint32_t flags, uintptr_t sp, uint64_t ts)
{
	struct traced_func_call c;

	if (ts == 0)
		ts = traced_clock_now();
	if ((mask & (1u << FT_LATENCY)) && !(flags & TRACED_CALL_UNWOUND))
		ft_latency(f, ts);
	if ((mask & ~3u) && !ft_in_cb(t, sp)) {
		c.addr = f->addr;
		c.ts = ts;
		c.entry_ts = f->ts;
		c.depth = f->depth;
		c.flags = flags;
		ft_user(t, mask, 1, &c, sp);
	}
}

static FT_INLINE void
ft_dispatch_exit(struct ft_thread *t, const struct ft_frame *f,
    uint32_t flags, uintptr_t sp)
{
	uint32_t mask = f->mask &
	    __atomic_load_n(&ft_enabled, __ATOMIC_RELAXED);
	uint64_t ts = 0;

	if (mask & (1u << FT_GRAPH))
		ts = ft_graph(1, f->addr, f->depth);
	if (__builtin_expect(mask & ~(1u << FT_GRAPH), 0))
		ft_others_exit(t, f, mask, flags, sp, ts);
}

/* ---- dead frames ------------------------------------------------------ */

/*
 * Read the word at 'addr' without faulting: 0 and *out, or -1 if it is
 * not mapped.  (A dead frame's slot may be on a stack that is gone.)
 */
static int
ft_peek(uintptr_t addr, uintptr_t *out)
{
	struct iovec local = { out, sizeof(*out) };
	struct iovec remote = { (void *)addr, sizeof(*out) };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
	    (ssize_t)sizeof(*out) ? 0 : -1;
}

/*
 * One line of /proc/self/maps: "lo-hi perms offset dev inode [path]".
 * 0, or -1 if it does not read as one.  Async-signal-safe.
 */
static int
ft_maps_line(const char *l, uintptr_t *lo, uintptr_t *hi, char perms[5],
    const char **path)
{
	uintptr_t v[2] = { 0, 0 };
	int i, field;

	for (i = 0; i < 2; i++) {
		if (!((*l >= '0' && *l <= '9') || (*l >= 'a' && *l <= 'f')))
			return -1;
		for (; (*l >= '0' && *l <= '9') || (*l >= 'a' && *l <= 'f');
		    l++)
			v[i] = v[i] * 16 + (uintptr_t)(*l <= '9' ? *l - '0' :
			    *l - 'a' + 10);
		if (*l++ != (i == 0 ? '-' : ' '))
			return -1;
	}
	for (i = 0; i < 4; i++) {
		if (l[i] == '\0')
			return -1;
		perms[i] = l[i];
	}
	perms[4] = '\0';
	l += 4;
	/* offset, dev, inode, then the path (if any) */
	for (field = 0; field < 4 && *l != '\0'; field++) {
		while (*l == ' ')
			l++;
		if (field == 3)
			break;
		while (*l != ' ' && *l != '\0')
			l++;
	}
	*lo = v[0];
	*hi = v[1];
	*path = l;
	return 0;
}

/*
 * This thread's own stack, [lo, hi): the mapping that holds 'addr', if
 * it is the main stack or a read-write mapping with a guard page right
 * below it (a thread's or a coroutine's stack of its own).  Read from
 * /proc/self/maps with system calls only (a signal handler may be
 * here).  1 found, -1 not.
 */
static int
ft_stack_find(struct ft_thread *t, uintptr_t addr)
{
	char buf[4096], line[512], perms[5];
	uintptr_t lo, hi, prev_hi = 0;
	int fd, found = 0, prev_none = 0;
	const char *path;
	size_t ll = 0;
	ssize_t k, n;

	fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps",
	    O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (found == 0 && (k = read(fd, buf, sizeof(buf))) > 0) {
		for (n = 0; n < k && found == 0; n++) {
			if (buf[n] != '\n') {
				if (ll < sizeof(line) - 1)
					line[ll++] = buf[n];
				continue;
			}
			line[ll] = '\0';
			ll = 0;
			if (ft_maps_line(line, &lo, &hi, perms, &path) == -1)
				continue;
			if (addr >= lo && addr < hi) {
				if (ft_streq(path, "[stack]", 8) ||
				    (prev_none && prev_hi == lo &&
				    perms[0] == 'r' && perms[1] == 'w')) {
					t->stack_lo = lo;
					t->stack_hi = hi;
					found = 1;
				} else
					found = -1;
			}
			prev_none = perms[0] == '-' && perms[1] == '-' &&
			    perms[2] == '-';
			prev_hi = hi;
		}
	}
	close(fd);
	return found == 1 ? 1 : -1;
}

/* Is 'addr' on this thread's own stack, and the thread not on an
 * alternate signal stack (which may sit inside it)? */
static int
ft_own_stack(struct ft_thread *t, uintptr_t addr)
{
	stack_t ss;

	if (t->stack_known == 0)
		t->stack_known = ft_stack_find(t, addr);
	if (t->stack_known != 1 || addr < t->stack_lo || addr >= t->stack_hi)
		return 0;
	if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK))
		return 0;
	return 1;
}

/* Frame i is dead: its exit, late, then it waits to be popped. */
static __attribute__((noinline, cold)) void
ft_kill(struct ft_thread *t, uint32_t i, uintptr_t sp)
{
	struct ft_frame *f = &t->frames[i];

	ft_dispatch_exit(t, f, TRACED_CALL_UNWOUND, sp);
	f->slot = 0;
	t->dead++;
}

/* Pop the dead frames at the top. */
static __attribute__((noinline, cold)) void
ft_pop_dead(struct ft_thread *t)
{
	uint32_t d = t->depth;

	while (d > 0 && t->frames[d - 1].slot == 0) {
		d--;
		t->dead--;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->depth = d;
}

/*
 * A call is being made (entry) or returning at slot 's' (its return
 * address slot, or for -finstrument-functions the frame's stack
 * address): frames [from, depth) that are dead by now get their exit
 * and go.  On entry the walk stops at the first frame above 's'.
 */
static __attribute__((noinline, cold)) void
ft_reap(struct ft_thread *t, uintptr_t s, uint32_t from, int entry,
    uintptr_t sp)
{
	int own = -1;
	uintptr_t v;
	uint32_t i;

	for (i = t->depth; i-- > from; ) {
		struct ft_frame *f = &t->frames[i];

		if (f->slot == 0)
			continue;
		/* On entry, a frame above the new slot is its caller (or
		 * on another stack): the older ones can wait. */
		if (entry && f->slot > s)
			break;
		if (f->slot == s && f->ret != 0) {
			/* Same slot, and not the exit stub in it (the
			 * caller checked): reused. */
			ft_kill(t, i, sp);
			continue;
		}
		if (f->ret != 0 && (ft_peek(f->slot, &v) == -1 ||
		    v != (uintptr_t)ft_exit_stub)) {
			ft_kill(t, i, sp);
			continue;
		}
		if (f->slot <= s) {
			if (own == -1)
				own = ft_own_stack(t, s);
			if (own && f->slot >= t->stack_lo)
				ft_kill(t, i, sp);
		}
	}
	ft_pop_dead(t);
}

/*
 * At FT_DEPTH_MAX: drop every frame that is provably dead (its slot
 * changed, or a newer frame has the same one) and close the gaps.
 * Signals are blocked meanwhile: frames move.
 */
static __attribute__((noinline, cold)) void
ft_compact(struct ft_thread *t, uintptr_t sp)
{
	uint64_t all = ~(uint64_t)0, old;
	uint32_t i, j, n;
	uintptr_t v;

	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, 8) != 0)
		return;
	for (i = t->depth; i-- > 0; ) {
		struct ft_frame *f = &t->frames[i];

		if (f->slot == 0 || f->ret == 0)
			continue;
		if (ft_peek(f->slot, &v) == -1 ||
		    v != (uintptr_t)ft_exit_stub) {
			ft_kill(t, i, sp);
			continue;
		}
		for (j = i + 1; j < t->depth; j++)
			if (t->frames[j].slot == f->slot) {
				ft_kill(t, i, sp);
				break;
			}
	}
	for (i = 0, n = 0; i < t->depth; i++)
		if (t->frames[i].slot != 0)
			t->frames[n++] = t->frames[i];
	t->depth = n;
	t->dead = 0;
	(void)syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, 8);
}

/* ---- entry and exit --------------------------------------------------- */

/*
 * Push a frame for a call at slot 's' returning to 'ret' and tell the
 * tracers.  The caller hijacks the slot afterwards, if it has one.
 * Returns the frame, or NULL if the call is not traced.
 */
/*
 * Before a push, the rare cases: inside a tracer's callback (not
 * traced), frames left below the new slot (reaped), the shadow stack
 * full (compacted, or the call is not traced).  Returns the depth to
 * push at, or -1.
 */
static __attribute__((noinline, cold)) int64_t
ft_push_slow(struct ft_thread *t, uintptr_t s)
{
	uint32_t d;

	if (t->in_cb && ft_in_cb(t, s)) {
		__atomic_store_n(&t->skipped_nested, t->skipped_nested + 1,
		    __ATOMIC_RELAXED);
		return -1;
	}
	d = t->depth;
	if (d != 0 && t->frames[d - 1].slot <= s) {
		ft_reap(t, s, 0, 1, s);
		d = t->depth;
	}
	if (d >= FT_DEPTH_MAX) {
		ft_compact(t, s);
		d = t->depth;
		if (d >= FT_DEPTH_MAX) {
			__atomic_store_n(&t->skipped_depth,
			    t->skipped_depth + 1, __ATOMIC_RELAXED);
			return -1;
		}
	}
	return d;
}

/*
 * Push a frame for a call at slot 's' returning to 'ret' and tell the
 * tracers.  The caller hijacks the slot afterwards, if it has one.
 * Returns the frame, or NULL if the call is not traced.
 */
static FT_INLINE struct ft_frame *
ft_push(struct ft_thread *t, uintptr_t s, uintptr_t ret, uintptr_t addr,
    uint32_t mask)
{
	struct ft_frame *f;
	int64_t d = t->depth;

	if (__builtin_expect(t->in_cb || d >= FT_DEPTH_MAX ||
	    (d != 0 && t->frames[d - 1].slot <= s), 0))
		if ((d = ft_push_slow(t, s)) < 0)
			return NULL;
	/* Reserve, then fill: see DESIGN above. */
	t->depth = (uint32_t)d + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	f = &t->frames[d];
	f->ret = ret;
	f->slot = s;
	f->addr = addr;
	f->depth = (uint32_t)d - t->dead;
	ft_dispatch_entry(t, f, mask, s);
	return f;
}

/*
 * Called by ft_entry_stub: the function whose site ends at 'site_end'
 * was called and will return through *slot.
 */
/*
 * A tail call: the slot is already ours, for the frame that jumped
 * here.  That call is over; this one returns where it would have.
 * Returns that address, or 0 if the slot is not ours after all.
 */
static __attribute__((noinline, cold)) uintptr_t
ft_tail_call(struct ft_thread *t, uintptr_t s)
{
	uintptr_t ret;
	uint32_t i;

	for (i = t->depth; i-- > 0; )
		if (t->frames[i].slot == s && t->frames[i].ret != 0)
			break;
	if (i == (uint32_t)-1)
		return 0;
	ret = t->frames[i].ret;
	ft_dispatch_exit(t, &t->frames[i], 0, s);
	t->frames[i].slot = 0;
	t->dead++;
	ft_reap(t, s, i, 1, s);
	return ret;
}

/*
 * Called by ft_entry_stub: the function whose site ends at 'site_end'
 * was called and will return through *slot.
 */
void
ft_enter(uintptr_t site_end, uintptr_t *slot)
{
	uint32_t mask = __atomic_load_n(&ft_enabled, __ATOMIC_RELAXED);
	struct ft_thread *t = ft_self;
	uintptr_t s = (uintptr_t)slot, ret = *slot;

	if (__builtin_expect(mask == 0, 0))
		return;
	if (__builtin_expect(t == NULL || t == FT_EXITED, 0)) {
		if (t == FT_EXITED || (t = ft_thread_new()) == NULL)
			return;
	}
	if (__builtin_expect(ret == (uintptr_t)ft_exit_stub, 0) &&
	    (ret = ft_tail_call(t, s)) == 0)
		return;		/* not ours after all: leave it alone */
	if (ft_push(t, s, ret, site_end - FT_SITE_LEN, mask) == NULL) {
		if (ret != *slot)
			*slot = ret;	/* tail call not traced: undo */
		return;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*slot = (uintptr_t)ft_exit_stub;
}

static void ft_lost(uintptr_t s) __attribute__((noreturn, cold));

/*
 * A traced function returned through a slot no frame has: its return
 * address is lost.  Cannot happen unless memory was corrupted; there is
 * no safe way on.
 */
static void
ft_lost(uintptr_t s)
{
	char msg[160];
	int n;

	n = snprintf(msg, sizeof(msg), "libtraced: function tracing: no "
	    "return address for stack slot %#lx in thread %d; aborting\n",
	    (unsigned long)s, (int)ft_gettid());
	if (n > 0)
		(void)!write(STDERR_FILENO, msg, (size_t)n);
	abort();
}

/* The slow way out: the frame of slot 's' is not the top one. */
static __attribute__((noinline, cold)) uintptr_t
ft_exit_slow(struct ft_thread *t, uintptr_t s)
{
	uintptr_t ret;
	uint32_t i;

	for (i = t->depth; i-- > 0; )
		if (t->frames[i].slot == s && t->frames[i].ret != 0)
			break;
	if (i == (uint32_t)-1)
		ft_lost(s);
	ret = t->frames[i].ret;
	/* Frames above it that are dead: before its own exit. */
	ft_reap(t, s, i + 1, 0, s);
	ft_dispatch_exit(t, &t->frames[i], 0, s);
	t->frames[i].slot = 0;
	t->dead++;
	ft_pop_dead(t);
	return ret;
}

/*
 * Called by ft_exit_stub: the function whose return address was in
 * *slot returned.  Returns where it was to return to.
 */
uintptr_t
ft_exit(uintptr_t *slot)
{
	struct ft_thread *t = ft_self;
	uintptr_t s = (uintptr_t)slot, ret;
	struct ft_frame *f;
	uint32_t d;

	if (__builtin_expect(t == NULL || t == FT_EXITED, 0))
		ft_lost(s);
	d = t->depth;
	f = &t->frames[d != 0 ? d - 1 : 0];
	if (__builtin_expect(d == 0 || f->slot != s || f->ret == 0 ||
	    t->dead != 0, 0))
		return ft_exit_slow(t, s);
	ret = f->ret;
	ft_dispatch_exit(t, f, 0, s);
	/* Read, then release. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->depth = d - 1;
	return ret;
}

/* ---- -finstrument-functions ------------------------------------------ */

/*
 * The hooks GCC and clang call at the start and end of every function
 * of a program built with -finstrument-functions: the portable way,
 * always called, no patching.  A function is traced when its state
 * byte says so.  Its frame's slot is the caller's stack pointer at the
 * hook, which orders it among the other frames of the stack.
 */
TRACED_EXPORT void __cyg_profile_func_enter(void *fn, void *site)
    __attribute__((no_instrument_function));
TRACED_EXPORT void __cyg_profile_func_exit(void *fn, void *site)
    __attribute__((no_instrument_function));

void
__cyg_profile_func_enter(void *fn, void *site)
{
	uint32_t mask = __atomic_load_n(&ft_enabled, __ATOMIC_RELAXED);
	const struct ft_fref *r;
	struct ft_thread *t;
	uintptr_t s;

	(void)site;
	if (mask == 0 || (r = ft_lookup((uintptr_t)fn)) == NULL ||
	    !__atomic_load_n(r->state, __ATOMIC_RELAXED))
		return;
	t = ft_self;
	if (t == NULL || t == FT_EXITED) {
		if (t == FT_EXITED || (t = ft_thread_new()) == NULL)
			return;
	}
	s = (uintptr_t)__builtin_frame_address(0) + 16;
	(void)ft_push(t, s, 0, (uintptr_t)fn, mask);
}

void
__cyg_profile_func_exit(void *fn, void *site)
{
	struct ft_thread *t = ft_self;
	uintptr_t s = (uintptr_t)__builtin_frame_address(0) + 16;
	struct ft_frame *f;
	uint32_t i;

	(void)site;
	if (t == NULL || t == FT_EXITED || t->depth == 0)
		return;
	f = &t->frames[t->depth - 1];
	if (__builtin_expect(f->ret == 0 && f->slot != 0 &&
	    f->addr == (uintptr_t)fn, 1)) {
		ft_dispatch_exit(t, f, 0, s);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->depth--;
		if (t->dead != 0)
			ft_pop_dead(t);
		return;
	}
	/* Not the top: the newest frame of fn below, if it was traced. */
	for (i = t->depth; i-- > 0; )
		if (t->frames[i].ret == 0 && t->frames[i].slot != 0 &&
		    t->frames[i].addr == (uintptr_t)fn)
			break;
	if (i == (uint32_t)-1)
		return;		/* entered while it was off */
	ft_reap(t, t->frames[i].slot, i + 1, 0, s);
	ft_dispatch_exit(t, &t->frames[i], 0, s);
	t->frames[i].slot = 0;
	t->dead++;
	ft_pop_dead(t);
}

/* ---- lookups by address ----------------------------------------------- */

/*
 * The function of a site or start address, from the table module.c
 * publishes (release; this load pairs with it).  Lock-free; tables are
 * never freed while the process runs.
 */
const struct ft_fref *
ft_lookup(uintptr_t key)
{
	const struct ft_ftab *tab = __atomic_load_n(&ft_ftab, __ATOMIC_ACQUIRE);
	uint64_t i;

	if (tab == NULL || key == 0)
		return NULL;
	for (i = (key * UINT64_C(0x9e3779b97f4a7c15)) >> 20; ; i++) {
		const struct ft_fref *r = &tab->slot[i & tab->mask];

		if (r->key == key)
			return r;
		if (r->key == 0)
			return NULL;
	}
}

/* ---- thread exit, fork, setup -------------------------------------------- */

/*
 * TLS destructor: the thread is exiting.  Frames it still has were left
 * (pthread_exit from inside them): they get their exits now, and the
 * record goes back to the pool.  A later destructor's calls on this
 * thread are not traced.
 */
static void
ft_thread_exit(void *arg)
{
	struct ft_thread *t = arg;
	uintptr_t here = (uintptr_t)&here;

	if (t == NULL || t == FT_EXITED)
		return;
	while (t->depth > 0) {
		uint32_t d = t->depth - 1;

		if (t->frames[d].slot != 0)
			ft_dispatch_exit(t, &t->frames[d], TRACED_CALL_UNWOUND,
			    here);
		else
			t->dead--;
		t->depth = d;
	}
	ft_self = FT_EXITED;
	__atomic_store_n(&t->used, 0, __ATOMIC_RELEASE);
}

/*
 * In the child of fork(): its one thread keeps its record and frames
 * (its stack is the same); the others' records are free again.
 */
void
ft_thread_atfork_child(void)
{
	struct ft_thread *t, *self = ft_thread_self();

	for (t = ft_threads; t != NULL; t = t->next)
		if (t != self)
			t->used = 0;
	if (self != NULL)
		self->tid = ft_gettid();
}

/* Once, before any ring: its TLS key runs before the ring's (lower). */
void
ft_dispatch_init(void)
{
	if (pthread_key_create(&ft_key, ft_thread_exit) == 0)
		ft_key_ok = 1;
}

/*
 * Under a sanitizer the hot path calls its runtime, which may use
 * vector registers: the stubs always save them then.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FT_ALWAYS_FULL	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FT_ALWAYS_FULL	1
#endif
#endif
#ifndef FT_ALWAYS_FULL
#define FT_ALWAYS_FULL	0
#endif

void
ft_dispatch_set(uint32_t enabled)
{
	__atomic_store_n(&ft_full, FT_ALWAYS_FULL || (enabled & ~3u) != 0,
	    __ATOMIC_RELAXED);
	/* Sequentially consistent for traced_tracer_unregister(): see
	 * ft_user(). */
	__atomic_store_n(&ft_enabled, enabled, __ATOMIC_SEQ_CST);
}
