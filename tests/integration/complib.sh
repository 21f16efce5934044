# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The traced authors
#
# Shared by the shell completion tests (130 bash, 131 zsh, 132 fish):
# the command lines, what each must offer, and the comparison.  Sourced
# after lib.sh.  A test defines drive_shell, which reads the lines of
# $T/cases (what was typed before TAB) and writes one line per case to
# $T/got: what the shell offered, as complete_row makes it.
#
# The command words expected come from the command table through
# 'tracectl help', not from a list here: a command added to the table
# that a shell does not offer fails these tests.  The fixed words are
# the ones tracectl(1) documents.  Session ids come from a running
# daemon's index, as the completion asks for them.

# complete_row: the words on stdin (one per line, maybe "NAME\tdescription",
# directories maybe with a final '/') as one sorted line.
complete_row() {
	sed -e 's/	.*//' -e 's|/$||' | LC_ALL=C sort -u | tr '\n' ' ' |
		sed 's/ $//'
	echo
}

# sorted WORD...: the words as one sorted line.
sorted() { printf '%s\n' "$@" | complete_row; }

# complete_setup: a daemon with two ended sessions in its index, a
# directory to complete names in ($T/cwd: dirA/ and fileB), the build's
# tracectl first on PATH, the cases and what they want.
complete_setup() {
	start_daemon
	"$HELPERS/emit" -n 10 >/dev/null || fail "emit"
	"$HELPERS/emit" -n 10 >/dev/null || fail "emit"
	ids=$(ctl info sessions | awk 'NR > 1 && $1 ~ /^[0-9]+$/ { print $1 }')
	[ "$(echo "$ids" | wc -w)" -ge 2 ] ||
		fail "the index lists no 2 sessions: $(ctl info sessions 2>&1)"
	ids1=$(echo "$ids" | grep '^1' || true)
	mkdir -p "$T/cwd/dirA"
	: > "$T/cwd/fileB"
	PATH="$BIN:$PATH"
	export PATH

	# The table, through help: first words, and the words after info.
	first=$(ctl help | awk '/^  [a-z]/ { print $1 }')
	info=$(ctl help | awk '/^  info [a-z]/ { print $2 }')
	[ "$(echo "$first" | wc -w)" -ge 10 ] && [ "$(echo "$info" | wc -w)" -ge 7 ] ||
		fail "tracectl help lists too few commands: $first / $info"
	infotr=$(echo "$info" | grep '^tr')

	: > "$T/cases"
	: > "$T/want"
	want 'tracectl ' $first
	want 'tracectl info ' $info
	want 'tracectl in' info
	want 'tracectl info tr' $infotr
	want 'tracectl -' -V -h -j -r -t --help --json --runtime-dir \
		--timeout --version
	want 'tracectl --timeout ' 0 5 30 60 300
	want 'tracectl completion ' bash zsh fish
	want 'tracectl trace-file ' on off flush set recorder
	want 'tracectl trace-file set ' default dirA
	want 'tracectl trace-file on '
	want 'tracectl trace-event ev ' on off delete
	want 'tracectl trace-event ' list reset
	want 'tracectl trace-func fn o' on off
	want 'tracectl tracer ' graph latency list reset
	want 'tracectl tracer graph ' on off delete
	want 'tracectl trigger ' add list delete
	want 'tracectl trigger add g ' snapshot
	want 'tracectl trigger add g snapshot --' --after --every
	want 'tracectl trigger delete '
	want 'tracectl export --format ' chrome perfetto simpletrace uftrace
	want 'tracectl export -o fi' fileB
	want 'tracectl print --r' --raw
	want 'tracectl stats --p' --pair --pid
	want 'tracectl info sessions --' --since --pid --exe --limit --all
	want 'tracectl help ' $first
	want 'tracectl help info trace-' $(echo "$info" | grep '^trace-')
	want 'tracectl info session ' $ids
	want 'tracectl info session 1' $ids1
	want "tracectl -r $TRACED_RUNTIME_DIR info session " $ids
	want 'tracectl nosuch '
}

# want LINE WORD...: typing LINE, then TAB, offers exactly the WORDs.
want() {
	printf '%s\n' "$1" >> "$T/cases"
	shift
	sorted "$@" >> "$T/want"
}

# complete_check SHELL: run drive_shell in $T/cwd, compare row by row.
complete_check() {
	(cd "$T/cwd" && drive_shell) || fail "$1: the driver failed"
	[ "$(wc -l < "$T/got")" = "$(wc -l < "$T/want")" ] ||
		fail "$1: $(wc -l < "$T/got") answers for $(wc -l < "$T/want") cases:
$(cat "$T/got")"
	n=0
	bad=0
	while IFS= read -r line; do
		n=$((n + 1))
		w=$(sed -n "${n}p" "$T/want")
		g=$(sed -n "${n}p" "$T/got")
		if [ "$w" != "$g" ]; then
			echo "$1: '$line' + TAB offered [$g], expected [$w]" >&2
			bad=1
		fi
	done < "$T/cases"
	[ $bad = 0 ] || fail "$1 completion offered the wrong words"
	ok "$1: $n command lines complete as expected"
}
