#!/bin/sh
# Cross-builds the fastpath binary for the OpenWrt package architectures:
# dist/<pkgarch>/fastpath, static (CGO off), stripped, version injected.
# Also writes dist/VERSION, the OpenWrt package version that ipk.sh uses,
# so the binary and its package always carry the same version.
#
# Usage: src/build/cross.sh [pkgarch...]   (default: all five)
# Env:   FASTPATH_VERSION overrides the version derived from git.
set -eu
cd "$(dirname "$0")/../.."
# The OpenWrt 24.10 SDK builds with Go 1.23.12: build the packages with the
# same toolchain (fetched once through the module proxy by make deps), so
# sizes are the SDK's and nothing newer than Go 1.23 slips in.
export GOTOOLCHAIN="${FASTPATH_GO_TOOLCHAIN:-go1.23.12}" CGO_ENABLED=0

# shellcheck source=/dev/null # arches.sh is checked on its own
. src/build/arches.sh

# OpenWrt version <PKG_VERSION>-r<N>: PKG_VERSION from the package recipe,
# N the number of commits (since the tag v<PKG_VERSION>, if there is one),
# so every commit gets a newer version that opkg and apk both order right.
package_version() {
	base=$(sed -n 's/^PKG_VERSION:=//p' package/fastpath/Makefile)
	[ -n "$base" ] || {
		echo "cross: no PKG_VERSION:= line in package/fastpath/Makefile" >&2
		return 1
	}
	if git rev-parse -q --verify "refs/tags/v$base" >/dev/null; then
		n=$(git rev-list --count "v$base..HEAD")
	else
		n=$(git rev-list --count HEAD 2>/dev/null || echo 0)
	fi
	echo "$base-r$n"
}

version=${FASTPATH_VERSION:-$(package_version)}
ldflags="-s -w -X github.com/fastpath-wrt/fastpath/src/version.Version=$version"
arches=${*:-$ARCHES}

mkdir -p dist
echo "$version" >dist/VERSION
for arch in $arches; do
	target=$(goenv "$arch")
	mkdir -p "dist/$arch"
	# shellcheck disable=SC2086 # $target is a list of VAR=value words
	# -l (no inlining) keeps the MIPS binary within its flash budget.
	env $target GOOS=linux go build -trimpath -buildvcs=false -gcflags=all=-l -ldflags "$ldflags" \
		-o "dist/$arch/fastpath" ./src/cmd/fastpath
	size=$(wc -c <"dist/$arch/fastpath")
	printf 'cross: %-26s %9d bytes  dist/%s/fastpath (%s)\n' "$arch" "$size" "$arch" "$version"
done
