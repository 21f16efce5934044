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
start_daemon() {
	"$BIN/traced" --foreground --runtime-dir "$TRACED_RUNTIME_DIR" \
		--trace-dir "$TRACES" --state-dir "$T/state" "$@" \
		>>"$T/traced.log" 2>&1 &
	DAEMON_PID=$!
	i=0
	while [ ! -S "$TRACED_RUNTIME_DIR/control.sock" ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "traced did not start"
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

# bt DIR: babeltrace2 text with raw clock values, one event per line.
bt() { babeltrace2 --clock-cycles "$@"; }

# Events of one name in a babeltrace2 text file.
count_events() { grep -c ":$2: " "$1" || true; }
