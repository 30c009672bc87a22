#!/bin/sh
# Build ./ovni from a fresh machine: install the toolchain if missing, fetch
# the pinned zstd source, then run make. Extra arguments go to make.
#   ZSTD_SRC=DIR  use an unpacked zstd source tree instead of fetching one
#   DEPS=DIR      where fetched dependencies live (default: .deps)
set -eu
cd "$(dirname "$0")"
DEPS=${DEPS:-.deps}
. ./vendor/zstd.pin

say() { printf 'build.sh: %s\n' "$*" >&2; }
fail() { say "error: $*"; exit 1; }

apt_updated=
apt_install() {
	command -v apt-get >/dev/null 2>&1 || fail "$1 is missing and there is no apt-get to install it"
	[ "$(id -u)" = 0 ] || fail "$1 is missing; install it (apt-get install $2) or run as root"
	if [ -z "$apt_updated" ]; then
		say "apt-get update"
		apt-get update -qq >&2 || fail "apt-get update failed"
		apt_updated=1
	fi
	say "installing $2"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >&2 || fail "cannot install $2"
}

command -v make >/dev/null 2>&1 || apt_install make make
command -v cc >/dev/null 2>&1 || apt_install cc gcc
command -v musl-gcc >/dev/null 2>&1 || apt_install musl-gcc musl-tools
command -v xz >/dev/null 2>&1 || apt_install xz xz-utils

# Fetch the zstd source through apt's own configured mirrors: every "deb"
# entry of the system becomes a "deb-src" entry in a private apt state, so
# the system's apt configuration is read but never changed.
fetch_zstd() {
	dest=$1
	work=$DEPS/apt
	rm -rf "$work"
	mkdir -p "$work/lists/partial" "$work/parts" "$work/get"
	if [ -f /etc/apt/sources.list ]; then
		sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' /etc/apt/sources.list > "$work/parts/src.list"
	fi
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		sed 's/^Types:.*\bdeb\b.*$/Types: deb-src/' "$f" > "$work/parts/$(basename "$f")"
	done
	for f in /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f" > "$work/parts/$(basename "$f")"
	done
	abs=$(cd "$work" && pwd)
	set -- -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$abs/parts" \
		-o "Dir::State::Lists=$abs/lists" -o Debug::NoLocking=1
	command -v apt-get >/dev/null 2>&1 || fail "no apt-get to fetch zstd; set ZSTD_SRC=DIR to an unpacked zstd $ZSTD_VERSION"
	say "fetching $DEB_SOURCE $DEB_VERSION source through apt"
	apt-get "$@" update -qq >&2 || fail "apt-get update of source lists failed"
	(cd "$abs/get" && apt-get "$@" source --download-only -qq "$DEB_SOURCE=$DEB_VERSION" >&2) ||
		fail "cannot fetch $DEB_SOURCE=$DEB_VERSION (set ZSTD_SRC=DIR to use a local copy)"
	tarball=$abs/get/$ORIG_TARBALL
	[ -f "$tarball" ] || fail "apt did not deliver $ORIG_TARBALL"
	sum=$(sha256sum "$tarball" | cut -d' ' -f1)
	[ "$sum" = "$ORIG_SHA256" ] || fail "$ORIG_TARBALL: sha256 $sum, pinned $ORIG_SHA256"
	rm -rf "$dest.tmp"
	mkdir -p "$dest.tmp"
	tar -xJf "$tarball" -C "$dest.tmp" --strip-components=1
	[ -f "$dest.tmp/lib/zstd.h" ] || fail "$ORIG_TARBALL has no lib/zstd.h"
	rm -rf "$dest"
	mv "$dest.tmp" "$dest"
	rm -rf "$work"
}

if [ -z "${ZSTD_SRC:-}" ]; then
	ZSTD_SRC=$DEPS/zstd-$ZSTD_VERSION
	[ -f "$ZSTD_SRC/lib/zstd.h" ] || fetch_zstd "$ZSTD_SRC"
fi
[ -f "$ZSTD_SRC/lib/zstd.h" ] || fail "ZSTD_SRC=$ZSTD_SRC has no lib/zstd.h"
grep -q "ZSTD_VERSION_MINOR *$(echo "$ZSTD_VERSION" | cut -d. -f2)\$" "$ZSTD_SRC/lib/zstd.h" ||
	say "warning: $ZSTD_SRC is not zstd $ZSTD_VERSION"

jobs=$(nproc 2>/dev/null || echo 2)
exec make -j"$jobs" ZSTD_SRC="$ZSTD_SRC" "$@"
