/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Function tables: how libtraced describes the instrumented functions
 * of one loaded object to the daemon (the FUNCS message, proto/wire.h),
 * and how the daemon keeps them, with the object's mapping, in a
 * session directory so that tracectl can name addresses offline after
 * the program is gone or rebuilt.
 *
 * A table is text, one function per line, in state order (the order of
 * the state bytes), with strictly increasing start offsets:
 *
 *     <start> <size> <kind> <name>\n
 *
 *   start  hex offset of the function's first byte from the object's
 *          load base, without 0x
 *   size   decimal bytes (0: unknown)
 *   kind   'p' -fpatchable-function-entry site, 'm' -mnop-mcount site,
 *          'i' -finstrument-functions (no site)
 *   name   its symbol, 1 to FUNCTAB_NAME_MAX bytes of printable ASCII
 *          other than space
 *
 * A session directory keeps one file per object, functions/module-<N>:
 * a header of "key value" lines (traced-module 1, index, path, base,
 * start, end, build-id, funcs), then the table.  See
 * functab_module_format().
 *
 * Also here: the per-function statistics the process writes into its
 * state memfd and the daemon reads (struct traced_func_stat).
 *
 * Proto: pure functions, no I/O; the parsers take their input as
 * hostile.  Any thread, one object at a time.
 */
#ifndef TRACED_PROTO_FUNCTAB_H
#define TRACED_PROTO_FUNCTAB_H

#include <stddef.h>
#include <stdint.h>

#define FUNCTAB_NAME_MAX	1023
#define FUNCTAB_LINE_MAX	(FUNCTAB_NAME_MAX + 48)

#define FUNCTAB_KIND_PATCHABLE	'p'
#define FUNCTAB_KIND_MCOUNT	'm'
#define FUNCTAB_KIND_INSTRUMENT	'i'

/* traced_func_stat.status, written by the process. */
#define TRACED_FUNC_PATCHED	0x1u	/* its site is a call now */
#define TRACED_FUNC_REFUSED	0x2u	/* it could not be patched safely */

#define TRACED_FUNC_BUCKETS	64

/*
 * Per function, in the process's state memfd after the state bytes:
 * what the process did with it and, while the 'latency' tracer runs,
 * its durations (clock ticks, entry to exit).  Counters only grow; the
 * process updates them with relaxed atomics, the daemon reads them as
 * they are (a reading may mix two updates).
 */
struct traced_func_stat {
	uint32_t	status;		/* TRACED_FUNC_* */
	uint32_t	pad;
	uint64_t	calls;
	uint64_t	sum;		/* ticks */
	uint64_t	max;		/* ticks */
	uint32_t	buckets[TRACED_FUNC_BUCKETS]; /* [i]: calls that took
					   [2^i, 2^(i+1)) ticks; [0]: < 2 */
};

#define TRACED_FUNC_STAT_SIZE	288u
_Static_assert(sizeof(struct traced_func_stat) == TRACED_FUNC_STAT_SIZE,
    "traced_func_stat layout is shared with the daemon");

struct functab_entry {
	uint64_t	 start;		/* offset from the load base */
	uint64_t	 size;
	char		 kind;		/* FUNCTAB_KIND_* */
	const char	*name;		/* into functab.text */
};

struct functab {
	struct functab_entry *e;	/* owned */
	size_t		 n;
	char		*text;		/* owned: the names */
};

/* One object of a session, as functions/module-<N> says. */
struct functab_module {
	uint32_t	 index;
	char		*path;		/* owned */
	uint64_t	 base;
	uint64_t	 start;
	uint64_t	 end;
	uint8_t		 build_id[32];
	uint32_t	 build_id_len;
	struct functab	 tab;
};

/* Is 'name' acceptable in a table?  1 or 0. */
int	functab_name_ok(const char *name);

/*
 * Write one table line (newline included) into buf, NUL-terminated.
 * Returns its length, or -1 if the name is not acceptable or it does
 * not fit.
 */
int	functab_format_line(char *buf, size_t size, uint64_t start,
	    uint64_t fsize, char kind, const char *name);

/*
 * Parse 'len' bytes of table text.  On success fill *out (free it with
 * functab_free()) and return 0; otherwise return -1 with "line N: what
 * is wrong" in err.  At most 'max' entries are accepted.
 */
int	functab_parse(const char *text, size_t len, size_t max,
	    struct functab *out, char *err, size_t errlen);

void	functab_free(struct functab *t);

/*
 * The entry whose [start, start + size) holds 'off' (an entry of size 0
 * holds only its start), or NULL.
 */
const struct functab_entry *functab_lookup(const struct functab *t,
	    uint64_t off);

/*
 * The header of functions/module-<N> into buf (NUL-terminated); the
 * table follows it in the file.  Returns its length as snprintf does.
 */
int	functab_module_format(char *buf, size_t size, uint32_t index,
	    const char *path, uint64_t base, uint64_t start, uint64_t end,
	    const uint8_t *build_id, uint32_t build_id_len, size_t nfuncs);

/*
 * Parse a whole functions/module-<N> file.  0 and *out filled (free it
 * with functab_module_free()), or -1 with the reason in err.
 */
int	functab_module_parse(const char *text, size_t len,
	    struct functab_module *out, char *err, size_t errlen);

void	functab_module_free(struct functab_module *m);

#endif /* TRACED_PROTO_FUNCTAB_H */
