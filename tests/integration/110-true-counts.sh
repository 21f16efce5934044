#!/bin/sh
# SPDX-License-Identifier: MIT
# What traced reports is so (issue 10, points 1, 3 and 4):
#   1. metadata that cannot be written (a full disk) is written later,
#      and meanwhile no event is counted as written that a reader could
#      not read: every stream reads, and in the trace + lost = emitted;
#   3. a trace directory deleted while tracing is noticed: the events
#      written there are counted as lost ('deleted'), flush fails
#      saying so, tracing goes on in the directory made again;
#   4. after trace-file set, babeltrace2 reads the old and the new
#      directory together without a word about discarded packets;
#   5. a trace directory that cannot be made again leaves no session
#      waiting forever: flush says why, SIGTERM stops the daemon.
. "$(dirname "$0")/lib.sh"
bg_track_init

# emitted_of FILE: the count emit printed ("emitted N").
emitted_of() { sed -n 's/^emitted \([0-9]*\).*/\1/p' "$1"; }

# ---- 4. trace-file set: two directories, two traces ----------------
start_daemon --drain-interval 20
"$HELPERS/emit" -t 2 -i 200 -s "$T/stop4" > "$T/emit4.out" &
e4=$!
bg_track $e4
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$e4\\]'" ||
	fail "emit did not connect"
sleep 0.5
ctl trace-file set "$T/second" > "$T/set.out" || fail "trace-file set: $(cat "$T/set.out")"
grep -q "(created)" "$T/set.out" || fail "set did not say it created $T/second: $(cat "$T/set.out")"
sleep 0.5
touch "$T/stop4"
wait $e4 || fail "emit"
ctl trace-file flush > /dev/null || fail "flush"
n=$(emitted_of "$T/emit4.out")
bt "$TRACES" "$T/second" > "$T/both.txt" 2> "$T/both.err" ||
	fail "babeltrace2 on both directories: $(head -c 400 "$T/both.err")"
! grep -q "discarded" "$T/both.err" ||
	fail "point 4: babeltrace2 reports discarded packets or events: $(head -c 600 "$T/both.err")"
ticks=$(count_events "$T/both.txt" test_tick)
[ "$ticks" = "$n" ] || fail "point 4: $ticks ticks in the two directories, $n emitted"
ok "point 4: trace-file set: old and new directory read together, $ticks of $n ticks, nothing called discarded"
ctl trace-file set default > /dev/null || fail "trace-file set default"
stop_daemon

# ---- 3. the trace directory deleted while tracing --------------------
start_daemon --drain-interval 20
"$HELPERS/emit" -t 1 -i 100 -s "$T/stop3" > "$T/emit3.out" &
e3=$!
bg_track $e3
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$e3\\]'" ||
	fail "emit did not connect"
sleep 0.5
ctl trace-file flush > /dev/null || fail "first flush"
rm -rf "$TRACES"
set +e
ctl trace-file flush > "$T/flush3.out" 2>&1
rc=$?
set -e
[ $rc = 1 ] || fail "point 3: flush after rm -rf exited $rc: $(cat "$T/flush3.out")"
grep -q "deleted" "$T/flush3.out" || fail "point 3: flush does not say why: $(cat "$T/flush3.out")"
grep -q "was deleted while tracing" "$T/traced.log" || fail "point 3: nothing logged"
sleep 0.5
touch "$T/stop3"
wait $e3 || fail "emit"
ctl trace-file flush > /dev/null || fail "flush after the directory came back"
[ -d "$TRACES" ] || fail "point 3: the trace directory was not made again"
ctl --json info trace > "$T/info3.json"
# The invariant: ticks on disk now + lost (deleted) = emitted, where the
# daemon counts each of the 4 kinds the same way.
n=$(emitted_of "$T/emit3.out")
bt "$TRACES" > "$T/after.txt" 2>/dev/null || fail "babeltrace2 after the deletion"
# Every enabled kind (mixed, ints, tick, marker, turned_off: 5 per
# tick): the events on disk now plus those counted as deleted.
ondisk=$(grep -c " helpers:test_" "$T/after.txt" || true)
deleted=$(jq '[.items[] | select(.type == "ended_ring") | .lost_by_cause.deleted] | add // 0' "$T/info3.json")
[ "$deleted" -gt 0 ] || fail "point 3: no event counted as lost to 'deleted': $(cat "$T/info3.json")"
[ $((ondisk + deleted)) = $((n * 5)) ] ||
	fail "point 3: $ondisk events on disk + $deleted deleted != $((n * 5)) emitted"
ok "point 3: rm -rf noticed: flush failed saying so, $deleted events counted as deleted, $ondisk on disk, sum exact"
stop_daemon

