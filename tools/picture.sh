#!/bin/sh
# SPDX-License-Identifier: MIT
# Make the README's picture: a real trace, exported to Chrome JSON and
# shown by speedscope (from npm) in headless Chromium (from Debian).
#
#   sh tools/picture.sh [OUT.png]        (default doc/speedscope-jobs.png)
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
OUT=${1:-$SRC/doc/speedscope-jobs.png}
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

make -C "$SRC" --no-print-directory O="$O" all "$O/tests/helpers/jobs" >/dev/null

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
"$O/tests/helpers/jobs" -t 3 -n 12 >/dev/null
"$O/bin/tracectl" trace-file flush >/dev/null
kill "$DAEMON"; wait "$DAEMON" || true; DAEMON=
"$O/bin/tracectl" export --format chrome --pair test_job_start:test_job_done \
	--key job -o "$T/jobs.json" "$T/traces"

# What 'speedscope FILE' does, without a desktop to open.
printf 'speedscope.loadFileFromBase64("jobs.json", "%s")\n' \
	"$(base64 -w0 "$T/jobs.json")" > "$T/load.js"
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--allow-file-access-from-files --window-size=1280,640 \
	--virtual-time-budget=8000 --screenshot="$T/shot.png" \
	"file://$ss/dist/release/index.html#localProfilePath=$T/load.js" \
	>"$T/chromium.log" 2>&1 || { tail -n 5 "$T/chromium.log" >&2; exit 1; }
mkdir -p "$(dirname "$OUT")"
cp "$T/shot.png" "$OUT"
echo "wrote $OUT"
