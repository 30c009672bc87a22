# The context-switch recorder of the preload runtime (lib/rt/kswitch.c),
# built with the host's compiler as the shim is, and run on this machine:
# tests/rt/test_kswitch.c (its live part is skipped where perf_event is
# not permitted).
. "$(dirname "$0")/lib.sh"
ROOT=$TESTDIR/..
CC=${HOSTCC:-gcc}
command -v "$CC" >/dev/null 2>&1 || { echo "# skip: no host compiler $CC"; exit 0; }
SAN=
[ "${SANITIZE:-}" = 1 ] && SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"
# shellcheck disable=SC2086
check "test_kswitch builds with $CC" "$CC" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -O1 -g $SAN \
	-I"$ROOT/lib" -I"$ROOT/tests/unit" -pthread -o "$TMP/test_kswitch" \
	"$ROOT/tests/rt/test_kswitch.c" "$ROOT/lib/rt/kswitch.c"
[ -x "$TMP/test_kswitch" ] || done_testing
"$TMP/test_kswitch"
rc=$?
[ $rc -eq 0 ] || T_FAILED=1
done_testing
