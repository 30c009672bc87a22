# ovni sort end to end: the golden sort cases byte for byte, generated
# traces against the reference's ovnisort, -c, -n, the journal under kills,
# pending and damaged journals, read-only traces, damaged streams.
. "$(dirname "$0")/lib.sh"
GEN=$BUILD/tools/gen-unsorted

# same_streams WHAT GOT WANT: every stream.obs under WANT equals GOT's.
same_streams() {
	what=$1 got=$2 want=$3 bad= n=0
	for f in $(cd "$want" && find . -name stream.obs | sort); do
		n=$((n + 1))
		cmp -s "$got/$f" "$want/$f" || bad="$bad $f"
	done
	if [ -z "$bad" ] && [ $n -gt 0 ]; then ok "$what"; else not_ok "$what (differ:${bad:- no streams})"; fi
}

obs() { find "$1" -name stream.obs | sort | head -n 1; }

# --- Golden cases whose steps start with sort. ---
for steps in "$GOLDEN"/*/*/steps; do
	first=$(head -n 1 "$steps")
	case $first in sort | "sort "*) ;; *) continue ;; esac
	dir=$(dirname "$steps")
	name=${dir#"$GOLDEN"/}
	exp=$dir/expected/0-sort
	rm -rf "$TMP/g"
	cp -r "$dir/trace" "$TMP/g"
	if [ -d "$exp/sorted" ]; then
		check "$name: -c finds the trace unsorted" sh -c '! "$1" sort -c "$2"' sh "$OVNI" "$TMP/g"
		check "$name: sort succeeds like the reference" $OVNI $first "$TMP/g"
		same_streams "$name: every stream.obs is byte-identical to the reference's" "$TMP/g" "$exp/sorted"
		check "$name: -c finds the trace sorted" $OVNI sort -c "$TMP/g"
		continue
	fi
	# The reference failed (look-back of 1,000,000 events): -n 1000000 fails the same way.
	check_fails "$name: -n 1000000 fails like the reference" \
		'stream\.obs: offset [0-9]+: .*-n' $OVNI $first -n 1000000 "$TMP/g"
	same_streams "$name: a failed sort leaves the stream untouched" "$TMP/g" "$dir/trace"
	# Without a limit the whole stream is one window: the result is every event in clock order.
	check "$name: without -n the region is sorted" $OVNI $first "$TMP/g"
	check "$name: -c finds the trace sorted" $OVNI sort -c "$TMP/g"
	# Fixed-size events here: same multiset of events, now in order, equal clocks absent.
	od -An -v -tx1 -w12 -j8 "$(obs "$dir/trace")" | sort >"$TMP/before"
	od -An -v -tx1 -w12 -j8 "$(obs "$TMP/g")" | sort >"$TMP/after"
	check_same "$name: the sorted stream holds the same events" "$TMP/after" "$TMP/before"
done

# --- Generated traces: the expected result is every event in clock order. ---
$GEN -n 200000 -r 1000 -k 4 -b 3 -t 3 "$TMP/u" && $GEN -S -n 200000 -r 1000 -k 4 -b 3 -t 3 "$TMP/s" ||
	not_ok "gen-unsorted runs"
$OVNI sort -c "$TMP/u" >"$TMP/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && [ "$(grep -c 'not sorted: the clock goes back at offset' "$TMP/out")" -eq 3 ] &&
	grep -q '^3 of 3 streams NOT sorted' "$TMP/out"; then
	ok "-c names each of the 3 unsorted streams, exit 1"
else
	not_ok "-c names each of the 3 unsorted streams, exit 1 (rc $rc)"
	sed 's/^/#   /' "$TMP/out"
fi
check "sort a 3-stream trace" $OVNI sort "$TMP/u"
same_streams "3 streams, 600 regions: byte-identical to the events in clock order" "$TMP/u" "$TMP/s"
ls -a "$TMP/u"/*/*/* | grep -q sort-journal && not_ok "no journal is left" || ok "no journal is left"

f=$(obs "$TMP/u")
ino=$(stat -c %i "$f")
mtime=$(stat -c %Y.%y "$f")
sleep 0.01
check "sorting a sorted trace succeeds" $OVNI sort "$TMP/u"
[ "$(stat -c %i "$f")" = "$ino" ] && [ "$(stat -c %Y.%y "$f")" = "$mtime" ] && ok "a sorted stream is not written (inode, mtime)" ||
	not_ok "a sorted stream is not written (inode, mtime)"

# Mode and inode kept: written in place.
rm -rf "$TMP/u" && $GEN -n 20000 -r 1000 "$TMP/u"
f=$(obs "$TMP/u")
chmod 640 "$f"
ino=$(stat -c %i "$f")
check "sort a stream of mode 640" $OVNI sort "$TMP/u"
[ "$(stat -c %a "$f")" = 640 ] && ok "the stream keeps its mode" || not_ok "the stream keeps its mode ($(stat -c %a "$f"))"
[ "$(stat -c %i "$f")" = "$ino" ] && ok "the stream was written in place" || not_ok "the stream was written in place"

# Against the reference's ovnisort: regions near and far, several streams, a stream with none.
if [ -x "$REF_BIN/ovnisort" ]; then
	for args in "-n 50000 -r 1000 -k 4 -b 3 -t 2" "-n 60000 -r 997 -k 8 -b 40 -t 3" "-n 30000 -r 5000 -k 1 -b 4000"; do
		rm -rf "$TMP/u" "$TMP/r"
		$GEN $args "$TMP/u" && cp -r "$TMP/u" "$TMP/r"
		"$REF_BIN/ovnisort" "$TMP/r" >/dev/null 2>&1
		check "gen-unsorted $args: sort" $OVNI sort "$TMP/u"
		same_streams "gen-unsorted $args: byte-identical to ovnisort's" "$TMP/u" "$TMP/r"
	done
else
	ok "# SKIP against ovnisort: none in $REF_BIN"
fi

# Regions reaching 150,000 events back: beyond what stays in memory, read again from disk.
rm -rf "$TMP/u" "$TMP/s"
$GEN -n 1000000 -r 200000 -k 5 -b 150000 "$TMP/u" && $GEN -S -n 1000000 -r 200000 -k 5 -b 150000 "$TMP/s"
cp -r "$TMP/u" "$TMP/u0"
check_fails "-n 1000: a region out of reach fails, naming the stream and offset" \
	'thread\.1/stream\.obs: offset [0-9]+: no event with a clock below' $OVNI sort -n 1000 "$TMP/u"
same_streams "-n 1000: the stream is untouched" "$TMP/u" "$TMP/u0"
check "far regions: sort" $OVNI sort "$TMP/u"
same_streams "far regions: byte-identical to the events in clock order" "$TMP/u" "$TMP/s"
rm -rf "$TMP/u" && cp -r "$TMP/u0" "$TMP/u"
check "-n 150010 reaches the far regions" $OVNI sort -n 150010 "$TMP/u"
same_streams "-n 150010: the same result" "$TMP/u" "$TMP/s"

# --- Crashes: the old stream, or a journal that finishes the sort. ---
rm -rf "$TMP/u0" "$TMP/s"
$GEN -n 3000000 -r 1000 "$TMP/u0" && $GEN -S -n 3000000 -r 1000 "$TMP/s"
J=loom.node0/proc.1/thread.1/stream.obs.sort-journal
for phase in journal-created journaled writing written; do
	rm -rf "$TMP/u" && cp -r "$TMP/u0" "$TMP/u"
	OVNI_SORT_TEST_KILL=$phase $OVNI sort "$TMP/u" 2>/dev/null
	rc=$?
	[ $rc -eq 137 ] && ok "killed after '$phase'" || not_ok "killed after '$phase' (rc $rc)"
	if [ $phase = journal-created ]; then
		same_streams "killed after '$phase': the stream is the old one" "$TMP/u" "$TMP/u0"
		[ ! -e "$TMP/u/$J" ] && ok "killed after '$phase': no journal under its final name" ||
			not_ok "killed after '$phase': no journal under its final name"
	else
		[ -e "$TMP/u/$J" ] && ok "killed after '$phase': the journal is pending" ||
			not_ok "killed after '$phase': the journal is pending"
		check_fails "killed after '$phase': dump refuses the stream, naming the journal" \
			"stream\.obs: an interrupted .ovni sort. left .*stream\.obs\.sort-journal; run .ovni sort." $OVNI dump "$TMP/u"
		check_fails "killed after '$phase': emu refuses it too" "sort-journal; run .ovni sort." \
			$OVNI emu -o "$TMP/emu-out" "$TMP/u"
		check_fails "killed after '$phase': sort -c refuses it too" "sort-journal; run .ovni sort." $OVNI sort -c "$TMP/u"
		rm -f "$TMP/u.ovnipack"
		$OVNI pack -o "$TMP/u.ovnipack" "$TMP/u" 2>/dev/null
		check_fails "killed after '$phase': dump of its pack refuses it too" \
			"stream\.obs: an interrupted .ovni sort. left .*stream\.obs\.sort-journal in the archive" \
			$OVNI dump "$TMP/u.ovnipack"
	fi
	check "after the kill at '$phase', sort again" $OVNI sort "$TMP/u"
	same_streams "after the kill at '$phase', the stream is sorted" "$TMP/u" "$TMP/s"
	ls -a "$TMP/u"/*/*/* | grep -q sort-journal && not_ok "after the kill at '$phase', no journal is left" ||
		ok "after the kill at '$phase', no journal is left"
done
for delay in 0.01 0.03 0.06 0.1 0.15 0.25; do
	rm -rf "$TMP/u" && cp -r "$TMP/u0" "$TMP/u"
	$OVNI sort "$TMP/u" 2>/dev/null &
	pid=$!
	sleep $delay
	kill -9 $pid 2>/dev/null
	wait $pid
	$OVNI sort "$TMP/u" 2>/dev/null
	same_streams "SIGKILL after ${delay}s, then sort again: the sorted stream" "$TMP/u" "$TMP/s"
done

# A damaged journal: one line naming it, the stream untouched, the journal kept.
rm -rf "$TMP/u" && cp -r "$TMP/u0" "$TMP/u"
OVNI_SORT_TEST_KILL=journaled $OVNI sort "$TMP/u" 2>/dev/null
cp "$TMP/u/$J" "$TMP/journal"
cp -r "$TMP/u" "$TMP/u1"
printf 'X' | dd of="$TMP/u/$J" bs=1 seek=100 conv=notrunc 2>/dev/null
check_fails "a damaged journal is an error naming it" \
	"stream\.obs\.sort-journal: offset [0-9]+: journal damaged \(bad checksum\); the stream is left as it is" $OVNI sort "$TMP/u"
[ "$(wc -l <"$TMP/.err")" -eq 1 ] && ok "a damaged journal: one line" || not_ok "a damaged journal: one line ($(wc -l <"$TMP/.err"))"
same_streams "a damaged journal: the stream is untouched" "$TMP/u" "$TMP/u1"
[ -e "$TMP/u/$J" ] && ok "a damaged journal is kept" || not_ok "a damaged journal is kept"
head -c 20 "$TMP/journal" >"$TMP/u/$J"
check_fails "a cut journal is an error naming it" "stream\.obs\.sort-journal: offset 20: journal cut short" $OVNI sort "$TMP/u"
same_streams "a cut journal: the stream is untouched" "$TMP/u" "$TMP/u1"
# A journal planted on the sorted stream (killed after writing, before the unlink): the same bytes.
rm -rf "$TMP/u" && cp -r "$TMP/s" "$TMP/u" && cp "$TMP/journal" "$TMP/u/$J"
check "a journal over the already written stream: sort" $OVNI sort "$TMP/u"
same_streams "a journal over the already written stream: still sorted" "$TMP/u" "$TMP/s"
# A leftover journal being written (.tmp): the stream was not touched; removed.
rm -rf "$TMP/u" && cp -r "$TMP/u0" "$TMP/u" && cp "$TMP/journal" "$TMP/u/$J.tmp"
check "a leftover journal.tmp: sort" $OVNI sort "$TMP/u"
same_streams "a leftover journal.tmp: sorted" "$TMP/u" "$TMP/s"
[ ! -e "$TMP/u/$J.tmp" ] && ok "the leftover journal.tmp is gone" || not_ok "the leftover journal.tmp is gone"
rm -rf "$TMP/u1" "$TMP/journal"

# --- Damaged streams: stop at the first, in path order. ---
rm -rf "$TMP/u0" "$TMP/s" "$TMP/u"
$GEN -n 20000 -r 1000 -t 2 "$TMP/u0" && $GEN -S -n 20000 -r 1000 -t 2 "$TMP/s"
t1=loom.node0/proc.1/thread.1/stream.obs
t2=loom.node0/proc.1/thread.2/stream.obs
cp -r "$TMP/u0" "$TMP/u"
truncate -s -3 "$TMP/u/$t2"
cp "$TMP/u/$t2" "$TMP/t2"
check_fails "a cut stream fails, naming it and the offset" \
	"thread\.2/stream\.obs: offset [0-9]+: .*cut short|incomplete" $OVNI sort "$TMP/u"
check_same "the streams before the damaged one are sorted" "$TMP/u/$t1" "$TMP/s/$t1"
check_same "the damaged stream is untouched" "$TMP/u/$t2" "$TMP/t2"
rm -rf "$TMP/u" && cp -r "$TMP/u0" "$TMP/u"
truncate -s -3 "$TMP/u/$t1"
check_fails "a damaged first stream stops the sort (-j 1)" "thread\.1/stream\.obs: offset" $OVNI sort -j 1 "$TMP/u"
check_same "-j 1: the streams after the damaged one are untouched" "$TMP/u/$t2" "$TMP/u0/$t2"
rm -rf "$TMP/u" && cp -r "$TMP/s" "$TMP/u"
truncate -s -3 "$TMP/u/$t1"
check_fails "-c on a sorted but cut stream: exit 2 with the offset" "thread\.1/stream\.obs: offset" \
	sh -c '"$1" sort -c "$2"; [ $? -eq 2 ] && exit 3; exit 0' sh "$OVNI" "$TMP/u"

# --- Read-only traces: refused, untouched; -c still works. ---
rm -rf "$TMP/u" && cp -r "$TMP/u0" "$TMP/u"
if [ "$(id -u)" -ne 0 ]; then
	chmod -R a-w "$TMP/u"
	ro() { "$@"; }
elif unshare -rm true 2>/dev/null; then
	ro() { unshare -rm sh -c 'mount --bind -o ro "$0" "$0" && exec "$@"' "$TMP/u" "$@"; }
else
	ro() { :; }
	not_ok "a read-only trace can be made (no unshare as root)"
fi
check_fails "a read-only trace is refused with one clear line" \
	"stream\.obs: cannot write a journal beside the stream: (Read-only file system|Permission denied)" ro $OVNI sort "$TMP/u"
same_streams "the read-only trace is untouched" "$TMP/u" "$TMP/u0"
ro $OVNI sort -c "$TMP/u" >/dev/null 2>&1
rc=$?
[ $rc -eq 1 ] && ok "-c checks a read-only trace (exit 1: unsorted)" || not_ok "-c checks a read-only trace (rc $rc)"
chmod -R u+w "$TMP/u"

# --- Several streams at a time (-j): the same bytes as one after the other. ---
rm -rf "$TMP/u0" "$TMP/s" "$TMP/u" "$TMP/u1"
$GEN -n 60000 -r 1000 -k 4 -b 3 -t 6 "$TMP/u0" && $GEN -S -n 60000 -r 1000 -k 4 -b 3 -t 6 "$TMP/s"
$OVNI sort -c -j 1 "$TMP/u0" >"$TMP/c1" 2>&1
rc1=$?
$OVNI sort -c -j 3 "$TMP/u0" >"$TMP/c3" 2>&1
rc3=$?
same "-c -j 3: exit 1, as -c -j 1" "$rc3 $rc1" "1 1"
check_same "-c -j 3: the lines of -c -j 1, in path order" "$TMP/c3" "$TMP/c1"
same "-c -j 3: a line for each of the 6 streams, then the summary" \
	"$(grep -c 'not sorted: the clock goes back' "$TMP/c3") $(tail -n 1 "$TMP/c3")" "6 6 of 6 streams NOT sorted"
for j in 1 3 0; do
	rm -rf "$TMP/u" && cp -r "$TMP/u0" "$TMP/u"
	check "-j $j: 6 streams sorted" $OVNI sort -j $j "$TMP/u"
	same_streams "-j $j: every stream byte-identical to the events in clock order" "$TMP/u" "$TMP/s"
	same "-j $j: the summary line" "$(tail -n 1 "$TMP/.out")" "ovni sort: 354 regions in 6 streams; 6 streams sorted in place"
done
# A damaged stream among them: it fails, named; every other stream is
# sorted whole or left as it was, and sorting again after a repair ends it.
rm -rf "$TMP/u" && cp -r "$TMP/u0" "$TMP/u"
t3=loom.node0/proc.1/thread.3/stream.obs
truncate -s -3 "$TMP/u/$t3"
check_fails "-j 3: a damaged stream fails, naming it" "thread\.3/stream\.obs: offset" $OVNI sort -j 3 "$TMP/u"
bad=
for f in $(cd "$TMP/u0" && find . -name stream.obs | sort); do
	case $f in */thread.3/*) continue ;; esac
	cmp -s "$TMP/u/$f" "$TMP/s/$f" || cmp -s "$TMP/u/$f" "$TMP/u0/$f" || bad="$bad $f"
done
same "-j 3 and a damaged stream: the others sorted whole or untouched" "$bad" ""
same "-j 3 and a damaged stream: no journal left" "$(find "$TMP/u" -name '*journal*' | wc -l | tr -d ' ')" 0
check_fails "-j wants a number" "the number of jobs \(-j\) must be a number from 0 to 1024, not 'x'" $OVNI sort -j x "$TMP/u"
rm -rf "$TMP/u0" "$TMP/s" "$TMP/u"

# --- Arguments. ---
# Two sorts of one trace at once: the second waits for the first (a lock
# on each stream), both succeed, and the streams are those of one sort.
rm -rf "$TMP/cc" "$TMP/cc1"
"$GEN" -n 2000000 -t 2 -r 1000 -k 4 -b 3 "$TMP/cc" >/dev/null && cp -R "$TMP/cc" "$TMP/cc1"
$OVNI sort "$TMP/cc1" >/dev/null 2>&1
$OVNI sort "$TMP/cc" >"$TMP/cc.a" 2>&1 &
$OVNI sort "$TMP/cc" >"$TMP/cc.b" 2>&1
rb=$?
wait $!
same "two sorts at once: both succeed" "$? $rb" "0 0"
same_streams "two sorts at once: the streams of one sort" "$TMP/cc" "$TMP/cc1"
same "two sorts at once: no journal left" "$(find "$TMP/cc" -name '*journal*' | wc -l | tr -d ' ')" 0
rm -rf "$TMP/cc" "$TMP/cc1"

# Readers and a sort of one trace: a reader waits while a sort holds a
# stream (the sort's lock taken here by flock(1), as sort takes it), and a
# sort waits while a reader holds one.
# wait_for FILE TEXT: up to 10 s for TEXT to show in FILE.
wait_for() {
	i=0
	while [ $i -lt 100 ] && ! grep -q "$2" "$1" 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
}
# hold MODE FILE: flock(1) holds FILE (-x or -s) until $TMP/lk.go exists.
hold() {
	rm -f "$TMP/lk.go" "$TMP/lk.held"
	flock "$1" "$2" sh -c 'echo held >"$1.held"; while [ ! -e "$1.go" ]; do sleep 0.05; done' sh "$TMP/lk" &
	wait_for "$TMP/lk.held" held
	[ -e "$TMP/lk.held" ] || not_ok "flock(1) holds $2"
}
# blocked MODE FILE WHAT BEFORE CMD...: CMD runs while flock(1) holds FILE
# (MODE -x or -s); WHAT: it says it waits and does; then the shell command
# BEFORE runs and the lock goes. CMD's status in $rc, its output in lk.out
# and lk.err.
blocked() {
	hold "$1" "$2"
	what=$3 before=$4
	shift 4
	"$@" >"$TMP/lk.out" 2>"$TMP/lk.err" &
	p=$!
	wait_for "$TMP/lk.err" waiting
	if kill -0 $p 2>/dev/null; then ok "$what"; else not_ok "$what (it did not wait)"; fi
	eval "$before"
	: >"$TMP/lk.go"
	wait $p
	rc=$?
	wait
}
if command -v flock >/dev/null; then
	rm -rf "$TMP/lk"
	"$GEN" -S -n 20000 -t 2 "$TMP/lk" >/dev/null
	lk=$(obs "$TMP/lk")
	$OVNI dump "$TMP/lk" >"$TMP/lk.want" 2>/dev/null
	blocked -x "$lk" "a reader waits while a sort holds a stream" : $OVNI dump "$TMP/lk"
	same "then it reads the stream" "$rc $(cmp -s "$TMP/lk.out" "$TMP/lk.want" && echo same)" "0 same"
	check_err "its wait is one line naming the stream" lk 'stream\.obs: another ovni command is rewriting it; waiting for it to end'
	# A sort that dies while a reader waits leaves its journal: the reader
	# must not read the half-written stream.
	blocked -x "$lk" "a reader waits for a sort that then dies" ': >"$lk.sort-journal"' $OVNI dump "$TMP/lk"
	[ $rc -ne 0 ] && ok "then it fails (rc $rc)" || not_ok "then it fails (rc 0)"
	check_err "it names the journal the sort left" lk \
		'an interrupted `ovni sort` left .*stream\.obs\.sort-journal'
	rm -f "$lk.sort-journal"
	# pack reads every file of the trace the same way.
	for how in "" --tar; do
		blocked -x "$lk" "pack ${how:+$how }waits while a sort holds a stream" : \
			$OVNI pack $how -o "$TMP/lk.pack" "$TMP/lk"
		same "then it packs" $rc 0
		rm -f "$TMP/lk.pack"
	done
	# An output being read (ovni pack of a trace holding the last run's
	# timelines): emu waits before it writes over it, then writes it whole.
	"$BUILD/tools/gen-trace" -n 20000 -t 2 "$TMP/lk.t" >/dev/null
	"$OVNI" emu -o "$TMP/lk.emu" "$TMP/lk.t" >/dev/null 2>&1
	cp "$TMP/lk.emu/thread.prv" "$TMP/lk.want"
	blocked -s "$TMP/lk.emu/thread.prv" "emu waits while its output is read" : $OVNI emu -o "$TMP/lk.emu" "$TMP/lk.t"
	same "then it writes it" "$rc $(cmp -s "$TMP/lk.emu/thread.prv" "$TMP/lk.want" && echo same)" "0 same"
	check_err "its wait is one line naming the file" lk 'thread\.prv: another ovni command is reading or writing it; waiting'
	# A quiet command (report prints no notes) still says why it waits.
	blocked -x "$(obs "$TMP/lk.t")" "report waits while a sort holds a stream" : $OVNI report "$TMP/lk.t"
	check_err "and says so, though quiet" lk 'warning: .*stream\.obs: another ovni command is rewriting it; waiting'
	# emu --salvage copies a cut stream to end it: under the same lock.
	rm -rf "$TMP/lk.c" "$TMP/lk.emu2" && cp -r "$TMP/lk.t" "$TMP/lk.c"
	cut=$(obs "$TMP/lk.c")
	sed -i 's/"finished": 1/"finished": 0/' "${cut%.obs}.json"
	blocked -x "$cut" "emu --salvage waits while a sort holds the stream it copies" : \
		$OVNI emu --salvage -o "$TMP/lk.emu2" "$TMP/lk.c"
	same "then it ends the copy and emulates it" "$rc $(grep -c 'unfinished: the thread is ended' "$TMP/lk.err")" "0 1"
	# A reader holds a stream: the sort waits, then sorts.
	rm -rf "$TMP/lk"
	"$GEN" -n 20000 -t 2 -r 100 -k 4 "$TMP/lk" >/dev/null
	lk=$(obs "$TMP/lk")
	blocked -s "$lk" "a sort waits while a reader holds a stream" : $OVNI sort "$TMP/lk"
	same "then it sorts" $rc 0
	check_err "its wait is one line naming the stream" lk 'stream\.obs: another ovni command is reading or sorting it; waiting'
	check "the trace is sorted" $OVNI sort -c "$TMP/lk"
	rm -rf "$TMP/lk"*
else
	not_ok "flock(1) to test readers against a sort"
fi

check_fails "-n 0 is refused" "-n wants a number" $OVNI sort -n 0 "$TMP/u"
check_fails "-n x is refused" "-n wants a number" $OVNI sort -n x "$TMP/u"
check_fails "a missing trace is an error" "nothing-here" $OVNI sort "$TMP/nothing-here"
check_fails "no trace is an error" "expected one trace directory" $OVNI sort
done_testing