# ---- 5. the trace directory deleted for good -----------------------
# A component of its path turns into a file: it cannot be made again.
# The session's events wait in its rings, said once (not every second);
# a flush answers, saying why, rather than waiting forever; SIGTERM
# still stops the daemon, counting what the rings held as lost.
TRACES="$T/gone/a/traces"
mkdir -p "$TRACES"
# log5: what this daemon logged.
l5=$(wc -l < "$T/traced.log")
log5() { tail -n +$((l5 + 1)) "$T/traced.log"; }
start_daemon --drain-interval 20
"$HELPERS/emit" -t 1 -i 100 -s "$T/stop5" > "$T/emit5.out" &
e5=$!
bg_track $e5
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$e5\\]'" ||
	fail "emit did not connect"
sleep 0.3
rm -rf "$T/gone/a"
touch "$T/gone/a"
wait_for 5 grep -q "no new directory can be made" "$T/traced.log" ||
	fail "point 5: the lost directory is not logged"
set +e
timeout 20 "$BIN/tracectl" trace-file flush > "$T/flush5.out" 2>&1
rc=$?
set -e
[ $rc = 1 ] || fail "point 5: flush with no directory exited $rc: $(cat "$T/flush5.out")"
grep -q "no new one can be made" "$T/flush5.out" ||
	fail "point 5: flush does not say why: $(cat "$T/flush5.out")"
sleep 2.5
[ "$(log5 | grep -c "was deleted while tracing")" = 1 ] ||
	fail "point 5: the deletion was logged more than once: $(log5 | grep -c "was deleted while tracing")"
[ "$(log5 | grep -c "no new directory can be made")" = 1 ] ||
	fail "point 5: the wait was logged more than once"
touch "$T/stop5"
wait $e5 || fail "emit"
kill "$DAEMON_PID"
i=0
while ! exited "$DAEMON_PID"; do
	i=$((i + 1))
	[ $i -lt 200 ] || { kill -9 "$DAEMON_PID"; fail "point 5: traced did not stop within 10 s of SIGTERM"; }
	sleep 0.05
done
wait "$DAEMON_PID" || fail "point 5: traced exited with status $? on SIGTERM"
DAEMON_PID=
grep -q "stops with no directory to write in: the events left in its rings are counted as lost" "$T/traced.log" ||
	fail "point 5: the events left are not said to be lost"
ok "point 5: no directory to be had: said once, flush answered ($(cat "$T/flush5.out" | head -c 60)...), SIGTERM stopped it within $((i * 50)) ms"
TRACES="$T/traces"

# ---- 1. metadata on a full disk -------------------------------------
if [ "$(id -u)" = 0 ] && mkdir -p "$T/disk" &&
    mount -t tmpfs -o size=1m,mode=0755 traced-110 "$T/disk" 2>/dev/null; then
	on_exit 'umount "$T/disk" 2>/dev/null || umount -l "$T/disk" 2>/dev/null || true'
	TRACES="$T/disk/traces"
	start_daemon --drain-interval 20
	# Fill the disk, leaving nothing for a metadata file.
	dd if=/dev/zero of="$T/disk/filler" bs=4k count=1000 2>/dev/null || true
	"$HELPERS/emit" -t 1 -n 500 > "$T/emit1.out" || fail "emit"
	sleep 0.3
	ctl info trace > "$T/info1.txt"
	grep -q "METADATA NOT WRITTEN" "$T/info1.txt" ||
		fail "point 1: info trace does not say the metadata is missing: $(cat "$T/info1.txt")"
	ctl --json info trace > "$T/info1.json"
	[ "$(jq '[.items[] | select(.type == "session" or .type == "ring") | .events] | add // 0' "$T/info1.json")" = 0 ] ||
		fail "point 1: events counted as written with no metadata: $(cat "$T/info1.json")"
	rm -f "$T/disk/filler"
	wait_no_sessions 10 || fail "point 1: the session never ended: $(ctl info trace)"
	ctl trace-file flush > /dev/null || fail "flush"
	bt "$TRACES" > "$T/md.txt" 2> "$T/md.err" ||
		fail "point 1: the trace is unreadable: $(head -c 400 "$T/md.err")"
	n=$(count_events "$T/md.txt" test_tick)
	[ "$n" = 500 ] || fail "point 1: $n ticks after the metadata was written late, 500 emitted"
	grep -q "metadata of .* written after all" "$T/traced.log" ||
		fail "point 1: the late metadata is not logged"
	ok "point 1: metadata written once space came back; all 500 ticks read, none counted before"
	stop_daemon
else
	echo "point 1 not tried: needs root to mount a tmpfs"
fi
