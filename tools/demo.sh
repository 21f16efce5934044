#!/bin/sh
# SPDX-License-Identifier: MIT
# make run: start a private traced, trace the example program, flush,
# show 'tracectl info trace' and the first events, stop the daemon.
#   tools/demo.sh BUILD_DIR
set -eu
O=${1:-build}
O=$(cd "$O" && pwd)
dir="$O/run"
rm -rf "$dir"
mkdir -p "$dir"
export TRACED_RUNTIME_DIR="$dir/runtime"
bin="$O/bin"

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

"$bin/traced" --foreground --runtime-dir "$TRACED_RUNTIME_DIR" \
	--trace-dir "$dir/traces" --state-dir "$dir/state" 2>"$dir/traced.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT INT TERM
i=0
while [ ! -S "$TRACED_RUNTIME_DIR/control.sock" ]; do
	i=$((i + 1))
	if [ $i -gt 100 ] || ! kill -0 $pid 2>/dev/null; then
		echo "traced did not start; its log:" >&2
		cat "$dir/traced.log" >&2
		exit 1
	fi
	sleep 0.05
done

say "traced --foreground --runtime-dir $TRACED_RUNTIME_DIR --trace-dir $dir/traces &"
say "tracectl trace-event 'example_*' on"
"$bin/tracectl" trace-event 'example_*' on
say "traced-example 2 10"
"$bin/traced-example" 2 10
say "tracectl trace-file flush"
"$bin/tracectl" trace-file flush
say "tracectl info trace"
"$bin/tracectl" info trace
say "babeltrace2 $dir/traces | head -15"
babeltrace2 "$dir/traces" | head -15
say "tracectl trace-file flush && kill $pid"
kill $pid
wait $pid 2>/dev/null || true
trap - EXIT INT TERM
echo
echo "The daemon's log is $dir/traced.log; the trace stays in $dir/traces."
echo "Run 'make check' to run the tests."
