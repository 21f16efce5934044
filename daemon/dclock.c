/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The daemon's clocks: now, and the clocks a session's metadata may
 * describe.
 *
 * Every session's events are stamped with CLOCK_MONOTONIC or, where it
 * is invariant, the TSC (proto/clock.h: the client chooses, the daemon
 * says in WELCOME which it took).  Both are described to CTF readers
 * as offsets from the same wall-clock reading taken at start, under
 * one uuid per boot (the boot id), so that every session of a boot
 * merges with every other, whichever clock it used.  The TSC's rate is
 * measured against CLOCK_MONOTONIC over 200 ms at start (about 1e-7
 * relative error here, a few hundred microseconds an hour).
 *
 * dclock_setup() once at start, before any thread; then any thread.
 */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "dclock.h"
#include "log.h"

static struct dclock clk[2];	/* DCLOCK_* */
static int have_tsc;

uint64_t
now_ns(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The boot id, which names this boot's clocks so that sessions merge. */
static void
clock_boot_id(uint8_t uuid[16])
{
	char buf[64];
	ssize_t n;
	int fd, i, j;

	memset(uuid, 0, 16);
	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	n = fd != -1 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd != -1)
		close(fd);
	if (n < 32)
		return;
	buf[n] = '\0';
	for (i = 0, j = 0; buf[i] != '\0' && j < 32; i++) {
		int v;

		if (buf[i] == '-')
			continue;
		if (buf[i] >= '0' && buf[i] <= '9')
			v = buf[i] - '0';
		else if (buf[i] >= 'a' && buf[i] <= 'f')
			v = buf[i] - 'a' + 10;
		else
			break;
		uuid[j / 2] |= (uint8_t)(v << (j % 2 ? 0 : 4));
		j++;
	}
}

/* Describe a clock whose tick 0 is 'zero_real_ns' ns of realtime. */
static void
clock_set_offset(struct dclock *c, long double zero_real_ns)
{
	long double s = zero_real_ns / 1e9L;

	c->offset_s = (int64_t)s;
	c->offset = (uint64_t)((s - (long double)c->offset_s) *
	    (long double)c->freq);
}

#if defined(__x86_64__) || defined(__i386__)
static inline uint64_t
rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/*
 * A (TSC, clock) pair read as close together as this machine allows:
 * the tightest of several brackets of the clock around rdtsc.
 */
static void
tsc_pair(int clock, uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX, a, b, t;
	int i;

	for (i = 0; i < 50; i++) {
		a = now_ns(clock);
		t = rdtsc();
		b = now_ns(clock);
		if (b - a < best) {
			best = b - a;
			*tsc = t;
			*ns = a + (b - a) / 2;
		}
	}
}
#endif

/*
 * Set up the clocks sessions may use: CLOCK_MONOTONIC, and the TSC
 * where it is invariant, its rate measured against CLOCK_MONOTONIC over
 * 200 ms.  Both are offset to wall-clock time now, so readers show real
 * dates.  Once, at start.
 */
void
dclock_setup(void)
{
	struct dclock *m = &clk[DCLOCK_MONO], *c = &clk[DCLOCK_TSC];
	uint64_t mono = now_ns(CLOCK_MONOTONIC), real = now_ns(CLOCK_REALTIME);

	clock_boot_id(m->uuid);
	m->name = "monotonic";
	m->freq = 1000000000u;
	clock_set_offset(m, (long double)real - (long double)mono);

	/*
	 * One uuid for both: each is offset to the same wall-clock reading,
	 * so they are one time base, and babeltrace2 merges sessions on
	 * either clock only if their uuids match (it refuses otherwise).
	 */
	c->name = "tsc";
	memcpy(c->uuid, m->uuid, 16);
#if defined(__x86_64__) || defined(__i386__)
	{
		uint64_t t0 = 0, n0 = 0, t1 = 0, n1 = 0, tr = 0, nr = 0;
		struct timespec ts = { 0, 200000000 };

		/* Calibrated even under TRACED_CLOCK=monotonic: any client
		 * that uses the TSC still gets it described. */
		if (!traced_tsc_invariant())
			return;
		tsc_pair(CLOCK_MONOTONIC, &t0, &n0);
		nanosleep(&ts, NULL);
		tsc_pair(CLOCK_MONOTONIC, &t1, &n1);
		if (t1 <= t0 || n1 <= n0)
			return;
		c->freq = (uint64_t)((long double)(t1 - t0) * 1e9L /
		    (long double)(n1 - n0) + 0.5L);
		tsc_pair(CLOCK_REALTIME, &tr, &nr);
		clock_set_offset(c, (long double)nr -
		    (long double)tr * 1e9L / (long double)c->freq);
		have_tsc = 1;
		log_info("TSC: %.6f GHz, calibrated against CLOCK_MONOTONIC",
		    (double)c->freq / 1e9);
	}
#endif
}

/*
 * Now, in the ticks of clock 'dclock' (DCLOCK_*), as sessions on it
 * stamp their events.  Any thread.
 */
uint64_t
now_ticks(int dclock)
{
#if defined(__x86_64__) || defined(__i386__)
	if (dclock == DCLOCK_TSC)
		return rdtsc();
#endif
	(void)dclock;
	return now_ns(CLOCK_MONOTONIC);
}

/* The clock DCLOCK_* as CTF describes it. */
const struct dclock *
dclock_get(int dclock)
{
	return &clk[dclock == DCLOCK_TSC ? DCLOCK_TSC : DCLOCK_MONO];
}

/* Was the TSC found invariant and calibrated? */
int
dclock_have_tsc(void)
{
	return have_tsc;
}
