#!/bin/sh
# SPDX-License-Identifier: MIT
# info sessions and info session, from the index: a session written by
# the batch timer alone, then text and --json, the
# filters (--pid, --exe NAME or PATH, --since), the default limit and
# --limit/--all, usage errors, executable and command line, threads,
# streams (a new one after trace-file set) and events by name, a session
# ended by the daemon stopping ("daemon-stopped"), and session ids that
# go on across restarts.
. "$(dirname "$0")/lib.sh"

field() { sed -n "s/.*\"$1\":\\([^,}]*\\).*/\\1/p"; }

expect_status() {	# WANT COMMAND...
	want=$1; shift
	set +e; "$@" >"$T/out" 2>"$T/err"; got=$?; set -e
	[ "$got" = "$want" ] || fail "'$*' exited $got, not $want: $(cat "$T/err")"
}

items() { grep -c '^  {' "$T/out" || true; }

start_daemon
EMIT=$(readlink -f "$HELPERS/emit")

# A session nothing asks about reaches the index by the batch timer alone
# (info trace does not touch the index).
"$HELPERS/emit" -i 1000 -s "$T/stop0" >/dev/null &
p0=$!
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$p0\\]'" ||
	fail "emit did not connect"
# Until the batch wrote it with some events (read beside the daemon,
# as any reader of the database may: a fixed wait was too short on a
# loaded machine).
command -v sqlite3 >/dev/null 2>&1 || skip "sqlite3 not found"
wait_for 20 sh -c "[ \"\$(sqlite3 -cmd '.timeout 1000' '$T/state/index.db' \
	'SELECT count(*) FROM sessions WHERE pid = $p0 AND events > 0' \
	2>/dev/null)\" = 1 ]" ||
	fail "batch: the index has no row with events for pid $p0 after 20 s"
kill -9 "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null || true
rm -f "$TRACED_RUNTIME_DIR/control.sock" "$TRACED_RUNTIME_DIR/client.sock"
touch "$T/stop0"
wait $p0
start_daemon
expect_status 0 ctl --json info sessions --pid $p0
grep -q '"how":"interrupted"' "$T/out" || fail "batch: $(cat "$T/out")"
[ "$(field events < "$T/out")" -gt 0 ] || fail "batch: no events: $(cat "$T/out")"
ok "the batch timer wrote a session nobody asked about"

for i in 1 2 3; do "$HELPERS/emit" -n 10 >/dev/null; done
# A process that exited ends its session once the daemon has drained
# it, a moment later (a loaded machine once asked before the third did).
wait_for 5 sh -c "[ \$('$BIN/tracectl' info sessions | grep -c ' exited ') = 3 ]" ||
	fail "3 sessions did not end: $(ctl info sessions)"
"$HELPERS/emit" -t 2 -i 2000 -s "$T/stop" 'an arg' >/dev/null &
run=$!
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$run\\]'" ||
	fail "emit did not connect"

# Text: a header, then newest first, the running one first.
expect_status 0 ctl info sessions
[ "$(wc -l < "$T/out")" = 6 ] || fail "info sessions: $(cat "$T/out")"
head -n 1 "$T/out" | grep -q '^ *ID STARTED .*HOW .*EVENTS .*TRACE DIRECTORY$' ||
	fail "info sessions header: $(head -n 1 "$T/out")"
sed -n 2p "$T/out" | grep -q " running .* $run .* emit " ||
	fail "the running session is not first: $(cat "$T/out")"
[ "$(grep -c ' exited ' "$T/out")" = 3 ] || fail "3 exited: $(cat "$T/out")"
ok "info sessions (text)"

# Filters and limits, in JSON.
expect_status 0 ctl --json info sessions
[ "$(items)" = 5 ] || fail "--json info sessions: $(cat "$T/out")"
expect_status 0 ctl --json info sessions --limit 2
[ "$(items)" = 2 ] || fail "--limit 2: $(cat "$T/out")"
grep -q '"message": "the newest 2 sessions.*--all' "$T/out" ||
	fail "--limit 2 does not say there is more: $(cat "$T/out")"
