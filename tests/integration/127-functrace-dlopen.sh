#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 29, point 1, for dlopen(): a library with 2,000 instrumented
# functions, rules on it, dlopen()ed after start and its first function
# called at once: every call is in the trace, the first one included,
# in a short run and a long one alike.  Three programs open it:
#   dlmain   instrumented, linked with libtraced (libtraced's dlopen()
#            patches before returning); also dlclose() and dlopen()
#            again, and a name without a slash found on its RUNPATH;
#   dllinked not instrumented, linked with libtraced: the library brings
#            the first instrumented code, and the connection;
#   dlplain  not linked with libtraced at all: libtraced comes with the
#            library, and its constructor waits inside dlopen().
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ftlib.sh"

command -v cc >/dev/null 2>&1 || skip "no C compiler"
F=$("$BIN/tracegen" --cflags-func) || fail "tracegen --cflags-func"
LIBDIR="$O/lib"
# Under SANITIZE=1 the programs and the library take the runtime too.
san=
[ "${SANITIZE:-}" = 1 ] && san="-fsanitize=address,undefined"
[ "${SANITIZE:-}" = thread ] && san="-fsanitize=thread"
{
	echo 'int dyn_first(int x) { return x + 1; }'
	i=0
	while [ $i -lt 2000 ]; do
		i=$((i + 1))
		echo "int dyn_f$i(int x) { return x * $i; }"
	done
	echo 'int dyn_work(int n) { int s = 0; for (int i = 0; i < n; i++) s += dyn_first(i); return s; }'
} >"$T/libdyn.c"
# dlopen LIB, call dyn_first then dyn_work(N), dlclose; TIMES times.
cat >"$T/dl.c" <<'EOS'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
typedef int (*fn)(int);
__attribute__((noinline)) static int exe_helper(int x) { return x * 2; }
static int run(const char *lib, int n)
{
	void *h = dlopen(lib, RTLD_NOW);
	fn first, work;
	int r;

	if (h == NULL) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		exit(2);
	}
	first = (fn)dlsym(h, "dyn_first");
	work = (fn)dlsym(h, "dyn_work");
	if (first == NULL || work == NULL) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		exit(2);
	}
	r = first(1);
	r += work(n);
	if (dlclose(h) != 0) {
		fprintf(stderr, "dlclose: %s\n", dlerror());
		exit(2);
	}
	return r;
}
int main(int argc, char **argv)
{
	int i, r = 0, times = argc > 3 ? atoi(argv[3]) : 1;

	if (argc < 3)
		return 2;
	for (i = 0; i < times; i++)
		r += run(argv[1], atoi(argv[2]));
	return exe_helper(r) != 0 ? 0 : 1;
}
EOS
# shellcheck disable=SC2086
cc -O1 -shared -fPIC $F $san -o "$T/libdyn.so" "$T/libdyn.c" \
	-Wl,--no-as-needed -L"$LIBDIR" -ltraced -Wl,-rpath,"$LIBDIR" ||
	fail "building libdyn.so"
# shellcheck disable=SC2086
cc -O1 $F $san -o "$T/dlmain" "$T/dl.c" -ldl \
	-Wl,--no-as-needed -L"$LIBDIR" -ltraced -Wl,-rpath,"$LIBDIR:$T" ||
	fail "building dlmain"
# shellcheck disable=SC2086
cc -O1 $san -o "$T/dllinked" "$T/dl.c" -ldl \
	-Wl,--no-as-needed -L"$LIBDIR" -ltraced -Wl,-rpath,"$LIBDIR" ||
	fail "building dllinked"
# shellcheck disable=SC2086
cc -O1 $san -o "$T/dlplain" "$T/dl.c" -ldl || fail "building dlplain"
nm -D "$T/dlplain" | grep -q " U traced_" && fail "dlplain links libtraced"

start_daemon
ctl trace-func 'libdyn.so:*' on >/dev/null || fail "trace-func libdyn.so:*"
ctl trace-func 'dlmain:*' on >/dev/null || fail "trace-func dlmain:*"

# run PROG LIB N TIMES: its calls, by name, in $T/ev.
run() {
	TRACED_DEBUG=1 "$T/$1" "$2" "$3" "$4" >"$T/run.out" 2>&1 &
	pid=$!
	wait $pid || fail "$1 $2 $3 $4 exited with $?: $(tail -n 5 "$T/run.out")"
	wait_no_sessions 10 || fail "$1's session did not end"
	ctl trace-file flush >/dev/null || fail "flush"
	ft_events "$(echo "$TRACES"/"$1"-$pid-*)" "$T/ev"
}

# check PROG N TIMES: every call of that run is there, entry and exit;
# those of the executable too when it is instrumented (dlmain).
check() {
	n=$(($2 + 1)) t=$3 what="$1 $2 $3"
	for f in "dyn_first $((n * t))" "dyn_work $t" \
	    "exe_helper $([ "$1" = dlmain ] && echo 1 || echo 0)" \
	    "main $([ "$1" = dlmain ] && echo 1 || echo 0)"; do
		# shellcheck disable=SC2086
		set -- $f
		e=$(ft_count "$T/ev" E "$1")
		x=$(ft_count "$T/ev" X "$1")
		[ "$e" = "$2" ] && [ "$x" = "$2" ] ||
			fail "$what: $1 entered $e and left $x times, called $2 times ($(wc -l <"$T/ev") records); the library said: $(grep -v " dyn_f[0-9]* in " "$T/run.out" | tail -n 30 | tr "\n" "|")"
	done
	msg=$(ft_nesting "$T/ev") || fail "$what: calls badly nested: $msg"
}

i=0
while [ $i -lt 3 ]; do
	i=$((i + 1))
	run dlmain "$T/libdyn.so" 10 1
	check dlmain 10 1
done
run dlmain "$T/libdyn.so" 5000 1
check dlmain 5000 1
ok "dlmain: every call of a dlopen()ed 2,000-function library traced from dlopen() on, 3 short runs and a long one"

# dlclose(), then dlopen() again: the new load is patched as the first.
run dlmain "$T/libdyn.so" 10 3
grep -q "libdyn.so unloaded" "$T/run.out" ||
	fail "dlclose() did not unload libdyn.so: $(tail -n 5 "$T/run.out")"
check dlmain 10 3
ok "dlmain: dlopen(), dlclose() three times: each load patched before dlopen() returned"

# A name without a slash: found on dlmain's RUNPATH, as without libtraced.
# (Not under ASan: its dlopen() interceptor calls libc's from its own
# runtime, so such a name misses the program's RUNPATH, libtraced or not.)
if [ -z "$san" ]; then
	run dlmain libdyn.so 10 1
	check dlmain 10 1
	ok "dlmain: dlopen(\"libdyn.so\") found on the program's RUNPATH"
	run dlmain '$ORIGIN/libdyn.so' 10 1
	check dlmain 10 1
	ok "dlmain: dlopen(\"\$ORIGIN/libdyn.so\") found in the program's directory"
fi

run dllinked "$T/libdyn.so" 10 1
check dllinked 10 1
run dllinked "$T/libdyn.so" 10 2
check dllinked 10 2
ok "dllinked: an uninstrumented program's dlopen()ed library patched before dlopen() returned, and again after dlclose()"

i=0
while [ $i -lt 2 ]; do
	i=$((i + 1))
	run dlplain "$T/libdyn.so" 10 1
	check dlplain 10 1
done
ok "dlplain: libtraced coming with the library patches it before its code runs"
stop_daemon
