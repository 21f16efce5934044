#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 9, finding 8 (the daemon's side), against a daemon run by root:
#   group  a user whose supplementary groups include the daemon's group
#          (root's, gid 0), not as the primary group, changes state
#          (trace-event off, then on) through control.sock, which is
#          open to that group (0660 root:root), as the README says;
#   comm   a client whose HELLO says it is "sshd" is listed under its
#          real comm (the kernel's), not "sshd";
#   log    bad messages as fast as one client can send them for 10 s
#          make the daemon log at most a few hundred lines;
#   late   (issue 25, finding 2) a provider answered later than the
#          200 ms a program waits for it (five of 65,536 events at
#          once: the last waits for four parses) is said in the log:
#          what the program emitted before the answer cannot be
#          counted, and was once silently missing.
# babeltrace2 reads the trace directory afterwards.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hostile.sh"
bg_track_init

FLOOD_S=10
# CASES="comm log" runs only those (all by default).
CASES=${CASES:-group comm log late}
want() { case " $CASES " in *" $1 "*) return 0 ;; esac; return 1; }

hostile_init
start_daemon
"$HELPERS/emit" -t 1 -i 1000 -s "$T/stop" >/dev/null &
e=$!
bg_track $e
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$e\\]'" ||
	hfail "emit did not connect"

# ---- group: the daemon's group as a supplementary group --------------
if want group; then
WHAT="finding 8 (the daemon's group as a supplementary group)"
dgid=$(stat -c %g "$TRACED_RUNTIME_DIR/control.sock")
[ "$(stat -c %a "$TRACED_RUNTIME_DIR/control.sock")" = 660 ] ||
	hfail "control.sock is not group-accessible: $(stat -c '%a %U:%G' "$TRACED_RUNTIME_DIR/control.sock")"
member() {
	setpriv --reuid="$HUID" --regid="$HGID" --groups="$dgid" "$@"
}
[ "$(member id -g)" != "$dgid" ] && member id -G | grep -qw "$dgid" ||
	skip "setpriv could not give $HOSTILE_USER group $dgid as a supplementary group only"
for state in off on; do
	rc=0
	member "$BIN/tracectl" trace-event test_tick $state >"$T/te.out" 2>&1 || rc=$?
	[ $rc = 0 ] ||
		hfail "$WHAT: 'tracectl trace-event test_tick $state' exited $rc: $(cat "$T/te.out")"
	ctl info trace-events test_tick | grep -q "test_tick *$state " ||
		hfail "$WHAT: test_tick is not $state after the command: $(ctl info trace-events test_tick)"
done
ok "$WHAT: trace-event off and on, done"
fi

# ---- comm: HELLO says "sshd" -----------------------------------------
if want comm; then
WHAT="finding 8 (a client that says it is sshd)"
$AS_HOSTILE env TRACED=0 "$HELPERS/hostile" hello-comm sshd 5 \
	>"$T/comm.out" 2>&1 &
hp=$!
bg_track $hp
wait_for 3 sh -c "'$BIN/tracectl' info trace | grep -q '\\[$hp\\]'" ||
	hfail "$WHAT: the client did not connect: $(cat "$T/comm.out")"
real=$(cat "/proc/$hp/comm")
shown=$(ctl --json info trace | jq -r --argjson p "$hp" '.items[] | select(.pid == $p) | .comm')
[ "$shown" = "$real" ] ||
	hfail "$WHAT: its session is listed as '$shown', its real comm is '$real'"
ctl info trace | grep -q "sshd\\[$hp\\]" &&
	hfail "$WHAT: 'tracectl info trace' lists it as sshd[$hp]"
kill $hp 2>/dev/null || true
wait $hp 2>/dev/null || true
ok "$WHAT: listed as $shown"
fi

# ---- log: a flood of bad messages ------------------------------------
if want log; then
WHAT="finding 8 (one client's bad messages in the log)"
log_mark
as_hostile env TRACED=0 "$HELPERS/hostile" log-flood $FLOOD_S \
	>"$T/flood.out" 2>&1 || hfail "$WHAT: hostile: $(cat "$T/flood.out")"
cat "$T/flood.out"
n=$(log_since | wc -l)
[ "$n" -le "$LOG_MAX_LINES" ] ||
	hfail "$WHAT: the daemon logged $n lines in $FLOOD_S s for one client (at most $LOG_MAX_LINES): $(log_since | tail -n 2)"
ctl info trace >/dev/null || hfail "$WHAT: tracectl got no answer"
ok "$WHAT: $n lines"
fi

touch "$T/stop"
wait $e || hfail "emit exited with $?"
ctl trace-file flush >/dev/null
bt "$TRACES" >/dev/null 2>"$T/bt.err" ||
	hfail "finding 8: babeltrace2 cannot read $TRACES: $(head -c 300 "$T/bt.err")"
stop_daemon

# ---- late: an answer later than a program waits ----------------------
if want late; then
WHAT="issue 25 finding 2 (a provider answered later than a program waits)"
start_daemon --set events-per-session=65536 --set event-ids-per-uid=400000 \
	--set event-classes-per-uid=400000
log_mark
pids=
for i in 1 2 3 4 5; do
	"$HELPERS/hostile" providers 1 65536 20 answered >"$T/late.$i" 2>&1 &
	pids="$pids $!"
done
for p in $pids; do
	wait "$p" || hfail "$WHAT: hostile exited with $?: $(cat "$T"/late.*)"
done
grep -q "1 acked" "$T/late.5" ||
	hfail "$WHAT: the provider was not answered: $(cat "$T/late.5")"
said=$(log_since | grep "was answered [0-9]* ms after it came, later than the 200 ms a program waits" | head -n 1)
[ -n "$said" ] ||
	hfail "$WHAT: five providers of 65,536 events at once, and no late answer was said: $(log_since | tail -n 3)"
stop_daemon
ok "$WHAT: ${said#*traced: }"
fi
