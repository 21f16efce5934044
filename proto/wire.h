/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The two socket protocols: client.sock (libtraced <-> traced) and
 * control.sock (tracectl <-> traced).  Both are SOCK_SEQPACKET, so one
 * send is one message.  Every message starts with struct traced_msg_hdr;
 * the fixed-size body of each type follows, little-endian, with a size
 * checked at compile time.  Some types carry a file descriptor
 * (SCM_RIGHTS) or trailing bytes, as said at each struct.
 *
 * wire_decode() is the one place a received message is validated; both
 * programs call it before they look at a byte.  Pure functions only: no
 * I/O, no allocation, callable from any thread.
 *
 * Changing any struct or meaning here: bump TRACED_PROTOCOL_VERSION.
 */
#ifndef TRACED_PROTO_WIRE_H
#define TRACED_PROTO_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define TRACED_PROTOCOL_VERSION	5

#define TRACED_CLIENT_SOCK	"client.sock"
#define TRACED_CONTROL_SOCK	"control.sock"

/* Largest message either protocol sends (control replies included). */
#define TRACED_MSG_MAX		8192u
/* Largest provider description accepted (normalized trace-events). */
#define TRACED_DESC_MAX		(16u << 20)
/* Most events one provider may declare. */
#define TRACED_PROVIDER_EVENTS_MAX 65536u
#define TRACED_COMM_MAX		16	/* like TASK_COMM_LEN */
#define TRACED_NAME_MAX		64

enum traced_msg_type {
	/* client.sock, client to daemon: 1..31 */
	TRACED_MSG_HELLO = 1,
	TRACED_MSG_PROVIDER,
	TRACED_MSG_RING,
	TRACED_MSG_NOTIFY,
	TRACED_MSG_RULES,
	TRACED_MSG_MODULE,		/* function tracing: see below */
	TRACED_MSG_FUNCS,
	TRACED_MSG_TRACER,
	TRACED_MSG_FUNC_STATS,
	TRACED_MSG_SPARE_ASK,		/* the ring pool: see below */
	TRACED_MSG_EXIT,
	/* client.sock, daemon to client: 32..63 */
	TRACED_MSG_WELCOME = 32,
	TRACED_MSG_PROVIDER_ACK,
	TRACED_MSG_RULES_ACK,
	TRACED_MSG_FUNC_APPLY,
	TRACED_MSG_SPARE,
	/* control.sock, tracectl to daemon: 64..95 */
	TRACED_MSG_CTL_REQUEST = 64,
	/* control.sock, daemon to tracectl: 96..127 */
	TRACED_MSG_CTL_LINE = 96,
	TRACED_MSG_CTL_END,
	TRACED_MSG_TYPE_MAX
};

struct traced_msg_hdr {
	uint32_t	type;		/* enum traced_msg_type */
	uint32_t	size;		/* whole message, header included */
};

/*
 * HELLO: the first message of a client, sent once per connection.  The
 * daemon takes pid and uid from SO_PEERCRED, never from here.
 */
#define TRACED_HELLO_TSC	0x1u	/* timestamps are rdtsc ticks, else
					   CLOCK_MONOTONIC ns */

struct traced_msg_hello {
	struct traced_msg_hdr hdr;
	uint32_t	version;	/* TRACED_PROTOCOL_VERSION */
	uint32_t	flags;		/* TRACED_HELLO_* */
	char		comm[TRACED_COMM_MAX]; /* NUL-terminated */
	/* Events the process lost while it had no daemon, by cause,
	 * since it last said so (the new session records them). */
	uint64_t	lost_disconnected;
};

/*
 * PROVIDER: one generated trace.c.  Carries two memfds, in this order:
 * - its description, sealed (F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_WRITE),
 *   desc_size bytes of the provider's events as normalized trace-events
 *   lines (proto/tevents.h), in id order;
 * - its state array, sealed against shrinking and writable: one byte
 *   per event (nonzero: enabled), at least nevents bytes rounded up to
 *   a page.  The process maps it once, for its lifetime; each daemon it
 *   connects to maps it too and writes the bytes.  A state page that
 *   never moves is what keeps a restart of the daemon from making the
 *   program's threads fault (and wait for the mmap lock) in a trace call.
 *
 * A process numbers its providers, and their event ids, in the order it
 * registered them, and sends them in that order.  Numbers and ids only
 * go up, but may skip: a provider unloaded (dlclose()) before this
 * connection is not sent, and its ids are never used again.
 */
