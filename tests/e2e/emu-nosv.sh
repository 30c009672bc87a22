# ovni emu, the nosv model: the breakdown timeline (-b), hardware counter
# views, and traces that break the model's rules (one error line naming
# what the trace did wrong). The golden nosv/* cases check byte identity.
. "$(dirname "$0")/lib.sh"
MK=$BUILD/tools/mkstream
n=0

OHX0='ev OHx %s 00000000ffffffff0000000000000000'
OHX1='ev OHx %s 01000000ffffffff0000000000000000'
TYPE1='jumbo VYc %s 010000007431 00' # type 1 "t1"
OBS=loom.node0/proc.1/thread.7/stream.obs

# stream DIR TID NOSV LINES [ARGS]: a finished stream of process 1 on node0
# (2 CPUs) requiring nosv; NOSV is the "nosv" metadata object.
stream() {
	dir=$1 tid=$2 nosv=$3
	shift 3
	p=$dir/loom.node0/proc.1/thread.$tid
	mkdir -p "$p"
	printf '{"version": 3, "ovni": {"lib": {"version": "1.14.0", "commit": "t"}, "part": "thread", "tid": %s, "pid": 1, "loom": "node0", "app_id": 1, "require": {"ovni": "1.1.0", "nosv": "2.7.0"}, "loom_cpus": [{"index": 0, "phyid": 0}, {"index": 1, "phyid": 1}], "finished": 1}, "nosv": %s}' \
		"$tid" "$nosv" >"$p/stream.json"
	printf "$@" | "$MK" "$p/stream.obs"
}

# one_thread NOSV LINES [ARGS]: a new trace $d with thread 7.
one_thread() {
	n=$((n + 1))
	d=$TMP/t$n
	stream "$d" 7 "$@"
}

# ---- breakdown ----
n=$((n + 1))
d=$TMP/t$n
stream "$d" 7 '{"can_breakdown": true}' "header\n$OHX0\n$TYPE1\nev VTc 120 0100000001000000\n%s\n%s\nev VPr 150\nev OHe 200\n" \
	100 110 'ev VTx 130 0100000000000000' 'ev VTe 140 0100000000000000'
stream "$d" 8 '{"can_breakdown": true}' "header\n$OHX1\nev VSh 115\nev VSf 125\nev OHe 205\n" 105
check "a trace whose threads can break down, with -b" "$OVNI" emu -l -b "$d"
cat >"$TMP/want" <<'EOF'
#Paraver (19/01/38 at 03:14):00000000000000000105_ns:0:1:1(2:1)
2:0:1:1:1:0:17:0
2:0:1:1:2:0:17:2
2:0:1:1:1:5:17:2
2:0:1:1:2:15:17:6
2:0:1:1:2:25:17:2
2:0:1:1:2:30:17:279388579
2:0:1:1:2:40:17:2
2:0:1:1:2:50:17:101
2:0:1:1:1:105:17:101
EOF
# rows appear when a CPU first gets a thread: Unknown (2) without a
# subsystem, Hungry (6), the task type in a body, Resting (101) when idle
check_same "the breakdown sorts what each CPU does" "$d/nosv-breakdown.prv" "$TMP/want"
printf 'LEVEL NODE SIZE 1\nhostname\n\nLEVEL THREAD SIZE 2\n~CPU    2\n~CPU    1\n' >"$TMP/want"
check_same "breakdown rows count CPUs down" "$d/nosv-breakdown.row" "$TMP/want"
check "the breakdown .pcf has the subsystems, idle states and task types" \
	grep -q -e '^0 17         CPU: nOS-V Runtime/Idle/Task breakdown$' -e '^279388579 t1$' "$d/nosv-breakdown.pcf"
check "the breakdown view" grep -q 'evt_type 1 17' "$d/cfg/cpu/nosv/breakdown.cfg"

