# ovni pack / unpack: round trips (bytes, modes, times), damaged archives,
# unpacking that stays inside its directory, --tar, --list, --verify,
# version 1 archives, and sizes: never larger than --tar on real traces.
. "$(dirname "$0")/lib.sh"
GEN=$BUILD/tools/gen-trace

# meta DIR: one line per entry under DIR (not DIR itself): path, type,
# mode, mtime (to the second: what an archive keeps), size, link target.
meta() { (cd "$1" && find . -mindepth 1 -printf '%P %y %m %Ts %s %l\n' | LC_ALL=C sort); }
# meta_ns DIR: the same with the mtime's nanoseconds (older archives kept them).
meta_ns() { (cd "$1" && find . -mindepth 1 -printf '%P %y %m %T@ %s %l\n' | LC_ALL=C sort); }

# roundtrip WHAT DIR [PACK OPTIONS]: pack, unpack, same bytes and metadata.
roundtrip() {
	what=$1; dir=$2; shift 2
	rm -rf "$TMP/rt" "$TMP/rt.ovnipack"
	if ! "$OVNI" pack "$@" -o "$TMP/rt.ovnipack" "$dir" 2>"$TMP/err" ||
	   ! "$OVNI" unpack -C "$TMP/rt" "$TMP/rt.ovnipack" 2>>"$TMP/err"; then
		not_ok "$what: pack and unpack"; sed 's/^/#   /' "$TMP/err" | head -5; return
	fi
	if diff -r "$dir" "$TMP/rt" >/dev/null && [ "$(meta "$dir")" = "$(meta "$TMP/rt")" ]; then
		ok "$what: round trip, bytes, modes and times"
	else
		not_ok "$what: round trip, bytes, modes and times"
		diff "$(meta "$dir")" "$(meta "$TMP/rt")" 2>&1 | head -5 | sed 's/^/#   /'
	fi
}

n=0; bad=0
for d in "$GOLDEN"/*/*/trace; do
	n=$((n + 1))
	rm -rf "$TMP/g" "$TMP/g.ovnipack"
	"$OVNI" pack -o "$TMP/g.ovnipack" "$d" 2>/dev/null && "$OVNI" unpack -C "$TMP/g" "$TMP/g.ovnipack" 2>/dev/null &&
		diff -r "$d" "$TMP/g" >/dev/null && [ "$(meta "$d")" = "$(meta "$TMP/g")" ] ||
		{ bad=$((bad + 1)); echo "#   golden round trip failed: $d"; }
done
[ "$n" -gt 0 ] && [ "$bad" -eq 0 ] && ok "every golden trace ($n) round-trips with modes and times" ||
	not_ok "golden round trips: $bad of $n failed"

# Generated traces: each kind, odd modes and times, a link, an empty file,
# a file that is not a stream named stream.obs, threads and levels.
"$GEN" -n 60000 -t 3 -k nanos6 "$TMP/n6" >/dev/null
"$GEN" -n 60000 -t 2 -k kernel "$TMP/kern" >/dev/null
"$GEN" -n 60000 -t 2 -k mark "$TMP/mark" >/dev/null
t=$TMP/n6/loom.node0
j=$(find "$t" -name stream.json | sort | head -1)
chmod 0640 "$j"
touch -d '2001-02-03 04:05:06.123456789' "$(find "$t" -name stream.obs | head -1)"
: >"$TMP/n6/empty"
head -c 100000 /dev/urandom >"$TMP/n6/noise"
mkdir "$TMP/n6/sub" && head -c 3000001 /dev/urandom >"$TMP/n6/sub/stream.obs"
ln -s loom.node0 "$TMP/n6/link"
roundtrip "nanos6 kind with extras" "$TMP/n6"
roundtrip "nanos6 kind, -T 3 -l 1" "$TMP/n6" -T 3 -l 1
roundtrip "kernel kind (unsorted clocks)" "$TMP/kern" -l 9
roundtrip "mark kind" "$TMP/mark" -T 2
"$OVNI" pack -o "$TMP/t1.ovnipack" "$TMP/kern" && "$OVNI" pack -T 4 -o "$TMP/t4.ovnipack" "$TMP/kern"
check_same "-T 4 writes the same archive as -T 1" "$TMP/t4.ovnipack" "$TMP/t1.ovnipack"
# Times are kept to the second: a copy whose times differ only below the
# second packs to the same bytes, and unpacks with whole seconds.
rm -rf "$TMP/kern2" && cp -a "$TMP/kern" "$TMP/kern2" &&
	find "$TMP/kern2" -exec touch -h -d "@$(stat -c %Y "$TMP/kern").987654321" {} + &&
	find "$TMP/kern" -exec touch -h -d "@$(stat -c %Y "$TMP/kern").123" {} + &&
	"$OVNI" pack -o "$TMP/t1.ovnipack" "$TMP/kern" && "$OVNI" pack -o "$TMP/t2.ovnipack" "$TMP/kern2"
