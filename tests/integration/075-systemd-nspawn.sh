#!/bin/sh
# SPDX-License-Identifier: MIT
# traced under a real systemd: Debian's systemd booted as PID 1 in a
# systemd-nspawn container (see shared/systemd-nspawn.md).  The test
# installs traced there with 'make install DESTDIR=... PREFIX=/usr/local
# SYSTEMDUNITDIR=/etc/systemd/system', follows the README (sysusers,
# tmpfiles, enable traced.socket), and checks that
#   - both sockets listen with their modes (0666; 0660 root:traced);
#   - a traced program, built against the installed libtraced.so, starts
#     traced.service by connecting, and is traced, and so is the same
#     program run by an ordinary user;
#   - the daemon runs as user traced, Type=notify (StatusText), and
#     'tracectl' with no option reaches it, also after a stop (socket
#     activation again);
#   - babeltrace2 reads every event; 'systemctl reload' re-reads
#     traced.conf; the journal has priorities from the log prefixes;
#     'systemctl stop' is clean.
# The root filesystem (debootstrap minbase, about 250 MB) is cached in
# $TRACED_CI_CACHE (default /var/cache/traced-ci).  Skips only where the
# container cannot be made or booted.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/lib-nspawn.sh"
nspawn_require

# 1. The root filesystem, with the runtime libraries (this test installs
# with make install, which brings none; zlib is in minbase).
nspawn_rootfs "$NSPAWN_PKGS"

# 2. Install as the README says, and build the example against the
# installed library with the installed tracegen.
I="$ROOT/usr/local"
make -s -C "$SRC" O="$O" install DESTDIR="$ROOT" PREFIX=/usr/local \
	SYSTEMDUNITDIR=/etc/systemd/system >"$T/install.log" 2>&1 ||
	fail "make install DESTDIR=$ROOT: $(tail -n 5 "$T/install.log")"
mkdir -p "$T/ex"
"$I/bin/tracegen" --header "$SRC/example/trace-events" >"$T/ex/trace.h"
"$I/bin/tracegen" --source "$SRC/example/trace-events" >"$T/ex/trace.c"
san=
[ "${SANITIZE:-}" != 1 ] || san="-fsanitize=address,undefined"
# shellcheck disable=SC2086
${CC:-cc} $san -O2 -I"$T/ex" -I"$I/include" -o "$I/bin/traced-example" \
	"$SRC/example/example.c" "$T/ex/trace.c" -L"$I/lib" -ltraced -pthread \
	2>"$T/cc.err" || fail "building the example: $(cat "$T/cc.err")"
if [ -n "$san" ]; then
	# LeakSanitizer stops the world with ptrace, which the unit's
	# SystemCallFilter= refuses: the rest of the sanitizers run.
	mkdir -p "$ROOT/etc/systemd/system/traced.service.d"
	printf '[Service]\nEnvironment=ASAN_OPTIONS=detect_leaks=0\n' \
		>"$ROOT/etc/systemd/system/traced.service.d/asan.conf"
fi

# 3. Boot.
nspawn_boot --private-network

# 4. The README's steps after make install.
in_ct systemd-sysusers >"$T/ct.log" 2>&1 || fail "systemd-sysusers: $(cat "$T/ct.log")"
in_ct systemd-tmpfiles --create >>"$T/ct.log" 2>&1 || true	# others' lines may fail
in_ct ldconfig
in_ct systemctl daemon-reload
in_ct systemctl enable --now traced.socket >>"$T/ct.log" 2>&1 ||
	fail "enable --now traced.socket: $(cat "$T/ct.log")"
wait_for 5 in_ct systemctl is-active traced.socket traced-control.socket ||
	fail "sockets not listening: $(in_ct systemctl status traced.socket traced-control.socket --no-pager)"
modes=$(in_ct stat -c '%a %U:%G %n' /run/traced/client.sock /run/traced/control.sock | tr '\n' ' ')
[ "$modes" = "666 root:root /run/traced/client.sock 660 root:traced /run/traced/control.sock " ] ||
	fail "socket modes: $modes"
