# ovni record instruments MPI: tests/instr/mpi.c (ring, allreduce,
# non-blocking with waitall) built with Debian's MPICH and Open MPI, run
# both as `mpirun -n 4 ovni record -- app` and `ovni record -- mpirun -n 4
# app`: one process per rank with its rank, the mpi model's events of each
# call, and ovni emu -l accepts the trace with the MPI function views.
. "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
NP=4

# count MCV: events of that kind in $TMP/dump.
count() {
	awk -v m="$1" '$2 == m' "$TMP/dump" | wc -l | tr -d ' '
}

# ranks TRACE: "rank/nranks" of each process, sorted, one line.
ranks() {
	for p in "$1"/loom.*/proc.*; do
		case $p in *.norank/*) continue ;; esac
		cat "$p"/thread.*/stream.json | tr -d ' \n' |
			sed -n 's/.*"rank":\([0-9]*\),"nranks":\([0-9]*\).*/\1\/\2\n/p' | head -n 1
	done | sort | tr '\n' ' '
}

# check_trace WHAT TRACE PATTERN
check_trace() {
	w=$1; tr=$2
	same "$w: one process per rank, with its rank" "$(ranks "$tr")" "0/4 1/4 2/4 3/4 "
	"$OVNI" dump "$tr" >"$TMP/dump" 2>&1
	same "$w: MPI_Init_thread entered and left by each rank" "$(count MUt)/$(count MUT)" "$NP/$NP"
	same "$w: MPI_Finalize entered and left by each rank" "$(count MUf)/$(count MUF)" "$NP/$NP"
	case $3 in
	ring) same "$w: Send, Recv, Barrier per rank" "$(count MS[) $(count MR]) $(count MCB)" "$NP $NP $NP" ;;
	allreduce) same "$w: Allreduce per rank" "$(count MAr) $(count MAR)" "$NP $NP" ;;
	nonblock) same "$w: Irecv, Isend, Waitall, Ibarrier, Wait" \
		"$(count Mr[) $(count Ms]) $(count MWa) $(count Mcb) $(count MW])" "8 8 $NP $NP $NP" ;;
	esac
	rm -rf "$TMP/emu" && mkdir -p "$TMP/emu"
	check "$w: ovni emu -l accepts the trace" "$OVNI" emu -l -o "$TMP/emu" "$tr"
	n=$(grep -c ':25:[1-9][0-9]*$' "$TMP/emu/thread.prv" 2>/dev/null)
	[ "${n:-0}" -ge "$NP" ] && ok "$w: MPI functions on the thread timeline" ||
		not_ok "$w: MPI functions on the thread timeline"
	# A rank shows on a CPU's row only while it runs there alone: with
	# $NP busy-polling ranks on fewer cores that is a matter of scheduling
	# (the reference draws the same; ref_same checks every line on ring).
	n=$(grep -c ':25:[1-9][0-9]*$' "$TMP/emu/cpu.prv" 2>/dev/null)
	if [ "${n:-0}" -ge 1 ]; then ok "$w: MPI functions on the CPU timeline"; else
		not_ok "$w: MPI functions on the CPU timeline (none)"
		# what the CPUs saw: threads running on each (type 1) and the MPI lines
		grep -E ':(1|25):[0-9-]+$' "$TMP/emu/cpu.prv" | head -30 | sed 's/^/#   /'
		"$OVNI" dump "$tr" 2>/dev/null | grep -E ' (OHx|OHe|OAs|OHC|KCO|KCI|MS\[|MR\]) ' | head -40 | sed 's/^/#   /'
	fi
}