check_same "times that differ below the second: the same archive" "$TMP/t2.ovnipack" "$TMP/t1.ovnipack"
rm -rf "$TMP/kern3" && "$OVNI" unpack -C "$TMP/kern3" "$TMP/t2.ovnipack" &&
	[ "$(meta "$TMP/kern3")" = "$(meta "$TMP/kern2")" ] && ! meta_ns "$TMP/kern3" | grep -qv ' [0-9]*\.0* ' &&
	ok "unpack: times to the second, nanoseconds zero" || not_ok "unpack: times to the second, nanoseconds zero"
"$OVNI" pack -o "$TMP/over.ovnipack" "$TMP/n6" && "$OVNI" pack -o "$TMP/over.ovnipack" "$TMP/kern" &&
	"$OVNI" pack --tar -o "$TMP/over.tar.zst" "$TMP/n6" && "$OVNI" pack --tar -o "$TMP/over.tar.zst" "$TMP/kern" &&
	"$OVNI" pack --tar -o "$TMP/fresh.tar.zst" "$TMP/kern"
check_same "-o over a bigger archive: the same bytes as a fresh one" "$TMP/over.ovnipack" "$TMP/t1.ovnipack"
check_same "--tar -o over a bigger archive: the same bytes as a fresh one" "$TMP/over.tar.zst" "$TMP/fresh.tar.zst"
s1=$(wc -c <"$TMP/t1.ovnipack"); s0=$(du -b -s "$TMP/kern" | cut -f1)
[ "$s1" -lt $((s0 / 4)) ] && ok "streams compress (kernel kind: $s0 -> $s1 bytes)" || not_ok "streams compress ($s0 -> $s1)"

# Default names, --list, --verify.
cp -r "$TMP/mark" "$TMP/dflt"
"$OVNI" pack "$TMP/dflt/" && [ -f "$TMP/dflt.ovnipack" ] && ok "default archive name TRACEDIR.ovnipack" ||
	not_ok "default archive name TRACEDIR.ovnipack"
rm -f "$TMP/dflt.ovnipack"
(cd "$TMP/dflt" && "$OVNI" pack .) && [ -f "$TMP/dflt.ovnipack" ] && [ -z "$(find "$TMP/dflt" -name '*ovnipack')" ] &&
	ok "pack . inside the trace: the archive is TRACEDIR.ovnipack beside it" ||
	not_ok "pack . inside the trace: the archive is TRACEDIR.ovnipack beside it"
mv "$TMP/dflt" "$TMP/dflt.orig"
"$OVNI" unpack "$TMP/dflt.ovnipack" && diff -r "$TMP/dflt.orig" "$TMP/dflt" >/dev/null &&
	ok "unpack without -C restores TRACEDIR" || not_ok "unpack without -C restores TRACEDIR"
"$OVNI" pack -o "$TMP/n6.ovnipack" "$TMP/n6" && "$OVNI" pack --list "$TMP/n6.ovnipack" >"$TMP/list"
grep -q "^f 0640 .* ${j#$TMP/n6/}\$" "$TMP/list" && grep -q '^l .* link -> loom.node0$' "$TMP/list" &&
	grep -q '^d .* loom.node0/$' "$TMP/list" && ok "--list shows files, modes, directories and links" ||
	{ not_ok "--list shows files, modes, directories and links"; head -5 "$TMP/list" | sed 's/^/#   /'; }
