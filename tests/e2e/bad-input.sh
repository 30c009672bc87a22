# Damaged and unusual input for the readers (dump and top): each gets ONE
# line on stderr naming the file and the byte offset (or JSON line:column)
# and a non-zero exit, never a crash; a read-only trace works.
. "$(dirname "$0")/lib.sh"
MK=$BUILD/tools/mkstream
META='{"version": 3, "ovni": {"lib": {"version": "1.14.0", "commit": "t"}, "part": "thread", "tid": 7, "pid": 1, "loom": "node0", "app_id": 1, "require": {"ovni": "1.1.0"}, "finished": 1}}'
n=0

# trace JSON FORMAT [ARGS]: a new trace $d with one stream: stream.json
# holds JSON, stream.obs is made by mkstream from printf FORMAT ARGS.
trace() {
	json=$1; shift
	n=$((n + 1))
	d=$TMP/t$n
	mkdir -p "$d/loom.node0/proc.1/thread.7"
	printf '%s' "$json" >"$d/loom.node0/proc.1/thread.7/stream.json"
	printf "$@" | "$MK" "$d/loom.node0/proc.1/thread.7/stream.obs"
}

# refused WHAT PATTERN DIR: dump and top both fail on DIR with exactly one
# line on stderr matching PATTERN (grep -E), without a crash.
refused() {
	for sub in dump top; do
		"$OVNI" $sub "$3" >"$TMP/.out" 2>"$TMP/.err"
		rc=$?
		lines=$(wc -l <"$TMP/.err")
		if [ $rc -eq 0 ]; then not_ok "$sub: $1 (exit 0)"
		elif [ $rc -ge 128 ]; then not_ok "$sub: $1 (killed by signal $((rc - 128)))"
		elif [ "$lines" -ne 1 ] || ! grep -Eq -- "$2" "$TMP/.err"; then
			not_ok "$sub: $1 (want one line matching '$2')"; sed 's/^/#   /' "$TMP/.err" | head -5
		else ok "$sub: $1"; fi
	done
}

OBS='thread\.7/stream\.obs'
JSON='thread\.7/stream\.json'
OHX='ev OHx 100 00000000ffffffff0000000000000000'

trace "$META" ''
refused "empty stream.obs" "$OBS: offset 0: empty file" "$d"
trace "$META" 'raw 6f766e\n'
refused "truncated header" "$OBS: offset 3: stream header cut short \(3 of 8 bytes\)" "$d"
trace "$META" 'header ovnj 1\n'
refused "wrong magic" "$OBS: offset 0: not an ovni stream" "$d"
trace "$META" 'header ovni 2\n'
refused "wrong version" "$OBS: offset 4: stream version 2 is not supported" "$d"
trace "$META" 'header\n%s\nev OB. 200\ncut 5\n' "$OHX"
refused "event cut at the end of the file" "$OBS: offset 36: event OB\. cut at the end of the file" "$d"
trace "$META" 'header\n%s\nev 6Tx 200 01000000\ncut 2\n' "$OHX"
refused "payload cut at the end of the file" "$OBS: offset 36: event 6Tx cut at the end of the file \(14 of 16 bytes\)" "$d"
trace "$META" 'header\n%s\njumbo OUj 200 0102030405\ncut 1\n' "$OHX"
refused "jumbo size past the end of the file" "$OBS: offset 36: jumbo event OUj of 5 bytes goes past the end of the file" "$d"
trace "$META" 'header\n%s\nraw 134f556a c800000000000000 ffffff7f 00\n' "$OHX"
refused "huge jumbo size" "$OBS: offset 36: jumbo event OUj of 2147483647 bytes goes past the end" "$d"
trace "$META" 'header\n%s\nraw 2f4f4878 c800000000000000\n' "$OHX"
refused "impossible payload size code" "$OBS: offset 36: event OHx has impossible flags 0x2f" "$d"
trace "$META" 'header\n%s\nev OB. 50\n' "$OHX"
"$OVNI" dump -x "$d" >/dev/null 2>"$TMP/.err"
check "a backwards clock is not fatal for dump" test $? -eq 0
grep -Eq "warning: .*$OBS: offset 36: event OB\.: backwards jump in time 100 -> 50" "$TMP/.err" &&
	ok "a backwards clock is a warning naming stream and offset" ||
	not_ok "a backwards clock is a warning naming stream and offset"

