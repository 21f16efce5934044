#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 29, point 1: an executable and a shared library, both built
# with tracegen --cflags-func, rules on both: every instrumented object
# is patched before main().  The library's table (2,000 functions) is
# longer for the daemon to parse than the executable's: main() once
# started after the first object's answer, and the library's first
# calls from main() were not traced.  Five short runs, each of whose
# calls are all in its trace: lib_first 1 + N times, lib_work once,
# exe_helper and main once; a long run's counts the same way.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ftlib.sh"

command -v cc >/dev/null 2>&1 || skip "no C compiler"
F=$("$BIN/tracegen" --cflags-func) || fail "tracegen --cflags-func"
LIBDIR="$O/lib"
# Under SANITIZE=1 the library needs the sanitizer runtime too.
san=
[ "${SANITIZE:-}" = 1 ] && san="-fsanitize=address,undefined"
[ "${SANITIZE:-}" = thread ] && san="-fsanitize=thread"
F="$F $san"
{
	echo 'int lib_first(int x) { return x + 1; }'
	i=0
	while [ $i -lt 2000 ]; do
		i=$((i + 1))
		echo "int lib_f$i(int x) { return x * $i; }"
	done
	echo 'int lib_work(int n) { int s = 0; for (int i = 0; i < n; i++) s += lib_first(i); return s; }'
} >"$T/libbig.c"
cat >"$T/main.c" <<'EOS'
#include <stdlib.h>
int lib_first(int x);
int lib_work(int n);
__attribute__((noinline)) static int exe_helper(int x) { return x * 2; }
int main(int argc, char **argv)
{
	int r = lib_first(1);

	r += lib_work(argc > 1 ? atoi(argv[1]) : 10);
	return exe_helper(r) != 0 ? 0 : 1;
}
EOS
# shellcheck disable=SC2086
cc -O1 -shared -fPIC $F -o "$T/libbig.so" "$T/libbig.c" \
	-Wl,--no-as-needed -L"$LIBDIR" -ltraced -Wl,-rpath,"$LIBDIR" ||
	fail "building libbig.so"
# shellcheck disable=SC2086
cc -O1 $F -o "$T/bigmain" "$T/main.c" -L"$T" -lbig \
	-Wl,--no-as-needed -L"$LIBDIR" -ltraced -Wl,-rpath,"$LIBDIR:$T" ||
	fail "building bigmain"

start_daemon
ctl trace-func 'libbig.so:*' on >/dev/null || fail "trace-func libbig.so:*"
ctl trace-func 'bigmain:*' on >/dev/null || fail "trace-func bigmain:*"

# run N: bigmain N; its calls, by name, in $T/ev.
run() {
	TRACED_DEBUG=1 "$T/bigmain" "$1" >"$T/run.out" 2>&1 &
	pid=$!
	wait $pid || fail "bigmain $1 exited with $?: $(cat "$T/run.out")"
	wait_no_sessions 10 || fail "bigmain's session did not end"
	ctl trace-file flush >/dev/null || fail "flush"
	ft_events "$(echo "$TRACES"/bigmain-$pid-*)" "$T/ev"
}

# check N: every call of a run of N is there, entry and exit.
check() {
	for f in "lib_first $(($1 + 1))" "lib_work 1" "exe_helper 1" "main 1"; do
		# shellcheck disable=SC2086
		set -- $f "$1"
		e=$(ft_count "$T/ev" E "$1")
		x=$(ft_count "$T/ev" X "$1")
		[ "$e" = "$2" ] && [ "$x" = "$2" ] ||
			fail "bigmain $3: $1 entered $e and left $x times, called $2 times ($(wc -l <"$T/ev") records); the library said: $(grep -v " lib_f[0-9]* in " "$T/run.out" | tail -n 30 | tr "\n" "|")"
		set -- "$3"
	done
}

i=0
while [ $i -lt 5 ]; do
	i=$((i + 1))
	run 10
	check 10
done
run 5000
check 5000
stop_daemon
ok "an executable and its 2,000-function library, both instrumented: every call of 5 short runs and a long one traced from main() on"
