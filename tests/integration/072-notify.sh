#!/bin/sh
# SPDX-License-Identifier: MIT
# What traced tells systemd, caught on a notification socket of the
# test's own (tests/helpers/notify-listen): READY=1 once it answers
# clients, STATUS= lines with sessions and the event rate, WATCHDOG=1
# at half of WATCHDOG_USEC, RELOADING=1 and READY=1 around a SIGHUP,
# STOPPING=1 when SIGTERM starts the shutdown, in that order.
. "$(dirname "$0")/lib.sh"

NOTIFY="$T/notify.sock"
TRACED=0 "$HELPERS/notify-listen" "$NOTIFY" >"$T/notify.out" 2>"$T/notify.err" &
LISTENER=$!
wait_for 5 test -S "$NOTIFY" || fail "notify-listen did not start: $(cat "$T/notify.err")"

# notified PATTERN: the listener got a line matching PATTERN (grep -E).
notified() { grep -Eq "$1" "$T/notify.out"; }

export NOTIFY_SOCKET="$NOTIFY" WATCHDOG_USEC=200000
start_daemon
unset NOTIFY_SOCKET WATCHDOG_USEC
wait_for 10 notified '^READY=1$' || fail "no READY=1: $(cat "$T/notify.out")"
# READY=1 came from the loop: the daemon answers at once.
ctl info trace >/dev/null || fail "READY=1, but tracectl got no answer"
notified '^STATUS=0 sessions, 0 events/s, 0 lost$' ||
	fail "first STATUS: $(cat "$T/notify.out")"
ok "READY=1 with STATUS=0 sessions, 0 events/s, 0 lost"

# Watchdog: every 100 ms; count the pings over a second.
a=$(grep -c '^WATCHDOG=1$' "$T/notify.out" || true)
sleep 1
b=$(grep -c '^WATCHDOG=1$' "$T/notify.out" || true)
[ $((b - a)) -ge 5 ] && [ $((b - a)) -le 15 ] ||
	fail "$((b - a)) WATCHDOG=1 in a second with WATCHDOG_USEC=200000 (want about 10)"
grep -q "systemd watchdog: 200 ms, pinged every 100 ms" "$T/traced.log" ||
	fail "watchdog not logged"
ok "WATCHDOG=1 every 100 ms ($((b - a)) in a second)"

# A traced program shows in STATUS with its rate (every 2 s).
"$HELPERS/emit" -t 2 -i 200 -s "$T/stop" >/dev/null &
emit=$!
wait_for 8 notified '^STATUS=1 session, [1-9][0-9]* events/s, 0 lost$' ||
	fail "no STATUS with 1 session and a rate: $(grep STATUS "$T/notify.out" | tail -3)"
ok "$(grep -E '^STATUS=1 session, [1-9]' "$T/notify.out" | tail -1)"
ctl trace-file off >/dev/null
wait_for 8 notified '^STATUS=paused \(trace-file off\), 1 session' ||
	fail "STATUS does not say paused"
ctl trace-file on >/dev/null
touch "$T/stop"
wait $emit
wait_for 8 notified '^STATUS=0 sessions, 0 events/s, 0 lost$' ||
	fail "STATUS after the program ended: $(grep STATUS "$T/notify.out" | tail -1)"
ok "STATUS follows sessions, rate and trace-file off"

# SIGHUP: RELOADING=1 (with MONOTONIC_USEC), then READY=1 again.
kill -HUP "$DAEMON_PID"
wait_for 5 notified '^RELOADING=1$' || fail "no RELOADING=1"
notified '^MONOTONIC_USEC=[0-9]+$' || fail "RELOADING=1 without MONOTONIC_USEC"
wait_for 5 sh -c "[ \$(grep -c '^READY=1\$' '$T/notify.out') = 2 ]" ||
	fail "no READY=1 after the reload"
ok "SIGHUP: RELOADING=1, READY=1"

# SIGTERM: STOPPING=1, then the daemon drains and exits 0.
stop_daemon
wait_for 5 notified '^STOPPING=1$' || fail "no STOPPING=1"
notified '^STATUS=stopping: draining 0 sessions$' || fail "no stopping STATUS"
kill "$LISTENER"
wait "$LISTENER" || fail "notify-listen exited with $?"

# The order of the first lines of each kind.
order=$(grep -Eo '^(READY|RELOADING|STOPPING)=1' "$T/notify.out" | tr '\n' ' ')
[ "$order" = "READY=1 RELOADING=1 READY=1 STOPPING=1 " ] ||
	fail "notifications out of order: $order"
# After STOPPING=1 only watchdog pings, while the rings drain.
after=$(sed -n '/^STOPPING=1$/,$p' "$T/notify.out" |
	grep -Ev '^(STOPPING=1|STATUS=stopping: .*|WATCHDOG=1)$' || true)
[ -z "$after" ] || fail "messages after STOPPING=1: $after"
ok "order: $order"

# Without NOTIFY_SOCKET, nothing is sent and nothing else changes.
: >"$T/notify.out"
TRACED=0 "$HELPERS/notify-listen" "$NOTIFY" >"$T/notify.out" 2>&1 &
LISTENER=$!
wait_for 5 test -S "$NOTIFY" || fail "notify-listen (2)"
start_daemon
ctl info trace >/dev/null
sleep 0.3
stop_daemon
kill "$LISTENER"
wait "$LISTENER" || true
[ ! -s "$T/notify.out" ] || fail "notifications without NOTIFY_SOCKET: $(cat "$T/notify.out")"
ok "no NOTIFY_SOCKET: silent"
