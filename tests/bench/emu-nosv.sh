# ovni emu of a generated nOS-V trace: 4 workers (one process, 4 CPUs)
# running just over 2 million tasks in 20 million events (gen-trace -k
# nosv: create, submit, scheduler, run with a pause, idle changes).
# Runs, with the trace in the page cache: the emulator alone (thread.prv
# and cpu.prv linked to /dev/null), the same with the -b breakdown
# written to disk, and every timeline written to disk. Prints events/s
# over CPU time (user + system: the machine is shared; best of 2 runs),
# peak RSS, and instructions per event under callgrind when valgrind is
# installed (steady on a busy machine).
# Goal: 10 M events/s single-threaded and a peak RSS under 270 MB (the
# reference takes ~25 s and 2.7 GB on such a trace: it never frees tasks).
# BENCH_EVENTS=N changes the size.
set -u
EVENTS=${BENCH_EVENTS:-20000400}
THREADS=4
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ovni-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
. "$(dirname "$0")/lib.sh"
[ -x "$TIME" ] || { echo "emu-nosv bench: needs $TIME (GNU time) for the peak RSS"; exit 1; }

PER=$((EVENTS / THREADS))
N=$((PER * THREADS))
TASKS=$(((PER - 5) / 10 * THREADS))
trace=$TMP/nosv
"$BUILD/tools/gen-trace" -n $PER -t $THREADS -k nosv "$trace" || exit 1
mb=$(du -sm "$trace" | cut -f1)
cat "$trace"/*/*/*/stream.obs >/dev/null

# run LABEL OUTDIR [ARGS]: best CPU time of 2 runs, events/s, peak RSS.
run() {
	label=$1 out=$2
	shift 2
	emu_best 2 "$out" "$trace" -l "$@"
	awk -v l="$label" -v n="$N" -v c="$best_cpu" -v kb="$rss" 'BEGIN {
		if (c < 0.01) c = 0.01
		printf "%-28s %6.2f s CPU %6.2f M events/s (goal 10: %s)  peak RSS %6.1f MB (goal 270: %s)\n",
			l, c, n / c / 1e6, (n / c >= 1e7) ? "met" : "not met", kb / 1024,
			(kb < 270 * 1024) ? "met" : "not met" }'
}

echo "nosv trace: $N events, $TASKS tasks, $mb MB"
mkdir -p "$TMP/disk"
null_outdir "$TMP/null"
run "nosv, .prv to /dev/null" "$TMP/null"
run "nosv -b, .prv to /dev/null" "$TMP/null" -b
bsize=$(du -m "$TMP/null/nosv-breakdown.prv" | cut -f1)
echo "  ($bsize MB of nosv-breakdown.prv written)"
run "nosv, timelines to disk" "$TMP/disk"
size=$(du -cm "$TMP/disk/thread.prv" "$TMP/disk/cpu.prv" | tail -1 | cut -f1)
echo "  ($size MB of .prv written)"
rm -rf "$TMP/disk"
emu_instructions nosv "nosv, instructions"
