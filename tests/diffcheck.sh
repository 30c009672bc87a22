#!/bin/bash
# Differential test against the reference ovni 1.14.0 in ../shared/ref:
# random traces from ../shared/gen/gen.c (written through the reference
# libovni), each run through the reference tools and ours on separate
# copies, outputs compared byte for byte and exit status by class.
#
# Per trace: `emu -l -b` (every .prv .pcf .row), `dump -x`, `top`, and for
# traces with unordered regions (kernel events) `sort` first (the rewritten
# streams), the emu step then running on the sorted copy.
#
# Then traces that `ovni record` writes from real programs (pthreads,
# fork/exec, context switches, OpenMP through OMPT with clang's libomp,
# MPI with MPICH and Open MPI under both launch orders, where installed):
# the reference's ovnisort, then its ovniemu -l, must accept them and
# write the same bytes as `ovni emu -l` (which sorts in memory).
#
# Usage: tests/diffcheck.sh [-n COUNT] [-s FIRST-SEED] [-j JOBS] [-m MODEL]
#                           [-k] [-R] [-- GEN-ARGS]
#   -n COUNT   traces to try (default 200); seeds FIRST-SEED.. in order
#   -R         skip the recorded programs
#   -m MODEL   only this gen model (default: every model and mix in turn)
#   -k         keep the work directory of each failure (printed)
#   -- ARGS    one trace with exactly these gen arguments (replay a failure)
# Each failure prints the gen arguments that replay it; ends with
# "N passed, N failed". Needs ../shared (gen.c and ref/), gcc and ./ovni.
set -u
REPO=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${SHARED:-$REPO/../shared}
REF=$SHARED/ref
OVNI=${OVNI:-$REPO/ovni}
count=200 seed0=1 jobs=$(nproc 2>/dev/null || echo 2) only= keep= replay= records=1
while [ $# -gt 0 ]; do
	case $1 in
	-n) count=$2; shift 2 ;;
	-s) seed0=$2; shift 2 ;;
	-j) jobs=$2; shift 2 ;;
	-m) only=$2; shift 2 ;;
	-k) keep=1; shift ;;
	-R) records=; shift ;;
	--) shift; replay="$*"; break ;;
	*) echo "diffcheck: unknown option $1" >&2; exit 2 ;;
	esac
done
for f in "$SHARED/gen/gen.c" "$REF/bin/ovniemu" "$OVNI"; do
	[ -e "$f" ] || { echo "diffcheck: $f is missing" >&2; exit 2; }
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ovni-diffcheck.XXXXXX")
[ -n "$keep" ] || trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
export OVNI_CONFIG_DIR=$REF/share/ovni

# The reference's library directory may hold its symlinks as plain files
# naming their target: link against the real file through our own links.
mkdir -p "$TMP/lib"
real=$(ls "$REF"/lib/libovni.so.*.*.* | head -1)
ln -s "$real" "$TMP/lib/libovni.so.1"
ln -s libovni.so.1 "$TMP/lib/libovni.so"
GEN=$TMP/gen
gcc -O2 -I"$REF/include" "$SHARED/gen/gen.c" -L"$TMP/lib" \
	-Wl,-rpath,"$TMP/lib" -lovni -lpthread -o "$GEN" ||
	{ echo "diffcheck: cannot build gen" >&2; exit 2; }

MODELS="ovni nosv nanos6 openmp mpi tampi nodes kernel mix"
set -- $MODELS
nmodels=$#

# shape SEED: gen arguments for trace number SEED, a pure function of it.
shape() {
	s=$1
	r=$(( (s * 2654435761 + 12345) % 4294967296 ))
	next() { r=$(( (r * 1103515245 + 12345) % 2147483648 )); echo $(( r / 65536 % $1 )); }
	if [ -n "$only" ]; then m=$only; else
		i=$(( s % nmodels + 1 )); m=$(echo $MODELS | cut -d' ' -f$i); fi
	t=$(( $(next 8) + 1 )); c=$(( $(next 4) + 1 )); p=$(( $(next 3) + 1 ))
	l=$(( $(next p) + 1 ))
	# events log-uniform over 200..20000, one trace in 50 with 200,000
	e=$(( 200 * (1 << $(next 7)) )); [ $e -gt 20000 ] && e=20000
	e=$(( e + $(next 200) * e / 200 ))
	[ $(( s % 50 )) -eq 49 ] && e=200000
	echo "--model $m --seed $s --threads $t --cpus $c --procs $p --looms $l --events $e"
}

