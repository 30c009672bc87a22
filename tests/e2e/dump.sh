# ovni dump: what a user checks beyond the golden comparison (which
# tests/conformance.sh does for every case): single streams, filters, JSON,
# descriptions, aliases, options.
. "$(dirname "$0")/lib.sh"
GEN=$BUILD/tools/gen-trace
MK=$BUILD/tools/mkstream

MPI=$GOLDEN/mpi/func
WANT=$MPI/expected/dump-x.txt

# One stream directory: the same lines as in the whole trace, path column empty.
s=$(cd "$MPI/trace" && find . -name stream.obs | sed 's|^\./||; s|/stream.obs$||' | sort | sed -n 3p)
"$OVNI" dump -x "$MPI/trace/$s" >"$TMP/one.txt"
grep "  $s  " "$WANT" | sed "s|  $s  |    |" >"$TMP/one.want"
check_same "a stream directory dumps with an empty path column" "$TMP/one.txt" "$TMP/one.want"
[ -s "$TMP/one.want" ] && ok "the single-stream comparison is not empty" || not_ok "the single-stream comparison is not empty"

"$OVNI" dump -x "$MPI/trace///" >"$TMP/slash.txt"
check_same "trailing slashes in the trace path change nothing" "$TMP/slash.txt" "$WANT"

# Filters against the same selection made with grep and awk on the reference output.
"$OVNI" dump -x --stream 'loom.vm.[13]/*' "$MPI/trace" >"$TMP/f.txt"
awk '$3 ~ /^loom\.vm\.[13]\//' "$WANT" >"$TMP/f.want"
check_same "--stream keeps the streams whose path matches" "$TMP/f.txt" "$TMP/f.want"

"$OVNI" dump -x --mcv 'MU*' "$MPI/trace" >"$TMP/f.txt"
awk '$2 ~ /^MU/' "$WANT" >"$TMP/f.want"
check_same "--mcv keeps the matching MCVs" "$TMP/f.txt" "$TMP/f.want"

from=$(awk 'NR == 100 {print $1}' "$WANT")
to=$(awk 'NR == 1500 {print $1}' "$WANT")
"$OVNI" dump -x --from "@$from" --to "@$to" "$MPI/trace" >"$TMP/f.txt"
awk -v a="$from" -v b="$to" '$1 >= a && $1 <= b' "$WANT" >"$TMP/f.want"
check_same "--from @CLOCK and --to @CLOCK keep the raw clocks in [from, to]" "$TMP/f.txt" "$TMP/f.want"

# Relative times count from the earliest first event of the trace.
start=$(awk 'NR == 1 || $1 < m {m = $1} END {print m}' "$WANT")
"$OVNI" dump -x --from "$((from - start))ns" --to "$(((to - start) / 1000)).$(printf %03d $(((to - start) % 1000)))us" \
	"$MPI/trace" >"$TMP/f.txt"
check_same "--from NNNns and --to N.NNNus count from the start of the trace" "$TMP/f.txt" "$TMP/f.want"

"$OVNI" dump -x --stream '*vm.0*' --mcv 'M[TW]?' --from "@$from" "$MPI/trace" >"$TMP/f.txt"
awk -v a="$from" '$3 ~ /vm\.0/ && $2 ~ /^M[TW]/ && $1 >= a' "$WANT" >"$TMP/f.want"
check_same "filters combine" "$TMP/f.txt" "$TMP/f.want"

check_fails "--stream matching nothing is an error" "no stream path matches 'nothing\*'" \
	"$OVNI" dump --stream 'nothing*' "$MPI/trace"
check_fails "--from needs a unit" "--from '12x': unknown unit" "$OVNI" dump --from 12x "$MPI/trace"
check_fails "a bare number is ambiguous" "--to '$to': needs a unit" "$OVNI" dump --to "$to" "$MPI/trace"
check_fails "an inverted window is an error" "window is inverted" "$OVNI" dump --from "@$to" --to "@$from" "$MPI/trace"
check_fails "an empty window is an error" "empty window" "$OVNI" dump --from 1ms --to 1000us "$MPI/trace"
check_fails "a window past the end holds no event" "no event in the window" "$OVNI" dump --from 1000s "$MPI/trace"

# Descriptions: declared events are described, undeclared ones are UNKNOWN.
"$OVNI" dump "$GOLDEN/ovni/sort/trace" >"$TMP/text.txt" 2>"$TMP/text.err"
check "dump of an unsorted trace succeeds" test $? -eq 0
grep -q 'warning: .*stream.obs: offset [0-9]*: event .*backwards jump' "$TMP/text.err" &&
	ok "a backwards jump is a warning naming stream and offset" ||
	not_ok "a backwards jump is a warning naming stream and offset"
