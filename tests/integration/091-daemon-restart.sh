#!/bin/sh
# SPDX-License-Identifier: MIT
# Programs survive their daemon.  Four programs trace steadily while
# traced is killed with SIGKILL and started again, three times.  They
# never block: no trace call but a thread's first switches voluntarily
# or takes a page fault (read around each call with getrusage), and
# every one, timed inside the program, stays under TRACE_CALL_MAX_NS
# (1 ms; 5 ms under ASan) unless the scheduler preempted it.  They never
# crash, come back as new sessions within 2 s of each restart, and what
# they lost while no daemon ran is counted: the new session's
# lost_before_connect ('info trace') and the 'disconnected' field of
# the traced:lost records in its trace.
. "$(dirname "$0")/lib.sh"
bg_track_init

NPROG=4
# The bound is the plain build's: under ASan every access is checked,
# and on a shared 2-CPU machine that alone has taken a call past 1 ms.
if [ "${SANITIZE:-}" = 1 ]; then
	MAX_NS=${TRACE_CALL_MAX_NS:-5000000}
else
	MAX_NS=${TRACE_CALL_MAX_NS:-1000000}
fi
DOWN=1			# seconds without a daemon: 16 KiB rings fill

# The pids of our programs among the connected sessions, one per line.
connected_pids() {
	ctl --json info trace 2>/dev/null |
		sed -n 's/.*"type":"session",.*"pid":\([0-9]*\),.*"state":"connected".*/\1/p' |
		sort -n
}
all_connected() {
	[ "$(connected_pids | tr '\n' ' ')" = "$PIDS_SORTED" ]
}

start_daemon
PIDS=
k=0
while [ $k -lt $NPROG ]; do
	k=$((k + 1))
	TRACED_RING_SIZE=16K "$HELPERS/steady" -t 2 -i 200 -s "$T/stop" \
		-T 60 > "$T/steady.$k" 2>&1 &
	PIDS="$PIDS $!"
	bg_track $!
done
PIDS_SORTED=$(printf '%s\n' $PIDS | sort -n | tr '\n' ' ')
wait_for 5 all_connected || fail "programs did not connect: $(ctl info trace)"
ctl --json info trace > "$T/info.0"

round=0
while [ $round -lt 3 ]; do
	round=$((round + 1))
	sleep 0.5
	kill_daemon_hard
	sleep $DOWN
	start_daemon
	t0=$(date +%s%N)
	wait_for 3 all_connected ||
		fail "restart $round: programs did not come back: $(ctl info trace)"
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	[ $ms -le 2000 ] || fail "restart $round: took $ms ms to reconnect"
	ctl --json info trace > "$T/info.$round"
	for p in $PIDS; do
		kill -0 "$p" 2>/dev/null || fail "restart $round: program $p died"
		lbc=$(sed -n "s/.*\"type\":\"session\",.*\"pid\":$p,.*\"lost_before_connect\":\([0-9]*\),.*/\1/p" "$T/info.$round")
		[ "${lbc:-0}" -gt 0 ] ||
			fail "restart $round: program $p lost nothing while no daemon ran? lost_before_connect=${lbc:-none}"
		echo "$p $round $lbc" >> "$T/lbc"
	done
	ok "restart $round: $NPROG programs back as new sessions in $ms ms"
done
sleep 0.5
touch "$T/stop"
for p in $PIDS; do
	wait "$p" || fail "program $p exited with status $?"
done
wait_no_sessions 10 || fail "sessions left: $(ctl info trace)"
ctl trace-file flush >/dev/null

# Never blocked: no call of any thread but its first (which makes its
# ring) switched voluntarily or faulted.  (A fault was what made calls
# wait, up to 1.2 ms, while each restart mapped a new state page over
# the running threads' state arrays; the array now never moves.)  The
# longest such call took less than MAX_NS, leaving out the calls the
# scheduler interrupted; a thread's first call less than 50 ms.
cat "$T"/steady.* > "$T/threads"
[ "$(wc -l < "$T/threads")" = $((NPROG * 2)) ] ||
	fail "programs said: $(cat "$T/threads")"
max=$(awk '{ if ($6 > m) m = $6 } END { print m + 0 }' "$T/threads")
first=$(awk '{ if ($8 > m) m = $8 } END { print m + 0 }' "$T/threads")
blocked=$(awk '{ s += $18 } END { print s + 0 }' "$T/threads")
preempted=$(awk '{ s += $20 } END { print s + 0 }' "$T/threads")
faulted=$(awk '{ s += $22 } END { print s + 0 }' "$T/threads")
# Under a sanitizer every access also reads shadow memory, which the
# runtime maps lazily: its first touches fault, in any code.
if [ -z "${SANITIZE:-}" ]; then
	[ "$blocked" = 0 ] && [ "$faulted" = 0 ] ||
		fail "$blocked trace calls switched voluntarily and $faulted took a page fault: $(cat "$T/threads")"
fi
[ "$max" -lt "$MAX_NS" ] ||
	fail "a trace call took $max ns: $(cat "$T/threads")"
[ "$first" -lt 50000000 ] ||
	fail "a thread's first trace call took $first ns: $(cat "$T/threads")"
ok "$blocked trace calls waited, $faulted faulted; longest $((max / 1000)) us, first calls up to $((first / 1000)) us ($preempted preempted ones left out)"

# Every session directory reads, the killed daemons' ones included.
bt_each_session "$TRACES"
ndirs=$(ls -d "$TRACES"/steady-* | wc -l)
[ "$ndirs" = $((NPROG * 4)) ] ||
	fail "$ndirs session directories for $NPROG programs x 4 daemons"

# The traced:lost records of the sessions after a restart say
# 'disconnected'; per program, no more than it counted itself, and the
# sessions' lost_before_connect add up to no more either.
bt "$TRACES" > "$T/out.txt" 2>/dev/null || fail "babeltrace2"
for k in $(seq 1 $NPROG); do
	prog_disc=$(awk '{ s += $14 } END { print s + 0 }' "$T/steady.$k")
	p=$(echo $PIDS | cut -d' ' -f$k)
	rec_disc=$(grep "steady:($p) traced:lost:" "$T/out.txt" |
		sed 's/.*disconnected = \([0-9]*\).*/\1/' | awk '{ s += $1 } END { print s + 0 }')
	lbc_sum=$(awk -v p="$p" '$1 == p { s += $3 } END { print s + 0 }' "$T/lbc")
	[ "$rec_disc" -gt 0 ] || fail "program $p: no traced:lost record says disconnected"
	[ "$rec_disc" -le "$prog_disc" ] ||
		fail "program $p: traces say $rec_disc lost disconnected, it counted $prog_disc"
	[ "$lbc_sum" -le "$prog_disc" ] ||
		fail "program $p: lost_before_connect adds up to $lbc_sum, it counted $prog_disc"
	echo "program $p: lost while disconnected $prog_disc, in traced:lost $rec_disc, lost_before_connect $lbc_sum"
done
# Each session after a restart has its own 'disconnected' records.
for d in "$TRACES"/steady-*; do
	babeltrace2 "$d" 2>/dev/null | grep -q "traced:lost: .*disconnected = [1-9]" &&
		echo "$d" >> "$T/with-disc"
done
n=$(wc -l < "$T/with-disc")
[ "$n" -ge $((NPROG * 3)) ] ||
	fail "only $n of $((NPROG * 3)) sessions after a restart record disconnected losses"
ok "losses while no daemon ran are counted in lost_before_connect and traced:lost"
stop_daemon
