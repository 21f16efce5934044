#!/bin/sh
# SPDX-License-Identifier: MIT
# Without a daemon a traced program behaves as without tracing: same
# output and exit status, nothing on stderr, no wait at start.  A daemon
# started later picks the running program up.  With a daemon already
# running, a short program is traced from its very first event.
. "$(dirname "$0")/lib.sh"

# 1. No daemon.  A connect timeout of 5 s would show as a 5 s run if the
# library waited for a daemon that is not there.
TRACED_CONNECT_TIMEOUT_MS=5000 "$HELPERS/emit" -t 2 -n 1000 \
	>"$T/a.out" 2>"$T/a.err"; rc=$?
start=$(date +%s%N)
TRACED_CONNECT_TIMEOUT_MS=5000 "$HELPERS/emit" -t 2 -n 1000 >/dev/null 2>&1
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
TRACED=0 "$HELPERS/emit" -t 2 -n 1000 >"$T/b.out" 2>"$T/b.err"; rc_b=$?
[ $rc = 0 ] && [ $rc = $rc_b ] || fail "exit status $rc without daemon, $rc_b untraced"
cmp -s "$T/a.out" "$T/b.out" || fail "output differs: $(cat "$T/a.out") / $(cat "$T/b.out")"
[ ! -s "$T/a.err" ] || fail "stderr without a daemon: $(cat "$T/a.err")"
[ $elapsed_ms -lt 2500 ] || fail "run took $elapsed_ms ms with no daemon: it waited"
ok "no daemon: same output, status 0, silent, ${elapsed_ms} ms"

# 2. A daemon that starts later.
"$HELPERS/emit" -t 1 -i 2000 -s "$T/stop" >/dev/null 2>"$T/late.err" &
emit=$!
sleep 0.3
start_daemon
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$emit\\]'" ||
	fail "the running program did not connect: $(ctl info trace)"
sleep 0.3
touch "$T/stop"
wait $emit || fail "emit exited with $?"
[ ! -s "$T/late.err" ] || fail "stderr: $(cat "$T/late.err")"
ctl trace-file flush >/dev/null
bt "$TRACES" > "$T/late.txt" 2>/dev/null || fail "babeltrace2"
n=$(count_events "$T/late.txt" test_tick)
[ "$n" -gt 10 ] || fail "only $n ticks traced after the daemon came"
ok "late daemon: the running program connected, $n ticks traced"
stop_daemon
rm -rf "$TRACES"

# 3. Rules already on, daemon running: a short program's very first
# events are traced (registration completes before main()).
start_daemon
ctl trace-event 'test_*' on >/dev/null
for i in 1 2 3 4 5 6 7 8 9 10; do
	"$HELPERS/emit" -t 1 -n 3 >/dev/null || fail "short run $i"
done
ctl trace-file flush >/dev/null
bt "$TRACES" > "$T/short.txt" 2>/dev/null || fail "babeltrace2"
n=$(grep ':test_mixed:' "$T/short.txt" | grep -c 'seq = 0,')
[ "$n" = 10 ] || fail "first event (seq 0) traced in $n of 10 short runs"
n=$(count_events "$T/short.txt" test_off_by_default)
[ "$n" = 30 ] || fail "rule test_* on: $n of 30 test_off_by_default events"
ok "short programs traced from their first event"
