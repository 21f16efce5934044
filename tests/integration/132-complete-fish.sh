#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The traced authors
#
# fish completion, as built ($O/completion/tracectl.fish, what 'make
# install' puts in fish's vendor_completions.d): a fish without config
# sources it and answers 'complete -C LINE' (what fish offers at TAB)
# for each command line of complib.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/complib.sh"

command -v fish >/dev/null 2>&1 || skip "fish not installed (apt-get install fish)"
SCRIPT="$O/completion/tracectl.fish"
[ -s "$SCRIPT" ] || fail "$SCRIPT was not built"
cmp -s "$SCRIPT" - <<EOS || fail "$SCRIPT is not what 'tracectl completion fish' prints"
$("$BIN/tracectl" completion fish)
EOS

complete_setup

drive_shell() {
	fish --no-config -c '
	source $argv[1]; or exit 1
	while read -l line
		complete -C"$line"
		echo "<<end>>"
	end < $argv[2]' "$SCRIPT" "$T/cases" > "$T/raw" || return 1
	: > "$T/got"
	: > "$T/one"
	while IFS= read -r w; do
		if [ "$w" = "<<end>>" ]; then
			complete_row < "$T/one" >> "$T/got"
			: > "$T/one"
		else
			printf '%s\n' "$w" >> "$T/one"
		fi
	done < "$T/raw"
}

complete_check fish
