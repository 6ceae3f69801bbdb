#!/bin/sh
# Prints the directory of the prebuilt OpenWrt userland (ubusd, rpcd, uhttpd,
# LuCI, uci) that the tests against the real parts use: $OPENWRT_USERLAND,
# else ../shared/openwrt-userland beside this clone, beside the repository a
# worktree belongs to, or beside the clone's origin, else the machines'
# /work/shared/openwrt-userland. Exits 1, naming OPENWRT_USERLAND, when none
# exists: a test that needs it must fail, never pass without it.
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${OPENWRT_USERLAND:-}" ]; then
	if [ -d "$OPENWRT_USERLAND/root" ]; then
		(cd "$OPENWRT_USERLAND" && pwd)
		exit 0
	fi
	echo "OPENWRT_USERLAND=$OPENWRT_USERLAND has no root/ directory" >&2
	exit 1
fi
common=$(git -C "$repo" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)
origin=$(git -C "$repo" config --get remote.origin.url 2>/dev/null || true)
case "$origin" in
/*) ;;
file://*) origin=${origin#file://} ;;
*) origin= ;;
esac
for base in "$repo" "${common%/.git}" "${origin%/.git}"; do
	[ -n "$base" ] || continue
	d="$(dirname "$base")/shared/openwrt-userland"
	if [ -d "$d/root" ]; then
		(cd "$d" && pwd)
		exit 0
	fi
done
if [ -d /work/shared/openwrt-userland/root ]; then
	echo /work/shared/openwrt-userland
	exit 0
fi
echo "the OpenWrt userland (ubusd, rpcd, uhttpd, LuCI, uci) is not found: set OPENWRT_USERLAND to its directory" >&2
exit 1