struct traced_msg_provider {
	struct traced_msg_hdr hdr;
	uint32_t	index;		/* the client's provider number */
	uint32_t	id_base;	/* id of its first event, >= 16 */
	uint32_t	nevents;
	uint32_t	desc_size;	/* bytes in the memfd */
	char		name[TRACED_NAME_MAX]; /* NUL-terminated */
};

/*
 * PROVIDER_ACK: status 0: the daemon took the provider and has written
 * its state bytes from the rules; < 0 (a negative errno): refused.  No
 * descriptor.
 */
struct traced_msg_provider_ack {
	struct traced_msg_hdr hdr;
	uint32_t	index;
	int32_t		status;
};

/*
 * RING: a thread's ring (proto/ring.h).  Carries its memfd, sealed with
 * at least F_SEAL_SHRINK, of traced_ring_file_size(max_order) bytes.
 * The ring starts smaller and may grow to 2^max_order (its header says).
 */
struct traced_msg_ring {
	struct traced_msg_hdr hdr;
	uint32_t	index;		/* the client's ring number */
	uint32_t	tid;
	uint32_t	max_order;
	uint32_t	pad;		/* zero: refused otherwise */
};

/* NOTIFY: ring 'index' is filling up or finished: please drain it. */
struct traced_msg_notify {
	struct traced_msg_hdr hdr;
	uint32_t	index;
	uint32_t	pad;		/* zero: refused otherwise */
};

/*
 * RULES: the process's own event rules (traced_events_set() and
 * TRACED_EVENTS, libtraced(3)) and, for its providers' events, which of
 * them decides: the process evaluates its rules against its own events,
 * the daemon only combines (process rules win over its own rules).
 * Carries one memfd, sealed against shrinking, growing and writing, of
 * 'size' bytes:
 *
 *   nrules rules: a flags byte (TRACED_RULE_*), the glob pattern
 *     (1 to TRACED_RULE_PATTERN_MAX printable ASCII bytes), a NUL;
 *   zero bytes up to a multiple of 4;
 *   tables, up to the end, by increasing provider number: uint32
 *     provider number, uint32 nevents (the provider's), nevents uint16 (0: no process rule matches the event;
 *     k: rule k - 1 is the last that does, and decides), then zero bytes
 *     up to a multiple of 4.
 *
 * A provider without a table has no event a process rule matches.  The
 * process sends RULES before the PROVIDER of a provider with a table,
 * and again whenever its rules change: each replaces the one before.
 * The daemon answers RULES_ACK once it has written the state bytes.
 */
#define TRACED_RULE_ON		0x1u	/* else off */
#define TRACED_RULE_ENV		0x2u	/* from TRACED_EVENTS, else from
					   traced_events_set() */
#define TRACED_RULES_MAX	1024u	/* rules of one process */
#define TRACED_RULE_PATTERN_MAX	255
#define TRACED_RULES_SIZE_MAX	(16u << 20)

struct traced_msg_rules {
	struct traced_msg_hdr hdr;
	uint32_t	gen;		/* > 0, grows with each list */
	uint32_t	nrules;
	uint32_t	size;		/* bytes in the memfd */
	uint32_t	pad;		/* zero: refused otherwise */
};

/* RULES_ACK: status 0: the rules of 'gen' apply; < 0: refused. */
struct traced_msg_rules_ack {
	struct traced_msg_hdr hdr;
	uint32_t	gen;
	int32_t		status;
};

/* Clocks a daemon may announce in WELCOME. */
enum traced_clock_kind {
	TRACED_CLOCK_MONOTONIC = 1,	/* ns of CLOCK_MONOTONIC */
	TRACED_CLOCK_TSC,		/* rdtsc ticks */
};

/*
 * WELCOME: the daemon's answer to HELLO.
 */
struct traced_msg_welcome {
	struct traced_msg_hdr hdr;
	uint32_t	version;	/* TRACED_PROTOCOL_VERSION */
	uint32_t	session;	/* the daemon's session id */
	uint32_t	clock;		/* enum traced_clock_kind */
	uint32_t	ring_order;	/* rings may grow to 2^ring_order */
	uint32_t	paused;		/* 1: trace-file off */
	uint32_t	pad;		/* zero: refused otherwise */
};

