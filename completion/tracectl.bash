# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The traced authors
#
# bash completion for tracectl(1): global options, command names (one or
# two words) and the fixed arguments of each command.  The two lists
# below follow proto/commands.def; tests/unit/test_command.c fails when
# they do not.  Install as /usr/share/bash-completion/completions/tracectl
# or source it from ~/.bashrc.  Needs nothing from bash-completion.

# First words of the commands, and the second words after "info".
_tracectl_commands="export help info print stats trace-event trace-file trace-func tracer"
_tracectl_info="session sessions trace trace-events trace-funcs trace-rules tracers"

_tracectl_options="-r --runtime-dir -j --json -t --timeout -h --help
    -V --version"

_tracectl()
{
	local cur prev i cmd sub n
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	COMPREPLY=()

	# Global options come before the command; find where it starts.
	i=1
	while [ "$i" -lt "$COMP_CWORD" ]; do
		case ${COMP_WORDS[i]} in
		-r|--runtime-dir|-t|--timeout)
			i=$((i + 2)) ;;
		--)
			i=$((i + 1)); break ;;
		-*)
			i=$((i + 1)) ;;
		*)
			break ;;
		esac
	done

	case $prev in
	-r|--runtime-dir)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -d -- "$cur"))
		return ;;
	-t|--timeout)
		COMPREPLY=($(compgen -W "0 5 30 60 300" -- "$cur"))
		return ;;
	esac

	if [ "$i" -ge "$COMP_CWORD" ]; then
		case $cur in
		-*)	COMPREPLY=($(compgen -W "$_tracectl_options" \
			    -- "$cur")) ;;
		*)	COMPREPLY=($(compgen -W "$_tracectl_commands" \
			    -- "$cur")) ;;
		esac
		return
	fi

	cmd=${COMP_WORDS[i]}
	n=$((COMP_CWORD - i - 1))	# index of the word among the arguments
	case $cmd in
	info)
		if [ "$n" -eq 0 ]; then
			COMPREPLY=($(compgen -W "$_tracectl_info" -- "$cur"))
			return
		fi
		sub=${COMP_WORDS[i+1]}
		case $sub in
		sessions)
			case $prev in
			--since|--pid|--exe|--limit)	;;
			*)	COMPREPLY=($(compgen -W "--since --pid --exe \
				    --limit --all" -- "$cur")) ;;
			esac ;;
		session)
			# ID: the newest sessions of the index, asked with
			# the same global options (-r DIR).
			if [ "$n" -eq 1 ]; then
				COMPREPLY=($(compgen -W "$("${COMP_WORDS[@]:0:i}" \
				    info sessions 2>/dev/null |
				    awk 'NR > 1 { print $1 }')" -- "$cur"))
			fi ;;
		esac ;;
	print|stats|export)
		# Local: options, then trace or session directories.
		local filters="--event --pid --tid --session --since --until --lost --limit"
		case $prev in
		--format|-f)
			COMPREPLY=($(compgen -W "chrome perfetto simpletrace uftrace" -- "$cur"))
			return ;;
		-o|--output)
			compopt -o filenames 2>/dev/null
			COMPREPLY=($(compgen -f -- "$cur"))
			return ;;
		esac
		case $cur in
		-*)	case $cmd in
			print)	COMPREPLY=($(compgen -W "--raw --json --follow $filters" -- "$cur")) ;;
			stats)	COMPREPLY=($(compgen -W "--pair --key --json $filters" -- "$cur")) ;;
			*)	COMPREPLY=($(compgen -W "--format -o --pair --key $filters" -- "$cur")) ;;
			esac ;;
		*)	compopt -o filenames 2>/dev/null
			COMPREPLY=($(compgen -d -- "$cur")) ;;
		esac ;;
	trace-event|trace-func)
		# PATTERN is free text (or list, reset); then on, off or
		# delete.
		if [ "$n" -eq 0 ]; then
			COMPREPLY=($(compgen -W "list reset" -- "$cur"))
		elif [ "$n" -eq 1 ]; then
			COMPREPLY=($(compgen -W "on off delete" -- "$cur"))
		fi ;;
	tracer)
		# NAME: the built-in tracers, or free text (or list, reset);
		# then on, off or delete.
		if [ "$n" -eq 0 ]; then
			COMPREPLY=($(compgen -W "graph latency list reset" -- "$cur"))
		elif [ "$n" -eq 1 ]; then
			COMPREPLY=($(compgen -W "on off delete" -- "$cur"))
		fi ;;
	trace-file)
		if [ "$n" -eq 0 ]; then
			COMPREPLY=($(compgen -W "on off flush set" -- "$cur"))
		elif [ "$n" -eq 1 ] && [ "$prev" = set ]; then
			compopt -o filenames 2>/dev/null
			COMPREPLY=($(compgen -d -- "$cur"))
		fi ;;
	help)
		if [ "$n" -eq 0 ]; then
			COMPREPLY=($(compgen -W "$_tracectl_commands" \
			    -- "$cur"))
		elif [ "$n" -eq 1 ] && [ "$prev" = info ]; then
			COMPREPLY=($(compgen -W "$_tracectl_info" -- "$cur"))
		fi ;;
	esac
}

complete -F _tracectl tracectl
