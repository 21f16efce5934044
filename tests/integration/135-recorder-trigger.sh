#!/bin/sh
# SPDX-License-Identifier: MIT
# Snapshot triggers (issue 26, point 4): 'tracectl trigger add GLOB
# snapshot [--after D] [--every D]', 'trigger list', 'trigger delete'.
#   errors  a bad glob, duration or action is refused by tracectl
#           before it connects (exit 2), a second trigger on a glob by
#           the daemon (exit 1), each with the fix;
#   fire    with traced --recorder 8M, a program that ticks steadily
#           emits one test_marker at a moment it prints: a snapshot
#           directory appears in the trace directory within 1 s plus
#           --after (300ms) of it, which babeltrace2 reads, holding the
#           marker, the ticks before it and, --after later, ticks after
#           it; a second marker within --every writes nothing and is
#           counted as suppressed, one after it writes a second one;
#   list    trigger list (and --json) and info trace show the glob,
#           --after, --every and the counts;
#   restart the triggers are kept across a daemon restart;
#   flood   a program that emits the trigger's event a million times a
#           second writes at most one snapshot per --every, the other
#           matches counted as suppressed;
#   delete  a deleted trigger fires no more;
#   users   an ordinary user may not add one (it changes the daemon's
#           state), and the marker of an ordinary user's program writes
#           a snapshot of that user's windows only: root's program,
#           recording beside it, is not in it.
. "$(dirname "$0")/lib.sh"

GLOB='helpers:test_marker'

# status_of COMMAND...: its exit status, its output in $T/out.
status_of() {
	_rc=0
	"$@" >"$T/out" 2>&1 || _rc=$?
	echo $_rc
}

# trig FIELD: that field of the trigger on $GLOB in trigger list --json.
trig() {
	ctl --json trigger list | tr -d ' ' |
		sed -n "s/.*\"glob\":\"$GLOB\"[^}]*\"$1\":\([^,}]*\).*/\1/p"
}

# wait_trig FIELD VALUE: until trig FIELD says VALUE (5 s at most).
wait_trig() {
	_n=0
	while [ "$(trig "$1")" != "$2" ]; do
		_n=$((_n + 1))
		[ $_n -lt 100 ] || return 1
		sleep 0.05
	done
}

# Under ASan the daemon runs several times slower: there the bound only
# says that the snapshot comes.
LATE_MS=1300
if [ "${SANITIZE:-}" = 1 ] || case "$O" in *-asan*) true ;; *) false ;; esac
then
	LATE_MS=5000
fi

# snapshots: the snapshot directories in the trace directory, one a line.
snapshots() { ls -d "$TRACES"/snapshot-* 2>/dev/null || true; }

# snapshot_after COUNT MARKER_LINE: wait until the trigger's snapshot
# number COUNT is written (its done callback named it), within LATE_MS
# of the marker's time; its directory in $SNAP, babeltrace2's text of it
# in $T/snap.txt.
snapshot_after() {
	_at=${2##* at }
	while [ "$(trig last_snapshot)" = null ] ||
	    [ "$(snapshots | wc -l)" -lt "$1" ] ||
	    [ "$(trig pending)" != 0 ]; do
		_late=$(( ($(date +%s%N) - _at) / 1000000 ))
		[ "$_late" -le $((LATE_MS + 2000)) ] ||
			fail "no snapshot $1 $_late ms after '$2': $(ctl trigger list)"
		sleep 0.02
	done
	_late=$(( ($(date +%s%N) - _at) / 1000000 ))
	[ "$_late" -le "$LATE_MS" ] ||
		fail "snapshot $1 written $_late ms after '$2', more than $LATE_MS"
	SNAP=$(trig last_snapshot | tr -d '"')
	[ -d "$SNAP" ] && case "$SNAP" in "$TRACES"/snapshot-*) true ;; *) false ;; esac ||
		fail "the trigger's snapshot '$SNAP' is no directory in $TRACES"
	bt "$SNAP" > "$T/snap.txt" 2> "$T/snap.err" ||
		fail "babeltrace2 cannot read $SNAP: $(head -c 600 "$T/snap.err")"
	SNAP_MS=$_late
}

# seq_of MARKER_LINE: the seq it said.
seq_of() { echo "$1" | sed 's/^marker \([0-9]*\) at .*/\1/'; }

