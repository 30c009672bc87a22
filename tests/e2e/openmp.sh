# ovni record instruments OpenMP through OMPT: tests/instr/omp.c built with
# clang -fopenmp (LLVM libomp) gives the openmp model's events for its
# parallel region, loops, single, critical, barrier, tasks, taskwait and
# taskgroup, accepted by ovni emu -l. Built with gcc (GNU libgomp, no
# OMPT), the recording says so once and still works.
. "$(dirname "$0")/lib.sh"

atleast() {
	if [ "$2" -ge "$3" ]; then ok "$1"; else not_ok "$1 (got $2, want at least $3)"; fi
}
count() {
	awk -v m="$1" '$2 == m' "$TMP/dump" | wc -l | tr -d ' '
}

if need_pkgs "OpenMP with LLVM libomp" clang clang libomp-dev; then
	if ! clang -fopenmp -O1 -o "$TMP/omp" "$TESTDIR/instr/omp.c" 2>"$TMP/cc.err"; then
		apt_install "OpenMP with LLVM libomp" libomp-dev
		clang -fopenmp -O1 -o "$TMP/omp" "$TESTDIR/instr/omp.c" 2>"$TMP/cc.err"
	fi
	if [ -x "$TMP/omp" ]; then
		"$OVNI" record -o "$TMP/tr" -- "$TMP/omp" >"$TMP/out" 2>"$TMP/err"
		same "libomp: exit status" "$?" 0
		grep -q '^omp: ok' "$TMP/out" && ok "libomp: the program ran" || not_ok "libomp: the program ran"
		"$OVNI" dump "$TMP/tr" >"$TMP/dump" 2>&1
		same "libomp: one parallel region (fork call)" "$(count PCf)/$(count PCF)" 1/1
		same "libomp: one user microtask per thread" "$(count PMu)/$(count PMU)" 4/4
		same "libomp: worker loop of the 3 workers" "$(count PH[)/$(count PH])" 3/3
		same "libomp: 100 critical sections" "$(count PIa) $(count PI[) $(count PI])" "100 100 100"
		atleast "libomp: barriers" "$(count PBb)" 4
		atleast "libomp: loops" "$(count PWs)" 8
		atleast "libomp: single" "$(count PWi)" 1
		same "libomp: the task type declared once" "$(count POc)" 1
		atleast "libomp: tasks created (fib(10) and the taskgroups')" "$(count PPc)" 184
		same "libomp: every task run and ended" "$(count PPx) $(count PPe)" "$(count PPc) $(count PPc)"
		atleast "libomp: taskwaits" "$(count PTt)" 88
		atleast "libomp: taskgroups" "$(count PTg)" 1
		same "libomp: undeferred tasks run as if0, one per thread" "$(count PTi)/$(count PTI)" 4/4
		mkdir -p "$TMP/emu"
		check "libomp: ovni emu -l accepts the trace" "$OVNI" emu -l -o "$TMP/emu" "$TMP/tr"
		grep -q ':50:19$' "$TMP/emu/thread.prv" && ok "libomp: running tasks on the subsystem view" ||
			not_ok "libomp: running tasks on the subsystem view"
		grep -q ':52:[1-9]' "$TMP/emu/thread.prv" && ok "libomp: task ids on the thread view" ||
			not_ok "libomp: task ids on the thread view"
		"$OVNI" record --events ovni -o "$TMP/tn" -- "$TMP/omp" >/dev/null 2>&1
		"$OVNI" dump "$TMP/tn" >"$TMP/dump" 2>&1
		same "libomp, --events ovni: no openmp event" "$(awk '$2 ~ /^P/' "$TMP/dump" | wc -l | tr -d ' ')" 0
		grep -q openmp "$TMP"/tn/loom.*/proc.*/thread.*/stream.json && not_ok "libomp, --events ovni: openmp not required" ||
			ok "libomp, --events ovni: openmp not required"
	else
		echo "ok - # SKIP OpenMP with LLVM libomp: clang -fopenmp cannot build ($(head -n 1 "$TMP/cc.err"))"
	fi
fi

CC=${HOSTCC:-gcc}
if $CC -fopenmp -O1 -o "$TMP/gomp" "$TESTDIR/instr/omp.c" 2>/dev/null; then
	"$OVNI" record -o "$TMP/gt" -- "$TMP/gomp" >"$TMP/out" 2>"$TMP/err"
	same "libgomp: exit status" "$?" 0
	same "libgomp: one notice that OpenMP is not recorded" "$(grep -c 'uses GNU libgomp, which has no OMPT' "$TMP/err")" 1
	mkdir -p "$TMP/gemu"
	check "libgomp: ovni emu accepts the trace" "$OVNI" emu -o "$TMP/gemu" "$TMP/gt"
else
	echo "ok - # SKIP libgomp: $CC -fopenmp cannot build"
fi
done_testing