rc_class() { if [ "$1" -eq 0 ]; then echo 0; else echo 1; fi; }

# same WHAT REFDIR OURDIR FILES...: byte comparison; prints what differs.
same() {
	local what=$1 a=$2 b=$3 f bad=0; shift 3
	for f in "$@"; do
		if [ ! -f "$b/$f" ]; then echo "#   $what $f: missing in ours"; bad=1
		elif ! cmp -s "$a/$f" "$b/$f"; then echo "#   $what $f: differs"; bad=1; fi
	done
	return $bad
}

# one_case DIR GEN-ARGS: 0 when ours matches the reference on that trace.
one_case() {
	d=$1; shift
	mkdir -p "$d" && cd "$d" || return 1
	OVNI_TRACEDIR=trace "$GEN" --quiet "$@" >gen.out 2>&1 ||
		{ echo "#   gen failed: $(head -1 gen.out)"; return 1; }
	bad=0
	"$REF/bin/ovnidump" -x trace >ref.dump 2>/dev/null; r1=$?
	"$OVNI" dump -x trace >our.dump 2>our.err; r2=$?
	[ "$(rc_class $r1)" = "$(rc_class $r2)" ] || { echo "#   dump -x: exit $r2, reference $r1"; bad=1; }
	[ $r1 -ne 0 ] || cmp -s ref.dump our.dump || { echo "#   dump -x differs"; bad=1; }
	"$REF/bin/ovnitop" trace >ref.top 2>/dev/null; r1=$?
	"$OVNI" top trace >our.top 2>our.err; r2=$?
	[ "$(rc_class $r1)" = "$(rc_class $r2)" ] || { echo "#   top: exit $r2, reference $r1"; bad=1; }
	[ $r1 -ne 0 ] || cmp -s ref.top our.top || { echo "#   top differs"; bad=1; }
	cp -R trace ref && cp -R trace our || return 1
	streams=$(cd trace && find . -name stream.obs | sort)
	if grep -q 'OU\[' ref.dump; then
		"$REF/bin/ovnisort" ref >ref.sort 2>&1; r1=$?
		"$OVNI" sort our >our.sort 2>&1; r2=$?
		[ "$(rc_class $r1)" = "$(rc_class $r2)" ] || { echo "#   sort: exit $r2, reference $r1"; bad=1; }
		[ $r1 -ne 0 ] || same sort ref our $streams || bad=1
	fi
	"$REF/bin/ovniemu" -l -b ref >ref.emu 2>&1; r1=$?
	"$OVNI" emu -l -b our >our.emu 2>&1; r2=$?
	if [ "$(rc_class $r1)" != "$(rc_class $r2)" ]; then
		echo "#   emu -l -b: exit $r2, reference $r1"
		grep -m1 -i -e error -e fatal ref.emu our.emu | sed 's/^/#     /'
		bad=1
	elif [ $r1 -eq 0 ]; then
		outs=$(cd ref && ls *.prv *.pcf *.row 2>/dev/null)
		same emu ref our $outs || bad=1
	fi
	return $bad
}

run_one() {
	args=$*
	d=$TMP/c.$$.$RANDOM$RANDOM
	if out=$(one_case "$d" $args 2>&1); then
		echo "ok - $args"
		rm -rf "$d"
	else
		echo "not ok - $args"
		[ -z "$out" ] || echo "$out"
		if [ -n "$keep" ]; then echo "#   kept in $d"; else rm -rf "$d"; fi
	fi
}

