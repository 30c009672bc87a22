# ovni report: the time in each state equals what thread.prv and cpu.prv say.
# The check integrates the reference's .prv files of the golden corpus with
# awk (each value lasts until the next line of its row and type, the last
# until the duration in the header), independently of the report code.
. "$(dirname "$0")/lib.sh"

# integrate PRV ROW [FROM TO]: "label,type,value,ns" for every value that
# appears, its time clipped to [FROM, TO] when given.
integrate() {
	awk -F: -v rowfile="$2" -v from="${3:-0}" -v to="${4:--1}" '
	function clip(a, b) { if (a < from) a = from; if (to >= 0 && b > to) b = to; return b > a ? b - a : 0 }
	BEGIN { n = 0; while ((getline l < rowfile) > 0) { if (l ~ /^LEVEL (THREAD|CPU) SIZE/) { on = 1; continue }
		if (on && l != "") { lab[++n] = l; sub(/^ +/, "", lab[n]) } } }
	NR == 1 { split($3, h, "_"); end = h[1] + 0; next }
	{ k = $5 SUBSEP $7
	  if (k in val && val[k] != 0) sum[$5, $7, val[k]] += clip(since[k], $6)
	  val[k] = $8; since[k] = $6
	  if ($8 != 0 && !(($5, $7, $8) in sum)) sum[$5, $7, $8] += 0 }
	END { for (k in val) if (val[k] != 0) { split(k, p, SUBSEP); sum[p[1], p[2], val[k]] += clip(since[k], end) }
	      for (k in sum) { split(k, p, SUBSEP); print lab[p[1]] "," p[2] "," p[3] "," sum[k] } }' "$1" | sort
}

# The report's CSV as "label,type,value,ns" (labels hold no comma here).
from_csv() {
	awk -F, 'NR > 1 { print $1 "," $3 "," $(NF-3) "," $(NF-2) }' "$1" | sort
}

ncase=0
for steps in "$GOLDEN"/*/*/steps; do
	dir=${steps%/steps}
	name=${dir#"$GOLDEN"/}
	case $(head -1 "$steps") in "emu"|"emu -l"|"emu -b -l") ;; *) continue ;; esac
	[ "$(cat "$dir"/expected/0-emu/rc)" = 0 ] || continue
	ncase=$((ncase + 1))
	for side in thread cpu; do
		if ! "$OVNI" report --csv --by "$side" "$dir/trace" >"$TMP/r.csv" 2>"$TMP/r.err"; then
			not_ok "$name: report --by $side exits 0"; sed 's/^/#   /' "$TMP/r.err" | head -5; continue
		fi
		from_csv "$TMP/r.csv" >"$TMP/got"
		integrate "$dir/expected/0-emu/$side.prv" "$dir/expected/0-emu/$side.row" >"$TMP/all"
		# only the types the report covers (identifiers are left out)
		cut -d, -f2 "$TMP/got" | sort -u >"$TMP/types"
		awk -F, 'NR == FNR { t[$1]; next } $2 in t' "$TMP/types" "$TMP/all" >"$TMP/want"
		if [ ! -s "$TMP/want" ] && [ $side = cpu ] && ! cut -d, -f2 "$TMP/all" | grep -qvx '[123]'; then
			ok "$name: report --by cpu is empty: cpu.prv has only identifiers (PID, TID, count)"
		elif [ -s "$TMP/want" ] && cmp -s "$TMP/got" "$TMP/want"; then
			ok "$name: report --by $side matches $side.prv ($(wc -l <"$TMP/want") states)"
		else
			not_ok "$name: report --by $side matches $side.prv"
			diff "$TMP/got" "$TMP/want" | head -10 | sed 's/^/#   /'
		fi
	done
done
[ "$ncase" -ge 30 ] && ok "$ncase golden cases checked" || not_ok "only $ncase golden cases checked"

# A window: the same integration clipped to [from, to] (states of no time dropped).
N6=$GOLDEN/nanos6/nested-tasks
"$OVNI" report --csv --from 1.5ms --to 20.25ms "$N6/trace" >"$TMP/w.csv"
from_csv "$TMP/w.csv" | awk -F, '$4 != 0' >"$TMP/got"
integrate "$N6/expected/0-emu/thread.prv" "$N6/expected/0-emu/thread.row" 1500000 20250000 |
	awk -F, 'NR == FNR { t[$2]; next } ($2 in t) && $4 != 0' "$TMP/got" - >"$TMP/want"
