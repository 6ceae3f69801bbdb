#!/bin/sh
# Runs the tests that need root (network namespaces, nftables, conntrack on
# this machine's kernel). They must run, not skip: a skip fails this step.
set -eu
if [ "$(id -u)" != 0 ]; then
	echo "test-root: the integration tests need root (network namespaces, nftables); run make test as root" >&2
	exit 1
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
# The router's day at a 128 MB router's size takes about five minutes on
# a loaded 2-core machine, and up to 60 s more for each check that hangs:
# a bad day can outlast go test's default 10 min.
GOTOOLCHAIN=local go test -count=1 -timeout 30m -run '^TestIntegration' -v ./... >"$out" 2>&1 || status=$?
grep -E '^(=== RUN|--- (PASS|FAIL|SKIP)|FAIL|ok|PASS|panic:)|_test.go:[0-9]+:' "$out" | grep -v '^=== RUN' || true
pass=$(grep -c -- '--- PASS: TestIntegration' "$out" || true)
fail=$(grep -c -- '--- FAIL: TestIntegration' "$out" || true)
skip=$(grep -c -- '^--- SKIP: TestIntegration' "$out" || true)
if [ "$skip" -gt 0 ]; then
	echo "test-root: $skip integration tests skipped; as root on this machine every one must run:" >&2
	grep -A2 -- '^--- SKIP' "$out" >&2
	status=1
fi
# Subtests may skip for a kernel feature this machine lacks, by name; the
# VM lab runs them on kernels that have it.
grep -- '^    --- SKIP' "$out" | sed 's/^ */test-root: skipped for a kernel feature this machine lacks (its log is above): /' || true
[ "$status" = 0 ] || grep -E 'FAIL|panic' "$out" | head -20 >&2
echo "integration: $pass passed, $fail failed"
exit "$status"
