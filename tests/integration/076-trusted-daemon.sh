#!/bin/sh
# SPDX-License-Identifier: MIT
# A traced program and tracectl talk only to a daemon they can trust
# (issue 9, findings 2, 3 and 8; issue 10, point 8).  A second account
# made by the test plays the hostile local user, with an impostor daemon
# (tests/helpers/fake-daemon, which logs every connection and message).
# Root's programs and root's tracectl:
#   (a) ignore /tmp/traced-0 made by that user (no connect at all) and
#       reach the real system daemon in /run/traced instead;
#   (b) refuse /tmp/traced-0 as a symlink (to /tmp, root's, where the
#       impostor's control.sock waits): tracectl exits 3 with the reason;
#   (c) refuse a root-owned directory whose listener is that user
#       (SO_PEERCRED): nothing is sent, tracectl exits 3 with the reason;
#   (d) a setuid-root copy of a traced program, run by that user with
#       TRACED_RUNTIME_DIR at the user's impostor, ignores the variable
#       and traces to the system daemon only, which counts it as that
#       user (its real uid), not root;
#   (e) TRACED_DEBUG=1 and tracectl's "no daemon" say, in one line,
#       every candidate tried and why it failed;
#   (f) tracectl's advice for a root daemon's control socket (closed to
#       the user, or open and a state change refused) is root, not
#       "usermod -aG root"; for another group, that group.
# Runs as root in a mount namespace of its own, with empty tmpfs on /tmp
# and on /run/traced (or /run), so that the machine's /tmp/traced-0 and
# /run/traced are never touched.
if [ -z "${TRACED_076_NS:-}" ]; then
	skip_test() { echo "SKIP: $*"; exit 77; }
	[ "$(id -u)" = 0 ] || skip_test "needs root (a second account, mounts)"
	for c in unshare setpriv useradd userdel groupadd groupdel mount; do
		command -v $c >/dev/null 2>&1 || skip_test "$c not found"
	done
	unshare --mount --propagation private true 2>/dev/null ||
		skip_test "cannot make a mount namespace here (unshare --mount)"
	TRACED_076_NS=1 exec unshare --mount --propagation private sh "$0" "$@"
fi
mount -t tmpfs -o mode=1777 traced-test /tmp || { echo "FAIL: mount /tmp"; exit 1; }
if [ -e /run/traced ] || [ -L /run/traced ]; then
	mount -t tmpfs -o mode=0755 traced-test /run/traced
else
	mount -t tmpfs -o mode=0755 traced-test /run && mkdir -m 0755 /run/traced
fi || { echo "FAIL: cannot mount a tmpfs for /run/traced"; exit 1; }
. "$(dirname "$0")/lib.sh"
unset XDG_RUNTIME_DIR TRACED_DEBUG
# Each traced program waits, before main(), until its first connection
# attempt is over: what it tried is said, and the impostor had its
# chance, however slow the machine.  (No daemon: no wait at all.)
export TRACED_CONNECT_TIMEOUT_MS=10000

H=trh$$			# the hostile user
G=trg$$			# a group the hostile user is not in
# After the impostors are killed: wait for them, so that no process of
# the user is left when it is deleted.
on_exit 'for p in $BG_PIDS; do wait "$p" 2>/dev/null || true; done
	userdel -f "$H" 2>"$T/userdel.err" || echo "userdel $H: $(cat "$T/userdel.err")" >&2
	groupdel "$H" 2>/dev/null || true
	groupdel "$G" 2>/dev/null || true'
useradd --system --no-create-home -U -s /usr/sbin/nologin "$H" 2>"$T/err" ||
	skip "useradd $H failed: $(cat "$T/err")"
groupadd "$G" 2>"$T/err" || skip "groupadd $G failed: $(cat "$T/err")"
HU=$(id -u "$H")
HG=$(id -g "$H")
as_h() { setpriv --reuid="$HU" --regid="$HG" --clear-groups "$@"; }
chmod 755 "$T"
as_h "$BIN/tracectl" --version >/dev/null 2>&1 ||
	skip "$BIN is not usable by other users (a private build directory)"