/*
 * The ring pool (daemon/pool.c).  A daemon started with --ring-pool
 * keeps rings whose pages are made already, so that a thread's first
 * pass through its ring costs no more than the next ones.  A client
 * sends SPARE_ASK once it said HELLO, and again when a thread found
 * none left; the daemon answers with a SPARE when it has a ring of that
 * size for the client (its own uid only), at once or when one is made,
 * and not while the client holds one it has not sent back as a RING.
 *
 * SPARE_ASK: max_order the client's rings grow to, or 0 for the
 * daemon's (WELCOME's ring_order).
 * SPARE: carries one memfd of traced_ring_file_size(max_order) bytes,
 * sealed (F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_SEAL), all zero, its pages
 * made.  The thread that takes it writes the header and sends it back
 * as a RING, like a memfd of its own.
 */
struct traced_msg_spare {
	struct traced_msg_hdr hdr;
	uint32_t	max_order;
	uint32_t	pad;		/* zero: refused otherwise */
};

/*
 * EXIT: the process calls exit() (or main() returned) with this status,
 * which libtraced's on_exit() handler keeps; sent without waiting, last
 * (after the rings of its exit), so that the session can say how the
 * program ended (a process killed, or gone through _exit(), sends
 * none).  A daemon older than this message drops the client for it,
 * with nothing left to lose.  At most once; the daemon keeps the last.
 */
struct traced_msg_exit {
	struct traced_msg_hdr hdr;
	int32_t		status;		/* as given to exit() */
	uint32_t	pad;		/* zero: refused otherwise */
};

/*
 * Function tracing (doc/DESIGN.md section 11).  A process sends a MODULE for
 * each object it has loaded (dl_iterate_phdr order, numbered from 0),
 * so that the session can name addresses offline; a module with
 * instrumented functions is followed by a FUNCS with its function table
 * and state; a TRACER for each stackable tracer registered, changed or
 * gone; and a FUNC_STATS now and then, and after every FUNC_APPLY it
 * carried out.  The daemon answers with a FUNC_APPLY whenever the state
 * bytes or the tracer rules changed for the process.
 */
#define TRACED_BUILD_ID_MAX	32
#define TRACED_PATH_MAX		4000	/* module path bytes, NUL included */
#define TRACED_MODULE_FUNCS	0x1u	/* a FUNCS message follows */
#define TRACED_MODULES_MAX	4096	/* per process */

/*
 * MODULE: one loaded object.  Its path (NUL-terminated, 1 to
 * TRACED_PATH_MAX bytes, "[exe]" when unknown) follows the struct.
 */
struct traced_msg_module {
	struct traced_msg_hdr hdr;
	uint32_t	index;		/* module number, from 0, increasing */
	uint32_t	flags;		/* TRACED_MODULE_* */
	uint64_t	base;		/* load bias (dlpi_addr) */
	uint64_t	start;		/* [start, end): its PT_LOAD segments */
	uint64_t	end;
	uint32_t	build_id_len;	/* 0 to TRACED_BUILD_ID_MAX */
	uint32_t	pad;		/* zero: refused otherwise */
	uint8_t		build_id[TRACED_BUILD_ID_MAX];
};

/*
 * FUNCS: the instrumented functions of MODULE 'module'.  Carries two
 * memfds, in this order:
 * - its table, sealed (F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_WRITE),
 *   desc_size bytes in the format of proto/functab.h, one line per
 *   function in state order;
 * - its state, sealed against shrinking, state_size bytes: one byte per
 *   function that the daemon writes (nonzero: trace it), then from
 *   stats_off (page aligned) one struct traced_func_stat per function
 *   that the process writes (see proto/functab.h).
 */
#define TRACED_FUNCS_MAX	(1u << 20)	/* functions of one module */

struct traced_msg_funcs {
	struct traced_msg_hdr hdr;
	uint32_t	module;
	uint32_t	nfuncs;		/* 1 to TRACED_FUNCS_MAX */
	uint32_t	desc_size;	/* 1 to TRACED_DESC_MAX */
	uint32_t	stats_off;	/* page aligned, >= nfuncs */
	uint64_t	state_size;	/* stats_off + nfuncs * stat size */
};

/*
 * TRACER: the tracer in slot 'index' was registered, changed state or
 * went away.
 */
