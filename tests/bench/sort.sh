# Benchmark of ovni sort: 20 M events in one stream with an unordered region
# every 1,000 events (and one run with regions reaching 100,000 events
# back). Prints events/s and peak memory (GNU time). Not a test: no pass/fail.
#   SORT_BENCH_EVENTS  events in the stream (default 20000000)
set -u
: "${OVNI:?OVNI must name the ovni binary}" "${BUILD:?BUILD must name the build directory}"
N=${SORT_BENCH_EVENTS:-20000000}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ovni-bench-sort.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

# measure LABEL CMD...: one line with wall time, events/s, CPU time and peak RSS.
measure() {
	label=$1; shift
	if ! /usr/bin/time -f '%e %U %S %M' -o "$TMP/time" "$@" >/dev/null 2>"$TMP/err"; then
		echo "sort bench: $label failed:"; cat "$TMP/err"; return 1
	fi
	read -r wall user sys kb <"$TMP/time"
	awk -v l="$label" -v n="$N" -v w="$wall" -v u="$user" -v s="$sys" -v kb="$kb" 'BEGIN {
		if (w < 0.01) w = 0.01
		c = u + s; if (c < 0.01) c = 0.01
		printf "sort bench: %-38s %6.2f s %6.1f M events/s | cpu %5.2f s %6.1f M events/s | peak RSS %5.1f MiB\n",
			l, w, n / w / 1e6, c, n / c / 1e6, kb / 1024 }'
}

# gen DIR ARGS...: a fresh trace in DIR.
gen() {
	d=$1; shift
	rm -rf "$d"
	"$BUILD/tools/gen-unsorted" -n "$N" "$@" "$d" || exit 1
	sync # the generator's dirty pages must not be charged to the sort's fsync
}

gen "$TMP/t" -r 1000 -k 4 -b 3
mb=$(du -m "$TMP/t" | tail -n 1 | cut -f 1)
echo "sort bench: $N events ($mb MiB), a region of 4 events every 1000 events; load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
measure "sort (rewrite + fsync)" "$OVNI" sort "$TMP/t"
measure "sort again (nothing to do: read only)" "$OVNI" sort "$TMP/t"
measure "check (-c)" "$OVNI" sort -c "$TMP/t"
# On tmpfs the fsync costs nothing: what is left is the sort and the copies.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	SHM=$(mktemp -d /dev/shm/ovni-bench-sort.XXXXXX)
	trap 'rm -rf "$TMP" "$SHM"' EXIT INT TERM
	gen "$SHM/t" -r 1000 -k 4 -b 3
	measure "sort on tmpfs (no disk)" "$OVNI" sort "$SHM/t"
	rm -rf "$SHM"
fi
gen "$TMP/t" -r 1000000 -k 4 -b 100000
echo "sort bench: the same with a region every 1,000,000 events reaching 100,000 events back"
measure "sort far regions (rewrite + fsync)" "$OVNI" sort "$TMP/t"
