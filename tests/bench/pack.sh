# Benchmark of ovni pack: two generated traces of a few hundred MB (a tight
# emit loop and a task-heavy nanos6 mix, both with --real-clock steps, as
# the golden tight-loop trace has them), against `tar | zstd -3` and
# `tar | zstd -19`. Goal: >= 2x smaller than zstd -19, and at least as fast
# per CPU second as zstd -3. Also the uniformly random steps of gen-trace's
# default, the worst case for clock compression; then small traces that
# `ovni record` writes of real programs (threads, blocking calls, MPI and
# OpenMP when their compilers are here), where the fixed cost per file
# counts: pack, pack --tar and tar | zstd -19, sizes and times side by side
# (each run 10 times, alternated). Not a test: no pass/fail.
#   PACK_BENCH_EVENTS  events per thread of the emit trace (default 3000000;
#                      the nanos6 trace has half as many), 4 threads each
set -u
: "${OVNI:?OVNI must name the ovni binary}" "${BUILD:?BUILD must name the build directory}"
N=${PACK_BENCH_EVENTS:-3000000}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ovni-bench-pack.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

if ! command -v zstd >/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		apt-get install -y zstd >/dev/null 2>&1 || echo "pack bench: could not install the zstd CLI"
	fi
fi
have_zstd=0
command -v zstd >/dev/null && have_zstd=1
[ $have_zstd = 1 ] || echo "pack bench: no zstd CLI (apt-get install zstd): comparisons skipped"

# run NAME CMD...: runs CMD under GNU time; sets wall and cpu (s).
run() {
	name=$1; shift
	if ! /usr/bin/time -f '%e %U %S' -o "$TMP/time" "$@" >/dev/null 2>"$TMP/err"; then
		echo "pack bench: $name failed:"; cat "$TMP/err"; exit 1
	fi
	read -r wall user sys <"$TMP/time"
	cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { c = u + s; if (c < 0.01) c = 0.01; print c }')
}

# line LABEL BYTES_IN BYTES_OUT: one result line.
line() {
	awk -v l="$1" -v i="$2" -v o="$3" -v w="$wall" -v c="$cpu" 'BEGIN {
		if (w < 0.01) w = 0.01
		printf "pack bench:   %-22s %11d bytes  %7.1fx  %6.2f s %7.1f MB/s | cpu %6.2f s %7.1f MB/s per core\n",
			l, o, i / o, w, i / w / 1e6, c, i / c / 1e6 }'
}

bench() {
	label=$1; shift
	d=$TMP/trace
	rm -rf "$d" "$TMP"/out*
	"$BUILD/tools/gen-trace" "$@" "$d" >/dev/null || exit 1
	in=$(du -b -s "$d" | cut -f1)
	echo "pack bench: $label: $in bytes ($*)"
	run "pack -T 1" "$OVNI" pack -T 1 -o "$TMP/out.ovnipack" "$d"
	p=$(wc -c <"$TMP/out.ovnipack"); line "ovni pack" "$in" "$p"
	run "pack -T 2" "$OVNI" pack -T 2 -o "$TMP/out2.ovnipack" "$d"; line "ovni pack -T 2" "$in" "$p"
	run "pack -l 19" "$OVNI" pack -l 19 -o "$TMP/out19.ovnipack" "$d"; line "ovni pack -l 19" "$in" "$(wc -c <"$TMP/out19.ovnipack")"
	run "unpack" "$OVNI" unpack -C "$TMP/outdir" "$TMP/out.ovnipack"; line "ovni unpack" "$in" "$p"
	diff -r "$d" "$TMP/outdir" >/dev/null || { echo "pack bench: the round trip differs"; exit 1; }
	run "top (directory)" "$OVNI" top "$d"; line "ovni top TRACEDIR" "$in" "$in"
	run "top (pack)" "$OVNI" top "$TMP/out.ovnipack"; line "ovni top PACK" "$in" "$p"
	[ $have_zstd = 1 ] || return 0
	run "tar | zstd -3" sh -c "tar -C '$d' -cf - . | zstd -q -3 -T1 -c >'$TMP/out.tar.zst'"
	z3=$(wc -c <"$TMP/out.tar.zst"); line "tar | zstd -3" "$in" "$z3"
	run "tar | zstd -19" sh -c "tar -C '$d' -cf - . | zstd -q -19 -T1 -c >'$TMP/out19.tar.zst'"
	z19=$(wc -c <"$TMP/out19.tar.zst"); line "tar | zstd -19" "$in" "$z19"
	awk -v p="$p" -v z="$z19" 'BEGIN { printf "pack bench:   ovni pack is %.1fx smaller than tar | zstd -19\n", z / p }'
}

