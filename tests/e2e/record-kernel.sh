# ovni record --kernel end to end: a program whose threads sleep, wait on a
# pipe and wait for a mutex is recorded; after ovni sort, ovni emu shows
# each of them out of its CPU (kernel context switch, type 45 in
# thread.prv) for as long as it waited. Skipped where perf_event is
# forbidden (the recorder then says so in one notice and goes on).
. "$(dirname "$0")/lib.sh"
CC=${HOSTCC:-gcc}
command -v "$CC" >/dev/null 2>&1 || { echo "# skip: no host compiler $CC"; exit 0; }
"$CC" -std=c11 -D_GNU_SOURCE -O1 -pthread -o "$TMP/blocker" "$TESTDIR/rt/blocker.c" || {
	not_ok "blocker.c builds"; done_testing; }

"$OVNI" record -o "$TMP/t" -- "$TMP/blocker" >"$TMP/roles" 2>"$TMP/err"
rc=$?
if grep -q 'context switches are not recorded' "$TMP/err"; then
	check "without perf_event: one notice" test "$(grep -c 'not recorded' "$TMP/err")" -eq 1
	check "and the recording goes on" test $rc -eq 0
	check "to a trace ovni emu accepts" "$OVNI" emu -o "$TMP" "$TMP/t"
	echo "# skip: perf_event is not permitted here: $(grep 'not recorded' "$TMP/err")"
	done_testing
fi
check "record exits with the program's status" test $rc -eq 0
check "every thread requires the kernel model" sh -c \
	"test \$(grep -l '\"kernel\": \"1.0.0\"' \$(find '$TMP/t' -name stream.json) | wc -l) -eq 4"
check "the streams are not in order before ovni sort" sh -c "! '$OVNI' sort -c '$TMP/t'"
cp -r "$TMP/t" "$TMP/unsorted"
check "ovni sort" "$OVNI" sort "$TMP/t"
check "then they are" "$OVNI" sort -c "$TMP/t"
mkdir "$TMP/o" "$TMP/u"
check "ovni emu -l" "$OVNI" emu -l -o "$TMP/o" "$TMP/t"
check "emu on the unsorted trace (sorted in memory)" "$OVNI" emu -l -o "$TMP/u" "$TMP/unsorted"
check_same "gives the same thread timeline" "$TMP/u/thread.prv" "$TMP/o/thread.prv"

# out ROLE MS: "N TOTAL_NS" for the out-of-CPU intervals on the row of the
# thread the program printed as ROLE: N of them last MS ms or more, TOTAL
# is their sum over all; "open" if one never ends.
out() {
	tid=$(awk -v r="$1" '$1 == r { print $2 }' "$TMP/roles")
	row=$(awk -v t="$tid" '/^LEVEL THREAD/ { n = 0; on = 1; next } on && NF { n++; if ($2 ~ "\\." t "$") print n }' "$TMP/o/thread.row")
	awk -F: -v row="$row" -v long=$(($2 * 1000000)) '$1 == 2 && $5 == row {
		for (i = 7; i < NF; i += 2) {
			if ($i != 45) continue
			if ($(i + 1) == 3) { t0 = $6; open = 1 }
			else if (open) { d = $6 - t0; sum += d; if (d >= long) n++; open = 0 }
		}
	} END { if (open) print "open"; else printf "%d %d\n", n, sum }' "$TMP/o/thread.prv"
}
# at_least WHAT ROLE N MS TOTAL_MS: N intervals of MS ms or more, TOTAL_MS in all.
at_least() {
	set -- "$1" "$2" "$3" "$4" "$5" $(out "$2" "$4")
	if [ "${6:-open}" != open ] && [ "$6" -ge "$3" ] && [ "${7:-0}" -ge $(($5 * 1000000)) ]; then
		ok "$1 ($6 of ${4} ms or more, $((${7} / 1000)) us in all)"
	else not_ok "$1 (got: ${6:-nothing} ${7:-})"; fi
}
at_least "the sleeper is out of its CPU for each of its 3 sleeps of 20 ms" sleeper 3 18 54
# The pipe and mutex waits last up to 30 ms, less if the waiter was late to
# block (a loaded machine): half of it is enough to tell they were recorded.
at_least "the pipe reader is out of its CPU while it waits (up to 30 ms)" piper 1 10 15
at_least "the mutex waiter is out of its CPU while it waits (up to 30 ms)" locker 0 1 15
check "the main thread also shows switches" sh -c "test \"\$(awk -F: '\$1 == 2 && \$5 == 1 && \$7 == 45' '$TMP/o/thread.prv' | wc -l)\" -gt 0"

