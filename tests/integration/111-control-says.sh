#!/bin/sh
# SPDX-License-Identifier: MIT
# tracectl and traced say what is so, clearly (issue 10, points 5, 6,
# 10, 11, 12, 13, 15).
. "$(dirname "$0")/lib.sh"
bg_track_init

# ---- 6. a root daemon by hand makes its runtime directory 0755 --------
if [ "$(id -u)" = 0 ]; then
	old_umask=$(umask)
	umask 077
	start_daemon
	umask "$old_umask"
	mode=$(stat -c %a "$TRACED_RUNTIME_DIR")
	[ "$mode" = 755 ] || fail "point 6: runtime directory made $mode under umask 077, not 755"
	ok "point 6: a root daemon started under umask 077 makes its runtime directory 0755"
else
	start_daemon
	echo "point 6 not tried: needs root"
fi

"$HELPERS/emit" -t 1 -i 500 -s "$T/stop" > /dev/null &
emit=$!
bg_track $emit
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$emit\\]'" ||
	fail "emit did not connect"

# ---- 5. provider:event patterns are counted -------------------------
ctl trace-event 'helpers:test_t*' off > "$T/o5" || fail "trace-event"
grep -q "applies now to 2 events in 1 running process" "$T/o5" ||
	fail "point 5: 'helpers:test_t*' (test_tick, test_turned_off): $(cat "$T/o5")"
ctl trace-event 'test_t*' on > "$T/o5b" || fail "trace-event"
grep -q "applies now to 2 events" "$T/o5b" || fail "point 5: 'test_t*': $(cat "$T/o5b")"
ok "point 5: $(cat "$T/o5")"

# ---- 12. rules: list, delete, reset -----------------------------------
ctl trace-event 'test_marker' off > /dev/null
ctl info trace-rules > "$T/r12"
[ "$(grep -c "test_" "$T/r12")" = 3 ] || fail "point 12: three rules listed: $(cat "$T/r12")"
head -n 1 "$T/r12" | grep -q "1 .*off.*helpers:test_t\\*" || fail "point 12: order: $(cat "$T/r12")"
ctl trace-event list | diff - "$T/r12" > /dev/null || fail "point 12: trace-event list differs from info trace-rules"
ctl trace-event 'test_marker' delete > "$T/d12" || fail "point 12: delete: $(cat "$T/d12")"
grep -q "removed" "$T/d12" || fail "point 12: delete says: $(cat "$T/d12")"
set +e
ctl trace-event 'nosuch' delete > "$T/d12b" 2>&1; rc=$?
set -e
[ $rc = 1 ] || fail "point 12: deleting a rule that is not there exited $rc"
[ "$(ctl --json info trace-rules | jq '.items | length')" = 2 ] || fail "point 12: not two rules after a delete"
ctl trace-event reset > /dev/null || fail "point 12: reset"
[ "$(ctl --json info trace-rules | jq '.items | length')" = 0 ] || fail "point 12: rules left after reset"
ctl --json info trace-events test_turned_off | jq -e '.items[0].state == "on"' > /dev/null ||
	fail "point 12: after reset, test_turned_off is not back to on"
ok "point 12: rules listed in order, deleted one by one, reset to the trace-events defaults"

# ---- 13. help, did you mean -------------------------------------------
ctl help | grep -q "info sessions" || fail "point 13: help"
! ctl help 2>&1 | grep -q "info s\\." || fail "point 13: help still suggests 'info s'"
set +e
ctl trace-evnet x on > "$T/o13" 2>&1; rc=$?
set -e
[ $rc = 2 ] || fail "point 13: a mistyped command exited $rc"
grep -q "did you mean 'trace-event'" "$T/o13" || fail "point 13: no did-you-mean: $(cat "$T/o13")"
# A second daemon on the same directories says why it stops, and only that.
set +e
"$BIN/traced" --foreground --runtime-dir "$TRACED_RUNTIME_DIR" \
	--trace-dir "$TRACES" --state-dir "$T/state" > "$T/second.log" 2>&1
rc=$?
set -e
[ $rc = 1 ] || fail "point 13: a second daemon exited $rc"
grep -q "another traced is already listening" "$T/second.log" ||
	fail "point 13: second daemon: $(cat "$T/second.log")"
