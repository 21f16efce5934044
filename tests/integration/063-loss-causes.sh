#!/bin/sh
# SPDX-License-Identifier: MIT
# A loss warning says what the daemon saw and the fix that applies, not
# always "bigger rings".  Four programs lose events, each for its own
# reason, and each session's warning names it:
#   - bursts larger than a ring at its largest size, drained on time:
#     a full ring, the fix is bigger rings;
#   - the daemon stopped (SIGSTOP) while a program traced: its drain
#     thread came late, it did not get the CPU, the fix is CPU for it;
#   - a disk that stops answering (TRACED_TEST_WRITE_STALL_MS, a seam
#     for this test): staging filled with the writes waiting on the
#     disk, the fix is a faster disk or fewer events;
#   - its daemon killed and started again: the rings filled with nobody
#     to drain them, the fix is to keep a daemon running.
# A warning may name more than one cause (a busy machine makes the drain
# thread late too), and the first one of a session is said at its first
# loss, before the daemon may know its rings' rates; each case checks
# that its own cause is named in one of the session's warnings, the last
# of which comes when the session ends.
. "$(dirname "$0")/lib.sh"

warning_of() {	# PID: the loss warnings of that program's session
	grep "\[$1\] lost [0-9]* events (thread" "$T/traced.log"
}

# 1. Bursts of ~30 KiB every millisecond into rings of at most 8 KiB.
start_daemon
TRACED_RING_SIZE=8K "$HELPERS/emit" -t 1 -r 100000 -T 0.5 > /dev/null &
p=$!
wait $p || fail "emit exited with $?"
wait_no_sessions 10 || fail "sessions left"
w=$(warning_of $p)
case $w in
*"a ring at its largest size, 8K, fills up faster than the daemon can visit it: give the program bigger rings (TRACED_RING_SIZE=32K"*) ;;
*) fail "bursts: $w" ;;
esac
# Losses after the first warning are said too: the log adds up to what
# 'info trace' counts.
said=$(echo "$w" | sed 's/.* lost \([0-9]*\) events (thread.*/\1/' |
	awk '{ n += $1 } END { print n + 0 }')
sid=$(ctl --json info trace | sed -n "s/.*\"type\":\"ended_session\",\"session\":\([0-9]*\),\"pid\":$p,.*/\1/p")
counted=$(ctl --json info trace |
	grep "\"type\":\"ended_ring\",\"session\":$sid," |
	sed 's/.*"lost":\([0-9]*\),.*/\1/' | awk '{ n += $1 } END { print n + 0 }')
[ "$said" -gt 0 ] && [ "$said" = "$counted" ] ||
	fail "bursts: the log says $said lost, info trace $counted"
ok "bursts bigger than the ring: $w"

# 2. The daemon does not run for 600 ms while a program traces 300 KiB
# a second into 8 KiB rings.  At nice 0 already, the advice is more CPU
# from its unit, not a lower --writeout-nice.
TRACED_RING_SIZE=8K "$HELPERS/emit" -t 1 -r 1000 -s "$T/stop" > /dev/null &
p=$!
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$p\\]'" ||
	fail "emit did not connect"
sleep 0.3
kill -STOP "$DAEMON_PID"
sleep 0.6
kill -CONT "$DAEMON_PID"
sleep 0.5
touch "$T/stop"
wait $p || fail "emit exited with $?"
wait_no_sessions 10 || fail "sessions left"
w=$(warning_of $p)
case $w in
*"rings filled up while the daemon's drain thread waited "*" ms for a CPU (the machine is busy; it runs at nice 0): give traced more CPU (Nice= or CPUWeight= in its unit)"*) ;;
*) fail "daemon stopped: $w" ;;
esac
ok "a daemon that did not run: $w"
stop_daemon

# 3. The first write stalls for 7 s: staging (128 MiB, its reserve
# included) and then the rings (of up to 2 MiB, 100 ms each) fill up
# behind it.
rm -rf "$TRACES"
TRACED_TEST_WRITE_STALL_MS=7000 start_daemon
TRACED_RING_SIZE=2M "$HELPERS/emit" -t 2 -r 150000 -T 5 > /dev/null &
p=$!
wait $p || fail "emit exited with $?"
wait_no_sessions 30 || fail "sessions left"
w=$(warning_of $p)
case $w in
*"rings filled up while the daemon's staging memory was full, its writes waiting on the disk: the disk under $TRACES takes the trace more slowly than the program writes it; trace to a faster disk ('tracectl trace-file set DIR') or trace fewer events"*) ;;
*) fail "stalled disk: $w" ;;
esac
lost=$(ctl --json info trace | grep '"type":"ended_ring"' |
	sed 's/.*"lost":\([0-9]*\),.*/\1/' | awk '{ n += $1 } END { print n + 0 }')
[ "$lost" -gt 0 ] || fail "stalled disk: no loss counted"
ok "a disk that stopped: $w"
# The staging past the 64 MiB kept for good went back once empty.
peak=$(awk '/^VmHWM/ { print $2 }' "/proc/$DAEMON_PID/status")
rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$DAEMON_PID/status")
[ "$peak" -gt $((100 * 1024)) ] ||
	fail "stalled disk: staging never took in more than 64 MiB (peak $peak KiB)"
[ "$rss" -lt $((peak - 32 * 1024)) ] ||
	fail "stalled disk: the daemon holds $rss KiB after a peak of $peak"
ok "staging's reserve given back: $rss KiB after a peak of $peak"
stop_daemon
rm -rf "$TRACES"

# 4. The daemon dies under a program that traces and comes back half a
# second later: the new session hears of what was lost meanwhile.
start_daemon
TRACED_RING_SIZE=8K "$HELPERS/emit" -t 1 -r 1000 -s "$T/stop2" > /dev/null &
p=$!
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$p\\]'" ||
	fail "emit did not connect"
kill_daemon_hard
sleep 0.5
start_daemon
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$p\\]'" ||
	fail "emit did not come back"
sleep 0.3
touch "$T/stop2"
wait $p || fail "emit exited with $?"
wait_no_sessions 10 || fail "sessions left"
w=$(warning_of $p)
case $w in
*"no daemon was draining its rings for a while (they hold up to 8K each; start traced before the program"*) ;;
*) fail "no daemon: $w" ;;
esac
ok "no daemon: $w"
stop_daemon