# fake LOG OPTIONS PATH...: an impostor listening at each PATH; as the
# hostile user when OPTIONS is "", else as root with these fake-daemon
# options (-u, -g: whom it becomes before listen(); -m: socket mode).
# Returns once it listens.
fake() {
	log=$1; opts=$2; shift 2
	: >"$log"
	chmod 666 "$log"
	if [ -z "$opts" ]; then
		# Not through as_h: a function in the background is a
		# subshell, and $! must be the impostor itself.
		setpriv --reuid="$HU" --regid="$HG" --clear-groups env TRACED=0 \
			"$HELPERS/fake-daemon" "$log" "$@" >>"$T/fake.err" 2>&1 &
	else
		# shellcheck disable=SC2086
		TRACED=0 "$HELPERS/fake-daemon" $opts "$log" "$@" >>"$T/fake.err" 2>&1 &
	fi
	bg_track $!
	FAKE=$!
	wait_for 5 grep -q '^listening' "$log" ||
		fail "fake-daemon did not start: $(cat "$T/fake.err")"
}
fake_stop() { kill "$FAKE"; wait "$FAKE" 2>/dev/null || true; }
# untouched LOG WHAT: the impostor saw no connection at all.
untouched() {
	! grep -q '^connection' "$1" || fail "$2: the impostor was reached: $(cat "$1")"
}
# unfed LOG WHAT: the impostor may have seen a connect(), nothing more.
unfed() {
	! grep -q '^message' "$1" || fail "$2: the impostor got a message: $(cat "$1")"
}
# tctl STATUS COMMAND...: root's tracectl with no runtime directory set.
tctl() {
	want=$1; shift
	set +e
	env -u TRACED_RUNTIME_DIR "$BIN/tracectl" -t 5 "$@" >"$T/out" 2>"$T/err"
	got=$?
	set -e
	[ "$got" = "$want" ] || fail "tracectl $* exited $got, not $want: $(cat "$T/err")"
}
has() {	# FILE TEXT...: each TEXT is in FILE
	f=$1; shift
	for want in "$@"; do
		grep -qF -- "$want" "$f" || fail "no '$want' in: $(cat "$f")"
	done
}

# ---- no daemon at all ----------------------------------------------------

# (b) /tmp/traced-0 -> /tmp, whose control.sock is the impostor's.
fake "$T/b.log" "" /tmp/control.sock /tmp/client.sock
as_h ln -s /tmp /tmp/traced-0
tctl 3 info trace
has "$T/err" "/tmp/traced-0" "symlink" "no daemon: tried"
untouched "$T/b.log" "(b) tracectl"
env -u TRACED_RUNTIME_DIR "$HELPERS/emit" -t 1 -n 10 >/dev/null ||
	fail "emit with a symlinked /tmp/traced-0"
untouched "$T/b.log" "(b) a traced program"
ok "(b) /tmp/traced-0 a symlink: refused, tracectl exit 3: $(grep -F /tmp/traced-0 "$T/err" | head -n 1)"
rm /tmp/traced-0
fake_stop

# (e) Why each candidate failed, one line: root, then the hostile user.
mkdir -m 0700 "$T/xdg"
as_h mkdir -m 0755 /tmp/traced-0
env -u TRACED_RUNTIME_DIR XDG_RUNTIME_DIR="$T/xdg" TRACED_DEBUG=1 \
	"$HELPERS/emit" -t 1 -n 10 >/dev/null 2>"$T/dbg" || fail "emit (e)"
grep "no daemon: tried" "$T/dbg" >"$T/line" || fail "(e) no 'no daemon' line: $(cat "$T/dbg")"
[ "$(wc -l <"$T/line")" = 1 ] || fail "(e) said it more than once: $(cat "$T/line")"
has "$T/line" "tried $T/xdg/traced (missing), /tmp/traced-0 (owned by uid $HU, " \
	", /run/traced/client.sock (missing)"