# Metadata (checked by lib/meta.c; dump and top report them the same way).
trace '{"version": 3, "ovni": {"tid": 7,, }}' 'header\n'
refused "invalid JSON" "$JSON: line 1, column [0-9]+: " "$d"
trace '{"version": 3, "ovni": {"lib": {"version": "1.14.0", "commit": "t"}, "part": "thread", "pid": 1, "loom": "node0"}}' 'header\n'
refused "JSON missing ovni.tid" "$JSON: line 1, column [0-9]+: ovni\.tid is missing" "$d"
trace '{"version": 3, "ovni": {"lib": {"version": "1.14.0", "commit": "t"}, "part": "thread", "tid": "7", "pid": 1, "loom": "node0"}}' 'header\n'
refused "JSON with a string tid" "$JSON: line 1, column [0-9]+: ovni\.tid must be" "$d"
trace '{"version": "3", "ovni": {}}' 'header\n'
refused "JSON with a string version" "$JSON: line 1, column [0-9]+: .*version" "$d"

# Not a trace.
mkdir "$TMP/empty"
refused "a directory without streams" "empty: no streams found" "$TMP/empty"
: >"$TMP/file"
refused "a regular file" "file: not a trace directory" "$TMP/file"
refused "a path that does not exist" "cannot open trace .*nowhere: No such file" "$TMP/nowhere"

# Unreadable: a stream.obs that is a directory fails even for root.
trace "$META" 'header\n'
rm "$d/loom.node0/proc.1/thread.7/stream.obs"
mkdir "$d/loom.node0/proc.1/thread.7/stream.obs"
refused "stream.obs is a directory" "$OBS" "$d"

# A stream.obs without its stream.json (a libovni program that died before
# writing it): the others are read, and a warning names the one left out.
trace "$META" 'header\n%s\nev OHe 200\n' "$OHX"
mkdir -p "$d/loom.node0/proc.1/thread.8"
cp "$d/loom.node0/proc.1/thread.7/stream.obs" "$d/loom.node0/proc.1/thread.8/"
"$OVNI" top "$d" >"$TMP/.out" 2>"$TMP/.err"
same "a stream.obs without stream.json: the other streams are read" "$? $(grep -c . "$TMP/.out")" "0 2"
check "a stream.obs without stream.json: a warning names it" \
	grep -q "thread.8/stream.obs: no stream.json beside it: its events are left out" "$TMP/.err"

# Permissions: as an unprivileged user (root runs this part as nobody).
as_user() {
	if [ "$(id -u)" -ne 0 ]; then "$@"
	elif command -v setpriv >/dev/null; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	else return 125; fi
}
chmod 755 "$TMP"
trace "$META" 'header\n%s\nev OHe 200\n' "$OHX"
chmod -R a+rX "$d"
chmod 000 "$d/loom.node0/proc.1/thread.7/stream.obs"
as_user "$OVNI" dump "$d" >"$TMP/.out" 2>"$TMP/.err"
rc=$?
if [ $rc -eq 125 ]; then ok "# SKIP unreadable stream.obs: no way to drop root"
elif [ $rc -ne 0 ] && [ $rc -lt 128 ] && [ "$(wc -l <"$TMP/.err")" -eq 1 ] &&
	grep -Eq "$OBS: offset 0: cannot open: Permission denied" "$TMP/.err"; then
	ok "an unreadable stream.obs is one line naming it"
else not_ok "an unreadable stream.obs is one line naming it (rc $rc)"; sed 's/^/#   /' "$TMP/.err"; fi

# A read-only trace works, and nothing in it changes.
cp -R "$GOLDEN/ovni/mp-simple/trace" "$TMP/ro"
chmod -R a+rX,a-w "$TMP/ro"
touch "$TMP/marker"
sleep 1
as_user "$OVNI" dump -x "$TMP/ro" >"$TMP/ro.txt" 2>"$TMP/ro.err"
check "dump of a read-only trace succeeds" test $? -eq 0
check_same "dump of a read-only trace is complete" "$TMP/ro.txt" "$GOLDEN/ovni/mp-simple/expected/dump-x.txt"
as_user "$OVNI" top "$TMP/ro" >"$TMP/ro.txt" 2>"$TMP/ro.err"
check_same "top of a read-only trace is complete" "$TMP/ro.txt" "$GOLDEN/ovni/mp-simple/expected/top.txt"
as_user "$OVNI" emu "$TMP/ro" >"$TMP/.out" 2>"$TMP/.err"
rc=$?
if [ $rc -eq 125 ]; then ok "# SKIP emu of a read-only trace: no way to drop root"
elif [ $rc -eq 1 ] && grep -q "ro: cannot write the timelines beside the trace: Permission denied; say where they go with -o DIR" "$TMP/.err"; then
	ok "emu of a read-only trace without -o: one line that points at -o DIR"
else not_ok "emu of a read-only trace without -o: one line that points at -o DIR (rc $rc)"; sed 's/^/#   /' "$TMP/.err" | tail -3; fi
check "reading leaves no trace in the trace" test -z "$(find "$TMP/ro" -newer "$TMP/marker")"
chmod -R u+w "$TMP/ro"
done_testing
