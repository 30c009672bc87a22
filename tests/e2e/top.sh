# ovni top: counts by MCV, order (count down, then MCV by strcmp), exit
# status; the golden comparison is in tests/conformance.sh.
. "$(dirname "$0")/lib.sh"
GEN=$BUILD/tools/gen-trace
MK=$BUILD/tools/mkstream

# Equal counts are ordered by MCV bytes: digits before upper before lower case.
mkthread "$TMP/t/a" 1 <<'EOF2'
header
ev OHx 1 00000000ffffffff0000000000000000
ev OU[ 2
ev Ob. 3
ev 6Tx 4 01000000
ev OB. 5
ev OU[ 6
ev Ob. 7
ev 6Tx 8 02000000
ev OB. 9
EOF2
mkthread "$TMP/t/b" 2 <<'EOF2'
header
ev OU[ 3
ev Ob. 4
ev 6Tx 5 03000000
ev OB. 6
ev OHe 7
EOF2
"$OVNI" top "$TMP/t" >"$TMP/top.txt"
check "top of two streams succeeds" test $? -eq 0
cat >"$TMP/top.want" <<'EOF2'
6Tx          3
OB.          3
OU[          3
Ob.          3
OHe          1
OHx          1
EOF2
check_same "counts over all streams, most frequent first, ties by MCV" "$TMP/top.txt" "$TMP/top.want"

"$OVNI" top "$TMP/t/b" >"$TMP/one.txt"
printf '%s\n' '6Tx          1' 'OB.          1' 'OHe          1' 'OU[          1' 'Ob.          1' >"$TMP/one.want"
check_same "top of a single stream directory" "$TMP/one.txt" "$TMP/one.want"

# Counts of a generated trace are known.
"$GEN" -n 10000 -t 3 -k pause "$TMP/gen" >/dev/null
"$OVNI" top "$TMP/gen" >"$TMP/gen.txt"
printf '%s\n' 'OHp      14997' 'OHr      14997' 'OHe          3' 'OHx          3' >"$TMP/gen.want"
check_same "counts of a generated trace of 30000 events" "$TMP/gen.txt" "$TMP/gen.want"

# A damaged stream: the counts so far are still printed, exit status 1.
mkthread "$TMP/bad" 3 <<'EOF2'
header
ev OHx 1 00000000ffffffff0000000000000000
ev OB. 2
ev OB. 3
raw 00 4f 42
EOF2
"$OVNI" top "$TMP/bad" >"$TMP/bad.txt" 2>"$TMP/bad.err"
check "a damaged stream makes top exit with 1" test $? -eq 1
printf '%s\n' 'OB.          2' 'OHx          1' >"$TMP/bad.want"
check_same "the table is printed even when reading failed" "$TMP/bad.txt" "$TMP/bad.want"
grep -q 'stream.obs: offset 60: event cut at the end of the file' "$TMP/bad.err" &&
	ok "the damage is named with file and offset" || not_ok "the damage is named with file and offset"

ln -s "$OVNI" "$TMP/ovnitop"
"$TMP/ovnitop" "$TMP/t" >"$TMP/alias.txt"
check_same "ovnitop (symlink) is ovni top" "$TMP/alias.txt" "$TMP/top.want"
check_fails "no trace argument is an error" "expected one trace" "$OVNI" top
check_fails "an unknown option is an error" "Usage: ovni top" "$OVNI" top -x "$TMP/t"
done_testing
