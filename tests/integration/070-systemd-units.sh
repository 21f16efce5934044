#!/bin/sh
# SPDX-License-Identifier: MIT
# The systemd files as 'make install' writes them: the paths filled in,
# every unit accepted by 'systemd-analyze verify' (man pages included),
# the settings file installed once and never overwritten, and the
# daemon accepting that file as installed and with every setting
# uncommented.
. "$(dirname "$0")/lib.sh"

command -v systemd-analyze >/dev/null 2>&1 || {
	echo "SKIP: systemd-analyze not found (apt-get install systemd)"
	exit 77
}

P="$T/prefix"
U="$P/units"
make -s -C "$SRC" O="$O" install PREFIX="$P" SYSTEMDUNITDIR="$U" \
	>"$T/install.log" 2>&1 || fail "make install: $(tail -5 "$T/install.log")"
for f in units/traced.service units/traced.socket units/traced-control.socket \
	lib/systemd/user/traced.service lib/systemd/user/traced.socket \
	lib/systemd/user/traced-control.socket \
	lib/sysusers.d/traced.conf lib/tmpfiles.d/traced.conf \
	etc/traced/traced.conf share/man/man5/traced.conf.5 \
	share/man/man8/traced.8; do
	[ -f "$P/$f" ] || fail "not installed: $f"
done
! grep -n '@[A-Z_]*@' "$U"/* "$P"/lib/systemd/user/* ||
	fail "placeholders left in the units"
grep -qx "ExecStart=$P/bin/traced --foreground --system --config $P/etc/traced/traced.conf" \
	"$U/traced.service" || fail "ExecStart: $(grep ExecStart= "$U/traced.service")"
ok "installed with paths filled in"

# systemd-analyze checks Documentation= with man(1) when it can.
man_opt=
command -v man >/dev/null 2>&1 || man_opt=--man=no
(cd "$U" && MANPATH="$P/share/man" systemd-analyze verify $man_opt \
	./traced.socket ./traced-control.socket ./traced.service) \
	>"$T/verify.log" 2>&1 || fail "systemd-analyze verify: $(cat "$T/verify.log")"
[ ! -s "$T/verify.log" ] || fail "systemd-analyze verify says: $(cat "$T/verify.log")"
grep -qx "ExecStart=$P/bin/traced --foreground" "$P/lib/systemd/user/traced.service" ||
	fail "user unit ExecStart: $(grep ExecStart= "$P/lib/systemd/user/traced.service")"
mkdir -p "$T/xdg" && chmod 700 "$T/xdg"
(cd "$P/lib/systemd/user" && XDG_RUNTIME_DIR="$T/xdg" MANPATH="$P/share/man" systemd-analyze --user verify \
	$man_opt ./traced.socket ./traced-control.socket ./traced.service) \
	>"$T/verify.log" 2>&1 || fail "systemd-analyze --user verify: $(cat "$T/verify.log")"
[ ! -s "$T/verify.log" ] || fail "systemd-analyze --user verify says: $(cat "$T/verify.log")"
ok "systemd-analyze verify${man_opt:+ $man_opt}: no complaint, system and user units"

# The administrator's settings survive a second install.
echo "drain-interval = 42" >>"$P/etc/traced/traced.conf"
make -s -C "$SRC" O="$O" install PREFIX="$P" SYSTEMDUNITDIR="$U" \
	>"$T/install.log" 2>&1 || fail "second make install"
grep -q "^drain-interval = 42" "$P/etc/traced/traced.conf" ||
	fail "make install overwrote the settings file"
ok "settings file kept by a second install"

# PREFIX=/usr puts it in /etc, where traced looks by default: no --config.
make -s -C "$SRC" O="$O" install DESTDIR="$T/d" PREFIX=/usr \
	SYSTEMDUNITDIR=/lib/systemd/system >"$T/install.log" 2>&1 ||
	fail "make install PREFIX=/usr"
[ -f "$T/d/etc/traced/traced.conf" ] || fail "PREFIX=/usr: no /etc/traced/traced.conf"
grep -qx "ExecStart=/usr/bin/traced --foreground --system" \
	"$T/d/lib/systemd/system/traced.service" ||
	fail "PREFIX=/usr: $(grep ExecStart= "$T/d/lib/systemd/system/traced.service")"
ok "PREFIX=/usr: /etc/traced/traced.conf, no --config"

# The daemon takes the file as installed, and every documented default
# as a value.  Directories are options (they win over the file).
sed -n 's/^#\([a-z-]* = \)/\1/p' "$SRC/etc/traced.conf" >"$T/all.conf"
# As many as traced.conf(5) documents.
nkeys=$(grep -c '^\.BI "[a-z\\-]* = "' "$SRC/man/traced.conf.5")
[ "$nkeys" -ge 21 ] || fail "traced.conf(5) documents $nkeys settings"
[ "$(wc -l <"$T/all.conf")" = "$nkeys" ] ||
	fail "not $nkeys settings in etc/traced.conf: $(cat "$T/all.conf")"
for conf in "$P/etc/traced/traced.conf" "$T/all.conf"; do
	start_daemon --config "$conf"
	ctl info trace >"$T/info" || fail "info trace with $conf"
	stop_daemon
done
grep -q "writeout: 4 threads (nice 0, direct I/O on), drain every 100 ms; default ring 16384 KiB" \
	"$T/info" || fail "defaults from the file: $(cat "$T/info")"
ok "traced starts with the installed file and with every setting uncommented"
