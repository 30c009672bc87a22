# ovni emu, nanos6 model: what the golden corpus does not cover. Task
# nesting and ids per process, type labels (unlabeled, collisions), idle
# states, ranks, -l, the breakdown, and bad input (one error line naming
# the stream, offset and event; exit 1).
. "$(dirname "$0")/lib.sh"
MK=$BUILD/tools/mkstream
n=0

OHX0='ev OHx %s 00000000ffffffff0000000000000000'
OHX1='ev OHx %s 01000000ffffffff0000000000000000'

# u32 N: N as 4 little-endian bytes in hex.
u32() {
	printf '%02x%02x%02x%02x' $(($1 & 255)) $((($1 >> 8) & 255)) $((($1 >> 16) & 255)) $((($1 >> 24) & 255))
}
# label S: S and its NUL as hex.
label() {
	printf '%s' "$1" | od -An -tx1 | tr -d ' \n'
	printf '00'
}
# decl ID LABEL CLOCK: the jumbo 6Yc line.
decl() { printf 'jumbo 6Yc %s %s%s' "$3" "$(u32 "$1")" "$(label "$2")"; }
# task MCV ID CLOCK: a 6Tx/6Te/6Tp/6Tr line.
task() { printf 'ev %s %s %s' "$1" "$3" "$(u32 "$2")"; }
# create ID TYPE CLOCK: the 6Tc line.
create() { printf 'ev 6Tc %s %s%s' "$3" "$(u32 "$1")" "$(u32 "$2")"; }

# stream DIR LOOM PID TID EXTRA LINES: a finished stream requiring nanos6,
# 2 CPUs in the loom; EXTRA goes in the ovni object; LINES feed mkstream.
stream() {
	p=$1/loom.$2/proc.$3/thread.$4
	mkdir -p "$p"
	printf '{"version": 3, "ovni": {"lib": {"version": "1.14.0", "commit": "t"}, "part": "thread", "tid": %s, "pid": %s, "loom": "%s", "app_id": 1, "require": {"ovni": "1.1.0", "nanos6": "1.1.0"}, "loom_cpus": [{"index": 0, "phyid": 0}, {"index": 1, "phyid": 1}], "finished": 1%s}}' \
		"$4" "$3" "$2" "$5" >"$p/stream.json"
	printf '%s\n' "$6" | "$MK" "$p/stream.obs"
}

# one_thread EXTRA LINES: a new trace $d with one thread (tid 7).
one_thread() {
	n=$((n + 1))
	d=$TMP/t$n
	stream "$d" node0 1 7 "$1" "$2"
}

# lines L...: the arguments, one a line, after the stream header.
lines() {
	printf 'header\n'
	printf '%s\n' "$@"
}

TYPE1=$(decl 1 "work" 110)

# ---- nesting ----
one_thread '' "$(lines "$(printf "$OHX0" 100)" "$TYPE1" "$(create 1 1 120)" "$(create 2 1 130)" \
	"$(task 6Tx 1 200)" 'ev 6Wt 250' "$(task 6Tx 2 300)" "$(task 6Te 2 400)" 'ev 6WT 450' \
	"$(task 6Te 1 500)" 'ev OHe 600')"
check "a task run inside a running one is accepted" "$OVNI" emu -l "$d"
"$OVNI" emu -l "$d" 2>"$TMP/err" >/dev/null
check "with a warning about deprecated nesting" grep -q 'warning: deprecated nesting: body(id=1,taskid=2) runs inside body(id=1,taskid=1)' "$TMP/err"
check "the inner task shows while it runs" grep -q '^2:0:1:1:1:200:35:2$' "$d/thread.prv"
check "the outer task shows again when the inner one ends" grep -q '^2:0:1:1:1:300:35:1$' "$d/thread.prv"
check "the task type is written again for the same type (EMITDUP)" \
	test "$(grep -c '^2:0:1:1:1:[0-9]*:36:[1-9]' "$d/thread.prv")" -eq 3
check "the subsystem is the body inside the nested body" grep -q '^2:0:1:1:1:200:37:1$' "$d/thread.prv"

# 12 nested bodies: 11 nestings, 10 warned one by one, then one line.
ev="$(printf "$OHX0" 100)
$TYPE1"
i=1
while [ $i -le 12 ]; do
	ev="$ev
