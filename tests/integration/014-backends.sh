#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The traced authors
#
# tracegen's backends, in a program built with --backends
# traced,log,dtrace: with a daemon running and one event turned off by
# a rule, the same events with the same values reach the trace
# (babeltrace2) and stderr (the log backend's lines), in the same order
# on the same thread, and neither has the event the rule turned off or
# the one 'disable' keeps off; readelf -n lists exactly one stapsdt
# note per event, named provider:event.  The same program built with
# --backends nop, and with dtrace alone, links without libtraced, has
# no reference to it, and prints nothing.
#
# Environment: O = the build directory (absolute); SANITIZE=1 when it
# is an ASan build (the program links the sanitizer runtime too).

. "$(dirname "$0")/lib.sh"
export LC_ALL=C

[ -f /usr/include/x86_64-linux-gnu/sys/sdt.h ] ||
    [ -f /usr/include/sys/sdt.h ] ||
    skip "<sys/sdt.h> missing (apt-get install systemtap-sdt-dev)"
command -v readelf >/dev/null || skip "readelf missing (binutils)"

mkdir "$T/be"
cat > "$T/be/trace-events" <<'EOF'
be_start(int n, const char *name) "start n=%d name=%s"
be_item(uint64_t seq, int64_t neg, bool even, void *ptr, const char *label) "seq=%" PRIu64 " neg=%" PRId64 " even=%d ptr=%p label=%s"
be_quiet(uint64_t seq) "quiet %" PRIu64
disable be_hidden(uint64_t seq) "hidden %" PRIu64
be_done(void)
EOF
cat > "$T/be/prog.c" <<'EOF'
#include <stdio.h>
#include "trace.h"
#define N 100
int
main(void)
{
	char label[32];
	unsigned long i;

	trace_be_start(N, "backends");
	for (i = 0; i < N; i++) {
		snprintf(label, sizeof(label), "item%lu", i);
		trace_be_item(i, -(long)i * 3, i % 2 == 0,
		    (void *)(0x5000ul + i), label);
		trace_be_quiet(i);
		trace_be_hidden(i);
	}
	trace_be_done();
	return 0;
}
EOF
san=
[ "${SANITIZE:-}" = 1 ] && san="-fsanitize=address,undefined"
[ "${SANITIZE:-}" = thread ] && san="-fsanitize=thread"
CFLAGS_T="-std=gnu11 -Wall -Wextra -Werror -O2 $san -I$SRC/client-lib/include -I$O/include"

# build DIR BACKENDS [LIBS]: $T/DIR/prog from prog.c and the generated code.
build() {
	mkdir -p "$T/$1"
	"$BIN/tracegen" --backends "$2" --provider be --header \
	    -o "$T/$1/trace.h" "$T/be/trace-events" || fail "tracegen $2"
	"$BIN/tracegen" --backends "$2" --provider be --source \
	    -o "$T/$1/trace.c" "$T/be/trace-events" || fail "tracegen $2"
	# shellcheck disable=SC2086
	cc $CFLAGS_T -I"$T/$1" -o "$T/$1/prog" "$T/be/prog.c" \
	    "$T/$1/trace.c" ${3:-} > "$T/$1/cc.out" 2>&1 ||
	    fail "building with --backends $2: $(cat "$T/$1/cc.out")"
}

build all traced,log,dtrace "-L$O/lib -ltraced -Wl,-rpath,$O/lib"
ok "built with --backends traced,log,dtrace"

# One stapsdt note per event, provider be, named after the event.
readelf -n "$T/all/prog" > "$T/notes" || fail "readelf -n"
sed -n 's/^ *Provider: *//p' "$T/notes" | sort -u > "$T/providers"
[ "$(cat "$T/providers")" = be ] ||
    fail "providers in the notes: $(cat "$T/providers")"
sed -n 's/^ *Name: *//p' "$T/notes" | sort > "$T/names"
printf 'be_done\nbe_hidden\nbe_item\nbe_quiet\nbe_start\n' > "$T/want"
cmp -s "$T/names" "$T/want" ||
    fail "stapsdt notes: $(tr '\n' ' ' < "$T/names"), want one per event"
