# ovni emu: the openmp model 'P' on traces written here: subsystem, label
# and task rows, tasks that nest and run again, the -b breakdown sorted
# over two CPUs, and bad input (one error line naming the event).
. "$(dirname "$0")/lib.sh"
REQ=', "openmp": "1.2.1"'
OHX='ev OHx %s %s000000ffffffff0000000000000000'
# POc payloads: type id, label, NUL
TYPE1='010000007461736b2e3100' # 1 "task.1", value 54144132
TYPE2='0200000077732e3100' # 2 "ws.1", value 424923942

# ---- two threads of one process on CPUs 0 and 1 ----
d=$TMP/two
stream "$d" node0 1 7 "$REQ" '' 'header\n'"$OHX"'\njumbo POc 200 %s\njumbo POc 210 %s\nev PPc 300 0100000001000000\nev PPx 400 01000000\nev PBb 500\nev PBB 600\nev PPe 700 01000000\nev PPx 800 01000000\nev PPe 900 01000000\nev PBs 1000\nev PBS 1010\nev OHe 1100\n' 100 00 $TYPE1 $TYPE2
stream "$d" node0 1 8 "$REQ" '' 'header\n'"$OHX"'\nev PQx 250 02000000\nev PWs 350\nev PWS 450\nev PQe 550 02000000\nev PTt 650\nev PTT 750\nev OHe 1150\n' 150 01
check "openmp: emulated with -l -b" "$OVNI" emu -l -b "$d"

# rows ROW TYPE FILE: the "time value" pairs of one row and type
rows() { awk -F: -v r="$1" -v t="$2" '$5 == r && $7 == t {print $6, $8}' "$3"; }

printf '%s\n' '0 0' '300 1' '600 0' '700 1' '800 0' >"$TMP/want"
rows 1 52 "$d/thread.prv" >"$TMP/got"
check_same "task id: set while the task runs, again when it runs again" "$TMP/got" "$TMP/want"
printf '%s\n' '0 0' '300 54144132' '600 0' '700 54144132' '800 0' >"$TMP/want"
rows 1 51 "$d/thread.prv" >"$TMP/got"
check_same "label: the task type's value" "$TMP/got" "$TMP/want"
printf '%s\n' '0 0' '400 3' '500 0' >"$TMP/want"
rows 1 50 "$d/thread.prv" >"$TMP/got"
check_same "subsystem: the plain barrier; spin waits are not shown" "$TMP/got" "$TMP/want"
printf '%s\n' '50 0' '150 424923942' '450 0' >"$TMP/want"
rows 2 51 "$d/thread.prv" >"$TMP/got"
check_same "label: a worksharing construct of the other thread" "$TMP/got" "$TMP/want"
printf '%s\n' '50 0' '250 12' '350 0' '550 23' '650 0' >"$TMP/want"
rows 2 50 "$d/cpu.prv" >"$TMP/got"
check_same "CPU 1 row: the subsystem of thread 8" "$TMP/got" "$TMP/want"
check "the .pcf labels the types once, in declaration order" \
	sh -c "grep -A3 '^0 51 ' '$d/thread.pcf' | tail -2 | tr '\n' '|' | grep -qx '54144132 task.1|424923942 ws.1|'"

# breakdown: label, else subsystem, per CPU; rows sorted ascending, all
# written first at the first change of a CPU's value (150), not at time 0
# (as the reference's ovniemu writes them)
cat >"$TMP/want" <<'EOF'
1 150 0
2 150 424923942
1 300 54144132
1 450 0
2 450 54144132
1 550 23
1 600 0
2 600 23
2 650 0
2 700 54144132
2 800 0
EOF
awk -F: 'NR > 1 && $7 == 53 {print $5, $6, $8}' "$d/openmp-breakdown.prv" >"$TMP/got"
check_same "breakdown: the values of both CPUs, sorted" "$TMP/got" "$TMP/want"
printf 'LEVEL NODE SIZE 1\nhostname\n\nLEVEL THREAD SIZE 2\n~CPU    2\n~CPU    1\n' >"$TMP/want"
check_same "breakdown rows count down" "$d/openmp-breakdown.row" "$TMP/want"
check "breakdown .pcf: subsystems, then the labels" \
	sh -c "grep -q '^0 53         CPU: OpenMP Runtime/Label breakdown\$' '$d/openmp-breakdown.pcf' &&
		grep -q '^31   Runtime: Worker main loop\$' '$d/openmp-breakdown.pcf' &&
		tail -2 '$d/openmp-breakdown.pcf' | tr '\n' '|' | grep -qx '54144132 task.1|424923942 ws.1|'"