#define TRACED_TRACERS_MAX	32
#define TRACED_TRACER_NAME_SIZE	32
#define TRACED_TRACER_ON	0x1u	/* running in the process */
#define TRACED_TRACER_BUILTIN	0x2u	/* one of libtraced's own */
#define TRACED_TRACER_GONE	0x4u	/* unregistered: slot free */

struct traced_msg_tracer {
	struct traced_msg_hdr hdr;
	uint32_t	index;		/* 0 to TRACED_TRACERS_MAX - 1 */
	uint32_t	flags;		/* TRACED_TRACER_* */
	char		name[TRACED_TRACER_NAME_SIZE]; /* NUL-terminated,
					   [a-z0-9_-] */
};

/*
 * FUNC_STATS: the process's function-tracing counters, running totals.
 */
struct traced_msg_func_stats {
	struct traced_msg_hdr hdr;
	uint32_t	gen;		/* the last FUNC_APPLY carried out */
	uint32_t	tracers_on;	/* bits: tracers running */
	uint64_t	patched;	/* sites that are calls now */
	uint64_t	refused;	/* sites it would not patch (unsafe) */
	uint64_t	skipped_depth;	/* calls not traced: deeper than 1024 */
	uint64_t	skipped_nested;	/* calls not traced: inside a tracer */
};

/*
 * FUNC_APPLY: the state bytes of the process's functions or the tracer
 * rules changed: bring the sites and tracers in line, then answer with
 * FUNC_STATS.  A tracer whose bit is set in 'tracer_set' was turned on
 * (bit set in 'tracer_on') or off by a rule; the process applies a rule
 * once, when it first sees it or it changes, so that the program's own
 * later traced_tracer_enable() still counts.
 */
struct traced_msg_func_apply {
	struct traced_msg_hdr hdr;
	uint32_t	gen;		/* increases with each FUNC_APPLY */
	uint32_t	tracer_set;
	uint32_t	tracer_on;
	uint32_t	funcs;		/* the connection's FUNCS messages the
					   daemon has carried out (or
					   refused): a process waits before
					   main() until every object it had
					   then is covered */
};

/*
 * CTL_REQUEST: a command line.  'argc' NUL-terminated arguments follow
 * the struct, 'hdr.size - sizeof' bytes in all.
 */
#define TRACED_CTL_JSON		0x1u	/* reply in JSON */
#define TRACED_CTL_ARGS_MAX	64

struct traced_msg_ctl_request {
	struct traced_msg_hdr hdr;
	uint32_t	version;	/* TRACED_PROTOCOL_VERSION */
	uint32_t	flags;		/* TRACED_CTL_* */
	uint32_t	argc;
	uint32_t	pad;		/* zero: refused otherwise */
};

/*
 * CTL_LINE: one line (or JSON value) of a reply; its text, not
 * NUL-terminated, follows the header (hdr.size - 8 bytes).
 */

/*
 * CTL_END: the last message of a reply.  A message (for a failed
 * command, the reason) follows, not NUL-terminated.
 */
enum traced_ctl_status {
	TRACED_CTL_OK = 0,
	TRACED_CTL_ERROR = 1,		/* the command failed */
	TRACED_CTL_USAGE = 2,		/* unknown command or bad arguments */
	TRACED_CTL_DENIED = 3,		/* not allowed for this peer */
};

struct traced_msg_ctl_end {
	struct traced_msg_hdr hdr;
	uint32_t	status;		/* enum traced_ctl_status */
	uint32_t	count;		/* CTL_LINE messages sent before */
};

_Static_assert(sizeof(struct traced_msg_hdr) == 8, "wire");
_Static_assert(sizeof(struct traced_msg_hello) == 40, "wire");
_Static_assert(sizeof(struct traced_msg_provider) == 88, "wire");
_Static_assert(sizeof(struct traced_msg_provider_ack) == 16, "wire");
_Static_assert(sizeof(struct traced_msg_ring) == 24, "wire");
_Static_assert(sizeof(struct traced_msg_rules) == 24, "wire");
_Static_assert(sizeof(struct traced_msg_rules_ack) == 16, "wire");
_Static_assert(sizeof(struct traced_msg_notify) == 16, "wire");
_Static_assert(sizeof(struct traced_msg_welcome) == 32, "wire");
_Static_assert(sizeof(struct traced_msg_module) == 80, "wire");
_Static_assert(sizeof(struct traced_msg_funcs) == 32, "wire");
_Static_assert(sizeof(struct traced_msg_tracer) == 48, "wire");
_Static_assert(sizeof(struct traced_msg_func_stats) == 48, "wire");
_Static_assert(sizeof(struct traced_msg_func_apply) == 24, "wire");
_Static_assert(sizeof(struct traced_msg_ctl_request) == 24, "wire");
_Static_assert(sizeof(struct traced_msg_ctl_end) == 16, "wire");
_Static_assert(sizeof(struct traced_msg_spare) == 16, "wire");
_Static_assert(sizeof(struct traced_msg_exit) == 16, "wire");

