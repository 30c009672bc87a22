# Damaged traces and archives, made by a seeded mutation of the golden
# cases (build/tools/mutate: flipped, cut, inserted, appended or blanked
# bytes): every tool either reads them or refuses them with one "error:"
# line and exit status 1. Never a signal, a sanitizer report or a hang
# (timeout), and the readers (dump, top, report, emu) leave the trace
# untouched. Replayable: each check names its seed.
#   FUZZ_N      damaged traces (default 50)
#   FUZZ_PACKS  damaged archives (default 25)
#   FUZZ_SEED   first seed (default 1)
. "$(dirname "$0")/lib.sh"
MUT=$BUILD/tools/mutate
N=${FUZZ_N:-50}
NPACK=${FUZZ_PACKS:-25}
SEED=${FUZZ_SEED:-1}
LIMIT=120 # seconds per command: a hang, not a slow sanitizer build

# the golden traces of under 1 MB, in a fixed order
find "$GOLDEN" -path '*/trace' -type d | sort | while read -r t; do
	[ "$(du -sk "$t" | cut -f1)" -lt 1024 ] && echo "$t"
done >"$TMP/traces"
ntraces=$(wc -l <"$TMP/traces")
[ "$ntraces" -gt 10 ] || { not_ok "fuzz: only $ntraces golden traces found in $GOLDEN"; done_testing; }

# sums DIR: one line per file, its checksum and path
sums() { (cd "$1" && find . -type f | sort | xargs cksum); }

# survived CMD...: runs CMD under the time limit; empty if it read the
# input or refused it properly, else why not.
survived() {
	timeout "$LIMIT" "$@" >/dev/null 2>"$TMP/.err"
	rc=$?
	if [ $rc -eq 124 ]; then echo "hung (over $LIMIT s)"
	elif [ $rc -ge 128 ]; then echo "killed by signal $((rc - 128))"
	elif grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error' "$TMP/.err"; then echo "sanitizer: $(grep -Em1 'ERROR|runtime error' "$TMP/.err")"
	elif [ $rc -ne 0 ] && [ $rc -ne 1 ]; then echo "exit status $rc"
	elif [ $rc -eq 1 ] && [ "$(grep -c 'error: ' "$TMP/.err")" -ne 1 ]; then
		echo "refused without exactly one error line: $(tail -n 2 "$TMP/.err" | tr '\n' ' ')"
	fi
}

# the judge itself tells each way of failing
same "fuzz judge: a crash" "$(survived sh -c 'kill -SEGV $$')" "killed by signal 11"
same "fuzz judge: a hang" "$(LIMIT=1 survived sleep 5)" "hung (over 1 s)"
same "fuzz judge: two error lines" "$(survived sh -c 'echo "x: error: a" >&2; echo "x: error: b" >&2; exit 1' | cut -d: -f1)" \
	"refused without exactly one error line"
same "fuzz judge: a clean refusal" "$(survived sh -c 'echo "x: info" >&2; echo "x: error: a" >&2; exit 1')" ""

# one trace: a golden one picked by the seed, one of its files damaged
i=0
while [ $i -lt "$N" ]; do
	s=$((SEED + i))
	i=$((i + 1))
	src=$(sed -n "$((s % ntraces + 1))p" "$TMP/traces")
	rm -rf "$TMP/t" "$TMP/out"
	cp -r "$src" "$TMP/t"
	(cd "$TMP/t" && find . -name 'stream.obs' -o -name 'stream.json' | sort) >"$TMP/files"
	nf=$(wc -l <"$TMP/files")
	f=$(sed -n "$((s * 7 % nf + 1))p" "$TMP/files")
	how=$("$MUT" "$s" "$TMP/t/$f")
	what="seed $s: ${src#"$GOLDEN"/} $f $how"
	sums "$TMP/t" >"$TMP/before"
	bad=
	for cmd in "dump -x" "top" "report" "emu -b -o $TMP/out"; do
		why=$(survived "$OVNI" $cmd "$TMP/t")
		[ -n "$why" ] && bad="$bad; $cmd: $why"
		sums "$TMP/t" | cmp -s - "$TMP/before" || bad="$bad; $cmd changed the trace"
		rm -rf "$TMP/out"
	done
	why=$(survived "$OVNI" sort "$TMP/t")
	[ -n "$why" ] && bad="$bad; sort: $why"
	if [ -z "$bad" ]; then ok "fuzz $what"; else not_ok "fuzz $what$bad"; fi
done

# one archive: a golden trace packed, the archive damaged
i=0
while [ $i -lt "$NPACK" ]; do
	s=$((SEED + i))
	i=$((i + 1))
	src=$(sed -n "$((s * 3 % ntraces + 1))p" "$TMP/traces")
	rm -rf "$TMP/p.ovnipack" "$TMP/out" "$TMP/x"
	if ! "$OVNI" pack -o "$TMP/p.ovnipack" "$src" >/dev/null 2>"$TMP/.err"; then
		not_ok "fuzz pack of ${src#"$GOLDEN"/}: $(cat "$TMP/.err")"
		continue
	fi
	how=$("$MUT" "$s" "$TMP/p.ovnipack")
	what="archive seed $s: ${src#"$GOLDEN"/} $how"
	bad=
	for cmd in "pack --verify" "pack --list" "dump -x" "top" "emu -o $TMP/out" "unpack -C $TMP/x"; do
		why=$(survived "$OVNI" $cmd "$TMP/p.ovnipack")
		[ -n "$why" ] && bad="$bad; $cmd: $why"
		rm -rf "$TMP/out" "$TMP/x"
	done
	if [ -z "$bad" ]; then ok "fuzz $what"; else not_ok "fuzz $what$bad"; fi
done
done_testing
