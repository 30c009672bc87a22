# ovni record end to end: small C programs compiled with $HOSTCC at test
# time run under the recorder; ovni emu must accept every trace and ovni dump
# must show each thread's expected events.
. "$(dirname "$0")/lib.sh"
SRC=$TESTDIR/record
CC=${HOSTCC:-gcc}
BUILD=${BUILD:?}
SO=$BUILD/rt/libovni.so
if ! command -v "$CC" >/dev/null 2>&1; then
	echo "ok - # SKIP no host compiler $CC"
	done_testing
fi

# emu_ok WHAT TRACE: ovni emu accepts the trace.
emu_ok() {
	rm -rf "$TMP/emu" && mkdir -p "$TMP/emu"
	check "$1" "$OVNI" emu -o "$TMP/emu" "$2"
}

# count TRACE MCV: events of that MCV in the whole trace.
count() {
	"$OVNI" dump "$2" 2>/dev/null | awk -v m="$1" '$2 == m' | wc -l | tr -d ' '
}

# same WHAT GOT WANT
same() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1 (got '$2', want '$3')"; fi
}

# --- The shim itself. ---
if command -v objdump >/dev/null 2>&1; then
	max=$(objdump -T "$SO" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -t. -k1,1n -k2,2n -k3,3n | tail -n 1)
	case $max in
	2.1[0-7] | 2.1[0-7].* | 2.[0-9] | 2.[0-9].*) ok "the shim needs glibc $max <= 2.17" ;;
	*) not_ok "the shim needs glibc $max, newer than 2.17" ;;
	esac
else
	echo "ok - # SKIP no objdump"
fi
soname=$(objdump -p "$SO" 2>/dev/null | awk '$1 == "SONAME" {print $2}')
same "the shim's soname is libovni.so.1" "$soname" libovni.so.1

# --- Threads. ---
$CC -O1 -pthread -o "$TMP/threads" "$SRC/threads.c" || not_ok "compile threads.c"
rm -rf "$TMP/t1"
"$OVNI" record -o "$TMP/t1" -- "$TMP/threads" 4 >"$TMP/out" 2>"$TMP/err"
rc=$?
same "threads: exit status" "$rc" 0
grep -q '^threads: 5$' "$TMP/out" && ok "threads: the program ran" || not_ok "threads: the program ran"
grep -Eq '^ovni record: 1 processes, 6 threads, [0-9]+ events, .* trace in ' "$TMP/err" &&
	ok "threads: summary line" || { not_ok "threads: summary line"; sed 's/^/#   /' "$TMP/err"; }
emu_ok "threads: ovni emu accepts the trace" "$TMP/t1"
same "threads: one OHx per thread" "$(count OHx "$TMP/t1")" 6
same "threads: one OHe per thread (return, pthread_exit, cancel, main)" "$(count OHe "$TMP/t1")" 6
same "threads: one OHC per pthread_create" "$(count OHC "$TMP/t1")" 5
n=$(find "$TMP/t1" -name stream.json | xargs grep -l '"finished": 1' | wc -l | tr -d ' ')
same "threads: every stream finished" "$n" 6

rm -rf "$TMP/t2"
"$OVNI" record -o "$TMP/t2" -- "$TMP/threads" 2 7 >/dev/null 2>&1
same "the recorder exits with the program's status" "$?" 7

# --- Private shim directory. ---
priv=$(TMPDIR=$TMP/priv sh -c 'mkdir -p "$TMPDIR"; "$1" record -o "$2" -- true 2>/dev/null; ls -d "$TMPDIR"/ovni-*' sh "$OVNI" "$TMP/t3")
mode=$(stat -c %a "$priv" 2>/dev/null)
same "the private directory is mode 700" "$mode" 700
same "the shim is installed once, by content hash" "$(ls "$priv" | grep -c '^shim-')" 1
rm -rf "$TMP/evil" && mkdir -p "$TMP/evil" "$TMP/other"
ln -s "$TMP/other" "$TMP/evil/ovni-$(id -u)"
check_fails "a symlinked private directory is refused" "not a directory|symlink" \
	env TMPDIR="$TMP/evil" XDG_RUNTIME_DIR= "$OVNI" record -o "$TMP/t4" -- true

# --- Static programs. ---
if $CC -static -o "$TMP/static" "$SRC/threads.c" -pthread 2>/dev/null; then
	check_fails "a static program is refused clearly" "statically linked" "$OVNI" record -o "$TMP/t5" -- "$TMP/static"
else
	echo "ok - # SKIP no static glibc"
fi

# --- The libovni API, through ovni lib. ---
check "ovni lib writes the API files" "$OVNI" lib "$TMP/lib"
for f in ovni.h libovni.so libovni.so.1 ovni.pc; do
	[ -e "$TMP/lib/$f" ] && ok "ovni lib: $f" || not_ok "ovni lib: $f"
done
if $CC -o "$TMP/api" "$SRC/api.c" -I"$TMP/lib" -L"$TMP/lib" -Wl,-rpath,"$TMP/lib" -lovni; then
	ok "a program builds against ovni lib output"
	rm -rf "$TMP/a1"
	(cd "$TMP" && OVNI_TRACEDIR="$TMP/a1" ./api 5 >/dev/null) && ok "api: runs alone" || not_ok "api: runs alone"
	emu_ok "api: ovni emu accepts its own trace" "$TMP/a1"
	same "api: marks pushed" "$(count OM[ "$TMP/a1")" 5
	same "api: jumbo event" "$(count OUj "$TMP/a1")" 1
	grep -q '"answer": 42' "$TMP"/a1/*/*/*/stream.json && ok "api: attributes in stream.json" || not_ok "api: attributes in stream.json"
	rm -rf "$TMP/a2"
	# Without the rpath copy: the recorder's libovni.so.1 must be found.
	mv "$TMP/lib" "$TMP/lib.away"
	"$OVNI" record -o "$TMP/a2" -- "$TMP/api" 5 >/dev/null 2>&1
	same "api: under ovni record, without the library installed" "$?" 0
	mv "$TMP/lib.away" "$TMP/lib"
	emu_ok "api: ovni emu accepts the recorded trace" "$TMP/a2"
	same "api: the program's own OHx is replaced by the recorder's" "$(count OHx "$TMP/a2")" 1
	same "api: marks recorded" "$(count OM] "$TMP/a2")" 5
else
	not_ok "a program builds against ovni lib output"
fi

done_testing