# marker: make spike emit its marker; the line it said is left in $M.
MARKERS=0
marker() {
	touch "$T/go"
	MARKERS=$((MARKERS + 1))
	wait_for 5 sh -c "[ \$(grep -c '^marker ' '$T/spike.out') -ge $MARKERS ]" ||
		fail "spike did not emit marker $MARKERS"
	M=$(sed -n "${MARKERS}p" "$T/spike.out")
}

# ---- errors: refused before connecting, with the fix -------------------
rc=$(status_of ctl trigger add "$GLOB" snapshoot)
[ "$rc" = 2 ] && grep -q "unknown action 'snapshoot': the only one is 'snapshot'" "$T/out" ||
	fail "unknown action: exit $rc: $(cat "$T/out")"
rc=$(status_of ctl trigger add "$GLOB" snapshot --after 5parsecs)
[ "$rc" = 2 ] && grep -q "'5parsecs' is not a duration: a number and a unit" "$T/out" ||
	fail "bad duration: exit $rc: $(cat "$T/out")"
rc=$(status_of ctl trigger add "$GLOB" snapshot --every 10ms)
[ "$rc" = 2 ] && grep -q -- "--every 10ms is out of range: from 1s" "$T/out" ||
	fail "--every too short: exit $rc: $(cat "$T/out")"
rc=$(status_of ctl trigger add "$(printf 'a\tb')" snapshot)
[ "$rc" = 2 ] && grep -q "control byte (0x09)" "$T/out" ||
	fail "bad glob: exit $rc: $(cat "$T/out")"
rc=$(status_of ctl trigger remove "$GLOB")
[ "$rc" = 2 ] && grep -q "usage: tracectl trigger add GLOB snapshot" "$T/out" ||
	fail "unknown sub-command: exit $rc: $(cat "$T/out")"
ok "bad actions, durations, globs and sub-commands are refused with the fix"

start_daemon --recorder 8M
ctl trigger list > "$T/list" || fail "trigger list"
grep -q "no trigger: 'tracectl trigger add GLOB snapshot' adds one" "$T/list" ||
	fail "empty list: $(cat "$T/list")"
ctl trigger add "$GLOB" snapshot --after 300ms --every 3s > "$T/add" ||
	fail "trigger add: $(cat "$T/add")"
grep -q "at most once every 3s per user" "$T/add" || fail "add: $(cat "$T/add")"
rc=$(status_of ctl trigger add "$GLOB" snapshot)
[ "$rc" = 1 ] && grep -q "a trigger on '$GLOB' exists already (--after 300ms --every 3s): 'tracectl trigger delete $GLOB' first" "$T/out" ||
	fail "duplicate: exit $rc: $(cat "$T/out")"
rc=$(status_of ctl trigger delete 'nothing:*')
[ "$rc" = 1 ] && grep -q "no trigger on 'nothing:\*'" "$T/out" ||
	fail "delete unknown: exit $rc: $(cat "$T/out")"
ok "add, a duplicate refused, delete of an unknown glob refused"

# ---- fire, suppress, fire again --------------------------------------------
"$HELPERS/spike" -g "$T/go" -s "$T/stop" -i 500 > "$T/spike.out" &
spike=$!
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'spike\\[$spike\\]'" ||
	fail "spike did not connect"
sleep 0.3
[ -z "$(snapshots)" ] || fail "a snapshot before any marker: $(snapshots)"
marker; m1=$M
snapshot_after 1 "$m1"
[ "$(trig fired)" = 1 ] || fail "fired $(trig fired) times on one marker"
s1=$(seq_of "$m1")
# The marker, the ticks before it, and --after's worth of ticks after it
# (300 ms at one tick each 0.5 ms: hundreds).
awk -v s="$s1" '
/:test_marker:/ && $0 ~ "seq = " s " }" { marker++ }
/:test_tick:/ { sub(/.*seq = /, ""); sub(/ }.*/, ""); t = $0 + 0
	if (t < s) before++; if (t > s + 100) after++ }
END { printf "marker %d, %d ticks before it, %d more than 100 after\n", marker, before, after
	exit !(marker == 1 && before >= 100 && after > 0) }' "$T/snap.txt" > "$T/snap.sum" ||
	fail "snapshot $SNAP: $(cat "$T/snap.sum")"
