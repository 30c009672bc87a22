# Where the commands write what a user names with -o: an output that is
# one of the files the command reads (a stream of the trace, the archive
# itself) is refused before anything is written; a failed write never
# removes a device the user named (as root, -o /dev/full).
. "$(dirname "$0")/lib.sh"
GEN=$BUILD/tools/gen-trace

"$GEN" -n 2000 -t 2 "$TMP/t" >/dev/null
cp -R "$TMP/t" "$TMP/orig"
obs=$(find "$TMP/t" -name stream.obs | sort | head -n 1)
json=$(find "$TMP/t" -name stream.json | sort | head -n 1)
unchanged() { diff -r "$TMP/orig" "$TMP/t" >/dev/null; }

# --- the output is the input ---
pat='the output would overwrite the trace it reads'
check_fails "export -o a stream.obs of the trace: refused" "$pat" "$OVNI" export --chrome -o "$obs" "$TMP/t"
check "export: the trace is as it was" unchanged
check_fails "report -o a stream.json of the trace: refused" "$pat" "$OVNI" report -o "$json" "$TMP/t"
check "report: the trace is as it was" unchanged
check_fails "pack -o a stream.obs of the trace: refused" "$pat" "$OVNI" pack -o "$obs" "$TMP/t"
check "pack: the trace is as it was" unchanged
rel=${obs#"$TMP/t/"}
check_fails "report -o the same stream by a relative path: refused" "$pat" \
	sh -c "cd '$TMP/t' && exec '$OVNI' report -o '$rel' ."
check "report: the trace is as it was" unchanged
"$OVNI" pack -o "$TMP/t.ovnipack" "$TMP/t" 2>/dev/null
cp "$TMP/t.ovnipack" "$TMP/orig.ovnipack"
check_fails "report -o the archive it reads: refused" "$pat" "$OVNI" report -o "$TMP/t.ovnipack" "$TMP/t.ovnipack"
check "report: the archive is as it was" cmp -s "$TMP/t.ovnipack" "$TMP/orig.ovnipack"
check "report -o a new file inside the trace directory is fine" "$OVNI" report -o "$TMP/t/report.txt" "$TMP/t"
check "and so is writing it again" "$OVNI" report -o "$TMP/t/report.txt" "$TMP/t"
rm -f "$TMP/t/report.txt"

# --- a device as the output ---
if mknod -m 666 "$TMP/devfull" c 1 7 2>/dev/null; then
	isdev() { test -c "$TMP/devfull"; }
	check_fails "pack -o a full device" "devfull: write failed: No space left on device" "$OVNI" pack -o "$TMP/devfull" "$TMP/t"
	check "pack -o a full device: the device stays" isdev
	check_fails "pack --tar -o a full device" "No space left on device" "$OVNI" pack --tar -o "$TMP/devfull" "$TMP/t"
	check "pack --tar -o a full device: the device stays" isdev
	check_fails "export -o a full device" "No space left on device" "$OVNI" export --chrome -o "$TMP/devfull" "$TMP/t"
	check "export -o a full device: the device stays" isdev
	check_fails "report -o a full device" "No space left on device" "$OVNI" report -o "$TMP/devfull" "$TMP/t"
	check "report -o a full device: the device stays" isdev
	mkdir "$TMP/devout" && mknod -m 666 "$TMP/devout/thread.prv" c 1 7
	check_fails "emu with thread.prv a full device" "No space left on device" "$OVNI" emu -o "$TMP/devout" "$TMP/t"
	check "emu with thread.prv a full device: the device stays" test -c "$TMP/devout/thread.prv"
else
	echo "ok - # SKIP outputs that are devices: mknod needs root"
fi
done_testing
