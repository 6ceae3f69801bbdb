#!/bin/sh
# The block-list matcher's benchmarks (src/cut/blocklist: 65,536 flows against
# banIP's 138,155 prefixes) natively on x86_64 and as mips_24kc (big-endian,
# soft-float) under Debian's qemu-user-static, one after the other, with
# the MIPS cost as a ratio of the x86_64 one. The ratio is of CPU time per
# operation (cpu-ns/op: the process's user and system time, every thread),
# so a loaded machine's waits for a core are not in it; it is what the
# emulation costs on this machine, not a 720 MHz 24Kc's own speed.
#
# Usage: src/build/bench-mips.sh [benchmark regexp]   (make bench-scale-mips)
set -eu
cd "$(dirname "$0")/../.."
# shellcheck source=/dev/null # arches.sh is checked on its own
. src/build/arches.sh
export GOTOOLCHAIN="${FASTPATH_GO_TOOLCHAIN:-go1.23.12}" CGO_ENABLED=0
bench=${1:-'^Benchmark(MatchPass|MatchOnly|AddElement|AddBurst)$'}
pkg=./src/cut/blocklist
out=dist/bench-mips
qemu=$(qemu_user mips_24kc)
command -v "$qemu" >/dev/null || {
	echo "bench-mips: $qemu is missing: install qemu-user-static (src/build/deps.sh does)" >&2
	exit 1
}
mkdir -p "$out"
go test -c -vet=off -o "$out/x86_64.test" "$pkg"
# shellcheck disable=SC2046 # goenv prints a list of words
env $(goenv mips_24kc) GOOS=linux go test -c -vet=off -o "$out/mips_24kc.test" "$pkg"
abs=$(pwd)/$out
for arch in x86_64 mips_24kc; do
	runner=""
	[ "$arch" = x86_64 ] || runner=$qemu
	echo "== $arch"
	# shellcheck disable=SC2086 # $runner is empty for the native run
	(cd "$pkg" && $runner "$abs/$arch.test" -test.run '^$' -test.bench "$bench" -test.benchmem) | tee "$abs/$arch.txt"
done
# name -> cpu-ns/op (else ns/op) of each run, then the table.
awk '
FNR == 1 { arch = (FILENAME ~ /mips_24kc\.txt$/) ? "mips" : "x86" }
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
	wall = ""; cpu = ""
	for (i = 3; i < NF; i++) {
		if ($(i + 1) == "ns/op") wall = $i
		if ($(i + 1) == "cpu-ns/op") cpu = $i
	}
	v[arch, name] = (cpu != "") ? cpu : wall
	w[arch, name] = wall
	if (!(name in seen)) { seen[name] = 1; order[++n] = name }
}
END {
	printf "\n%-12s %16s %16s %16s %16s %8s\n", "benchmark", "x86_64 cpu-ms", "mips cpu-ms", "x86_64 wall-ms", "mips wall-ms", "ratio"
	for (k = 1; k <= n; k++) {
		m = order[k]
		r = (v["x86", m] > 0) ? sprintf("%.1f", v["mips", m] / v["x86", m]) : "-"
		printf "%-12s %16.3f %16.3f %16.3f %16.3f %8s\n", m, v["x86", m] / 1e6, v["mips", m] / 1e6, w["x86", m] / 1e6, w["mips", m] / 1e6, r
	}
}' "$out/x86_64.txt" "$out/mips_24kc.txt" | tee "$out/ratio.txt"
