# ovni emu on a trace whose unordered regions (OU[ ... OU]) were never
# sorted: the affected streams are sorted in memory, the trace is left as it
# was, and the timelines equal those of the trace after `ovni sort`; with
# --sort-mem 0 or past the limit, one error line says to run `ovni sort`.
. "$(dirname "$0")/lib.sh"
MK=$BUILD/tools/mkstream
OHX='ev OHx %s 00000000ffffffff0000000000000000'

# stream DIR TID LINES [ARGS]: a finished stream requiring the kernel model.
stream() {
	dir=$1 tid=$2
	shift 2
	p=$dir/loom.node0/proc.1/thread.$tid
	mkdir -p "$p"
	printf '{"version": 3, "ovni": {"lib": {"version": "1.14.0", "commit": "t"}, "part": "thread", "tid": %s, "pid": 1, "loom": "node0", "app_id": 1, "require": {"ovni": "1.1.0", "kernel": "1.0.0"}, "loom_cpus": [{"index": 0, "phyid": 0}, {"index": 1, "phyid": 1}], "finished": 1}}' \
		"$tid" >"$p/stream.json"
	printf "$@" | "$MK" "$p/stream.obs"
}

# same_outputs WHAT GOT WANT: the six Paraver files are identical.
same_outputs() {
	bad=
	for f in thread.prv thread.pcf thread.row cpu.prv cpu.pcf cpu.row; do
		cmp -s "$2/$f" "$3/$f" || bad="$bad $f"
	done
	if [ -z "$bad" ]; then ok "$1"; else not_ok "$1 (differ:$bad)"; fi
}

# Thread 7: two regions whose context switches fall before user events
# already written; thread 8, on CPU 1, is in order.
u=$TMP/u
stream "$u" 7 'header\n'"$OHX"'\nev OB. 200\nev OB. 400\nev OU[ 450\nev KCI 350\nev KCO 250\nev OU] 460\nev OB. 500\nev OU[ 600\nev KCI 560\nev KCO 520\nev OU] 610\nev OHe 700\n' 100
stream "$u" 8 'header\nev OHx %s 01000000ffffffff0000000000000000\nev OB. 220\nev OHe 800\n' 150
cp -r "$u" "$TMP/orig"
cp -r "$u" "$TMP/s"
check "ovni sort sorts the reference copy" "$OVNI" sort "$TMP/s"
check "the copy is sorted" "$OVNI" sort -c "$TMP/s"
mkdir "$TMP/ou" "$TMP/os"
check "emu on the sorted trace" "$OVNI" emu -l -o "$TMP/os" "$TMP/s"
"$OVNI" emu -l -o "$TMP/ou" "$u" >"$TMP/out" 2>"$TMP/err"
if [ $? -eq 0 ]; then ok "emu on the unsorted trace succeeds"; else
	not_ok "emu on the unsorted trace succeeds"; sed 's/^/#   /' "$TMP/err" | head; fi
same_outputs "its timelines equal those after ovni sort" "$TMP/ou" "$TMP/os"
check "it names the stream it sorted in memory" \
	grep -q 'thread\.7/stream\.obs: 2 unordered regions sorted in memory.*ovni sort' "$TMP/err"
check "and only that one" sh -c "! grep -q 'thread\\.8/stream\\.obs: .*sorted in memory' '$TMP/err'"
check "the trace is untouched" diff -r "$TMP/orig" "$u"
check "the out-of-CPU interval shows on the thread" grep -q '^2:0:1:1:1:150:45:3$' "$TMP/ou/thread.prv"
check "and ends when it comes back" grep -q '^2:0:1:1:1:250:45:0$' "$TMP/ou/thread.prv"

check_fails "--sort-mem 0 refuses, naming stream, offset and ovni sort" \
	"error: loom\.node0/proc\.1/thread\.7/stream\.obs: offset [0-9]+: the clock goes back .*run \`ovni sort $u\` first" \
	"$OVNI" emu --sort-mem 0 -o "$TMP/ou" "$u"
check_fails "--sort-mem must be a number" "sort-mem" "$OVNI" emu --sort-mem 1x "$u"
check_fails "--sort-mem must not be negative" "sort-mem" "$OVNI" emu --sort-mem -1 "$u"

# A stream bigger than the limit: 1 MiB is not enough for 90,000 events.
b=$TMP/big
lines=$(awk 'BEGIN { for (i = 0; i < 90000; i++) printf "ev OB. %d\\n", 1000 + 10 * i }')
stream "$b" 7 'header\n'"$OHX"'\n'"$lines"'ev OU[ 901000\nev KCI 600\nev KCO 500\nev OU] 901010\nev OHe 901020\n' 100
check_fails "a stream over --sort-mem refuses" \
	"thread\.7/stream\.obs: offset [0-9]+: .* over --sort-mem 1; run \`ovni sort $b\` first" \
	"$OVNI" emu --sort-mem 1 "$b"
check "with 2 MiB it is sorted" "$OVNI" emu --sort-mem 2 "$b"

# A clock going back outside any region is still the player's error.
n=$TMP/nr
stream "$n" 7 'header\n'"$OHX"'\nev OB. 300\nev OB. 200\nev OHe 400\n' 100
check_fails "a backward clock outside regions is reported as before" \
	"thread\.7/stream\.obs: offset 48: .*backwards" "$OVNI" emu "$n"

# Golden cases whose steps start with sort: emu straight on the unsorted
# trace gives what the reference's emu gave after its sort.
for steps in "$GOLDEN"/*/*/steps; do
	case $(head -n 1 "$steps") in sort | "sort "*) ;; *) continue ;; esac
	dir=$(dirname "$steps")
	emu=$(sed -n '2p' "$steps")
	[ -n "$emu" ] && [ -d "$dir/expected/1-emu" ] || continue
	name=${dir#"$GOLDEN"/}
	rm -rf "$TMP/g"
	cp -r "$dir/trace" "$TMP/g"
	# shellcheck disable=SC2086
	check "$name: $emu on the unsorted trace" "$OVNI" $emu "$TMP/g"
	same_outputs "$name: equals the reference's after sort" "$TMP/g" "$dir/expected/1-emu"
done

# Many unsorted streams: the first ones are named, then one line counts all.
m=$TMP/many
for tid in 1 2 3 4 5; do
	stream "$m" $tid 'header\n'"$OHX"'\nev OB. 200\nev OU[ 450\nev KCI 350\nev KCO 250\nev OU] 460\nev OHe 700\n' 100
done
"$OVNI" emu -o "$TMP/ou" "$m" 2>"$TMP/err" >/dev/null
check "5 unsorted streams: 3 named" test "$(grep -c 'sorted in memory (the trace is unchanged' "$TMP/err")" -eq 3
check "and one line counts them" grep -q '5 streams in all sorted in memory' "$TMP/err"
done_testing