"$OVNI" record --no-kernel -o "$TMP/n" -- "$TMP/blocker" >/dev/null 2>"$TMP/err"
check "--no-kernel: no context switches" sh -c "! '$OVNI' dump '$TMP/n' | grep -Eq ' (KC[OI]|OU\\[) '"
check "--no-kernel: the streams are in order" "$OVNI" sort -c "$TMP/n"
check "--no-kernel: no kernel model required" sh -c "! grep -rq kernel --include=stream.json '$TMP/n'"
"$OVNI" record --events ovni -o "$TMP/e" -- "$TMP/blocker" >/dev/null 2>&1
check "--events without kernel records no switches" sh -c "! '$OVNI' dump '$TMP/e' | grep -q ' KCO '"
"$OVNI" record --events ovni --kernel -o "$TMP/k" -- "$TMP/blocker" >/dev/null 2>&1
check "--kernel records them even so" sh -c "'$OVNI' dump '$TMP/k' 2>/dev/null | grep -q ' KCO '"

# SIGKILL: the switches drained before (at pthread_create) stay, and the
# stream says it needs the kernel model even though the thread never ended.
"$OVNI" record --tmpdir "$TMP/scratch" -o "$TMP/kill" -- "$TMP/blocker" kill >/dev/null 2>"$TMP/err"
check "SIGKILL: the program dies by it" test $? -eq 137
check "SIGKILL: the main thread's switches before pthread_create are there" sh -c "'$OVNI' dump '$TMP/kill' 2>/dev/null | grep -q ' KCO '"
check "SIGKILL: its stream requires the kernel model" sh -c "grep -lq kernel \$(find '$TMP/kill' -name stream.json)"
check "SIGKILL: ovni emu accepts the trace" "$OVNI" emu -o "$TMP" "$TMP/kill"

# A libovni program's ovni_flush also moves the switches to the stream.
if "$OVNI" lib "$TMP/lib" >/dev/null 2>&1; then
	cat >"$TMP/flush.c" <<'C'
#include <signal.h>
#include <unistd.h>
#include <ovni.h>
int main(void) { usleep(20000); ovni_flush(); raise(SIGKILL); return 0; }
C
	"$CC" -I"$TMP/lib" -o "$TMP/flush" "$TMP/flush.c" -L"$TMP/lib" -lovni &&
		"$OVNI" record -o "$TMP/f" -- "$TMP/flush" >/dev/null 2>&1
	check "ovni_flush drains the switches (a SIGKILL right after keeps them)" \
		sh -c "'$OVNI' dump '$TMP/f' 2>/dev/null | grep -q ' KCO '"
	check "that trace is accepted by ovni emu" "$OVNI" emu -o "$TMP" "$TMP/f"
fi

