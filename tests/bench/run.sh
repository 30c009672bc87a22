#!/bin/sh
# Runs every benchmark: tests/bench/*.sh except this one and lib.sh, the
# side-by-side comparison with the reference (ref.sh) first. Each prints its
# own figures; a benchmark that fails makes `make bench` fail.
#   BENCH  the benchmarks to run, by name (e.g. BENCH="ref sort"); default all
cd "$(dirname "$0")/../.."
: "${OVNI:?OVNI must name the ovni binary}" "${BUILD:?BUILD must name the build directory}"
export OVNI BUILD
rc=0
first=1
for b in tests/bench/ref.sh tests/bench/*.sh; do
	name=$(basename "$b" .sh)
	case $name in run | lib) continue ;; esac
	# ref.sh comes first, and not again in the glob
	[ "$name" = ref ] && [ $first = 0 ] && continue
	first=0
	if [ -n "${BENCH:-}" ]; then
		case " $BENCH " in *" $name "*) ;; *) continue ;; esac
	fi
	echo "== $name"
	sh "$b" || { echo "bench $name failed"; rc=1; }
done
exit $rc
