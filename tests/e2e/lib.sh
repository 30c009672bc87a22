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

# same WHAT GOT WANT: two strings equal.
same() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1 (got '$2', want '$3')"; fi
}

# Commands run in the background leave $TMP/NAME.rc (exit status) and
# $TMP/NAME.err (stderr). rc_of NAME: that status, or "none".
rc_of() { cat "$TMP/$1.rc" 2>/dev/null || echo none; }

# check_rc WHAT NAME WANT: NAME exited with status WANT.
check_rc() {
	got=$(rc_of "$2")
	if [ "$got" = "$3" ]; then ok "$1"; else
		not_ok "$1 (exit status $got, want $3)"; sed 's/^/#   /' "$TMP/$2.err" | head -10
	fi
}

# check_err WHAT NAME PATTERN: a line of NAME's stderr matches PATTERN.
check_err() {
	if grep -Eq -- "$3" "$TMP/$2.err"; then ok "$1"; else
		not_ok "$1 (no stderr line matches '$3')"; sed 's/^/#   /' "$TMP/$2.err" | head -10
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

# ref_same WHAT TRACE: the reference's ovnisort and ovniemu (1.14, in
# $OVNI_REF_BIN, where present) accept a copy of the trace and write the
# same timelines as ovni emu.
REF_BIN=${OVNI_REF_BIN:-/work/shared/ref/bin}
ref_same() {
	if [ ! -x "$REF_BIN/ovniemu" ]; then
		echo "ok - # SKIP $1: no reference ovniemu in $REF_BIN"
		return
	fi
	rm -rf "$TMP/ref" "$TMP/ours" && cp -r "$2" "$TMP/ref" && mkdir -p "$TMP/ours"
	if ! "$REF_BIN/ovnisort" "$TMP/ref" >/dev/null 2>&1 ||
		! OVNI_CONFIG_DIR=$REF_BIN/../share/ovni "$REF_BIN/ovniemu" -l "$TMP/ref" >"$TMP/ref.log" 2>&1; then
		not_ok "$1: the reference accepts the trace"; grep -v INFO "$TMP/ref.log" | head -5 | sed 's/^/#   /'
		return
	fi
	"$OVNI" emu -l -o "$TMP/ours" "$2" >/dev/null 2>&1 || { not_ok "$1: ovni emu accepts the trace"; return; }
	for f in thread.prv cpu.prv thread.pcf cpu.pcf thread.row cpu.row; do
		cmp -s "$TMP/ref/$f" "$TMP/ours/$f" || { not_ok "$1: $f differs from the reference's"; return; }
	done
	ok "$1: the reference accepts it and writes the same timelines"
}

done_testing() { exit $T_FAILED; }

# need_pkgs WHAT CMD PKG...: makes CMD available, installing the Debian
# packages with apt-get when it is missing (root only); returns 1, after a
# SKIP line naming WHAT, when it cannot. Used by the tests needing MPI or clang.
need_pkgs() {
	what=$1; cmd=$2; shift 2
	command -v "$cmd" >/dev/null 2>&1 && return 0
	apt_install "$what" "$@"
	command -v "$cmd" >/dev/null 2>&1 && return 0
	echo "ok - # SKIP $what: $cmd is missing and packages $* could not be installed"
	return 1
}

# apt_install WHAT PKG...: installs the Debian packages (root with apt-get
# only, updating the package lists if the first try fails); 1 if it cannot.
apt_install() {
	what=$1; shift
	[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || return 1
	echo "# installing $* for $what"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq "$@" >"$TMP/apt.log" 2>&1 ||
		{ apt-get update -qq >>"$TMP/apt.log" 2>&1 && apt-get install -y -qq "$@" >>"$TMP/apt.log" 2>&1; }
}

# mkthread DIR TID: a stream directory with finished metadata (pid 1 on
# node0); the events come from $BUILD/tools/mkstream lines on stdin.
mkthread() {
	mkdir -p "$1"
	printf '{"version": 3, "ovni": {"lib": {"version": "1.14.0", "commit": "t"}, "part": "thread", "tid": %s, "pid": 1, "loom": "node0", "app_id": 1, "require": {"ovni": "1.1.0"}, "finished": 1}}' "$2" >"$1/stream.json"
	"$BUILD/tools/mkstream" "$1/stream.obs"
}
