#!/bin/sh
# Runs every test: unit programs ($BUILD/tests/*) and end-to-end scripts
# (tests/e2e/*.sh). Each prints "ok - ..." / "not ok - ..." lines; a test
# that dies or fails without saying why counts as one failure. The last line
# is "N passed, N failed".
cd "$(dirname "$0")/.."
: "${BUILD:?}" "${OVNI:?}"
export OVNI BUILD
passed=0
failed=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

run_one() {
	name=$1; shift
	timeout 600 "$@" >"$out" 2>&1
	rc=$?
	p=$(grep -c '^ok - ' "$out")
	f=$(grep -c '^not ok - ' "$out")
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $name exited with status $rc" >>"$out"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$f" -ne 0 ]; then
		printf 'FAIL %s: %d passed, %d failed\n' "$name" "$p" "$f"
		grep -v '^ok - ' "$out" | head -40 | sed 's/^/    /'
	else
		printf 'pass %s: %d\n' "$name" "$p"
	fi
}

for t in "$BUILD"/tests/*; do
	[ -x "$t" ] || continue
	run_one "unit/$(basename "$t")" "$t"
done
for t in tests/e2e/*.sh; do
	[ "$(basename "$t")" = lib.sh ] && continue
	run_one "e2e/$(basename "$t" .sh)" sh "$t"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
