#!/bin/sh
# SPDX-License-Identifier: MIT
# A program that ends before the daemon answers it (the daemon busy, or
# stopped for a moment) is counted all the same (issue 10, point 2):
# its rings go to the daemon as soon as its HELLO is out, and at exit,
# so once the daemon runs again it drains them, losses included.  The
# program's own rules (TRACED_EVENTS) turn its events on while no
# daemon has answered.  Events in the trace + lost = emitted, in the
# trace and in info trace.
. "$(dirname "$0")/lib.sh"

# check RING: the last session's counts, in info trace and on disk.
check() {
	emitted=$(sed -n 's/^emitted //p' "$T/emit.out")
	want=$((6 * emitted))	# test_* is all six kinds of emit
	wait_no_sessions 10 || fail "the session did not end: $(ctl info trace)"
	ctl trace-file flush > /dev/null || fail "flush"
	ctl --json info trace > "$T/info.json"
	daemon=$(jq '([.items[] | select(.type == "ended_session") |
	    .session] | max) as $s | [.items[] | select(.type ==
	    "ended_ring" and .session == $s) | .events + .lost] | add // 0' \
	    "$T/info.json")
	[ "$daemon" = "$want" ] ||
		fail "rings of $1: info trace says events + lost = $daemon, $want emitted"
	bt "$TRACES" > "$T/out.txt" 2> "$T/warn.txt" ||
		fail "babeltrace2: $(head -c 300 "$T/warn.txt")"
	ontrace=$(grep -c " helpers:test_" "$T/out.txt" || true)
	disc=$(tr -d '\n' < "$T/warn.txt" | sed 's/WARNING/\nWARNING/g' |
		sed -n 's/.*discarded \([0-9]*\) events.*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }')
	[ "$ontrace" -gt 0 ] ||
		fail "rings of $1: nothing in the trace: the rings never reached the daemon"
	[ $((ontrace + disc)) = "$want" ] ||
		fail "rings of $1: $ontrace in the trace + $disc discarded != $want emitted"
	ok "rings of $1, a program that ended while its daemon was stopped: $ontrace events in the trace + $disc lost = $want emitted, as info trace says"
	rm -rf "$TRACES"
}

# run RING_SIZE COUNT THREADS: emit runs and ends while the daemon is
# stopped.
run() {
	kill -STOP "$DAEMON_PID"
	TRACED_EVENTS='test_*' TRACED_RING_SIZE=$1 TRACED_CONNECT_TIMEOUT_MS=100 \
		$SCHED "$HELPERS/emit" -t "$3" -n "$2" > "$T/emit.out" ||
		{ kill -CONT "$DAEMON_PID"; fail "emit"; }
	kill -CONT "$DAEMON_PID"
	check "$1"
}

start_daemon --drain-interval 20
on_exit 'kill -CONT "$DAEMON_PID" 2>/dev/null || true'
# The main thread's ring, which never fills to the point of asking for
# a drain and whose thread never ends, in a process whose connection
# thread cannot run until the main thread blocks (both on one CPU,
# first-in first-out at the same priority): it does not run again
# before the exit.  Then small rings of two threads that fill, so that
# events are lost too.
SCHED=
if [ "$(id -u)" = 0 ] && chrt -f 10 true 2>/dev/null; then
	SCHED="chrt -f 10 taskset -c 0"
fi
run 1M 300 0
SCHED=
run 64K 50000 2

# Threads that end while no daemon runs at all: what their rings hold
# is lost, and counted (lost while disconnected) for the daemon that
# comes next; what the threads of the next wave write reaches it.
stop_daemon
rm -rf "$TRACES"
TRACED_EVENTS='test_*' TRACED_CONNECT_TIMEOUT_MS=100 \
	"$HELPERS/emit" -t 2 -n 3000 -w 2 -W "$T/go" > "$T/emit.out" \
	2> "$T/emit.err" &
e=$!
on_exit "kill $e 2>/dev/null || true"
wait_for 20 grep -q "wave 1 ended" "$T/emit.err" || fail "emit: no first wave"
sleep 0.3		# its connection thread frees the finished rings
start_daemon --drain-interval 20
wait_for 10 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$e\\]'" ||
	fail "emit did not connect to the new daemon"
touch "$T/go"
wait $e || fail "emit: $(cat "$T/emit.err")"
emitted=$(sed -n 's/^emitted //p' "$T/emit.out")
want=$((6 * emitted))
wait_no_sessions 10 || fail "the session did not end: $(ctl info trace)"
ctl trace-file flush > /dev/null || fail "flush"
ctl --json info trace > "$T/info.json"
s=$(jq '[.items[] | select(.type == "ended_session") | .session] | max' "$T/info.json")
disc=$(jq --argjson s "$s" '[.items[] | select(.type == "ended_session" and
    .session == $s) | .lost_before_connect] | add // 0' "$T/info.json")
rings=$(jq --argjson s "$s" '[.items[] | select(.type == "ended_ring" and
    .session == $s) | .events + .lost] | add // 0' "$T/info.json")
events=$(jq --argjson s "$s" '[.items[] | select(.type == "ended_ring" and
    .session == $s) | .events] | add // 0' "$T/info.json")
[ "$disc" -gt 0 ] ||
	fail "the first wave's events are not counted as lost while disconnected: $(ctl info session "$s")"
[ $((rings + disc)) = "$want" ] ||
	fail "events + lost ($rings) + lost while disconnected ($disc) != $want emitted"
ontrace=$(bt "$TRACES" 2>/dev/null | grep -c " helpers:test_" || true)
[ "$ontrace" = "$events" ] ||
	fail "$ontrace events in the trace, info trace says $events"
ok "threads that ended with no daemon: $disc events counted as lost while disconnected; $events in the trace; the sum is the $want emitted"
