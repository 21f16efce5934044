#!/bin/sh
# SPDX-License-Identifier: MIT
# Function tracing read by uftrace 0.13.  A program with known call
# counts (two threads, each: worker() -> rec() N times nested -> leaf()
# by a tail call from the innermost rec(), then leaf() twice more) is
# traced, with each kind of instrumentation, and its binary deleted
# before the export, so names come from the session alone.  'tracectl
# export --format uftrace' must give a uftrace.data that
#   - uftrace replay shows call by call: every call with its name, at
#     its depth, nested, per thread, exactly as made;
#   - uftrace graph counts: 2 workers, rec 2 per level, leaf 2 + 4;
#   - uftrace dump has an exit for every entry, function by function;
#   - uftrace dump --chrome turns into as many B as E slices;
# and that a trace with a static event and losses shows the event as a
# uftrace event and each loss as a LOST record, and that a corrupt
# functions/module-N file is named and the rest still exported.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ftlib.sh"

command -v uftrace >/dev/null 2>&1 || skip "uftrace is not installed (apt-get install uftrace)"
N=40
start_daemon
ctl trace-func '*' on >/dev/null

# The replay of one thread as uftrace prints it, durations cut.  The
# innermost rec() ends in a tail call to leaf(): a jump the patched
# entries see as rec() returning, while -finstrument-functions calls
# rec()'s exit hook after leaf() returns.
expected() {	# TAIL: 1 or 0
	echo "worker() {"
	i=1
	while [ $i -lt $N ]; do
		printf '%*srec() {\n' $((2 * i)) ''
		i=$((i + 1))
	done
	if [ "$1" = 1 ]; then
		printf '%*srec();\n' $((2 * N)) ''
		printf '%*sleaf();\n' $((2 * N)) ''
	else
		printf '%*srec() {\n' $((2 * N)) ''
		printf '%*sleaf();\n' $((2 * N + 2)) ''
		printf '%*s} /* rec */\n' $((2 * N)) ''
	fi
	i=$((N - 1))
	while [ $i -ge 1 ]; do
		printf '%*s} /* rec */\n' $((2 * i)) ''
		i=$((i - 1))
	done
	echo "  leaf();"
	echo "  leaf();"
	echo "} /* worker */"
}

# uftrace prints a call with nothing under it as "f();", or, now and
# then (when it has not read the exit yet as it prints the entry), as
# "f() {" and "} /* f */" on the next line: the same call.
leaves() {
	awk '{ if (held != "") {
		if ($0 == hind "} /* " hname " */") { print hind hname "();"; held = ""; next }
		print held; held = "" }
	    if (match($0, /^ *[A-Za-z_][A-Za-z_0-9]*\(\) \{$/)) {
		held = $0; hind = $0; sub(/[^ ].*$/, "", hind)
		hname = substr($0, length(hind) + 1); sub(/\(\) \{$/, "", hname); next }
	    print }
	    END { if (held != "") print held }'
}

for v in $FT_VARIANTS; do
	case $v in *-cyg) expected 0 ;; *) expected 1 ;; esac > "$T/want"
	rm -rf "$T/cur" "$T/uft" && mkdir "$T/cur"
	# The program runs from a copy that is gone before the export.
	cp "$HELPERS/$v" "$T/$v"
	TRACED_DEBUG=1 "$T/$v" recurse $N 2 > "$T/out" 2>&1 || fail "$v: $(cat "$T/out")"
	rm -f "$T/$v"
	ctl trace-file flush >/dev/null
	wait_no_sessions 10 || fail "$v: the session did not end"
	mv "$TRACES"/* "$T/cur/" || fail "$(cat $T/out)"
	ctl export --format uftrace -o "$T/uft" "$T/cur" > "$T/export.out" 2>&1 ||
		fail "$v: export: $(cat "$T/export.out")"

	uftrace replay -d "$T/uft" > "$T/replay" 2>"$T/replay.err" ||
		fail "$v: uftrace replay: $(head -5 "$T/replay.err")"
	tids=$(sed -n 's/^ *[0-9.]* *[a-z]* *\[ *\([0-9]*\)\] | worker() {$/\1/p' "$T/replay")
	[ "$(echo $tids | wc -w)" = 2 ] ||
		fail "$v: replay: not two worker threads: $(head -20 "$T/replay")"
	for t in $tids; do
		sed -n "s/^[^[]*\[ *$t\] | //p" "$T/replay" | leaves > "$T/got"
		cmp -s "$T/want" "$T/got" ||
			fail "$v: replay of thread $t: $(diff "$T/want" "$T/got" | head -20)"
	done

	uftrace graph -d "$T/uft" > "$T/graph" 2>&1 ||
		fail "$v: uftrace graph: $(head -5 "$T/graph")"
	grep -q '+-(2) worker$' "$T/graph" || fail "$v: graph: $(head -20 "$T/graph")"
	[ "$(grep -c '(2) rec$' "$T/graph")" = $N ] ||
		fail "$v: graph: rec not twice on each of $N levels: $(cat "$T/graph")"
	grep -q '(2) leaf$' "$T/graph" && grep -q '+-(4) leaf$' "$T/graph" ||
		fail "$v: graph: leaf counts: $(cat "$T/graph")"

	uftrace dump -d "$T/uft" > "$T/dump" 2>&1 || fail "$v: uftrace dump"
	sed -n 's/.*\[\(entry\|exit \)\] \([^(]*\)(.*/\1 \2/p' "$T/dump" |
	    awk '$1 == "entry" { e[$2]++ } $1 == "exit" { x[$2]++ }
	    END { for (f in e) print f, e[f], x[f] + 0 }' | sort > "$T/pairs"
	grep -q "^rec $((2 * N)) $((2 * N))\$" "$T/pairs" &&
	    grep -q '^leaf 6 6$' "$T/pairs" &&
	    grep -q '^worker 2 2$' "$T/pairs" ||
		fail "$v: dump: entries and exits: $(cat "$T/pairs")"

	uftrace dump --chrome -d "$T/uft" > "$T/chrome" 2>&1 ||
		fail "$v: dump --chrome"
	b=$(grep -c '"ph":"B"' "$T/chrome") e=$(grep -c '"ph":"E"' "$T/chrome")
	[ "$b" = "$e" ] && [ "$b" -ge $((2 * (N + 4))) ] ||
		fail "$v: dump --chrome: $b B, $e E"
	# On the monotonic clock, as uftrace records (issue 29): a time
	# since 1970 in microseconds is too big for a JavaScript double to
	# keep nested calls apart.  Under 10^14 us: about 3 years up.
	ts=$(sed -n 's/.*"ts":\([0-9]*\).*/\1/p' "$T/chrome" | head -n 1)
	[ -n "$ts" ] && [ "${#ts}" -le 14 ] ||
		fail "$v: dump --chrome: the first time is $ts us: not on the monotonic clock"
	ok "$v: uftrace replay, graph, dump and dump --chrome read every call of 2 threads x $N levels, named with the binary gone"
