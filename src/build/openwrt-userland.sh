#!/bin/sh
# Prints the directory of openwrt-userland, the prebuilt OpenWrt userland
# (ubusd, rpcd, uhttpd, uci, LuCI) whose start.sh the tests run in, or fails
# naming OPENWRT_USERLAND. The first that holds an executable start.sh:
#   1. $OPENWRT_USERLAND (when set, it must be the runtime: no fallback)
#   2. ../shared/openwrt-userland beside this repository
#   3. ../shared/openwrt-userland beside the clone's origin, when that is a
#      local path (a clean clone of a checkout next to shared/)
#   4. /work/shared/openwrt-userland
#
#   userland=$(src/build/openwrt-userland.sh) || exit 1
#   src/build/openwrt-userland.sh --links DIR
#       also writes into DIR (for start.sh's FILES_DIR) the symbolic links
#       that a plain copy of the runtime (cp -r, an archive without links)
#       turned into small files holding the target's name
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd -P)
fail() { echo "openwrt-userland: $*" >&2; exit 1; }
runtime() { [ -x "$1/start.sh" ] && [ -d "$1/root" ]; }

find_userland() {
	if [ -n "${OPENWRT_USERLAND:-}" ]; then
		runtime "$OPENWRT_USERLAND" || fail "OPENWRT_USERLAND=$OPENWRT_USERLAND holds no start.sh and root/ of openwrt-userland"
		(cd "$OPENWRT_USERLAND" && pwd -P)
		return
	fi
	tried=
	origin=$(git -C "$repo" config remote.origin.url 2>/dev/null || true)
	case $origin in
	file://*) origin=${origin#file://} ;;
	/*) ;;
	*) origin= ;;
	esac
	for d in "$repo/../shared/openwrt-userland" ${origin:+"$origin/../shared/openwrt-userland"} /work/shared/openwrt-userland; do
		if runtime "$d"; then
			(cd "$d" && pwd -P)
			return
		fi
		tried="$tried $d"
	done
	fail "no openwrt-userland (tried$tried): set OPENWRT_USERLAND to its directory"
}

userland=$(find_userland)
if [ "${1:-}" = --links ]; then
	[ -n "${2:-}" ] || fail "usage: $0 --links DIR"
	mkdir -p "$2"
	(cd "$userland/root" && find . -type f -size -64c ! -name '.*') | while read -r f; do
		t=$(cat "$userland/root/$f")
		case $t in */* | '') continue ;; esac
		if [ -e "$userland/root/$(dirname "$f")/$t" ]; then
			mkdir -p "$2/$(dirname "$f")"
			ln -sfn "$t" "$2/$f"
		fi
	done
fi
echo "$userland"
