#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 9, finding 6: bytes from clients cannot break the JSON for
# everyone.  Another user runs a traced program whose comm (what the
# kernel calls it) has a Latin-1 byte, "caf\351", which is not UTF-8.
# While it runs and after it ended, 'tracectl --json info trace' and
# 'tracectl --json info sessions' exit 0 with valid JSON (jq reads it),
# for root and for the other user (control.sock opened to all, as 074
# does), and the program's name shows escaped: "caf" and more, neither
# dropped nor cut to "caf".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hostile.sh"
bg_track_init

hostile_init
start_daemon
# Readable by everyone: reading commands are then allowed to all.
chmod 0666 "$TRACED_RUNTIME_DIR/control.sock"

# The kernel names a process after the file it executes: a symlink to
# emit named with the byte 0xe9.
NAME=$(printf 'caf\351')
mkdir -m 0755 "$T/bin"
ln -s "$HELPERS/emit" "$T/bin/$NAME"
$AS_HOSTILE "$T/bin/$NAME" -t 1 -i 1000 -s "$T/stop" >"$T/emit.out" 2>&1 &
prog=$!
bg_track $prog
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q '\\[$prog\\]'" ||
	hfail "the program did not connect: $(ctl info trace 2>&1 | head -n 5)"
[ "$(cat /proc/$prog/comm)" = "$NAME" ] ||
	skip "the kernel did not name the program '$NAME' (comm $(cat /proc/$prog/comm))"

# check_json WHEN: both commands, as root and as the other user.
check_json() {
	for who in root "$HOSTILE_USER"; do
		for cmd in "info trace" "info sessions"; do
			rc=0
			if [ $who = root ]; then
				# shellcheck disable=SC2086
				"$BIN/tracectl" --json $cmd >"$T/j.out" 2>"$T/j.err" || rc=$?
			else
				# shellcheck disable=SC2086
				as_hostile "$BIN/tracectl" --json $cmd >"$T/j.out" 2>"$T/j.err" || rc=$?
			fi
			[ $rc = 0 ] ||
				hfail "finding 6 ($1): 'tracectl --json $cmd' as $who exited $rc: $(head -c 300 "$T/j.err")"
			jq . "$T/j.out" >/dev/null 2>"$T/jq.err" ||
				hfail "finding 6 ($1): 'tracectl --json $cmd' as $who printed invalid JSON ($(cat "$T/jq.err")): $(head -c 300 "$T/j.out")"
			names=$(jq -r --argjson p "$prog" \
			    '[.items[] | select(.pid == $p) | .comm] | .[]' "$T/j.out")
			[ -n "$names" ] ||
				hfail "finding 6 ($1): 'tracectl --json $cmd' as $who does not list the program: $(head -c 300 "$T/j.out")"
			echo "$names" | grep -qv '^caf..*$' &&
				hfail "finding 6 ($1): 'tracectl --json $cmd' as $who shows the program as '$(echo "$names" | head -n 1)', not 'caf' and its last byte escaped"
			echo "$1, $cmd as $who: exit 0, valid JSON, comm \"$(echo "$names" | head -n 1)\""
		done
	done
}

check_json "while it runs"
touch "$T/stop"
wait $prog || hfail "the program exited with $?: $(cat "$T/emit.out")"
wait_no_sessions 5 || hfail "the session did not end"
check_json "after it ended"
ctl trace-file flush >/dev/null
bt "$TRACES" >/dev/null 2>"$T/bt.err" ||
	hfail "finding 6: babeltrace2 cannot read $TRACES: $(head -c 300 "$T/bt.err")"
ok "finding 6: a comm with a Latin-1 byte: JSON stays valid for everyone"
stop_daemon