check "breakdown view" grep -q '^window_filter_module evt_type 1 53$' "$d/cfg/cpu/openmp/breakdown.cfg"
rm -f "$d/openmp-breakdown.prv"
check "no breakdown without -b" sh -c "'$OVNI' emu '$d' && test ! -e '$d/openmp-breakdown.prv'"

# ---- every region event of the catalogue, each opened then closed ----
lines=$("$OVNI" events openmp | sed -n 's/^| `\(P[A-Z][]A-Za-z[]\)` .*/\1/p' |
	awk '{printf "ev %s %d\\n", $0, 200 + NR}')
check "openmp: 62 region events in the catalogue" test "$(printf "$lines" | wc -l)" -eq 62
d=$TMP/regions
stream "$d" node0 1 7 "$REQ" '' 'header\n'"$OHX"'\n'"$lines"'ev OHe 9999\n' 100 00
check "openmp: each opens or closes a subsystem (-l)" "$OVNI" emu -l "$d"
check "openmp: 30 subsystems shown (not the spin wait)" \
	sh -c "awk -F: '\$7 == 50 && \$8 != 0' '$d/thread.prv' | sort -t: -k8 -un | wc -l | grep -qx 30"

# ---- bad input: one thread, type 1 declared, then LINES ----
n=0
bad() {
	n=$((n + 1))
	d=$TMP/bad$n
	stream "$d" node0 1 7 "$REQ" '' 'header\n'"$OHX"'\njumbo POc 200 %s\n'"$1"'ev OHe 5000\n' 100 00 $TYPE1
}
bad 'ev PPx 300 05000000\n'
check_fails "running a task never created" "event PPx at clock 300: .*task 5" "$OVNI" emu "$d"
bad 'ev PPc 300 0100000009000000\n'
check_fails "a task of an undeclared type" "event PPc at clock 300: .*type 9" "$OVNI" emu "$d"
bad 'ev PQx 300 09000000\n'
check_fails "a worksharing label of an undeclared type" "event PQx at clock 300: type 9 is not declared" "$OVNI" emu "$d"
bad 'jumbo POc 300 '$TYPE1'\n'
check_fails "a type declared twice" "event POc at clock 300: .*declared twice" "$OVNI" emu "$d"
bad 'ev POc 300 0300000074\n'
check_fails "a type declaration that is not jumbo" "event POc at clock 300: .*jumbo" "$OVNI" emu "$d"
bad 'jumbo POc 300 0300000074\n'
check_fails "a label without its NUL" "event POc at clock 300: the label of type 3 does not end" "$OVNI" emu "$d"
bad 'ev PPc 300 01000000\n'
check_fails "a task creation with 4 payload bytes" "event PPc at clock 300: .*8 payload bytes, not 4" "$OVNI" emu "$d"
bad 'ev PPc 300 0100000001000000\nev PPc 310 0200000001000000\nev PPx 400 01000000\nev PPx 410 02000000\nev PPe 500 01000000\n'
check_fails "ending the outer task first" "event PPe at clock 500: .*task 1" "$OVNI" emu "$d"
check "nesting a task warns" grep -q 'deprecated nesting' "$TMP/.err"
bad 'ev PPc 300 0100000001000000\nev PPx 400 01000000\nev PPx 410 01000000\n'
check_fails "running a running task" "event PPx at clock 410: .*already Running" "$OVNI" emu "$d"
bad 'ev OHp 300\nev PBb 400\n'
check_fails "openmp events need a Running thread" "event PBb at clock 400: thread 7 is Paused" "$OVNI" emu "$d"
bad 'ev PXx 300\n'
check_fails "an event openmp does not have" "event PXx at clock 300: unknown openmp event" "$OVNI" emu "$d"
bad 'ev PBb 300\nev PBJ 400\n'
check_fails "closing another region" "event PBJ at clock 400: .*cannot pop 2, the top is 3" "$OVNI" emu "$d"
bad 'ev PPc 300 0100000001000000\nev PPx 400 01000000\n'
check "without -l a task may be left running" "$OVNI" emu "$d"
check_fails "-l: a task left running" "openmp model: thread 7 ends with 1 openmp task left" "$OVNI" emu -l "$d"
bad 'ev PH[ 300\n'
check_fails "-l: a region left open" "openmp model: thread 7 ends with 1 openmp subsystem left" "$OVNI" emu -l "$d"
done_testing