# rec_case NAME CMD...: records CMD (in $TMP/rec.NAME) and compares the
# reference's sort + emu -l with ours, and dump -x and top.
rec_case() {
	local name=$1 d bad r1 r2; shift
	d=$TMP/rec.$name
	rm -rf "$d" && mkdir -p "$d" && cd "$d" || return 1
	if ! timeout 300 "$@" >rec.out 2>&1; then
		echo "not ok - record $name"; echo "#   $(tail -1 rec.out)"; return
	fi
	bad=0
	"$REF/bin/ovnidump" -x trace >ref.dump 2>/dev/null; r1=$?
	"$OVNI" dump -x trace >our.dump 2>/dev/null; r2=$?
	{ [ $r1 -eq 0 ] && [ $r2 -eq 0 ] && cmp -s ref.dump our.dump; } ||
		{ echo "#   dump -x differs (exit $r2, reference $r1)"; bad=1; }
	"$REF/bin/ovnitop" trace >ref.top 2>/dev/null; r1=$?
	"$OVNI" top trace >our.top 2>/dev/null; r2=$?
	{ [ $r1 -eq 0 ] && [ $r2 -eq 0 ] && cmp -s ref.top our.top; } ||
		{ echo "#   top differs (exit $r2, reference $r1)"; bad=1; }
	cp -R trace ref
	"$REF/bin/ovnisort" ref >ref.sort 2>&1 || { echo "#   the reference's sort fails"; bad=1; }
	"$REF/bin/ovniemu" -l ref >ref.emu 2>&1; r1=$?
	"$OVNI" emu -l -o our trace >our.emu 2>&1; r2=$?
	if [ $r1 -ne 0 ] || [ $r2 -ne 0 ]; then
		echo "#   emu -l: exit $r2, reference $r1"
		grep -m1 -i -e error -e fatal ref.emu our.emu | sed 's/^/#     /'
		bad=1
	else
		same emu ref our $(cd ref && ls *.prv *.pcf *.row) || bad=1
	fi
	if [ $bad -eq 0 ]; then echo "ok - record $name"; else
		echo "not ok - record $name"; [ -n "$keep" ] && echo "#   kept in $d"; fi
	cd "$TMP" || return 1
	[ -n "$keep" ] || rm -rf "$d"
}

# run_records: every real program this machine can build.
run_records() {
	local src=$REPO/tests bindir=$TMP/bin cc rec f
	mkdir -p "$bindir"
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
	cc=${HOSTCC:-gcc}
	rec="$OVNI record -o trace --"
	$cc -O1 -pthread -o "$bindir/threads" "$src/record/threads.c" &&
		rec_case threads $rec "$bindir/threads" 6
	$cc -O1 -pthread -o "$bindir/procs" "$src/record/procs.c" && {
		rec_case fork $rec "$bindir/procs" fork
		rec_case exec $rec "$bindir/procs" exec 3
		rec_case forkexec $rec "$bindir/procs" forkexec
		rec_case system $rec "$bindir/procs" system
	}
	$cc -O1 -pthread -o "$bindir/block" "$src/instr/block.c" &&
		rec_case block $rec "$bindir/block"
	if command -v clang >/dev/null 2>&1 && clang -fopenmp -O1 -o "$bindir/omp" "$src/instr/omp.c" 2>/dev/null; then
		rec_case openmp $rec "$bindir/omp"
	else
		echo "# no clang -fopenmp: OpenMP skipped"
	fi
	for f in mpich openmpi; do
		if command -v "mpicc.$f" >/dev/null 2>&1 && "mpicc.$f" -O1 -o "$bindir/mpi-$f" "$src/instr/mpi.c"; then
			rec_case "mpi-$f-inside" "mpirun.$f" -n 4 $rec "$bindir/mpi-$f" ring
			rec_case "mpi-$f-outside" $rec "mpirun.$f" -n 4 "$bindir/mpi-$f" allreduce
		else
			echo "# no mpicc.$f: MPI with $f skipped"
		fi
	done
}

log=$TMP/log
: >"$log"
start=$(date +%s)
if [ -n "$replay" ]; then
	run_one $replay | tee -a "$log"
else
	s=$seed0
	while [ $s -lt $((seed0 + count)) ]; do
		while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
		( run_one $(shape $s) >>"$log.$s"; cat "$log.$s" >>"$log"; grep -v '^ok' "$log.$s"; rm -f "$log.$s" ) &
		s=$((s + 1))
	done
	wait
	[ -z "$records" ] || run_records | tee -a "$log" | grep -v '^ok'
fi
passed=$(grep -c '^ok' "$log")
failed=$(grep -c '^not ok' "$log")
echo "# $((passed + failed)) traces in $(( $(date +%s) - start )) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
