# ovni emu: the region-stack models nodes 'D', mpi 'M' and tampi 'T' on
# traces written here (nodes has no golden case): the values their rows
# show, the .pcf and views, and bad input (one error line naming the event).
. "$(dirname "$0")/lib.sh"
n=0
REQ=', "nodes": "1.0.0", "mpi": "1.0.0", "tampi": "1.0.0"'
OHX0='ev OHx 100 00000000ffffffff0000000000000000'

# trace LINES: a new trace $d, one thread (tid 7) requiring the three
# models, that starts running on CPU 0 at clock 100 before LINES.
trace() {
	n=$((n + 1))
	d=$TMP/t$n
	stream "$d" node0 1 7 "$REQ" '' 'header\n'"$OHX0"'\n'"$1"
}

# rows FILE TYPE: the "time value" pairs of TYPE in a .prv
rows() { awk -F: -v t="$2" '$7 == t {print $6, $8}' "$1"; }

# ---- what nodes shows: a stack, on the ACTIVE thread and its CPU ----
trace 'ev DR[ 200\nev DC[ 300\nev DC] 400\nev DR] 500\nev DS[ 600\nev OHp 650\nev OHr 680\nev DS] 700\nev DP[ 710\nev DP] 720\nev OHe 800\n'
check "nodes regions are emulated (-l)" "$OVNI" emu -l "$d"
printf '%s\n' '0 0' '100 1' '200 6' '300 1' '400 0' '500 7' '550 0' '580 7' '600 0' '610 8' '620 0' >"$TMP/want"
rows "$d/thread.prv" 30 >"$TMP/got"
check_same "thread row: the innermost region, 0 while paused" "$TMP/got" "$TMP/want"
rows "$d/cpu.prv" 30 >"$TMP/got"
check_same "CPU row: the same through the running thread" "$TMP/got" "$TMP/want"
check "thread.pcf: NODES subsystem of the ACTIVE thread" grep -q '^0 30         NODES subsystem of the ACTIVE thread$' "$d/thread.pcf"
check "cpu.pcf: NODES subsystem of the RUNNING thread" grep -q '^0 30         NODES subsystem of the RUNNING thread$' "$d/cpu.pcf"
cat >"$TMP/want" <<'EOF'
1    Dependencies: Registering task accesses
2    Dependencies: Unregistering task accesses
3    If0: Waiting for an If0 task
4    If0: Executing an If0 task inline
5    Taskwait: Taskwait
6    Add Task: Creating a task
7    Add Task: Submitting a task
8    Spawn Function: Spawning a function
EOF
awk '/^0 30 /{p=1; next} p && /^VALUES/{next} p && /^$/{exit} p' "$d/cpu.pcf" >"$TMP/got"
check_same "the .pcf names every nodes value as the reference" "$TMP/got" "$TMP/want"
check "a view of the nodes subsystem per row kind" test -s "$d/cfg/thread/nodes/subsystem.cfg" -a -s "$d/cfg/cpu/nodes/subsystem.cfg"

# ---- mpi: on the RUNNING thread; tampi: ACTIVE ----
trace 'ev MUi 200\nev MUI 300\nev MW[ 400\nev TLi 410\nev OHc 450\nev OHp 460\nev OHw 470\nev OHr 480\nev TLI 490\nev MW] 500\nev OHe 600\n'
check "mpi and tampi regions are emulated (-l)" "$OVNI" emu -l "$d"
printf '%s\n' '0 0' '100 1' '200 0' '300 4' '350 0' '380 4' '400 0' >"$TMP/want"
rows "$d/thread.prv" 25 >"$TMP/got"
check_same "mpi: the function, 0 unless Running" "$TMP/got" "$TMP/want"
printf '%s\n' '0 0' '310 3' '360 0' '370 3' '390 0' >"$TMP/want"
rows "$d/thread.prv" 20 >"$TMP/got"
check_same "tampi: the subsystem while Cooling and Warming too" "$TMP/got" "$TMP/want"

# ---- every event of the catalogue, each region opened then closed ----
for m in nodes:16 mpi:98 tampi:24; do
	count=${m#*:} m=${m%:*}
	lines=$("$OVNI" events $m | sed -n 's/^| `\([A-Z][A-Za-z]\)\(.\)` .*/\1\2/p' |
		awk '{printf "ev %s %d\\n", $0, 200 + NR}')
	trace "$lines"'ev OHe 9999\n'
	check "$m: every event of 'ovni events $m' opens or closes a region (-l)" \
		sh -c "'$OVNI' emu -l '$d' && test \$(grep -c ':[0-9]*:[0-9]*:[0-9]*\$' '$d/thread.prv') -gt $count"
done
check "tampi: 12 subsystems shown" sh -c "awk -F: '\$7 == 20 && \$8 != 0' '$d/thread.prv' | sort -t: -k8 -un | wc -l | grep -qx 12"

# ---- bad input ----
trace 'ev DR[ 200\nev DU] 300\nev DR] 400\nev OHe 500\n'
check_fails "closing another region than the open one" \
	"offset 48: event DU\] at clock 300: .*nodes.*cannot pop 2, the top is 1" "$OVNI" emu "$d"
trace 'ev DR] 200\nev OHe 500\n'
check_fails "closing a region never opened" "event DR\] at clock 200: .*the stack is empty" "$OVNI" emu "$d"
trace 'ev DX[ 200\nev OHe 500\n'
check_fails "an event nodes does not have" "event DX\[ at clock 200: unknown nodes event" "$OVNI" emu "$d"
trace 'ev OHp 150\nev DR[ 200\nev OHr 300\nev OHe 500\n'
check_fails "a region on a paused thread" "event DR\[ at clock 200: thread 7 is Paused: nodes events need a Running thread" "$OVNI" emu "$d"
trace 'ev OHc 150\nev TLi 200\nev OHe 500\n'
check_fails "tampi too needs a Running thread" "event TLi at clock 200: thread 7 is Cooling" "$OVNI" emu "$d"
trace 'ev MS[ 200\nev MS[ 300\nev MS] 400\nev MS] 500\nev OHe 600\n'
check_fails "an MPI function nested in itself" "event MS\[ at clock 300: .*mpi.*13" "$OVNI" emu "$d"

trace 'ev DT[ 200\nev OHe 500\n'
check "without -l a region may stay open" "$OVNI" emu "$d"
check_fails "-l: a nodes region left open" "nodes model: thread 7 ends with 1 nodes subsystem left on its stack" "$OVNI" emu -l "$d"
check "-l: the outputs are still complete" grep -q '^2:0:1:1:1:400:6:0$' "$d/thread.prv"
trace 'ev TLi 200\nev TCi 300\nev MW[ 350\nev OHe 500\n'
check_fails "-l: two tampi regions left open" "tampi model: thread 7 ends with 2 tampi subsystems" "$OVNI" emu -l "$d"
check_fails "-l: and an MPI function" "mpi model: thread 7 ends with 1 mpi function left" "$OVNI" emu -l "$d"

n=$((n + 1))
d=$TMP/t$n
stream "$d" node0 1 7 '' '' 'header\n'"$OHX0"'\nev DR[ 200\nev DR] 300\nev OHe 500\n'
check_fails "nodes events need ovni.require" "event DR\[ at clock 200: the nodes model is not enabled" "$OVNI" emu "$d"
done_testing
