# ovni emu end to end: outputs and where they go, the views, what each
# ovni/kernel event shows, bad input (one error line naming stream, offset
# and event; consistent partial outputs), clock offsets, ^C. Byte identity
# with the reference is tests/conformance.sh's job.
. "$(dirname "$0")/lib.sh"
MK=$BUILD/tools/mkstream
GEN=$BUILD/tools/gen-trace
n=0

OHX0='ev OHx %s 00000000ffffffff0000000000000000'
OHX1='ev OHx %s 01000000ffffffff0000000000000000'

# one_thread LINES [ARGS]: a new trace $d with one thread (tid 7) on node0.
one_thread() {
	n=$((n + 1))
	d=$TMP/t$n
	stream "$d" node0 1 7 '' '' "$@"
}

# consistent DIR NAME: NAME.prv is a complete Paraver trace: header with
# the row count of NAME.row and a duration no line passes, lines in time
# order, rows in range, a final newline; .pcf and .row written.
consistent() {
	f=$1/$2.prv
	[ -s "$1/$2.pcf" ] && [ -s "$1/$2.row" ] && [ -s "$f" ] || return 1
	[ "$(tail -c 1 "$f" | od -An -c | tr -d ' ')" = '\n' ] || return 1
	rows=$(sed -n 's/^LEVEL THREAD SIZE //p' "$1/$2.row")
	awk -F: -v rows="$rows" '
		NR == 1 {
			if (!match($0, /^#Paraver \(19\/01\/38 at 03:14\):[0-9]+_ns:0:1:1\([0-9]+:1\)$/)) exit 1
			split($0, h, ":"); if (length(h[3]) != 23) exit 1
			dur = substr(h[3], 1, 20) + 0
			nr = split($0, r, "("); if (r[nr] + 0 != rows) exit 1
			next
		}
		NF != 8 || $1 != 2 || $5 < 1 || $5 > rows || $6 < last || $6 > dur { exit 1 }
		{ last = $6 }' "$f"
}

# ---- outputs, -o, views ----
one_thread 'header\n'"$OHX0"'\nev OHp 200\nev OHr 300\nev OHe 400\n' 100
cp -R "$d" "$TMP/orig"
check "a small trace is emulated" "$OVNI" emu -l "$d"
for f in thread.prv thread.pcf thread.row cpu.prv cpu.pcf cpu.row; do
	check "emu writes $f in the trace directory" test -s "$d/$f"
done
check "thread.prv is consistent" consistent "$d" thread
check "cpu.prv is consistent" consistent "$d" cpu
cat >"$TMP/want" <<'EOF'
#Paraver (19/01/38 at 03:14):00000000000000000300_ns:0:1:1(1:1)
2:0:1:1:1:0:6:1
2:0:1:1:1:0:4:1
2:0:1:1:1:0:2:7
2:0:1:1:1:100:4:2
2:0:1:1:1:100:2:0
2:0:1:1:1:200:4:1
2:0:1:1:1:200:2:7
2:0:1:1:1:300:4:3
2:0:1:1:1:300:2:0
2:0:1:1:1:300:6:0
EOF
check_same "thread rows: CPU, state and tid, times relative to the first event" "$d/thread.prv" "$TMP/want"
cat >"$TMP/want" <<'EOF'
#Paraver (19/01/38 at 03:14):00000000000000000300_ns:0:1:1(3:1)
2:0:1:1:1:0:2:7
2:0:1:1:1:0:1:1
2:0:1:1:1:0:3:1
2:0:1:1:1:0:7:0
2:0:1:1:1:100:2:0
2:0:1:1:1:100:1:0
2:0:1:1:1:100:3:0
2:0:1:1:1:200:2:7
2:0:1:1:1:200:1:1
2:0:1:1:1:200:3:1
2:0:1:1:1:300:2:0
2:0:1:1:1:300:1:0
2:0:1:1:1:300:3:0
EOF
check_same "CPU rows: tid, pid and running count of the running thread" "$d/cpu.prv" "$TMP/want"
printf 'LEVEL NODE SIZE 1\nhostname\n\nLEVEL THREAD SIZE 3\n CPU 0.0\n CPU 0.1\nvCPU 0.*\n' >"$TMP/want"
check_same "cpu.row names the physical CPUs, then the virtual one" "$d/cpu.row" "$TMP/want"

# every type in the .prv files has a view filtering it, labelled as the .pcf says
views_ok=1
for side in thread cpu; do
	for t in $(cut -d: -f7 "$d/$side.prv" | sed 1d | sort -un); do
		v=$(grep -l "^window_filter_module evt_type 1 $t\$" "$d"/cfg/$side/*/*.cfg 2>/dev/null | head -1)
		if [ -z "$v" ]; then views_ok=0; echo "# no $side view for type $t"; continue; fi
		label=$(sed -n 's/^window_filter_module evt_type_label 1 "\(.*\)"$/\1/p' "$v")
		if grep -q "^0 $t " "$d/$side.pcf" && ! grep -qF "$(printf '%-10s %s' "$t" "$label")" "$d/$side.pcf"; then
			views_ok=0; echo "# $v: label '$label' is not the .pcf's"
		fi
	done
done
check "each emitted type has a view with the .pcf label" test $views_ok -eq 1
check "views are Paraver cfg 3.4" grep -q '^ConfigFile.Version: 3.4$' "$d/cfg/thread/ovni/thread-state.cfg"
"$OVNI" emu "$d" >/dev/null 2>"$TMP/err"
check "a second run succeeds" test $? -eq 0
check "and warns that cfg/ exists" grep -q "warning: .*cfg already exists" "$TMP/err"
cp "$d/cpu.prv" "$TMP/cpu.prv.1"
check_same "a second run writes the same timeline" "$d/cpu.prv" "$TMP/cpu.prv.1"

rm -rf "$d"
cp -R "$TMP/orig" "$d"
mkdir "$TMP/out"
check "-o DIR writes elsewhere" "$OVNI" emu -o "$TMP/out" "$d"
check "-o DIR: the outputs are in DIR" consistent "$TMP/out" thread
check "-o DIR: and the views" test -f "$TMP/out/cfg/cpu/ovni/pid.cfg"
check "-o DIR: the trace directory is left as it was" diff -r "$TMP/orig" "$d"
check "-o to a missing directory creates it and its parents" "$OVNI" emu -o "$TMP/new/out" "$d"
check_same "-o to a new directory: the same timeline" "$TMP/out/thread.prv" "$TMP/new/out/thread.prv"
# A run over the bigger timelines of another writes over them in place:
# nothing of theirs is left after its own bytes.
"$GEN" -n 50000 -t 4 "$TMP/bigger" >/dev/null
"$OVNI" emu -o "$TMP/new/out" "$TMP/bigger" >/dev/null 2>&1
check "-o over the bigger timelines of another trace" "$OVNI" emu -o "$TMP/new/out" "$d"
check_same "-o over bigger timelines: thread.prv as a fresh run's" "$TMP/new/out/thread.prv" "$TMP/out/thread.prv"
check_same "-o over bigger timelines: cpu.prv as a fresh run's" "$TMP/new/out/cpu.prv" "$TMP/out/cpu.prv"
touch "$TMP/afile"
check_fails "-o to a file" "afile: Not a directory" "$OVNI" emu -o "$TMP/afile" "$d"
if [ -w /dev/full ]; then
	mkdir "$TMP/full"
	ln -s /dev/full "$TMP/full/thread.prv"
	check_fails "a full disk" "thread\.prv: .*No space left on device" "$OVNI" emu -o "$TMP/full" "$d"
	check "the unfinished thread timeline is removed" test ! -e "$TMP/full/thread.prv"
	check "the CPU timeline is complete" consistent "$TMP/full" cpu
fi
# A file size limit: the timelines are regular files, written by threads of
# their own; the tools report the failed write instead of dying of SIGXFSZ.
"$GEN" -n 20000 -t 2 "$TMP/fsz" >/dev/null
mkdir "$TMP/fszout"
check_fails "emu under a file size limit" "(thread|cpu)\.prv: write failed: File too large" \
	sh -c "ulimit -f 64 && exec '$OVNI' emu -o '$TMP/fszout' '$TMP/fsz'"
check "the timeline that could not be written is removed" \
	sh -c "grep -q 'removed the unfinished' '$TMP/.err' && ! { test -e '$TMP/fszout/thread.prv' && test -e '$TMP/fszout/cpu.prv'; }"
check_fails "dump to a file under a file size limit" "standard output: write failed: File too large" \
	sh -c "ulimit -f 64 && exec '$OVNI' dump '$TMP/fsz' >'$TMP/fszout/dump.txt'"
check "the same emulation without the limit writes both timelines" "$OVNI" emu -o "$TMP/fszout" "$TMP/fsz"
check "the thread timeline is whole" consistent "$TMP/fszout" thread
check "the CPU timeline is whole" consistent "$TMP/fszout" cpu
check "--help" "$OVNI" emu --help
check "--help lists the models" sh -c "'$OVNI' emu --help | grep -q \"^  ovni 1.1.0 'O'\$\""
check_fails "a missing TRACEDIR" "missing TRACEDIR" "$OVNI" emu
check_fails "an unknown option" "" "$OVNI" emu -Z "$d"

# ---- events ----
one_thread 'header\n'"$OHX0"'\nev OAs 200 01000000\nev OHc 300\nev OHp 400\nev OHw 500\nev OHr 600\nev OHe 700\n' 100
check "affinity, cooling and warming" "$OVNI" emu -l "$d"
check "OAs moves the thread to CPU 1 (row 2 + 1)" grep -q '^2:0:1:1:1:100:6:2$' "$d/thread.prv"
check "OAs leaves CPU 0 empty" grep -q '^2:0:1:1:1:100:3:0$' "$d/cpu.prv"
check "OAs fills CPU 1" grep -q '^2:0:1:1:2:100:2:7$' "$d/cpu.prv"
check "cooling is state 4" grep -q '^2:0:1:1:1:200:4:4$' "$d/thread.prv"
check "a cooling thread no longer runs on its CPU" grep -q '^2:0:1:1:2:200:3:0$' "$d/cpu.prv"
check "warming is state 5, still active" sh -c "grep -q '^2:0:1:1:1:400:4:5\$' '$d/thread.prv' && grep -q '^2:0:1:1:1:400:2:7\$' '$d/thread.prv'"

n=$((n + 1))
d=$TMP/t$n
stream "$d" node0 1 7 ', "kernel": "1.0.0"' '' 'header\n'"$OHX0"'\nev KCO 200\nev KCI 300\nev OF[ 400\nev OF] 500\nev OHe 600\n' 100
check "kernel context switches and flushes" "$OVNI" emu -l "$d"
check "KCO shows 3 on the thread" grep -q '^2:0:1:1:1:100:45:3$' "$d/thread.prv"
check "KCI clears it" grep -q '^2:0:1:1:1:200:45:0$' "$d/thread.prv"
check "and on the CPU" grep -q '^2:0:1:1:1:100:45:3$' "$d/cpu.prv"
check "a flush shows 1 then 0" sh -c "grep -q '^2:0:1:1:1:300:7:1\$' '$d/thread.prv' && grep -q '^2:0:1:1:1:400:7:0\$' '$d/thread.prv'"
check "kernel types come before ovni's in the .pcf" sh -c "grep -n '^0 ' '$d/thread.pcf' | tr '\n' ' ' | grep -q ' 45 .* 7 '"

n=$((n + 1))
d=$TMP/t$n
marks=', "mark": {"3": {"title": "Phase", "chan_type": "stack", "labels": {"1": "Init", "2": "Solve"}}}'
stream "$d" node0 1 7 '' "$marks" 'header\n'"$OHX0"'\nev OM[ 200 010000000000000003000000\nev OM[ 300 020000000000000003000000\nev OHp 400\nev OHr 500\nev OM] 600 020000000000000003000000\nev OM] 700 010000000000000003000000\nev OHe 800\n' 100
check "marks from ovni.mark" "$OVNI" emu -l "$d"
check "a mark is type 100 + its type" grep -q '^2:0:1:1:1:200:103:2$' "$d/thread.prv"
check "marks hide while the thread is paused" grep -q '^2:0:1:1:1:300:103:0$' "$d/thread.prv"
check "and come back when it resumes" grep -q '^2:0:1:1:1:400:103:2$' "$d/thread.prv"
check "mark labels in the .pcf" grep -q '^2    Solve$' "$d/thread.pcf"
check "the mark type is labelled with its title" grep -q '^0 103        Phase$' "$d/thread.pcf"

# ---- bad input: one error line naming stream, offset and event ----
OBS='loom\.node0/proc\.1/thread\.7/stream\.obs'
one_thread 'header\n'"$OHX0"'\nev OHp 200\nev OHp 300\nev OHe 400\n' 100
check_fails "pausing a paused thread" "error: $OBS: offset 48: event OHp at clock 300: thread 7 cannot pause: it is Paused" "$OVNI" emu "$d"
check "the partial thread.prv is complete and consistent" consistent "$d" thread
check "the partial cpu.prv too" consistent "$d" cpu
check "the partial outputs end at the failing event" grep -q '00000000000000000200_ns' "$d/thread.prv"
one_thread 'header\nev OHx 200 07000000ffffffff0000000000000000\n'
check_fails "a CPU index out of the loom" "error: $OBS: offset 8: event OHx at clock 200: .*no CPU with logical index 7" "$OVNI" emu "$d"
one_thread 'header\nev OHx 100\n'
check_fails "OHx without payload" "offset 8: event OHx at clock 100: .*no CPU in its payload" "$OVNI" emu "$d"
one_thread 'header\n'"$OHX0"'\n' 100
check_fails "a thread that never ends" "thread 7 .* did not end: it is Running" "$OVNI" emu "$d"
check "its outputs are complete" consistent "$d" thread
one_thread 'header\n'"$OHX0"'\nev ZZZ 200\nev OHe 300\n' 100
check_fails "an event of no model" "offset 36: event ZZZ at clock 200: no model handles events of model 'Z'" "$OVNI" emu "$d"
one_thread 'header\n'"$OHX0"'\nev KCO 200\nev OHe 300\n' 100
check_fails "a model no thread requires" "event KCO at clock 200: the kernel model is not enabled" "$OVNI" emu "$d"
one_thread 'header\n'"$OHX0"'\nev OQx 200\nev OHe 300\n' 100
check_fails "an unknown ovni category" "event OQx at clock 200: unknown ovni event category 'Q'" "$OVNI" emu "$d"
one_thread 'header\n'"$OHX0"'\nev OB. 50\n' 100
check_fails "a clock going backwards" "$OBS: offset 36: .*backwards" "$OVNI" emu "$d"
check "the outputs before it are complete" consistent "$d" thread
one_thread 'header\n'"$OHX0"'\nev OHe 200\ncut 3\n' 100
check_fails "a stream cut in the middle of an event" "$OBS: offset 36: .*cut" "$OVNI" emu "$d"
one_thread 'header\n'"$OHX0"'\nev OM= 200 010000000000000009000000\nev OHe 300\n' 100
check_fails "a mark type nobody declared" "event OM= at clock 200: mark type 9 is not declared" "$OVNI" emu "$d"
n=$((n + 1))
d=$TMP/t$n
stream "$d" node0 1 7 '' '' 'header\n'"$OHX0"'\nev OHe 300\n' 100
stream "$d" node0 1 8 '' '' 'header\n'"$OHX0"'\nev OHe 300\n' 200
check_fails "two threads running on one physical CPU" "event OHx at clock 200: CPU 0.0 has 2 threads running at the same time" "$OVNI" emu "$d"
n=$((n + 1))
d=$TMP/t$n
stream "$d" node0 1 7 '' ', "mark": {"1": {"title": "A", "chan_type": "single"}}' 'header\n'"$OHX0"'\nev OHe 300\n' 100
stream "$d" node0 1 8 '' ', "mark": {"1": {"title": "B", "chan_type": "single"}}' 'header\n'"$OHX1"'\nev OHe 300\n' 200
check_fails "a mark declared two ways" "thread\.8/stream\.json: line 1, column [0-9]+: .*declared differently" "$OVNI" emu "$d"
check "nothing is written when the trace cannot be loaded" test ! -e "$d/thread.prv"

n=$((n + 1))
d=$TMP/t$n
stream "$d" node0 1 7 '' '' 'header\n'"$OHX0"'\nev OHe 300\n' 100
sed -i 's/, "finished": 1//' "$d/loom.node0/proc.1/thread.7/stream.json"
check_fails "an unfinished stream is refused" "thread\.7/stream\.json.*ovni\.finished" "$OVNI" emu "$d"
check "and nothing is written" test ! -e "$d/cpu.prv"
n=$((n + 1))
d=$TMP/t$n
stream "$d" node0 1 7 '' '' 'header\n'"$OHX0"'\nev OHe 300\n' 100
sed -i 's/"ovni": "1.1.0"/"ovni": "1.2.0"/' "$d/loom.node0/proc.1/thread.7/stream.json"
check_fails "a newer model version is refused" "requires the ovni model version 1\.2\.0" "$OVNI" emu "$d"

# ---- clocks ----
n=$((n + 1))
d=$TMP/t$n
H=7200000000000
stream "$d" alpha 1 7 '' '' 'header\n'"$OHX0"'\nev OHe %s\n' 1000 2000
stream "$d" beta.1 2 8 '' '' 'header\n'"$OHX0"'\nev OHe %s\n' $((H + 1500)) $((H + 2500))
check_fails "streams two hours apart" "detected large clock gate, run .ovni sync." "$OVNI" emu "$d"
printf 'rank hostname offset_median offset_mean offset_std\n0 alpha 0 0 0\n1 beta -%s -%s 0\n' $H $H >"$d/clock-offsets.txt"
check "TRACEDIR/clock-offsets.txt fixes them" "$OVNI" emu "$d"
check "offsets are added to the raw clocks" grep -q '^2:0:1:1:2:500:6:4$' "$d/thread.prv"
mv "$d/clock-offsets.txt" "$TMP/offsets.txt"
check "-c FILE gives the offsets" "$OVNI" emu -c "$TMP/offsets.txt" "$d"
check_fails "-c FILE must exist" "nothing\.txt" "$OVNI" emu -c "$TMP/nothing.txt" "$d"
printf 'header\n0 gamma 5 5 0\n' >"$TMP/bad-offsets.txt"
check_fails "-c FILE naming an unknown host" "gamma" "$OVNI" emu -c "$TMP/bad-offsets.txt" "$d"

# ---- ^C ----
d=$TMP/big
"$GEN" -n 1000000 -t 4 -k pause "$d" >/dev/null 2>&1
"$OVNI" emu "$d" >/dev/null 2>"$TMP/err" &
pid=$!
sleep 0.2
kill -INT $pid 2>/dev/null
wait $pid
rc=$?
check "^C: exit 0" test $rc -eq 0
check "^C: thread.prv is complete and consistent" consistent "$d" thread
check "^C: cpu.prv is complete and consistent" consistent "$d" cpu
if grep -q "stopped early" "$TMP/err"; then
	ok "^C: says the outputs are partial"
	check "^C: no end-of-trace checks (threads still running)" sh -c "! grep -q 'did not end' '$TMP/err'"
else
	ok "^C: the emulation ended before the signal (nothing partial to check)"
fi
done_testing
