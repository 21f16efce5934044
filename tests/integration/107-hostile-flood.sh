#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 25, finding 10: one user's flood costs that user, not others.
# Another user's ordinary traced program writes as fast as it can from
# two threads with 256 MiB rings: far more than the disk takes, so the
# daemon's staging memory (shared by everyone) fills.  Meanwhile
# root's program traces 500,000 events/s from 2 threads for 6 s.  It
# once lost 18 % of its events, and the warning blamed it.  Now:
# - root's program loses nothing: every event it emitted is in its
#   trace, none dropped in its rings, no discarded-events message;
# - the flooding user's losses are its own: its program says it
#   dropped events, the daemon counts them to that user's session
#   (info sessions: lost > 0) and its warning names the cause, the
#   user's share of the staging memory.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hostile.sh"
bg_track_init

FLOOD_S=10		# the flood, from before root's program to after
ROOT_S=6		# root's program
hostile_init
WHAT="issue 25 finding 10 (another user's flood, root at 500,000 events/s)"
TRACES="$T/traces"
quiet_start
start_daemon

rm -f "$T/flood.stop"
$AS_HOSTILE env TRACED_RING_SIZE=256M "$HELPERS/rate" -r 40000000 -t 2 \
	-T $FLOOD_S -s "$T/flood.stop" >"$T/flood.out" 2>&1 &
FPID=$!
bg_track $FPID
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'rate\\[$FPID\\]'" ||
	hfail "$WHAT: the flooding program did not connect: $(cat "$T/flood.out")"
sleep 1
"$HELPERS/rate" -r 500000 -t 2 -T $ROOT_S >"$T/root.out" 2>&1 &
RPID=$!
wait $RPID || hfail "$WHAT: root's program exited with $?: $(cat "$T/root.out")"
touch "$T/flood.stop"
wait $FPID || hfail "$WHAT: the flooding program exited with $?"
ctl trace-file flush >/dev/null || hfail "$WHAT: trace-file flush failed"

# Root's program: everything.
emitted=$(sed -n 's/^emitted \([0-9]*\) dropped.*/\1/p' "$T/root.out")
dropped=$(sed -n 's/^emitted [0-9]* dropped \([0-9]*\)/\1/p' "$T/root.out")
[ -n "$emitted" ] || hfail "$WHAT: root's program said: $(cat "$T/root.out")"
dirs=$(ls -d "$TRACES"/rate-"$RPID"-* 2>/dev/null || true)
[ -n "$dirs" ] || hfail "$WHAT: root's program has no trace in $TRACES"
# shellcheck disable=SC2086
c=$(bt_count $dirs) ||
	hfail "$WHAT: babeltrace2 cannot read root's trace: $(head -c 300 "$T/count.err")"
# shellcheck disable=SC2086
set -- $c
[ "$1" = "$emitted" ] && [ "$2" = 0 ] && [ "$dropped" = 0 ] ||
	hfail "$WHAT: root's program lost events: $emitted emitted, $1 in the trace, $2 discarded-events messages, $dropped dropped in its rings; flood: $(tail -n 1 "$T/flood.out"); log: $(grep -i 'lost\|filled' "$T/traced.log" | tail -n 3)"
echo "root's program: all $emitted events in the trace, none lost"

# The flood's losses: the flooding user's, with the cause named.
fl=$(sed -n 's/^emitted [0-9]* dropped \([0-9]*\)/\1/p' "$T/flood.out")
fe=$(sed -n 's/^emitted \([0-9]*\) dropped.*/\1/p' "$T/flood.out")
[ -n "$fl" ] && [ "$fl" -gt 0 ] ||
	hfail "$WHAT: the flood lost nothing, so it showed nothing (the disk kept up?): $(cat "$T/flood.out")"
grep "hostile\|rate\\[$FPID\\]" "$T/traced.log" | grep -q "held their share of the daemon's staging memory" ||
	hfail "$WHAT: no warning names the flooding user's share as the cause: $(grep "rate\\[$FPID\\]" "$T/traced.log" | tail -n 3)"
grep "rate\\[$RPID\\]\|rate-$RPID-" "$T/traced.log" | grep -q "lost" &&
	hfail "$WHAT: a loss warning names root's program: $(grep "rate\\[$RPID\\]" "$T/traced.log" | grep lost | head -n 2)"
lost=$(ctl --json info sessions --all --pid "$FPID" | jq '[.items[].lost] | add') ||
	hfail "$WHAT: info sessions failed"
[ "$lost" -gt 0 ] ||
	hfail "$WHAT: the flooding user's session counts no loss"
echo "the flood: $fe emitted, $fl dropped in its rings, $lost counted lost to its session; its warning: $(grep "rate\\[$FPID\\]" "$T/traced.log" | grep -o "held their share[^;]*" | head -n 1)"
stop_daemon
ok "$WHAT"