n=$(wc -l <"$GOLDEN/ovni/sort/expected/dump-x.txt")
check "text and hex dumps have the same lines" test "$(wc -l <"$TMP/text.txt")" -eq "$n"
if grep -q '^ *[0-9]*  OUj  .*  UNKNOWN$' "$TMP/text.txt"; then ok "an undeclared MCV is UNKNOWN"; else not_ok "an undeclared MCV is UNKNOWN"; fi
if awk '$2 == "OHx" || $2 == "OB." {print}' "$TMP/text.txt" | grep -q 'UNKNOWN$'; then
	not_ok "declared events get a description"
else ok "declared events get a description"; fi
awk '{print $1, $2}' "$TMP/text.txt" >"$TMP/a"
awk '{print $1, $2}' "$GOLDEN/ovni/sort/expected/dump-x.txt" >"$TMP/b"
check_same "text and hex dumps list the same events" "$TMP/a" "$TMP/b"

# JSON: one object per event, named fields decoded.
mkthread "$TMP/js" 7 <<'EOF'
header
ev OHx 1000 01000000ffffffff2a00000000000000
ev OB. 1001
ev ZZZ 1002 0102
jumbo 6Yc 1003 0500000068692200
EOF
"$OVNI" dump --json "$TMP/js" >"$TMP/js.txt"
cat >"$TMP/js.want" <<'EOF'
{"clock":1000,"mcv":"OHx","stream":"","offset":8,"args":{"cpu":1,"tid":-1,"tag":42}}
{"clock":1001,"mcv":"OB.","stream":"","offset":36,"args":{}}
{"clock":1002,"mcv":"ZZZ","stream":"","offset":48,"payload":"0102"}
{"clock":1003,"mcv":"6Yc","stream":"","offset":62,"args":{"typeid":5,"label":"hi\""}}
EOF
check_same "--json: clock, mcv, stream, offset and named args (strings escaped)" "$TMP/js.txt" "$TMP/js.want"
"$OVNI" dump -x "$TMP/js" >"$TMP/jx.txt"
cat >"$TMP/jx.want" <<'EOF'
      1000  OHx    :01:00:00:00:ff:ff:ff:ff:2a:00:00:00:00:00:00:00
      1001  OB.    
      1002  ZZZ    :01:02
      1003  6Yc    :08:00:00:00:05:00:00:00:68:69:22:00
EOF
check_same "-x: clock right-aligned in 10, jumbo length bytes first" "$TMP/jx.txt" "$TMP/jx.want"

# A generated trace with unfinished metadata and several looms.
"$GEN" -n 2000 -t 2 -p 2 -l 2 -k nanos6 --unfinished "$TMP/gen" >/dev/null
"$OVNI" dump -x "$TMP/gen" >"$TMP/gen.txt"
check "streams without ovni.finished are dumped" test $? -eq 0
check "every generated event is dumped" test "$(wc -l <"$TMP/gen.txt")" -eq 16000
# The plain dump learns each MCV's description on its first event (a text
# when the event has no arguments); a filter (--mcv) describes every event
# on its own: both must agree, in text and in hex.
for mode in "" -x; do
	"$OVNI" dump $mode "$TMP/gen" >"$TMP/learnt.txt"
	"$OVNI" dump $mode --mcv '*' "$TMP/gen" >"$TMP/each.txt"
	check_same "dump ${mode:-(text)}: the whole-trace loop and the filtered one agree" "$TMP/learnt.txt" "$TMP/each.txt"
done
"$OVNI" dump "$GOLDEN/ovni/sort/trace" 2>/dev/null >"$TMP/learnt.txt"
"$OVNI" dump --mcv '*' "$GOLDEN/ovni/sort/trace" 2>/dev/null >"$TMP/each.txt"
check_same "dump with UNKNOWN MCVs: the whole-trace loop and the filtered one agree" "$TMP/learnt.txt" "$TMP/each.txt"
awk 'NR > 1 && $1 < prev {bad = 1} {prev = $1} END {exit bad}' "$TMP/gen.txt" &&
	ok "events of sorted streams come out in clock order" || not_ok "events of sorted streams come out in clock order"

# The old name through a symlink, and the command line.
ln -s "$OVNI" "$TMP/ovnidump"
"$TMP/ovnidump" -x "$MPI/trace" >"$TMP/alias.txt"
check_same "ovnidump (symlink) is ovni dump" "$TMP/alias.txt" "$WANT"
check_fails "no trace argument is an error" "expected one trace" "$OVNI" dump
check_fails "an unknown option is an error" "Usage: ovni dump" "$OVNI" dump --bogus "$MPI/trace"
"$OVNI" dump --help >"$TMP/help.txt" && grep -q '^Usage: ovni dump' "$TMP/help.txt" &&
	ok "dump --help shows the usage" || not_ok "dump --help shows the usage"
done_testing