# flavour NAME PACKAGES...: mpicc.NAME and mpirun.NAME.
flavour() {
	name=$1; shift
	need_pkgs "$name" "mpicc.$name" "$@" || return 0
	command -v "mpirun.$name" >/dev/null 2>&1 || { echo "ok - # SKIP $name: no mpirun.$name"; return 0; }
	app=$TMP/app-$name
	"mpicc.$name" -O1 -o "$app" "$TESTDIR/instr/mpi.c" || { not_ok "$name: compile mpi.c"; return 0; }
	for pat in ring allreduce nonblock; do
		rm -rf "$TMP/in" "$TMP/out"
		timeout 120 "mpirun.$name" -n $NP "$OVNI" record -o "$TMP/in" -- "$app" $pat >"$TMP/log" 2>&1
		same "$name $pat, record inside mpirun: exit status" "$?" 0
		same "$name $pat, record inside mpirun: every rank ok" "$(grep -c "/$NP $pat ok" "$TMP/log")" $NP
		check_trace "$name $pat, record inside mpirun" "$TMP/in" $pat
		same "$name $pat, record inside mpirun: ovni top --procs names each rank's program" \
			"$("$OVNI" top --procs "$TMP/in" 2>/dev/null | awk -v a="$app" '$3 ~ "/4$" && $6 == a && $7 == a' | wc -l | tr -d ' ')" $NP
		[ $pat = ring ] && ref_same "$name $pat, record inside mpirun" "$TMP/in"
		timeout 120 "$OVNI" record -o "$TMP/out" -- "mpirun.$name" -n $NP "$app" $pat >"$TMP/log" 2>&1
		same "$name $pat, mpirun inside record: exit status" "$?" 0
		check_trace "$name $pat, mpirun inside record" "$TMP/out" $pat
		[ $pat = ring ] && ref_same "$name $pat, mpirun inside record" "$TMP/out"
	done
	# -o under a launcher: the ranks of one job share the directory; the
	# trace of another run there is refused, and --force has rank 0
	# replace it while the other ranks wait for it.
	# (a launcher may kill the other ranks as soon as one fails, before
	# they print their refusal: no rank may run, at least one says why,
	# unless the launcher itself died of a signal and lost what they said:
	# MPICH's mpiexec under load, SIGPIPE as the ranks end at once)
	old=$(ls -d "$TMP"/in/loom.* | sort)
	timeout 120 "mpirun.$name" -n $NP "$OVNI" record -o "$TMP/in" -- "$app" ring >"$TMP/log" 2>&1
	rc=$?
	said=$(grep -c 'holds a trace already; --force replaces it' "$TMP/log")
	if [ $rc -ne 0 ] && { [ "$said" -ge 1 ] || [ $rc -gt 128 ]; } &&
		[ "$(grep -c ' ring ok' "$TMP/log")" = 0 ] && [ "$(ls -d "$TMP"/in/loom.* | sort)" = "$old" ]; then
		ok "$name, record inside mpirun into an existing trace: refused, nothing run, the trace untouched"
	else
		not_ok "$name, record inside mpirun into an existing trace: refused, nothing run, the trace untouched (exit $rc)"
		grep -v ' ok$' "$TMP/log" | tail -n 12 | sed 's/^/#   /'
		echo "#   looms before: $(echo $old)"
		echo "#   looms after: $(echo $(ls -d "$TMP"/in/loom.* | sort))"
	fi
	ls -a "$TMP/in" >"$TMP/before-force"
	timeout 120 "mpirun.$name" -n $NP "$OVNI" record --force -o "$TMP/in" -- "$app" ring >"$TMP/log" 2>&1
	rc=$?
	same "$name, record inside mpirun --force: exit status" "$rc" 0
	if [ $rc -ne 0 ]; then # what the ranks said, and what -o held before
		grep -v ' ok$' "$TMP/log" | tail -n 12 | sed 's/^/#   /'
		echo "#   before: $(tr '\n' ' ' <"$TMP/before-force")"
	fi
	same "$name, record inside mpirun --force: every rank ok" "$(grep -c "/$NP ring ok" "$TMP/log")" $NP
	same "$name, record inside mpirun --force: no loom of the old run is left" "$(ls -d "$TMP"/in/loom.* | sort | grep -cxF "$old")" 0
	check_trace "$name, record inside mpirun --force" "$TMP/in" ring
	# MPI in a library loaded RTLD_LOCAL (as Python loads mpi4py).
	if "mpicc.$name" -shared -fPIC -o "$TMP/ext-$name.so" "$TESTDIR/instr/mpi_ext.c" &&
		${HOSTCC:-gcc} -o "$TMP/dlhost" "$TESTDIR/instr/dlhost.c" -ldl; then
		rm -rf "$TMP/dl"
		timeout 120 "$OVNI" record -o "$TMP/dl" -- "mpirun.$name" -n $NP "$TMP/dlhost" "$TMP/ext-$name.so" >"$TMP/log" 2>&1
		same "$name, MPI loaded RTLD_LOCAL: every rank ok" "$(grep -c "/$NP dlopen ok" "$TMP/log")" $NP
		"$OVNI" dump "$TMP/dl" >"$TMP/dump" 2>&1
		same "$name, MPI loaded RTLD_LOCAL: Init and Allreduce per rank" "$(count MUi) $(count MAR)" "$NP $NP"
	else
		not_ok "$name: compile mpi_ext.c and dlhost.c"
	fi
	# A shell around mpirun is recorded too, in a loom of its own.
	rm -rf "$TMP/sh"
	timeout 120 "$OVNI" record -o "$TMP/sh" -- sh -c "mpirun.$name -n $NP '$app' ring; true" >"$TMP/log" 2>&1
	same "$name, shell around mpirun: exit status" "$?" 0
	grep -q 'without an MPI rank moved to loom' "$TMP/log" && ok "$name, shell around mpirun: the shell's loom is named" ||
		not_ok "$name, shell around mpirun: the shell's loom is named"
	check_trace "$name, shell around mpirun" "$TMP/sh" ring
	# The kernel's copy of a rank's environment (/proc/PID/environ, what
	# `ps e` shows), where the launcher adds its variables after the
	# recorder's: the same names in the same order as without the
	# recorder (values such as a PMIx server's address change per run).
	# (one write per rank: the lines of two ranks must not interleave)
	envnames='n=$(tr "\0" "\n" </proc/$$/environ | cut -d= -f1 | tr "\n" " "); echo "$n"'
	plain=$(timeout 60 "mpirun.$name" -n 2 sh -c "$envnames" 2>&1 | sort)
	rm -rf "$TMP/env"
	rec=$(timeout 60 "$OVNI" record -o "$TMP/env" -- "mpirun.$name" -n 2 sh -c "$envnames" 2>/dev/null | sort)
	same "$name, /proc/PID/environ of a rank: the variables it has without the recorder" "$rec" "$plain"
	# Without a launcher the rank comes from MPI_COMM_WORLD (a singleton).
	rm -rf "$TMP/single"
	env -u PMI_RANK -u PMI_SIZE -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE -u PMIX_RANK \
		timeout 60 "$OVNI" record -o "$TMP/single" -- "$app" allreduce >"$TMP/log" 2>&1
	same "$name singleton: exit status" "$?" 0
	same "$name singleton: rank from MPI_COMM_WORLD" "$(ranks "$TMP/single")" "0/1 "
	rm -rf "$TMP/emu" && mkdir -p "$TMP/emu"
	check "$name singleton: ovni emu -l accepts the trace" "$OVNI" emu -l -o "$TMP/emu" "$TMP/single"
}

flavour mpich mpich libmpich-dev
flavour openmpi openmpi-bin libopenmpi-dev

done_testing