$(create $i 1 $((110 + i)))"
	i=$((i + 1))
done
i=1
while [ $i -le 12 ]; do
	ev="$ev
ev 6Wt $((200 + 2 * i))
$(task 6Tx $i $((201 + 2 * i)))"
	i=$((i + 1))
done
i=12
while [ $i -ge 1 ]; do
	ev="$ev
$(task 6Te $i $((300 + 2 * (12 - i))))
ev 6WT $((301 + 2 * (12 - i)))"
	i=$((i - 1))
done
one_thread '' "$(lines "$ev" 'ev OHe 400')"
"$OVNI" emu -l "$d" >/dev/null 2>"$TMP/err"
check "many nested bodies are accepted" test $? -eq 0
check "the first 10 nestings are warned one by one" test "$(grep -c 'warning: deprecated nesting: body' "$TMP/err")" -eq 10
check "then one line for the rest" test "$(grep -c 'warning: deprecated nesting: more bodies' "$TMP/err")" -eq 1

one_thread '' "$(lines "$(printf "$OHX0" 100)" "$TYPE1" "$(create 1 1 120)" "$(create 2 1 130)" \
	"$(task 6Tx 1 200)" "$(task 6Tx 2 300)" 'ev OHe 600')"
check_fails "a body right inside another one enters the same subsystem twice" \
	'offset [0-9]+: event 6Tx at clock 300: .*nanos6\.thread0\.subsystem' "$OVNI" emu -l "$d"

# ---- task ids and types belong to a process ----
n=$((n + 1))
d=$TMP/t$n
stream "$d" node0 1 7 '' "$(lines "$(printf "$OHX0" 100)" "$TYPE1" "$(create 1 1 120)" \
	"$(task 6Tx 1 200)" "$(task 6Te 1 300)" 'ev OHe 400')"
stream "$d" node0 2 8 '' "$(lines "$(printf "$OHX1" 105)" "$(decl 1 "work" 115)" "$(create 1 1 125)" \
	"$(task 6Tx 1 205)" "$(task 6Te 1 305)" 'ev OHe 405')"
check "two processes may use the same task and type ids" "$OVNI" emu -l "$d"
check "a label declared by two processes is listed once" \
	test "$(grep -c '^[0-9]* *work$' "$d/thread.pcf")" -eq 1
n=$((n + 1))
d=$TMP/t$n
stream "$d" node0 1 7 '' "$(lines "$(printf "$OHX0" 100)" "$TYPE1" 'ev OHe 400')"
stream "$d" node0 2 8 '' "$(lines "$(printf "$OHX1" 105)" "$(create 1 1 125)" 'ev OHe 405')"
check_fails "a type declared by another process is unknown" \
	'proc\.2/thread\.8/stream\.obs: offset [0-9]+: event 6Tc at clock 125: .*type 1.*not declared' "$OVNI" emu -l "$d"

# ---- type labels ----
one_thread '' "$(lines "$(printf "$OHX0" 100)" "$(decl 5 "" 110)" "$(create 1 5 120)" \
	"$(task 6Tx 1 200)" "$(task 6Te 1 300)" 'ev OHe 400')"
check "an empty label is accepted" "$OVNI" emu -l "$d"
check "and named after its id in the .pcf" grep -q ' (unlabeled task type 5)$' "$d/thread.pcf"
check "in the CPU .pcf too" grep -q ' (unlabeled task type 5)$' "$d/cpu.pcf"

one_thread '' "$(lines "$(printf "$OHX0" 100)" "$(decl 1 c14767 110)" "$(decl 2 c48971 120)" 'ev OHe 400')"
check_fails "two labels with the same Paraver value fail at the end" \
	'nanos6 model: .*"c14767" and "c48971" .*same Paraver value 1547107794' "$OVNI" emu "$d"
check "after writing complete outputs" test -s "$d/thread.pcf"

# ---- idle states, rank, thread type ----
one_thread ', "rank": 2, "nranks": 4' "$(lines "$(printf "$OHX0" 100)" "$TYPE1" "$(create 1 1 120)" \
	'ev 6Hw 130' "$(task 6Tx 1 200)" "$(task 6Te 1 300)" 'ev OHp 400' 'ev OHr 500' \
	'ev 6Pr 550' 'ev 6Pa 560' 'ev 6Pp 570' 'ev 6HW 580' 'ev OHe 600')"
