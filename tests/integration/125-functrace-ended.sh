#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 29, point 2: a trace-func or tracer command that arrives just
# after a traced program exited once waited 10 s for it and exited 3
# ("the daemon closed the connection before the end of its reply").
# 50 quick function-traced runs, each followed at once by 'trace-func
# rec on' and 'off': every command answers with status 0, within the
# 2 s tracectl(1) promises.  A process that is gone answers for itself.
. "$(dirname "$0")/lib.sh"

FT="$HELPERS/ftcalls"
[ -x "$FT" ] || skip "no $FT"
start_daemon
RUNS=50
worst=0
i=0
while [ $i -lt $RUNS ]; do
	i=$((i + 1))
	"$FT" recurse 12 2 >/dev/null 2>&1 || fail "run $i: ftcalls exited with $?"
	for how in "trace-func rec" "tracer count"; do
		for on in on off; do
			t0=$(date +%s%N)
			rc=0
			out=$(timeout 12 "$BIN/tracectl" $how $on 2>&1) || rc=$?
			ms=$(( ($(date +%s%N) - t0) / 1000000 ))
			[ $rc = 0 ] ||
				fail "run $i: '$how $on' exited with $rc after $ms ms: $out"
			[ $ms -le 2000 ] ||
				fail "run $i: '$how $on' took $ms ms (more than 2 s): $out"
			[ $ms -gt $worst ] && worst=$ms
		done
	done
done
stop_daemon
ok "$RUNS quick runs, each followed by trace-func and tracer on and off: every command answered, the slowest in $worst ms"
