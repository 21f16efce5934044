#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 9, finding 5: one session cannot break the trace for everyone.
# Another user's hand-written client, against a daemon run by root,
# while a program of root is traced:
#   ts       a ring record stamped 0xfffffffffffffff0 is refused (the
#            daemon drains nothing from that record on), and babeltrace2
#            reads the whole trace directory afterwards;
#   classes  a session of 262,144 event classes (4 providers of 65,536)
#            is refused by the per-uid event-class limit, the log names
#            the setting, and babeltrace2 reads the whole directory in
#            seconds;
#   print    sessions with odd but valid names, formats and strings
#            (tests/helpers/hostile odd-names): 'tracectl print' reads
#            the whole directory, every session the daemon accepted
#            (the classes case's included), with every event of them,
#            and so does babeltrace2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hostile.sh"
bg_track_init

# The setting the event-class refusal must name (grep -E).
SET_EVENT_CLASSES="event-classes-per-uid|events-per-session"
BT_MAX_S=10		# "in seconds"

# CASES="ts print" runs only those (all by default; print reads what
# classes left).
CASES=${CASES:-ts classes print}
want() { case " $CASES " in *" $1 "*) return 0 ;; esac; return 1; }

hostile_init
start_daemon
"$HELPERS/emit" -t 1 -i 1000 -s "$T/stop" >"$T/emit.out" &
e=$!
bg_track $e
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$e\\]'" ||
	hfail "emit did not connect"

# hostile ARGUMENTS...: the other user's client; its output in $T/h.out.
hostile() {
	as_hostile env TRACED=0 "$HELPERS/hostile" "$@" >"$T/h.out" 2>&1
}

# bt_in WHAT: babeltrace2 reads the whole directory within BT_MAX_S.
bt_in() {
	ctl trace-file flush >/dev/null
	_t0=$(date +%s%N)
	timeout "$BT_MAX_S" babeltrace2 "$TRACES" >"$T/bt.txt" 2>"$T/bt.err" ||
		hfail "$1: babeltrace2 $TRACES failed or took more than $BT_MAX_S s: $(grep -m 3 -i 'error\|E ' "$T/bt.err" | cut -c 1-300)"
	echo "babeltrace2 read the whole directory in $(( ($(date +%s%N) - _t0) / 1000000 )) ms"
}

if want ts; then
	WHAT="finding 5 (an event stamped 0xfffffffffffffff0)"
	hostile ring-ts-future ||
		hfail "$WHAT: $(grep 'CHECK FAILED' "$T/h.out" || cat "$T/h.out")"
	echo "$(cat "$T/h.out")"
	bt_in "$WHAT"
	ok "$WHAT: refused; the whole directory reads"
fi

if want classes; then
	WHAT="finding 5 (262,144 event classes)"
	log_mark
	hostile providers 4 65536 30 answered ||
		hfail "$WHAT: $(cat "$T/h.out")"
	echo "$(cat "$T/h.out")"
	acked=$(sed -n 's/.* \([0-9]*\) acked.*/\1/p' "$T/h.out")
	[ -n "$acked" ] && [ "$acked" -lt 4 ] &&
	    providers_refused "$T/h.out" ||
		hfail "$WHAT: the daemon took them all: $(cat "$T/h.out")"
	log_since | grep -Eq -- "$SET_EVENT_CLASSES" ||
		hfail "$WHAT: the refusal does not name the setting ($SET_EVENT_CLASSES) in the log: $(log_since | grep -v 'connected\|ended' | tail -n 2)"
	echo "the log names the limit: $(log_since | grep -E -m1 -- "$SET_EVENT_CLASSES")"
	bt_in "$WHAT"
	ok "$WHAT: refused past the limit; babeltrace2 reads the directory in seconds"
fi

if want print; then
	WHAT="finding 5 (tracectl print, hostile names and formats)"
	$AS_HOSTILE env TRACED=0 "$HELPERS/hostile" odd-names 3 prov-bytes \
		>"$T/odd.out" 2>&1 &
	p=$!
	wait $p || hfail "$WHAT: hostile odd-names: $(cat "$T/odd.out")"
	for v in reserved-args long-names formats dup-names strings; do
		as_hostile env TRACED=0 "$HELPERS/hostile" odd-names 3 $v \
			>>"$T/odd.out" 2>&1 ||
			hfail "$WHAT: hostile odd-names $v: $(cat "$T/odd.out")"
	done
	cat "$T/odd.out"
	grep -q "NOT all drained" "$T/odd.out" &&
		hfail "$WHAT: an accepted odd session was not drained: $(grep NOT "$T/odd.out")"
	ctl trace-file flush >/dev/null
	ctl print "$TRACES" >"$T/print.txt" 2>"$T/print.err" ||
		hfail "$WHAT: tracectl print $TRACES refuses what the daemon accepted: $(head -c 400 "$T/print.err")"
	# Every event of every accepted odd session, by its pid.
	grep "accepted" "$T/odd.out" | while read -r line; do
		pid=$(echo "$line" | sed -n 's/.*(pid \([0-9]*\)).*/\1/p')
		n=$(echo "$line" | sed -n 's/.*accepted; \([0-9]*\) events.*/\1/p')
		got=$(grep -c "^\[[^]]*\] ([^)]*) [^ ]* $pid/[0-9]* " "$T/print.txt" || true)
		[ "$got" = "$n" ] ||
			hfail "$WHAT: tracectl print shows $got events of a session that wrote $n: $line"
	done
	grep -q "^\[[^]]*\] ([^)]*) emit $e/[0-9]* " "$T/print.txt" ||
		hfail "$WHAT: tracectl print shows nothing of root's program"
	echo "tracectl print: $(wc -l < "$T/print.txt") events, every accepted session's"
	bt_in "$WHAT"
	ok "$WHAT: tracectl print and babeltrace2 read every session"
fi

touch "$T/stop"
wait $e || hfail "emit exited with $?"
stop_daemon
