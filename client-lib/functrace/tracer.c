/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The stackable tracers: up to TRACED_TRACERS_MAX, each in a slot whose
 * bit in ft_enabled says whether the hot path calls it.  Slot 0 is the
 * built-in 'graph', slot 1 'latency'; traced_tracer_register() gives
 * the program's tracers the others, never-used slots first, so that a
 * slot is reused only when all have been used (an exit may then reach
 * the new tracer for a call the old one saw begin: c->entry_ts tells).
 *
 * A tracer is on when the program or a rule last said so
 * (traced_tracer_enable(), or a FUNC_APPLY from 'tracectl tracer').
 * Whenever the set of tracers on goes from empty to not or back, the
 * connection thread patches the sites in line (the cost with no tracer
 * on is the nop).
 *
 * Removal: the slot's bit is cleared, a fence, then every thread that
 * was inside a callback (odd cb_seq, see dispatch.c) is waited for.
 * Under ft.lock, except that wait.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "functrace.h"
#include "../internal.h"

#define FT_UNREGISTER_WAIT_MS	2000

static uint32_t ft_slots_used;		/* slots ever registered */
static int ft_retiring[TRACED_TRACERS_MAX]; /* being removed: not reused */

static int
ft_tracer_name_ok(const char *name)
{
	size_t n;

	if (name == NULL)
		return 0;
	for (n = 0; name[n] != '\0'; n++)
		if (n >= TRACED_TRACER_NAME_MAX ||
		    !((name[n] >= 'a' && name[n] <= 'z') ||
		    (name[n] >= '0' && name[n] <= '9') || name[n] == '_' ||
		    name[n] == '-'))
			return 0;
	return n > 0;
}

static struct ft_tracer *
ft_tracer_find_locked(const char *name)
{
	int i;

	for (i = 0; i < TRACED_TRACERS_MAX; i++)
		if (ft.tracers[i].registered &&
		    strcmp(ft.tracers[i].name, name) == 0)
			return &ft.tracers[i];
	return NULL;
}

/* The tracers that are on, as bits.  Locked. */
uint32_t
ft_tracers_on_locked(void)
{
	uint32_t on = 0;
	int i;

	for (i = 0; i < TRACED_TRACERS_MAX; i++)
		if (ft.tracers[i].registered && ft.tracers[i].on)
			on |= 1u << i;
	return on;
}

/*
 * Publish the tracers that are on to the hot path; if that makes the
 * sites change (none on before, or none now), have the connection
 * thread patch them.  Locked.
 */
static void
ft_tracers_publish_locked(void)
{
	uint32_t before = __atomic_load_n(&ft_enabled, __ATOMIC_RELAXED);
	uint32_t now = ft_tracers_on_locked();

	ft_dispatch_set(now);
	if ((before == 0) != (now == 0)) {
		ft.sync_due = 1;
		lib_wake();
	}
}

/* In the state arena: 'size' bytes (16-aligned) no tracer uses. */
static int
ft_state_alloc_locked(uint32_t size, uint32_t *off)
{
	uint32_t o = 0, need = (size + 15) & ~15u;
	int i, moved;

	if (need == 0) {
		*off = 0;
		return 0;
	}
	do {
		moved = 0;
		for (i = 0; i < TRACED_TRACERS_MAX; i++) {
			const struct ft_tracer *t = &ft.tracers[i];
			uint32_t tsz = (t->ops.state_size + 15) & ~15u;

			if ((!t->registered && !ft_retiring[i]) || tsz == 0)
				continue;
			if (o < t->state_off + tsz && t->state_off < o + need) {
				o = t->state_off + tsz;
				moved = 1;
			}
		}
	} while (moved && o + need <= FT_TSTATE_SIZE);
	if (o + need > FT_TSTATE_SIZE)
		return -1;
	*off = o;
	return 0;
}

static void
ft_tracer_builtin(int slot, const char *name, int on)
{
	struct ft_tracer *t = &ft.tracers[slot];

	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->ops.name = t->name;
	t->registered = 1;
	t->builtin = 1;
	t->on = on;
	t->gen = 1;
	ft_slots_used |= 1u << slot;
}

/* The built-ins.  Once, locked. */
void
ft_tracers_init(void)
{
	ft_tracer_builtin(FT_GRAPH, "graph", 1);
	ft_tracer_builtin(FT_LATENCY, "latency", 0);
	ft_dispatch_set(ft_tracers_on_locked());
}