check "--verify passes a good archive" "$OVNI" pack --verify "$TMP/t1.ovnipack"

# Damaged archives: one line naming the member and offset, never a crash.
A=$TMP/t1.ovnipack
size=$(wc -c <"$A")
flip() { # flip SRC DST OFFSET
	cp "$1" "$2"
	b=$(od -An -tu1 -j "$3" -N1 "$2" | tr -d ' ')
	printf "$(printf '\\%03o' $(((b ^ 0x55) & 255)))" | dd of="$2" bs=1 seek="$3" conv=notrunc 2>/dev/null
}
flip "$A" "$TMP/flip.ovnipack" $((size / 2))
check_fails "a flipped byte in a block: --verify names member and offset" \
	'flip.ovnipack: offset [0-9]+: member loom.node0/.*stream.obs, block [0-9]+: ' "$OVNI" pack --verify "$TMP/flip.ovnipack"
check_fails "a flipped byte in a block: unpack fails naming member and offset" \
	'offset [0-9]+: member .*stream.obs' "$OVNI" unpack -C "$TMP/fl" "$TMP/flip.ovnipack"
bad_member=$(sed -n 's/.*member \([^,]*\), block.*/\1/p' "$TMP/.err" | head -1)
[ -n "$bad_member" ] && [ ! -e "$TMP/fl/$bad_member" ] && ok "the damaged member is not left half written" ||
	not_ok "the damaged member is not left half written ($bad_member)"
flip "$A" "$TMP/flipidx.ovnipack" $((size - 40))
check_fails "a flipped byte in the index" 'offset [0-9]+: index checksum mismatch' "$OVNI" pack --verify "$TMP/flipidx.ovnipack"
# A small trace's only block rides in the index's frame (version 3).
"$GEN" -n 40 -t 2 "$TMP/tiny" >/dev/null
roundtrip "a trace of one small block" "$TMP/tiny"
"$OVNI" pack -o "$TMP/tiny.ovnipack" "$TMP/tiny"
tsize=$(wc -c <"$TMP/tiny.ovnipack"); zlen=$(od -An -tu4 -j $((tsize - 24)) -N4 "$TMP/tiny.ovnipack" | tr -d ' ')
[ $((16 + zlen + 24)) -eq "$tsize" ] && ok "a small trace's only block rides in the index's frame" ||
	not_ok "a small trace's only block rides in the index's frame ($tsize bytes, index frame $zlen)"
flip "$TMP/tiny.ovnipack" "$TMP/tinyflip.ovnipack" $((16 + zlen / 2))
check_fails "a flipped byte in a small trace's only frame" 'tinyflip.ovnipack: offset 16: index checksum mismatch' \
	"$OVNI" pack --verify "$TMP/tinyflip.ovnipack"
# ...but not when the index is big: the frame would lose the small inputs' level.
"$GEN" -n 20 -l 2 -p 50 -t 10 -k pause "$TMP/wide" >/dev/null
head -c $((1048576 + 102400)) /dev/urandom >"$TMP/wide/big.bin"
roundtrip "1000 streams and a last block of 100 KiB" "$TMP/wide"
"$OVNI" pack -o "$TMP/wide.ovnipack" "$TMP/wide"
set -- $(tail -c 24 "$TMP/wide.ovnipack" | od -An -tu4 | head -1)
[ "$2" = "$3" ] && ok "the last block goes alone when the index is big" ||
	not_ok "the last block goes alone when the index is big (frame content $2, index $3)"
