#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 9, finding 1: a daemon run by root writes only where it checked,
# never through a symlink someone else could plant.
#   a. A session directory renamed away and replaced by a symlink to a
#      directory holding .metadata.tmp -> a root-owned 0600 file (done
#      as root here, as a user who can write the trace directory
#      would): when the program registers another provider (a plugin it
#      dlopen()s) the metadata is rewritten; the victim is unchanged and
#      the metadata lands in the session's real directory.
#   b. A trace directory that others can write, or that belongs to
#      another user, is refused: at start (traced exits non-zero naming
#      the mode or the owner), by 'tracectl trace-file set' (fails,
#      output stays where it was) and on SIGHUP (traces keep going to
#      the old directory).
#   c. The trace directory deleted while tracing, and the other user's
#      symlink planted at its path (its parent is world-writable and
#      sticky, like /tmp): nothing is written through the symlink.
# babeltrace2 reads the trace directory after a and b (after c there is
# no trace directory left to read).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hostile.sh"
bg_track_init

# CASES="b c" runs only those (all by default).
CASES=${CASES:-a b c}
want() { case " $CASES " in *" $1 "*) return 0 ;; esac; return 1; }

# What a refusal must name: a pattern for grep -E (the daemon's words).
SAYS_MODE='0?777|writable'
hostile_init
SAYS_OWNER="$HOSTILE_USER|uid $HUID|$HUID"

VICTIM="$T/victim"
printf 'root only\n' > "$VICTIM"
chmod 0600 "$VICTIM"
cp -p "$VICTIM" "$T/victim.orig"

victim_intact() {
	cmp -s "$VICTIM" "$T/victim.orig" ||
		hfail "finding 1 ($1): the daemon wrote through a symlink into a root-owned 0600 file: $VICTIM now begins: $(head -c 80 "$VICTIM" | tr '\n' ' ')"
}

# provider_known PID: the daemon has taken the plugin's provider of PID
# (and, as it does in the same step, rewritten the session's metadata).
provider_known() {
	ctl info trace-events 'plugin:*' 2>/dev/null | grep -q "plugins\\[$1\\]"
}

# ---- a. the session directory swapped for a symlink ------------------
if want a; then
start_daemon
"$HELPERS/plugins" -w "$T/go" "$HELPERS/plugin.so" "$T/stop" \
	>"$T/plugins.out" 2>&1 &
prog=$!
bg_track $prog
wait_for 5 sh -c "ls '$TRACES'/plugins-$prog-*/metadata" >/dev/null ||
	hfail "the plugins program was not traced: $(cat "$T/plugins.out")"
S=$(ls -d "$TRACES"/plugins-$prog-*)
mv "$S" "$TRACES/moved-away"
mkdir "$T/evil"
ln -s "$VICTIM" "$T/evil/.metadata.tmp"
ln -s "$T/evil" "$S"
touch "$T/go"
wait_for 5 provider_known $prog ||
	hfail "finding 1 (a): the plugin's provider was never taken: $(cat "$T/plugins.out")"
victim_intact "a: session directory swapped for a symlink"
[ ! -e "$T/evil/metadata" ] ||
	hfail "finding 1 (a): the daemon wrote metadata into the directory the symlink points to"
grep -q 'plugin:plugin_hello' "$TRACES/moved-away/metadata" ||
	hfail "finding 1 (a): the rewritten metadata is not in the session's real directory ($TRACES/moved-away)"
# The plugin's events, read with the new metadata, in the real directory.
wait_for 10 sh -c "'$BIN/tracectl' trace-file flush >/dev/null &&
    babeltrace2 '$TRACES/moved-away' 2>/dev/null | grep -q 'plugin:plugin_hello:'" ||
	hfail "finding 1 (a): the moved session has no event of the plugin: $(babeltrace2 "$TRACES/moved-away" 2>&1 | tail -n 2)"
