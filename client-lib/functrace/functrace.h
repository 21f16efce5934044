/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Function tracing inside libtraced (doc/DESIGN.md section 11): the parts
 * and what they share.  Not installed.
 *
 *   stub-x86_64.S  the entry stub a patched site calls (through a
 *                  trampoline near its object) and the exit stub a
 *                  hijacked return address leads to
 *   dispatch.c     the hot path: the per-thread shadow stack, the
 *                  tracers' callbacks, the built-in graph and latency
 *                  tracers, the -finstrument-functions hooks
 *   tracer.c       the tracer registry and its public API
 *   module.c       the loaded objects: their sites and symbols (libelf,
 *                  opened with dlopen when first needed), build ids,
 *                  the lookup tables of the hot path
 *   patch.c        turning sites into calls and back while the program
 *                  runs: every other thread stopped, or proven outside
 *                  the sites
 *   fconn.c        what the connection thread sends and applies
 *   dlopen.c       libtraced's dlopen(), in front of libc's: objects it
 *                  brings are patched before it returns
 *
 * Threads: the hot path runs on every application thread, in signal
 * handlers too, and takes no lock.  Everything else runs on the
 * connection thread (patching, the daemon's messages, rescans) or on an
 * application thread calling the tracer API, under ft.lock; lib.lock,
 * when both are held, is taken first.
 */
#ifndef TRACED_CLIENT_FUNCTRACE_H
#define TRACED_CLIENT_FUNCTRACE_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "traced.h"
#include "functab.h"
#include "wire.h"

#define TRACED_HIDDEN	__attribute__((visibility("hidden")))

#define FT_DEPTH_MAX	1024		/* shadow stack frames per thread */
#define FT_SITE_LEN	5		/* a site: 5-byte nop <-> call rel32 */
#define FT_GRAPH	0		/* built-in tracer slots */
#define FT_LATENCY	1
#define FT_TSTATE_SIZE	4096		/* per-thread tracer state arena */

/* One shadow-stack frame: a traced call in progress. */
struct ft_frame {
	uintptr_t	 ret;		/* the return address it replaced; 0:
					   -finstrument-functions (none) */
	uintptr_t	 slot;		/* the stack slot it replaced (for
					   -finstrument-functions, a stack
					   address inside the frame); 0: dead,
					   waiting to be popped */
	uintptr_t	 addr;		/* the site, or the function */
	uint64_t	 ts;		/* entry timestamp, 0 if none taken */
	uint32_t	 mask;		/* tracers that saw the entry */
	uint32_t	 depth;		/* as the tracers were told */
};

/*
 * An application thread's function-tracing state.  mmap()ed at its
 * first traced call (async-signal-safe), kept on ft_threads for the
 * process's life and reused by a later thread once its own exits.
 */
struct ft_thread {
	struct ft_thread *next;		/* ft_threads, never unlinked */
	int		 used;		/* atomic: claimed by a thread */
	pid_t		 tid;
	uint32_t	 depth;		/* frames in use, dead ones included */
	uint32_t	 dead;		/* dead frames below the top */
	uint32_t	 in_cb;		/* inside tracer callbacks */
	uint32_t	 cb_seq;	/* odd while in a callback (atomic) */
	uintptr_t	 cb_sp;		/* stack address when in_cb was set */
	uint64_t	 skipped_depth;
	uint64_t	 skipped_nested;
	uintptr_t	 stack_lo;	/* this thread's stack, once known */
	uintptr_t	 stack_hi;
	int		 stack_known;	/* 1 known, -1 could not tell */
	uint8_t		 tstate_gen[TRACED_TRACERS_MAX]; /* see ft_tstate() */
	_Alignas(64) unsigned char tstate[FT_TSTATE_SIZE];
	struct ft_frame	 frames[FT_DEPTH_MAX];
};

/* A registered tracer (slot 0 and 1: the built-ins). */
struct ft_tracer {
	struct traced_tracer ops;	/* ops.name points at 'name' */
	char		 name[TRACED_TRACER_NAME_SIZE];
	int		 registered;
	int		 on;		/* what the program or a rule said */
	int		 builtin;
	uint32_t	 state_off;	/* in ft_thread.tstate */
	uint8_t		 gen;		/* bumped at each registration */
	int		 sent;		/* TRACER sent on this connection */
	int		 rule_known;	/* a FUNC_APPLY rule was applied... */
	int		 rule_on;	/* ... and said this */
};

/* What a hot-path lookup by address gives (module.c's hash table). */
struct ft_fref {
	uintptr_t	 key;		/* the site, or the function's start */
	const uint8_t	*state;		/* its state byte (the daemon's) */
	struct traced_func_stat *stat;	/* its statistics (ours) */
};

struct ft_ftab {
	struct ft_ftab	*prev;		/* the one it replaced: never freed, a
					   thread may still read it */
	uint64_t	 mask;		/* slots - 1 */
	struct ft_fref	 slot[];	/* open addressing, key 0: empty */
};

/* One instrumented function. */
struct ft_func {
	uintptr_t	 start;		/* absolute */
	uintptr_t	 site;		/* absolute; 0 for 'i' */
	uint32_t	 size;
	uint32_t	 name;		/* offset in the module's names */
	char		 kind;		/* FUNCTAB_KIND_* */
	uint8_t		 patched;	/* the site is a call now */
	uint8_t		 refused;	/* it will not be patched */
	uint8_t		 converted;	/* 'p' site turned into one nop */
};

/* One loaded object. */
struct ft_module {
	struct ft_module *next;		/* ft.modules, in index order */
	uint32_t	 index;
	int		 gone;		/* dlclose()d: never touch it again */
	uintptr_t	 base;		/* dlpi_addr */
	uintptr_t	 lo, hi;	/* its PT_LOAD segments */
	char		*path;		/* owned: its file */
	char		*dlname;	/* owned: as dl_iterate_phdr says */
	uint8_t		 build_id[TRACED_BUILD_ID_MAX];
	uint32_t	 build_id_len;
	int		 is_self;	/* libtraced itself: never traced */
	struct ft_func	*funcs;		/* owned, by start */
	uint32_t	 nfuncs;
	char		*names;		/* owned */
	size_t		 names_len;
	uint8_t		*state;		/* state memfd mapping, RW */
	size_t		 state_size;
	uint32_t	 stats_off;
	int		 state_fd;
	char		*desc;		/* owned: the table text */
	size_t		 desc_len;
	uintptr_t	 tramp;		/* trampoline near it, 0 if none */
	int		 tramp_failed;
	int		 sent;		/* MODULE (+ FUNCS) sent */
	struct {			/* its segments, to restore them */
		uintptr_t	 start, end;
		int		 prot;
	}		 seg[8];
	int		 nseg;
};

struct ft_state {
	pthread_mutex_t	 lock;
	pthread_cond_t	 cond;		/* gen_applied moved */
	int		 initialized;
	int		 unsupported;	/* not x86-64, or no usable libelf */
	struct ft_module *modules;
	uint32_t	 nmodules;
	int		 scanned;
	unsigned long long adds, subs;	/* dl_iterate_phdr counters seen */
	uint64_t	 scan_at;	/* ms, CLOCK_MONOTONIC: next rescan */
	struct ft_tracer tracers[TRACED_TRACERS_MAX];
	uint32_t	 gen_applied;	/* last FUNC_APPLY carried out */
	uint32_t	 apply_gen;	/* the last FUNC_APPLY received */
	uint32_t	 apply_set, apply_on;
	uint32_t	 apply_funcs;	/* its 'funcs' (wire.h) */
	uint32_t	 funcs_applied;	/* 'funcs' of gen_applied's */
	int		 apply_due;	/* ... not carried out yet */
	int		 sync_due;	/* the tracers on changed: patch */
	int		 stats_due;	/* send FUNC_STATS */
	uint64_t	 stats_at;	/* ms: counters are sent this often */
	uint64_t	 patched;	/* sites that are calls */
	uint64_t	 refused;	/* sites that never will be */
	uint64_t	 unapplied;	/* changes a busy moment put off... */
	uint64_t	 retry_at;	/* ... until this ms */
	uint64_t	 last_sent[4];	/* counters in the last FUNC_STATS */
	int		 have_funcs;	/* some module has functions */
	int		 provider_wanted; /* register the built-in provider */
	int		 provider_done;
};

extern struct ft_state ft TRACED_HIDDEN;

/* Hot-path globals (dispatch.c). */
extern uint32_t ft_enabled TRACED_HIDDEN;	/* tracers on, bits */
extern uint8_t ft_full TRACED_HIDDEN;		/* a program's tracer is on:
						   the stubs save FP state */
extern struct ft_ftab *ft_ftab TRACED_HIDDEN;	/* lookups by address */
extern struct ft_thread *ft_threads TRACED_HIDDEN;
extern struct traced_provider ft_provider TRACED_HIDDEN;

/* stub-x86_64.S */
void	ft_entry_stub(void) TRACED_HIDDEN;
void	ft_exit_stub(void) TRACED_HIDDEN;

/* dispatch.c */
void	ft_enter(uintptr_t site_end, uintptr_t *slot) TRACED_HIDDEN;
uintptr_t ft_exit(uintptr_t *slot) TRACED_HIDDEN;
void	ft_dispatch_set(uint32_t enabled) TRACED_HIDDEN;
void	ft_thread_atfork_child(void) TRACED_HIDDEN;
void	ft_dispatch_init(void) TRACED_HIDDEN;
struct ft_thread *ft_thread_self(void) TRACED_HIDDEN;
const struct ft_fref *ft_lookup(uintptr_t key) TRACED_HIDDEN;

/* tracer.c */
void	ft_tracers_init(void) TRACED_HIDDEN;
uint32_t ft_tracers_on_locked(void) TRACED_HIDDEN;
void	ft_tracers_apply_rules_locked(uint32_t set, uint32_t on) TRACED_HIDDEN;

/* module.c */
int	ft_modules_scan_locked(void) TRACED_HIDDEN;
const char *ft_func_name(const struct ft_module *m, const struct ft_func *f)
	    TRACED_HIDDEN;
int	ft_state_memfd_atfork_child(void) TRACED_HIDDEN;
int	ft_module_intact(const struct ft_module *m) TRACED_HIDDEN;
void	ft_module_forget(struct ft_module *m) TRACED_HIDDEN;

/* patch.c */
int	ft_patch_sync_locked(void) TRACED_HIDDEN;
void	ft_patch_atfork_child(void) TRACED_HIDDEN;

/* dlopen.c */
void	*ft_dlopen_real(const char *file, int mode) TRACED_HIDDEN;

/* fconn.c */
void	ft_init(void) TRACED_HIDDEN;
void	ft_dlopen_done(void) TRACED_HIDDEN;
int	ft_service(void) TRACED_HIDDEN;
int	ft_send_pending_locked(int sock) TRACED_HIDDEN;
void	ft_conn_down_locked(void) TRACED_HIDDEN;
void	ft_apply_msg(const struct traced_msg_func_apply *m) TRACED_HIDDEN;
void	ft_atfork_prepare(void) TRACED_HIDDEN;
void	ft_atfork_parent(void) TRACED_HIDDEN;
void	ft_atfork_child(void) TRACED_HIDDEN;

#endif /* TRACED_CLIENT_FUNCTRACE_H */