flip "$A" "$TMP/flipend.ovnipack" $((size - 20))
check_fails "a flipped byte in the trailer" 'offset [0-9]+: ' "$OVNI" pack --list "$TMP/flipend.ovnipack"
head -c $((size - 1000)) "$A" >"$TMP/trunc.ovnipack"
check_fails "a truncated archive" 'trunc.ovnipack: offset [0-9]+: no trailer' "$OVNI" unpack -C "$TMP/tr" "$TMP/trunc.ovnipack"
head -c 10 "$A" >"$TMP/short.ovnipack"
check_fails "an archive cut in its header" 'short.ovnipack: offset [0-9]+: truncated' "$OVNI" pack --list "$TMP/short.ovnipack"
flip "$A" "$TMP/magic.ovnipack" 0
check_fails "a wrong magic" 'magic.ovnipack: offset 0: not a pack archive' "$OVNI" pack --verify "$TMP/magic.ovnipack"
flip "$A" "$TMP/ver.ovnipack" 8
check_fails "a wrong version" 'ver.ovnipack: offset 8: pack format version [0-9]+, this ovni reads versions 1 to 3' "$OVNI" pack --verify "$TMP/ver.ovnipack"
# every single-byte flip in the first blocks and the index: an error, never a crash or silence
bad=0
for off in 12 16 20 30 40 47 50 60 70 90 130 $((size - 30)) $((size - 60)) $((size - 90)); do
	flip "$A" "$TMP/f.ovnipack" $off
	"$OVNI" pack --verify "$TMP/f.ovnipack" >/dev/null 2>&1
	[ $? -eq 1 ] || bad=$((bad + 1))
done
[ $bad -eq 0 ] && ok "flips in block headers and data are all caught" || not_ok "$bad flips not caught"

# Unpacking stays inside its directory and overwrites nothing by default.
rm -rf "$TMP/ex"
"$OVNI" unpack -C "$TMP/ex" "$TMP/t1.ovnipack"
check_fails "an existing file is not overwritten" 'already exists \(--force overwrites\)' "$OVNI" unpack -C "$TMP/ex" "$TMP/t1.ovnipack"
f=$(find "$TMP/ex" -name stream.obs | head -1)
echo changed >"$f"
check "--force overwrites" "$OVNI" unpack --force -C "$TMP/ex" "$TMP/t1.ovnipack"
diff -r "$TMP/kern" "$TMP/ex" >/dev/null && ok "--force restores the bytes" || not_ok "--force restores the bytes"
mkdir -p "$TMP/evil/d"; echo x >"$TMP/evil/d/f"
ln -s ../outside "$TMP/evil/up"
"$OVNI" pack -o "$TMP/evil.ovnipack" "$TMP/evil"
check_fails "a link pointing out is refused" 'member up: refusing a link pointing out' "$OVNI" unpack -C "$TMP/evilx" "$TMP/evil.ovnipack"
rm "$TMP/evil/up"; ln -s /etc/passwd "$TMP/evil/abs"
"$OVNI" pack -o "$TMP/evil2.ovnipack" "$TMP/evil"
check_fails "an absolute link is refused" 'member abs: refusing a link pointing out' "$OVNI" unpack -C "$TMP/evilx2" "$TMP/evil2.ovnipack"
rm "$TMP/evil/abs"
"$OVNI" pack -o "$TMP/evil3.ovnipack" "$TMP/evil"
mkdir -p "$TMP/evilx3" "$TMP/elsewhere"; ln -s "$TMP/elsewhere" "$TMP/evilx3/d"
check_fails "an existing link in the way is not followed" 'member d: .*/d already exists' \
	"$OVNI" unpack -C "$TMP/evilx3" "$TMP/evil3.ovnipack"
rm -rf "$TMP/evil/d"; mkdir -p "$TMP/evil/d/e"; echo x >"$TMP/evil/d/e/f"
"$OVNI" pack -o "$TMP/evil4.ovnipack" "$TMP/evil"
rm "$TMP/evilx3/d"; mkdir "$TMP/evilx3/d"; ln -s "$TMP/elsewhere" "$TMP/evilx3/d/e"
check "--force replaces a link in the way" "$OVNI" unpack --force -C "$TMP/evilx3" "$TMP/evil4.ovnipack"
[ -d "$TMP/evilx3/d/e" ] && [ ! -L "$TMP/evilx3/d/e" ] && ok "the link became the directory" || not_ok "the link became the directory"
[ -z "$(ls "$TMP/elsewhere")" ] && ok "nothing was written through the link" || not_ok "nothing was written through the link"
mkfifo "$TMP/fifo" && {
	check_fails "a FIFO is not read as an archive (no hang)" 'fifo: offset 0: not a regular file' timeout 10 "$OVNI" pack --list "$TMP/fifo"
	check_fails "dump does not hang on a FIFO" 'fifo: not a trace directory' timeout 10 "$OVNI" dump "$TMP/fifo"
}
check_fails "a directory is not an archive" 'not a regular file|cannot open' "$OVNI" unpack -C "$TMP/x" "$TMP/evil"
check_fails "pack of a missing directory says why, as the readers do" \
	"cannot open trace $TMP/missing: No such file or directory" "$OVNI" pack -o "$TMP/missing.ovnipack" "$TMP/missing"