! grep -q "without the session index" "$T/second.log" ||
	fail "point 13: the second daemon first talks about the index: $(cat "$T/second.log")"
ok "point 13: did-you-mean; a second daemon says only why it stops"

# ---- 15. JSON: booleans, nulls, exact 64-bit times ---------------------
ctl --json info trace > "$T/j15"
jq -e '.ok == true' "$T/j15" > /dev/null || fail "point 15: ok is not a boolean: $(head -c 300 "$T/j15")"
jq -e '[.items[] | select(.type == "ring") | .write_error | type == "boolean"] | all' "$T/j15" > /dev/null ||
	fail "point 15: write_error is not a boolean"
jq -e '[.items[] | select(.type == "session")][0].metadata_error == null' "$T/j15" > /dev/null ||
	fail "point 15: no metadata error is not null"
started=$(jq -r '[.items[] | select(.type == "session")][0].started_ns' "$T/j15")
raw=$(grep -o '"started_ns":"[0-9]*"' "$T/j15" | head -n 1 | tr -dc 0-9)
[ "$started" = "$raw" ] && [ ${#raw} -ge 19 ] ||
	fail "point 15: started_ns $started through jq, $raw in the text"
ctl --json help | jq -e '.items[0].changes_state | type == "boolean"' > /dev/null ||
	fail "point 15: changes_state"
ok "point 15: JSON booleans, null, ns times exact through jq ($started)"

# ---- 11. trace-file set: kept at a restart, default, mistyped ----------
set +e
ctl trace-file set "$T/no/such/dir" > "$T/o11" 2>&1; rc=$?
set -e
[ $rc = 1 ] || fail "point 11: a directory under a missing parent exited $rc"
grep -q "traces still go to $TRACES" "$T/o11" || fail "point 11: failure does not say where traces go: $(cat "$T/o11")"
[ ! -e "$T/no" ] || fail "point 11: a mistyped path was created"
ctl trace-file set "$T/kept" > /dev/null || fail "point 11: set"
touch "$T/stop"
wait $emit
stop_daemon
# The trace directory from the settings file, as under systemd (an
# option on the command line would win over a remembered set).
printf 'trace-dir = %s\n' "$TRACES" > "$T/traced.conf"
restart() {
	"$BIN/traced" --foreground --config "$T/traced.conf" \
		--runtime-dir "$TRACED_RUNTIME_DIR" --state-dir "$T/state" \
		>>"$T/traced.log" 2>&1 &
	DAEMON_PID=$!
	wait_for 10 test -S "$TRACED_RUNTIME_DIR/control.sock" || fail "traced did not start"
}
restart
ctl info trace | grep -q "trace file: $T/kept " ||
	fail "point 11: the set directory was forgotten at the restart: $(ctl info trace | head -n 1)"
grep -q "as 'tracectl trace-file set' said before the restart" "$T/traced.log" ||
	fail "point 11: the restart does not say where the directory comes from"
ctl trace-file set default > "$T/o11b" || fail "point 11: set default: $(cat "$T/o11b")"
ctl info trace | grep -q "trace file: $TRACES " || fail "point 11: set default: $(ctl info trace | head -n 1)"
stop_daemon
restart
ctl info trace | grep -q "trace file: $TRACES " || fail "point 11: default not kept"
ok "point 11: set kept across a restart, 'set default' back to $TRACES, no stray directory made"

# ---- 10. info trace of many threads: a summary -------------------------
"$HELPERS/emit" -t 300 -i 2000 -s "$T/stop10" > /dev/null &
e10=$!
bg_track $e10
wait_for 10 sh -c "[ \$('$BIN/tracectl' --json info trace | jq '[.items[] | select(.type == \"session\")][0].rings') -ge 300 ]" ||
	fail "point 10: 300 threads did not register"
lines=$(ctl info trace | wc -l)
[ "$lines" -le 20 ] || fail "point 10: info trace of a 300-thread program is $lines lines"
ctl info trace | grep -q "more threads.*info session" || fail "point 10: no summary line"
touch "$T/stop10"
wait $e10
ok "point 10: a 300-thread program in $lines lines of info trace"
