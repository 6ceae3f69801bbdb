#!/bin/sh
# Cross-builds the fastpath binary for the OpenWrt package architectures:
# dist/<pkgarch>/fastpath, static (CGO off), stripped, version injected.
# Also writes dist/VERSION, the OpenWrt package version that ipk.sh uses,
# so the binary and its package always carry the same version.
#
# Usage: src/build/cross.sh [pkgarch...]   (default: all five)
set -eu
cd "$(dirname "$0")/../.."
# The OpenWrt 24.10 SDK builds with Go 1.23.12: build the packages with the
# same toolchain (fetched once through the module proxy by make deps), so
# sizes are the SDK's and nothing newer than Go 1.23 slips in.
export GOTOOLCHAIN="${FASTPATH_GO_TOOLCHAIN:-go1.23.12}" CGO_ENABLED=0

# shellcheck source=/dev/null # arches.sh is checked on its own
. src/build/arches.sh

# The OpenWrt package version, FASTPATH_VERSION-rFASTPATH_RELEASE: the
# version from package/version.mk, the release from package/release.sh, as
# the SDK's recipes take them, so the SDK gives the same commit the same one.
package_version() {
	base=$(sed -n 's/^FASTPATH_VERSION:=//p' package/version.mk)
	release=$(sh package/release.sh) || return 1
	if [ -z "$base" ] || [ -z "$release" ]; then
		echo "cross: package/version.mk needs a FASTPATH_VERSION:= line, package/release.sh a release" >&2
		return 1
	fi
	echo "$base-r$release"
}

version=$(package_version)
ldflags="-s -w -X github.com/fastpath-wrt/fastpath/src/version.Version=$version"
arches=${*:-$ARCHES}

mkdir -p dist
echo "$version" >dist/VERSION
for arch in $arches; do
	target=$(goenv "$arch")
	mkdir -p "dist/$arch"
	# -l (no inlining) keeps the MIPS binary within its flash budget.
	# package/fastpath/Makefile gives the SDK's build the same flags.
	# On MIPS the Go linker aligns each segment to 64 KiB, for kernels with
	# 64 KiB pages; OpenWrt's MIPS targets run 4 KiB pages, and aligning to
	# those takes the padding (up to 128 KiB of zeros) out of the file.
	round=""
	case " $target " in *" GOARCH=mips "* | *" GOARCH=mipsle "*) round=" -R 0x1000" ;; esac
	# shellcheck disable=SC2086 # $target is a list of VAR=value words
	env $target GOOS=linux go build -trimpath -buildvcs=false -gcflags=all=-l -ldflags "$ldflags$round" \
		-o "dist/$arch/fastpath" ./src/cmd/fastpath
	size=$(wc -c <"dist/$arch/fastpath")
	printf 'cross: %-26s %9d bytes  dist/%s/fastpath (%s)\n' "$arch" "$size" "$arch" "$version"
done
