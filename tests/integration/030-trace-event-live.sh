#!/bin/sh
# SPDX-License-Identifier: MIT
# 'tracectl trace-event NAME off' stops that event in a running program
# without restarting it, and 'on' brings it back; other events go on.
. "$(dirname "$0")/lib.sh"

start_daemon
"$HELPERS/emit" -t 1 -i 1000 -s "$T/stop" > "$T/emit.out" &
emit=$!
sleep 0.4
ctl trace-event test_tick off > "$T/off.out" || fail "trace-event off"
grep -q "test_tick' off: applies now to 1 event in 1 running process" \
	"$T/off.out" || fail "off reply: $(cat "$T/off.out")"
ctl info trace-events 'test_tick' > "$T/info.out"
grep -q "helpers:test_tick  *off  *rule 'test_tick'  *1 process: emit\[$emit\]" "$T/info.out" ||
	fail "info trace-events: $(cat "$T/info.out")"
sleep 0.4
ctl trace-event test_tick on >/dev/null || fail "trace-event on"
sleep 0.4
touch "$T/stop"
wait $emit || fail "emit exited with $?"
ctl trace-file flush >/dev/null || fail "flush"

bt "$TRACES" > "$T/out.txt" 2>"$T/bt.err" || fail "babeltrace2"
# Markers run throughout; ticks stop for a while and come back.  Find
# the longest run of markers with no tick in between.
awk '
/:test_marker:/ { m++; if (gap) run++ }
/:test_tick:/ { t++; if (run > longest) longest = run; run = 0; gap = 1; if (m > 0 && longest > 0) after = 1 }
END {
	printf "markers %d ticks %d longest marker run without ticks %d\n", m, t, longest
	if (longest < 100) { print "no gap in ticks: off did not stop the event"; exit 1 }
	if (!after) { print "ticks did not come back after on"; exit 1 }
	if (m < t + longest - 5) { print "markers stopped too"; exit 1 }
}' "$T/out.txt" || fail "trace does not show the off/on window"
first=$(grep -m1 ':test_marker:' "$T/out.txt" | sed 's/.*seq = \([0-9]*\).*/\1/')
[ "$first" = 0 ] || fail "first marker is seq $first, not 0"
ok "off stopped test_tick in the running program, on brought it back"
