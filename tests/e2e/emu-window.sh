# ovni emu --from/--to: the rows of the whole trace cut to the window, each
# row and type starting with the value it held at --from. Checked with awk
# against the whole trace's .prv (the golden reference output).
. "$(dirname "$0")/lib.sh"

# cut PRV FROM TO: the lines of the window, sorted, and the header's row count.
cut_prv() {
	awk -F: -v from="$2" -v to="$3" '
	NR == 1 { next }
	$6 < from { held[$5 ":" $7] = $8; next }
	$6 <= to { print }
	END { for (k in held) { split(k, p, ":"); print "2:0:1:1:" p[1] ":" from ":" p[2] ":" held[k] } }' "$1" | sort
}

for c in nanos6/nested-tasks nosv/parallel-tasks mpi/func openmp/nested-task; do
	dir=$GOLDEN/$c
	[ -d "$dir" ] || continue
	dur=$(head -1 "$dir/expected/0-emu/thread.prv" | cut -d: -f3 | sed 's/_ns//; s/^0*//')
	from=$((dur / 3)) to=$((dur * 2 / 3))
	"$OVNI" emu -o "$TMP/w" --from "${from}ns" --to "${to}ns" "$dir/trace" 2>"$TMP/err" ||
		{ not_ok "$c: emu --from ${from}ns --to ${to}ns exits 0"; sed 's/^/#   /' "$TMP/err" | tail -3; continue; }
	for side in thread cpu; do
		cut_prv "$dir/expected/0-emu/$side.prv" $from $to >"$TMP/want"
		tail -n +2 "$TMP/w/$side.prv" | sort >"$TMP/got"
		if [ -s "$TMP/want" ] && cmp -s "$TMP/got" "$TMP/want"; then ok "$c: $side.prv cut to the window"; else
			not_ok "$c: $side.prv cut to the window"; diff "$TMP/got" "$TMP/want" | head -6 | sed 's/^/#   /'; fi
		same "$c: $side.prv lasts up to --to" "$(head -1 "$TMP/w/$side.prv" | cut -d: -f3)" "$(printf %020d_ns $to)"
		cmp -s "$TMP/w/$side.pcf" "$dir/expected/0-emu/$side.pcf" && ok "$c: $side.pcf as for the whole trace" ||
			not_ok "$c: $side.pcf as for the whole trace"
	done
	rm -rf "$TMP/w"
done

N6=$GOLDEN/nanos6/nested-tasks
start=$(awk 'NR == 1 || $1 < m {m = $1} END {print m}' "$N6/expected/dump-x.txt")
"$OVNI" emu -o "$TMP/a" --from 2ms "$N6/trace" 2>/dev/null
"$OVNI" emu -o "$TMP/b" --from "@$((start + 2000000))" "$N6/trace" 2>/dev/null
check "--from @CLOCK is --from relative to the first event" cmp "$TMP/a/thread.prv" "$TMP/b/thread.prv"
same "--from alone: the header keeps the trace's duration" "$(head -1 "$TMP/a/thread.prv")" "$(head -1 "$N6/expected/0-emu/thread.prv")"
"$OVNI" emu -o "$TMP/c" "$N6/trace" 2>"$TMP/c.err"
check "without a window the outputs are the reference's" cmp "$TMP/c/thread.prv" "$N6/expected/0-emu/thread.prv"
grep -q "ovni report.*ovni export --chrome" "$TMP/c.err" && ok "emu says what to open without Paraver" ||
	not_ok "emu says what to open without Paraver"
# a trace path with a space is quoted in those commands, ready to paste
cp -R "$N6/trace" "$TMP/my trace"
"$OVNI" emu "$TMP/my trace" >/dev/null 2>"$TMP/c.err"
check "the commands name a path with a space in quotes" grep -q "ovni report '$TMP/my trace'" "$TMP/c.err"

check_fails "an inverted window is an error" "inverted" "$OVNI" emu -o "$TMP/d" --from 3ms --to 2ms "$N6/trace"
check_fails "an empty window is an error" "empty window" "$OVNI" emu -o "$TMP/d" --from 3ms --to 3000us "$N6/trace"
check_fails "a window after the end is an error" "trace ends at" "$OVNI" emu -o "$TMP/d" --from 10s "$N6/trace"
check_fails "a time needs a unit" "needs a unit" "$OVNI" emu -o "$TMP/d" --to 3000 "$N6/trace"
done_testing