check "idle states, rank and thread type" "$OVNI" emu -l "$d"
check "a thread starts progressing (100)" grep -q '^2:0:1:1:1:0:40:100$' "$d/thread.prv"
check "a CPU left by its thread rests (101)" grep -q '^2:0:1:1:1:300:40:101$' "$d/cpu.prv"
check "and shows the thread's state when it comes back" grep -q '^2:0:1:1:1:400:40:100$' "$d/cpu.prv"
check "6Pr: resting (101)" grep -q '^2:0:1:1:1:450:40:101$' "$d/thread.prv"
check "6Pa: absorbing noise (102)" grep -q '^2:0:1:1:1:460:40:102$' "$d/thread.prv"
check "6Pp: progressing again" grep -q '^2:0:1:1:1:470:40:100$' "$d/thread.prv"
check "the task shows the process rank + 1" grep -q '^2:0:1:1:1:100:38:3$' "$d/thread.prv"
check "thread type worker (3), on the thread row" grep -q '^2:0:1:1:1:30:39:3$' "$d/thread.prv"
check "and on the CPU row" grep -q '^2:0:1:1:1:30:39:3$' "$d/cpu.prv"

one_thread '' "$(lines "$(printf "$OHX0" 100)" "$TYPE1" "$(create 1 1 120)" \
	"$(task 6Tx 1 200)" "$(task 6Te 1 300)" 'ev OHe 400')"
check "without a rank" "$OVNI" emu -l "$d"
check "no task rank is shown" sh -c "! grep -q ':38:[1-9]' '$d/thread.prv'"

# ---- -l ----
one_thread '' "$(lines "$(printf "$OHX0" 100)" 'ev 6Hw 110' 'ev 6Sa 120' 'ev OHe 400')"
check "without -l, subsystems left entered are fine" "$OVNI" emu "$d"
check_fails "with -l they are an error" 'nanos6 model: thread 7 ended with 1 nanos6 subsystem still entered' \
	"$OVNI" emu -l "$d"

# ---- breakdown ----
n=$((n + 1))
d=$TMP/t$n
stream "$d" node0 1 7 '' "$(lines "$(printf "$OHX0" 100)" "$TYPE1" "$(create 1 1 120)" \
	"$(task 6Tx 1 200)" "$(task 6Te 1 300)" 'ev OHe 400')"
stream "$d" node0 1 8 '' "$(lines "$(printf "$OHX1" 150)" 'ev 6W[ 250' 'ev 6Pa 260' 'ev 6W] 270' 'ev OHe 450')"
check "-b writes a breakdown" "$OVNI" emu -l -b "$d"
WORK=$(awk '$2 == "work" { print $1 }' "$d/nanos6-breakdown.pcf")
check "the breakdown .pcf lists the task type" test -n "$WORK"
cat >"$TMP/want" <<EOF
#Paraver (19/01/38 at 03:14):00000000000000000350_ns:0:1:1(2:1)
2:0:1:1:1:0:41:0
2:0:1:1:2:0:41:2
2:0:1:1:1:50:41:2
2:0:1:1:2:100:41:$WORK
2:0:1:1:1:150:41:19
2:0:1:1:1:160:41:102
2:0:1:1:1:200:41:2
2:0:1:1:2:200:41:102
2:0:1:1:1:300:41:101
2:0:1:1:2:350:41:101
EOF
check_same "the rows: CPU values sorted (unknown 2, task type, looking 19, absorbing 102, resting 101)" \
	"$d/nanos6-breakdown.prv" "$TMP/want"
printf 'LEVEL NODE SIZE 1\nhostname\n\nLEVEL THREAD SIZE 2\n~CPU    2\n~CPU    1\n' >"$TMP/want"
check_same "breakdown rows count down" "$d/nanos6-breakdown.row" "$TMP/want"
check "the breakdown has a view" test -f "$d/cfg/cpu/nanos6/breakdown.cfg"

# The type is picked when the subsystem changes: pausing right in the body
# leaves it picked, now null (0); a subsystem change picks again.
one_thread '' "$(lines "$(printf "$OHX0" 100)" "$TYPE1" "$(create 1 1 120)" \
	"$(task 6Tx 1 200)" "$(task 6Tp 1 300)" 'ev 6Bb 350' "$(task 6Tr 1 400)" 'ev 6BB 450' \
	"$(task 6Te 1 500)" 'ev OHe 600')"
