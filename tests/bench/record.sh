# Benchmark of the libovni shim's emit path under ovni record, side by side
# with the reference libovni 1.14 (../shared/ref) in the same run.
#
# The program is tests/record/burst.c: T threads call ovni_clock_now +
# ovni_ev_emit N times each. It is built twice: against the reference
# libovni, run alone (its trace written to $BASE, as OVNI_TRACEDIR), and
# against `ovni lib`, run under `ovni record -o $BASE/...`. Both traces go
# to the same file system (/dev/shm when writable). The two sides run in
# alternation (ref, ours, ours, ref, ...), so that the load of a shared
# machine falls on both alike; each figure is the best of BENCH_REPS runs.
#
# Per workload:
#   emit ns/ev    CPU time of the emit loops per event, as burst measures it
#                 (thread CPU clock around the loops, all threads)
#   whole s       user + system time of the whole process tree (GNU time):
#                 the recorder, the shim's helper thread, start and end
#                 included for ours; the program alone for the reference
#   lives         (the last row) 2000 threads of one event each, all
#                 alive at once: the whole process's CPU is then the cost
#                 of starting and ending streams (no goal; measured)
# Goals: emit ours/ref <= 0.5 and whole ours/ref <= 0.75 with the TSC
# clock (where the kernel keeps time with it); with OVNI_NO_TSC=1
# (clock_gettime for every reading, as on hosts whose kernel does not keep
# time with the TSC) emit ours/ref < 1 and whole ours/ref < 1 (the clock
# read is most of both sides' CPU there).
#
#   RECORD_BENCH_EVENTS  events per workload, shared by its threads (default
#                        20000000)
#   BENCH_REPS           runs of each side per workload (default 3)
#   OVNI_REF             prefix of the reference (default ../shared/ref)
#   RECORD_BENCH_DIR     where both traces go (default /dev/shm, else
#                        $TMPDIR or /tmp): a disk file system shows the
#                        cost of writing the pages out too
# Without the reference: our figures alone, and a line saying the
# comparison was skipped.
set -u
: "${OVNI:?OVNI must name the ovni binary}" "${BUILD:?BUILD must name the build directory}"
N=${RECORD_BENCH_EVENTS:-20000000}
REPS=${BENCH_REPS:-3}
CC=${HOSTCC:-gcc}
TIME=/usr/bin/time
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REF=${OVNI_REF:-$ROOT/../shared/ref}
BASE=${RECORD_BENCH_DIR:-/dev/shm}
[ -d "$BASE" ] && [ -w "$BASE" ] || BASE=${TMPDIR:-/tmp}
TMP=$(mktemp -d "$BASE/ovni-bench-record.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
[ -x "$TIME" ] || { echo "record bench: needs $TIME (GNU time)"; exit 1; }

"$OVNI" lib "$TMP/lib" >/dev/null 2>&1 || { echo "record bench: ovni lib failed"; exit 1; }
$CC -O2 -pthread -I"$TMP/lib" -o "$TMP/burst" "$ROOT/tests/record/burst.c" -L"$TMP/lib" -lovni ||
	{ echo "record bench: cannot build burst.c"; exit 1; }
have_ref=0
if [ -f "$REF/lib/libovni.so.1.14.0" ] && [ -f "$REF/include/ovni.h" ]; then
	# linked through links of our own (the reference's are flattened files)
	mkdir -p "$TMP/reflib"
	ln -s "$REF/lib/libovni.so.1.14.0" "$TMP/reflib/libovni.so.1"
	ln -s libovni.so.1 "$TMP/reflib/libovni.so"
	$CC -O2 -pthread -I"$REF/include" -o "$TMP/burst-ref" "$ROOT/tests/record/burst.c" \
		-L"$TMP/reflib" -Wl,-rpath,"$TMP/reflib" -lovni || { echo "record bench: cannot build burst.c against the reference"; exit 1; }
	have_ref=1
fi

echo "record bench: $N events per workload, best of $REPS runs per side; trace in $BASE; load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null); clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
[ $have_ref = 1 ] ||
	echo "record bench: comparison with the reference skipped: no libovni 1.14 in $REF (lib/libovni.so.1.14.0 and include/ovni.h; OVNI_REF=DIR names another); our figures alone"

# one SIDE CMD...: runs CMD under GNU time; appends "emit_ns whole_s" to
# $TMP/SIDE (emit_ns from burst's line, whole_s = user + system).
one() {
	side=$1
	shift
	rm -rf "$TMP/t"
	if ! "$TIME" -f '%U %S' -o "$TMP/time" "$@" >"$TMP/out" 2>"$TMP/err"; then
		echo "record bench: $label: $side failed: $*"
		tail -3 "$TMP/err"
		return 1
	fi
	ns=$(sed -n 's/^burst: .*events: \([0-9.]*\) ns of CPU per event.*/\1/p' "$TMP/out")
	[ -n "$ns" ] || { echo "record bench: $label: $side: no figure from burst"; cat "$TMP/out" "$TMP/err"; return 1; }
	read -r user sys <"$TMP/time"
	echo "$ns $user $sys" | awk '{ printf "%s %.2f\n", $1, $2 + $3 }' >>"$TMP/$side"
	rm -rf "$TMP/t"
}

best() {
	sort -n -k"$2" "$TMP/$1" | head -n 1 | cut -d' ' -f"$2"
}

# workload LABEL THREADS NOTSC GOAL_EMIT GOAL_WHOLE [EVENTS]: BENCH_REPS
# runs of each side in alternation, then the row (a goal of 0: none; -G:
# < G). EVENTS per thread (default N / THREADS) also blanks the emit
# columns: the whole process is the figure then.
workload() {
	label=$1 th=$2 notsc=$3
	ev=${6:-$((N / th))}
	: >"$TMP/ref"
	: >"$TMP/ours"
	run_ours() {
		one ours env ${notsc:+OVNI_NO_TSC=1} "$OVNI" record -o "$TMP/t" -- "$TMP/burst" "$th" "$ev"
	}
	run_ref() {
		one ref env OVNI_TRACEDIR="$TMP/t" "$TMP/burst-ref" "$th" "$ev"
	}
	i=0
	while [ $i -lt "$REPS" ]; do
		if [ $have_ref = 0 ]; then
			run_ours
		elif [ $((i % 2)) = 0 ]; then
			run_ref && run_ours
		else
			run_ours && run_ref
		fi || return 1
		i=$((i + 1))
	done
	if [ $have_ref = 0 ]; then
		printf "%-22s %8s %8s %6s %8s %8s %6s\n" "$label" - "$(best ours 1)" - - "$(best ours 2)" -
		return 0
	fi
	awk -v l="$label" -v re="$(best ref 1)" -v oe="$(best ours 1)" -v rw="$(best ref 2)" \
		-v ow="$(best ours 2)" -v ge="$4" -v gw="$5" -v blank="${6:+1}" 'BEGIN {
		if (rw < 0.01) rw = 0.01
		e = oe / re; w = ow / rw; g = ""
		if (ge > 0) g = g sprintf(" emit<=%.2g:%s", ge, e <= ge ? "met" : "NOT met")
		if (ge < 0) g = g sprintf(" emit<%.2g:%s", -ge, e < -ge ? "met" : "NOT met")
		if (gw > 0) g = g sprintf(" whole<=%.2g:%s", gw, w <= gw ? "met" : "NOT met")
		if (gw < 0) g = g sprintf(" whole<%.2g:%s", -gw, w < -gw ? "met" : "NOT met")
		if (blank) printf "%-22s %8s %8s %6s %8.2f %8.2f %6.2f%s\n", l, "-", "-", "-", rw, ow, w, g
		else printf "%-22s %8.2f %8.2f %6.2f %8.2f %8.2f %6.2f%s\n", l, re, oe, e, rw, ow, w, g }'
}

printf "%-22s %8s %8s %6s %8s %8s %6s\n" "" "ref" "ours" "emit" "ref" "ours" "whole"
printf "%-22s %8s %8s %6s %8s %8s %6s\n" "workload (N events)" "ns/ev" "ns/ev" "o/r" "cpu s" "cpu s" "o/r"
rc=0
# Where the kernel does not keep time with the TSC, ours does not use it
# either: the first two rows then measure the clock_gettime path too, and
# are held to its goals.
if [ "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)" = tsc ]; then
	workload "emit 1 thread" 1 "" 0.5 0.75 || rc=1
	workload "emit 4 threads" 4 "" 0.5 0.75 || rc=1
else
	echo "record bench: the kernel's clock is not the TSC here: the first two rows use clock_gettime as well"
	workload "emit 1 thread" 1 "" -1 -1 || rc=1
	workload "emit 4 threads" 4 "" -1 -1 || rc=1
fi
workload "emit 1 thread NO_TSC" 1 1 -1 -1 || rc=1
workload "emit 4 threads NO_TSC" 4 1 -1 -1 || rc=1
workload "lives: 2000 threads" 2000 "" 0 0 1 || rc=1
exit $rc