ok "a snapshot $SNAP_MS ms after '$m1' (--after 300ms) holds $(cat "$T/snap.sum")"
# A second marker within --every (3 s): suppressed, nothing written.
marker; m2=$M
wait_trig suppressed 1 || fail "a marker within --every was not suppressed: $(ctl trigger list)"
sleep 0.5
[ "$(trig fired)" = 1 ] && [ "$(snapshots | wc -l)" = 1 ] ||
	fail "a marker within --every: fired $(trig fired), snapshots $(snapshots)"
ok "'$m2', within --every, wrote nothing and was counted as suppressed"
sleep 2.6
marker; m3=$M
snapshot_after 2 "$m3"
[ "$(trig fired)" = 2 ] && [ "$(trig suppressed)" = 1 ] ||
	fail "a marker after --every: fired $(trig fired), suppressed $(trig suppressed)"
grep -q ":test_marker: .*seq = $(seq_of "$m3") }" "$T/snap.txt" ||
	fail "snapshot $SNAP does not hold '$m3'"
[ "$(trig last_fired_ns)" != null ] || fail "no last fired time"
# Each firing says, once, where its snapshot went.
[ "$(grep -c "trigger '$GLOB', set off by session [0-9]* (spike\[$spike\], uid 0): snapshot of 1 session of uid 0, .* in $TRACES/snapshot-" "$T/traced.log")" = 2 ] ||
	fail "not one log line per firing: $(grep "set off by" "$T/traced.log")"
ok "'$m3', after --every, wrote a second snapshot ($SNAP_MS ms later)"

# ---- list and info trace -----------------------------------------------------
ctl trigger list > "$T/list"
grep -q "^$GLOB  *snapshot --after 300ms --every 3s: fired 2, suppressed 1, last .* in $SNAP\$" "$T/list" ||
	fail "trigger list: $(cat "$T/list")"
ctl info trace > "$T/info"
grep -q "^snapshot triggers: 1" "$T/info" &&
	grep -q "^  $GLOB  *snapshot --after 300ms --every 3s: fired 2, suppressed 1" "$T/info" ||
	fail "info trace: $(head -n 8 "$T/info")"
ctl --json info trace | grep -q "\"type\":\"trigger\",\"glob\":\"$GLOB\",\"action\":\"snapshot\",\"after_ns\":300000000,\"every_ns\":3000000000,\"fired\":2,\"suppressed\":1," ||
	fail "info trace --json: $(ctl --json info trace | grep trigger)"
ok "trigger list and info trace show the trigger and its counts"

# ---- kept across a restart ---------------------------------------------------
touch "$T/stop"
wait $spike || fail "spike exited with $?"
rm -f "$T/stop"
stop_daemon
start_daemon --recorder 8M
ctl trigger list > "$T/list"
grep -q "^$GLOB  *snapshot --after 300ms --every 3s: fired 0, suppressed 0, last never" "$T/list" ||
	fail "after a restart: $(cat "$T/list")"
grep -q "1 snapshot trigger from the index" "$T/traced.log" ||
	fail "the restarted daemon did not say it loaded the trigger"
ok "the trigger is kept across a restart"

# ---- users: their own windows only -------------------------------------------
. "$(dirname "$0")/lib-hostile.sh"
hostile_init
rc=0
as_hostile "$BIN/tracectl" trigger add 'helpers:*' snapshot >"$T/out" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "an ordinary user added a trigger: $(cat "$T/out")"
ctl trigger list | grep -q "helpers:\*" &&
	fail "an ordinary user's trigger is listed: $(ctl trigger list)"
ok "an ordinary user may not add a trigger (exit $rc: $(head -c 120 "$T/out"))"

# Root's program and an ordinary user's record side by side; the
# user's marker writes that user's windows, not root's.
"$HELPERS/spike" -g "$T/go" -s "$T/stop" -i 500 > "$T/spike.out" &
rspike=$!
mkdir "$T/h"
chown "$HOSTILE_USER" "$T/h"
$AS_HOSTILE "$HELPERS/spike" -g "$T/h/go" -s "$T/h/stop" -i 500 > "$T/h.out" &
hspike=$!
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'spike\\[$hspike\\]'" &&
	wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'spike\\[$rspike\\]'" ||
	fail "the two programs did not connect"