check "-b with a paused task" "$OVNI" emu -l -b "$d"
cat >"$TMP/want" <<EOF
#Paraver (19/01/38 at 03:14):00000000000000000500_ns:0:1:1(2:1)
2:0:1:1:1:0:41:0
2:0:1:1:2:0:41:2
2:0:1:1:2:100:41:$WORK
2:0:1:1:2:200:41:0
2:0:1:1:2:250:41:14
2:0:1:1:2:350:41:$WORK
2:0:1:1:2:400:41:2
2:0:1:1:2:500:41:101
EOF
check_same "pausing inside the body shows 0 until the subsystem changes" "$d/nanos6-breakdown.prv" "$TMP/want"

# ---- bad input ----
# bad WHAT PATTERN LINES: emu fails with one line matching PATTERN.
bad() {
	one_thread '' "$3"
	check_fails "$1" "$2" "$OVNI" emu -l "$d"
}
START=$(printf "$OHX0" 100)
bad "a creation with 4 bytes" 'event 6Tc at clock 120: .*needs 8 bytes' \
	"$(lines "$START" "$TYPE1" "$(task 6Tc 1 120)" 'ev OHe 400')"
bad "running a task never created" 'event 6Tx at clock 200: .*no such task' \
	"$(lines "$START" "$(task 6Tx 9 200)" 'ev OHe 400')"
bad "running an ended task" 'event 6Tx at clock 400: .*already ended' \
	"$(lines "$START" "$TYPE1" "$(create 1 1 120)" "$(task 6Tx 1 200)" "$(task 6Te 1 300)" "$(task 6Tx 1 400)" 'ev OHe 500')"
bad "creating an ended task again" 'event 6Tc at clock 400: .*created twice' \
	"$(lines "$START" "$TYPE1" "$(create 1 1 120)" "$(task 6Tx 1 200)" "$(task 6Te 1 300)" "$(create 1 1 400)" 'ev OHe 500')"
bad "ending a task under another" 'event 6Te at clock 400: .*innermost body of this thread is body\(id=1,taskid=2\)' \
	"$(lines "$START" "$TYPE1" "$(create 1 1 120)" "$(create 2 1 130)" "$(task 6Tx 1 200)" "$(task 6Tp 1 250)" \
		'ev 6Wt 260' "$(task 6Tx 2 300)" "$(task 6Te 1 400)" 'ev OHe 500')"
bad "resuming a running task" 'event 6Tr at clock 300: .*Running, not Paused' \
	"$(lines "$START" "$TYPE1" "$(create 1 1 120)" "$(task 6Tx 1 200)" "$(task 6Tr 1 300)" 'ev OHe 500')"
bad "a type declared twice" 'event 6Yc at clock 120: .*declared twice' \
	"$(lines "$START" "$TYPE1" "$(decl 1 other 120)" 'ev OHe 500')"
bad "a type declaration that is not jumbo" 'event 6Yc at clock 120: .*jumbo' \
	"$(lines "$START" "ev 6Yc 120 $(u32 1)6100" 'ev OHe 500')"
bad "a type label without its NUL" 'event 6Yc at clock 120: .*NUL' \
	"$(lines "$START" "jumbo 6Yc 120 $(u32 1)6161" 'ev OHe 500')"
bad "an event of a paused thread" 'event 6W\[ at clock 300: thread 7 is not active' \
	"$(lines "$START" 'ev OHp 200' 'ev 6W[ 300' 'ev OHr 400' 'ev OHe 500')"
bad "an unknown nanos6 event" 'event 6Zz at clock 200: unknown nanos6 event' \
	"$(lines "$START" 'ev 6Zz 200' 'ev OHe 500')"
bad "leaving a subsystem not entered last" 'event 6WT at clock 300: ' \
	"$(lines "$START" 'ev 6W[ 200' 'ev 6WT 300' 'ev OHe 500')"

one_thread '' "$(lines "$START" "ev 6TC 200 $(u32 1)$(u32 1)" 'ev OHe 500')"
"$OVNI" emu -l "$d" >/dev/null 2>"$TMP/err"
check "the obsolete 6TC is ignored" test $? -eq 0
check "with a warning" grep -q 'warning: ignoring the obsolete task creation event 6TC' "$TMP/err"

done_testing