one_thread '{"can_breakdown": true}' "header\n$OHX0\n$TYPE1\nev VTc 120 0100000001000000\n%s\n%s\n%s\n%s\n%s\n%s\nev OHe 200\n" \
	100 110 'ev VTx 130 0100000000000000' 'ev VTp 140 0100000000000000' 'ev VAy 145' 'ev VAY 147' \
	'ev VTr 150 0100000000000000' 'ev VTe 160 0100000000000000'
check "a task that pauses, with -b" "$OVNI" emu -l -b "$d"
cat >"$TMP/want" <<'EOF'
#Paraver (19/01/38 at 03:14):00000000000000000100_ns:0:1:1(2:1)
2:0:1:1:1:0:17:0
2:0:1:1:2:0:17:2
2:0:1:1:2:30:17:279388579
2:0:1:1:2:40:17:0
2:0:1:1:2:45:17:16
2:0:1:1:2:47:17:11
2:0:1:1:2:60:17:2
2:0:1:1:2:100:17:101
EOF
# as the reference's mux: the type is picked when the subsystem changes, so
# a pause (type null in the body) shows 0, a yield 16, back in the body
# without a type 11, which the resume does not change
check_same "a paused task in the breakdown" "$d/nosv-breakdown.prv" "$TMP/want"

