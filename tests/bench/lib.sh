# Shared by the emu benchmarks (sourced; not a benchmark itself). Needs
# OVNI, BUILD, TMP and THREADS set by the caller.
TIME=/usr/bin/time

# null_outdir DIR: an output directory whose thread.prv and cpu.prv go to
# /dev/null (the emulator alone, as the reference was measured).
null_outdir() {
	mkdir -p "$1"
	ln -sf /dev/null "$1/thread.prv"
	ln -sf /dev/null "$1/cpu.prv"
}

# emu_best RUNS OUTDIR TRACE [ARGS]: `ovni emu ARGS -o OUTDIR TRACE` RUNS
# times; sets best_cpu (least user + system seconds), best_ns (least wall
# time) and rss (largest peak RSS, kB). Exits on a failed run.
emu_best() {
	runs=$1 out=$2 trace=$3
	shift 3
	best_cpu= best_ns= rss=0
	i=0
	while [ $i -lt "$runs" ]; do
		i=$((i + 1))
		rm -rf "$out/cfg"
		# every run writes new timelines: truncating the last run's 2 GB
		# would charge freeing its page cache to the emulator
		for f in "$out/thread.prv" "$out/cpu.prv"; do
			[ -L "$f" ] || rm -f "$f"
		done
		t0=$(date +%s%N)
		"$TIME" -f '%U %S %M' -o "$TMP/time" "$OVNI" emu "$@" -o "$out" "$trace" >/dev/null 2>"$TMP/err" ||
			{ echo "emu failed:"; tail -5 "$TMP/err"; exit 1; }
		ns=$(($(date +%s%N) - t0))
		read -r user sys kb <"$TMP/time"
		cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
		[ "$kb" -gt "$rss" ] && rss=$kb
		if [ -z "$best_ns" ] || [ $ns -lt "$best_ns" ]; then best_ns=$ns; fi
		if [ -z "$best_cpu" ] || awk -v a="$cpu" -v b="$best_cpu" 'BEGIN { exit !(a < b) }'; then best_cpu=$cpu; fi
	done
}

# emu_instructions KIND LABEL: instructions per event of emu on a
# BENCH_CG_EVENTS (1 M) event gen-trace -k KIND trace, under callgrind
# (exact and repeatable on a busy machine); nothing without valgrind.
emu_instructions() {
	command -v valgrind >/dev/null 2>&1 || return 0
	cg_n=${BENCH_CG_EVENTS:-1000000}
	cg=$TMP/cg-$1 cg_out=$TMP/cg-out
	"$BUILD/tools/gen-trace" -n $((cg_n / THREADS)) -t $THREADS -k "$1" "$cg" || exit 1
	rm -rf "$cg_out"
	null_outdir "$cg_out"
	valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out" "$OVNI" emu -o "$cg_out" "$cg" \
		>/dev/null 2>"$TMP/err" || { echo "emu under callgrind failed:"; tail -5 "$TMP/err"; exit 1; }
	ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$TMP/cg.out")
	awk -v l="$2" -v n=$(((cg_n / THREADS) * THREADS)) -v ir="$ir" 'BEGIN {
		printf "%-30s %.0f instructions/event (callgrind, %d events)\n", l, ir / n, n }'
	rm -rf "$cg" "$cg_out" "$TMP/cg.out"
}
