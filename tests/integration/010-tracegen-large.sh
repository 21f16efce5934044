#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The traced authors
#
# tracegen on a large file: 5,000 events of mixed types (every integer
# width, signed and unsigned, bool, size_t, pointers, strings, PRIx64
# formats, some disabled, 0 to 8 arguments).  The generated trace.h and
# trace.c, and a caller of a few events, must compile with no warning
# at all under a strict warning set, and the whole run must take less
# than 30 seconds.  The header is also compiled as C++ when the
# installed traced.h itself can be.  Compile only: libtraced need not
# be built.
#
# Environment: O = the build directory (absolute); tracegen in $O/bin.

set -u

SRC=$(cd "$(dirname "$0")/../.." && pwd)
O=${O:-$SRC/build}
TRACEGEN=$O/bin/tracegen
CC=${CC:-cc}
CXX=${CXX:-c++}
NEVENTS=5000
LIMIT=30

fail() {
	echo "FAIL: 010-tracegen-large: $*" >&2
	exit 1
}

[ -x "$TRACEGEN" ] || fail "$TRACEGEN not built"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/traced-010.XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# traced.h includes <traced/ring.h>, which the build copies into
# $O/include; make our own copy if this build has not done it yet.
INC="-I$SRC/client-lib/include -I$O/include"
if [ ! -f "$O/include/traced/ring.h" ]; then
	mkdir -p "$tmp/include/traced"
	cp "$SRC/proto/ring.h" "$tmp/include/traced/ring.h"
	INC="$INC -I$tmp/include"
fi
WARN="-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
-Wcast-align -Wundef -Wpointer-arith -Wwrite-strings -Werror"

# Type number -> C type, format piece, value to pass from the caller.
NTYPES=22
type_of() {
	case $1 in
	0) t='int8_t' f='"%" PRId8' v='-1' ;;
	1) t='uint8_t' f='"%" PRIu8' v='255' ;;
	2) t='int16_t' f='"%" PRId16' v='-2' ;;
	3) t='uint16_t' f='"0x%" PRIx16' v='2' ;;
	4) t='int32_t' f='"%" PRId32' v='-3' ;;
	5) t='uint32_t' f='"0x%" PRIx32' v='3' ;;
	6) t='int64_t' f='"%" PRId64' v='-4' ;;
	7) t='uint64_t' f='"0x%" PRIx64' v='UINT64_MAX' ;;
	8) t='int' f='"%d"' v='5' ;;
	9) t='unsigned' f='"%u"' v='6u' ;;
	10) t='long' f='"%ld"' v='-7L' ;;
	11) t='unsigned long long' f='"%llu"' v='8ULL' ;;
	12) t='short' f='"%hd"' v='9' ;;
	13) t='signed char' f='"%hhd"' v='10' ;;
	14) t='bool' f='"%d"' v='true' ;;
	15) t='size_t' f='"%zu"' v='sizeof(buf)' ;;
	16) t='ssize_t' f='"%zd"' v='-11' ;;
	17) t='void *' f='"%p"' v='p' ;;
	18) t='const char *' f='"%s"' v='"str"' ;;
	19) t='const uint8_t *' f='"%p"' v='(const uint8_t *)p' ;;
	20) t='char *' f='"%s"' v='buf' ;;
	21) t='off_t' f='"%jd"' v='-12' ;;
	esac
}

gen_events() {
	i=0
	while [ $i -lt $NEVENTS ]; do
		n=$((i % 9))
		args= fmt= call= j=0
		while [ $j -lt $n ]; do
			type_of $(((i * 7 + j * 3) % NTYPES))
			sep=${args:+, }
			args="$args$sep$t a$j"
			fmt="$fmt \" a$j=\" $f"
			call="$call$sep$v"
			j=$((j + 1))
		done
		[ $n -eq 0 ] && args=void
		prop=
		[ $((i % 10)) -eq 3 ] && prop='disable '
		echo "# event $i"
		echo "${prop}ev_$i($args) \"ev $i:\"$fmt"
		# Call one event in 250 from the caller.
		if [ $((i % 250)) -eq 0 ] || [ $i -eq $((NEVENTS - 1)) ]; then
			echo "	trace_ev_$i($call);" >> "$tmp/calls"
			echo "	if (trace_ev_${i}_enabled())" >> "$tmp/calls"
			echo "		n++;" >> "$tmp/calls"
		fi
		i=$((i + 1))
	done
}