touch "$T/stop"
wait $prog || hfail "plugins: $(cat "$T/plugins.out")"
ctl trace-file flush >/dev/null
bt "$TRACES/moved-away" >"$T/a.txt" 2>"$T/a.err" ||
	hfail "finding 1 (a): babeltrace2 cannot read the moved session: $(head -c 300 "$T/a.err")"
bt "$TRACES" >/dev/null 2>"$T/a.err" ||
	hfail "finding 1 (a): babeltrace2 cannot read $TRACES: $(head -c 300 "$T/a.err")"
stop_daemon
ok "a. swapped session directory: the root-owned file is intact, the metadata went to the real directory, $(grep -c 'plugin:plugin_hello:' "$T/a.txt") plugin events read"
rm -rf "$TRACES"
fi

# ---- b. trace directories others could change ------------------------
if want b; then
OPEN="$T/open"			# others can write it
THEIRS="$T/theirs"		# belongs to the other user
mkdir "$OPEN" "$THEIRS"
chmod 0777 "$OPEN"
chown "$HUID:$HGID" "$THEIRS"
chmod 0755 "$THEIRS"

# refused_at_start DIR PATTERN WHAT
refused_at_start() {
	rm -rf "$T/run2"
	"$BIN/traced" --foreground --runtime-dir "$T/run2" --trace-dir "$1" \
		--state-dir "$T/state2" >"$T/start.out" 2>&1 &
	p=$!
	wait_for 5 sh -c "! kill -0 $p 2>/dev/null || test -S '$T/run2/control.sock'"
	if kill -0 $p 2>/dev/null; then
		kill $p
		wait $p || true
		hfail "finding 1 (b): traced started with a trace directory $3 ($1)"
	fi
	rc=0
	wait $p || rc=$?
	[ $rc != 0 ] || hfail "finding 1 (b): traced exited 0 with a trace directory $3"
	grep -Eq -- "$2" "$T/start.out" ||
		hfail "finding 1 (b): traced refused a trace directory $3 without naming why ($2): $(cat "$T/start.out")"
	echo "at start, a trace directory $3: exit $rc: $(tail -n 1 "$T/start.out")"
}
refused_at_start "$OPEN" "$SAYS_MODE" "others can write (0777)"
refused_at_start "$THEIRS" "$SAYS_OWNER" "of user $HOSTILE_USER"

# still_here WHAT: output still goes to $TRACES, nothing went to the
# refused directories, a new program is traced there.
still_here() {
	d=$(ctl --json info trace | jq -r '.items[0].trace_dir')
	[ "$d" = "$TRACES" ] ||
		hfail "finding 1 (b): after $1 the daemon traces to $d"
	for x in "$OPEN" "$THEIRS"; do
		[ -z "$(ls -A "$x")" ] ||
			hfail "finding 1 (b): after $1 the daemon wrote into $x: $(ls -A "$x" | head -n 3)"
	done
	"$HELPERS/emit" -t 1 -n 5 >/dev/null &
	p=$!
	wait $p || hfail "emit exited with $?"
	ls -d "$TRACES"/emit-$p-* >/dev/null 2>&1 ||
		hfail "finding 1 (b): after $1 a new program is not traced in $TRACES"
}

start_daemon
"$HELPERS/emit" -t 1 -i 1000 -s "$T/stop-b" >/dev/null &
e=$!
bg_track $e
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$e\\]'" ||
	hfail "emit did not connect"
for x in "$OPEN" "$THEIRS"; do
	if ctl trace-file set "$x" >"$T/set.out" 2>&1; then
		hfail "finding 1 (b): 'tracectl trace-file set $x' succeeded ($(ls -ld "$x" | cut -d' ' -f1,3)): $(cat "$T/set.out")"
	fi
	echo "trace-file set $x: refused: $(cat "$T/set.out")"
	still_here "trace-file set $x"
done
touch "$T/stop-b"
wait $e || hfail "emit exited with $?"
stop_daemon
ok "b. trace-file set: refused for a directory others can write or own"

