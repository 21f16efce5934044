#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The traced authors
#
# The generated code compiles wherever a C or C++ program does: trace.h
# for events of every argument kind and every special form (vcpu, no
# format, two formats, arguments named like C++ keywords or macros),
# included by a caller that calls each, as GNU C and strict ISO C
# (-std=gnu11, c99, c11, c17) and C++ (-std=c++11, 14, 17, 20), with
# gcc and clang, under -Wall -Wextra -Wshadow -Werror; for the backends
# traced,log,dtrace together and each alone.  trace.c compiles as C in
# every mode (gcc).  A strict-C build links and runs (the clock it uses there
# is the library's).  And the #line directives: a caller's wrong
# argument and a format that does not match its argument are reported
# at the trace-events line.
#
# Environment: O = the build directory (absolute).

set -u
export LC_ALL=C

SRC=$(cd "$(dirname "$0")/../.." && pwd)
O=${O:-$SRC/build}
TRACEGEN=$O/bin/tracegen

fail() {
	echo "FAIL: 012-tracegen-strict: $*" >&2
	exit 1
}

[ -x "$TRACEGEN" ] || fail "$TRACEGEN not built"
command -v gcc > /dev/null && command -v g++ > /dev/null ||
    fail "gcc and g++ are needed (build-essential)"
