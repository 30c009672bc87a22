# ovni export --chrome: every golden trace gives JSON that python's json
# module reads; on every track each begin has its end, slices nest and
# timestamps never go back; the time of each value (a slice's duration less
# its children's) equals what `ovni report` says. A long trace is exported
# in bounded memory.
. "$(dirname "$0")/lib.sh"
GEN=$BUILD/tools/gen-trace

if ! command -v python3 >/dev/null 2>&1; then
	ok "# SKIP python3 is missing: the export checks need it"
	done_testing
fi

cat >"$TMP/check.py" <<'PY'
import csv, json, sys
from collections import defaultdict
doc = json.load(open(sys.argv[1]))
names, stacks, last, own = {}, defaultdict(list), {}, defaultdict(int)
events = doc["traceEvents"]
assert doc["displayTimeUnit"] == "ns"
def ns(ts):  # microseconds with three decimals, exact
    return round(ts * 1000)
for ev in events:
    ph, track = ev["ph"], (ev["pid"], ev.get("tid"))
    if ph == "M":
        if ev["name"] == "thread_name":
            names[track] = ev["args"]["name"]
        continue
    assert track in names, f"track {track} has no name before its first event"
    t = ns(ev["ts"])
    assert t >= last.get(track, 0), f"track {names[track]}: time goes back to {t}"
    last[track] = t
    st = stacks[track]
    if ph == "B":
        st.append([ev["args"]["value"], t, 0])
    elif ph == "E":
        assert st, f"track {names[track]}: an end without a begin at {t}"
        value, start, children = st.pop()
        dur = t - start
        own[names[track], value] += dur - children
        if st:
            st[-1][2] += dur
    elif ph == "i":
        assert ev["s"] == "t"
        own[names[track], ev["args"]["value"]] += 0
    else:
        raise AssertionError(f"unexpected phase {ph}")
for track, st in stacks.items():
    assert not st, f"track {names[track]}: {len(st)} slices never end"
want = defaultdict(int)
for path in sys.argv[2:]:
    for r in csv.DictReader(open(path)):
        group = r.get("thread") or r.get("cpu")
        want[group + " " + r["channel"], int(r["value"])] += int(r["ns"])
got = {k: v for k, v in own.items() if v}
want = {k: v for k, v in want.items() if v}
for k in sorted(set(got) | set(want)):
    assert got.get(k) == want.get(k), f"{k}: export {got.get(k)} ns, report {want.get(k)} ns"
print(len(events), len(got))
PY

ncase=0
for steps in "$GOLDEN"/*/*/steps; do
	dir=${steps%/steps}
	name=${dir#"$GOLDEN"/}
	case $(head -1 "$steps") in "emu"|"emu -l"|"emu -b -l") ;; *) continue ;; esac
	[ "$(cat "$dir"/expected/0-emu/rc)" = 0 ] || continue
	ncase=$((ncase + 1))
	"$OVNI" export --chrome -o "$TMP/t.json" "$dir/trace" 2>"$TMP/err" ||
		{ not_ok "$name: export exits 0"; sed 's/^/#   /' "$TMP/err" | head -3; continue; }
	"$OVNI" report --csv --by thread "$dir/trace" >"$TMP/th.csv" 2>/dev/null &&
		"$OVNI" report --csv --by cpu "$dir/trace" >"$TMP/cpu.csv" 2>/dev/null || not_ok "$name: report exits 0"
	if python3 "$TMP/check.py" "$TMP/t.json" "$TMP/th.csv" "$TMP/cpu.csv" >"$TMP/py.out" 2>&1; then
		ok "$name: JSON with balanced, nested, ordered tracks; times as the report's ($(cat "$TMP/py.out") events, values)"
	else
		not_ok "$name: export checks"; tail -3 "$TMP/py.out" | sed 's/^/#   /'
	fi
done
[ "$ncase" -ge 30 ] && ok "$ncase golden cases exported" || not_ok "only $ncase golden cases exported"

# A window: slices going on at --from start there; the times are the report's.
N6=$GOLDEN/nanos6/nested-tasks
"$OVNI" export --chrome --from 1.5ms --to 20.25ms -o "$TMP/w.json" "$N6/trace"
"$OVNI" report --csv --from 1.5ms --to 20.25ms "$N6/trace" >"$TMP/w.csv"
"$OVNI" report --csv --by cpu --from 1.5ms --to 20.25ms "$N6/trace" >"$TMP/wc.csv"
check "--from/--to: the window's slices take the report's times" python3 "$TMP/check.py" "$TMP/w.json" "$TMP/w.csv" "$TMP/wc.csv"
check "--from/--to: no event outside the window" python3 -c '
import json, sys
for ev in json.load(open(sys.argv[1]))["traceEvents"]:
    assert ev["ph"] == "M" or 1500 <= ev["ts"] <= 20250, ev' "$TMP/w.json"

# Names come from the .pcf labels, task types included.
grep -q '"name":"testtype1","cat":"nanos6/task-type"' "$TMP/w.json" && ok "task types are named by their labels" ||
	not_ok "task types are named by their labels"
grep -q '"ph":"i","pid":[0-9]*,"tid":[0-9]*,"ts":[0-9.]*,"s":"t"' "$TMP/t.json" "$TMP/w.json" &&
	ok "values that last no time are instant events" || not_ok "values that last no time are instant events"

# Bounded memory: four times the events, about the same peak RSS.
if [ -x /usr/bin/time ]; then
	"$GEN" -n 40000 -t 2 -k tasks "$TMP/small" >/dev/null 2>&1
	"$GEN" -n 160000 -t 2 -k tasks "$TMP/large" >/dev/null 2>&1
	/usr/bin/time -f %M -o "$TMP/rss.small" "$OVNI" export --chrome -o /dev/null "$TMP/small"
	/usr/bin/time -f %M -o "$TMP/rss.large" "$OVNI" export --chrome -o "$TMP/large.json" "$TMP/large"
	s=$(tail -1 "$TMP/rss.small") l=$(tail -1 "$TMP/rss.large")
	size=$(wc -c <"$TMP/large.json")
	if [ "$l" -le $((s + s / 4 + 1024)) ]; then
		ok "4x the events: peak RSS $s KiB -> $l KiB for $size bytes of JSON"
	else
		not_ok "4x the events: peak RSS $s KiB -> $l KiB (unbounded?)"
	fi
	check "the long export is JSON" python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$TMP/large.json"
	# Over a bigger file: written over in place, nothing of it left after.
	"$OVNI" export --chrome -o "$TMP/small.json" "$TMP/small"
	"$OVNI" export --chrome -o "$TMP/large.json" "$TMP/small"
	check_same "-o over a bigger file: the same bytes as a fresh export" "$TMP/large.json" "$TMP/small.json"
	"$OVNI" report -o "$TMP/r.big" "$TMP/large"
	"$OVNI" report -o "$TMP/r.small" "$TMP/small"
	"$OVNI" report -o "$TMP/r.big" "$TMP/small"
	check_same "report -o over a bigger file: the same bytes as a fresh report" "$TMP/r.big" "$TMP/r.small"
fi

check_fails "a format is required" "--chrome" "$OVNI" export "$N6/trace"
check_fails "an inverted window is an error" "inverted" "$OVNI" export --chrome --from 2ms --to 1ms "$N6/trace"
check_fails "a window past the end is an error" "trace ends at" "$OVNI" export --chrome -o "$TMP/no.json" --from 5s "$N6/trace"
check "a failed export leaves no file" test ! -e "$TMP/no.json"
done_testing
