#!/bin/sh
# SPDX-License-Identifier: MIT
# A traced run that recorded nothing leaves nothing (issue 29: every
# run left a 32-52 KB session directory even when no event was on).
# With every event off, a program's session makes no directory; with
# its events on again, the same program's next run has its directory
# and every event in it.
. "$(dirname "$0")/lib.sh"

start_daemon
ctl trace-event '*' off >/dev/null || fail "trace-event '*' off"
"$HELPERS/emit" -t 2 -n 100 >"$T/emit1.out" 2>&1 || fail "emit: $(cat "$T/emit1.out")"
wait_no_sessions 10 || fail "the session did not end: $(ctl info trace)"
ctl trace-file flush >/dev/null || fail "flush"
[ -z "$(ls -A "$TRACES" 2>/dev/null)" ] ||
	fail "a run with every event off left: $(ls -A "$TRACES")"
ok "every event off: no session directory"

ctl trace-event '*' delete >/dev/null || fail "trace-event '*' delete"
"$HELPERS/emit" -t 2 -n 100 >"$T/emit2.out" 2>&1 &
pid=$!
wait $pid || fail "emit: $(cat "$T/emit2.out")"
wait_no_sessions 10 || fail "the session did not end: $(ctl info trace)"
ctl trace-file flush >/dev/null || fail "flush"
d=$(ls -d "$TRACES"/emit-$pid-* 2>/dev/null) || fail "no directory for a run with events on"
ticks=$(babeltrace2 "$d" 2>/dev/null | grep -c 'helpers:test_tick:' || true)
[ "$ticks" = 200 ] || fail "$ticks of 200 ticks in $d"
[ "$(ls -d "$TRACES"/* | wc -l)" = 1 ] || fail "more than one directory: $(ls "$TRACES")"
stop_daemon
ok "events on again: one directory, every tick in it"