# No switch lost at any rate: 2 threads x 30000 sleeps, through nanosleep
# (drained by the thread after each) and through the bare system call (the
# shim never sees it: only the collector empties the rings). Each thread
# has 30000 KCO or more, nothing is reported dropped, and the reference
# emulator, after its sort, gives the same timelines as ovni emu.
"$CC" -O1 -pthread -o "$TMP/sleeps" "$TESTDIR/record/sleeps.c" || not_ok "sleeps.c builds"
# "KCO SWITCHES ..." for each thread sleeps.c named in $TMP/tids: the KCO
# of its stream in $TMP/dump, and how many times the kernel counted.
kco_and_switches() {
	while read -r _ tid nsw; do
		echo "$(awk -v t="thread.$tid" '$2 == "KCO" && $3 ~ t "$"' "$TMP/dump" | wc -l) $nsw"
	done <"$TMP/tids" | tr '\n' ' '
}
for how in call raw; do
	rm -rf "$TMP/s-$how"
	"$OVNI" record -o "$TMP/s-$how" -- "$TMP/sleeps" 2 30000 $how >"$TMP/tids" 2>"$TMP/err"
	check "2 x 30000 sleeps ($how): exit status" test $? -eq 0
	"$OVNI" dump "$TMP/s-$how" 2>/dev/null >"$TMP/dump"
	# "KCO SWITCHES" of each thread: what the trace has, what the kernel
	# counted from the start of the thread's function, when the shim already
	# records (switches of the thread's start, before its ring opens, are not
	# in the trace: counting them made the bound fail once, 31 short). A
	# sleep whose timer already expired may not switch at all, so the
	# kernel's count may fall short of 30000: 29845 once under the
	# sanitizers on a loaded machine; 29000 still proves the sleeps switch.
	got=$(kco_and_switches)
	check "2 x 30000 sleeps ($how): every switch recorded (KCO, switches: $got)" sh -c "echo $got | awk '{ for (i = 1; i < NF; i += 2) if (\$i + 10 < \$(i + 1) || \$(i + 1) < 29000) exit 1; exit NF != 4 }'"
	check "2 x 30000 sleeps ($how): nothing reported dropped" sh -c "! grep -q dropped '$TMP/err' && ! grep -q dropped '$TMP/dump'"
	rm -rf "$TMP/o-$how" && mkdir "$TMP/o-$how"
	check "2 x 30000 sleeps ($how): ovni emu accepts the trace" "$OVNI" emu -l -o "$TMP/o-$how" "$TMP/s-$how"
	ref_same "2 x 30000 sleeps ($how)" "$TMP/s-$how"
done
# SIGKILL with switches no thread ever wrote: 2 threads x 3000 raw sleeps,
# then the last one kills the process. The switches the collector had
# taken from the rings (all but the last few ms) are in kswitch.spill
# beside each stream, and the recorder's salvage writes them: each thread
# keeps at least half of what the kernel counted (none were kept before).
rm -rf "$TMP/sk"
"$OVNI" record -o "$TMP/sk" -- "$TMP/sleeps" 2 3000 kill >"$TMP/tids" 2>"$TMP/err"
check "SIGKILL after 2 x 3000 raw sleeps: the program dies by it" test $? -eq 137
"$OVNI" dump "$TMP/sk" 2>/dev/null >"$TMP/dump"
got=$(kco_and_switches)
check "SIGKILL after raw sleeps: the switches not yet written are kept (KCO, switches: $got)" sh -c "echo $got | awk '{ for (i = 1; i < NF; i += 2) if (\$i * 2 < \$(i + 1) || \$(i + 1) < 1000) exit 1; exit NF != 4 }'"
check "SIGKILL after raw sleeps: the recorder says it" grep -q "after the [0-9]* context switch events it had not written yet" "$TMP/err"
check "SIGKILL after raw sleeps: no kswitch.spill is left" sh -c "test -z \"\$(find '$TMP/sk' -name kswitch.spill)\""
rm -rf "$TMP/o-sk" && mkdir "$TMP/o-sk"
check "SIGKILL after raw sleeps: ovni emu accepts the trace" "$OVNI" emu -l -o "$TMP/o-sk" "$TMP/sk"
ref_same "SIGKILL after raw sleeps" "$TMP/sk"

# The recorder killed too (SIGKILL to the whole session): kswitch.spill
# stays beside the cut stream, and ovni emu --salvage writes its switches
# in its copy, leaving the trace as it was.
cat >"$TMP/forever.c" <<'C'
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
int main(void) { struct timespec ts = { 0, 10000 }; for (;;) syscall(SYS_nanosleep, &ts, 0); }
C
"$CC" -O1 -o "$TMP/forever" "$TMP/forever.c" || not_ok "forever.c builds"
rm -rf "$TMP/both"
setsid sh -c 'echo $$ >"$1"; exec "$2" record -o "$3" -- "$4" >/dev/null 2>&1' _ "$TMP/sid" "$OVNI" "$TMP/both" "$TMP/forever" &
for i in $(seq 50); do [ -n "$(find "$TMP/both" -name kswitch.spill 2>/dev/null)" ] && break; sleep 0.1; done
sleep 0.5
pkill -9 -s "$(cat "$TMP/sid")"
wait
check "recorder killed too: kswitch.spill is left beside the stream" sh -c "test -n \"\$(find '$TMP/both' -name kswitch.spill)\""
check "recorder killed too: ovni dump reads the events up to the last one (from the staging file, or up to the zeros after them)" \
	sh -c "'$OVNI' dump '$TMP/both' 2>'$TMP/err' | grep -q ' OHx ' && ! '$OVNI' dump '$TMP/both' 2>/dev/null | grep -q UNKNOWN"
