#!/bin/sh
# SPDX-License-Identifier: MIT
# tracectl export --format simpletrace, read back by QEMU 7.2's own
# scripts/simpletrace.py with the program's trace-events file: a
# multi-threaded program with integer, pointer and string arguments (a
# NULL among them) and lost events; simpletrace.py must print every
# event of each process, in order, with the right values and time
# deltas, and a Dropped_Event record with the right count wherever
# events were lost.
#
# simpletrace.py comes from Debian's qemu source package (fetched with
# a private deb-src list into a cache directory, never committed); the
# test skips, saying why, only when that download fails.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "python3 is not installed (apt-get install python3)"
command -v jq >/dev/null 2>&1 || skip "jq is not installed (apt-get install jq)"

# ---- QEMU's simpletrace.py, from the qemu 7.2 source package
CACHE=${TRACED_TEST_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/traced-tests}
QEMU="$CACHE/qemu-7.2-scripts"
if [ ! -f "$QEMU/scripts/simpletrace.py" ]; then
	command -v apt-get >/dev/null 2>&1 || skip "no apt-get to fetch QEMU's source package"
	command -v xz >/dev/null 2>&1 || skip "xz is not installed (apt-get install xz-utils)"
	A="$T/apt"
	mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$A/src"
	kr=/usr/share/keyrings/debian-archive-keyring.gpg
	{
		echo "deb-src [signed-by=$kr] http://deb.debian.org/debian bookworm main"
		echo "deb-src [signed-by=$kr] http://deb.debian.org/debian-security bookworm-security main"
	} > "$A/sources.list"
	aopt="-o Dir::Etc::SourceList=$A/sources.list -o Dir::Etc::SourceParts=/nonexistent"
	aopt="$aopt -o Dir::State::Lists=$A/lists -o Dir::Cache=$A/cache -o Debug::NoLocking=1"
	aopt="$aopt -o APT::Sandbox::User=root"
	# shellcheck disable=SC2086
	apt-get -qq $aopt update >"$T/apt.log" 2>&1 ||
		skip "cannot fetch Debian's source lists: $(tail -n 2 "$T/apt.log" | tr '\n' ' ')"
	# shellcheck disable=SC2086
	(cd "$A/src" && apt-get -qq $aopt source --download-only 'qemu/bookworm') \
		>"$T/apt.log" 2>&1 ||
		skip "cannot download the qemu source package: $(tail -n 2 "$T/apt.log" | tr '\n' ' ')"
	orig=$(ls "$A"/src/qemu_7.2*.orig.tar.xz 2>/dev/null | head -n 1)
	[ -n "$orig" ] || skip "the qemu source package is not 7.2: $(ls "$A/src")"
	mkdir -p "$A/x"
	tar -xJf "$orig" -C "$A/x" --wildcards '*/scripts/simpletrace.py' \
		'*/scripts/tracetool/*' || fail "cannot unpack $orig"
	mkdir -p "$CACHE"
	rm -rf "$QEMU.tmp"
	mv "$A"/x/qemu-7.2* "$QEMU.tmp" && mv "$QEMU.tmp" "$QEMU" ||
		fail "cannot keep simpletrace.py in $QEMU"
fi
ST="$QEMU/scripts/simpletrace.py"

# ---- a trace: 3 threads with jobs, and a burst that overflows 4K rings
# A slow daemon (under ASan) must not make the helpers start untraced.
export TRACED_CONNECT_TIMEOUT_MS=10000
start_daemon
TRACED_RING_SIZE=4K "$HELPERS/jobs" -t 3 -n 3 -b 2000 >/dev/null || fail "jobs"
"$HELPERS/jobs" -t 2 -n 2 >/dev/null || fail "jobs"
ctl trace-file flush >/dev/null || fail "flush"
wait_no_sessions 10 || fail "sessions did not end"
stop_daemon

ctl export --format simpletrace -o "$T/out" "$TRACES" 2>"$T/err" ||
	fail "export: $(cat "$T/err")"
