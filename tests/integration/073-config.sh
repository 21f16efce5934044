#!/bin/sh
# SPDX-License-Identifier: MIT
# traced.conf(5): a bad file stops the daemon at start with file:line
# and the reason; options override the file; SIGHUP applies what changed
# in the file to the settings that can change (trace-dir moves running
# sessions, ring-size for new processes, drain-interval, writeout-nice
# reniced writeout, drain and intake threads), names those that need a
# restart and those the command line keeps, and a bad file on SIGHUP
# changes nothing.
. "$(dirname "$0")/lib.sh"

CONF="$T/traced.conf"

# refused TEXT MESSAGE: traced --config with TEXT (no file if empty)
# exits 1 saying MESSAGE.  A daemon that starts is stopped after 5 s.
refused() {
	rm -f "$CONF"
	[ -z "$1" ] || printf '%b' "$1" >"$CONF"
	set +e
	timeout 5 "$BIN/traced" --foreground --config "$CONF" \
		--runtime-dir "$T/norun" --trace-dir "$TRACES" \
		--state-dir "$T/state" >"$T/out" 2>&1
	rc=$?
	set -e
	[ "$rc" = 1 ] || fail "exit status $rc for '$1', not 1"
	grep -qF "$2" "$T/out" || fail "for '$1': $(cat "$T/out")"
	[ ! -e "$T/norun" ] || fail "a refused configuration created the runtime directory"
}
refused '# settings\nworkers = 2\n\nwrokers = 3\n' \
	"$CONF:4: unknown key 'wrokers' (did you mean 'workers'?); every key is in traced.conf(5)"
refused 'rings-per-uid = 0\n' "$CONF:1: rings-per-uid: 0 is out of range (1 to 1048576)"
refused 'drain-interval 50\n' "$CONF:1: expected 'key = value'"
refused 'ring-size = 3K\n' "$CONF:1: ring-size: 3K is less than 4K, the smallest ring"
refused 'writeout-nice = 20\n' "$CONF:1: writeout-nice: '20' is not a number from 0 to 19"
refused 'direct-io = 1\n' "$CONF:1: direct-io: '1' is neither on nor off"
refused 'trace-dir = traces\n' "$CONF:1: trace-dir: 'traces' is not an absolute path"
refused 'workers = 2\nworkers = 3\n' "$CONF:2: workers is already set at line 1"
refused '' "$CONF: No such file or directory"
ok "bad files refused with file:line and the reason"
set +e
"$BIN/traced" --foreground --drain-interval 0 >"$T/out" 2>&1; rc=$?
set -e
[ "$rc" = 2 ] && grep -q "traced: --drain-interval: '0' is not a number" "$T/out" ||
	fail "bad option: status $rc, $(cat "$T/out")"
ok "a bad option value is a usage error (2), checked like the file's"

# Options override the file.  Every directory comes from the file.
cat >"$CONF" <<EOF
# test settings
runtime-dir = $TRACED_RUNTIME_DIR
state-dir = $T/state
trace-dir = $TRACES
drain-interval = 30
ring-size = 64K		# small
workers = 2
writeout-nice = 10
EOF
"$BIN/traced" --foreground --config "$CONF" --drain-interval 40 \
	>>"$T/traced.log" 2>&1 &
DAEMON_PID=$!
wait_for 10 test -S "$TRACED_RUNTIME_DIR/control.sock" || fail "traced did not start"
ctl info trace >"$T/info"
grep -q "writeout: 2 threads (nice 10, direct I/O on), drain every 40 ms; default ring 64 KiB" "$T/info" ||
	fail "file + options: $(cat "$T/info")"
grep -q "configuration $CONF" "$T/traced.log" || fail "the log does not name the file"
ok "file read, --drain-interval wins over it"

