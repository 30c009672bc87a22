# Benchmark of ovni pack: two generated traces of a few hundred MB (a tight
# emit loop and a task-heavy nanos6 mix, both with --real-clock steps, as
# the golden tight-loop trace has them), against `tar | zstd -3` and
# `tar | zstd -19`. Goal: >= 2x smaller than zstd -19, and at least as fast
# per CPU second as zstd -3. Also the uniformly random steps of gen-trace's
# default, the worst case for clock compression. Not a test: no pass/fail.
#   PACK_BENCH_EVENTS  events per thread of the emit trace (default 3000000;
#                      the nanos6 trace has half as many), 4 threads each
set -u
: "${OVNI:?OVNI must name the ovni binary}" "${BUILD:?BUILD must name the build directory}"
N=${PACK_BENCH_EVENTS:-3000000}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ovni-bench-pack.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

if ! command -v zstd >/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		apt-get install -y zstd >/dev/null 2>&1 || echo "pack bench: could not install the zstd CLI"
	fi
fi
have_zstd=0
command -v zstd >/dev/null && have_zstd=1
[ $have_zstd = 1 ] || echo "pack bench: no zstd CLI (apt-get install zstd): comparisons skipped"

# run NAME CMD...: runs CMD under GNU time; sets wall and cpu (s).
run() {
	name=$1; shift
	if ! /usr/bin/time -f '%e %U %S' -o "$TMP/time" "$@" >/dev/null 2>"$TMP/err"; then
		echo "pack bench: $name failed:"; cat "$TMP/err"; exit 1
	fi
	read -r wall user sys <"$TMP/time"
	cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { c = u + s; if (c < 0.01) c = 0.01; print c }')
}

# line LABEL BYTES_IN BYTES_OUT: one result line.
line() {
	awk -v l="$1" -v i="$2" -v o="$3" -v w="$wall" -v c="$cpu" 'BEGIN {
		if (w < 0.01) w = 0.01
		printf "pack bench:   %-22s %11d bytes  %7.1fx  %6.2f s %7.1f MB/s | cpu %6.2f s %7.1f MB/s per core\n",
			l, o, i / o, w, i / w / 1e6, c, i / c / 1e6 }'
}

bench() {
	label=$1; shift
	d=$TMP/trace
	rm -rf "$d" "$TMP"/out*
	"$BUILD/tools/gen-trace" "$@" "$d" >/dev/null || exit 1
	in=$(du -b -s "$d" | cut -f1)
	echo "pack bench: $label: $in bytes ($*)"
	run "pack -T 1" "$OVNI" pack -T 1 -o "$TMP/out.ovnipack" "$d"
	p=$(wc -c <"$TMP/out.ovnipack"); line "ovni pack" "$in" "$p"
	run "pack -T 2" "$OVNI" pack -T 2 -o "$TMP/out2.ovnipack" "$d"; line "ovni pack -T 2" "$in" "$p"
	run "pack -l 19" "$OVNI" pack -l 19 -o "$TMP/out19.ovnipack" "$d"; line "ovni pack -l 19" "$in" "$(wc -c <"$TMP/out19.ovnipack")"
	run "unpack" "$OVNI" unpack -C "$TMP/outdir" "$TMP/out.ovnipack"; line "ovni unpack" "$in" "$p"
	diff -r "$d" "$TMP/outdir" >/dev/null || { echo "pack bench: the round trip differs"; exit 1; }
	run "top (directory)" "$OVNI" top "$d"; line "ovni top TRACEDIR" "$in" "$in"
	run "top (pack)" "$OVNI" top "$TMP/out.ovnipack"; line "ovni top PACK" "$in" "$p"
	[ $have_zstd = 1 ] || return 0
	run "tar | zstd -3" sh -c "tar -C '$d' -cf - . | zstd -q -3 -T1 -c >'$TMP/out.tar.zst'"
	z3=$(wc -c <"$TMP/out.tar.zst"); line "tar | zstd -3" "$in" "$z3"
	run "tar | zstd -19" sh -c "tar -C '$d' -cf - . | zstd -q -19 -T1 -c >'$TMP/out19.tar.zst'"
	z19=$(wc -c <"$TMP/out19.tar.zst"); line "tar | zstd -19" "$in" "$z19"
	awk -v p="$p" -v z="$z19" 'BEGIN { printf "pack bench:   ovni pack is %.1fx smaller than tar | zstd -19\n", z / p }'
}

echo "pack bench: load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
bench "tight emit loop" -n "$N" -t 4 -k emit --real-clock --step 33
bench "task-heavy nanos6 mix" -n $((N / 2)) -t 4 -k nanos6 --real-clock --step 200
bench "worst case: uniformly random steps" -n $((N / 4)) -t 4 -k emit