expect_status 0 ctl --json info sessions --all
[ "$(items)" = 5 ] || fail "--all: $(cat "$T/out")"
expect_status 0 ctl --json info sessions --pid $run
[ "$(items)" = 1 ] || fail "--pid: $(cat "$T/out")"
grep -q '"how":"running"' "$T/out" || fail "--pid $run: not running"
grep -q '"ended_ns":null' "$T/out" || fail "--pid $run: an end"
expect_status 0 ctl --json info sessions --exe emit
[ "$(items)" = 5 ] || fail "--exe emit: $(cat "$T/out")"
expect_status 0 ctl --json info sessions --exe "$EMIT" --since 1h
[ "$(items)" = 5 ] || fail "--exe $EMIT: $(cat "$T/out")"
expect_status 0 ctl --json info sessions --exe nothing-like-it
[ "$(items)" = 0 ] || fail "--exe nothing-like-it: $(cat "$T/out")"
grep -q '"message": "no session in the index matches"' "$T/out" ||
	fail "no match, no message: $(cat "$T/out")"
expect_status 0 ctl --json info sessions --since 2099-01-01
[ "$(items)" = 0 ] || fail "--since 2099: $(cat "$T/out")"
expect_status 2 ctl info sessions --limit 2 --all
expect_status 2 ctl info sessions --limit 0
expect_status 2 ctl info sessions --pid
expect_status 2 ctl info sessions --since yesterday
expect_status 2 ctl info sessions --frobnicate 1
ok "info sessions: --pid, --exe, --since, --limit, --all"

# One session: executable, command line, threads, streams, events (of
# what is drained: flush first, until both threads have some).
sid=$(ctl --json info sessions --pid $run | field session)
wait_for 10 sh -c "'$BIN/tracectl' trace-file flush &&
	[ \$('$BIN/tracectl' info session $sid | grep -c 'events  *[1-9]') = 3 ]" ||
	fail "session $sid has no events: $(ctl info session "$sid")"
expect_status 0 ctl info session "$sid"
grep -q "^session $sid: emit\\[$run\\], running$" "$T/out" || fail "$(cat "$T/out")"
grep -q "^  executable  $EMIT$" "$T/out" || fail "executable: $(cat "$T/out")"
grep -q "^  command     .*emit -t 2 -i 2000 -s $T/stop 'an arg'$" "$T/out" ||
	fail "command line: $(cat "$T/out")"
[ "$(grep -c '^  thread ' "$T/out")" = 2 ] || fail "threads: $(cat "$T/out")"
grep -q '^    helpers:test_tick  *[1-9]' "$T/out" || fail "events: $(cat "$T/out")"
expect_status 0 ctl --json info session "$sid"
for t in session thread stream event; do
	grep -q "\"type\":\"$t\"" "$T/out" || fail "--json info session: no $t"
done
expect_status 1 ctl info session 999999
grep -q "no session 999999" "$T/err" || fail "missing session: $(cat "$T/err")"
expect_status 2 ctl info session abc
expect_status 2 ctl info session
expect_status 2 ctl info s 1
ok "info session $sid"

# trace-file set: every stream file a thread wrote to.
ctl trace-file set "$T/rotated" >/dev/null
wait_for 5 sh -c "'$BIN/tracectl' --json info session $sid |
	grep -q '\"type\":\"stream\".*\"path\":\"$T/rotated/'" ||
	fail "no stream under $T/rotated: $(ctl info session "$sid")"
[ "$(ctl --json info session "$sid" | grep -c '"type":"stream"')" = 4 ] ||
	fail "not 4 streams: $(ctl info session "$sid")"
if command -v sqlite3 >/dev/null 2>&1; then
	[ "$(sqlite3 "$T/state/index.db" "SELECT count(*) FROM trace_dirs
	    WHERE how = 'set' AND path = '$T/rotated'")" = 1 ] ||
		fail "trace-file set is not in the history"
fi
ok "trace-file set: new streams indexed"

# A session the daemon's stop ended; ids go on after a restart.
stop_daemon
touch "$T/stop"
wait $run
start_daemon
expect_status 0 ctl --json info sessions --pid $run
grep -q '"how":"daemon-stopped"' "$T/out" || fail "not daemon-stopped: $(cat "$T/out")"
"$HELPERS/emit" -n 1 >/dev/null &
p=$!
wait $p
wait_for 5 sh -c "'$BIN/tracectl' --json info sessions --pid $p | grep -q exited" ||
	fail "the new session did not end"
new=$(ctl --json info sessions --pid $p | field session)
[ "$new" -gt "$sid" ] || fail "session id $new after $sid: ids start again"
ok "daemon-stopped; session ids go on ($new after $sid)"
