#!/bin/sh
# SPDX-License-Identifier: MIT
# Providers that come and go: a program loads a plugin (a shared object
# with its own events), unloads it, and loads it again, so one of its
# providers is gone for good.  The program is still traced, its own
# events and the reloaded plugin's:
#   1. when the daemon starts after the unload (the first connection
#      skips the unloaded provider);
#   2. after the daemon is killed and restarted (the reconnection skips
#      it too).
. "$(dirname "$0")/lib.sh"
bg_track_init

# check_session DIR WHAT: DIR has the program's ticks and the second
# plugin's events, in order, and nothing was discarded.
check_session() {
	bt "$1" > "$T/s.txt" 2> "$T/s.warn" || fail "$2: babeltrace2 $1"
	grep -q discarded "$T/s.warn" && fail "$2: discarded events: $(head -n 1 "$T/s.warn")"
	ticks=$(grep -c "helpers:test_tick:" "$T/s.txt" || true)
	hellos=$(grep -c "plugin:plugin_hello: .*generation = 2 }" "$T/s.txt" || true)
	[ "$ticks" -gt 10 ] || fail "$2: $ticks ticks of the program's own provider"
	[ "$hellos" -gt 10 ] || fail "$2: $hellos events of the reloaded plugin"
	# Each tick seq is followed by the plugin's event with the same seq
	# (from the first plugin event on: the daemon enables one provider
	# after the other).
	sed -n 's/.*helpers:test_tick: .*{ seq = \([0-9]*\) }.*/t \1/p;
		s/.*plugin:plugin_hello: .*{ seq = \([0-9]*\), generation = 2 }.*/h \1/p' \
		"$T/s.txt" | awk '
		$1 == "t" { if (on && pending != "") { print "tick " pending " without its plugin event"; exit 1 } pending = $2; next }
		$1 == "h" { if (pending != "" && $2 != pending) { print "plugin event " $2 " after tick " pending; exit 1 } pending = ""; on = 1 }' \
		> "$T/s.bad" || fail "$2: $(cat "$T/s.bad")"
	ok "$2: $ticks ticks and $hellos events of the reloaded plugin"
}

# 1. No daemon while the plugin comes and goes.
"$HELPERS/plugins" "$HELPERS/plugin.so" "$T/stop" > "$T/plugins.out" 2>&1 &
prog=$!
bg_track $prog
sleep 0.3
kill -0 $prog 2>/dev/null || fail "plugins: $(cat "$T/plugins.out")"
start_daemon
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'plugins\\[$prog\\]'" ||
	fail "the program did not connect: $(ctl info trace)"
sleep 0.5
kill_daemon_hard
grep -q "out of order" "$T/traced.log" &&
	fail "the daemon refused the program: $(grep -m1 'out of order' "$T/traced.log")"
check_session "$(ls -d "$TRACES"/plugins-$prog-* | head -n 1)" \
	"daemon started after the unload"

# 2. The daemon restarts; the program reconnects.
rm -rf "$TRACES"
start_daemon
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'plugins\\[$prog\\]'" ||
	fail "the program did not reconnect: $(ctl info trace)"
sleep 0.5
touch "$T/stop"
wait $prog || fail "plugins: $(cat "$T/plugins.out")"
ctl trace-file flush >/dev/null
wait_no_sessions 5 || fail "the session did not end"
grep -q "out of order" "$T/traced.log" &&
	fail "the daemon refused the program: $(grep -m1 'out of order' "$T/traced.log")"
check_session "$(ls -d "$TRACES"/plugins-$prog-* | head -n 1)" \
	"after a daemon restart"