ok "(e) root: $(sed 's/^libtraced\[[0-9]*\]: //' "$T/line")"
export XDG_RUNTIME_DIR="$T/xdg"
tctl 3 info trace
unset XDG_RUNTIME_DIR
has "$T/err" "no daemon: tried $T/xdg/traced (missing), /tmp/traced-0 (owned by uid $HU" \
	", /run/traced/control.sock (missing)"
ok "(e) tracectl, exit 3: $(grep 'no daemon' "$T/err")"

mkdir -m 0700 "$T/xdgh" && chown "$HU:$HG" "$T/xdgh"
mkdir -m 0777 "/tmp/traced-$HU"
fake "$T/e.log" "-u 0 -g 0 -m 0600" /run/traced/client.sock
as_h env -u TRACED_RUNTIME_DIR XDG_RUNTIME_DIR="$T/xdgh" TRACED_DEBUG=1 \
	"$HELPERS/emit" -t 1 -n 10 >/dev/null 2>"$T/dbg" || fail "emit (e) as $H"
grep "no daemon: tried" "$T/dbg" >"$T/line" || fail "(e) no 'no daemon' line: $(cat "$T/dbg")"
has "$T/line" "tried $T/xdgh/traced (missing), /tmp/traced-$HU (writable by group or others" \
	", /run/traced/client.sock (permission denied)"
ok "(e) $H: $(sed 's/^libtraced\[[0-9]*\]: //' "$T/line")"
fake_stop
rm -rf "/tmp/traced-$HU" /run/traced/client.sock

# ---- a real system daemon, root's, in /run/traced -----------------------

export TRACED_RUNTIME_DIR=/run/traced
start_daemon --system
unset TRACED_RUNTIME_DIR

# (a) /tmp/traced-0 is the hostile user's (made above), with an impostor.
fake "$T/a.log" "" /tmp/traced-0/client.sock /tmp/traced-0/control.sock
env -u TRACED_RUNTIME_DIR TRACED_DEBUG=1 "$HELPERS/emit" -t 2 -n 100 \
	>"$T/a.out" 2>"$T/dbg" || fail "emit (a)"
untouched "$T/a.log" "(a) a traced program"
has "$T/dbg" "skipped: /tmp/traced-0 (owned by uid $HU" "connected to /run/traced/client.sock"
tctl 0 trace-file flush
tctl 0 info trace
has "$T/err" "ignoring /tmp/traced-0: owned by uid $HU"
untouched "$T/a.log" "(a) tracectl"
grep -q "emit\[[0-9]*\] uid 0" "$T/out" || fail "(a) not traced by the system daemon: $(cat "$T/out")"
bt "$TRACES" >"$T/a.txt" 2>/dev/null || fail "(a) babeltrace2"
n=$(count_events "$T/a.txt" test_tick)
[ "$n" = 200 ] || fail "(a) $n test_tick events in the system daemon's trace, not 200"
ok "(a) /tmp/traced-0 of $H untouched; the system daemon traced all $n ticks"
fake_stop

# (c) A root-owned directory, the listener the hostile user's.
mkdir -m 0755 "$T/c"
fake "$T/c.log" "-u $HU -g $HG" "$T/c/client.sock" "$T/c/control.sock"
TRACED_RUNTIME_DIR="$T/c" TRACED_DEBUG=1 "$HELPERS/emit" -t 1 -n 10 \
	>/dev/null 2>"$T/dbg" || fail "emit (c)"
unfed "$T/c.log" "(c) a traced program"
has "$T/dbg" "$T/c/client.sock (the daemon there runs as uid $HU"
set +e
"$BIN/tracectl" -t 5 -r "$T/c" info trace >"$T/out" 2>"$T/err"; got=$?
set -e
[ "$got" = 3 ] || fail "(c) tracectl -r exited $got, not 3: $(cat "$T/err")"
has "$T/err" "$T/c/control.sock" "runs as uid $HU"
unfed "$T/c.log" "(c) tracectl"
ok "(c) a listener of uid $HU refused: $(head -n 1 "$T/err")"
fake_stop

