#!/bin/sh
# SPDX-License-Identifier: MIT
# Load leaves nothing behind.  50 processes of 4 threads each connect,
# trace and exit, over and over, for LOAD_SECONDS (default 30: about
# 600 processes here).  Then
# traced holds the descriptors it held before, about the memory it had
# (VmRSS within LOAD_RSS_MARGIN_KB), and no session; under
# 'make check SANITIZE=1' the daemon is built with ASan, whose leak
# report at exit fails the test (lib.sh).
. "$(dirname "$0")/lib.sh"
bg_track_init

SECONDS_=${LOAD_SECONDS:-30}
NPROC=${LOAD_PROCS:-50}
if [ "${SANITIZE:-}" = 1 ]; then
	# Freed memory sits in ASan's quarantine: keep it small, and allow
	# more: the leak check here is LSan's.
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"
	export ASAN_OPTIONS
	MARGIN=${LOAD_RSS_MARGIN_KB:-65536}
else
	MARGIN=${LOAD_RSS_MARGIN_KB:-8192}
fi

# load SECONDS: NPROC loops of emit -t 4 until SECONDS passed.
load() {
	rm -f "$T/stop"
	pids=
	k=0
	while [ $k -lt "$NPROC" ]; do
		k=$((k + 1))
		(
			while [ ! -e "$T/stop" ]; do
				"$HELPERS/emit" -t 4 -n 20 >/dev/null 2>>"$T/emit.err" ||
					echo "emit exited with $?" >> "$T/failures"
			done
		) &
		pids="$pids $!"
	done
	bg_track $pids
	sleep "$1"
	touch "$T/stop"
	for p in $pids; do wait "$p"; done
}

leftovers() {
	ctl --json info trace | grep '"type":"session"' || true
}

# settle: wait until every session ended and the index wrote.
settle() {
	wait_no_sessions 30 ||
		fail "sessions left: $(leftovers | head -n 5)"
	sleep 1.5	# the index writes at most once a second
}

start_daemon
load 3
settle
fds0=$(daemon_fds)
rss0=$(daemon_rss_kb)
n0=$(grep -c "connected, tracing" "$T/traced.log" || true)

load "$SECONDS_"
n=$(( $(grep -c "connected, tracing" "$T/traced.log" || true) - n0 ))
[ ! -s "$T/failures" ] || fail "$(sort "$T/failures" | uniq -c)"
[ ! -s "$T/emit.err" ] || fail "emit said: $(sort "$T/emit.err" | uniq -c | head -n 5)"
kill -0 "$DAEMON_PID" || fail "traced died"
settle
fds1=$(daemon_fds)
rss1=$(daemon_rss_kb)
echo "$n sessions in ${SECONDS_} s; descriptors $fds0 -> $fds1; VmRSS $rss0 -> $rss1 KiB"
[ "$fds1" -le "$fds0" ] ||
	fail "traced holds $fds1 descriptors, $fds0 before: $(ls -l /proc/$DAEMON_PID/fd | tail -n 20)"
[ "$rss1" -le $((rss0 + MARGIN)) ] ||
	fail "VmRSS grew from $rss0 to $rss1 KiB (margin $MARGIN)"
ok "$NPROC processes x 4 threads for ${SECONDS_} s ($n sessions): no session, descriptor or memory left behind"
stop_daemon