[ "$(grep -c 'NT_STAPSDT' "$T/notes")" = 5 ] || fail "not 5 stapsdt notes"
ok "readelf -n: one stapsdt note per event (be:be_start ... be:be_done)"

start_daemon
ctl trace-event be_quiet off > /dev/null || fail "trace-event be_quiet off"
"$T/all/prog" 2> "$T/stderr" || fail "the program exited with $?"
ctl trace-file flush > /dev/null || fail "flush"
bt "$TRACES" > "$T/bt" 2> "$T/bt.err" || fail "babeltrace2: $(cat "$T/bt.err")"

# What both must show, as NAME k=v ...: the program's own values.
awk 'BEGIN {
	print "be_start n=100 name=backends"
	for (i = 0; i < 100; i++)
		printf "be_item seq=%d neg=%d even=%d ptr=0x%x label=item%d\n",
		    i, -3 * i, i % 2 == 0, 20480 + i, i
	print "be_done"
}' > "$T/expect"

# stderr: "TID@S.US:NAME FORMATTED"; one thread.
sed -n 's/^\([0-9]*\)@[0-9]*\.[0-9]\{6\}:\(be_.*\)$/\1 \2/p' "$T/stderr" \
    > "$T/log.tid"
[ "$(wc -l < "$T/log.tid")" = "$(wc -l < "$T/stderr")" ] ||
    fail "stderr has lines that are not events: $(head -5 "$T/stderr")"
cut -d' ' -f2- "$T/log.tid" | sed 's/^be_start start /be_start /' \
    > "$T/log"
cmp -s "$T/log" "$T/expect" || { diff "$T/expect" "$T/log" | head >&2;
    fail "stderr does not have the events"; }
ok "stderr: $(wc -l < "$T/log") event lines, values and order right"

# The trace, in the same form.
awk '/ be:be_/ {
	match($0, /be:be_[a-z]*/); name = substr($0, RSTART + 3, RLENGTH - 3)
	match($0, /tid = [0-9]+/); tid = substr($0, RSTART + 6, RLENGTH - 6)
	rest = ""
	if (match($0, /}, \{ .* }$/)) {
		f = substr($0, RSTART + 5, RLENGTH - 7)
		gsub(/ = /, "=", f); gsub(/, /, " ", f); gsub(/"/, "", f)
		rest = " " f
	}
	print tid " " name rest
}' "$T/bt" | sed 's/ptr=0x\([0-9A-F]*\)/ptr=0x\L\1/' > "$T/trace.tid"
cut -d' ' -f2- "$T/trace.tid" > "$T/trace"
cmp -s "$T/trace" "$T/expect" || { diff "$T/expect" "$T/trace" | head >&2;
    fail "the trace does not have the events"; }
[ "$(cut -d' ' -f1 "$T/trace.tid" | sort -u)" = \
    "$(cut -d' ' -f1 "$T/log.tid" | sort -u)" ] ||
    fail "the trace and stderr name different threads"
ok "the trace: the same $(wc -l < "$T/trace") events as stderr, same thread"
stop_daemon

# nop, and dtrace alone: no libtraced at all.
for be in nop dtrace; do
	build "$be" "$be"
	readelf -d "$T/$be/prog" | grep -q 'NEEDED.*libtraced' &&
	    fail "--backends $be: the program needs libtraced"
	nm -u "$T/$be/prog" | grep -q 'traced_' &&
	    fail "--backends $be: undefined traced_ symbols: $(nm -u "$T/$be/prog" | grep traced_)"
	grep -q 'traced\.h\|traced_provider' "$T/$be/trace.c" "$T/$be/trace.h" &&
	    fail "--backends $be: the generated code uses libtraced"
	"$T/$be/prog" > "$T/$be/out" 2>&1 || fail "--backends $be: exit $?"
	[ -s "$T/$be/out" ] && fail "--backends $be printed: $(cat "$T/$be/out")"
done
readelf -n "$T/nop/prog" | grep -q stapsdt && fail "nop has probes"
[ "$(readelf -n "$T/dtrace/prog" | grep -c NT_STAPSDT)" = 5 ] ||
    fail "dtrace alone: not 5 probes"
ok "--backends nop and dtrace: linked without -ltraced, no reference, silent"
echo "PASS: 014-backends"
