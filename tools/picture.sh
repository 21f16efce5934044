#!/bin/sh
# SPDX-License-Identifier: MIT
# Make the README's pictures: a real trace, exported to Chrome JSON and
# shown by speedscope (from npm) in headless Chromium (from Debian).
#
#   sh tools/picture.sh [OUT.png]        (default doc/speedscope-jobs.png)
#   sh tools/picture.sh --calls [OUT.png] (default doc/speedscope-calls.png)
#
# --calls: a function trace instead, tests/helpers/functrace/ftcalls
# tree 6 (on its main thread, rec() recursing 1 to 6 deep, each time
# followed by work() -> leaf()), with every function traced: speedscope
# draws the calls as nested, named frames.
#
# Builds traced if needed, starts a private daemon in a temporary
# directory, traces tests/helpers/jobs (3 worker threads running jobs
# whose start and end events pair up), exports the trace with
#   tracectl export --format chrome --pair test_job_start:test_job_done
#       --key job
# and loads it into speedscope the way its own command-line tool does (a
# script calling speedscope.loadFileFromBase64, named in the page's
# #localProfilePath), then has Chromium take the screenshot.  Needs
# npm and chromium (apt-get install npm chromium); speedscope is
# fetched with 'npm pack' into a cache directory, never into the tree.
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
CALLS=
if [ "${1:-}" = --calls ]; then
	CALLS=1
	shift
fi
if [ -n "$CALLS" ]; then
	OUT=${1:-$SRC/doc/speedscope-calls.png}
	NAME=calls.json
else
	OUT=${1:-$SRC/doc/speedscope-jobs.png}
	NAME=jobs.json
fi
O=${O:-$SRC/build}
SPEEDSCOPE_VERSION=1.25.0
CACHE=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/traced-picture
T=$(mktemp -d "${TMPDIR:-/tmp}/traced-picture.XXXXXX")
DAEMON=
cleanup() {
	[ -n "$DAEMON" ] && kill "$DAEMON" 2>/dev/null && wait "$DAEMON" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "picture.sh: needs chromium (apt-get install chromium)" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "picture.sh: needs npm (apt-get install npm)" >&2; exit 1; }

make -C "$SRC" --no-print-directory O="$O" all "$O/tests/helpers/jobs" \
	"$O/tests/helpers/ftcalls" >/dev/null

# speedscope, as published on npm.
ss="$CACHE/speedscope-$SPEEDSCOPE_VERSION/package"
if [ ! -f "$ss/dist/release/index.html" ]; then
	mkdir -p "$CACHE/speedscope-$SPEEDSCOPE_VERSION"
	(cd "$CACHE/speedscope-$SPEEDSCOPE_VERSION" &&
	    npm pack --silent "speedscope@$SPEEDSCOPE_VERSION" >/dev/null &&
	    tar xzf "speedscope-$SPEEDSCOPE_VERSION.tgz")
fi

# A real trace.
export TRACED_RUNTIME_DIR="$T/run"
"$O/bin/traced" --foreground --runtime-dir "$T/run" --trace-dir "$T/traces" \
	--state-dir "$T/state" >"$T/traced.log" 2>&1 &
DAEMON=$!
i=0
while [ ! -S "$T/run/control.sock" ]; do
	i=$((i + 1)); [ $i -lt 200 ] || { echo "traced did not start" >&2; exit 1; }
	sleep 0.05
done
if [ -n "$CALLS" ]; then
	"$O/bin/tracectl" trace-func '*' on >/dev/null
	TRACED_CONNECT_TIMEOUT_MS=5000 "$O/tests/helpers/ftcalls" tree 6 \
	    >/dev/null
else
	"$O/tests/helpers/jobs" -t 3 -n 12 >/dev/null
fi
"$O/bin/tracectl" trace-file flush >/dev/null
kill "$DAEMON"; wait "$DAEMON" || true; DAEMON=
if [ -n "$CALLS" ]; then
	"$O/bin/tracectl" export --format chrome -o "$T/$NAME" "$T/traces"
else
	"$O/bin/tracectl" export --format chrome \
	    --pair test_job_start:test_job_done --key job -o "$T/$NAME" \
	    "$T/traces"
fi

# What 'speedscope FILE' does, without a desktop to open.
printf 'speedscope.loadFileFromBase64("%s", "%s")\n' "$NAME" \
	"$(base64 -w0 "$T/$NAME")" > "$T/load.js"
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--allow-file-access-from-files --window-size=1280,640 \
	--virtual-time-budget=8000 --screenshot="$T/shot.png" \
	"file://$ss/dist/release/index.html#localProfilePath=$T/load.js" \
	>"$T/chromium.log" 2>&1 || { tail -n 5 "$T/chromium.log" >&2; exit 1; }
mkdir -p "$(dirname "$OUT")"
cp "$T/shot.png" "$OUT"
echo "wrote $OUT"