ctl print --json "$TRACES" > "$T/print.json" || fail "print --json"
nfiles=$(ls "$T"/out/trace-[0-9]* | wc -l)
[ "$nfiles" = 2 ] || fail "$nfiles trace files, not 2: $(ls "$T/out")"
[ -f "$T/out/trace-events" ] || fail "no trace-events beside them"

# What simpletrace.py must print for process $1: each record's name,
# the delta from the previous one in us (%0.3f), pid=, and each
# argument: integers in hex (negative ones as their 64-bit two's
# complement), strings as Python bytes (a NULL string is empty).
expected() {
	jq -r --argjson pid "$1" '
	  select(.pid == $pid) |
	  if .type == "event" then
	    [(.event | sub("^[^:]*:"; "")), .ts] +
	    [.fields | to_entries[] | .key + "=" +
	      (.value | if . == null then "s:"
	        elif . == true then "n:1" elif . == false then "n:0"
	        elif type == "number" then "n:\(.)"
	        elif test("^0x[0-9a-f]+$") then "h:" + .
	        elif test("^-?[0-9]+$") then "n:" + .
	        else "s:" + (gsub("\\\\"; "\\\\") | gsub("\t"; "\\t") |
	          gsub("'"'"'"; "\\'"'"'")) end)]
	  else ["Dropped_Event", .ts, "num_events_dropped=n:\(.lost)"] end |
	  join("\t")' "$T/print.json" |
	while IFS='	' read -r name ts args; do
		if [ -z "${last:-}" ]; then last=$ts; fi
		d=$((ts - last)); last=$ts
		line="$name $((d / 1000)).$(printf %03d $((d % 1000))) pid=$1"
		oldifs=$IFS; IFS='	'
		for a in $args; do
			k=${a%%=*}; v=${a#*=}
			case $v in
			n:*) line="$line $k=0x$(printf %x "${v#n:}")" ;;
			h:*) line="$line $k=${v#h:}" ;;
			s:*) line="$line $k=b'${v#s:}'" ;;
			esac
		done
		IFS=$oldifs
		printf '%s\n' "$line"
	done
}