# ten CMD...: the wall time of one run of CMD, from 10 in a row (us).
ten() {
	s=$(date +%s%N)
	for i in 1 2 3 4 5 6 7 8 9 10; do "$@" >/dev/null 2>&1 || return 1; done
	echo $(( ($(date +%s%N) - s) / 10000 ))
}

# small NAME CMD...: records CMD, then one line of sizes and times.
small() {
	name=$1; shift
	d=$TMP/rec
	rm -rf "$d"
	"$OVNI" record -o "$d" -- "$@" >/dev/null 2>&1 || { echo "pack bench: $name: ovni record failed"; return 0; }
	in=$(du -b -s "$d" | cut -f1); s=$(find "$d" -name stream.obs | wc -l)
	tp=$(ten "$OVNI" pack -o "$TMP/s.ovnipack" "$d")
	"$OVNI" pack --tar -o "$TMP/s.tar.zst" "$d"
	p=$(wc -c <"$TMP/s.ovnipack"); t=$(wc -c <"$TMP/s.tar.zst"); z=- tz=-
	if [ $have_zstd = 1 ]; then
		tz=$(ten sh -c "tar -C '$d' -cf - . | zstd -q -19 -T1 -c >'$TMP/s.z19'")
		tp=$(( (tp + $(ten "$OVNI" pack -o "$TMP/s.ovnipack" "$d")) / 2 ))
		z=$(wc -c <"$TMP/s.z19")
	fi
	awk -v n="$name ($s streams)" -v i="$in" -v p="$p" -v t="$t" -v z="$z" -v tp="$tp" -v tz="$tz" 'BEGIN {
		printf "pack bench:   %-26s %8d bytes: pack %6d, --tar %6d, tar | zstd -19 %6s", n, i, p, t, z
		if (z != "-") printf " (%.2fx pack); %5.1f ms, zstd -19 %5.1f ms (%.0fx)", z / p, tp / 1000, tz / 1000, tz / tp
		printf "\n" }'
}

recorded() {
	cc=${HOSTCC:-gcc}
	command -v "$cc" >/dev/null || { echo "pack bench: no $cc: recorded programs skipped"; return 0; }
	echo "pack bench: traces ovni record writes of real programs"
	$cc -O1 -pthread -o "$TMP/threads" tests/record/threads.c && small "threads 8" "$TMP/threads" 8
	$cc -O1 -pthread -o "$TMP/block" tests/instr/block.c && small "blocking calls" "$TMP/block"
	if command -v clang >/dev/null && clang -fopenmp -O1 -o "$TMP/omp" tests/instr/omp.c 2>/dev/null; then
		small "OpenMP (libomp)" "$TMP/omp"
	fi
	for mpi in mpich openmpi; do
		command -v "mpicc.$mpi" >/dev/null && command -v "mpirun.$mpi" >/dev/null || continue
		"mpicc.$mpi" -O1 -o "$TMP/mpi-$mpi" tests/instr/mpi.c 2>/dev/null || continue
		extra=; [ $mpi = openmpi ] && extra="--oversubscribe --allow-run-as-root"
		small "MPI ring, $mpi -n 4" "mpirun.$mpi" $extra -n 4 "$TMP/mpi-$mpi" ring
	done
}

echo "pack bench: load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
cd "$(dirname "$0")/../.."
bench "tight emit loop" -n "$N" -t 4 -k emit --real-clock --step 33
bench "task-heavy nanos6 mix" -n $((N / 2)) -t 4 -k nanos6 --real-clock --step 200
bench "worst case: uniformly random steps" -n $((N / 4)) -t 4 -k emit
recorded
