#!/bin/sh
# Installs what building and testing fastpath needs on Debian 12 (as root).
# Idempotent: apt runs only when a package is missing.
set -eu
here=$(dirname "$0")
pkgs=$(grep -v '^#' "$here/apt-packages.txt" | tr -s ' \n' ' ')
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing
fi
# puppeteer-core for the LuCI browser test, pinned by its package-lock.json.
# Debian's nodejs comes without npm (NodeSource's has it built in).
command -v npm >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm; }
browser=$here/../../luci-app/tests/browser
[ -d "$browser/node_modules/puppeteer-core" ] || npm ci --prefix "$browser" --no-audit --no-fund
command -v go >/dev/null || { echo "deps: Go >= 1.23 is required on PATH (e.g. /usr/local/go/bin)" >&2; exit 1; }
GOTOOLCHAIN=local go mod download
# The OpenWrt SDK's Go, for cross builds (cross.sh, test-cross.sh).
GOTOOLCHAIN="${FASTPATH_GO_TOOLCHAIN:-go1.23.12}" go version >/dev/null
