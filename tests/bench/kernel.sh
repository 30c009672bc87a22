# ovni record --kernel: what recording context switches costs a program
# that leaves its CPU often (4 threads x 20,000 sleeps of 1 us, each
# thread draining its ring at every 1,000th sleep through ovni_flush), and
# what ovni emu pays to sort such a trace in memory (vs after ovni sort).
# Not a test: no pass/fail. Skipped where perf_event is not permitted.
set -u
: "${OVNI:?}" "${BUILD:?}"
CC=${HOSTCC:-gcc}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ovni-bench-kernel.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
"$OVNI" lib "$TMP/lib" >/dev/null 2>&1 || { echo "kernel bench: ovni lib failed"; exit 1; }
cat >"$TMP/sw.c" <<'C'
#include <pthread.h>
#include <time.h>
#include <ovni.h>
static void *run(void *a)
{
	struct timespec ts = { 0, 1000 };
	for (int i = 1; i <= 20000; i++) {
		nanosleep(&ts, NULL);
		if (i % 1000 == 0)
			ovni_flush();
	}
	return a;
}
int main(void)
{
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, run, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}
C
"$CC" -O2 -pthread -I"$TMP/lib" -o "$TMP/sw" "$TMP/sw.c" -L"$TMP/lib" -lovni || exit 1

# wall CMD...: seconds CMD took (stderr kept in $TMP/err).
wall() {
	t0=$(date +%s%N)
	"$@" >/dev/null 2>"$TMP/err" || { echo "kernel bench: $* failed:"; cat "$TMP/err"; exit 1; }
	t1=$(date +%s%N)
	awk -v ns=$((t1 - t0)) 'BEGIN { printf "%.3f", ns / 1e9 }'
}

off=$(wall "$OVNI" record --no-kernel -o "$TMP/off" -- "$TMP/sw")
on=$(wall "$OVNI" record -o "$TMP/on" -- "$TMP/sw")
if grep -q 'not recorded' "$TMP/err"; then
	echo "kernel bench: skipped: $(grep 'not recorded' "$TMP/err")"
	exit 0
fi
lost=$(grep -o 'the kernel dropped [0-9]* of its' "$TMP/err" | awk '{ n += $4 } END { print n + 0 }')
n=$("$OVNI" top "$TMP/on" 2>/dev/null | awk '$1 == "KCO" || $1 == "KCI" { s += $2 } END { print s + 0 }')
echo "kernel bench: record 4 x 20000 sleeps: $off s without --kernel, $on s with ($n KCO/KCI written, $lost dropped by the kernel); load: $(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p "$TMP/o1" "$TMP/o2"
cat "$TMP"/on/*/*/*/stream.obs >/dev/null
unsorted=$(wall "$OVNI" emu -o "$TMP/o1" "$TMP/on")
srt=$(wall "$OVNI" sort "$TMP/on")
sorted=$(wall "$OVNI" emu -o "$TMP/o2" "$TMP/on")
echo "kernel bench: emu of that trace: $unsorted s sorting in memory, $sorted s after ovni sort ($srt s)"
