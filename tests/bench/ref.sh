# Side by side with the reference ovni 1.14 (../shared/ref): the same
# workloads run by the reference's tools and by ours in the same run, in
# alternation (ref, ours, ours, ref, ...), so that the load of a shared
# machine falls on both alike. Per workload: the best CPU time (user +
# system) and the best wall time of each side, the speed ratios
# (reference / ours: 4.0x means ours takes a quarter of the time) and the
# peak RSS ratio (ours / reference). Absolute figures alone mean little on a
# busy machine; the ratios are the result.
#
# Workloads, on traces of BENCH_EVENTS events that ../shared/gen/gen.c
# writes (4 threads on 4 CPUs, seed 1; gen is built against the reference
# libovni; traces are cached in $BUILD/bench/ so reruns start at once):
#   emu MODEL, emu -b MODEL  for ovni nosv nanos6 openmp mpi tampi nodes
#                            kernel mix (kernel: sorted by ovnisort first);
#                            every .prv is linked to /dev/null (the
#                            emulator, not the disk; BENCH_VERIFY=1 writes
#                            them and compares ours with the reference's)
#   emu rec-omp, rec-mpi     the same, on traces `ovni record` writes of
#                            real programs: OpenMP tasks and loops
#                            (tests/bench/ompwork.c, clang's libomp) and
#                            an MPI ping-pong (tests/instr/mpi.c, MPICH)
#   dump -x mix              to /dev/null
#   sort                     4 x BENCH_EVENTS events in 4 streams, an
#                            unordered region every 1000 events
#                            (tests/tools/gen-unsorted: a sort takes a few
#                            hundredths of a second at 5 M, below what GNU
#                            time resolves); both results must be identical
#   pack mix                 ovni pack against tar | zstd -3 (sizes too)
# Goals (printed per row): speed >= 10x on emu and dump, >= 5x on sort, and
# a peak RSS <= 1/10 of the reference's on emu.
#
#   BENCH_EVENTS  events per trace (default 5000000)
#   BENCH_REPS    runs of each side per workload (default 3)
#   BENCH_ONLY    only the workloads whose name matches this shell pattern
#                 (e.g. 'emu*nosv', 'dump*'; names as printed)
#   OVNI_REF      prefix of the reference (default ../shared/ref)
# Skipped, with a message, when the reference or the generator is missing.
set -u
: "${OVNI:?OVNI must name the ovni binary}" "${BUILD:?BUILD must name the build directory}"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REF=${OVNI_REF:-$ROOT/../shared/ref}
GEN_C=${OVNI_GEN_C:-$ROOT/../shared/gen/gen.c}
CC=${HOSTCC:-gcc}
TIME=/usr/bin/time
EVENTS=${BENCH_EVENTS:-5000000}
REPS=${BENCH_REPS:-3}
ONLY=${BENCH_ONLY:-*}
VERIFY=${BENCH_VERIFY:-0}
MODELS="ovni nosv nanos6 openmp mpi tampi nodes kernel mix"
BD_PRV="nanos6-breakdown.prv nosv-breakdown.prv openmp-breakdown.prv"

for f in bin/ovniemu bin/ovnidump bin/ovnisort lib/libovni.so.1.14.0 share/ovni; do
	if [ ! -e "$REF/$f" ]; then
		echo "ref bench: skipped: the reference ovni 1.14 is not in $REF ($f missing; OVNI_REF=DIR names another)"
		exit 0
	fi
done
if [ ! -f "$GEN_C" ]; then
	echo "ref bench: skipped: no trace generator at $GEN_C"
	exit 0
fi
[ -x "$TIME" ] || { echo "ref bench: needs $TIME (GNU time) for the peak RSS"; exit 1; }

