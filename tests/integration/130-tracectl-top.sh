#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The traced authors
#
# tracectl top, used as a person would, in a tmux pane: a program traces
# test_tick at a known pace (rate: 2 threads, 2,000 events/s, on an
# absolute schedule); after a few refreshes the screen shows that event
# at 2,000/s within 10 %, each thread at 1,000/s within 10 %, and the
# session by its name; 's' changes the sort column the title names,
# 'r' reverses the sessions (steady, slower, first); '/' with a glob
# that matches nothing empties the panes, and a glob on the session's
# name brings them back; 'q' quits with status 0 and the terminal
# restored (tmux's alternate screen left: the shell's prompt is back).  Then the scripts' path:
# --once --json read with jq, the same rates; -f and -s; usage errors;
# no daemon: status 3 and one JSON document saying so.
. "$(dirname "$0")/lib.sh"

command -v tmux >/dev/null 2>&1 || skip "tmux not installed"
command -v jq >/dev/null 2>&1 || skip "jq not installed"

RATE=2000
SOCK="$T/tmux.sock"
tm() { tmux -S "$SOCK" "$@"; }
screen() { tm capture-pane -p -t top; }
trap 'st=$?; tmux -S "$SOCK" kill-server 2>/dev/null; (exit $st); cleanup' EXIT

# within VALUE WANT: VALUE within 10 % of WANT.
within() {
	awk -v v="$1" -v w="$2" 'BEGIN { exit !(v >= w * 0.9 && v <= w * 1.1) }'
}

start_daemon
"$HELPERS/rate" -t 2 -r $RATE -T 40 -s "$T/stop" >"$T/rate.out" 2>&1 &
RPID=$!
wait_for 10 sh -c "'$BIN/tracectl' --json info counters | grep -q '\"name\":\"test_tick\"'" ||
	fail "the rate helper's events never counted"

# ---- on a terminal ------------------------------------------------------
cat > "$T/top.sh" <<EOF2
export TRACED_RUNTIME_DIR='$TRACED_RUNTIME_DIR' TERM=xterm
'$BIN/tracectl' top
echo "top-exit=\$?"
sleep 60
EOF2
tm new-session -d -s top -x 200 -y 50 "sh '$T/top.sh'" || fail "tmux new-session"
wait_for 10 sh -c "tmux -S '$SOCK' capture-pane -p -t top | grep -q 'helpers:test_tick .*[0-9]'" ||
	fail "no test_tick line on the screen: $(screen)"
sleep 3.5		# a few refreshes, each over a whole second
screen > "$T/screen1"
grep -q "^traced top - .*sort: rate" "$T/screen1" || fail "no title line: $(cat "$T/screen1")"
grep -q "^q quit" "$T/screen1" || fail "no help line: $(cat "$T/screen1")"
r=$(awk '$1 == "helpers:test_tick" { print $2; exit }' "$T/screen1")
within "$r" $RATE || fail "test_tick at $r/s on the screen, not $RATE within 10 %: $(cat "$T/screen1")"
ok "the screen shows test_tick at $r/s ($RATE paced)"
# Threads: TID, then "SESSION comm[pid]", then the rate.
n=0
for r in $(awk -v p="rate[$RPID]" '$3 == p { print $4 }' "$T/screen1"); do
	within "$r" $((RATE / 2)) || fail "a thread at $r/s, not $((RATE / 2)): $(cat "$T/screen1")"
	n=$((n + 1))
done
[ $n = 2 ] || fail "$n threads of rate[$RPID] on the screen, not 2: $(cat "$T/screen1")"
awk -v p="$RPID" '$2 == p && $3 == "rate" { f = 1 } END { exit !f }' "$T/screen1" ||
	fail "no session line for rate[$RPID]: $(cat "$T/screen1")"
grep -q "^daemon: cpu [0-9.]*% (.*drain.*)  [0-9]* ns/event" "$T/screen1" ||
	fail "no daemon cost line: $(cat "$T/screen1")"
ok "both threads at $((RATE / 2))/s, the session, the daemon's cost"

# Sorting: a second, slower program (steady, about 100 events/s) sorts
# after rate by rate; 's' changes the column the title names, 'r'
# reverses the order of the sessions pane.
"$HELPERS/steady" -t 1 -i 10000 -T 40 -s "$T/stop" >/dev/null 2>&1 &
SPID=$!
first_session() { screen | awk '$1 == "SESSION" && $2 == "PID" { getline; print $3; exit }'; }
wait_for 10 sh -c "tmux -S '$SOCK' capture-pane -p -t top | grep -q ' steady  '" ||
	fail "steady's session never shown: $(screen)"
[ "$(first_session)" = rate ] || fail "by rate, $(first_session) first: $(screen)"
tm send-keys -t top s
wait_for 5 sh -c "tmux -S '$SOCK' capture-pane -p -t top | grep -q 'sort: total '" ||
	fail "'s' did not change the sort column: $(screen)"
tm send-keys -t top r
wait_for 5 sh -c "tmux -S '$SOCK' capture-pane -p -t top | grep -q 'sort: total (reversed)'" ||
	fail "'r' did not reverse: $(screen)"