for f in "$T"/out/trace-[0-9]*; do
	pid=${f##*trace-}
	python3 "$ST" "$SRC/tests/helpers/trace-events" "$f" > "$T/st.$pid" 2>"$T/st.err" ||
		fail "simpletrace.py $f: $(tail -n 5 "$T/st.err")"
	expected "$pid" > "$T/want.$pid"
	n=$(wc -l < "$T/want.$pid")
	[ "$n" -gt 10 ] || fail "only $n records for $pid"
	cmp -s "$T/want.$pid" "$T/st.$pid" ||
		fail "simpletrace.py prints something else for $pid: $(diff "$T/want.$pid" "$T/st.$pid" | head -n 8)"
done
ndropped=$(cat "$T"/st.* | grep -c '^Dropped_Event ' || true)
lost=$(cat "$T"/st.* | sed -n 's/^Dropped_Event .* num_events_dropped=\(0x[0-9a-f]*\)$/\1/p' |
	while read -r x; do echo $((x)); done | awk '{ n += $1 } END { print n + 0 }')
[ "$ndropped" -gt 0 ] && [ "$lost" -gt 0 ] || fail "no dropped record: the burst lost nothing?"
want_lost=$(jq -s '[.[] | select(.type == "lost") | .lost | tonumber] | add' "$T/print.json")
[ "$lost" = "$want_lost" ] || fail "dropped records say $lost, the trace $want_lost"
grep -q "^test_words .* name=b'alpha' maybe=b'' ok=0x1 delta=0xfffffffffffffffb c=0x78\$" "$T"/st.* ||
	fail "the NULL string and the negative long"
grep -q "^test_crc .* crc=0xbadcafe big=0xfedcba9876543210 neg=0x8000000000000001 where=0xdeadbeef\$" "$T"/st.* ||
	fail "test_crc"
ok "QEMU 7.2's simpletrace.py prints every event of $nfiles processes, and $ndropped dropped records for $lost lost events"

# The trace-events written beside the files reads the same.
for f in "$T"/out/trace-[0-9]*; do
	pid=${f##*trace-}
	python3 "$ST" "$T/out/trace-events" "$f" > "$T/st2" 2>"$T/st.err" ||
		fail "simpletrace.py with our trace-events: $(tail -n 3 "$T/st.err")"
	cmp -s "$T/st2" "$T/st.$pid" || fail "our trace-events reads differently"
done
ok "OUTDIR/trace-events serves simpletrace.py too"

# Issue 25, finding 9: the output directory is one tracectl makes, or an
# empty one of the user's; never a symlink (another user's, planted in
# /tmp, would lead root's export into a directory of its choosing),
# never someone else's directory, never over files already there.
mkdir "$T/victim"
printf 'keep\n' > "$T/victim/trace-events"
ln -s "$T/victim" "$T/link"
# refused PATH WHY: export to PATH fails, saying WHY; the victim unchanged.
refused() {
	if ctl export --format simpletrace -o "$1" "$TRACES" > "$T/ref.out" 2>&1; then
		fail "export into $1 succeeded"
	fi
	grep -q "$2" "$T/ref.out" || fail "export into $1 did not say '$2': $(cat "$T/ref.out")"
	[ "$(cat "$T/victim/trace-events")" = keep ] || fail "export into $1 wrote over the victim"
	[ "$(ls "$T/victim")" = trace-events ] || fail "export into $1 left files in the victim: $(ls "$T/victim")"
}
refused "$T/link" "a symbolic link"
refused "$T/victim" "not an empty directory of yours"
if [ "$(id -u)" = 0 ]; then
	mkdir "$T/theirs"
	chown nobody "$T/theirs"
	if ctl export --format simpletrace -o "$T/theirs" "$TRACES" > "$T/ref.out" 2>&1; then
		fail "export into another user's empty directory succeeded"
	fi
	[ -z "$(ls "$T/theirs")" ] || fail "export wrote into another user's directory"
fi
mkdir "$T/mine"
ctl export --format simpletrace -o "$T/mine" "$TRACES" 2>"$T/err" ||
	fail "export into an empty directory of one's own: $(cat "$T/err")"
[ -f "$T/mine/trace-events" ] || fail "nothing exported into an empty directory of one's own"
ok "directory exports: no symlink followed, no directory of another's or with files written into"

# Issue 25, finding 11: a trace directory is input.  An event name with
# newlines in it (a string in the metadata, escapes and all) writes no
# line of its own into trace-events: it is written as a C identifier,
# and the export says so.
mkdir "$T/odd"
cp -r "$(ls -d "$TRACES"/jobs-* | head -1)" "$T/odd/"
sed -i 's|name = "helpers:test_raw";|name = "helpers:x\\nevil(void) \\"\\"\\ny";|' "$T"/odd/*/metadata
grep -q 'helpers:x\\nevil' "$T"/odd/*/metadata || fail "the metadata was not edited"
if ctl export --format simpletrace -o "$T/odd-out" "$T/odd" > "$T/odd.err" 2>&1; then
	fail "an export that renamed an event succeeded without a word"
fi
grep -q "not a C identifier is written as x_evil_void_____y" "$T/odd.err" ||
	fail "the export did not say how it wrote the odd name: $(cat "$T/odd.err")"
! grep -q '^evil\|^x$\|^y(' "$T/odd-out/trace-events" ||
	fail "the event name wrote lines into trace-events: $(cat "$T/odd-out/trace-events")"
grep -q '^x_evil_void_____y(int64_t a, const char \*s) ""$' "$T/odd-out/trace-events" ||
	fail "the renamed event is not declared: $(cat "$T/odd-out/trace-events")"
ok "an event name with newlines is written as an identifier, not as lines"
