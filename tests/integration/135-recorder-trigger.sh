#!/bin/sh
# SPDX-License-Identifier: MIT
# Snapshot triggers (issue 26, point 4): 'tracectl trigger add GLOB
# snapshot [--after D] [--every D]', 'trigger list', 'trigger delete'.
#   errors  a bad glob, duration or action is refused by tracectl
#           before it connects (exit 2), a second trigger on a glob by
#           the daemon (exit 1), each with the fix;
#   fire    a program that ticks steadily emits one test_marker at a
#           moment it prints: the trigger fires once; a second marker
#           within --every is counted as suppressed, one after it
#           fires again;
#   list    trigger list (and --json) and info trace show the glob,
#           --after, --every and the counts;
#   restart the triggers are kept across a daemon restart;
#   delete  a deleted trigger fires no more;
#   users   an ordinary user may not add one (it changes the daemon's
#           state).
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

start_daemon
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
marker; m1=$M
wait_trig fired 1 || fail "the trigger did not fire on '$m1': $(ctl trigger list)"
# A second marker within --every (3 s): suppressed, not fired.
marker; m2=$M
wait_trig suppressed 1 && [ "$(trig fired)" = 1 ] ||
	fail "a marker within --every: fired $(trig fired), suppressed $(trig suppressed)"
ok "the trigger fired on '$m1', and let '$m2' pass (within --every)"
sleep 3
marker; m3=$M
wait_trig fired 2 && [ "$(trig suppressed)" = 1 ] ||
	fail "a marker after --every: fired $(trig fired), suppressed $(trig suppressed)"
[ "$(trig last_fired_ns)" != null ] || fail "no last fired time"
# Each firing says, once, what became of it (after --after).
wait_for 5 sh -c "[ \$(grep -c \"trigger '$GLOB', set off by session\" '$T/traced.log') = 2 ]" ||
	fail "not one log line per firing: $(grep "set off by" "$T/traced.log")"
ok "it fired again on '$m3', once --every had passed"

# ---- list and info trace -----------------------------------------------------
ctl trigger list > "$T/list"
grep -q "^$GLOB  *snapshot --after 300ms --every 3s: fired 2, suppressed 1" "$T/list" ||
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
start_daemon
ctl trigger list > "$T/list"
grep -q "^$GLOB  *snapshot --after 300ms --every 3s: fired 0, suppressed 0, last never" "$T/list" ||
	fail "after a restart: $(cat "$T/list")"
grep -q "1 snapshot trigger from the index" "$T/traced.log" ||
	fail "the restarted daemon did not say it loaded the trigger"
ok "the trigger is kept across a restart"

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
stop_daemon
start_daemon
ctl trigger list | grep -q "no trigger" || fail "the deletion was not kept"
ok "a deleted trigger fires no more, and stays deleted after a restart"

# ---- users: an ordinary user may not add one ----------------------------------
. "$(dirname "$0")/lib-hostile.sh"
hostile_init
rc=0
as_hostile "$BIN/tracectl" trigger add 'helpers:*' snapshot >"$T/out" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "an ordinary user added a trigger: $(cat "$T/out")"
ctl trigger list | grep -q "no trigger" ||
	fail "an ordinary user's trigger is listed: $(ctl trigger list)"
ok "an ordinary user may not add a trigger (exit $rc: $(head -c 120 "$T/out"))"
