#!/bin/sh
# SPDX-License-Identifier: MIT
# Thread churn: threads that trace a little and exit, wave after wave,
# while the connection thread frees the rings of those that finished
# and the daemon drains the rest.  Every thread's events come out, all
# of them, in order, and each finished ring is ended by the daemon.
# A wave's threads go on in the streams the last wave's left: far fewer
# files than threads, each packet naming its thread, which babeltrace2
# and tracectl (print, stats) both see.
# Under TSan (make check-tsan) this is the test of the hand-over of a
# finished ring from its exiting thread to the connection thread.
. "$(dirname "$0")/lib.sh"

start_daemon
THREADS=8
WAVES=40
N=50			# seq values per thread; 5 enabled events each

TRACED_RING_SIZE=64K "$HELPERS/emit" -t $THREADS -w $WAVES -n $N \
	> "$T/emit.out" || fail "emit failed"
[ "$(cat "$T/emit.out")" = "emitted $((THREADS * WAVES * N))" ] ||
	fail "emit: $(cat "$T/emit.out")"
ended_trace "$TRACES"

# Per thread: 5 * N events, and test_tick's seq runs 0 .. N-1 in order.
check_emit_threads "$T/out.txt" $N $((THREADS * WAVES))

# The daemon saw every ring finish, and lost nothing.
rings=$(grep -o '"type":"ended_ring","session":[0-9]*,"tid":[0-9]*,"events":[0-9]*,"lost":0' \
	"$T/info.json" | wc -l)
[ "$rings" = $((THREADS * WAVES)) ] ||
	fail "$((THREADS * WAVES)) rings finished, the daemon ended $rings with no loss"

# Streams shared by the threads that came one after the other.
files=$(ls "$TRACES"/*/ | grep -c '^stream-')
[ "$files" -le $((THREADS * WAVES / 4)) ] ||
	fail "$files stream files for $((THREADS * WAVES)) threads of $WAVES waves"
# tracectl sees each event's own thread, as babeltrace2 does.
sed -n 's/.*helpers:test_[a-z_]*: { tid = \([0-9]*\) }.*/\1/p' "$T/out.txt" |
	sort | uniq -c | sort -k2 > "$T/bt.tids"
"$BIN/tracectl" print --json "$TRACES" > "$T/print.json" ||
	fail "tracectl print"
jq -r 'select(.type == "event") | .tid' "$T/print.json" | sort | uniq -c |
	sort -k2 > "$T/tp.tids"
cmp -s "$T/bt.tids" "$T/tp.tids" ||
	fail "events per thread differ: babeltrace2 $(head -n 2 "$T/bt.tids" | tr '\n' ' ')... tracectl $(head -n 2 "$T/tp.tids" | tr '\n' ' ')..."
n=$("$BIN/tracectl" stats --json "$TRACES" | jq '.threads | length')
[ "$n" = $((THREADS * WAVES)) ] || fail "tracectl stats: $n threads"
t=$(awk 'NR == 7 { print $2 }' "$T/bt.tids")
n=$("$BIN/tracectl" print --tid "$t" "$TRACES" | wc -l)
[ "$n" = $((5 * N)) ] || fail "print --tid $t: $n events"
ok "$((THREADS * WAVES)) short-lived threads: every event of each, in order, in $files stream files"
