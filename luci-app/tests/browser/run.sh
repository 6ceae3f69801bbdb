#!/bin/sh
# make test-luci-browser: installs luci-app/ and dist/fastpath into
# openwrt-userland (found by src/build/openwrt-userland.sh: OPENWRT_USERLAND,
# else ../shared/openwrt-userland beside the repo or its origin) and runs
# inner.sh there, which starts the real daemon and drives every view in
# headless Chromium as root, readonly and noapp. Writes dist/luci-browser/:
# the daemon's log and last answers, the stack's logs, and screenshots/ with
# each view as each login saw it.
set -eu
repo=$(cd "$(dirname "$0")/../../.." && pwd -P)
here=$repo/luci-app/tests/browser
fail() { echo "test-luci-browser: $*" >&2; exit 1; }

userland=$("$repo/src/build/openwrt-userland.sh") || fail "needs openwrt-userland (set OPENWRT_USERLAND)"
[ "$(id -u)" = 0 ] || fail "needs root (openwrt-userland's namespaces)"
[ -x "$repo/dist/fastpath" ] || fail "no $repo/dist/fastpath: run make build"
chromium=${CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || fail "no $chromium: run src/build/deps.sh (Debian package chromium)"
command -v node >/dev/null || fail "no node: run src/build/deps.sh (Debian package nodejs)"
[ -d "$here/node_modules/puppeteer-core" ] || fail "no $here/node_modules/puppeteer-core: run src/build/deps.sh (npm ci in luci-app/tests/browser)"

# DOCS_SCREENSHOTS=dir (e.g. luci-app/docs): also the smaller PNGs the docs show.
docs=
if [ -n "${DOCS_SCREENSHOTS:-}" ]; then
	mkdir -p "$DOCS_SCREENSHOTS"
	docs=$(cd "$DOCS_SCREENSHOTS" && pwd -P)
	case $docs in "$repo"/*) ;; *) fail "DOCS_SCREENSHOTS=$DOCS_SCREENSHOTS is not inside $repo (the only host directory the runtime binds)" ;; esac
fi
out=${OUT:-$repo/dist/luci-browser}
rm -rf "$out"
mkdir -p "$out"
files=$out/files
mkdir -p "$files/etc/config" "$files/etc/fastpath"

# A copy of the runtime that lost its symbolic links gets them back.
"$repo/src/build/openwrt-userland.sh" --links "$files" >/dev/null

# The router's network is the lab's (src/testdata/uci/network). The block lists
# carry markup in a file line and in a name: the pages must show it as text.
cp "$repo/src/testdata/uci/network" "$files/etc/config/network"
cat >"$files/etc/config/fastpath" <<'UCI'

config fastpath 'main'
	option enabled '1'
	option cut_expiry '10'

config blocklist
	option name 'watched'
	option type 'file'
	option path '/etc/fastpath/blocklist.txt'

config blocklist
	option name '<img src=x id=fpxss-listname onerror=window.__fpxss=1>'
	option type 'list'
	list address '10.0.2.3'
UCI
printf '%s\n' '# test list' '198.51.100.7' '<img src=x id=fpxss-listline onerror=window.__fpxss=1>' >"$files/etc/fastpath/blocklist.txt"

APP_DIR=$repo/luci-app FASTPATH_BIN=$repo/dist/fastpath FILES_DIR=$files OUT=$out BIND="$repo" \
	CHROMIUM=$chromium SCREENSHOTS=$out/screenshots DOCS_SCREENSHOTS=$docs \
	"$userland/start.sh" "$here/inner.sh"