check_fails "unpack without .ovnipack suffix needs -C" 'say where to extract with -C DIR' "$OVNI" unpack "$TMP/trunc"

# --tar: standard tools extract it.
if tar --help 2>/dev/null | grep -q -- --zstd && command -v zstd >/dev/null; then
	"$OVNI" pack --tar -T 2 -o "$TMP/n6.tar.zst" "$TMP/n6"
	mkdir "$TMP/untar" && tar --zstd -xf "$TMP/n6.tar.zst" -C "$TMP/untar" &&
		diff -r "$TMP/n6" "$TMP/untar" >/dev/null && [ "$(meta "$TMP/n6" | cut -d' ' -f1-3,5-)" = "$(meta "$TMP/untar" | cut -d' ' -f1-3,5-)" ] &&
		ok "--tar: tar --zstd -xf extracts the same files" || not_ok "--tar: tar --zstd -xf extracts the same files"
	tar --zstd -tvf "$TMP/n6.tar.zst" --full-time 2>/dev/null | grep -q '2001-02-03 04:05:06' &&
		ok "--tar keeps modification times" || not_ok "--tar keeps modification times"
	# names past 100 bytes go in the ustar prefix; past what ustar holds, an error
	a60=$(printf 'a%.0s' $(seq 1 60)); b60=$(printf 'b%.0s' $(seq 1 60)); f90=$(printf 'f%.0s' $(seq 1 90))
	mkdir -p "$TMP/lp/$a60/$b60" && echo hi >"$TMP/lp/$a60/$b60/$f90"
	"$OVNI" pack --tar -o "$TMP/lp.tar.zst" "$TMP/lp" && mkdir "$TMP/lpx" && tar --zstd -xf "$TMP/lp.tar.zst" -C "$TMP/lpx" &&
		diff -r "$TMP/lp" "$TMP/lpx" >/dev/null && ok "--tar: a 213-byte path goes through the ustar prefix" ||
		not_ok "--tar: a 213-byte path goes through the ustar prefix"
	mkdir -p "$TMP/lp/$a60/$b60/$a60/$b60" && echo hi >"$TMP/lp/$a60/$b60/$a60/$b60/$f90"
	check_fails "--tar: a path ustar cannot hold is an error" 'path or link target too long for ustar' "$OVNI" pack --tar -o "$TMP/lp2.tar.zst" "$TMP/lp"
	[ ! -e "$TMP/lp2.tar.zst" ] && ok "no partial .tar.zst is left" || not_ok "no partial .tar.zst is left"
else
	ok "# SKIP --tar: no tar with --zstd or no zstd here"
fi

