# SPDX-License-Identifier: MIT
# Shared by the integration scripts: a private daemon and helpers.
# Sourced; expects $O (absolute build dir) and $SRC (source root).
set -eu
: "${O:?set O to the build directory}"
: "${SRC:=$(cd "$(dirname "$0")/../.." && pwd)}"
BIN="$O/bin"
HELPERS="$O/tests/helpers"
T=$(mktemp -d "${TMPDIR:-/tmp}/traced-test.XXXXXX")
export TRACED_RUNTIME_DIR="$T/run"
TRACES="$T/traces"
DAEMON_PID=

cleanup() {
	rc=$?
	if [ -n "$DAEMON_PID" ]; then
		kill "$DAEMON_PID" 2>/dev/null || true
		wait "$DAEMON_PID" 2>/dev/null || rc=1
	fi
	for p in $(jobs -p); do kill "$p" 2>/dev/null || true; done
	# A sanitizer report from the daemon fails the test, whatever it said.
	if [ -f "$T/traced.log" ] &&
	    grep -q "Sanitizer\|runtime error" "$T/traced.log"; then
		echo "FAIL: sanitizer report in the daemon's log:" >&2
		grep -A 30 "Sanitizer\|runtime error" "$T/traced.log" | head -60 >&2
		rc=1
	fi
	if [ "${KEEP:-0}" = 1 ]; then echo "kept $T"; else rm -rf "$T"; fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() { echo "FAIL: $*" >&2; [ -f "$T/traced.log" ] && { echo "--- traced log:"; tail -n 30 "$T/traced.log"; } >&2; exit 1; }
ok() { echo "ok: $*"; }

# start_daemon [extra traced options]
# Returns once the daemon said it is ready (its sockets listen and its
# index is open).
start_daemon() {
	_ready=$(grep -c " ready: " "$T/traced.log" 2>/dev/null || true)
	"$BIN/traced" --foreground --runtime-dir "$TRACED_RUNTIME_DIR" \
		--trace-dir "$TRACES" --state-dir "$T/state" "$@" \
		>>"$T/traced.log" 2>&1 &
	DAEMON_PID=$!
	i=0
	while [ ! -S "$TRACED_RUNTIME_DIR/control.sock" ] ||
	    [ "$(grep -c " ready: " "$T/traced.log")" -le "${_ready:-0}" ]; do
		i=$((i + 1))
		[ $i -lt 400 ] || fail "traced did not start"
		kill -0 "$DAEMON_PID" 2>/dev/null || fail "traced exited at start"
		sleep 0.05
	done
}

stop_daemon() {
	kill "$DAEMON_PID"
	wait "$DAEMON_PID" || fail "traced exited with status $? on SIGTERM"
	DAEMON_PID=
}

ctl() { "$BIN/tracectl" "$@"; }

# wait_for SECONDS COMMAND...: poll until COMMAND succeeds.
wait_for() {
	n=$(( $1 * 20 )); shift
	while ! "$@" >/dev/null 2>&1; do
		n=$((n - 1))
		[ $n -gt 0 ] || return 1
		sleep 0.05
	done
}

# exited PID: the process has ended (a zombie not yet waited for counts;
# kill -0 would still find it).
exited() {
	case $(cat "/proc/$1/stat" 2>/dev/null) in
	'') return 0 ;;
	*") Z "*) return 0 ;;
	*) return 1 ;;
	esac
}

# bt DIR: babeltrace2 text with raw clock values, one event per line.
bt() { babeltrace2 --clock-cycles "$@"; }

# Events of one name in a babeltrace2 text file.
count_events() { grep -c ":$2: " "$1" || true; }

# ---- added for the robustness tests (09x) ------------------------------

# skip REASON: end the test as skipped; run-integration.sh shows the
# last line.
skip() { echo "SKIP: $*"; exit 77; }

# reload_daemon: SIGHUP traced, then wait for its log line about it,
# which is left in $RELOAD_LINE.
reload_daemon() {
	_n=$(grep -c "SIGHUP" "$T/traced.log" || true)
	kill -HUP "$DAEMON_PID"
	wait_for 5 sh -c "[ \$(grep -c SIGHUP '$T/traced.log') -gt $_n ]" ||
		fail "no log line after SIGHUP"
	RELOAD_LINE=$(grep SIGHUP "$T/traced.log" | tail -n 1)
}

# kill_daemon_hard: SIGKILL traced, as a crash would, and remove the
# sockets it leaves behind so that start_daemon waits for the new ones.
kill_daemon_hard() {
	kill -9 "$DAEMON_PID" 2>/dev/null || true
	wait "$DAEMON_PID" 2>/dev/null || true
	DAEMON_PID=
	rm -f "$TRACED_RUNTIME_DIR/control.sock" "$TRACED_RUNTIME_DIR/client.sock"
}

# sessions_live: how many sessions the daemon has (connected or draining).
sessions_live() {
	ctl --json info trace | sed -n 's/.*"type":"trace".*"sessions":\([0-9]*\).*/\1/p'
}

# wait_no_sessions SECONDS: until every session has ended and drained.
wait_no_sessions() {
	wait_for "$1" sh -c "'$BIN/tracectl' --json info trace | grep -q '\"sessions\":0}'"
}