# SIGHUP: the file's trace-dir changes to a directory others could
# change.  The daemon takes it from the file only (no --trace-dir).
echo "trace-dir = $TRACES" >"$T/traced.conf"
"$BIN/traced" --foreground --config "$T/traced.conf" \
	--runtime-dir "$TRACED_RUNTIME_DIR" --state-dir "$T/state" \
	>>"$T/traced.log" 2>&1 &
DAEMON_PID=$!
wait_for 10 test -S "$TRACED_RUNTIME_DIR/control.sock" ||
	hfail "traced --config did not start"
rm -f "$T/stop-b"
"$HELPERS/emit" -t 1 -i 1000 -s "$T/stop-b" >/dev/null &
e=$!
bg_track $e
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$e\\]'" ||
	hfail "emit did not connect"
for x in "$OPEN" "$THEIRS"; do
	echo "trace-dir = $x" >"$T/traced.conf"
	n=$(grep -c SIGHUP "$T/traced.log" || true)
	kill -HUP "$DAEMON_PID"
	wait_for 5 sh -c "[ \$(grep -c SIGHUP '$T/traced.log') -gt $n ]" ||
		hfail "no log line after SIGHUP"
	echo "SIGHUP, trace-dir = $x: $(grep SIGHUP "$T/traced.log" | tail -n 1)"
	still_here "SIGHUP with trace-dir = $x"
done
touch "$T/stop-b"
wait $e || hfail "emit exited with $?"
ctl trace-file flush >/dev/null
bt "$TRACES" >/dev/null 2>"$T/b.err" ||
	hfail "finding 1 (b): babeltrace2 cannot read $TRACES: $(head -c 300 "$T/b.err")"
stop_daemon
ok "b. SIGHUP: a trace-dir others could change is refused, traces stay in $TRACES"
fi

# ---- c. the trace directory deleted, a symlink planted ---------------
if want c; then
PUB="$T/pub"			# like /tmp: world-writable, sticky
mkdir "$PUB"
chmod 1777 "$PUB"
TRACES="$PUB/traces"
start_daemon
rm -f "$T/go" "$T/stop"
"$HELPERS/plugins" -w "$T/go" "$HELPERS/plugin.so" "$T/stop" \
	>"$T/plugins.out" 2>&1 &
prog=$!
bg_track $prog
wait_for 5 sh -c "ls '$TRACES'/plugins-$prog-*/metadata" >/dev/null ||
	hfail "the plugins program was not traced: $(cat "$T/plugins.out")"
S=$(basename "$(ls -d "$TRACES"/plugins-$prog-*)")
# The other user: its own tree, laid out like the trace directory.
as_hostile mkdir -p "$PUB/mine/$S"
as_hostile ln -s "$VICTIM" "$PUB/mine/$S/.metadata.tmp"
# Deleted, then the symlink in its place at once (a daemon that makes
# the directory again first wins the race: delete it again).
i=0
while :; do
	rm -rf "$TRACES"
	as_hostile ln -s "$PUB/mine" "$TRACES" 2>/dev/null && break
	i=$((i + 1))
	[ $i -lt 20 ] || hfail "the symlink could not be planted at $TRACES"
done
touch "$T/go"
wait_for 5 provider_known $prog ||
	hfail "finding 1 (c): the plugin's provider was never taken: $(cat "$T/plugins.out")"
"$HELPERS/emit" -t 1 -n 5 >/dev/null
sleep 0.3
victim_intact "c: trace directory replaced by a symlink"
made=$(find "$PUB/mine" -user root | head -n 5)
[ -z "$made" ] ||
	hfail "finding 1 (c): the daemon followed the other user's symlink at $TRACES and wrote $made"
kill -0 "$DAEMON_PID" || hfail "finding 1 (c): traced died"
ctl info trace >/dev/null || hfail "finding 1 (c): tracectl got no answer"
touch "$T/stop"
wait $prog || hfail "plugins: $(cat "$T/plugins.out")"
stop_daemon
ok "c. trace directory deleted and a symlink planted: nothing written through it"
fi
