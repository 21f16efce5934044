#!/bin/sh
# SPDX-License-Identifier: MIT
# Who may do what with a system daemon that is not root, as under
# systemd: traced --system run by a user of its own, with users made for
# the test.
#   - any user's traced program is traced (client.sock 0666);
#   - an ordinary user (not root, not in the daemon's group) is refused
#     every command, reading and state-changing alike, by control.sock's
#     mode 0660: tracectl says "permission denied" with the socket's
#     path, owner, group and mode and the fix, and exits 1;
#   - a member of the daemon's group reads; one whose primary group it
#     is also changes state;
#   - with control.sock opened to all (0666), the ordinary user reads,
#     and the daemon refuses state changes with a clear message, exit 1.
# The daemon's runtime directory is /run/traced, as a system daemon's
# is: the users' programs and tracectl trust its owner as the system
# daemon's user (proto/rundir.h).  So the test runs in a mount
# namespace of its own, with a tmpfs there (on /run when there is no
# /run/traced to mount on): the machine's /run/traced is never touched.
skip_test() { echo "SKIP: $*"; exit 77; }
if [ -z "${TRACED_074_NS:-}" ]; then
	[ "$(id -u)" = 0 ] || skip_test "needs root to create test users"
	for c in useradd userdel groupdel setpriv unshare mount; do
		command -v $c >/dev/null 2>&1 || skip_test "$c not found"
	done
	unshare --mount --propagation private true 2>/dev/null ||
		skip_test "cannot make a mount namespace here (unshare --mount)"
	TRACED_074_NS=1 exec unshare --mount --propagation private sh "$0" "$@"
fi
if [ -e /run/traced ] || [ -L /run/traced ]; then
	mount -t tmpfs -o mode=0755 traced-test /run/traced
else
	mount -t tmpfs -o mode=0755 traced-test /run && mkdir -m 0755 /run/traced
fi || skip_test "cannot mount a tmpfs for /run/traced"
. "$(dirname "$0")/lib.sh"
export TRACED_RUNTIME_DIR=/run/traced

ID=$$
D=trtd$ID		# the daemon's user and group
U=trtu$ID		# an ordinary user
S=trts$ID		# in group $D (supplementary)
M=trtm$ID		# primary group $D
MADE=

users_cleanup() {
	if [ -n "$DAEMON_PID" ]; then
		kill "$DAEMON_PID" 2>/dev/null || true
		wait "$DAEMON_PID" 2>/dev/null || true
		DAEMON_PID=
	fi
	for u in $MADE; do userdel "$u" 2>/dev/null || true; done
	for g in $U $S $D; do groupdel "$g" 2>/dev/null || true; done
}
trap 'st=$?; users_cleanup; (exit $st); cleanup' EXIT

mkuser() {	# NAME useradd-options...
	n=$1; shift
	useradd -M -s /usr/sbin/nologin "$@" "$n" 2>"$T/useradd.err" ||
		skip_test "useradd $n failed: $(cat "$T/useradd.err")"
	MADE="$n $MADE"
}
mkuser "$D" -U
mkuser "$U" -U
mkuser "$S" -U -G "$D"
mkuser "$M" -N -g "$D"

as() {	# USER COMMAND...
	who=$1; shift
	setpriv --reuid="$who" --regid="$(id -g "$who")" --init-groups "$@"
}

chmod 755 "$T"
as "$U" "$BIN/tracectl" --version >/dev/null 2>&1 ||
	skip_test "$BIN is not usable by other users (a private build directory)"

RUN="$TRACED_RUNTIME_DIR"
mkdir -p "$RUN" "$T/state" "$TRACES"
chown "$D:$D" "$RUN" "$T/state" "$TRACES"
# Not through as(): a function in the background is a subshell, and
# DAEMON_PID must be the daemon's.
setpriv --reuid="$D" --regid="$D" --init-groups "$BIN/traced" --foreground \
	--system --runtime-dir "$RUN" --trace-dir "$TRACES" \
	--state-dir "$T/state" --ring-pool 1 >>"$T/traced.log" 2>&1 &
DAEMON_PID=$!
wait_for 10 test -S "$RUN/control.sock" || fail "traced did not start"
[ "$(stat -c '%a %U' "$RUN/client.sock")" = "666 $D" ] ||
	fail "client.sock: $(stat -c '%a %U:%G' "$RUN/client.sock")"
[ "$(stat -c '%a %U:%G' "$RUN/control.sock")" = "660 $D:$D" ] ||
	fail "control.sock: $(stat -c '%a %U:%G' "$RUN/control.sock")"