# Direct reading: dump, top and emu take the archive where they take the
# directory and give the same results (emu: byte-identical Paraver files).
n=0; bad=0; emu_ok=0
for d in "$GOLDEN"/*/*/trace; do
	n=$((n + 1))
	rm -rf "$TMP/e1" "$TMP/e2" "$TMP/g.ovnipack"; mkdir "$TMP/e1" "$TMP/e2"
	"$OVNI" pack -o "$TMP/g.ovnipack" "$d"
	"$OVNI" dump -x "$d" >"$TMP/d1" 2>/dev/null; r1=$?
	"$OVNI" dump -x "$TMP/g.ovnipack" >"$TMP/d2" 2>/dev/null; r2=$?
	[ $r1 = $r2 ] && cmp -s "$TMP/d1" "$TMP/d2" || { bad=$((bad + 1)); echo "#   dump differs on $d"; }
	"$OVNI" top "$d" >"$TMP/d1" 2>/dev/null; r1=$?
	"$OVNI" top "$TMP/g.ovnipack" >"$TMP/d2" 2>/dev/null; r2=$?
	[ $r1 = $r2 ] && cmp -s "$TMP/d1" "$TMP/d2" || { bad=$((bad + 1)); echo "#   top differs on $d"; }
	"$OVNI" emu -o "$TMP/e1" "$d" >/dev/null 2>"$TMP/ee1"; r1=$?
	"$OVNI" emu -o "$TMP/e2" "$TMP/g.ovnipack" >/dev/null 2>"$TMP/ee2"; r2=$?
	# the same messages, but for the trace's name and the timings
	sed -i "s|$d|T|g; s|$TMP/e1|O|g; /played .* events in/d" "$TMP/ee1"
	sed -i "s|$TMP/g.ovnipack|T|g; s|$TMP/e2|O|g; /played .* events in/d" "$TMP/ee2"
	[ $r1 = $r2 ] && diff -r "$TMP/e1" "$TMP/e2" >/dev/null && cmp -s "$TMP/ee1" "$TMP/ee2" ||
		{ bad=$((bad + 1)); echo "#   emu differs on $d"; diff "$TMP/ee1" "$TMP/ee2" | head -3; }
	[ $r1 = 0 ] && [ -s "$TMP/e2/thread.prv" ] && emu_ok=$((emu_ok + 1))
done
[ "$bad" -eq 0 ] && [ "$emu_ok" -gt 0 ] &&
	ok "dump, top and emu on the archive = on the directory, every golden trace ($n; $emu_ok emulated)" ||
	not_ok "direct reading: $bad differences on $n golden traces ($emu_ok emulated)"

# Unsorted streams (kernel kind) are sorted in memory by emu from the archive too.
mkdir "$TMP/k1" "$TMP/k2"
"$OVNI" emu -o "$TMP/k1" "$TMP/kern" 2>/dev/null && "$OVNI" emu -o "$TMP/k2" "$TMP/t1.ovnipack" 2>/dev/null &&
	[ -s "$TMP/k2/thread.prv" ] && diff -r "$TMP/k1" "$TMP/k2" >/dev/null &&
	ok "emu on a packed unsorted trace = on the directory" || not_ok "emu on a packed unsorted trace = on the directory"

# Clock offsets come from the archive; emu needs -o; sort refuses.
"$GEN" -n 2000 -t 2 -l 2 -k pause "$TMP/two" >/dev/null
printf 'rank hostname offset_median offset_mean offset_std\n0 node0 0 0 0\n1 node1 7000 7000.0 1.0\n' >"$TMP/two/clock-offsets.txt"
"$OVNI" pack -o "$TMP/two.ovnipack" "$TMP/two"
mkdir "$TMP/o1" "$TMP/o2"
"$OVNI" emu -o "$TMP/o1" "$TMP/two" 2>/dev/null && "$OVNI" emu -o "$TMP/o2" "$TMP/two.ovnipack" 2>/dev/null &&
	diff -r "$TMP/o1" "$TMP/o2" >/dev/null && ok "emu reads clock-offsets.txt from the archive" ||
	not_ok "emu reads clock-offsets.txt from the archive"
mkdir "$TMP/o3"; rm "$TMP/two/clock-offsets.txt"; "$OVNI" emu -o "$TMP/o3" "$TMP/two" 2>/dev/null
diff -r "$TMP/o1" "$TMP/o3" >/dev/null && not_ok "the offsets change the timelines" || ok "the offsets change the timelines"
check_fails "emu on an archive needs -o" 'two.ovnipack: a pack archive is read-only; say where the outputs go with -o DIR' "$OVNI" emu "$TMP/two.ovnipack"
check_fails "sort refuses an archive" 'cannot be sorted in place' "$OVNI" sort "$TMP/two.ovnipack"
check_fails "dump on a damaged archive names member and offset" 'flip.ovnipack: offset [0-9]+: member loom.node0/.*stream.obs, block [0-9]+: ' \
	"$OVNI" dump "$TMP/flip.ovnipack"