[ "$(first_session)" = steady ] || fail "reversed, $(first_session) first: $(screen)"
tm send-keys -t top r s s s		# back to rate
wait_for 5 sh -c "tmux -S '$SOCK' capture-pane -p -t top | grep -q 'sort: rate '" ||
	fail "'s' did not come back to rate: $(screen)"
ok "'s' changes the sort column, 'r' reverses: steady first"

# Filter: nothing matches, then the session's name.
tm send-keys -t top / n o n e '*' Enter
wait_for 5 sh -c "tmux -S '$SOCK' capture-pane -p -t top | grep -q 'filter: none\*$'" ||
	fail "'/' did not set the filter: $(screen)"
screen | grep -q "test_tick" && fail "filtered out, test_tick still shown: $(screen)"
screen | grep -q "sessions 0  threads 0  events 0" || fail "filter: $(screen)"
tm send-keys -t top / BSpace BSpace BSpace BSpace BSpace r a t e Enter
wait_for 5 sh -c "tmux -S '$SOCK' capture-pane -p -t top | grep -q 'filter: rate$'" ||
	fail "the filter 'rate' not set: $(screen)"
wait_for 5 sh -c "tmux -S '$SOCK' capture-pane -p -t top | grep -q 'helpers:test_tick'" ||
	fail "filter on the session's name: $(screen)"
screen | grep -q " steady " && fail "filter 'rate': steady still shown: $(screen)"
ok "'/' filters by a glob on the session's or event's name"

tm send-keys -t top q
wait_for 5 sh -c "tmux -S '$SOCK' capture-pane -p -t top | grep -q 'top-exit='" ||
	fail "q did not quit: $(screen)"
screen | grep -q "top-exit=0" || fail "top's exit status: $(screen)"
screen | grep -q "^traced top" && fail "the screen was not restored: $(screen)"
ok "q quits with status 0, the terminal restored"

# ---- scripts --------------------------------------------------------------
ctl top --once --json > "$T/once.json" || fail "top --once --json: status $?"
[ "$(wc -l < "$T/once.json")" = 1 ] || fail "--once: not one line: $(cat "$T/once.json")"
r=$(jq '.events[] | select(.name == "helpers:test_tick") | .rate' "$T/once.json")
within "$r" $RATE || fail "--json: test_tick at $r/s: $(cat "$T/once.json")"
jq -e --arg p "$RPID" '[.sessions[] | select(.pid == ($p | tonumber) and .comm == "rate")] | length == 1' \
	"$T/once.json" >/dev/null || fail "--json: no session of rate: $(cat "$T/once.json")"
jq -e --arg p "$RPID" '[.threads[] | select(.pid == ($p | tonumber))] | length == 2' \
	"$T/once.json" >/dev/null || fail "--json: not 2 threads: $(cat "$T/once.json")"
jq -e '.reachable and .losses.ring_full.total == 0 and (.daemon.cpu_percent | type) == "number"' \
	"$T/once.json" >/dev/null || fail "--json: $(cat "$T/once.json")"
ok "--once --json: test_tick at $r/s, the session, 2 threads, losses, the daemon's cost"

ctl top -n 2 -d 0.5 -s name -f 'test_t*' --json > "$T/two.json" || fail "top -n 2"
[ "$(wc -l < "$T/two.json")" = 2 ] || fail "-n 2: not 2 lines: $(cat "$T/two.json")"
[ "$(jq -r '.sort + " " + .filter + " " + ([.events[].name] | join(","))' "$T/two.json" | sort -u)" = \
	"name test_t* helpers:test_tick" ] || fail "-s name -f: $(cat "$T/two.json")"
ok "-n 2 -d 0.5 -s name -f 'test_t*'"

st=0; ctl top -d 0 --once >/dev/null 2>"$T/err" || st=$?
[ $st = 2 ] && grep -q "is not a number of seconds" "$T/err" || fail "-d 0: status $st: $(cat "$T/err")"
st=0; ctl top -s fill --once >/dev/null 2>"$T/err" || st=$?
[ $st = 2 ] && grep -q "no column 'fill'" "$T/err" || fail "-s fill: status $st: $(cat "$T/err")"
st=0; ctl top </dev/null >"$T/out" 2>"$T/err" || st=$?
[ $st = 2 ] && grep -q "not a terminal" "$T/err" || fail "no terminal: status $st: $(cat "$T/err")"
ok "usage errors: status 2 with the reason"

touch "$T/stop"
wait $RPID || fail "rate: $(cat "$T/rate.out")"
wait $SPID || fail "steady"
stop_daemon
st=0; ctl top --once --json > "$T/gone.json" 2>"$T/err" || st=$?
[ $st = 3 ] || fail "no daemon: status $st"
jq -e '.reachable == false and (.error | test("no daemon"))' "$T/gone.json" >/dev/null ||
	fail "no daemon: $(cat "$T/gone.json")"
ok "no daemon: status 3, one JSON document saying so"