check "recorder killed too: and says so" grep -Eq "unfinished \(its thread did not end\): (the [0-9]* zero bytes after its last event are not read|its events from here on are read from its staging file /)" "$TMP/err"
sum_before=$(find "$TMP/both" -type f -exec cat {} + | cksum)
check "recorder killed too: ovni sort refuses the cut stream, naming ovni emu --salvage" \
	sh -c "! '$OVNI' sort '$TMP/both' 2>'$TMP/err' && grep -q 'nothing sorted: .ovni emu --salvage' '$TMP/err'"
rm -rf "$TMP/o-both" && mkdir "$TMP/o-both"
"$OVNI" emu --salvage -o "$TMP/o-both" "$TMP/both" >"$TMP/out" 2>&1
check "recorder killed too: ovni emu --salvage accepts the trace" test $? -eq 0
check "recorder killed too: and writes the switches it finds there" grep -q "after the [0-9]* context switch events it had not written yet" "$TMP/out"
check "recorder killed too: hundreds of them are played" sh -c "grep -Eq 'played [0-9]{3,} events' '$TMP/out'"
check "recorder killed too: the trace is left as it was" test "$(find "$TMP/both" -type f -exec cat {} + | cksum)" = "$sum_before"

# When the kernel does drop records (a one-page ring and no collector, the
# tests' way), each thread's count is said at the end and by ovni dump.
rm -rf "$TMP/small"
OVNI_RECORD_TEST_KERNEL_RING=1 "$OVNI" record -o "$TMP/small" -- "$TMP/sleeps" 2 2000 raw >"$TMP/tids" 2>"$TMP/err"
check "dropped: exit status" test $? -eq 0
for tid in $(awk '{print $2}' "$TMP/tids"); do
	check "dropped: the recorder names thread $tid and its count" grep -Eq "thread\.$tid: the kernel dropped [1-9][0-9]* of its context switch records" "$TMP/err"
	check "dropped: ovni dump names thread $tid and its count" sh -c "'$OVNI' dump '$TMP/small' 2>/dev/null | grep -Eq '^# .*thread\.$tid: the kernel dropped [1-9][0-9]* context switch records'"
done
check "dropped: the summary is still the last line" sh -c "tail -n 1 '$TMP/err' | grep -q 'sleeps exited with status 0'"
rm -rf "$TMP/o" && mkdir "$TMP/o"
check "dropped: ovni emu accepts the trace" "$OVNI" emu -o "$TMP/o" "$TMP/small"

# Refused (as perf_event_paranoid 3 would): one notice for all threads,
# and a trace without switches that needs no sort.
OVNI_RECORD_TEST_KERNEL_DENY=1 "$OVNI" record -o "$TMP/d" -- "$TMP/blocker" >/dev/null 2>"$TMP/err"
check "refused: the program runs to the end" test $? -eq 0
check "refused: exactly one notice for 4 threads" test "$(grep -c 'context switches are not recorded' "$TMP/err")" -eq 1
check "refused: the notice says why (perf_event_paranoid) and that recording goes on" \
	grep -q 'not recorded: perf_event_open: Permission denied: .*perf_event_paranoid.*recording goes on without them' "$TMP/err"
check "refused: the streams are in order" "$OVNI" sort -c "$TMP/d"
check "refused: no thread requires the kernel model" sh -c "! grep -rq kernel --include=stream.json '$TMP/d'"
check "refused: ovni emu accepts the trace" "$OVNI" emu -o "$TMP" "$TMP/d"
done_testing
