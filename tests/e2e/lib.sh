# Shared helpers for end-to-end tests (POSIX sh). Each check prints
# "ok - what" or "not ok - what"; tests/run.sh counts them.
#   OVNI      the binary under test
#   TESTDIR   tests/ of the checkout;  GOLDEN  the golden cases copied in
set -u
: "${OVNI:?OVNI must name the ovni binary}"
TESTDIR=$(cd "$(dirname "$0")/.." && pwd)
GOLDEN=$TESTDIR/golden
T_FAILED=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ovni-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; T_FAILED=1; }

# check WHAT CMD...: passes when CMD exits 0.
check() {
	what=$1; shift
	if "$@" >"$TMP/.out" 2>&1; then ok "$what"; else
		not_ok "$what"; sed 's/^/#   /' "$TMP/.out" | head -20
	fi
}

# check_fails WHAT PATTERN CMD...: passes when CMD exits non-zero, without a
# crash, and its stderr has exactly one line matching PATTERN (grep -E).
check_fails() {
	what=$1; pat=$2; shift 2
	"$@" >"$TMP/.out" 2>"$TMP/.err"
	rc=$?
	if [ $rc -eq 0 ]; then not_ok "$what (exit 0)"; return; fi
	if [ $rc -ge 128 ]; then not_ok "$what (killed by signal $((rc - 128)))"; return; fi
	if grep -Eq -- "$pat" "$TMP/.err"; then ok "$what"; else
		not_ok "$what (stderr does not match '$pat')"; sed 's/^/#   /' "$TMP/.err" | head -10
	fi
}

# check_same WHAT GOT WANT: files identical.
check_same() {
	if cmp -s "$2" "$3"; then ok "$1"; else
		not_ok "$1"; diff "$3" "$2" 2>&1 | head -10 | sed 's/^/#   /'
	fi
}

# stream DIR LOOM PID TID REQUIRE EXTRA LINES [ARGS]: a finished stream
# DIR/loom.LOOM/proc.PID/thread.TID with 2 CPUs in the loom. REQUIRE is
# added to ovni.require, EXTRA to the ovni object; the events come from
# mkstream reading printf LINES ARGS.
stream() {
	dir=$1 loom=$2 pid=$3 tid=$4 req=$5 extra=$6
	shift 6
	p=$dir/loom.$loom/proc.$pid/thread.$tid
	mkdir -p "$p"
	printf '{"version": 3, "ovni": {"lib": {"version": "1.14.0", "commit": "t"}, "part": "thread", "tid": %s, "pid": %s, "loom": "%s", "app_id": 1, "require": {"ovni": "1.1.0"%s}, "loom_cpus": [{"index": 0, "phyid": 0}, {"index": 1, "phyid": 1}], "finished": 1%s}}' \
		"$tid" "$pid" "$loom" "$req" "$extra" >"$p/stream.json"
	printf "$@" | "${BUILD:?}/tools/mkstream" "$p/stream.obs"
}

done_testing() { exit $T_FAILED; }
