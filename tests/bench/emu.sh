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
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "emu bench: needs $TIME (GNU time) for the peak RSS"; exit 1; }

# run LABEL TRACE OUTDIR: best of 2 runs; prints events/s by wall time and
# by CPU time (user + system: what counts on a busy machine) and peak RSS.
run() {
	label=$1 trace=$2 out=$3
	best=
	best_cpu=
	rss=0
	for i in 1 2; do
		rm -rf "$out/cfg"
		# every run writes new timelines: truncating the last run's 2 GB
		# would charge freeing its page cache to the emulator
		for f in "$out/thread.prv" "$out/cpu.prv"; do
			[ -L "$f" ] || rm -f "$f"
		done
		t0=$(date +%s%N)
		"$TIME" -v "$OVNI" emu -o "$out" "$trace" >/dev/null 2>"$TMP/err" ||
			{ echo "emu failed:"; tail -5 "$TMP/err"; exit 1; }
		t1=$(date +%s%N)
		ns=$((t1 - t0))
		kb=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$TMP/err")
		cpu=$(awk -F': ' '/^[[:space:]]*(User|System) time \(seconds\)/ { t += $2 } END { printf "%.2f", t }' "$TMP/err")
		[ "$kb" -gt "$rss" ] && rss=$kb
		if [ -z "$best" ] || [ $ns -lt "$best" ]; then best=$ns; fi
		best_cpu=$(awk -v a="$best_cpu" -v b="$cpu" 'BEGIN {print (a == "" || b < a) ? b : a}')
	done
	awk -v l="$label" -v n="$n" -v ns="$best" -v c="$best_cpu" -v kb="$rss" -v mb="$mb" 'BEGIN {
		if (c < 0.01) c = 0.01
		printf "%-28s %.2f s %6.2f M events/s | cpu %.2f s %6.2f M events/s | peak RSS %.1f MB (trace %d MB)\n",
			l, ns / 1e9, n / (ns / 1e9) / 1e6, c, n / c / 1e6, kb / 1024, mb }'
}

# instructions KIND: instructions per event of a BENCH_CG_EVENTS trace.
instructions() {
	kind=$1
	command -v valgrind >/dev/null 2>&1 || return 0
	cg_n=${BENCH_CG_EVENTS:-1000000}
	trace=$TMP/cg-$kind out=$TMP/cg-out
	"$BUILD/tools/gen-trace" -n $((cg_n / THREADS)) -t $THREADS -k "$kind" "$trace" || exit 1
	rm -rf "$out" && mkdir -p "$out"
	ln -sf /dev/null "$out/thread.prv"
	ln -sf /dev/null "$out/cpu.prv"
	valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out" "$OVNI" emu -o "$out" "$trace" \
		>/dev/null 2>"$TMP/err" || { echo "emu under callgrind failed:"; tail -5 "$TMP/err"; exit 1; }
	ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$TMP/cg.out")
	awk -v l="$kind" -v n=$(( (cg_n / THREADS) * THREADS )) -v ir="$ir" 'BEGIN {
		printf "%-28s %.0f instructions/event (callgrind, %d events)\n", l ", instructions", ir / n, n }'
	rm -rf "$trace" "$out" "$TMP/cg.out"
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
	instructions $kind
done