# control.sock is there before the daemon is ready.
wait_for 10 grep -q "ready: system daemon" "$T/traced.log" ||
	fail "not the system daemon"
ok "traced --system as user $D: client.sock 0666, control.sock 0660 $D:$D"

# Any user's program is traced by the system daemon.
as "$U" "$HELPERS/emit" -t 1 -n 20 >/dev/null || fail "emit as $U"
ctl trace-file flush >/dev/null
ctl info trace | grep -q "emit\[[0-9]*\] uid $(id -u "$U")" ||
	fail "the program of $U was not traced: $(ctl info trace)"
ok "a program of $U (uid $(id -u "$U")) is traced"

# The ring pool serves the daemon's own user only: its memory is charged
# to the daemon, and a program may keep it (daemon/pool.c).
wait_for 20 sh -c "'$BIN/tracectl' info trace | grep -q 'ring pool: 1 of 1 .*, 0 given'" ||
	fail "no pool ring made: $(ctl info trace | grep 'ring pool')"
as "$U" env TRACED_DEBUG=1 "$HELPERS/emit" -t 1 -n 20 >/dev/null 2>"$T/pool-u.err" ||
	fail "emit as $U"
! grep -q "pool ring" "$T/pool-u.err" ||
	fail "a program of $U got the pool ring of $D: $(grep 'pool ring' "$T/pool-u.err")"
ctl info trace | grep -q 'ring pool: 1 of 1 .*, 0 given' ||
	fail "the pool gave a ring to $U: $(ctl info trace | grep 'ring pool')"
as "$D" env TRACED_DEBUG=1 "$HELPERS/emit" -t 1 -n 20 >/dev/null 2>"$T/pool-d.err" ||
	fail "emit as $D"
grep -q "a pool ring of [0-9]* bytes from the daemon" "$T/pool-d.err" ||
	fail "a program of $D got no pool ring: $(cat "$T/pool-d.err")"
ok "the ring pool serves $D, the daemon's user, and not $U"

expect() {	# STATUS USER COMMAND...
	want=$1; shift
	set +e
	as "$@" >"$T/out" 2>"$T/err"; got=$?
	set -e
	[ "$got" = "$want" ] || fail "as $1, '$*' exited $got, not $want: $(cat "$T/err")"
}

# An ordinary user: refused by the socket's mode, whatever the command.
for cmd in "info trace" "trace-event test_tick off" "trace-file flush"; do
	# shellcheck disable=SC2086
	expect 1 "$U" "$BIN/tracectl" $cmd
	for want in "$RUN/control.sock: permission denied" \
		"the socket is $D:$D, mode 0660" \
		"you (uid $(id -u "$U")) are not in group $D" \
		"add you to group $D ('usermod -aG $D $U')"; do
		grep -qF "$want" "$T/err" ||
			fail "'$cmd' as $U: no '$want' in: $(cat "$T/err")"
	done
done
ok "$U refused by the socket's mode, exit 1: $(head -n 1 "$T/err")"

# A program of $U that runs until the end, for 'info trace-events'.
setpriv --reuid="$U" --regid="$U" --init-groups "$HELPERS/emit" -t 1 -i 2000 \
	-s "$T/stop" >/dev/null &
EMIT=$!
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$EMIT\\]'" ||
	fail "the second program of $U did not connect"

# Group members.
expect 0 "$S" "$BIN/tracectl" info trace
grep -q "emit\[" "$T/out" || fail "info trace as $S: $(cat "$T/out")"
expect 0 "$M" "$BIN/tracectl" trace-event test_tick off
ok "$S (in group $D) reads; $M (primary group $D) changes state"

# control.sock opened to everyone: reading works, state changes do not.
chmod 0666 "$RUN/control.sock"
expect 0 "$U" "$BIN/tracectl" info trace-events test_tick
grep -q "test_tick *off" "$T/out" || fail "info trace-events as $U: $(cat "$T/out")"
expect 1 "$U" "$BIN/tracectl" trace-event test_tick on
grep -q "'trace-event' changes the daemon's state: it needs root" "$T/err" ||
	fail "refusal message: $(cat "$T/err")"
refusal=$(cat "$T/err")
ctl info trace-events test_tick | grep -q "test_tick *off" ||
	fail "the refused command changed the rules"
expect 1 "$U" "$BIN/tracectl" --json trace-file off
grep -q '"ok": false, "status": "denied"' "$T/out" || fail "--json denied: $(cat "$T/out")"
ok "control.sock 0666: $U reads, state changes refused: $refusal"

touch "$T/stop"
wait "$EMIT" || fail "emit as $U exited with $?"
stop_daemon