in_ct systemctl is-active traced.service >/dev/null 2>&1 &&
	fail "traced.service runs before any client"
ok "traced.socket, traced-control.socket listening: $modes"

# 5. A traced program starts the daemon and is traced; so is a user's.
in_ct env TRACED_CONNECT_TIMEOUT_MS=10000 /usr/local/bin/traced-example 3 20 \
	>"$T/ex.out" 2>&1 || fail "traced-example: $(cat "$T/ex.out")"
in_ct systemctl is-active traced.service >/dev/null ||
	fail "traced.service not started by the program: $(in_ct journalctl -u traced --no-pager | tail -n 20)"
in_ct setpriv --reuid=nobody --regid=nogroup --clear-groups \
	env TRACED_CONNECT_TIMEOUT_MS=10000 /usr/local/bin/traced-example 2 10 \
	>"$T/ex.out" 2>&1 || fail "traced-example as nobody: $(cat "$T/ex.out")"
main=$(in_ct systemctl show -p MainPID --value traced.service)
uid=$(in_ct sed -n 's/^Uid:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$main/status")
[ "$uid" = "$(in_ct id -u traced)" ] || fail "traced runs as uid $uid, not traced"
status=$(in_ct systemctl show -p StatusText --value traced.service)
echo "$status" | grep -Eq '^[0-9]+ sessions?, [0-9]+ events/s, 0 lost$' ||
	fail "StatusText: '$status'"
ok "traced-example started traced.service (user traced, status '$status')"

# 6. tracectl with no option finds the system daemon.
in_ct /usr/local/bin/tracectl trace-file flush >"$T/ctl.out" 2>&1 ||
	fail "tracectl trace-file flush: $(cat "$T/ctl.out")"
in_ct /usr/local/bin/tracectl info trace >"$T/ctl.out" 2>&1 ||
	fail "tracectl info trace: $(cat "$T/ctl.out")"
grep -q "trace file: /var/lib/traced/traces (on)" "$T/ctl.out" ||
	fail "info trace: $(cat "$T/ctl.out")"
nobody=$(in_ct id -u nobody)
grep -q "traced-example\[[0-9]*\] uid 0," "$T/ctl.out" &&
	grep -q "traced-example\[[0-9]*\] uid $nobody," "$T/ctl.out" ||
	fail "sessions of root and nobody missing: $(cat "$T/ctl.out")"
bt "$ROOT/var/lib/traced/traces" >"$T/bt.txt" 2>"$T/bt.err" ||
	fail "babeltrace2: $(cat "$T/bt.err")"
n=$(count_events "$T/bt.txt" example_work)
[ "$n" = 80 ] || fail "$n example_work events, not 80 (3 x 20 + 2 x 10)"
ok "tracectl reached the system daemon; babeltrace2 reads all $n work events"

# 7. Reload, journal, stop, and socket activation again.
echo "drain-interval = 50" >>"$I/etc/traced/traced.conf"
in_ct systemctl reload traced.service || fail "systemctl reload"
wait_for 5 sh -c "nsenter -t $PID1 -a journalctl -u traced -o cat | grep -q 'drain-interval 100 -> 50'" ||
	fail "reload: $(in_ct journalctl -u traced -o cat | tail -n 3)"
in_ct journalctl -u traced -o cat >"$T/journal"
! grep -q '^<[0-9]>' "$T/journal" || fail "priority prefixes left in the journal"
in_ct journalctl -u traced -o cat -p info | grep -q "ready: system daemon" ||
	fail "no ready line at priority info"
! in_ct journalctl -u traced -o cat -p warning | grep -q "ready:" ||
	fail "the ready line logged as a warning: priorities not understood"
in_ct systemctl stop traced.service 2>/dev/null	# "can still be activated"
[ "$(in_ct systemctl show -p Result --value traced.service)" = success ] ||
	fail "stop: $(in_ct journalctl -u traced -o cat | tail -n 5)"
in_ct journalctl -u traced -o cat | grep -q "^stopped$" || fail "no clean stop in the journal"
in_ct /usr/local/bin/tracectl info trace >/dev/null 2>&1 ||
	fail "tracectl did not start the daemon again"
in_ct systemctl is-active traced.service >/dev/null || fail "not reactivated"
in_ct journalctl -u traced -o cat >"$T/journal"
! grep -q "Sanitizer\|runtime error" "$T/journal" ||
	fail "sanitizer report: $(grep -A 20 "Sanitizer\|runtime error" "$T/journal" | head -n 30)"
ok "reload, journal priorities, clean stop, reactivated by tracectl"

# 8. A user's own daemon, from the installed user units, under that
# user's systemd manager (systemctl --user), as tracectl's hints say.
in_ct useradd -m -s /bin/sh tracer >>"$T/ct.log" 2>&1 || fail "useradd: $(cat "$T/ct.log")"
tu=$(in_ct id -u tracer)
if [ -n "${SANITIZE:-}" ]; then
	mkdir -p "$ROOT/etc/systemd/user/traced.service.d"
	printf '[Service]\nEnvironment=ASAN_OPTIONS=detect_leaks=0\n' \
		>"$ROOT/etc/systemd/user/traced.service.d/asan.conf"
fi
# Without a login (pam_systemd), the manager learns its runtime
# directory from the unit.
mkdir -p "$ROOT/etc/systemd/system/user@.service.d"
printf '[Service]\nEnvironment=XDG_RUNTIME_DIR=/run/user/%%i\n' \
	>"$ROOT/etc/systemd/system/user@.service.d/xdg.conf"
in_ct systemctl daemon-reload
in_ct systemctl start "user@$tu.service" >>"$T/ct.log" 2>&1 ||
	fail "no user manager for tracer: $(in_ct journalctl -u "user@$tu" --no-pager | tail -n 5)"
as_tracer() {
	in_ct setpriv --reuid=tracer --regid=tracer --init-groups env \
		HOME=/home/tracer XDG_RUNTIME_DIR="/run/user/$tu" \
		PATH=/usr/local/bin:/usr/bin:/bin "$@"
}
wait_for 10 as_tracer systemctl --user is-active default.target ||
	fail "tracer's manager did not start: $(as_tracer systemctl --user is-system-running 2>&1)"
as_tracer systemctl --user enable --now traced.socket >>"$T/ct.log" 2>&1 ||
	fail "systemctl --user enable --now traced.socket: $(tail -n 5 "$T/ct.log")"
umodes=$(in_ct stat -c '%a %U' "/run/user/$tu/traced" "/run/user/$tu/traced/client.sock" \
	"/run/user/$tu/traced/control.sock" | tr '\n' ' ')
[ "$umodes" = "700 tracer 600 tracer 600 tracer " ] || fail "user sockets: $umodes"
as_tracer env TRACED_CONNECT_TIMEOUT_MS=10000 traced-example 2 10 \
	>"$T/ex.out" 2>&1 || fail "traced-example as tracer: $(cat "$T/ex.out")"
as_tracer systemctl --user is-active traced.service >/dev/null ||
	fail "the user's traced.service did not start: $(as_tracer journalctl --user -u traced --no-pager 2>&1 | tail -n 5)"
as_tracer tracectl trace-file flush >"$T/ctl.out" 2>&1 || fail "tracer's flush: $(cat "$T/ctl.out")"
as_tracer tracectl info trace >"$T/ctl.out" 2>&1 || fail "tracer's info trace: $(cat "$T/ctl.out")"
grep -q "trace file: /home/tracer/.local/share/traced/traces (on)" "$T/ctl.out" &&
	grep -q "traced-example\[[0-9]*\] uid $tu," "$T/ctl.out" ||
	fail "tracer's own daemon: $(cat "$T/ctl.out")"
bt "$ROOT/home/tracer/.local/share/traced/traces" >"$T/bt.txt" 2>"$T/bt.err" ||
	fail "babeltrace2 on tracer's traces: $(cat "$T/bt.err")"
n=$(count_events "$T/bt.txt" example_work)
[ "$n" = 20 ] || fail "$n example_work events in tracer's traces, not 20"
ok "a user's own traced from the user units: sockets $umodes, $n events in ~/.local/share/traced/traces"