sleep 0.3
touch "$T/h/go"
wait_for 5 grep -q '^marker ' "$T/h.out" || fail "the user's spike did not emit its marker"
hm=$(head -n 1 "$T/h.out")
snapshot_after 3 "$hm"
ls "$SNAP" > "$T/snap.ls"
grep -q "^spike-$hspike-" "$T/snap.ls" ||
	fail "the user's snapshot lacks its own session: $(cat "$T/snap.ls")"
! grep -q "^spike-$rspike-" "$T/snap.ls" ||
	fail "the user's event wrote root's window: $(cat "$T/snap.ls")"
grep -q "uid $(id -u "$HOSTILE_USER")): snapshot of 1 session of uid $(id -u "$HOSTILE_USER")," "$T/traced.log" ||
	fail "no log line for the user's snapshot"
touch "$T/stop" "$T/h/stop"
wait $rspike || fail "root's spike exited with $?"
wait $hspike || fail "the user's spike exited with $?"
rm -f "$T/stop"
ok "an ordinary user's marker wrote its own window ($(tr '\n' ' ' < "$T/snap.ls")), not root's"


# ---- flood: an event emitted in a loop, one snapshot per --every --------------
ctl trigger add 'helpers:test_tick' snapshot --every 1s >/dev/null ||
	fail "trigger add test_tick"
"$HELPERS/emit" -t 1 -r 1000000 -T 2.5 > "$T/emit.out" &
emit=$!
wait $emit || fail "emit exited with $?"
ctl trace-file flush >/dev/null
wait_for 5 sh -c "'$BIN/tracectl' --json trigger list | tr -d ' ' | grep -q '\"glob\":\"helpers:test_tick\"[^}]*\"pending\":0,'" ||
	fail "the flood's snapshots are still pending: $(ctl trigger list)"
ctl --json trigger list | tr -d ' ' | grep '"glob":"helpers:test_tick"' > "$T/flood"
fired=$(sed -n 's/.*"fired":\([0-9]*\).*/\1/p' "$T/flood")
supp=$(sed -n 's/.*"suppressed":\([0-9]*\).*/\1/p' "$T/flood")
# emit's test_marker sets off the other trigger too: count this one's.
made=$(grep -c "trigger 'helpers:test_tick', set off by session .*: snapshot of [0-9]* sessions* of uid 0, .* in $TRACES/snapshot-" "$T/traced.log" || true)
# 2.5 s of ticks and the drain of the last ones: at most 4 seconds
# begun, so at most 4 firings; every other chunk is suppressed.
[ "$fired" -ge 1 ] && [ "$fired" -le 4 ] && [ "$made" = "$fired" ] &&
	[ "$supp" -ge 10 ] ||
	fail "a flood of test_tick: fired $fired, suppressed $supp, $made snapshots written"
ctl trigger delete 'helpers:test_tick' >/dev/null || fail "trigger delete test_tick"
ok "$(cat "$T/emit.out") test_ticks in 2.5 s: $fired snapshots, $supp matching chunks suppressed"
SNAPS=$(snapshots | wc -l)

# ---- delete: it fires no more -------------------------------------------------
ctl trigger delete "$GLOB" > "$T/del" || fail "delete: $(cat "$T/del")"
grep -q "trigger '$GLOB' deleted" "$T/del" || fail "delete: $(cat "$T/del")"
: > "$T/spike.out"
MARKERS=0
"$HELPERS/spike" -g "$T/go" -s "$T/stop" -i 500 > "$T/spike.out" &
spike=$!
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'spike\\[$spike\\]'" ||
	fail "spike did not connect"
said=$(grep -c "trigger '$GLOB', set off by" "$T/traced.log" || true)
marker
# The flush returns once every chunk drained before it came back.
ctl trace-file flush >/dev/null
touch "$T/stop"
wait $spike || fail "spike exited with $?"
[ "$(grep -c "trigger '$GLOB', set off by" "$T/traced.log" || true)" = "$said" ] ||
	fail "a deleted trigger fired: $(grep "set off by" "$T/traced.log" | tail -n 1)"
ctl trigger list | grep -q "no trigger" || fail "still listed: $(ctl trigger list)"
[ "$(snapshots | wc -l)" = "$SNAPS" ] || fail "a deleted trigger wrote a snapshot: $(snapshots)"
stop_daemon
start_daemon --recorder 8M
ctl trigger list | grep -q "no trigger" || fail "the deletion was not kept"
ok "a deleted trigger fires no more, and stays deleted after a restart"

