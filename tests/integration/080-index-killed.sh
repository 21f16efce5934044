#!/bin/sh
# SPDX-License-Identifier: MIT
# The session index survives a daemon killed with SIGKILL mid-tracing.
# Two sessions complete (one losing events to a small ring), a third is
# tracing when traced gets SIGKILL.  After a restart:
#   - the database passes PRAGMA integrity_check (run by the restarted
#     daemon on the file as the killed one left it, and by the sqlite3
#     tool too when it is installed);
#   - the killed run's open session is "interrupted", with counts at most
#     the true ones (those of the last batch, a second or less before
#     the kill) and more than none;
#   - the completed sessions have exactly the counts the daemon had in
#     memory (events, drops by cause, events by name);
#   - the enable rules are the same as before;
#   - info sessions lists every session of both runs.
. "$(dirname "$0")/lib.sh"

DB="$T/state/index.db"

# field NAME: the value of "NAME" in each JSON item line on stdin.
field() { sed -n "s/.*\"$1\":\\([^,}]*\\).*/\\1/p"; }

# session_of PID: the index's session id of a process.
session_of() { ctl --json info sessions --pid "$1" | field session | head -n 1; }

# ended_sum SESSION KEY: KEY summed over the session's rings, from the
# daemon's memory (info trace keeps the last ended sessions).
ended_sum() {
	ctl --json info trace | grep "\"type\":\"ended_ring\",\"session\":$1," |
		field "$2" | awk '{ s += $1 } END { print s + 0 }'
}

# check_completed PID: the index has what the daemon counted.  Sets
# sid, ev and lost.
check_completed() {
	wait_for 10 sh -c "'$BIN/tracectl' --json info sessions --pid $1 |
		grep -q '\"how\":\"exited\"'" || fail "session of $1 did not end"
	sid=$(session_of "$1")
	ctl --json info session "$sid" > "$T/s$sid.json"
	ev=$(grep '"type":"session"' "$T/s$sid.json" | field events)
	lost=$(grep '"type":"session"' "$T/s$sid.json" | field lost)
	[ "$ev" = "$(ended_sum "$sid" events)" ] ||
		fail "session $sid: index has $ev events, daemon $(ended_sum "$sid" events)"
	[ "$lost" = "$(ended_sum "$sid" lost)" ] ||
		fail "session $sid: index has $lost lost, daemon $(ended_sum "$sid" lost)"
	byname=$(grep '"type":"event"' "$T/s$sid.json" | field count |
		awk '{ s += $1 } END { print s + 0 }')
	[ "$byname" = "$ev" ] ||
		fail "session $sid: events by name add up to $byname, not $ev"
	if grep -q '"name":"test_tick"' "$T/s$sid.json"; then
		fail "session $sid: test_tick counted though its rule is off"
	fi
}

# wait_events PID: until the process's events are registered.
wait_events() {
	wait_for 5 sh -c "'$BIN/tracectl' info trace-events test_marker |
		grep -q 'emit\\[$1\\]'" || fail "emit $1 registered no events"
}

# rules_state: every known event and its state, for the connected emit.
rules_state() {
	ctl --json info trace-events | sed -n 's/.*"name":\("[^"]*"\),"state":\("[a-z]*"\).*/\1 \2/p'
}

start_daemon --drain-interval 50
ctl trace-event test_tick off >/dev/null
ctl trace-event 'test_turned_*' off >/dev/null
ctl trace-event test_off_by_default on >/dev/null

# Two completed sessions: 4 events on per seq (mixed, ints, marker,
# off_by_default); the second loses some to an 8 KiB ring.
"$HELPERS/emit" -t 2 -n 5000 >/dev/null &
p1=$!
wait $p1 || fail "emit 1"
check_completed $p1
s1=$sid
[ "$ev" = 40000 ] && [ "$lost" = 0 ] ||
	fail "session $s1: $ev events, $lost lost; want 40000, 0"
for e in test_mixed test_ints test_marker test_off_by_default; do
	grep -q "\"name\":\"$e\",\"count\":10000}" "$T/s$s1.json" ||
		fail "session $s1: $e is not counted 10000 times"
done
TRACED_RING_SIZE=8K "$HELPERS/emit" -t 1 -n 40000 >/dev/null &
p2=$!
wait $p2 || fail "emit 2"
check_completed $p2
s2=$sid
[ $((ev + lost)) = 160000 ] || fail "session $s2: $ev events + $lost lost != 160000"
[ "$lost" -gt 0 ] || fail "session $s2 lost nothing: the test proves nothing"
grep -q '"type":"session".*"lost_by_cause":{"ring_full":[1-9]' "$T/s$s2.json" ||
	fail "session $s2: no ring_full drops by cause"
ok "completed sessions $s1 (40000 events) and $s2 ($ev events, $lost lost) as counted"

# The length of the whole CTF packets at the start of stream $1: each
# begins with the magic c1fc1fc1 (little-endian) and holds its size in
# bits at byte 56; the walk stops where one is not ours or runs past
# the end.
whole_packets() {
	od -An -v -tu1 "$1" | awk '
		{ for (i = 1; i <= NF; i++) b[n++] = $i }
		END {
			off = 0
			while (n - off >= 88) {
				if (b[off] != 193 || b[off + 1] != 31 ||
				    b[off + 2] != 252 || b[off + 3] != 193)
					break
				s = 0
				for (i = 7; i >= 0; i--)
					s = s * 256 + b[off + 56 + i]
				s = s / 8
				if (s < 88 || s > n - off || s != int(s))
					break
				off += s
			}
			print off
		}'
}

