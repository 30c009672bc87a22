#!/bin/sh
# The tools under valgrind (`make valgrind`): dump -x, top and emu on every
# golden trace, sort, pack/unpack/--verify, events, sync with 2 ranks and
# record. A run passes when valgrind finds no error and no definite or
# indirect leak (exit status 99 is valgrind's); the tool's own status must
# be the expected one. Ends with "N passed, N failed".
#   OVNI   a dynamic build without sanitizers (make VALGRIND=1)
#   BUILD  its build directory (rt/libovni.so for record)
cd "$(dirname "$0")/.."
. tests/e2e/lib.sh
GOLDEN=$PWD/tests/golden
: "${BUILD:?}"
VG_ERR=99
VG="valgrind -q --error-exitcode=$VG_ERR --leak-check=full --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect"
VG_MORE=
passed=0
failed=0

# vg WHAT WANT CMD...: CMD under valgrind; WANT is 0 (must succeed), 1 (must
# fail) or any (either). The valgrind log is shown on failure.
vg() {
	what=$1 want=$2
	shift 2
	$VG $VG_MORE --log-file="$TMP/vg.log" "$@" >"$TMP/vg.out" 2>&1
	rc=$?
	why=
	if [ $rc -eq $VG_ERR ] || [ -s "$TMP/vg.log" ]; then why="valgrind errors"
	elif [ $rc -ge 128 ]; then why="killed by signal $((rc - 128))"
	elif [ "$want" = 0 ] && [ $rc -ne 0 ]; then why="exit status $rc"
	elif [ "$want" = 1 ] && [ $rc -eq 0 ]; then why="exit status 0"
	fi
	if [ -z "$why" ]; then
		passed=$((passed + 1))
		ok "$what"
	else
		failed=$((failed + 1))
		not_ok "$what ($why)"
		cat "$TMP/vg.log" "$TMP/vg.out" | head -40 | sed 's/^/#   /'
	fi
}

# --- Every golden trace: dump -x, top, its steps, then emu -b -l. ---
for steps in "$GOLDEN"/*/*/steps; do
	dir=$(dirname "$steps")
	name=${dir#"$GOLDEN"/}
	rm -rf "$TMP/g"
	cp -r "$dir/trace" "$TMP/g"
	vg "$name: dump -x" any $OVNI dump -x "$TMP/g"
	vg "$name: top" any $OVNI top "$TMP/g"
	i=0
	while read -r step; do
		want=any
		[ "$(cat "$dir/expected/$i-${step%% *}/rc" 2>/dev/null)" = 0 ] && want=0
		# shellcheck disable=SC2086 # the step's words are its arguments
		vg "$name: $step" $want $OVNI $step "$TMP/g"
		i=$((i + 1))
	done <"$steps"
	mkdir -p "$TMP/emu"
	vg "$name: emu -b -l" any $OVNI emu -b -l -o "$TMP/emu" "$TMP/g"
	rm -rf "$TMP/emu"
done

# --- A pack: pack, list, verify, unpack, emu on the unpacked trace. ---
src=$GOLDEN/nanos6/nested-tasks/trace
vg "pack" 0 $OVNI pack -o "$TMP/p.ovnipack" "$src"
vg "pack -T 2" 0 $OVNI pack -T 2 -o "$TMP/p2.ovnipack" "$src"
vg "pack --list" 0 $OVNI pack --list "$TMP/p.ovnipack"
vg "pack --verify" 0 $OVNI pack --verify "$TMP/p.ovnipack"
vg "unpack" 0 $OVNI unpack -C "$TMP/up" "$TMP/p.ovnipack"
mkdir -p "$TMP/emu" "$TMP/emu2" "$TMP/emu3"
vg "emu on the unpacked trace" 0 $OVNI emu -l -o "$TMP/emu" "$TMP/up"
vg "emu on the pack" any $OVNI emu -l -o "$TMP/emu2" "$TMP/p.ovnipack"
head -c $(($(wc -c <"$TMP/p.ovnipack") / 2)) "$TMP/p.ovnipack" >"$TMP/cut.ovnipack"
vg "unpack of a cut archive fails cleanly" 1 $OVNI unpack -C "$TMP/cut" "$TMP/cut.ovnipack"
v1=$(dirname "$0")/e2e/pack-old/v1.ovnipack
vg "pack --verify of a version 1 archive" 0 $OVNI pack --verify "$v1"
vg "emu on a version 1 archive" 0 $OVNI emu -l -o "$TMP/emu3" "$v1"

# --- events, bad input. ---
vg "events" 0 $OVNI events
vg "dump of a missing trace fails cleanly" 1 $OVNI dump "$TMP/nothing"

# --- sync: 2 ranks on localhost, both under valgrind. ---
mkdir -p "$TMP/sync"
$VG --log-file="$TMP/sync/r1.log" $OVNI sync --rank 1 --size 2 --timeout 60 "$TMP/sync" \
	>/dev/null 2>&1 &
pid=$!
vg "sync rank 0 of 2" 0 $OVNI sync --rank 0 --size 2 --timeout 60 "$TMP/sync"
wait $pid
rc=$?
if [ $rc -eq 0 ] && [ ! -s "$TMP/sync/r1.log" ]; then passed=$((passed + 1)); ok "sync rank 1 of 2"
else failed=$((failed + 1)); not_ok "sync rank 1 of 2 (exit status $rc)"; head -40 "$TMP/sync/r1.log" | sed 's/^/#   /'
fi

# --- record: the recorder and the threaded program (with the shim) it runs. ---
if ${HOSTCC:-gcc} -O1 -g -pthread -o "$TMP/threads" tests/record/threads.c; then
	vg "record of a threaded program" 0 $OVNI record -o "$TMP/rec" -- "$TMP/threads" 4
	vg "emu of the recorded trace" 0 $OVNI emu -o "$TMP/emu3" "$TMP/rec"
	VG_MORE=--trace-children=yes
	vg "record, the program traced too" 0 $OVNI record -o "$TMP/rec2" -- "$TMP/threads" 2
	VG_MORE=
else
	failed=$((failed + 1)); not_ok "compile tests/record/threads.c"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