check_fails "top on a truncated archive" 'trunc.ovnipack: offset [0-9]+: no trailer' "$OVNI" top "$TMP/trunc.ovnipack"

# Archives of older versions (tests/e2e/pack-old: v1.ovnipack written by
# the version 1 writer from a trace `ovni record` wrote, with a link, an
# empty file, noise and a 2.5 MB file; v2.ovnipack by the version 2 writer
# from the same files, kernel events included, whose clocks version 3
# reads otherwise; the files' metadata and sums) are still read.
OLD=$TESTDIR/e2e/pack-old
for v in 1 2; do
	a=$OLD/v$v.ovnipack
	check "version $v: --verify" "$OVNI" pack --verify "$a"
	rm -rf "$TMP/v$v"
	if ! "$OVNI" unpack -C "$TMP/v$v" "$a"; then
		not_ok "version $v: unpack"
		continue
	fi
	[ "$(meta_ns "$TMP/v$v" | awk '$2 == "d" { $5 = "-" } 1')" = "$(cat "$OLD/meta.txt")" ] &&
		ok "version $v: unpack restores modes, times and links" || not_ok "version $v: unpack restores modes, times and links"
	(cd "$TMP/v$v" && sha256sum -c --quiet "$OLD/sha256.txt") && ok "version $v: unpack restores every byte" ||
		not_ok "version $v: unpack restores every byte"
	"$OVNI" dump -x "$TMP/v$v" >"$TMP/d1" 2>/dev/null
	"$OVNI" dump -x "$a" >"$TMP/d2" 2>/dev/null
	[ -s "$TMP/d1" ] && cmp -s "$TMP/d1" "$TMP/d2" && ok "version $v: dump reads the archive" || not_ok "version $v: dump reads the archive"
	mkdir "$TMP/v${v}e1" "$TMP/v${v}e2"
	"$OVNI" emu -o "$TMP/v${v}e1" "$TMP/v$v" >/dev/null 2>&1 && "$OVNI" emu -o "$TMP/v${v}e2" "$a" >/dev/null 2>&1 &&
		diff -r "$TMP/v${v}e1" "$TMP/v${v}e2" >/dev/null && ok "version $v: emu on the archive = on the directory" ||
		not_ok "version $v: emu on the archive = on the directory"
	"$OVNI" pack -o "$TMP/new$v.ovnipack" "$TMP/v$v" && rm -rf "$TMP/new$v" && "$OVNI" unpack -C "$TMP/new$v" "$TMP/new$v.ovnipack" &&
		diff -r "$TMP/v$v" "$TMP/new$v" >/dev/null && [ "$(meta "$TMP/v$v")" = "$(meta "$TMP/new$v")" ] &&
		ok "version $v to version 3 and back" || not_ok "version $v to version 3 and back"
	flip "$a" "$TMP/v${v}flip.ovnipack" $((v == 1 ? 3000 : 1000))
	check_fails "version $v: a flipped byte in a block" "v${v}flip.ovnipack: offset [0-9]+: member .*, block [0-9]+: " \
		"$OVNI" pack --verify "$TMP/v${v}flip.ovnipack"
done

# Sizes: pack is never larger than pack --tar, on the golden traces (real
# runtimes' traces) and on traces `ovni record` writes of real programs
# (threads, processes, blocking calls: many small streams).
smaller() { # smaller WHAT DIR: pack <= pack --tar
	"$OVNI" pack -o "$TMP/s.ovnipack" "$2" && "$OVNI" pack --tar -o "$TMP/s.tar.zst" "$2" || return 1
	p=$(wc -c <"$TMP/s.ovnipack"); t=$(wc -c <"$TMP/s.tar.zst")
	[ "$p" -le "$t" ] || { echo "#   $1: pack $p bytes, pack --tar $t bytes"; return 1; }
}
n=0; bad=0
for d in "$GOLDEN"/*/*/trace; do
	n=$((n + 1))
	smaller "$d" "$d" || bad=$((bad + 1))
