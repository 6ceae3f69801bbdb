#!/bin/bash
# Runs inside the lab VM: every bench scenario registered for this kernel
# series, LAB_BENCH_REPS times, interleaved (rep 1 of each, then rep 2, ...)
# so that drift of the emulated machine spreads evenly over the scenarios.
# Each repetition appends one JSON line to /lab-results/runs.jsonl.
# Scenarios live in bench.d/*.sh and register themselves with
#   bench_scenario NAME SERIES FUNCTION
# (SERIES: 6.12, 7 or "any"); FUNCTION gets a fresh router and must call
# bench_record NAME key=number... or bench_error NAME reason.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=src/lab/scenarios/lib.sh
. "$here/lib.sh"

BENCH_NAMES=(); BENCH_FUNCS=()
bench_scenario() {
	case $2 in any | "$LAB_KERNEL_SERIES") BENCH_NAMES+=("$1"); BENCH_FUNCS+=("$3") ;; esac
}
bench_error() { printf '{"name":"%s","kernel":"%s","error":"%s"}\n' "$1" "$LAB_KERNEL" "$(echo "$2" | tr -d '"\\' | tr '\n' ' ')" | tee -a "$RESULTS/runs.jsonl"; }

for f in "$here"/bench.d/*.sh; do
	# shellcheck disable=SC1090
	. "$f"
done

only=${LAB_BENCH_ONLY:-}
reps=${LAB_BENCH_REPS:-5}
n=${#BENCH_NAMES[@]}
for rep in $(seq 1 "$reps"); do
	# Each repetition starts one scenario later, so no scenario always runs
	# right after the same neighbour.
	for k in $(seq 0 $((n - 1))); do
		i=$(((k + rep - 1) % n))
		name=${BENCH_NAMES[$i]}
		if [ -n "$only" ] && ! echo "$name" | grep -qE "$only"; then continue; fi
		log "bench $name (repetition $rep/$reps)"
		topo_reset
		"${BENCH_FUNCS[$i]}" "$name"
	done
done
topo_reset
