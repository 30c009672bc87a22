# Benchmark of the shim's automatic instrumentation under ovni record:
#  - uncontended pthread_mutex_lock/unlock pairs, single- and multi-threaded
#    process, with and without ovni record (goal: a few ns of difference in
#    the multi-threaded case; a recorded process is never single-threaded,
#    the shim has a thread of its own, so glibc's lock is dearer there too);
#  - with each MPI flavour installed: an MPI ping-pong of INSTR_BENCH_MSGS
#    one-int round trips between 2 ranks (default 1000000), plain and as
#    `mpirun -n 2 ovni record -- app` (4 MPI calls on a round trip's path),
#    and the wrapper's own cost per call: MPI_Test of a null request through
#    the wrapper against PMPI_Test, in one recorded process.
# Each figure is the best of 3 runs, plain and recorded runs interleaved
# (the machine may be shared: a ping-pong of busy-polling ranks is noisy).
set -u
: "${OVNI:?OVNI must name the ovni binary}" "${BUILD:?BUILD must name the build directory}"
N=${INSTR_BENCH_MSGS:-1000000}
CC=${HOSTCC:-gcc}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BASE=/dev/shm
[ -d "$BASE" ] && [ -w "$BASE" ] || BASE=${TMPDIR:-/tmp}
TMP=$(mktemp -d "$BASE/ovni-bench-instr.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# run CMD...: the figure CMD prints (ns per pair, per round trip, per call).
run() {
	rm -rf "$TMP/t"
	"$@" 2>/dev/null | awk '/^pingpong:/ {print $(NF-2)} /^nulltest:/ {print $2, $5} /^[0-9.]+$/ {print $1}'
}

# pair A B: best of 3 of each, interleaved; prints "bestA bestB".
pair() {
	: >"$TMP/a"
	: >"$TMP/b"
	for i in 1 2 3; do
		eval "run $1" >>"$TMP/a"
		eval "run $2" >>"$TMP/b"
	done
	echo "$(sort -n "$TMP/a" | head -n 1) $(sort -n "$TMP/b" | head -n 1)"
}

echo "instr bench: load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
$CC -O2 -pthread -o "$TMP/lockloop" "$ROOT/tests/instr/lockloop.c" || exit 1
for mode in st mt; do
	set -- $(pair "'$TMP/lockloop' 50000000 $mode" "'$OVNI' record -o '$TMP/t' -- '$TMP/lockloop' 50000000 $mode")
	echo "instr bench: uncontended lock+unlock ($mode): $1 ns plain, $2 ns recorded" \
		"($(echo "$2 $1" | awk '{printf "%+.2f", $1 - $2}') ns)"
done

for fl in mpich openmpi; do
	if ! command -v "mpicc.$fl" >/dev/null 2>&1 || ! command -v "mpirun.$fl" >/dev/null 2>&1; then
		echo "instr bench: $fl skipped: mpicc.$fl or mpirun.$fl missing (make check installs it)"
		continue
	fi
	"mpicc.$fl" -O2 -o "$TMP/pp-$fl" "$ROOT/tests/instr/mpi.c" 2>/dev/null || exit 1
	set -- $(pair "mpirun.$fl -n 2 '$TMP/pp-$fl' pingpong $N" \
		"mpirun.$fl -n 2 '$OVNI' record -o '$TMP/t' -- '$TMP/pp-$fl' pingpong $N")
	[ $# -eq 2 ] || { echo "instr bench: $fl ping-pong failed"; exit 1; }
	echo "instr bench: $fl ping-pong of $N messages: $1 ns per round trip plain, $2 ns recorded" \
		"($(echo "$2 $1" | awk '{printf "%+.0f", ($1 - $2) / 4}') ns per call on the path)"
	: >"$TMP/a"
	for i in 1 2 3; do
		run "$OVNI" record -o "$TMP/t" -- "$TMP/pp-$fl" nulltest 10000000 | awk '{print $1 - $2}' >>"$TMP/a"
	done
	[ -s "$TMP/a" ] || { echo "instr bench: $fl nulltest failed"; exit 1; }
	echo "instr bench: $fl wrapper cost: $(sort -n "$TMP/a" | head -n 1) ns per MPI call recorded (MPI_Test - PMPI_Test)"
done