done
[ "$bad" -eq 0 ] && ok "pack is never larger than pack --tar: every golden trace ($n)" ||
	not_ok "pack is larger than pack --tar on $bad of $n golden traces"
"$GEN" -n 300 -t 25 -p 8 -l 2 -k nanos6 "$TMP/crowd" >/dev/null
smaller crowd "$TMP/crowd" && ok "pack is never larger than pack --tar: 400 small streams of 16 processes" ||
	not_ok "pack is never larger than pack --tar: 400 small streams of 16 processes"
CC=${HOSTCC:-gcc}
if command -v "$CC" >/dev/null 2>&1 && $CC -O1 -pthread -o "$TMP/threads" "$TESTDIR/record/threads.c" &&
	$CC -O1 -pthread -o "$TMP/procs" "$TESTDIR/record/procs.c" && $CC -O1 -pthread -o "$TMP/block" "$TESTDIR/instr/block.c"; then
	for run in "threads 8" "threads 2" "procs fork" "procs system" "block"; do
		set -- $run
		prog=$1; shift
		rm -rf "$TMP/rec"
		if "$OVNI" record -o "$TMP/rec" -- "$TMP/$prog" "$@" >/dev/null 2>&1 && [ -d "$TMP/rec" ]; then
			s=$(find "$TMP/rec" -name stream.obs | wc -l)
			smaller "$run" "$TMP/rec" && ok "pack is never larger than pack --tar: ovni record $run ($s streams)" ||
				not_ok "pack is never larger than pack --tar: ovni record $run ($s streams)"
		else
			not_ok "ovni record $run"
		fi
	done
else
	ok "# SKIP no host compiler for the recorded traces"
fi

# A file size limit: the archive's write fails with a message (no SIGXFSZ),
# and no part of it is left; unpack stops the same way.
"$GEN" -n 200000 "$TMP/fsz" >/dev/null
check_fails "pack under a file size limit" "fsz\.ovnipack: write failed: File too large" \
	sh -c "ulimit -f 16 && exec '$OVNI' pack -o '$TMP/fsz.ovnipack' '$TMP/fsz'"
check "it leaves no archive behind" sh -c "! ls '$TMP' | grep -q '^fsz\.ovnipack'"
"$OVNI" pack -l 1 -o "$TMP/fsz.ovnipack" "$TMP/fsz" 2>/dev/null
check_fails "unpack under a file size limit" "File too large" \
	sh -c "ulimit -f 16 && exec '$OVNI' unpack -C '$TMP/fszun' '$TMP/fsz.ovnipack'"

# An archive of a cut trace (the recorder killed with the program) reads
# as its directory does: the zero bytes after the last event of one
# unfinished stream and the event cut short at the end of another are not
# read, with a warning each, instead of failing the whole trace.
"$GEN" -n 3000 -t 2 -k nanos6 --unfinished "$TMP/cut" >/dev/null
set -- $(find "$TMP/cut" -name stream.obs | LC_ALL=C sort)
head -c 4096 /dev/zero >>"$1"
truncate -s -5 "$2"
rm -f "$TMP/cut.ovnipack"
"$OVNI" pack -o "$TMP/cut.ovnipack" "$TMP/cut" 2>/dev/null
"$OVNI" dump "$TMP/cut" >"$TMP/cut.dir" 2>"$TMP/cut.direrr"
"$OVNI" dump "$TMP/cut.ovnipack" >"$TMP/cut.pack" 2>"$TMP/cut.packerr"
same "a cut trace's archive: ovni dump reads it" "$?" 0
check "a cut trace's archive: the same events as its directory" cmp -s "$TMP/cut.dir" "$TMP/cut.pack"
same "a cut trace's archive: both tails named, as from the directory" \
	"$(grep -Eo 'the [0-9]+ (zero bytes|bytes of an event cut short) after' "$TMP/cut.packerr")" \
	"$(grep -Eo 'the [0-9]+ (zero bytes|bytes of an event cut short) after' "$TMP/cut.direrr")"
same "a cut trace's archive: two tails" "$(grep -c 'unfinished (its thread did not end)' "$TMP/cut.packerr")" 2
done_testing