if [ -s "$TMP/want" ] && cmp -s "$TMP/got" "$TMP/want"; then ok "--from 1.5ms --to 20.25ms clips the states"; else
	not_ok "--from 1.5ms --to 20.25ms clips the states"; diff "$TMP/got" "$TMP/want" | head -5 | sed 's/^/#   /'; fi
start=$(awk 'NR == 1 || $1 < m {m = $1} END {print m}' "$N6/expected/dump-x.txt")
"$OVNI" report --csv --from "@$((start + 1500000))" --to 20250us "$N6/trace" >"$TMP/w2.csv"
check "--from @CLOCK is the same window as the relative time" cmp "$TMP/w.csv" "$TMP/w2.csv"

# Groups: a process sums its threads; task types split the threads' time.
MP=$GOLDEN/nosv/parallel-tasks
for g in thread process task-type; do
	"$OVNI" report --csv --by $g "$MP/trace" >"$TMP/$g.csv" || not_ok "--by $g exits 0"
	awk -F, 'NR > 1 { s[$3 "," $(NF-4) "," $(NF-3)] += $(NF-2) } END { for (k in s) print k "," s[k] }' \
		"$TMP/$g.csv" | sort >"$TMP/$g.sum"
done
check "--by process: the same time per state as the threads summed" cmp "$TMP/thread.sum" "$TMP/process.sum"
grep -v '^11,' "$TMP/thread.sum" >"$TMP/thread.nt"
grep -v '^11,' "$TMP/task-type.sum" >"$TMP/task-type.nt"
check "--by task-type: the same time per state as the threads summed" cmp "$TMP/thread.nt" "$TMP/task-type.nt"
n=$(awk -F, 'NR > 1 && $1 !~ /outside/ {print $1}' "$TMP/task-type.csv" | sort -u | wc -l)
[ "$n" -ge 1 ] && ok "--by task-type names the task types ($n)" || not_ok "--by task-type names the task types"

"$OVNI" report --csv --model nanos6 "$N6/trace" >"$TMP/m.csv"
same "--model keeps that model's channels only" "$(awk -F, 'NR > 1 {split($2, a, "/"); print a[1]}' "$TMP/m.csv" | sort -u)" nanos6

"$OVNI" report -o "$TMP/r.txt" "$N6/trace"
# A report that cannot be written whole (a file size limit, over an older
# and bigger file) leaves no file: neither half of it nor the older tail.
head -c 20000 /dev/zero >"$TMP/r.old"
check_fails "report -o under a file size limit" "r\.old: write failed: File too large" \
	sh -c "ulimit -f 1 && exec '$OVNI' report -o '$TMP/r.old' '$N6/trace'"
check "the half-written report is removed" test ! -e "$TMP/r.old"
grep -q '^TH 1.22067  ' "$TMP/r.txt" && grep -q '^  *ovni/thread-state  *Running  *61.813142ms  *100.00%  *1$' "$TMP/r.txt" &&
	ok "text: an aligned table with time, share and count" || not_ok "text: an aligned table with time, share and count"
if command -v python3 >/dev/null; then
	"$OVNI" report --json --by task-type "$MP/trace" >"$TMP/r.json"
	check "--json is JSON whose channels sum their states" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["groups"], "no groups"
for g in d["groups"]:
    for c in g["channels"]:
        assert c["ns"] == sum(s["ns"] for s in c["states"]), c["channel"]
        assert c["count"] == sum(s["count"] for s in c["states"]), c["channel"]
' "$TMP/r.json"
fi

check_fails "--by takes a known grouping" "--by 'core'" "$OVNI" report --by core "$N6/trace"
check_fails "--model must name a model of the trace" "--model mpi: no channel" "$OVNI" report --model mpi "$N6/trace"
check_fails "an inverted window is an error" "inverted" "$OVNI" report --from 2ms --to 1ms "$N6/trace"
check_fails "a window past the end is an error" "trace ends at" "$OVNI" report --from 2s "$N6/trace"
check_fails "a missing trace is an error" "cannot open|No such" "$OVNI" report "$TMP/none"

done_testing