/*
 * A received message, validated.  Points into the caller's buffer.
 */
struct wire_msg {
	uint32_t	type;
	union {
		const struct traced_msg_hello		*hello;
		const struct traced_msg_provider	*provider;
		const struct traced_msg_provider_ack	*provider_ack;
		const struct traced_msg_ring		*ring;
		const struct traced_msg_notify		*notify;
		const struct traced_msg_rules		*rules;
		const struct traced_msg_rules_ack	*rules_ack;
		const struct traced_msg_welcome		*welcome;
		const struct traced_msg_module		*module;
		const struct traced_msg_funcs		*funcs;
		const struct traced_msg_tracer		*tracer;
		const struct traced_msg_func_stats	*func_stats;
		const struct traced_msg_func_apply	*func_apply;
		const struct traced_msg_ctl_request	*ctl_request;
		const struct traced_msg_ctl_end		*ctl_end;
		const struct traced_msg_spare		*spare;
		const struct traced_msg_exit		*exit_;
		const struct traced_msg_hdr		*hdr;
	} u;
	const char	*payload;	/* trailing bytes, if the type has them */
	size_t		 payload_len;
	const char	*argv[TRACED_CTL_ARGS_MAX]; /* CTL_REQUEST: into buf */
};

/*
 * Validate the 'len' bytes received in 'buf' (aligned to 8), which came
 * with 'nfds' descriptors, and describe them in *m.  Checks the type,
 * the exact size for the type, the protocol version, that the type
 * carries a descriptor exactly when it has one, NUL-termination of
 * strings and the ranges of every field.  Returns 0, or a negative
 * errno (-EBADMSG, -EPROTO for a version mismatch) with 'why' set to a
 * static string saying what was wrong.
 */
int	wire_decode(const void *buf, size_t len, int nfds, struct wire_msg *m,
	    const char **why);

/* One provider's table of a RULES memfd, as wire_rules_parse() found it. */
struct wire_rules_table {
	uint32_t	 index;		/* the client's provider number */
	uint32_t	 nevents;
	const uint8_t	*dec;		/* nevents little-endian uint16, each
					   checked <= nrules */
};

/*
 * Validate the 'size' bytes of a RULES memfd announcing 'nrules' rules
 * (layout at struct traced_msg_rules), calling rule_cb for each rule and
 * table_cb for each table, in order; a callback returning -1 stops it.
 * Checks every flag, pattern, padding byte, count and rule number, and
 * that the tables come by increasing provider number (so no provider
 * has two).  Returns 0, or -1 with 'why' set to
 * a static string.  Work and memory: linear in size, none allocated.
 */
int	wire_rules_parse(const void *buf, size_t size, uint32_t nrules,
	    int (*rule_cb)(void *, unsigned, const char *),
	    int (*table_cb)(void *, const struct wire_rules_table *),
	    void *arg, const char **why);

/* The decision for event 'i' of a table: 0, or rule number + 1. */
static inline unsigned
wire_rules_dec(const struct wire_rules_table *t, uint32_t i)
{
	return (unsigned)t->dec[2 * (size_t)i] |
	    (unsigned)t->dec[2 * (size_t)i + 1] << 8;
}

/* How many descriptors a message of this type carries (0 if unknown). */
int	wire_type_nfds(uint32_t type);

/* Fill a header. */
void	wire_hdr_init(struct traced_msg_hdr *h, uint32_t type, uint32_t size);

/*
 * Encode a control request for argv[0..argc) into buf.  Returns the
 * message size, or -1 if it does not fit in 'size' or TRACED_MSG_MAX.
 */
int	wire_ctl_request_encode(void *buf, size_t size, uint32_t flags,
	    int argc, char *const argv[]);

#endif /* TRACED_PROTO_WIRE_H */
