#!/bin/sh
# SPDX-License-Identifier: MIT
# Every lost event is accounted for.  Producers in a tight loop overflow
# small rings; then, for every thread:
#   events in the trace + events lost == events emitted, exactly,
# where "lost" is what 'tracectl info trace' says the thread lost, and
# in all, what babeltrace2 reports discarded equals what the daemon
# says was lost.  (babeltrace2 counts per stream, and a thread that
# starts after another ended takes its ring, and so its stream, in-band:
# a stream's count may be two threads'.)
. "$(dirname "$0")/lib.sh"

start_daemon --drain-interval 50
N=40000			# seq values per thread; 5 enabled events each

check_run() {	# THREADS RING_SIZE
	rm -rf "$TRACES"
	TRACED_RING_SIZE=$2 "$HELPERS/emit" -t "$1" -n $N > "$T/emit.out" ||
		fail "emit failed"
	pid=$(ctl --json info trace | sed -n 's/.*"type":"ended_session","session":[0-9]*,"pid":\([0-9]*\).*/\1/p' | tail -n 1)
	ctl trace-file flush >/dev/null
	ctl --json info trace > "$T/info.json"
	bt "$TRACES" > "$T/out.txt" 2> "$T/warn.txt" || fail "babeltrace2"
	# Events per thread in the trace (traced:lost records are not events
	# of the program).
	sed -n 's/.*helpers:test_[a-z_]*: { tid = \([0-9]*\) }.*/\1/p' \
		"$T/out.txt" | sort | uniq -c > "$T/events"
	# Discarded per thread, from babeltrace2's warnings.
	tr -d '\n' < "$T/warn.txt" | sed 's/WARNING/\nWARNING/g' |
		sed -n 's/.*discarded \([0-9]*\) events*.*stream-\([0-9]*\)".*/\2 \1/p' |
		awk '{ d[$1] += $2 } END { for (t in d) print t, d[t] }' > "$T/discarded"
	# Lost per thread, from the daemon.
	grep -o '"type":"ended_ring","session":[0-9]*,"tid":[0-9]*,"events":[0-9]*,"lost":[0-9]*' \
		"$T/info.json" | tail -n "$1" |
		sed 's/.*"tid":\([0-9]*\),"events":\([0-9]*\),"lost":\([0-9]*\)/\1 \2 \3/' \
		> "$T/daemon"
	[ "$(wc -l < "$T/events")" = "$1" ] ||
		fail "$1 threads, but events from $(wc -l < "$T/events") tids"
	total_lost=0
	while read -r count tid; do
		dl=$(awk -v t="$tid" '$1 == t { print $3 }' "$T/daemon")
		de=$(awk -v t="$tid" '$1 == t { print $2 }' "$T/daemon")
		[ -n "$dl" ] || fail "thread $tid: not in the daemon's books"
		[ $((count + dl)) = $((5 * N)) ] ||
			fail "thread $tid: $count in the trace + $dl lost != $((5 * N)) emitted"
		[ "$de" -ge "$count" ] ||
			fail "thread $tid: daemon counted $de events, trace has $count"
		total_lost=$((total_lost + dl))
	done < "$T/events"
	d=$(awk '{ n += $2 } END { print n + 0 }' "$T/discarded")
	[ "$d" = "$total_lost" ] ||
		fail "babeltrace2 says $d discarded in all, the daemon $total_lost lost"
	[ $total_lost -gt 0 ] || fail "no event was lost: the test proves nothing"
	ok "$1 thread(s), ring $2: every thread's events + losses = $((5 * N)) ($total_lost lost in all)"
}

check_run 1 8K
check_run 2 8K
check_run 2 64K