# daemon_fds / daemon_rss_kb: the daemon's open descriptors, resident KiB.
# ended_trace DIR [PID]: flush; once the session (of PID, or any) has
# ended, the daemon's counts in $T/info.json and babeltrace2's text of
# DIR in $T/out.txt.  Fails if it does not end, if babeltrace2 fails
# or if it says events were discarded.
ended_trace() {
	ctl trace-file flush >/dev/null
	wait_for 10 sh -c "'$BIN/tracectl' --json info trace | grep -q \
	    '\"type\":\"ended_session\",\"session\":[0-9]*,\"pid\":${2:-[0-9]*},'" ||
		fail "the session did not end"
	ctl --json info trace > "$T/info.json"
	bt "$1" > "$T/out.txt" 2> "$T/warn.txt" || fail "babeltrace2"
	! grep -q discarded "$T/warn.txt" ||
		fail "events discarded: $(grep -m1 discarded "$T/warn.txt")"
}

# emit_ended PID OUT COUNT: waits for emit (PID), which must have
# printed "emitted COUNT" to the file OUT; its session's trace
# directory is then in $EMIT_DIR.
emit_ended() {
	wait "$1" || fail "emit (pid $1) failed"
	[ "$(cat "$2")" = "emitted $3" ] || fail "emit (pid $1): $(cat "$2")"
	EMIT_DIR=$(ls -d "$TRACES"/emit-"$1"-* 2>/dev/null | head -n 1)
	[ -n "$EMIT_DIR" ] || fail "no session directory for emit (pid $1)"
}

# check_emit_threads OUT N THREADS: the babeltrace2 text OUT of emit's
# threads of N seq values each holds, for each of THREADS threads,
# test_tick's seq 0 .. N-1 in order and 5 * N events in all; fails
# otherwise.  Leaves the "tid seq" lines in $T/ticks.
check_emit_threads() {
	sed -n 's/.*helpers:test_tick: { tid = \([0-9]*\) }, { seq = \([0-9]*\) }.*/\1 \2/p' \
		"$1" > "$T/ticks"
	_bad=$(awk -v n="$2" '
		{ if (!($1 in next_seq)) { next_seq[$1] = 0; threads++ }
		  if ($2 != next_seq[$1]) { print "tid " $1 ": seq " $2 " after " next_seq[$1] - 1; exit }
		  next_seq[$1]++ }
		END { for (t in next_seq) if (next_seq[t] != n) { print "tid " t ": " next_seq[t] " ticks"; exit }
		      if (threads + 0 == 0) print "no ticks" }' "$T/ticks")
	[ -z "$_bad" ] || fail "$_bad"
	_tids=$(cut -d' ' -f1 "$T/ticks" | sort -u | wc -l)
	[ "$_tids" = "$3" ] || fail "$3 threads ran, ticks from $_tids"
	sed -n 's/.*helpers:test_[a-z_]*: { tid = \([0-9]*\) }.*/\1/p' "$1" |
		sort | uniq -c | awk -v e=$((5 * $2)) '$1 != e { print; exit 1 }' \
		> "$T/short" || fail "a thread with a short trace: $(cat "$T/short")"
}

daemon_fds() { ls "/proc/$DAEMON_PID/fd" | wc -l; }
daemon_rss_kb() { sed -n 's/^VmRSS:[^0-9]*\([0-9]*\).*/\1/p' "/proc/$DAEMON_PID/status"; }

# bt_each_session DIR: babeltrace2 must read every session directory
# under DIR on its own (a torn packet makes a stream unreadable).
bt_each_session() {
	for d in "$1"/*/; do
		[ -f "$d/metadata" ] || continue
		babeltrace2 "$d" >/dev/null 2>"$T/bt-each.err" ||
			fail "babeltrace2 cannot read $d: $(head -c 600 "$T/bt-each.err")"
	done
}

# bg_track PID...: kill these background processes when the test exits,
# pass or fail.  cleanup's $(jobs -p) runs in a subshell, which under
# dash sees no jobs, so a failing test would leave them running.
# Tests that use it call bg_track_init first.  Only a process that is
# still our child is killed: a pid that was reaped may be someone else's.
BG_PIDS=
bg_track() { BG_PIDS="$BG_PIDS $*"; }
bg_kill_tracked() {
	for p in $BG_PIDS; do
		[ "$(cut -d' ' -f4 "/proc/$p/stat" 2>/dev/null)" = $$ ] &&
			kill "$p" 2>/dev/null
	done
	return 0
}
bg_track_init() {
	# set +e: under set -e, '(exit $rc)' would end the trap before
	# cleanup when the test failed (daemon left running, $T kept).
	trap 'rc=$?; set +e; bg_kill_tracked; (exit $rc); cleanup' EXIT
}

# on_exit COMMAND: run COMMAND (eval'd) when the test exits, after the
# tracked processes are killed and the daemon stopped, before cleanup
# (e.g. to unmount what the test mounted under $T).  Sets the trap.
ON_EXIT=
on_exit() {
	ON_EXIT="$ON_EXIT
$*"
	trap 'rc=$?; set +e; bg_kill_tracked
	if [ -n "$DAEMON_PID" ]; then
		kill "$DAEMON_PID" 2>/dev/null || true
		wait "$DAEMON_PID" 2>/dev/null || rc=1
		DAEMON_PID=
	fi
	eval "$ON_EXIT"; (exit $rc); cleanup' EXIT
}
