#!/bin/sh
# The layers of lib/: a file includes only headers of its own folder and of
# the layers below it (docs/design.md). Checks every #include "DIR/..." of
# lib/ against this table, and that no .c lies loose directly under lib/.
# Usage: sh tests/layers.sh [LIBDIR]   (prints ok/not ok lines and a count)
LIB=${1:-$(dirname "$0")/../lib}
LIB=${LIB%/}
# folder rank: higher may include lower (and itself), never the reverse
RANKS="base:0 pack:1 trace:2 sort:3 sync:3 record:3 dump:3 chan:3 paraver:4 rt:4 emu:5 model:6 report:7"
rank() {
	for r in $RANKS; do
		[ "${r%%:*}" = "$1" ] && { echo "${r#*:}"; return; }
	done
	echo none
}
passed=0
failed=0
bad=$(find "$LIB" -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' \) | sed "s|^$LIB/||")
if [ -n "$bad" ]; then
	echo "not ok - files loose in lib/, outside any layer: $(echo $bad)"; failed=$((failed + 1))
else
	echo "ok - every file of lib/ is in a layer folder"; passed=$((passed + 1))
fi
for dir in "$LIB"/*/; do
	top=$(basename "$dir")
	me=$(rank "$top")
	if [ "$me" = none ]; then
		echo "not ok - lib/$top is in no layer (add it to RANKS in tests/layers.sh)"; failed=$((failed + 1)); continue
	fi
	up=$(grep -rn '^#include "[a-z_]*/' "$dir" --include='*.[ch]' | while IFS= read -r line; do
		inc=${line#*#include \"}; to=${inc%%/*}
		r=$(rank "$to")
		[ "$r" = none ] && continue
		[ "$to" = "$top" ] && continue
		[ "$r" -lt "$me" ] || echo "${line%%:*}: includes $to/ (layer $r, not below $me)"
	done)
	if [ -n "$up" ]; then
		echo "not ok - lib/$top includes upward or sideways:"; echo "$up" | sed 's/^/#   /'; failed=$((failed + 1))
	else
		echo "ok - lib/$top includes only lib/$top and the layers below"; passed=$((passed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
