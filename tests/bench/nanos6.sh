# ovni emu of a generated nanos6 trace: 4 threads, 20 million events,
# about 2.9 million tasks (gen-trace -k tasks: tasks created in batches of
# 1000, then each run inside 6Wt with a 6Ma/6MA region).
# Runs: the emulator alone (thread.prv and cpu.prv linked to /dev/null),
# the same with the -b breakdown (written to disk), and once with every
# timeline written to disk. Prints events/s over CPU time (user + system,
# the machine is shared) and peak RSS (/usr/bin/time), best of 2 runs.
# Goal: 10 M events/s single-threaded, peak RSS under 270 MB (the
# reference: about 0.8 M events/s and 2.7 GB, as it never frees tasks).
# BENCH_EVENTS=N changes the size.
set -u
EVENTS=${BENCH_EVENTS:-20000000}
THREADS=4
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ovni-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
. "$(dirname "$0")/lib.sh"
[ -x "$TIME" ] || { echo "nanos6 bench: needs $TIME (GNU time) for the peak RSS"; exit 1; }

# run LABEL RUNS OUTDIR ARGS...: prints events/s (CPU time) and peak RSS.
run() {
	label=$1 runs=$2 out=$3
	shift 3
	emu_best "$runs" "$out" "$trace" "$@"
	awk -v l="$label" -v n="$n" -v s="$best_cpu" -v kb="$rss" 'BEGIN {
		if (s <= 0) s = 0.01
		printf "%-34s %6.2f s CPU  %5.2f M events/s  peak RSS %6.1f MB\n",
			l, s, n / s / 1e6, kb / 1024 }'
}

trace=$TMP/trace
"$BUILD/tools/gen-trace" -n $((EVENTS / THREADS)) -t $THREADS -k tasks "$trace" || exit 1
n=$(( (EVENTS / THREADS) * THREADS ))
tasks=$("$OVNI" top "$trace" | awk '$1 == "6Tc" { print $2 }')
echo "trace: $n events, $tasks tasks, $(du -sm "$trace" | cut -f1) MB"
mkdir -p "$TMP/disk"
null_outdir "$TMP/null"
run "nanos6, .prv to /dev/null" 2 "$TMP/null"
run "nanos6 -b, .prv to /dev/null" 2 "$TMP/null" -b
echo "  ($(du -m "$TMP/null/nanos6-breakdown.prv" | cut -f1) MB of breakdown written)"
run "nanos6, timelines to disk" 1 "$TMP/disk"
echo "  ($(du -cm "$TMP/disk"/*.prv | tail -1 | cut -f1) MB of .prv written)"
