# bash completion for ovni and its old tool names (ovnidump, ovniemu, ...).

# Options of each subcommand; one line each.
_ovni_opts() {
	case $1 in
	dump) echo "-x --hex --json --stream --mcv --from --to" ;;
	top) echo "--procs" ;;
	events) echo "" ;;
	emu) echo "-o -c -a -b -l --sort-mem --salvage --from --to" ;;
	report) echo "-o --by --model --from --to --csv --json" ;;
	export) echo "--chrome -o --from --to" ;;
	sync) echo "-o --output -n --samples -d --drift -w --wait -v --verbose --rank --size --bind --timeout --hostname" ;;
	sort) echo "-c -n -j --jobs" ;;
	pack) echo "-o --output -l --level -T --threads --tar --list --verify" ;;
	unpack) echo "-C --directory -f --force" ;;
	record) echo "-o --force --tmpdir --events --loom --app-id --kernel --no-kernel" ;;
	lib) echo "" ;;
	events) echo "" ;;
	esac
}

# Arguments that name a file or directory, by option.
_ovni_complete_arg() {
	case $1 in
	-o|--output|-c|--clock-offsets|--tmpdir|-C|--directory) return 0 ;;
	esac
	return 1
}

_ovni() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local cmd i=1
	case ${COMP_WORDS[0]##*/} in
	ovnidump) cmd=dump; i=0 ;;
	ovniemu) cmd=emu; i=0 ;;
	ovnisort) cmd=sort; i=0 ;;
	ovnisync) cmd=sync; i=0 ;;
	ovnitop) cmd=top; i=0 ;;
	*)
		if [ "$COMP_CWORD" -eq 1 ]; then
			COMPREPLY=($(compgen -W "$(_ovni_subcommands) help version --help --version" -- "$cur"))
			return
		fi
		cmd=${COMP_WORDS[1]}
		;;
	esac
	if [ "$cmd" = help ]; then
		COMPREPLY=($(compgen -W "$(_ovni_subcommands)" -- "$cur"))
		return
	fi
	case $prev in
	--stream|--mcv|--from|--to) return ;;
	esac
	if [ "$cmd" = pack ] && case $prev in -l|--level|-T|--threads) true ;; *) false ;; esac; then
		return
	fi
	if [ "$cmd" = record ]; then
		case $prev in
		--loom|--app-id) return ;;
		--events) COMPREPLY=($(compgen -W "all ovni nanos6 nosv nodes tampi mpi openmp kernel" -- "$cur")); return ;;
		esac
	fi
	if [ "$cmd" = report ]; then
		case $prev in
		--by) COMPREPLY=($(compgen -W "thread cpu process task-type" -- "$cur")); return ;;
		--model) COMPREPLY=($(compgen -W "ovni kernel nanos6 nosv nodes tampi mpi openmp" -- "$cur")); return ;;
		esac
	fi
	if [ "$cmd" = sort ] && { [ "$prev" = -n ] || [ "$prev" = -j ] || [ "$prev" = --jobs ]; }; then
		return
	fi
	if [ "$cmd" = events ] && [[ $cur != -* ]]; then
		COMPREPLY=($(compgen -W "nanos6 nodes kernel mpi ovni openmp tampi nosv" -- "$cur"))
		return
	fi
	if _ovni_complete_arg "$prev"; then
		COMPREPLY=($(compgen -f -- "$cur"))
		return
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_ovni_opts "$cmd") --help" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
}

# Subcommands, one word each.
_ovni_subcommands() {
	echo "dump top events emu report export sort sync record pack unpack lib"
}

complete -o filenames -F _ovni ovni ovnidump ovniemu ovnisort ovnisync ovnitop
