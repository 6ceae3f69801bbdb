#!/bin/sh
# Runs the unit tests of every package that has tests on each OpenWrt target
# architecture: the test binary is cross-compiled once per architecture and
# package, then run under Debian's qemu-user-static (amd64 runs natively).
# Big-endian MIPS is where netlink and blobmsg byte-order bugs show.
# Integration tests (TestIntegration*) need root and a kernel: not run here.
#
# Prints a line per architecture and package, then 'N passed, N failed'.
# Usage: src/build/test-cross.sh [pkgarch...]   (default: all five)
# Env:   JOBS (parallel jobs, default: number of CPUs)
set -eu
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$0")/../.."
# The SDK's Go (see cross.sh): the tests must compile with it too.
export GOTOOLCHAIN="${FASTPATH_GO_TOOLCHAIN:-go1.23.12}" CGO_ENABLED=0
out=dist/test-cross

# shellcheck source=/dev/null # arches.sh is checked on its own
. src/build/arches.sh

# target ARCH: "<qemu or -> <GOARCH=... words>" for a package architecture.
target() {
	words=$(goenv "$1") || return 1
	echo "$(qemu_user "$1") $words"
}

# One job, run through xargs: compile (or run) one package for one arch.
# Writes its verdict to $out/<arch>/<name>.result and the log beside it.
if [ "${1:-}" = "--compile" ] || [ "${1:-}" = "--run" ]; then
	mode=$1 arch=$2 pkg=$3 dir=$4
	name=$(echo "$pkg" | tr / _)
	# shellcheck disable=SC2046 # target prints a list of words
	set -- $(target "$arch")
	qemu=$1
	shift
	bin="$out/$arch/$name.test"
	log="$out/$arch/$name.log"
	if [ "$mode" = --compile ]; then
		if ! env "$@" GOOS=linux go test -c -vet=off -o "$bin" "$pkg" >"$log" 2>&1; then
			echo "FAIL build" >"$out/$arch/$name.result"
		elif [ ! -f "$bin" ]; then
			echo "SKIP no tests" >"$out/$arch/$name.result"
		fi
		exit 0
	fi
	[ ! -f "$out/$arch/$name.result" ] || exit 0
	[ "$qemu" = - ] && qemu=""
	start=$(date +%s)
	abs=$(pwd)/$bin
	# shellcheck disable=SC2086 # $qemu is empty for native runs
	if (cd "$dir" && $qemu "$abs" -test.short -test.count=1 -test.timeout=5m \
		-test.skip '^TestIntegration') >"$abs.out" 2>&1; then
		verdict=ok
	else
		verdict=FAIL
	fi
	cat "$abs.out" >>"$log"
	echo "$verdict $(($(date +%s) - start))s" >"$out/$arch/$name.result"
	exit 0
fi

arches=${*:-$ARCHES}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

for arch in $arches; do
	# shellcheck disable=SC2046 # target prints a list of words
	set -- $(target "$arch")
	[ "$1" = - ] || command -v "$1" >/dev/null || {
		echo "test-cross: $1 is missing: install qemu-user-static (src/build/deps.sh does)" >&2
		exit 1
	}
done

# Packages with test files, as "importpath dir".
pkgs=$(go list -e -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' ./... | sed '/^$/d')
[ -n "$pkgs" ] || {
	echo "test-cross: no package has tests"
	echo "0 passed, 0 failed"
	exit 1
}

rm -rf "$out"
for arch in $arches; do mkdir -p "$out/$arch"; done
joblist() {
	for arch in $arches; do
		echo "$pkgs" | while read -r pkg dir; do echo "$1 $arch $pkg $dir"; done
	done
}
# Compiling is parallel inside go already: fewer jobs; running is qemu-bound.
joblist --compile | xargs -n 4 -P "$(((jobs + 1) / 2))" "$self"
joblist --run | xargs -n 4 -P "$jobs" "$self"

passed=0 failed=0
for arch in $arches; do
	echo "$pkgs" | while read -r pkg _; do
		name=$(echo "$pkg" | tr / _)
		result=$(cat "$out/$arch/$name.result" 2>/dev/null || echo "FAIL no result")
		printf '%-5s %-26s %s (%s)\n' "${result%% *}" "$arch" "$pkg" "${result#* }"
		case "$result" in
		FAIL*) sed 's/^/    /' "$out/$arch/$name.log" | tail -n 40 ;;
		esac
	done
done
for result in "$out"/*/*.result; do
	case "$(cat "$result")" in
	ok*) passed=$((passed + 1)) ;;
	FAIL*) failed=$((failed + 1)) ;;
	esac
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