# The third is tracing when the daemon is killed.
"$HELPERS/emit" -t 1 -i 200 -s "$T/stop" > "$T/emit3.out" &
p3=$!
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$p3\\]'" ||
	fail "emit 3 did not connect"
wait_events $p3
rules_state > "$T/rules.before"
[ -s "$T/rules.before" ] || fail "no event states before the kill"
sleep 1.6		# at least one batch
kill -9 "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null || true
DAEMON_PID=
rm -f "$TRACED_RUNTIME_DIR/control.sock" "$TRACED_RUNTIME_DIR/client.sock"
touch "$T/stop"
wait $p3 || fail "emit 3 failed without its daemon"
n3=$(sed -n 's/emitted //p' "$T/emit3.out")

# What a write cut by the kill leaves: part of a packet at the end of a
# stream, part of a declaration at the end of the metadata.  The next
# daemon cuts them back (repair.c).
d3=$(ls -d "$TRACES"/emit-$p3-*)
s3=$(ls "$d3"/stream-* | head -n 1)
# The kill itself may have cut a write (a buffered write stops at a page
# when the writer gets SIGKILL), so what is whole is read off the file:
# the packets from the start whose header is ours and whose size fits.
good3=$(whole_packets "$s3")
size3=$(stat -c %s "$s3")
[ "$good3" -gt 0 ] || fail "no whole packet in $s3 ($size3 bytes)"
[ "$good3" = "$size3" ] ||
	echo "note: the kill cut a write of $s3: $good3 of $size3 bytes whole"
# Half of the stream's first packet: a header whose size runs past the
# end of the file (a fixed 4000 bytes could hold a whole first packet).
first=$(($(od -An -tu8 -j56 -N8 "$s3" | tr -d ' ') / 8))
[ "$first" -gt 88 ] || fail "the first packet of $s3 is $first bytes"
head -c $((first / 2)) "$s3" >> "$s3"
printf 'event {\n\tname = "torn' >> "$d3/metadata"
! babeltrace2 "$d3" >/dev/null 2>&1 || fail "a torn packet went unnoticed by babeltrace2"

if command -v sqlite3 >/dev/null 2>&1; then
	r=$(sqlite3 "$DB" 'PRAGMA integrity_check')
	[ "$r" = ok ] || fail "integrity_check after SIGKILL: $r"
	ok "sqlite3: integrity_check ok after SIGKILL"
else
	echo "note: no sqlite3 tool; the integrity check is the daemon's own"
fi

start_daemon --drain-interval 50
wait_for 10 grep -q "index $DB: integrity_check ok" "$T/traced.log" ||
	fail "the restarted daemon did not find the index sound"
grep -q "1 session of a daemon that did not stop cleanly marked interrupted" \
	"$T/traced.log" || fail "no interrupted session at restart"

ctl --json info sessions --pid $p3 > "$T/s3.json"
grep -q '"how":"interrupted"' "$T/s3.json" || fail "session of $p3: $(cat "$T/s3.json")"
ev3=$(grep '"session"' "$T/s3.json" | field events)
ended3=$(grep '"session"' "$T/s3.json" | field ended_ns)
[ "$ev3" -gt 0 ] || fail "interrupted session: no events indexed (no batch ran?)"
[ "$ev3" -le $((4 * n3)) ] || fail "interrupted session: $ev3 events, more than $((4 * n3)) emitted"
[ "$ended3" != null ] || fail "interrupted session has no end"
ok "interrupted session: $ev3 of $((4 * n3)) events indexed before the kill"
[ "$(stat -c %s "$s3")" = "$good3" ] ||
	fail "the torn packet of $s3 is still there: $(stat -c %s "$s3") bytes, $good3 whole"
grep -q "cut back from .* a daemon killed while writing left part of a packet" "$T/traced.log" &&
	grep -q "metadata: cut back" "$T/traced.log" || fail "the repairs are not logged"
babeltrace2 "$d3" >/dev/null 2>"$T/bt3.err" ||
	fail "the killed run's session does not read after the repair: $(head -c 300 "$T/bt3.err")"
ok "a torn packet and a torn declaration of the killed run cut back; the session reads"

# The rules are the same: the same states for a new process's events.
"$HELPERS/emit" -t 1 -i 1000 -s "$T/stop4" >/dev/null &
p4=$!
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$p4\\]'" ||
	fail "emit 4 did not connect"
wait_events $p4
rules_state > "$T/rules.after"
cmp "$T/rules.before" "$T/rules.after" >/dev/null ||
	fail "rules differ after the restart: $(diff "$T/rules.before" "$T/rules.after")"
touch "$T/stop4"
wait $p4
check_completed $p4
ok "rules kept: $(tr '\n' ' ' < "$T/rules.after")"

# Every session of both runs, with how it ended; the counts of the
# completed ones unchanged by the restart.
ctl --json info sessions > "$T/all.json"
[ "$(grep -c '"session":' "$T/all.json")" = 4 ] ||
	fail "info sessions: $(cat "$T/all.json")"
for p in $p1 $p2 $p4; do
	grep "\"pid\":$p," "$T/all.json" | grep -q '"how":"exited"' ||
		fail "session of $p is not listed as exited"
done
[ "$(ctl --json info session "$s1" | grep '"type":"session"' | field events)" = 40000 ] ||
	fail "session $s1 changed after the restart"
[ "$(ctl --json info session "$s2" | grep '"type":"session"' | field lost)" = \
	"$(grep '"type":"session"' "$T/s$s2.json" | field lost)" ] ||
	fail "session $s2 changed after the restart"
runs=$(field run < "$T/all.json" | sort -u | wc -l)
[ "$runs" = 2 ] || fail "sessions of $runs runs, not 2"
ok "info sessions lists the 4 sessions of both runs"
