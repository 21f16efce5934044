#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The traced authors
#
# zsh completion, as built ($O/completion/_tracectl, what 'make install'
# puts in zsh's vendor-completions): an interactive zsh without rc files
# on a pseudo-terminal (zsh/zpty), its $fpath led by the built directory
# and compinit run, gets each command line of complib.sh typed and a TAB
# pressed.  compadd is wrapped to note the matches the completion system
# adds (after zsh's own filtering by what was typed); a command typed
# after the TAB marks the end of each case, since zle takes keys in
# order.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/complib.sh"

command -v zsh >/dev/null 2>&1 || skip "zsh not installed (apt-get install zsh)"
SCRIPT="$O/completion/_tracectl"
[ -s "$SCRIPT" ] || fail "$SCRIPT was not built"
cmp -s "$SCRIPT" - <<EOS || fail "$SCRIPT is not what 'tracectl completion zsh' prints"
$("$BIN/tracectl" completion zsh)
EOS

complete_setup

cat > "$T/drive.zsh" <<'EOS'
# zsh -f drive.zsh FPATH_DIR OUT < cases: OUT gets, for case N, the
# matches, then "<<done N>>".
zmodload zsh/zpty || exit 1
dir=$1 out=$2
: > $out

# wait_mark MARK: until the shell wrote MARK, reading what it shows so
# that it never blocks on a full terminal.
wait_mark() {
	local i=0 junk
	until grep -qxF -- "$1" $out; do
		zpty -r -t z junk 2>/dev/null
		(( ++i < 200 )) || { print -u2 "zsh did not write $1"; exit 1 }
		sleep 0.05
	done
}

zpty z zsh -f -i || exit 1
# No listing and no menu: a TAB only completes, and the next keys are
# typed on a plain command line.
zpty -w z "PS1='%% '; fpath=($dir \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z 'unsetopt AUTO_LIST AUTO_MENU LIST_BEEP BEEP'
# The matches of every compadd that adds some (not those that only
# look: -O, -A, -D).
zpty -w z "compadd() { local a; for a; do case \$a in (-O|-A|-D) builtin compadd \"\$@\"; return;; (-|--) break;; esac; done; local -a m; builtin compadd -O m \"\$@\"; (( \$#m )) && print -rl -- \$m >> $out; builtin compadd \"\$@\"; }"
zpty -w z "print -r -- '<<ready>>' >> $out"
wait_mark '<<ready>>'
n=0
while IFS= read -r line; do
	n=$((n + 1))
	zpty -w -n z "$line"$'\t'
	# ^U: the line as completed goes; then the mark.
	zpty -w z $'\C-u'"print -r -- '<<done $n>>' >> $out"
	wait_mark "<<done $n>>"
done
zpty -d z
EOS

drive_shell() {
	zsh -f "$T/drive.zsh" "$O/completion" "$T/raw" < "$T/cases" || return 1
	: > "$T/got"
	: > "$T/one"
	while IFS= read -r w; do
		case $w in
		'<<ready>>') ;;
		'<<done '*)
			complete_row < "$T/one" >> "$T/got"
			: > "$T/one" ;;
		*)	printf '%s\n' "$w" >> "$T/one" ;;
		esac
	done < "$T/raw"
}

complete_check zsh
