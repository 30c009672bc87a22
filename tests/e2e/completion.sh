# Every flag that a subcommand's --help shows must be in the three completion
# files and in the subcommand's man page; every subcommand needs its page.
. "$(dirname "$0")/lib.sh"
ROOT=$TESTDIR/..
subs=$("$OVNI" --help | sed -n '/^Subcommands:/,/^$/p' | awk 'NR>1 && NF {print $1}')
for s in $subs; do
	man=$ROOT/docs/ovni-$s.1
	if [ -f "$man" ]; then ok "$s has a man page"; else not_ok "$s has a man page (docs/ovni-$s.1)"; fi
	grep -q "^[[:space:]]*$s)" "$ROOT/completion/ovni.bash" && grep -q "'$s:" "$ROOT/completion/_ovni" &&
		grep -q -- "-a $s " "$ROOT/completion/ovni.fish" && ok "$s is completed as a subcommand" ||
		not_ok "$s is completed as a subcommand in bash, zsh and fish"
	flags=$("$OVNI" "$s" --help | grep -oE '(^|[ ,[])--?[A-Za-z][-A-Za-z0-9]*' | sed 's/^[ ,[]//' | sort -u)
	for f in $flags; do
		case $f in
		--help|-h) continue ;;
		--*) long=${f#--}; fish="-l $long" ;;
		*) long=; fish="-s ${f#-}" ;;
		esac
		missing=
		grep -q -- "$f\\b" "$ROOT/completion/ovni.bash" || missing="$missing bash"
		grep -q -- "$f\\b" "$ROOT/completion/_ovni" || missing="$missing zsh"
		grep -q -- "$fish\\b" "$ROOT/completion/ovni.fish" || missing="$missing fish"
		manf=$(printf '%s' "$f" | sed 's/-/\\\\-/g')
		[ -f "$man" ] && { grep -q -- "$manf\\b" "$man" || grep -q -- "$f\\b" "$man"; } || missing="$missing man"
		if [ -z "$missing" ]; then ok "ovni $s $f documented and completed"; else
			not_ok "ovni $s $f missing in:$missing"; fi
	done
done
done_testing
