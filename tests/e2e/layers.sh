# The layers of lib/ (tests/layers.sh): the tree as it is passes; a copy
# with an upward include planted, or a file loose in lib/, fails naming it.
. "$(dirname "$0")/lib.sh"
LIB=$TESTDIR/../lib

if sh "$TESTDIR/layers.sh" "$LIB" >"$TMP/out" 2>&1; then
	ok "lib/ includes only downward"
else
	not_ok "lib/ includes only downward"; grep -v '^ok' "$TMP/out" | head -10
fi

cp -R "$LIB" "$TMP/lib"
printf '#include "emu/emu.h"\n' >>"$TMP/lib/base/msg.c"
sh "$TESTDIR/layers.sh" "$TMP/lib" >"$TMP/out" 2>&1
same "a planted upward include fails" "$?" 1
grep -q 'base/msg.c: includes emu/' "$TMP/out" && ok "the failure names the file and the layer" ||
	not_ok "the failure names the file and the layer"

cp -R "$LIB" "$TMP/lib2"
: >"$TMP/lib2/loose.c"
sh "$TESTDIR/layers.sh" "$TMP/lib2" >"$TMP/out" 2>&1
same "a .c loose in lib/ fails" "$?" 1

cp -R "$LIB" "$TMP/lib3"
printf '#include "sync/sync.h"\n' >>"$TMP/lib3/sort/sort.c"
sh "$TESTDIR/layers.sh" "$TMP/lib3" >"$TMP/out" 2>&1
same "an include across two folders of one layer fails" "$?" 1
done_testing