# nice_of_writeout: the niceness of the threads writeout-nice sets
# (writeout, drain, intake), "NAME=N" each, sorted, one line.
nice_of_writeout() {
	for t in /proc/"$DAEMON_PID"/task/*; do
		c=$(cat "$t/comm")
		case $c in traced-writeout|traced-drain|traced-intake) ;; *) continue ;; esac
		# Field 19 of stat, after the ')' that ends the name.
		echo "$c=$(sed 's/.*) //' "$t/stat" | cut -d' ' -f17)"
	done | sort -u | tr '\n' ' '
}
at_nice() { echo "traced-drain=$1 traced-intake=$1 traced-writeout=$1 "; }
[ "$(nice_of_writeout)" = "$(at_nice 10)" ] || fail "writeout-nice 10: $(nice_of_writeout)"

# A session that keeps running through the reload.
"$HELPERS/emit" -t 1 -i 1000 -s "$T/stop" >/dev/null &
emit=$!
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$emit\\]'" ||
	fail "emit did not connect"

cat >"$CONF" <<EOF
runtime-dir = $TRACED_RUNTIME_DIR
state-dir = $T/state
drain-interval = 20
ring-size = 256K
workers = 3
writeout-nice = 15
direct-io = off
trace-dir = $T/moved
EOF
reload_daemon
for want in "changed trace-dir $TRACES -> $T/moved" "ring-size 64K -> 256K" \
	"writeout-nice 10 -> 15" "direct-io on -> off" \
	"needs a restart: workers 2 -> 3" \
	"the command line keeps drain-interval (not from the file)"; do
	case $RELOAD_LINE in
	*"$want"*) ;;
	*) fail "reload line lacks '$want': $RELOAD_LINE" ;;
	esac
done
ctl info trace >"$T/info"
grep -q "writeout: 2 threads (nice 15, direct I/O off), drain every 40 ms; default ring 256 KiB" "$T/info" ||
	fail "after reload: $(grep writeout: "$T/info")"
grep -q "trace file: $T/moved (on)" "$T/info" || fail "trace-dir not moved"
[ "$(nice_of_writeout)" = "$(at_nice 15)" ] || fail "writeout-nice 15 after reload: $(nice_of_writeout)"
sleep 0.3
ctl trace-file flush >/dev/null
ls "$T/moved"/emit-"$emit"-*/metadata >/dev/null 2>&1 ||
	fail "the running session did not move to $T/moved"
[ "$(bt "$T/moved" 2>/dev/null | grep -c ':test_tick:' || true)" -gt 0 ] ||
	fail "no events in the new trace directory"
ok "SIGHUP: $RELOAD_LINE"
# 'trace-file set default' goes where the reloaded file says.
ctl trace-file set default >"$T/default" 2>&1 || fail "set default: $(cat "$T/default")"
grep -q "tracing to $T/moved" "$T/default" ||
	fail "trace-file set default after SIGHUP: $(cat "$T/default")"

# A new process gets the new default ring size.
"$HELPERS/emit" -t 1 -n 5 >/dev/null
ctl --json info trace | grep -q '"default_ring_size":262144' || fail "default ring size"

# A bad file on SIGHUP changes nothing; the daemon carries on.
printf 'drain-interval = 20\nring-size = huge\n' >"$CONF"
reload_daemon
case $RELOAD_LINE in
*"$CONF:2: ring-size: 'huge' is not a size (a power of two from 4K to 1G, such as 1M): configuration not reloaded, nothing changed"*) ;;
*) fail "bad file on SIGHUP: $RELOAD_LINE" ;;
esac
ctl info trace | grep -q "default ring 256 KiB" || fail "a bad file changed something"
ok "bad file on SIGHUP: nothing changed"

# A file that says what it said: nothing changes, even a directory set
# with trace-file set since.
cat >"$CONF" <<EOF
runtime-dir = $TRACED_RUNTIME_DIR
state-dir = $T/state
drain-interval = 20
ring-size = 256K
workers = 3
writeout-nice = 15
direct-io = off
trace-dir = $T/moved
EOF
ctl trace-file set "$T/elsewhere" >/dev/null
reload_daemon
case $RELOAD_LINE in
*"nothing changed"*) ;;
*) fail "unchanged file: $RELOAD_LINE" ;;
esac
ctl info trace | grep -q "trace file: $T/elsewhere (on)" ||
	fail "an unchanged trace-dir undid trace-file set"
# Removing a setting from the file brings its default back.
sed -i '/^ring-size/d' "$CONF"
reload_daemon
case $RELOAD_LINE in
*"ring-size 256K -> 16M"*) ;;
*) fail "setting removed: $RELOAD_LINE" ;;
esac
ok "only what changed in the file is applied; a removed setting returns to its default"
touch "$T/stop"
wait $emit
stop_daemon
