#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The traced authors
#
# bash completion, as built ($O/completion/tracectl.bash, what 'make
# install' puts in bash-completion's directory): sourced into a bash
# without any rc file, the function that 'complete -p tracectl' names
# is called the way readline calls it (COMP_WORDS, COMP_CWORD,
# COMP_LINE, COMP_POINT) for each command line of complib.sh, and what
# it leaves in COMPREPLY is compared with what the line must offer:
# command words from the table, fixed arguments, options, file and
# directory names, the daemon's session ids.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/complib.sh"

SCRIPT="$O/completion/tracectl.bash"
[ -s "$SCRIPT" ] || fail "$SCRIPT was not built"
cmp -s "$SCRIPT" - <<EOS || fail "$SCRIPT is not what 'tracectl completion bash' prints"
$("$BIN/tracectl" completion bash)
EOS

complete_setup

drive_shell() {
	bash --norc --noprofile -c '
	. "$1" || exit 1
	# The function bash would call for tracectl.
	spec=$(complete -p tracectl) || exit 1
	fn=${spec#*-F }
	fn=${fn%% *}
	while IFS= read -r line; do
		read -ra COMP_WORDS <<< "$line"
		case $line in *" ") COMP_WORDS+=("") ;; esac
		COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
		COMP_LINE=$line
		COMP_POINT=${#line}
		COMPREPLY=()
		"$fn" tracectl "${COMP_WORDS[COMP_CWORD]}" \
			"${COMP_WORDS[COMP_CWORD - 1]}"
		[ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}"
		echo "<<end>>"
	done < "$2"' bash "$SCRIPT" "$T/cases" > "$T/raw" || return 1
	# One row per case.
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

complete_check bash