int
traced_tracer_register(const struct traced_tracer *ops)
{
	struct ft_tracer *t;
	uint32_t off;
	int i, slot = -1;

	if (ops == NULL || !ft_tracer_name_ok(ops->name) ||
	    ops->state_size > TRACED_TRACER_STATE_MAX ||
	    (ops->flags & ~TRACED_TRACER_OFF))
		return -EINVAL;
	ft_init();
	pthread_mutex_lock(&ft.lock);
	if (ft_tracer_find_locked(ops->name) != NULL) {
		pthread_mutex_unlock(&ft.lock);
		return -EEXIST;
	}
	for (i = 2; i < TRACED_TRACERS_MAX && slot == -1; i++)
		if (!(ft_slots_used & (1u << i)))
			slot = i;
	for (i = 2; i < TRACED_TRACERS_MAX && slot == -1; i++)
		if (!ft.tracers[i].registered && !ft_retiring[i])
			slot = i;
	if (slot == -1 || ft_state_alloc_locked(ops->state_size, &off) == -1) {
		pthread_mutex_unlock(&ft.lock);
		return -ENOSPC;
	}
	t = &ft.tracers[slot];
	t->ops = *ops;
	snprintf(t->name, sizeof(t->name), "%s", ops->name);
	t->ops.name = t->name;
	t->state_off = off;
	t->builtin = 0;
	t->on = !(ops->flags & TRACED_TRACER_OFF);
	t->rule_known = 0;
	t->sent = 0;
	/* States of a former tracer of this slot are zeroed at first use. */
	__atomic_store_n(&t->gen, (uint8_t)(t->gen + 1 ? t->gen + 1 : 1),
	    __ATOMIC_RELAXED);
	t->registered = 1;
	ft_slots_used |= 1u << slot;
	ft.stats_due = 1;
	DEBUG("tracer %s registered (slot %d, %s)", t->name, slot,
	    t->on ? "on" : "off");
	ft_tracers_publish_locked();
	pthread_mutex_unlock(&ft.lock);
	lib_wake();
	return 0;
}

int
traced_tracer_enable(const char *name, int on)
{
	struct ft_tracer *t;

	if (name == NULL)
		return -ENOENT;
	ft_init();
	pthread_mutex_lock(&ft.lock);
	if ((t = ft_tracer_find_locked(name)) == NULL) {
		pthread_mutex_unlock(&ft.lock);
		return -ENOENT;
	}
	if (t->on != (on != 0)) {
		t->on = on != 0;
		t->sent = 0;
		ft_tracers_publish_locked();
	}
	pthread_mutex_unlock(&ft.lock);
	lib_wake();
	return 0;
}

/* Sleep 'ms' milliseconds. */
static void
ft_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

int
traced_tracer_unregister(const char *name)
{
	struct ft_tracer *t;
	struct ft_thread *th;
	int slot, busy = 0;
	long waited = 0;

	if (name == NULL)
		return -ENOENT;
	ft_init();
	pthread_mutex_lock(&ft.lock);
	t = ft_tracer_find_locked(name);
	if (t == NULL || t->builtin) {
		pthread_mutex_unlock(&ft.lock);
		return t == NULL ? -ENOENT : -EPERM;
	}
	slot = (int)(t - ft.tracers);
	t->registered = 0;
	ft_retiring[slot] = 1;
	t->sent = 0;
	ft_tracers_publish_locked();
	pthread_mutex_unlock(&ft.lock);

	/* The bit is cleared (a sequentially consistent store in
	 * ft_dispatch_set()); a thread that has not seen it yet shows an
	 * odd cb_seq to this load: see ft_user() in dispatch.c. */
	for (th = __atomic_load_n(&ft_threads, __ATOMIC_ACQUIRE); th != NULL;
	    th = th->next) {
		uint32_t seq = __atomic_load_n(&th->cb_seq, __ATOMIC_SEQ_CST);

		if (!__atomic_load_n(&th->used, __ATOMIC_RELAXED) ||
		    th == ft_thread_self())
			continue;
		while ((seq & 1) && __atomic_load_n(&th->cb_seq,
		    __ATOMIC_ACQUIRE) == seq && __atomic_load_n(&th->used,
		    __ATOMIC_RELAXED)) {
			if (waited >= FT_UNREGISTER_WAIT_MS) {
				busy = 1;
				break;
			}
			ft_sleep_ms(1);
			waited++;
		}
	}

	pthread_mutex_lock(&ft.lock);
	if (!busy) {
		__atomic_store_n(&t->ops.entry, NULL, __ATOMIC_RELEASE);
		__atomic_store_n(&t->ops.exit, NULL, __ATOMIC_RELEASE);
	}
	ft_retiring[slot] = busy;
	pthread_mutex_unlock(&ft.lock);
	lib_wake();
	DEBUG("tracer %s removed%s", name, busy ? " (a callback is still "
	    "running after 2 s)" : "");
	return busy ? -EBUSY : 0;
}

/*
 * A FUNC_APPLY's tracer rules: a rule is applied once, when it is new
 * or changed, so that the program's own later choice still counts.
 * Locked.
 */
void
ft_tracers_apply_rules_locked(uint32_t set, uint32_t on)
{
	int i;

	for (i = 0; i < TRACED_TRACERS_MAX; i++) {
		struct ft_tracer *t = &ft.tracers[i];
		int bit = (on >> i) & 1;

		if (!(set & (1u << i))) {
			t->rule_known = 0;
			continue;
		}
		if (!t->registered || (t->rule_known && t->rule_on == bit))
			continue;
		t->rule_known = 1;
		t->rule_on = bit;
		if (t->on != bit) {
			t->on = bit;
			t->sent = 0;
			DEBUG("tracer %s %s by a rule", t->name,
			    bit ? "on" : "off");
		}
	}
	ft_tracers_publish_locked();
}
