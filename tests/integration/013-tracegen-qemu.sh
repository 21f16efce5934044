#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The traced authors
#
# QEMU's own trace-events, unchanged: downloads Debian's
# qemu-system-common (apt-get download), takes its
# /usr/share/qemu/trace-events-all (QEMU 7.2, every event of QEMU in one
# file), runs tracegen on it with --backends traced,log (so that the
# compiler checks every format against its arguments; 014 checks dtrace,
# whose <sys/sdt.h> takes seconds to expand 5,000 probes), compiles trace.c
# and a caller as C (-std=gnu11 and -std=c11) and the caller as C++
# (-std=c++17), all with -Wall -Wextra -Werror, links the C and the C++
# program and runs both: the events TRACED_EVENTS turns on print the
# right values, the others nothing.  Everything after the download in
# under 30 seconds of CPU (the wall time is printed too: on a machine
# shared with other work, it says more about the others).  Skips, with
# the reason, only when the download fails (no network, no apt).
#
# Environment: O = the build directory (absolute).

set -u
export LC_ALL=C

SRC=$(cd "$(dirname "$0")/../.." && pwd)
O=${O:-$SRC/build}
TRACEGEN=$O/bin/tracegen
LIMIT=30

fail() {
	echo "FAIL: 013-tracegen-qemu: $*" >&2
	exit 1
}

[ -x "$TRACEGEN" ] || fail "$TRACEGEN not built"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/traced-013.XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

command -v apt-get > /dev/null ||
    { echo "SKIP: no apt-get to download qemu-system-common"; exit 77; }
(cd "$tmp" && apt-get download -q qemu-system-common) > "$tmp/apt.out" 2>&1 ||
    { echo "SKIP: apt-get download qemu-system-common failed:" \
    "$(grep -v '^W:' "$tmp/apt.out" | tail -n 1)"; exit 77; }
