#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 25, finding 10: a per-uid quota on the trace directory.  One
# user's ordinary program once wrote 12 GB in 12 s, and would have
# filled the trace disk in about a minute.  With
# trace-dir-bytes-per-uid=64M (the default is a quarter of the file
# system, too big to fill here):
# - that user's flood keeps at most its quota (and what was on its way
#   to the disk) in the trace directory; the rest of its events are
#   counted as lost to its session, and the log names the setting;
# - root's program beside it loses nothing (root has no quota);
# - after a restart (with half the quota: what the flood kept is at
#   its quota, give or take what was on its way), the traces of the
#   earlier run still count: the user's next program is over at once,
#   its events counted lost;
# - once root deletes that user's traces, the next scan (10 s) finds
#   it under its quota, and its next program is traced whole.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hostile.sh"
bg_track_init

QUOTA_MB=64
SLACK_MB=48		# chunks already on their way to the disk
hostile_init
WHAT="issue 25 finding 10 (a quota on the trace directory)"
TRACES="$T/traces"
quiet_start
start_daemon --set trace-dir-bytes-per-uid=${QUOTA_MB}M

# 1. The flood, and root beside it.
$AS_HOSTILE env TRACED_RING_SIZE=64M "$HELPERS/rate" -r 8000000 -t 2 \
	-T 8 >"$T/flood.out" 2>&1 &
FPID=$!
bg_track $FPID
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'rate\\[$FPID\\]'" ||
	hfail "$WHAT: the flooding program did not connect: $(cat "$T/flood.out")"
sleep 1
"$HELPERS/rate" -r 500000 -t 2 -T 4 >"$T/root.out" 2>&1 &
RPID=$!
wait $RPID || hfail "$WHAT: root's program exited with $?: $(cat "$T/root.out")"
wait $FPID || hfail "$WHAT: the flooding program exited with $?"
ctl trace-file flush >/dev/null || hfail "$WHAT: trace-file flush failed"

emitted=$(sed -n 's/^emitted \([0-9]*\) dropped.*/\1/p' "$T/root.out")
dropped=$(sed -n 's/^emitted [0-9]* dropped \([0-9]*\)/\1/p' "$T/root.out")
[ -n "$emitted" ] || hfail "$WHAT: root's program said: $(cat "$T/root.out")"
c=$(bt_count "$TRACES"/rate-"$RPID"-*) ||
	hfail "$WHAT: babeltrace2 cannot read root's trace: $(head -c 300 "$T/count.err")"
# shellcheck disable=SC2086
set -- $c
[ "$1" = "$emitted" ] && [ "$2" = 0 ] && [ "$dropped" = 0 ] ||
	hfail "$WHAT: root's program lost events: $emitted emitted, $1 in the trace, $2 discarded-events messages, $dropped dropped in its rings"
echo "root's program: all $emitted events in the trace, none lost"

fdirs=$(ls -d "$TRACES"/rate-"$FPID"-*)
# shellcheck disable=SC2086
fmb=$(du -s -B1M $fdirs | awk '{ s += $1 } END { print s + 0 }')
[ "$fmb" -le $((QUOTA_MB + SLACK_MB)) ] ||
	hfail "$WHAT: the flooding user keeps $fmb MiB in the trace directory, quota $QUOTA_MB MiB"
[ "$fmb" -ge $((QUOTA_MB / 2)) ] ||
	hfail "$WHAT: the flood wrote only $fmb MiB: it showed nothing of the quota"
fe=$(sed -n 's/^emitted \([0-9]*\) dropped.*/\1/p' "$T/flood.out")
lost=$(ctl --json info sessions --all --pid "$FPID" | jq '[.items[].lost] | add') ||
	hfail "$WHAT: info sessions failed"
[ "$lost" -gt 0 ] || hfail "$WHAT: the flooding user's session counts no loss"
grep "uid $HUID:" "$T/traced.log" | grep -q "over its quota of $QUOTA_MB MiB (trace-dir-bytes-per-uid" ||
	hfail "$WHAT: the log does not name the quota: $(grep "uid $HUID" "$T/traced.log" | tail -n 3)"
ctl info trace | grep -q "^trace directory: uid $HUID holds [0-9]* MiB of its $QUOTA_MB MiB quota (over" ||
	hfail "$WHAT: info trace does not say the user is over its quota: $(ctl info trace | head -n 6)"
over=$(ctl --json info trace | jq -r ".items[] | select(.type == \"quota\" and .uid == $HUID) | .over") ||
	hfail "$WHAT: info trace --json failed"
[ "$over" = true ] || hfail "$WHAT: info trace --json: the user's quota item says over: $over"
echo "the flood: $fe events emitted, $fmb MiB kept (quota $QUOTA_MB MiB), $lost counted lost to its session; info trace: $(ctl info trace | grep '^trace directory: uid')"

# 2. A restart: the earlier run's traces count.
stop_daemon
QUOTA_MB=$((QUOTA_MB / 2))
start_daemon --set trace-dir-bytes-per-uid=${QUOTA_MB}M
wait_for 15 sh -c "grep -c 'uid $HUID: .*over its quota' '$T/traced.log' | grep -qx 2" ||
	hfail "$WHAT: after a restart, the first scan did not find the user over its quota: $(grep "uid $HUID" "$T/traced.log" | tail -n 2)"
$AS_HOSTILE "$HELPERS/emit" -t 1 -n 1000 >"$T/emit1.out" 2>&1 ||
	hfail "$WHAT: emit exited with $?: $(cat "$T/emit1.out")"
ctl trace-file flush >/dev/null
ctl --json info sessions --all --exe emit >"$T/emit1.json" ||
	hfail "$WHAT: info sessions failed"
lost1=$(jq '[.items[].lost] | add' "$T/emit1.json")
ev1=$(jq '[.items[].events] | add' "$T/emit1.json")
[ "$lost1" -ge 1000 ] && [ "$ev1" = 0 ] ||
	hfail "$WHAT: over its quota after a restart, the user's program had $ev1 events written and $lost1 counted lost (emitted: $(cat "$T/emit1.out"))"
echo "after a restart: the earlier traces count; a new program's $lost1 events counted lost, none written"

# 3. Root deletes the user's traces: writing resumes at the next scan.
rm -rf "$TRACES"/rate-"$FPID"-* "$TRACES"/emit-*
wait_for 15 grep -q "uid $HUID: .*under its quota of $QUOTA_MB MiB again" "$T/traced.log" ||
	hfail "$WHAT: its traces deleted, the user was not found under its quota within 15 s"
$AS_HOSTILE "$HELPERS/emit" -t 1 -n 1000 >"$T/emit2.out" 2>&1 ||
	hfail "$WHAT: emit exited with $?: $(cat "$T/emit2.out")"
ctl trace-file flush >/dev/null
ticks=$(babeltrace2 "$TRACES"/emit-* 2>/dev/null | grep -c 'helpers:test_tick:' || true)
[ "$ticks" = 1000 ] ||
	hfail "$WHAT: under its quota again, the user's program had $ticks of 1000 ticks in the trace"
echo "its traces deleted: under its quota again, a new program traced whole"
stop_daemon
ok "$WHAT"