# (f) The advice when the control socket is closed to the user.
set +e
as_h env -u TRACED_RUNTIME_DIR "$BIN/tracectl" info trace >"$T/out" 2>"$T/err"; got=$?
set -e
[ "$got" = 1 ] || fail "(f) tracectl as $H exited $got, not 1: $(cat "$T/err")"
! grep -q "usermod" "$T/err" || fail "(f) advice to join root's group: $(cat "$T/err")"
has "$T/err" "/run/traced/control.sock: permission denied" "runs as root" "only root"
ok "(f) root's daemon: $(sed -n 2p "$T/err")"
# Opened to all: reading works, a state change is refused, and the
# advice is root again.
chmod 0666 /run/traced/control.sock
set +e
as_h env -u TRACED_RUNTIME_DIR "$BIN/tracectl" trace-event test_tick off >"$T/out" 2>"$T/err"; got=$?
set -e
[ "$got" = 1 ] || fail "(f) a state change as $H exited $got, not 1: $(cat "$T/err")"
! grep -q "usermod" "$T/err" || fail "(f) advice to join root's group: $(cat "$T/err")"
has "$T/err" "need root ('sudo tracectl"
ok "(f) root's daemon, state change: $(tail -n 1 "$T/err")"
chmod 0660 /run/traced/control.sock
chgrp "$G" /run/traced/control.sock
set +e
as_h env -u TRACED_RUNTIME_DIR "$BIN/tracectl" info trace >"$T/out" 2>"$T/err"; got=$?
set -e
[ "$got" = 1 ] || fail "(f) tracectl as $H exited $got, not 1: $(cat "$T/err")"
has "$T/err" "usermod -aG $G $H"
ok "(f) group $G: $(grep usermod "$T/err")"
chgrp root /run/traced/control.sock

# (d) A setuid-root copy of a traced program, run by the hostile user
# with TRACED_RUNTIME_DIR at the user's own impostor.  /tmp here is our
# tmpfs, mounted without nosuid.
mkdir -m 0755 /tmp/suid "$T/hd"
chown "$HU:$HG" "$T/hd"
cp "$HELPERS/emit" /tmp/suid/emit
cp "$(command -v id)" /tmp/suid/id
chmod 4755 /tmp/suid/emit /tmp/suid/id
[ "$(as_h /tmp/suid/id -u)" = 0 ] ||
	skip "(a), (b), (c), (e), (f) passed; (d) cannot run: setuid does not work here (no_new_privs?)"
fake "$T/d.log" "" "$T/hd/client.sock" "$T/hd/control.sock"
# It runs until told to stop (it ignores TRACED_CONNECT_TIMEOUT_MS: it
# may start before its connection is made).  Not through as_h: $! must
# be the program.
setpriv --reuid="$HU" --regid="$HG" --clear-groups env \
	TRACED_RUNTIME_DIR="$T/hd" TRACED_DEBUG=1 \
	/tmp/suid/emit -t 1 -i 1000 -s /tmp/d.stop >/dev/null 2>"$T/d.err" &
d=$!
bg_track $d
# Traced, and counted as the user who ran it (issue 25, finding 11):
# root's limits (none) and pool rings are not the user's to take.
wait_for 10 sh -c "'$BIN/tracectl' -r /run/traced info trace | grep -q 'emit\[$d\] uid $HU'" ||
	fail "(d) the setuid program was not traced by the system daemon as uid $HU: $("$BIN/tracectl" -r /run/traced info trace)"
touch /tmp/d.stop
wait $d || fail "(d) setuid emit exited with $?: $(cat "$T/d.err")"
untouched "$T/d.log" "(d) a setuid program"
[ ! -s "$T/d.err" ] || fail "(d) TRACED_DEBUG obeyed by a setuid program: $(cat "$T/d.err")"
ok "(d) setuid-root emit run by $H: its TRACED_RUNTIME_DIR ignored, traced by the system daemon as uid $HU"
fake_stop

stop_daemon
