# Benchmark of the libovni shim's emit path under ovni record: one thread
# calls ovni_clock_now + ovni_ev_emit 20 M times with the trace in /dev/shm
# (the reference library needs about 33 ns per event; goal <= 15 ns), then
# 4 threads at once. The figure is CPU time of the emit loop per event.
#   RECORD_BENCH_EVENTS  events per thread (default 20000000)
set -u
: "${OVNI:?OVNI must name the ovni binary}" "${BUILD:?BUILD must name the build directory}"
N=${RECORD_BENCH_EVENTS:-20000000}
CC=${HOSTCC:-gcc}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BASE=/dev/shm
[ -d "$BASE" ] && [ -w "$BASE" ] || BASE=${TMPDIR:-/tmp}
TMP=$(mktemp -d "$BASE/ovni-bench-record.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
"$OVNI" lib "$TMP/lib" 2>/dev/null || exit 1
$CC -O2 -pthread -I"$TMP/lib" -o "$TMP/burst" "$ROOT/tests/record/burst.c" -L"$TMP/lib" -lovni || exit 1
echo "record bench: trace in $BASE; load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null); clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
for t in 1 4; do
	rm -rf "$TMP/t"
	"$OVNI" record -o "$TMP/t" -- "$TMP/burst" "$t" "$N" 2>"$TMP/err" | sed 's/^burst/record bench/' || { cat "$TMP/err"; exit 1; }
	sed 's/^ovni record/record bench: recorder/' "$TMP/err"
done
