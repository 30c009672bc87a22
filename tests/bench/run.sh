#!/bin/sh
# Runs every benchmark: tests/bench/*.sh except this one. Each prints its own
# figures; a benchmark that fails makes `make bench` fail.
cd "$(dirname "$0")/../.."
: "${OVNI:?OVNI must name the ovni binary}" "${BUILD:?BUILD must name the build directory}"
export OVNI BUILD
rc=0
for b in tests/bench/*.sh; do
	name=$(basename "$b" .sh)
	case $name in run | lib) continue ;; esac
	echo "== $name"
	sh "$b" || { echo "bench $name failed"; rc=1; }
done
exit $rc
