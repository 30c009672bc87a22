# ovni emu of generated traces of 20 million events, 4 threads on 4 CPUs:
#   pause  OHp/OHr pairs: every event writes 5 Paraver lines (2.5 GB)
#   mark   OM[/OM] pairs of a stack mark type: thread and CPU tracks
# Each runs twice with the trace in the page cache: once writing the
# timelines to the trace's file system, once with thread.prv and cpu.prv
# linked to /dev/null (the emulator alone, as the reference was measured).
# Prints events/s (best run) and peak RSS (/usr/bin/time -v). When valgrind
# is installed, also instructions per event (callgrind, .prv to /dev/null,
# 1 M events: exact and repeatable on a busy machine; BENCH_CG_EVENTS=N).
# Goal: 10 M events/s single-threaded, RSS flat with the trace length (under
# 100 MB for a 250 MB trace); the reference does about 1.1 M events/s with an
# RSS as big as the trace. BENCH_EVENTS=N changes the size.
set -u
EVENTS=${BENCH_EVENTS:-20000000}
THREADS=4
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ovni-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
. "$(dirname "$0")/lib.sh"
[ -x "$TIME" ] || { echo "emu bench: needs $TIME (GNU time) for the peak RSS"; exit 1; }

# run LABEL TRACE OUTDIR: best of 2 runs; prints events/s by wall time and
# by CPU time (user + system: what counts on a busy machine) and peak RSS.
run() {
	emu_best 2 "$3" "$2"
	awk -v l="$1" -v n="$n" -v ns="$best_ns" -v c="$best_cpu" -v kb="$rss" -v mb="$mb" 'BEGIN {
		if (c < 0.01) c = 0.01
		printf "%-28s %.2f s %6.2f M events/s | cpu %.2f s %6.2f M events/s | peak RSS %.1f MB (trace %d MB)\n",
			l, ns / 1e9, n / (ns / 1e9) / 1e6, c, n / c / 1e6, kb / 1024, mb }'
}

for kind in pause mark; do
	trace=$TMP/$kind
	"$BUILD/tools/gen-trace" -n $((EVENTS / THREADS)) -t $THREADS -k $kind "$trace" || exit 1
	n=$(( (EVENTS / THREADS) * THREADS ))
	mb=$(du -sm "$trace" | cut -f1)
	cat "$trace"/*/*/*/stream.obs >/dev/null
	mkdir -p "$TMP/disk"
	null_outdir "$TMP/null"
	run "$kind, timelines to disk" "$trace" "$TMP/disk"
	size=$(du -cm "$TMP/disk/thread.prv" "$TMP/disk/cpu.prv" | tail -1 | cut -f1)
	echo "  ($size MB of .prv written)"
	rm -f "$TMP/disk"/*.prv
	run "$kind, .prv to /dev/null" "$trace" "$TMP/null"
	rm -rf "$trace"
	emu_instructions $kind "$kind, instructions"
done