CACHE=$BUILD/bench
mkdir -p "$CACHE/traces" "$CACHE/reflib" || exit 1
# on the file system of the traces: the reference writes into its copy
TMP=$(mktemp -d "$CACHE/run.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT INT TERM

# The generator, linked through links of our own (the reference's
# library links are flattened to plain files).
ln -sf "$REF/lib/libovni.so.1.14.0" "$CACHE/reflib/libovni.so.1"
ln -sf libovni.so.1 "$CACHE/reflib/libovni.so"
if [ ! -x "$CACHE/gen" ] || [ "$GEN_C" -nt "$CACHE/gen" ]; then
	"$CC" -O2 -I"$REF/include" "$GEN_C" -L"$CACHE/reflib" -Wl,-rpath,"$CACHE/reflib" \
		-lovni -lpthread -o "$CACHE/gen" || { echo "ref bench: cannot build $GEN_C"; exit 1; }
fi

# want NAME: whether workload NAME is selected by BENCH_ONLY.
want() {
	case $1 in $ONLY) return 0 ;; esac
	return 1
}

# trace MODEL: sets $trace to the cached gen trace of MODEL (made when
# missing; kernel traces are sorted by the reference's ovnisort).
trace() {
	trace=$CACHE/traces/$1-$EVENTS
	[ -d "$trace" ] && return 0
	rm -rf "$trace.tmp"
	OVNI_TRACEDIR=$trace.tmp "$CACHE/gen" --model "$1" --events "$EVENTS" --threads 4 --cpus 4 \
		--seed 1 --quiet >/dev/null 2>"$TMP/err" || { echo "ref bench: gen $1 failed:"; tail -3 "$TMP/err"; exit 1; }
	if [ "$1" = kernel ]; then
		"$REF/bin/ovnisort" "$trace.tmp" >/dev/null 2>"$TMP/err" ||
			{ echo "ref bench: ovnisort of the kernel trace failed:"; tail -3 "$TMP/err"; exit 1; }
	fi
	mv "$trace.tmp" "$trace"
}

# one SIDE CMD...: runs CMD under GNU time (stdout to /dev/null) and
# appends "cpu wall kb" to $TMP/SIDE.
one() {
	side=$1
	shift
	if ! "$TIME" -f '%e %U %S %M' -o "$TMP/time" "$@" >/dev/null 2>"$TMP/err"; then
		echo "ref bench: $label: $side failed: $*"
		tail -3 "$TMP/err"
		return 1
	fi
	read -r wall user sys kb <"$TMP/time"
	echo "$user $sys $wall $kb" | awk '{ printf "%.2f %.2f %d\n", $1 + $2, $3, $4 }' >>"$TMP/$side"
}

# compare LABEL GOAL_SPEED GOAL_RSS: BENCH_REPS runs of run_ref and
# run_ours (functions the caller defines; each prepares and calls `one`),
# alternating which goes first; then the row of LABEL. A goal of 0: none.
compare() {
	label=$1
	: >"$TMP/ref"
	: >"$TMP/ours"
	i=0
	while [ $i -lt "$REPS" ]; do
		if [ $((i % 2)) = 0 ]; then
			run_ref && run_ours
		else
			run_ours && run_ref
		fi || { failed=1; return 1; }
		i=$((i + 1))
	done
	best() {
		sort -n -k"$2" "$TMP/$1" | head -n 1 | cut -d' ' -f"$2"
	}
	awk -v l="$label" -v rc="$(best ref 1)" -v rw="$(best ref 2)" -v oc="$(best ours 1)" \
		-v ow="$(best ours 2)" -v rk="$(sort -n -k3 "$TMP/ref" | tail -n 1 | cut -d' ' -f3)" \
		-v ok="$(sort -n -k3 "$TMP/ours" | tail -n 1 | cut -d' ' -f3)" -v gs="$2" -v gm="$3" 'BEGIN {
		if (rc < 0.01) rc = 0.01; if (oc < 0.01) oc = 0.01
		if (rw < 0.01) rw = 0.01; if (ow < 0.01) ow = 0.01
		s = rc / oc; m = ok / rk
		g = ""
		if (gs > 0) g = g sprintf(" speed>=%d:%s", gs, s >= gs ? "met" : "NOT met")
		if (gm > 0) g = g sprintf(" rss<=1/%d:%s", gm, m * gm <= 1 ? "met" : "NOT met")
		printf "%-16s %7.2f %7.2f %7.2f %7.2f %6.1fx %6.1fx %8.1f %8.1f %6.3f %s\n",
			l, rc, oc, rw, ow, s, rw / ow, rk / 1024, ok / 1024, m, g }' | tee -a "$TMP/summary"
}

