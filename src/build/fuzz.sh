#!/bin/sh
# Runs every fuzz target (func FuzzXxx in any package) for a short time
# each, one after the other (the fuzzer uses every CPU). A failing input is
# saved by go test under the package's testdata/fuzz/<target>/: commit it
# with the fix so that the plain unit tests replay it from then on.
#
# Usage: src/build/fuzz.sh [package pattern...]   (default ./...)
# Env:   FUZZTIME per target (default 10s)
set -u
cd "$(dirname "$0")/../.." || exit 1
export GOTOOLCHAIN=local
fuzztime=${FUZZTIME:-10s}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

passed=0 failed=0
pkgs=$(go list -e -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' "${@:-./...}" | sed '/^$/d')
for pkg in $pkgs; do
	if ! targets=$(go test -list '^Fuzz' "$pkg" 2>"$log"); then
		failed=$((failed + 1))
		echo "FAIL  $pkg: does not build"
		sed 's/^/    /' "$log" | tail -n 20
		continue
	fi
	for target in $(echo "$targets" | grep '^Fuzz'); do
		if go test -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" "$pkg" >"$log" 2>&1; then
			passed=$((passed + 1))
			echo "ok    $pkg $target ($fuzztime)"
		else
			failed=$((failed + 1))
			echo "FAIL  $pkg $target"
			sed 's/^/    /' "$log" | tail -n 30
		fi
	done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
