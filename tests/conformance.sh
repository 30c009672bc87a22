#!/bin/sh
# Conformance with the reference: replays every golden case found in
# tests/golden, ../shared/golden (next to the repository) and the
# directories in $CONFORMANCE_GOLDEN (colon separated). A case found twice
# with identical contents runs once.
#
# Per case (see tests/golden/README.md):
#   dump   `ovni dump -x trace` equals expected/dump-x.txt, exit status class
#          (zero / non-zero) as expected/dump-x.txt.rc
#   top    `ovni top trace` equals expected/top.txt, likewise
#   I-STEP each line of `steps` ("sort ARGS", "emu ARGS") run in order on one
#          scratch copy of trace/: the exit status class as expected/I-STEP/rc;
#          when the reference succeeded, every file it left (.prv .pcf .row,
#          breakdowns, and for sort the whole sorted/ tree) byte for byte.
#          The partial outputs of a run that failed are not compared. A step
#          whose subcommand this ovni lacks prints "skip - ..." (not counted)
#          and the later steps of the case are skipped too, except a missing
#          sort: the later steps then start from expected/I-sort/sorted/. An
#          emu step whose trace requires a model (or -a: all of them) missing
#          from `ovni emu --help` is skipped the same way.
# Prints "ok - CASE WHAT" / "not ok - CASE WHAT" and ends with
# "N passed, N failed". Exit status 1 if anything failed.
#
# Usage: OVNI=./ovni sh tests/conformance.sh [CASE-GLOB...]
#   e.g. sh tests/conformance.sh 'nosv/*' ovni/sort
set -u
OVNI=${OVNI:-ovni}
case $OVNI in
*/*) OVNI=$(cd "$(dirname "$OVNI")" && pwd)/$(basename "$OVNI") ;;
*) OVNI=$(command -v "$OVNI") || { echo "conformance: no ovni binary (set OVNI)" >&2; exit 1; } ;;
esac
REPO=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ovni-conformance.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
passed=0
failed=0
skipped=0

ok() { echo "ok - $*"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $*"; failed=$((failed + 1)); }
skip() { echo "skip - $*"; skipped=$((skipped + 1)); }
# Shows the first lines of a file as comments.
show() { sed 's/^/#   /' "$1" | head -"${2:-5}"; }
# rc_class N: "zero" or "non-zero".
rc_class() { if [ "$1" -eq 0 ]; then echo zero; else echo non-zero; fi; }

# compare_output NAME WHAT WANT_FILE CMD...: output and exit status class.
compare_output() {
	name=$1; what=$2; want=$3; shift 3
	"$@" </dev/null >"$TMP/out" 2>"$TMP/err"
	rc=$?
	want_rc=$(cat "$want.rc" 2>/dev/null || echo 0)
	if [ "$(rc_class $rc)" != "$(rc_class "$want_rc")" ]; then
		not_ok "$name $what (exit $rc, reference $want_rc)"; show "$TMP/err"
	elif ! cmp -s "$TMP/out" "$want"; then
		not_ok "$name $what (output differs)"; diff "$want" "$TMP/out" | show /dev/stdin 10
	else
		ok "$name $what"
	fi
}

# compare_files EXPECTED_DIR WORK_DIR: every file the reference left (but
# rc, stdout, stderr) equals the one in the scratch trace. Prints what differs.
compare_files() {
	bad=0
	for f in $(cd "$1" && find . -type f | sed 's|^\./||' | sort); do
		case $f in rc|stdout|stderr) continue ;; esac
		got=$2/${f#sorted/}
		if [ ! -f "$got" ]; then echo "#   $f: missing"; bad=1
		elif ! cmp -s "$1/$f" "$got"; then echo "#   $f: differs"; bad=1; fi
	done
	return $bad
}

# The models of the reference; a require of another name is ignored by emu.
REF_MODELS="nanos6 nodes kernel mpi ovni openmp tampi nosv"
EMU_MODELS=$("$OVNI" emu --help 2>/dev/null | sed -n '/^Models:/,$p' | awk 'NR > 1 {print $1}')

# models_lacking TRACE ARGS: the reference models that the trace requires
# (or all of them with -a) but this ovni emu does not have, " a b".
models_lacking() {
	need=$(find "$1" -name stream.json -exec sed -n '/"require": *{/,/}/p' {} + |
		grep -o '"[A-Za-z0-9_]*": *"' | tr -d '": ' | sort -u)
	case " $2 " in *" -a "*) need="$need $REF_MODELS" ;; esac
	out=
	for m in $need; do
		case " $REF_MODELS " in *" $m "*) ;; *) continue ;; esac
		case " $(echo $EMU_MODELS) " in *" $m "*) ;; *) case "$out " in *" $m "*) ;; *) out="$out $m" ;; esac ;; esac
	done
	echo "$out"
}

run_steps() {
	c=$1; name=$2
	[ -f "$c/steps" ] || return
	work=$TMP/work
	rm -rf "$work"
	cp -R "$c/trace" "$work" && chmod -R u+w "$work"
	i=0
	stop=
	while read -r line <&3; do
		[ -n "$line" ] || continue
		sub=${line%% *}
		args=${line#"$sub"}
		step=$i-$sub
		i=$((i + 1))
		if [ -n "$stop" ]; then skip "$name $step ($stop)"; continue; fi
		if ! "$OVNI" help "$sub" </dev/null >/dev/null 2>&1; then
			if [ "$sub" = sort ] && [ -d "$c/expected/$step/sorted" ]; then
				# no sort in this build: go on from the reference's result
				rm -rf "$work"
				cp -R "$c/expected/$step/sorted" "$work" && chmod -R u+w "$work"
				skip "$name $step (this ovni has no sort: the next steps use the reference's sorted trace)"
				continue
			fi
			stop="this ovni has no $sub"
			skip "$name $step ($stop)"
			continue
		fi
		if [ "$sub" = emu ]; then
			lacking=$(models_lacking "$work" "$args")
			if [ -n "$lacking" ]; then
				stop="this ovni emu lacks the models:$lacking"
				skip "$name $step ($stop)"
				continue
			fi
		fi
		exp=$c/expected/$step
		# ovni sort has no look-back limit by default; the reference's is 1,000,000 events
		[ "$sub" = sort ] && args=" -n 1000000$args"
		# $args unquoted: the step's arguments are separate words
		"$OVNI" "$sub" $args "$work" </dev/null >"$TMP/out" 2>"$TMP/err"
		rc=$?
		want_rc=$(cat "$exp/rc")
		if [ "$(rc_class $rc)" != "$(rc_class "$want_rc")" ]; then
			not_ok "$name $step (exit $rc, reference $want_rc)"; show "$TMP/err"
			stop="step $step failed"
		elif [ "$want_rc" -ne 0 ]; then
			ok "$name $step (fails as the reference did)"
		elif compare_files "$exp" "$work" >"$TMP/diffs"; then
			ok "$name $step"
		else
			not_ok "$name $step"; show "$TMP/diffs" 10
			stop="step $step differs"
		fi
	done 3<"$c/steps"
}

run_case() {
	c=$1; name=$2
	[ -f "$c/expected/dump-x.txt" ] &&
		compare_output "$name" dump "$c/expected/dump-x.txt" "$OVNI" dump -x "$c/trace"
	[ -f "$c/expected/top.txt" ] &&
		compare_output "$name" top "$c/expected/top.txt" "$OVNI" top "$c/trace"
	run_steps "$c" "$name"
}

# selected NAME: whether a case glob from the command line selects NAME.
selected() {
	[ $# -ge 2 ] || return 0
	n=$1; shift
	for g in "$@"; do
		case $n in $g) return 0 ;; esac
	done
	return 1
}

seen=$TMP/seen
: >"$seen"
dirs="$REPO/tests/golden:$REPO/../shared/golden:${CONFORMANCE_GOLDEN:-}"
IFS_SAVE=$IFS
IFS=:
set -f
for d in $dirs; do
	IFS=$IFS_SAVE
	set +f
	[ -n "$d" ] && [ -d "$d" ] || continue
	for c in "$d"/*/*/; do
		c=${c%/}
		[ -d "$c/trace" ] || continue
		name=${c#"$d"/}
		selected "$name" "$@" || continue
		first=$(awk -v n="$name" '$2 == n {print $1; exit}' "$seen")
		if [ -n "$first" ]; then
			diff -rq "$first" "$c" >/dev/null 2>&1 && continue
			name="$name ($d)"
		fi
		printf '%s %s\n' "$c" "$name" >>"$seen"
		run_case "$c" "$name"
	done
done
IFS=$IFS_SAVE
[ "$skipped" -eq 0 ] || echo "# $skipped skipped"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
