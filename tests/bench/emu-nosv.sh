# ovni emu of a generated nOS-V trace: 4 workers (one process, 4 CPUs)
# running just over 2 million tasks in 20 million events (gen-trace -k
# nosv: create, submit, scheduler, run with a pause, idle changes).
# Runs twice with the trace in the page cache: timelines to the trace's
# file system, and thread.prv/cpu.prv linked to /dev/null (the emulator
# alone). Prints events/s over CPU time (user + system) and peak RSS.
# Goal: 10 M events/s single-threaded and a peak RSS under 270 MB (the
# reference takes ~25 s and 2.7 GB on such a trace: it never frees tasks).
# BENCH_EVENTS=N changes the size.
set -u
EVENTS=${BENCH_EVENTS:-20000400}
THREADS=4
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ovni-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "emu-nosv bench: needs $TIME (GNU time) for the peak RSS"; exit 1; }

PER=$((EVENTS / THREADS))
N=$((PER * THREADS))
TASKS=$(((PER - 5) / 10 * THREADS))
trace=$TMP/nosv
"$BUILD/tools/gen-trace" -n $PER -t $THREADS -k nosv "$trace" || exit 1
mb=$(du -sm "$trace" | cut -f1)
cat "$trace"/*/*/*/stream.obs >/dev/null

# run LABEL OUTDIR: prints CPU seconds, events/s and peak RSS of one run.
run() {
	rm -rf "$2/cfg"
	"$TIME" -f '%U %S %M' -o "$TMP/time" "$OVNI" emu -l -o "$2" "$trace" >/dev/null 2>"$TMP/err" ||
		{ echo "emu failed:"; tail -5 "$TMP/err"; exit 1; }
	read -r user sys kb <"$TMP/time"
	awk -v l="$1" -v n="$N" -v u="$user" -v s="$sys" -v kb="$kb" 'BEGIN {
		cpu = u + s; if (cpu <= 0) cpu = 0.01
		printf "%-28s %.2f s CPU  %5.2f M events/s  peak RSS %.1f MB  (goals: 10 M/s, 270 MB: %s)\n",
			l, cpu, n / cpu / 1e6, kb / 1024,
			(n / cpu >= 1e7 && kb < 270 * 1024) ? "met" : "not met" }'
}

echo "nosv trace: $N events, $TASKS tasks, $mb MB"
mkdir -p "$TMP/disk" "$TMP/null"
run "nosv, timelines to disk" "$TMP/disk"
size=$(du -cm "$TMP/disk/thread.prv" "$TMP/disk/cpu.prv" | tail -1 | cut -f1)
echo "  ($size MB of .prv written)"
rm -rf "$TMP/disk"
ln -sf /dev/null "$TMP/null/thread.prv"
ln -sf /dev/null "$TMP/null/cpu.prv"
run "nosv, .prv to /dev/null" "$TMP/null"