[ -f /usr/include/x86_64-linux-gnu/sys/sdt.h ] ||
    [ -f /usr/include/sys/sdt.h ] ||
    { echo "SKIP: <sys/sdt.h> missing (apt-get install systemtap-sdt-dev)"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/traced-012.XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

INC="-I$SRC/client-lib/include -I$O/include"
WARN="-Wall -Wextra -Wshadow -Werror"

cat > "$tmp/trace-events" <<'EOF'
# Every kind of argument and QEMU's special forms.
ints(int8_t a, uint8_t b, int16_t c, uint16_t d, int32_t e, uint32_t f, int64_t g, uint64_t h, int i, unsigned j) "%d %u %d %u %" PRId32 " %" PRIu32 " %" PRId64 " %" PRIu64 " %d %u"
more(long a, unsigned long b, long long c, unsigned long long d, short e, signed char f, char g, bool h, _Bool i, size_t j) "%ld %lu %lld %llu %hd %hhd %c %d %d %zu"
typedefs(ssize_t a, ptrdiff_t b, uintptr_t c, intptr_t d, intmax_t e, uintmax_t f, off_t g, pid_t h, uid_t i, uint_fast16_t j) "%zd %td %" PRIuPTR " %" PRIdPTR " %jd %ju %jd %d %u %" PRIuFAST16
ptrs(void *a, const void *b, const uint8_t *c, char **d, bool *e) "%p %p %p %p %p"
strs(const char *s, char *t, char const *u) "%s %s %s"
vcpu guest_cpu_enter(void)
vcpu guest_syscall(uint64_t num) "num=0x%016"PRIx64
noformat(int x)
twofmt(uint64_t vaddr, uint16_t info) "info=%d", "vaddr=0x%016"PRIx64" info=%d"
names(int64_t old, int64_t new, int typename, int export, int NULL, int linux, int class) "%"PRId64" %"PRId64" %d %d %d %d %d"
disable off(int x) "%d"
EOF

cat > "$tmp/caller.c" <<'EOF'
#include "trace.h"
int caller(void);
int
caller(void)
{
	static char buf[4] = "abc";
	char *pb = buf;
	bool flag = true;
	int n = 0;

	trace_ints(-1, 2, -3, 4, -5, 6, -7, 8, -9, 10u);
	trace_more(-1L, 2UL, -3LL, 4ULL, 5, 6, 'c', true, 0, sizeof(buf));
	trace_typedefs(-1, 2, 3, -4, -5, 6, -7, 8, 9, 10);
	trace_ptrs(buf, buf, (const uint8_t *)buf, &pb, &flag);
	trace_strs("s", buf, "u");
	trace_guest_cpu_enter(&n);
	trace_guest_syscall(&n, 42);
	trace_noformat(1);
	trace_twofmt(0x1000, 3);
	trace_names(1, 2, 3, 4, 5, 6, 7);
	trace_off(1);
	n += trace_ints_enabled() + trace_off_enabled() +
	    trace_guest_cpu_enter_enabled();
	return n;
}
EOF
printf 'int caller(void);\nint\nmain(void)\n{\n\treturn caller() < 0;\n}\n' \
    > "$tmp/main.c"
cp "$tmp/caller.c" "$tmp/caller.cc"

# gen BACKENDS: trace.h and trace.c for BACKENDS in $tmp/BACKENDS/.
gen() {
	mkdir -p "$tmp/$1"
	"$TRACEGEN" --backends "$1" --provider strict --header \
	    -o "$tmp/$1/trace.h" "$tmp/trace-events" ||
	    fail "tracegen --backends $1 --header"
	"$TRACEGEN" --backends "$1" --provider strict --source \
	    -o "$tmp/$1/trace.c" "$tmp/trace-events" ||
	    fail "tracegen --backends $1 --source"
}

count=0
# cc COMPILER STD BACKENDS FILE: compile without a single warning.
cc_ok() {
	# shellcheck disable=SC2086
	"$1" -std="$2" $WARN -O2 $INC -I"$tmp/$3" -c -o "$tmp/out.o" "$4" \
	    > "$tmp/cc.out" 2>&1 ||
	    { head -20 "$tmp/cc.out" >&2; fail "$1 -std=$2 ($3): $4"; }
	[ -s "$tmp/cc.out" ] &&
	    { head -20 "$tmp/cc.out" >&2; fail "$1 -std=$2 ($3) warns"; }
	count=$((count + 1))
}

# All modes for the backends together, the strictest ones for each
# alone (which only leaves code out).
for be in traced,log,dtrace traced log dtrace nop; do
	gen "$be"
	if [ "$be" = traced,log,dtrace ]; then
		cstds="gnu11 c99 c11 c17" xstds="c++11 c++14 c++17 c++20"
		ccs="gcc clang" cxxs="g++ clang++"
	else
		cstds=c99 xstds=c++11 ccs="gcc clang" cxxs=clang++
	fi
	for cc in $ccs; do
		command -v $cc > /dev/null || continue
		for std in $cstds; do
			cc_ok $cc "$std" "$be" "$tmp/caller.c"
			[ $cc = gcc ] && cc_ok $cc "$std" "$be" \
			    "$tmp/$be/trace.c"
		done
	done
	for cxx in $cxxs; do
		command -v $cxx > /dev/null || continue
		for std in $xstds; do
			cc_ok $cxx "$std" "$be" "$tmp/caller.cc"
		done
	done
done

# Strict C links and runs against libtraced (no daemon: events off).
# Under SANITIZE=1 the library needs the sanitizer runtime too.
be=traced,log,dtrace
san=
[ "${SANITIZE:-}" = 1 ] && san="-fsanitize=address,undefined"
[ "${SANITIZE:-}" = thread ] && san="-fsanitize=thread"
# shellcheck disable=SC2086
gcc -std=c11 $WARN -O2 $san $INC -I"$tmp/$be" -o "$tmp/prog" "$tmp/main.c" \
    "$tmp/caller.c" "$tmp/$be/trace.c" -L"$O/lib" -ltraced \
    -Wl,-rpath,"$O/lib" > "$tmp/cc.out" 2>&1 ||
    { cat "$tmp/cc.out" >&2; fail "link -std=c11"; }
TRACED_RUNTIME_DIR="$tmp/nodaemon" "$tmp/prog" > "$tmp/run.out" 2>&1 ||
    { cat "$tmp/run.out" >&2; fail "the -std=c11 program failed"; }
[ -s "$tmp/run.out" ] && { cat "$tmp/run.out" >&2; fail "it printed"; }

# #line: the compiler points at the trace-events line.
cat > "$tmp/bad-events" <<'EOF'
# line 1

fmt_mismatch(int x, const char *s) "x=%s s=%s"
takes_int(int x) "%d"
EOF
"$TRACEGEN" --backends traced,log --header -o "$tmp/bad.h" \
    "$tmp/bad-events" || fail "tracegen bad-events"
printf '#include "bad.h"\nstruct s { int a; };\nvoid f(struct s v);\nvoid\nf(struct s v)\n{\n\ttrace_takes_int(v);\n}\n' \
    > "$tmp/bad.c"
# shellcheck disable=SC2086
gcc -std=gnu11 -Wall $INC -I"$tmp" -c -o "$tmp/bad.o" "$tmp/bad.c" \
    > "$tmp/bad.out" 2>&1 && fail "a struct passed as an int compiled"
grep -q "bad-events:3:[0-9]*: warning: format '%s' expects argument of type 'char \*', but argument 2 has type 'int'" \
    "$tmp/bad.out" || { cat "$tmp/bad.out" >&2;
    fail "the format warning is not at bad-events:3"; }
grep -q "bad-events:4:[0-9]*: note: expected 'int' but argument is of type 'struct s'" \
    "$tmp/bad.out" || { cat "$tmp/bad.out" >&2;
    fail "the declaration is not at bad-events:4"; }
grep -q "bad.c:7:[0-9]*: error: incompatible type for argument 1 of 'trace_takes_int'" \
    "$tmp/bad.out" || { cat "$tmp/bad.out" >&2;
    fail "the caller's error is not at bad.c:7"; }

echo "PASS: 012-tracegen-strict: $count compilations without a warning" \
    "(gcc, clang; C99 to C17, C++11 to C++20; 5 backend sets)," \
    "a strict-C program runs, errors point at trace-events lines"
