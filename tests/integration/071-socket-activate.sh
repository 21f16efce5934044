#!/bin/sh
# SPDX-License-Identifier: MIT
# Socket activation: traced started by systemd-socket-activate with both
# sockets, named client and control (--fdname, like FileDescriptorName=),
# traces a program through them, and babeltrace2 reads every event.
# The daemon leaves the sockets as it got them: mode unchanged, files
# still there after it exits.  Sockets without names are told apart by
# their file names; a socket it cannot place stops it at start; a
# socket not passed is created as usual (and removed at exit).
. "$(dirname "$0")/lib.sh"

command -v systemd-socket-activate >/dev/null 2>&1 || {
	echo "SKIP: systemd-socket-activate not found (apt-get install systemd)"
	exit 77
}

RUN="$TRACED_RUNTIME_DIR"
mkdir -p "$RUN"

# activate LOG SOCKET-OPTIONS... -- TRACED-OPTIONS...: traced under
# systemd-socket-activate, in the background (DAEMON_PID).  Only the
# variables named with -E reach the daemon.
activate() {
	log=$1; shift
	sa_opts=
	while [ "$1" != "--" ]; do sa_opts="$sa_opts $1"; shift; done
	shift
	for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
		eval "[ -n \"\${$v:-}\" ]" && sa_opts="$sa_opts -E $v"
	done
	# shellcheck disable=SC2086
	systemd-socket-activate --seqpacket $sa_opts \
		"$BIN/traced" --foreground --runtime-dir "$RUN" \
		--trace-dir "$TRACES" --state-dir "$T/state" "$@" \
		>>"$log" 2>&1 &
	DAEMON_PID=$!
}

wait_ready() {
	wait_for 10 grep -q "ready:" "$1" ||
		fail "traced did not get ready: $(cat "$1")"
}

# systemd-socket-activate, like systemd, starts the daemon on the first
# connection: here a traced program's, which waits for the daemon's
# answer (TRACED_CONNECT_TIMEOUT_MS) and so is traced from its start.
export TRACED_CONNECT_TIMEOUT_MS=10000

# 1. Both sockets, named.
activate "$T/traced.log" -l "$RUN/client.sock" -l "$RUN/control.sock" \
	--fdname=client:control --
wait_for 5 test -S "$RUN/control.sock" || fail "no socket from systemd-socket-activate"
mode_before=$(stat -c %a "$RUN/client.sock"):$(stat -c %a "$RUN/control.sock")
! grep -q "ready:" "$T/traced.log" || fail "traced started before a connection"
"$HELPERS/emit" -t 2 -n 500 >"$T/emit.out" || fail "emit"
wait_ready "$T/traced.log"
grep -q "sockets in $RUN (from systemd)" "$T/traced.log" ||
	fail "the daemon did not say it uses systemd's sockets: $(cat "$T/traced.log")"
mode_after=$(stat -c %a "$RUN/client.sock"):$(stat -c %a "$RUN/control.sock")
[ "$mode_before" = "$mode_after" ] ||
	fail "the daemon changed the sockets' modes: $mode_before -> $mode_after"
ctl trace-file flush >/dev/null || fail "trace-file flush through the passed socket"
bt "$TRACES" >"$T/bt.txt" 2>"$T/bt.err" || fail "babeltrace2: $(cat "$T/bt.err")"
n=$(count_events "$T/bt.txt" test_tick)
[ "$n" = 1000 ] || fail "$n test_tick events, not 1000 (2 threads x 500)"
stop_daemon
[ -S "$RUN/client.sock" ] && [ -S "$RUN/control.sock" ] ||
	fail "the daemon removed sockets it did not create"
ok "activated by a traced program: 1000 ticks in the trace, sockets untouched"

# 2. No names: the socket files say which is which.  tracectl starts it.
rm -f "$RUN"/*.sock
activate "$T/traced2.log" -l "$RUN/control.sock" -l "$RUN/client.sock" --
wait_for 5 test -S "$RUN/control.sock" || fail "no sockets (2)"
ctl info trace >/dev/null || fail "tracectl could not start the daemon"
"$HELPERS/emit" -t 1 -n 10 >/dev/null || fail "emit (unnamed sockets)"
ctl info trace | grep -q "emit\[" || fail "no emit session with unnamed sockets"
stop_daemon
ok "unnamed sockets told apart by their file names"

# 3. A socket it cannot place is refused at start.
rm -f "$RUN"/*.sock
activate "$T/traced3.log" -l "$RUN/client.sock" -l "$T/other.sock" \
	--fdname=client:stranger --
wait_for 5 test -S "$T/other.sock" || fail "no sockets (3)"
# The program waits for the daemon's answer, so it has connected (and
# systemd-socket-activate started traced) before it exits: a program
# that exits first may never connect, and then nothing starts traced.
TRACED_CONNECT_TIMEOUT_MS=3000 "$HELPERS/emit" -n 1 >/dev/null 2>&1 || true
wait_for 10 exited "$DAEMON_PID" || {
	kill "$DAEMON_PID"
	fail "traced still runs 10 s after a connection with a stranger socket"
}
set +e
wait "$DAEMON_PID"; rc=$?
set -e
DAEMON_PID=
[ "$rc" = 1 ] || fail "exit status $rc with a stranger socket, not 1"
grep -q "passed socket 4 (name 'stranger') is neither client.sock nor control.sock" \
	"$T/traced3.log" || fail "message: $(cat "$T/traced3.log")"
ok "a socket of unknown role stops the start: $(grep -o "passed socket.*" "$T/traced3.log")"

# 4. Only the client socket passed: control.sock is the daemon's own.
rm -f "$RUN"/*.sock
activate "$T/traced4.log" -l "$RUN/client.sock" --fdname=client --
wait_for 5 test -S "$RUN/client.sock" || fail "no socket (4)"
"$HELPERS/emit" -t 1 -n 10 >/dev/null || fail "emit (client socket only)"
wait_ready "$T/traced4.log"
[ "$(stat -c %a "$RUN/control.sock")" = 660 ] ||
	fail "own control.sock has mode $(stat -c %a "$RUN/control.sock")"
ctl info trace | grep -q "emit\[" || fail "no session with the client socket only"
stop_daemon
[ -S "$RUN/client.sock" ] || fail "the passed client.sock was removed"
[ ! -e "$RUN/control.sock" ] || fail "the daemon's own control.sock was left behind"
ok "client socket passed, control socket made (and removed) by traced"
cat "$T"/traced[234].log >>"$T/traced.log"