header() {
	printf "%-16s %7s %7s %7s %7s %7s %7s %8s %8s %6s\n" "" "ref" "ours" "ref" "ours" "speed" "speed" \
		"ref" "ours" "RSS"
	printf "%-16s %7s %7s %7s %7s %7s %7s %8s %8s %6s\n" "workload" "cpu s" "cpu s" "wall s" "wall s" \
		"cpu" "wall" "RSS MB" "RSS MB" "o/r"
}

failed=0
echo "ref bench: $EVENTS events per trace, best of $REPS runs per side (ratios: speed = ref/ours, RSS = ours/ref); load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
header

# emu_rows NAME TRACE: emu and emu -b of TRACE, side by side, as rows
# "emu NAME" and "emu -b NAME".
emu_rows() {
	want "emu $1" || want "emu -b $1" || return 0
	src=$2
	rm -rf "$TMP/refwork" "$TMP/out"
	cp -r "$src" "$TMP/refwork" || exit 1
	mkdir -p "$TMP/out"
	if [ "$VERIFY" != 1 ]; then
		for f in thread.prv cpu.prv $BD_PRV; do
			ln -s /dev/null "$TMP/refwork/$f"
			ln -s /dev/null "$TMP/out/$f"
		done
	fi
	cat "$src"/*/*/*/stream.obs >/dev/null
	for flags in "" "-b"; do
		name="emu${flags:+ $flags} $1"
		want "$name" || continue
		run_ref() {
			rm -rf "$TMP/refwork/cfg"
			one ref env OVNI_CONFIG_DIR="$REF/share/ovni" "$REF/bin/ovniemu" $flags "$TMP/refwork"
		}
		run_ours() {
			rm -rf "$TMP/out/cfg"
			one ours "$OVNI" emu $flags -o "$TMP/out" "$src"
		}
		compare "$name" 10 10 || continue
		if [ "$VERIFY" = 1 ]; then
			for f in "$TMP"/refwork/*.prv "$TMP"/refwork/*.pcf "$TMP"/refwork/*.row; do
				cmp -s "$f" "$TMP/out/${f##*/}" || { echo "ref bench: $name: ${f##*/} differs"; failed=1; }
			done
		fi
	done
	rm -rf "$TMP/refwork" "$TMP/out"
}

# recorded NAME CMD...: sets $trace to the cached trace that `ovni record`
# writes of CMD (made when missing; its kernel events' regions sorted by
# ovni sort, which has no look-back limit, where ovnisort's default is too
# short for a long run: both emulators then read the same sorted bytes).
recorded() {
	trace=$CACHE/traces/rec-$1-$EVENTS
	shift
	[ -d "$trace" ] && return 0
	rm -rf "$trace.tmp"
	"$@" >"$TMP/err" 2>&1 || { echo "ref bench: recording $* failed:"; tail -3 "$TMP/err"; return 1; }
	"$OVNI" sort "$trace.tmp" >/dev/null 2>"$TMP/err" ||
		{ echo "ref bench: sorting the recorded trace failed:"; tail -3 "$TMP/err"; return 1; }
	mv "$trace.tmp" "$trace"
}

# ---- emu ----
for model in $MODELS; do
	want "emu $model" || want "emu -b $model" || continue
	trace "$model"
	emu_rows "$model" "$trace"
done

# ---- emu of recorded programs ----
# Real programs under `ovni record`, about BENCH_EVENTS events each:
# OpenMP tasks and loops (clang's libomp, OMPT: openmp, ovni and kernel
# models) and an MPI ping-pong (MPICH, two ranks: mpi model). Skipped,
# with a message, where the compiler or the MPI is missing.
if want "emu*rec-omp"; then
	if command -v clang >/dev/null 2>&1 &&
		clang -fopenmp -O1 -o "$CACHE/ompwork" "$ROOT/tests/bench/ompwork.c" 2>"$TMP/err"; then
		recorded omp "$OVNI" record -o "$CACHE/traces/rec-omp-$EVENTS.tmp" -- \
			"$CACHE/ompwork" $((EVENTS / 4000 + 1)) && emu_rows rec-omp "$trace"
	else
		echo "ref bench: emu rec-omp skipped: no clang -fopenmp"
	fi