start=$(date +%s)

: > "$tmp/calls"
gen_events > "$tmp/trace-events" || fail "cannot write trace-events"
count=$(grep -c '^[a-z]' "$tmp/trace-events")
[ "$count" -eq $NEVENTS ] || fail "generated $count events, not $NEVENTS"

{
	echo '#include <stdbool.h>'
	echo '#include <stdint.h>'
	echo '#include "trace.h"'
	echo 'int caller(void *p);'
	echo 'int'
	echo 'caller(void *p)'
	echo '{'
	echo '	char buf[8] = "buf";'
	echo '	int n = 0;'
	echo '	(void)p;'
	echo '	(void)buf;'
	echo
	cat "$tmp/calls"
	echo '	return n;'
	echo '}'
} > "$tmp/caller.c"

"$TRACEGEN" --header --provider large "$tmp/trace-events" > "$tmp/trace.h" \
    || fail "tracegen --header failed"
"$TRACEGEN" --source --provider large -o "$tmp/trace.c" "$tmp/trace-events" \
    || fail "tracegen --source failed"
[ "$(grep -c '^#define TRACE_EV_[0-9]*_ID ' "$tmp/trace.h")" -eq $NEVENTS ] \
    || fail "trace.h does not define $NEVENTS events"
grep -q "\.nevents = $NEVENTS," "$tmp/trace.c" || fail "trace.c nevents"
grep -q 'traced_state_large\[2 \* TRACED_STATE_PAGE\]' "$tmp/trace.c" \
    || fail "trace.c: state array is not 2 pages"

# shellcheck disable=SC2086
$CC -std=gnu11 $WARN -O2 $INC -c -o "$tmp/trace.o" "$tmp/trace.c" \
    > "$tmp/cc.out" 2>&1 || { cat "$tmp/cc.out" >&2; fail "trace.c"; }
[ -s "$tmp/cc.out" ] && { cat "$tmp/cc.out" >&2; fail "trace.c warns"; }
# shellcheck disable=SC2086
$CC -std=gnu11 $WARN -O2 $INC -I"$tmp" -c -o "$tmp/caller.o" \
    "$tmp/caller.c" > "$tmp/cc.out" 2>&1 \
    || { cat "$tmp/cc.out" >&2; fail "caller.c"; }
[ -s "$tmp/cc.out" ] && { cat "$tmp/cc.out" >&2; fail "caller.c warns"; }

end=$(date +%s)
elapsed=$((end - start))
[ $elapsed -lt $LIMIT ] || fail "took ${elapsed}s, limit ${LIMIT}s"

# C++: only if the runtime header itself compiles as C++.
cxx=skipped
if command -v "$CXX" > /dev/null 2>&1; then
	echo '#include <traced.h>' > "$tmp/probe.cc"
	# shellcheck disable=SC2086
	if $CXX $INC -c -o /dev/null "$tmp/probe.cc" > /dev/null 2>&1; then
		cp "$tmp/caller.c" "$tmp/caller.cc"
		# shellcheck disable=SC2086
		$CXX -Wall -Wextra -Wshadow -Werror -O2 $INC -I"$tmp" -c \
		    -o "$tmp/caller-cxx.o" "$tmp/caller.cc" \
		    > "$tmp/cxx.out" 2>&1 \
		    || { cat "$tmp/cxx.out" >&2; fail "trace.h as C++"; }
		cxx=ok
	else
		echo "note: traced.h does not compile as C++; C++ check" \
		    "skipped" >&2
	fi
fi

echo "PASS: 010-tracegen-large: $NEVENTS events generated and compiled" \
    "without warnings in ${elapsed}s (C++: $cxx)"
