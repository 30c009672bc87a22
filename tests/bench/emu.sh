# ovni emu of generated traces of 20 million events, 4 threads on 4 CPUs:
#   pause  OHp/OHr pairs: every event writes 5 Paraver lines (2.5 GB)
#   mark   OM[/OM] pairs of a stack mark type: thread and CPU tracks
# Each runs twice with the trace in the page cache: once writing the
# timelines to the trace's file system, once with thread.prv and cpu.prv
# linked to /dev/null (the emulator alone, as the reference was measured).
# Prints events/s (best run) and peak RSS (/usr/bin/time -v).
# Goal: 10 M events/s single-threaded, RSS flat with the trace length (under
# 100 MB for a 250 MB trace); the reference does about 1.1 M events/s with an
# RSS as big as the trace. BENCH_EVENTS=N changes the size.
set -u
EVENTS=${BENCH_EVENTS:-20000000}
THREADS=4
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ovni-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "emu bench: needs $TIME (GNU time) for the peak RSS"; exit 1; }

# run LABEL TRACE OUTDIR: best of 2 runs; prints events/s and peak RSS.
run() {
	label=$1 trace=$2 out=$3
	best=
	rss=0
	for i in 1 2; do
		rm -rf "$out/cfg"
		t0=$(date +%s%N)
		"$TIME" -v "$OVNI" emu -o "$out" "$trace" >/dev/null 2>"$TMP/err" ||
			{ echo "emu failed:"; tail -5 "$TMP/err"; exit 1; }
		t1=$(date +%s%N)
		ns=$((t1 - t0))
		kb=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$TMP/err")
		[ "$kb" -gt "$rss" ] && rss=$kb
		if [ -z "$best" ] || [ $ns -lt "$best" ]; then best=$ns; fi
	done
	awk -v l="$label" -v n="$n" -v ns="$best" -v kb="$rss" -v mb="$mb" 'BEGIN {
		printf "%-28s %.2f s  %5.2f M events/s  peak RSS %.1f MB (trace %d MB)\n",
			l, ns / 1e9, n / (ns / 1e9) / 1e6, kb / 1024, mb }'
}

for kind in pause mark; do
	trace=$TMP/$kind
	"$BUILD/tools/gen-trace" -n $((EVENTS / THREADS)) -t $THREADS -k $kind "$trace" || exit 1
	n=$(( (EVENTS / THREADS) * THREADS ))
	mb=$(du -sm "$trace" | cut -f1)
	cat "$trace"/*/*/*/stream.obs >/dev/null
	mkdir -p "$TMP/disk" "$TMP/null"
	ln -sf /dev/null "$TMP/null/thread.prv"
	ln -sf /dev/null "$TMP/null/cpu.prv"
	run "$kind, timelines to disk" "$trace" "$TMP/disk"
	size=$(du -cm "$TMP/disk/thread.prv" "$TMP/disk/cpu.prv" | tail -1 | cut -f1)
	echo "  ($size MB of .prv written)"
	rm -f "$TMP/disk"/*.prv
	run "$kind, .prv to /dev/null" "$trace" "$TMP/null"
	rm -rf "$trace"
done
