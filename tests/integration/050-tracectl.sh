#!/bin/sh
# SPDX-License-Identifier: MIT
# tracectl: exit statuses 0/1/2/3, --json for every command, trace-file
# off/on/set/flush, and rules that survive a daemon restart.
. "$(dirname "$0")/lib.sh"

expect_status() {	# WANT COMMAND...
	want=$1; shift
	set +e; "$@" >"$T/out" 2>"$T/err"; got=$?; set -e
	[ "$got" = "$want" ] || fail "'$*' exited $got, not $want: $(cat "$T/err")"
}

# No daemon: 3, naming where it looked.
expect_status 3 ctl info trace
grep -qF "no daemon: tried $TRACED_RUNTIME_DIR (missing)" "$T/err" || fail "unreachable: $(cat "$T/err")"
# Usage errors: 2, before or after reaching the daemon.
expect_status 2 ctl no-such-command
expect_status 2 ctl trace-event onlyone
expect_status 0 ctl help
grep -q "trace-event" "$T/out" || fail "help lists no trace-event"
ok "exit statuses without a daemon"

start_daemon
expect_status 2 ctl trace-event 'x*' maybe
expect_status 2 ctl trace-file sideways
expect_status 1 ctl trace-file set /proc/no/such/dir
"$HELPERS/emit" -t 2 -i 2000 -s "$T/stop" >/dev/null &
emit=$!
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$emit\\]'" ||
	fail "emit did not connect"

# --json: one document, ok true, items that tracectl checked as JSON.
for cmd in "info trace" "info trace-events" "info trace-events test_t*" \
	"info sessions" "info sessions --pid $emit" "help" "help trace-file" \
	"trace-event test_marker on" "trace-file flush"; do
	# shellcheck disable=SC2086
	expect_status 0 ctl --json $cmd
	grep -q '"ok": true' "$T/out" || fail "--json $cmd: $(cat "$T/out")"
done
ctl --json info trace | grep -q "\"type\":\"session\",\"session\":[0-9]*,\"pid\":$emit" ||
	fail "--json info trace has no session for emit"
expect_status 2 ctl --json trace-event 'x' maybe
grep -q '"ok": false, "status": "usage"' "$T/out" || fail "json usage: $(cat "$T/out")"
# Errors found before or instead of the daemon's answer are one JSON
# document too (issue 29): what tracectl said on stderr is its message.
jdoc() { jq -e -c "$1" "$T/out" >/dev/null 2>&1 || fail "--json $2: not one document with $1: $(cat "$T/out")"; }
expect_status 2 ctl --json nosuch
jdoc '.ok == false and .status == "usage" and (.message | test("unknown command .nosuch.")) and .items == []' "nosuch"
expect_status 2 ctl --json -t abc info trace
jdoc '.ok == false and .status == "usage" and (.message | test("abc"))' "-t abc"
expect_status 3 env TRACED_RUNTIME_DIR="$T/nowhere" "$BIN/tracectl" --json info trace
jdoc '.ok == false and .status == "unreachable" and (.message | test("no daemon"))' "with no daemon"
ok "--json for every command, and for errors before the daemon answers"

# A rule that matches no running process's event says so, with the
# closest event name (issue 29): a typo is seen at once.
out=$(ctl trace-event test_tik on) || fail "trace-event test_tik on: $out"
echo "$out" | grep -q "no event of the [0-9]* running process.* matches it (did you mean 'test_tick'?)" ||
	fail "a rule that matches nothing: $out"
out=$(ctl trace-event 'helpers:test_tik' on) || fail "trace-event helpers:test_tik on: $out"
echo "$out" | grep -q "(did you mean 'helpers:test_tick'?)" ||
	fail "a provider's rule that matches nothing: $out"
ctl trace-event test_tik delete >/dev/null && ctl trace-event 'helpers:test_tik' delete >/dev/null ||
	fail "deleting the rules that matched nothing"
ok "a rule that matches no event says so, and what was meant"

# trace-file off: every event off in the running program, rules kept.
ctl trace-file off >/dev/null
ctl info trace-events test_tick | grep -q "test_tick *on" || fail "rule lost on off"
ctl --json info trace-events test_tick | grep -q '"recording":false' ||
	fail "off: events still recording"
ctl trace-file flush >/dev/null
n1=$(bt "$TRACES" 2>/dev/null | grep -c ':test_tick:' || true)
sleep 0.3
ctl trace-file flush >/dev/null
n2=$(bt "$TRACES" 2>/dev/null | grep -c ':test_tick:' || true)
[ "$n1" = "$n2" ] || fail "trace-file off: ticks went on ($n1 -> $n2)"
ctl trace-file on >/dev/null
sleep 0.3
ctl trace-file flush >/dev/null
n3=$(bt "$TRACES" 2>/dev/null | grep -c ':test_tick:' || true)
[ "$n3" -gt "$n2" ] || fail "trace-file on: no new ticks ($n2 -> $n3)"
ok "trace-file off stops recording ($n1 = $n2), on resumes ($n3)"

# trace-file set: the running session continues in a new directory.
ctl trace-file set "$T/rotated" >/dev/null || fail "trace-file set"
sleep 0.3
ctl trace-file flush >/dev/null
ls "$T/rotated"/emit-"$emit"-*/metadata >/dev/null 2>&1 ||
	fail "no session directory under $T/rotated"
n4=$(bt "$T/rotated" 2>/dev/null | grep -c ':test_tick:' || true)
[ "$n4" -gt 0 ] || fail "no events in the rotated directory"
bt "$TRACES" >/dev/null 2>&1 || fail "the old directory is no longer readable"
ctl info trace | grep -q "trace file: $T/rotated (on)" || fail "info trace path"
ok "trace-file set: $n4 ticks in the new directory, old one intact"
touch "$T/stop"
wait $emit

# Rules survive a restart of the daemon.
ctl trace-event test_tick off >/dev/null
stop_daemon
start_daemon
"$HELPERS/emit" -t 1 -n 50 >/dev/null
ctl trace-file flush >/dev/null
rm -rf "$T/rotated"
m=$(ls -dt "$TRACES"/emit-* | head -n 1)	# the newest session
[ "$(bt "$m" | grep -c ':test_tick:' || true)" = 0 ] ||
	fail "test_tick came back after a restart"
[ "$(bt "$m" | grep -c ':test_marker:' || true)" = 50 ] ||
	fail "markers missing after the restart"
ok "rules kept across a daemon restart"
