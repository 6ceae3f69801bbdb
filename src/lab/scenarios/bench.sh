#!/bin/bash
# Runs inside the lab VM: every bench scenario registered for this kernel
# series, LAB_BENCH_REPS times (or as many as it asks for), interleaved
# (rep 1 of each, then rep 2, ...) so that drift of the emulated machine
# spreads evenly over the scenarios.
# Each repetition appends one JSON line to /lab-results/runs.jsonl.
# Scenarios live in bench.d/*.sh and register themselves with
#   bench_scenario NAME SERIES FUNCTION [REPS]
# (SERIES: 6.12, 7 or "any"); FUNCTION gets a fresh router and must call
# bench_record NAME key=number... or bench_error NAME reason.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=src/lab/scenarios/lib.sh
. "$here/lib.sh"

reps=${LAB_BENCH_REPS:-5}
BENCH_NAMES=(); BENCH_FUNCS=(); BENCH_REPS=()
# bench_scenario NAME SERIES FUNCTION [REPS]: REPS (at least LAB_BENCH_REPS)
# for rows compared to within a few percent.
bench_scenario() {
	local r=${4:-$reps}
	[ "$r" -lt "$reps" ] && r=$reps
	case $2 in any | "$LAB_KERNEL_SERIES") BENCH_NAMES+=("$1"); BENCH_FUNCS+=("$3"); BENCH_REPS+=("$r") ;; esac
}

for f in "$here"/bench.d/*.sh; do
	# shellcheck disable=SC1090
	. "$f"
done

# A run that died of a guest kernel oops is run once more by the host (see
# lab_run) with the same results share: it resumes after the repetitions
# runs.jsonl already holds, and the repetition the oops cut short (named
# in bench.current) is measured again, with a note in the table.
# bench_done NAME: how many repetitions of NAME are recorded (notes aside).
bench_done() { grep "^{\"name\":\"$1\"," "$RESULTS/runs.jsonl" 2>/dev/null | grep -vc '"note":' || true; }
if [ -s "$RESULTS/bench.current" ]; then
	jq -cn --arg name "$(cat "$RESULTS/bench.current")" --arg kernel "$LAB_KERNEL" \
		--arg oops "$(tail -n 1 "$RESULTS/guest-oopses" 2>/dev/null | sed 's/^[^:]*: //')" \
		'{name: $name, kernel: $kernel, note: "guest oops: retried once (\($oops))"}' | tee -a "$RESULTS/runs.jsonl"
fi

only=${LAB_BENCH_ONLY:-}
n=${#BENCH_NAMES[@]}
most=$reps
for r in "${BENCH_REPS[@]}"; do [ "$r" -gt "$most" ] && most=$r; done
for rep in $(seq 1 "$most"); do
	# Each repetition starts one scenario later, so no scenario always runs
	# right after the same neighbour.
	for k in $(seq 0 $((n - 1))); do
		i=$(((k + rep - 1) % n))
		name=${BENCH_NAMES[$i]}
		if [ -n "$only" ] && ! echo "$name" | grep -qE "$only"; then continue; fi
		[ "$rep" -gt "${BENCH_REPS[$i]}" ] && continue
		[ "$rep" -le "$(bench_done "$name")" ] && continue
		log "bench $name (repetition $rep/${BENCH_REPS[$i]})"
		echo "$name" > "$RESULTS/bench.current"
		topo_reset
		"${BENCH_FUNCS[$i]}" "$name"
	done
done
rm -f "$RESULTS/bench.current"
topo_reset