done

# A static event and losses: a 4 KiB ring cannot hold 2 x 300 levels.
rm -rf "$T/cur" "$T/uft" "$T/sync" && mkdir "$T/cur" "$T/sync"
TRACED_RING_SIZE=4K "$HELPERS/ftcalls" recurse 300 2 > "$T/out" 2>&1 ||
	fail "lossy run: $(cat "$T/out")"
touch "$T/sync/go-1"
"$HELPERS/ftcalls" phases "$T/sync" 5 1 > "$T/out" 2>&1 || fail "phases: $(cat "$T/out")"
ctl trace-file flush >/dev/null
wait_no_sessions 10
mv "$TRACES"/* "$T/cur/"
ctl export --format uftrace -o "$T/uft" "$T/cur" > "$T/export.out" 2>&1 ||
	fail "export: $(cat "$T/export.out")"
grep -q '^EVENT: 1000000 helpers:test_marker$' "$T/uft/events.txt" ||
	fail "events.txt: $(cat "$T/uft/events.txt")"
uftrace replay -d "$T/uft" > "$T/replay" 2>&1 || fail "replay with losses"
[ "$(grep -c '/\* helpers:test_marker \*/' "$T/replay")" = 2 ] ||
	fail "replay: the two markers: $(grep -c test_marker "$T/replay")"
grep -q '/\* LOST [0-9]* records!! \*/' "$T/replay" ||
	fail "replay: no LOST record"
lost=$(uftrace dump -d "$T/uft" 2>/dev/null | sed -n 's/.*\[lost \] <\([0-9a-f]*\)>.*/\1/p' |
	while read -r h; do echo $((0x$h)); done | awk '{ n += $1 } END { print n + 0 }')
# As many as babeltrace2 says the trace discarded.
babeltrace2 "$T/cur" 2>"$T/bt.err" >/dev/null
btlost=$(sed -n 's/.*Tracer discarded \([0-9]*\) events.*/\1/p' "$T/bt.err" |
	awk '{ n += $1 } END { print n + 0 }')
[ "$lost" -gt 0 ] && [ "$lost" = "$btlost" ] ||
	fail "LOST records say $lost, babeltrace2 $btlost"
ok "static events as uftrace events, $lost lost events as LOST records"

# A session directory is input like any other: a module file that lies
# is said, by name, and the export goes on with its addresses unnamed.
d=$(ls -d "$T"/cur/ftcalls-* | head -1)
printf 'traced-module 1\nindex 0\npath /x\nbase zz\n' > "$d/functions/module-0"
rm -rf "$T/uft"
if ctl export --format uftrace -o "$T/uft" "$T/cur" > "$T/export.out" 2>&1; then
	fail "export of a bad module file succeeded: $(cat "$T/export.out")"
fi
grep -q "module-0: .*(its addresses stay unnamed)" "$T/export.out" ||
	fail "export did not name the bad module file: $(cat "$T/export.out")"
uftrace replay -d "$T/uft" > "$T/replay" 2>&1 ||
	fail "replay after a bad module file: $(head -5 "$T/replay")"