d=$TMP/t1
rm -rf "$d"/*.prv "$d"/*.pcf "$d"/*.row "$d/cfg"
sed -i 's/"can_breakdown": true/"can_breakdown": false/' "$d/loom.node0/proc.1/thread.8/stream.json"
check "a thread that cannot break down: the run succeeds" "$OVNI" emu -l -b "$d"
cp "$TMP/.out" "$TMP/log"
check "... with a warning" grep -q "only 1 of 2 threads have nosv.can_breakdown" "$TMP/log"
check "... without nosv-breakdown.prv" test ! -e "$d/nosv-breakdown.prv"

# ---- hardware counters ----
one_thread '{"hwc": {"0": {"name": "CYC"}, "1": {"name": "INS"}}}' \
	"header\n$OHX0\njumbo VWC 200 05000000000000000700000000000000\nev OHe 300\n" 100
check "two counters" "$OVNI" emu -l "$d"
check "counter values on the thread rows" grep -q -e '^2:0:1:1:1:100:200:5$' "$d/thread.prv"
check "counter 1 is type 201" grep -q -e '^2:0:1:1:1:100:201:7$' "$d/thread.prv"
check "a counter's .pcf label is its name" grep -q '^0 201        INS$' "$d/thread.pcf"
check "a counter view shows the next value" grep -q 'thread, Next Evt Val' "$d/cfg/thread/nosv/hwc-CYC.cfg"
check "a counter view's title" grep -q 'Thread: nOS-V INS of the ACTIVE thread' "$d/cfg/thread/nosv/hwc-INS.cfg"
check "the CPU counter view" grep -q 'CPU: nOS-V CYC of the RUNNING thread' "$d/cfg/cpu/nosv/hwc-CYC.cfg"

# views_match DIR SIDE: every nosv view of SIDE filters a type of SIDE.pcf
# with the same label, and every nosv type there has a view.
views_match() {
	for f in "$1"/cfg/"$2"/nosv/*.cfg; do
		t=$(sed -n 's/^window_filter_module evt_type 1 //p' "$f")
		l=$(sed -n 's/^window_filter_module evt_type_label 1 "\(.*\)"$/\1/p' "$f")
		grep -qx "0 $(printf '%-10s' "$t") $l" "$1/$2.pcf" || { echo "$f: type $t '$l' not in $2.pcf"; return 1; }
	done
	for t in 10 11 12 13 14 15 16 200 201; do
		grep -qx "window_filter_module evt_type 1 $t" "$1"/cfg/"$2"/nosv/*.cfg || { echo "no view of $t"; return 1; }
	done
}
check "every thread view of nosv matches thread.pcf" views_match "$d" thread
check "every CPU view of nosv matches cpu.pcf" views_match "$d" cpu

one_thread '{"hwc": {"0": {"name": "CYC"}}}' \
	"header\n$OHX0\njumbo VWC 200 05000000000000000700000000000000\nev OHe 300\n" 100
check_fails "a counter event of the wrong size" "$OBS: offset 36: event VWC .*16 bytes, not 8 for each of the 1 counters" \
	"$OVNI" emu "$d"
one_thread '{}' "header\n$OHX0\njumbo VWC 200 0500000000000000\nev OHe 300\n" 100
check_fails "a counter event without counters" "no stream declares counters in nosv.hwc" "$OVNI" emu "$d"
one_thread '{"hwc": {"0": {"nam": "CYC"}}}' "header\n$OHX0\nev OHe 300\n" 100
check_fails "a counter without a name" "thread.7/stream.json: line 1, column [0-9]+: nosv.hwc: a counter needs a \"name\"" \
	"$OVNI" emu "$d"
one_thread '{"hwc": {"1": {"name": "CYC"}}}' "header\n$OHX0\nev OHe 300\n" 100
check_fails "counters not numbered from 0" "numbered \"0\", \"1\", ... without gaps" "$OVNI" emu "$d"
n=$((n + 1))
d=$TMP/t$n
stream "$d" 7 '{"hwc": {"0": {"name": "CYC"}}}' "header\n$OHX0\nev OHe 300\n" 100
stream "$d" 8 '{"hwc": {"0": {"name": "INS"}}}' "header\n$OHX1\nev OHe 300\n" 100
check_fails "threads that disagree on the counters" "counter 0 is INS here but CYC in" "$OVNI" emu "$d"

# ---- subsystems ----
one_thread '{}' "header\n$OHX0\nev VAs 200\nev VAY 300\nev OHe 400\n" 100
check_fails "leaving another API call" \
	"$OBS: offset [0-9]+: event VAY at clock 300: thread 7 leaves the nOS-V subsystem 'API: Yield' but is in 'API: Submit'" \
	"$OVNI" emu "$d"
one_thread '{}' "header\n$OHX0\nev VSf 200\nev OHe 400\n" 100
check_fails "leaving a subsystem never entered" "leaves the nOS-V subsystem 'Scheduler: Hungry' but is in none" "$OVNI" emu "$d"
one_thread '{}' "header\n$OHX0\nev VMa 200\nev OHe 400\n" 100
check "a subsystem left open is fine without -l" "$OVNI" emu "$d"
check_fails "... but not with -l" "nosv model: thread 7 ended inside 1 nOS-V subsystem, the innermost 'Memory: Allocating'" \
	"$OVNI" emu -l "$d"
one_thread '{}' "header\n$OHX0\nev OHp 200\nev VSh 300\nev OHe 400\n" 100
check_fails "an event of a paused thread" "event VSh at clock 300: thread 7 emitted a nOS-V event while Paused, not active" \
	"$OVNI" emu "$d"
one_thread '{}' "header\n$OHX0\nev VZz 200\nev OHe 400\n" 100
check_fails "an unknown event" "event VZz at clock 200: unknown nOS-V event" "$OVNI" emu "$d"

# ---- tasks ----
# "c14767" and "c48971" hash to the same type value, 1547107794
one_thread '{}' "header\n$OHX0\n%s\n%s\nev OHe 400\n" 100 'jumbo VYc 110 01000000633134373637 00' \
	'jumbo VYc 120 02000000633438393731 00'
check_fails "two task type labels with the same value" \
	'nosv model: task types "c14767" and "c48971" get the same Paraver value 1547107794' "$OVNI" emu "$d"
check "... the .pcf still lists the first label" grep -q '^1547107794 c14767$' "$d/thread.pcf"

one_thread '{}' "header\n$OHX0\nev VTx 200 0100000000000000\nev OHe 400\n" 100
check_fails "running a task never created" "cannot run task 1: no such task was created" "$OVNI" emu "$d"
one_thread '{}' "header\n$OHX0\nev VTc 200 0100000001000000\nev OHe 400\n" 100
check_fails "a task of an undeclared type" "task 1 is created with type 1, which this process has not declared" \
	"$OVNI" emu "$d"
one_thread '{}' "header\n$OHX0\njumbo VYc 110 0100000074\nev OHe 400\n" 100
check_fails "a type label without its NUL" "the label of the task type event does not end with a NUL byte" \
	"$OVNI" emu "$d"
one_thread '{}' "header\n$OHX0\n$TYPE1\nev VTc 120 0100000001000000\nev VTx 130 0100000002000000\nev OHe 400\n" 100 110
check_fails "a normal task with a body id" "cannot run body 2 of task 1: it is not parallel" "$OVNI" emu "$d"
one_thread '{}' "header\n$OHX0\n$TYPE1\nev VTC 120 0100000001000000\nev VTx 130 0100000000000000\nev OHe 400\n" 100 110
check_fails "a parallel task without a body id" "cannot run body 0 of parallel task 1" "$OVNI" emu "$d"
one_thread '{}' "header\n$OHX0\n$TYPE1\nev VTC 120 0100000001000000\n%s\n%s\nev OHe 400\n" 100 110 \
	'ev VTx 130 0100000003000000' 'ev VTp 140 0100000003000000'
check_fails "pausing a parallel body" "body\(id=3,taskid=1\) is not allowed to pause" "$OVNI" emu "$d"
one_thread '{}' "header\n$OHX0\n$TYPE1\nev VTC 120 0100000001000000\n%s\n%s\n%s\nev OHe 400\n" 100 110 \
	'ev VTx 130 0100000003000000' 'ev VTe 140 0100000003000000' 'ev VTx 150 0100000003000000'
check_fails "running a parallel body twice" "body\(id=3,taskid=1\) has ended and is not allowed to run again" \
	"$OVNI" emu "$d"
one_thread '{}' "header\n$OHX0\n$TYPE1\nev VTc 120 0100000001000000\n%s\n%s\n%s\n%s\nev OHe 400\n" 100 110 \
	'ev VTx 130 0100000000000000' 'ev VTe 140 0100000000000000' \
	'ev VTx 150 0100000000000000' 'ev VTe 160 0100000000000000'
check "a normal task may run again after it ends" "$OVNI" emu -l "$d"
check "... and shows its id again" grep -q -e '^2:0:1:1:1:50:10:1$' "$d/thread.prv"
one_thread '{}' "header\n$OHX0\n$TYPE1\nev VTc 120 0100000001000000\n%s\n%s\nev OHe 400\n" 100 110 \
	'ev VTx 130 0100000000000000' 'ev VTp 140 0100000000000000'
check "a task left paused is fine without -l" "$OVNI" emu "$d"
check_fails "... but not with -l" "nosv model: thread 7 ended with 1 task body unfinished: body\(id=1,taskid=1\) \(Paused\)" \
	"$OVNI" emu -l "$d"
one_thread '{}' "header\n$OHX0\n$TYPE1\nev VTc 120 0100000001000000\n%s\n%s\nev OHe 400\n" 100 110 \
	'ev VTx 130 0100000000000000' 'ev VTe 140 0200000000000000'
check_fails "ending another task" "cannot end task 2: no such task was created" "$OVNI" emu "$d"
one_thread '{}' "header\n$OHX0\n$TYPE1\nev VTc 120 0100000001000000\nev VTc 130 0100000001000000\nev OHe 400\n" 100 110
check_fails "creating a task twice" "task 1 is created twice" "$OVNI" emu "$d"
one_thread '{}' "header\n$OHX0\n$TYPE1\nev VTc 120 01000000\nev OHe 400\n" 100 110
check_fails "a task event with a short payload" "a nOS-V task event needs 8 bytes \(task id and type id\), not 4" \
	"$OVNI" emu "$d"

done_testing
