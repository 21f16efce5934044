#!/bin/sh
# SPDX-License-Identifier: MIT
# In-band ring handover (proto/ring.h, Handover): threads that start
# one after the other each take the ring the one before left, with a
# THREAD record and no message to the daemon.  Every thread's events
# come out, all of them, in order, each under its own thread id, with
# its own count and no loss; the daemon says the handovers happened and
# got few rings by message.  A ring no new thread takes is finished
# the other way within a second, while the program still runs.
. "$(dirname "$0")/lib.sh"

start_daemon --verbose
WAVES=200
N=20			# seq values per thread; 5 enabled events each

"$HELPERS/emit" -t 1 -w $WAVES -n $N > "$T/emit.out" || fail "emit failed"
[ "$(cat "$T/emit.out")" = "emitted $((WAVES * N))" ] ||
	fail "emit: $(cat "$T/emit.out")"
ended_trace "$TRACES"

# Per thread: test_tick's seq 0 .. N-1 in order, 5 * N events in all.
check_emit_threads "$T/out.txt" $N $WAVES

# The daemon's books: a ring per thread, each with its 5 * N events
# (the ticks of test_tick and the rest) and nothing lost.
grep -o '"type":"ended_ring","session":[0-9]*,"tid":[0-9]*,"events":[0-9]*,"lost":[0-9]*' \
	"$T/info.json" > "$T/rings"
[ "$(wc -l < "$T/rings")" = $WAVES ] ||
	fail "$WAVES threads, the daemon ended $(wc -l < "$T/rings") rings"
awk -F'[:,]' -v e=$((5 * N)) '$8 != e || $10 != 0 { print; exit 1 }' \
	"$T/rings" > "$T/badring" ||
	fail "a thread's books are wrong: $(cat "$T/badring")"
# Each ring's tid is one the trace has, once.
sed 's/.*"tid":\([0-9]*\).*/\1/' "$T/rings" | sort > "$T/ring.tids"
cut -d' ' -f1 "$T/ticks" | sort -u > "$T/trace.tids"
cmp -s "$T/ring.tids" "$T/trace.tids" ||
	fail "the daemon's threads are not the trace's"

# In-band: most threads took a ring the one before left, and the
# daemon got a handful of rings by message, not one per thread.
handed=$(grep -c "goes on in its ring as ring" "$T/traced.log" || true)
sent=$(grep -c "session [0-9]*: ring [0-9]*, thread" "$T/traced.log" || true)
[ "$handed" -ge $((WAVES * 3 / 4)) ] ||
	fail "$handed of $WAVES threads took their ring in-band"
[ "$sent" -le $((WAVES / 8)) ] ||
	fail "$sent rings sent by message for $WAVES threads"
files=$(ls "$TRACES"/*/ | grep -c '^stream-')
[ "$files" -le "$sent" ] || fail "$files stream files for $sent rings"
ok "$WAVES threads one after the other: $handed took their ring in-band, $sent rings by message, $files stream files; every event of each, in order, under its own tid"

# A ring no thread takes: finished the other way while the program
# still runs (the second wave waits for a file).
rm -f "$T/go"
"$HELPERS/emit" -t 1 -w 2 -n $N -W "$T/go" > "$T/emit2.out" 2> "$T/emit2.err" &
p=$!
wait_for 10 grep -q "wave 1 ended" "$T/emit2.err" || fail "no first wave"
wait_for 5 sh -c "'$BIN/tracectl' --json info trace |
	grep -q '\"type\":\"ring\",\"session\":[0-9]*,\"tid\":[0-9]*,.*\"state\":\"finished\"'" ||
	fail "the first thread's ring is not finished while the program runs: $("$BIN/tracectl" info trace | tail -n 5)"
touch "$T/go"
wait $p || fail "emit 2 failed"
[ "$(cat "$T/emit2.out")" = "emitted $((2 * N))" ] ||
	fail "emit 2: $(cat "$T/emit2.out")"
ok "a ring no thread took is finished while its program runs"

# Records longer than the daemon's first read of a passed-on ring
# (4 KiB; drain.c, DRAIN_READ_FIRST): test_mixed with a 4095-byte
# string, a record of over 4 KiB, so that records also straddle the
# ends of reads.  Each comes out whole, every thread's events in order.
W3=40
N3=10
handed0=$(grep -c "goes on in its ring as ring" "$T/traced.log" || true)
"$HELPERS/emit" -t 1 -w $W3 -n $N3 -L 4095 > "$T/emit3.out" &
p=$!
emit_ended $p "$T/emit3.out" $((W3 * N3))
ended_trace "$EMIT_DIR" $p
check_emit_threads "$T/out.txt" $N3 $W3
handed3=$(( $(grep -c "goes on in its ring as ring" "$T/traced.log" || true) - handed0 ))
[ "$handed3" -ge $((W3 / 2)) ] ||
	fail "$handed3 of $W3 threads of long records took their ring in-band"
sed -n 's/.*helpers:test_mixed: .*seq = \([0-9]*\),.*str = "\([^"]*\)".*/\1 \2/p' \
	"$T/out.txt" | awk '{ s = $2; sub(/x*$/, "", s)
		if (length($2) != 4095 || s !~ ("^w0-s" $1 "-$")) { print; exit 1 }
		n++ } END { if (n != '$((W3 * N3))') { print n " strings"; exit 1 } }' \
	> "$T/badstr" || fail "a long string came out wrong: $(head -c 200 "$T/badstr")"
ok "$W3 threads of 4 KiB records, $handed3 in passed-on rings: every record whole, in order"