deb=$(ls "$tmp"/qemu-system-common_*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || fail "apt-get download left no .deb"
dpkg-deb --fsys-tarfile "$deb" |
    tar -xO ./usr/share/qemu/trace-events-all > "$tmp/trace-events-all" ||
    fail "no /usr/share/qemu/trace-events-all in $(basename "$deb")"
version=$(dpkg-deb -f "$deb" Version)

start=$(date +%s)
TE=$tmp/trace-events-all
n=$(grep -cv '^[[:space:]]*\(#.*\)\{0,1\}$' "$TE")
[ "$n" -gt 5000 ] || fail "only $n events in trace-events-all"

"$TRACEGEN" --backends traced,log --provider qemu --header \
    -o "$tmp/trace.h" "$TE" 2> "$tmp/gen.err" ||
    fail "tracegen --header: $(cat "$tmp/gen.err")"
"$TRACEGEN" --backends traced,log --provider qemu --source \
    -o "$tmp/trace.c" "$TE" 2> "$tmp/gen.err" ||
    fail "tracegen --source: $(cat "$tmp/gen.err")"
grep -q "^	\.nevents = $n,$" "$tmp/trace.c" ||
    fail "trace.c does not have the file's $n events"
[ "$(grep -c '^#define TRACE_.*_ID ' "$tmp/trace.h")" -eq "$n" ] ||
    fail "trace.h does not define $n events"

# QEMU's calls: a vcpu event without a format, one with 9 arguments, an
# argument named 'new', strings.
cat > "$tmp/caller.c" <<'EOF'
#include "trace.h"
#ifdef __cplusplus
extern "C"
#endif
int caller(void);
int
caller(void)
{
	static int cpu;

	trace_guest_cpu_enter(&cpu);
	trace_guest_user_syscall(&cpu, 0x3c, 1, 2, 3, 4, 5, 6, 7, 8);
	trace_poll_shrink(&cpu, 64, 32);
	trace_qemu_vfio_region_info("bar0", 0x1000, 0x4000, 7);
	trace_runstate_set(1, "prelaunch", 9, "running");
	trace_qemu_system_shutdown_request(3);
	return trace_poll_shrink_enabled() + trace_runstate_set_enabled();
}
EOF
printf '#include <stdio.h>\nint caller(void);\nint\nmain(void)\n{\n\tprintf("%%d\\n", caller());\n\treturn 0;\n}\n' \
    > "$tmp/main.c"
cp "$tmp/caller.c" "$tmp/caller.cc"

INC="-I$SRC/client-lib/include -I$O/include -I$tmp"
WARN="-Wall -Wextra -Werror"
# Under SANITIZE=1 the library needs the sanitizer runtime too.
san=
[ "${SANITIZE:-}" = 1 ] && san="-fsanitize=address,undefined"
[ "${SANITIZE:-}" = thread ] && san="-fsanitize=thread"
# build WHAT COMMAND...: run a compiler, which must not say a word.
build() {
	what=$1
	shift
	"$@" > "$tmp/cc.out" 2>&1 || { head -30 "$tmp/cc.out" >&2;
	    fail "$what"; }
	[ -s "$tmp/cc.out" ] && { head -30 "$tmp/cc.out" >&2;
	    fail "$what: warnings"; }
}
# shellcheck disable=SC2086
{
build "trace.c as C (-std=gnu11)" cc -std=gnu11 $WARN -O1 $INC -c \
    -o "$tmp/trace.o" "$tmp/trace.c"
build "trace.c as C (-std=c11)" cc -std=c11 $WARN -O1 $INC -c \
    -o "$tmp/trace11.o" "$tmp/trace.c"
build "the caller as C (-std=gnu11)" cc -std=gnu11 $WARN -O1 $INC -c \
    -o "$tmp/caller.o" "$tmp/caller.c"
build "the caller as C (-std=c11)" cc -std=c11 $WARN -O1 $INC -c \
    -o "$tmp/caller11.o" "$tmp/caller.c"
build "the caller as C++ (-std=c++17)" c++ -std=c++17 $WARN -O1 $INC -c \
    -o "$tmp/callerxx.o" "$tmp/caller.cc"
build "linking the C program" cc -std=gnu11 $san -o "$tmp/prog" "$tmp/main.c" \
    "$tmp/caller11.o" "$tmp/trace11.o" -L"$O/lib" -ltraced \
    -Wl,-rpath,"$O/lib"
build "linking the C++ program" c++ $san -o "$tmp/progxx" "$tmp/callerxx.o" \
    "$tmp/trace.o" -x c "$tmp/main.c" -L"$O/lib" -ltraced \
    -Wl,-rpath,"$O/lib"
}

# No daemon: only what TRACED_EVENTS turns on prints (log backend).
for p in prog progxx; do
	TRACED_RUNTIME_DIR="$tmp/nodaemon" \
	    TRACED_EVENTS='guest_*,poll_shrink,qemu:runstate_set' \
	    "$tmp/$p" > "$tmp/$p.out" 2> "$tmp/$p.err" ||
	    fail "$p exited with $?: $(head -5 "$tmp/$p.err")"
	sed 's/^[0-9]*@[0-9]*\.[0-9]*://; s/0x[0-9a-f]*/PTR/' \
	    "$tmp/$p.err" > "$tmp/$p.got"
	cat > "$tmp/want" <<'EOF'
guest_cpu_enter cpu=PTR
guest_user_syscall cpu=PTR num=0x000000000000003c arg1=0x0000000000000001 arg2=0x0000000000000002 arg3=0x0000000000000003 arg4=0x0000000000000004 arg5=0x0000000000000005 arg6=0x0000000000000006 arg7=0x0000000000000007 arg8=0x0000000000000008
poll_shrink ctx PTR old 64 new 32
runstate_set current_run_state 1 (prelaunch) new_state 9 (running)
EOF
	cmp -s "$tmp/want" "$tmp/$p.got" || { diff "$tmp/want" \
	    "$tmp/$p.got" >&2; fail "$p: what the log backend printed"; }
	[ "$(cat "$tmp/$p.out")" = 2 ] || fail "$p: the _enabled() tests"
done

elapsed=$(($(date +%s) - start))
# CPU seconds of the children (tracegen, compilers, programs): the
# second line of 'times', "XmY.YYs XmZ.ZZs".
times > "$tmp/times"	# in this shell: $(times) would time a subshell
cpu=$(sed -n 2p "$tmp/times" | awk '{
	for (i = 1; i <= 2; i++) {
		split($i, t, "m"); sub("s", "", t[2]); s += t[1] * 60 + t[2]
	}
	printf "%d", s + 0.5 }')
[ "$cpu" -lt "$LIMIT" ] || fail "took ${cpu}s of CPU, more than ${LIMIT}s"
echo "PASS: 013-tracegen-qemu: QEMU $version trace-events-all, $n events," \
    "unchanged: generated, compiled (C gnu11, c11; C++17; -Werror)," \
    "linked and run in ${cpu}s of CPU (${elapsed}s of wall time)"