ok "a bad functions/module-N file is named, the rest exported"

# Issue 25, finding 8: a FIFO (or a symlink) planted as a module file is
# not opened as one: the export is not held waiting for a writer that
# never comes, names the file and goes on.
mkfifo "$d/functions/module-98"
ln -s /etc/shadow "$d/functions/module-99"
rm -rf "$T/uft"
set +e
timeout 20 "$BIN/tracectl" export --format uftrace -o "$T/uft" "$T/cur" > "$T/export.out" 2>&1
rc=$?
set -e
[ $rc != 124 ] || fail "export hung on a FIFO named module-98"
[ $rc = 1 ] || fail "export with a FIFO and a symlink as module files exited $rc: $(cat "$T/export.out")"
grep -q "module-98: not a regular file" "$T/export.out" ||
	fail "export did not name the FIFO: $(cat "$T/export.out")"
grep -q "module-99: a symbolic link" "$T/export.out" ||
	fail "export did not refuse the symlink: $(cat "$T/export.out")"
uftrace replay -d "$T/uft" > "$T/replay" 2>&1 ||
	fail "replay after a FIFO module file: $(head -5 "$T/replay")"
ok "a FIFO or a symlink as a module file is named, not opened, the rest exported"

# The same for stream files, for every reader: a FIFO or a symlink
# among a session's streams is named and not read; the others are.
rm -f "$d/functions/module-98" "$d/functions/module-99"
mkfifo "$d/stream-77"
ln -s /etc/shadow "$d/stream-78"
set +e
timeout 20 "$BIN/tracectl" print "$T/cur" > "$T/print.out" 2> "$T/print.err"
rc=$?
set -e
[ $rc != 124 ] || fail "print hung on a FIFO named stream-77"
grep -q "stream-77: not a regular file" "$T/print.err" ||
	fail "print did not name the FIFO: rc $rc: $(head -c 300 "$T/print.err")"
grep -q "stream-78: a symbolic link" "$T/print.err" ||
	fail "print did not refuse the symlink: rc $rc: $(head -c 300 "$T/print.err")"
grep -q 'traced:func_entry' "$T/print.out" ||
	fail "print showed none of the other streams' events: $(head -c 300 "$T/print.out")"
ok "a FIFO or a symlink among the streams is named, not read; the rest is printed (status $rc)"

# How the program ran (issue 29): the session's directory keeps its
# command line, times and exit status (traced/process), info session
# says the status, and uftrace info on the export has all three.
rm -rf "$T/cur" "$T/uft" && mkdir "$T/cur"
set +e
"$HELPERS/ftcalls" status 3 > "$T/out" 2>&1
rc=$?
set -e
[ $rc = 3 ] || fail "ftcalls status 3 exited $rc: $(cat "$T/out")"
wait_no_sessions 10 || fail "the session did not end"
d=$(ls -d "$TRACES"/ftcalls-*)
wait_for 5 test -f "$d/traced/process" || fail "no traced/process in $d: $(ls "$d")"
# CTF readers skip sub-directories: babeltrace2 still reads the session.
bt "$d" > /dev/null 2>"$T/bt.err" || fail "babeltrace2 with traced/: $(head -3 "$T/bt.err")"
p=$d/traced/process
grep -qx 'traced-process 1' "$p" && grep -qx "cmdline $HELPERS/ftcalls status 3" "$p" &&
	grep -qx 'how exited' "$p" && grep -qx 'exit_status 3' "$p" ||
	fail "traced/process: $(cat "$p")"
id=$(sed -n 's/^.*-\([0-9]*\)$/\1/p' <<EOT
$d
EOT
)
ctl info session "$id" | grep -qx '  exit status 3 (given to exit())' ||
	fail "info session $id: $(ctl info session "$id")"
[ "$(ctl --json info session "$id" | jq -r '.items[] | select(.type == "session") | .exit_status')" = 3 ] ||
	fail "info session --json: no exit_status 3"
grep -q "ended (exited, exit status 3)" "$T/traced.log" || fail "the log does not say the status"
mv "$d" "$T/cur/"
ctl export --format uftrace -o "$T/uft" "$T/cur" > "$T/export.out" 2>&1 ||
	fail "export: $(cat "$T/export.out")"
uftrace info -d "$T/uft" > "$T/info" 2>&1 || fail "uftrace info: $(head -5 "$T/info")"
grep -Eq "^# cmdline +: $HELPERS/ftcalls status 3\$" "$T/info" &&
	grep -Eq '^# exit status +: exited with code: 3$' "$T/info" &&
	grep -Eq '^# elapsed time +: [0-9]+\.[0-9]{9} sec$' "$T/info" &&
	grep -Eq '^# build id +: [0-9a-f]{40}$' "$T/info" &&
	grep -Eq '^# recorded on +: ' "$T/info" ||
	fail "uftrace info: $(cat "$T/info")"
ok "the process file, info session and uftrace info: command line, exit status 3, elapsed time, build id"