fi
if want "emu*rec-mpi"; then
	if command -v mpicc.mpich >/dev/null 2>&1 && command -v mpirun.mpich >/dev/null 2>&1 &&
		mpicc.mpich -O1 -o "$CACHE/mpiwork" "$ROOT/tests/instr/mpi.c" 2>"$TMP/err"; then
		recorded mpi mpirun.mpich -n 2 "$OVNI" record -o "$CACHE/traces/rec-mpi-$EVENTS.tmp" -- \
			"$CACHE/mpiwork" pingpong $((EVENTS / 8 + 1)) && emu_rows rec-mpi "$trace"
	else
		echo "ref bench: emu rec-mpi skipped: no mpicc.mpich and mpirun.mpich"
	fi
fi

# ---- dump -x ----
if want "dump -x mix"; then
	trace mix
	cat "$trace"/*/*/*/stream.obs >/dev/null
	run_ref() { one ref "$REF/bin/ovnidump" -x "$trace"; }
	run_ours() { one ours "$OVNI" dump -x "$trace"; }
	compare "dump -x mix" 10 0
fi

# ---- sort ----
if want "sort*"; then
	us=$CACHE/traces/unsorted-$((4 * EVENTS))
	if [ ! -d "$us" ]; then
		rm -rf "$us.tmp"
		"$BUILD/tools/gen-unsorted" -n "$EVENTS" -t 4 -r 1000 -k 4 -b 3 "$us.tmp" || exit 1
		mv "$us.tmp" "$us"
	fi
	# fresh SIDE: a fresh copy for SIDE, its dirty pages written first (not
	# charged to the sort)
	fresh() {
		rm -rf "$TMP/sort-$1"
		cp -r "$us" "$TMP/sort-$1" && sync
	}
	run_ref() { fresh ref && one ref "$REF/bin/ovnisort" "$TMP/sort-ref"; }
	run_ours() { fresh ours && one ours "$OVNI" sort "$TMP/sort-ours"; }
	if compare "sort $((4 * EVENTS))" 5 0; then
		for f in "$TMP"/sort-ref/*/*/*/stream.obs; do
			rel=${f#"$TMP"/sort-ref/}
			cmp -s "$f" "$TMP/sort-ours/$rel" || { echo "ref bench: sort: $rel differs"; failed=1; }
		done
	fi
	rm -rf "$TMP/sort-ref" "$TMP/sort-ours"
fi

# ---- pack ----
if want "pack mix"; then
	if command -v zstd >/dev/null && command -v tar >/dev/null; then
		trace mix
		run_ref() {
			rm -f "$TMP/out.tar.zst"
			one ref sh -c "tar -C '$trace' -cf - . | zstd -q -3 -T1 -c >'$TMP/out.tar.zst'"
		}
		run_ours() {
			rm -f "$TMP/out.ovnipack"
			one ours "$OVNI" pack -T 1 -o "$TMP/out.ovnipack" "$trace"
		}
		if compare "pack mix" 0 0; then
			in=$(du -b -s "$trace" | cut -f1)
			awk -v i="$in" -v z="$(wc -c <"$TMP/out.tar.zst")" -v p="$(wc -c <"$TMP/out.ovnipack")" 'BEGIN {
				printf "  (pack mix: %d bytes; tar | zstd -3: %d bytes, %.1fx; ovni pack: %d bytes, %.1fx; %.1fx smaller)\n",
					i, z, i / z, p, i / p, z / p }'
		fi
		rm -f "$TMP/out.tar.zst" "$TMP/out.ovnipack"
	else
		echo "ref bench: pack skipped: no zstd or tar command"
	fi
fi

if [ -s "$TMP/summary" ]; then
	echo "ref bench: summary (best of $REPS; speed = ref/ours, RSS = ours/ref; pack: ref = tar | zstd -3)"
	header
	cat "$TMP/summary"
fi
exit $failed
