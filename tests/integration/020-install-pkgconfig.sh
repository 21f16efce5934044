#!/bin/sh
# SPDX-License-Identifier: MIT
# Install to a temporary prefix, build a program outside the tree with
# pkg-config, trace it with 2 threads, and check with babeltrace2 that
# every event is there with the right values, thread ids and
# non-decreasing timestamps per thread, and that disabled events are
# absent.
. "$(dirname "$0")/lib.sh"

P="$T/prefix"
make -s -C "$SRC" O="$O" install PREFIX="$P" >/dev/null ||
	fail "make install PREFIX=$P"
for f in bin/traced bin/tracectl bin/tracegen lib/libtraced.so \
	lib/libtraced.so.1 lib/libtraced.a include/traced.h \
	include/traced/ring.h lib/pkgconfig/libtraced.pc \
	share/bash-completion/completions/tracectl \
	share/zsh/vendor-completions/_tracectl \
	share/fish/vendor_completions.d/tracectl.fish; do
	[ -e "$P/$f" ] || fail "make install did not install $f"
done
grep -q "^prefix=$P\$" "$P/lib/pkgconfig/libtraced.pc" ||
	fail "libtraced.pc does not point at $P"
ok "installed to $P"

mkdir "$T/app"
cat > "$T/app/trace-events" <<'TE'
# an application outside the tree
app_value(int worker, uint64_t seq, int64_t neg, void *ptr, bool flag, const char *name) "w %d seq %" PRIu64 " neg %" PRId64 " ptr %p flag %d name %s"
app_quiet(uint64_t seq) "turned off with tracectl before the run"
disable app_hidden(uint64_t seq) "off by default"
TE
cat > "$T/app/app.c" <<'APP'
#include <pthread.h>
#include <stdio.h>
#include "trace.h"
#define N 500
static void *
run(void *arg)
{
	int w = (int)(long)arg;
	char name[32];
	for (unsigned long i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "thread%d-item%lu", w, i);
		trace_app_value(w, i, -(long)i * 7 - w, (void *)(0xabc000ul + i),
		    (i + w) % 3 == 0, name);
		trace_app_quiet(i);
		trace_app_hidden(i);
	}
	return NULL;
}
int
main(void)
{
	pthread_t t[2];
	for (long w = 0; w < 2; w++)
		pthread_create(&t[w], NULL, run, (void *)w);
	for (int w = 0; w < 2; w++)
		pthread_join(t[w], NULL);
	puts("app done");
	return 0;
}
APP
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
# Under SANITIZE=1 the installed library needs the sanitizer runtime too.
san=
[ "${SANITIZE:-}" = 1 ] && san="-fsanitize=address,undefined"
(cd "$T/app" &&
	"$P/bin/tracegen" --header trace-events > trace.h &&
	"$P/bin/tracegen" --source trace-events > trace.c &&
	cc -std=gnu11 -Wall -Wextra -Werror -O2 $san -o app app.c trace.c \
		$(pkg-config --cflags --libs libtraced) -pthread) ||
	fail "building the app with pkg-config"
# A private prefix: pkg-config's flags carry the run path, so the program
# finds libtraced with no LD_LIBRARY_PATH and no ldconfig.
env -u LD_LIBRARY_PATH ldd "$T/app/app" | grep -q "libtraced.so.1 => $P/lib/" ||
	fail "the app does not find libtraced in $P/lib by itself: $(ldd "$T/app/app")"
ok "built an outside program with pkg-config; it finds $P/lib by itself"

"$P/bin/traced" --foreground --runtime-dir "$TRACED_RUNTIME_DIR" \
	--trace-dir "$TRACES" --state-dir "$T/state" >>"$T/traced.log" 2>&1 &
DAEMON_PID=$!
wait_for 10 test -S "$TRACED_RUNTIME_DIR/control.sock" || fail "traced start"
"$P/bin/tracectl" trace-event app_quiet off >/dev/null || fail "trace-event off"
out=$("$T/app/app") || fail "app exited with $?"
[ "$out" = "app done" ] || fail "app printed '$out'"
"$P/bin/tracectl" trace-file flush >/dev/null || fail "flush"

bt "$TRACES" > "$T/out.txt" 2>"$T/bt.err" || fail "babeltrace2: $(cat "$T/bt.err")"
[ ! -s "$T/bt.err" ] || fail "babeltrace2 warned: $(cat "$T/bt.err")"
n=$(count_events "$T/out.txt" app_value)
[ "$n" = 1000 ] || fail "expected 1000 app_value events, got $n"
[ "$(count_events "$T/out.txt" app_quiet)" = 0 ] || fail "app_quiet was off"
[ "$(count_events "$T/out.txt" app_hidden)" = 0 ] || fail "app_hidden is disabled"

# Every event, with its values, in order per thread, on the thread that
# emitted it; timestamps non-decreasing per thread.
awk '
/app:app_value:/ {
	ts = substr($1, 2, length($1) - 2) + 0
	match($0, /tid = [0-9]+/); tid = substr($0, RSTART + 6, RLENGTH - 6)
	match($0, /worker = [0-9]+/); w = substr($0, RSTART + 9, RLENGTH - 9) + 0
	match($0, /seq = [0-9]+/); seq = substr($0, RSTART + 6, RLENGTH - 6) + 0
	if (!(w in tidof)) { tidof[w] = tid; next_seq[w] = 0; nthreads++ }
	if (tidof[w] != tid) { print "worker " w " on two threads"; bad = 1 }
	if (seq != next_seq[w]) { print "worker " w ": seq " seq ", expected " next_seq[w]; bad = 1 }
	next_seq[w] = seq + 1
	if (tid in last && ts < last[tid]) { print "time goes back on thread " tid; bad = 1 }
	last[tid] = ts
	neg = -seq * 7 - w
	ptr = sprintf("ptr = 0x%X,", 11255808 + seq)
	flag = (seq + w) % 3 == 0 ? 1 : 0
	want = sprintf("{ worker = %d, seq = %d, neg = %d, %s flag = %d, name = \"thread%d-item%d\" }", w, seq, neg, ptr, flag, w, seq)
	if (index($0, want) == 0) { print "bad values: " $0 "\n  want " want; bad = 1 }
}
END {
	if (nthreads != 2) { print "expected 2 threads, got " nthreads; bad = 1 }
	if (tidof[0] == tidof[1]) { print "both workers share a tid"; bad = 1 }
	exit bad
}' "$T/out.txt" || fail "trace content"
ok "1000 events with the right values, 2 threads, ordered"
