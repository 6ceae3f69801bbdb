# shellcheck shell=bash
# `lab bench` (make bench): boots each kernel once, runs every bench scenario
# registered for it (scenarios/bench.d) LAB_BENCH_REPS times, then writes
# dist/bench.json and prints the table. Sourced by src/lab/lab.
lab_bench() {
	local work series rc failed=0
	work=$(mktemp -d /tmp/fastpath-labbench.XXXXXX)
	# shellcheck disable=SC2064
	trap "rm -rf '$work'" EXIT
	mkdir -p "$REPO/dist"
	export LAB_BENCH_REPS=${LAB_BENCH_REPS:-5}
	for series in ${LAB_BENCH_KERNELS:-6.12 7}; do
		rc=0
		# One repetition of every 6.12 row takes about five minutes in TCG.
		lab_run --kernel "$series" --timeout "${LAB_BENCH_TIMEOUT:-$((LAB_BENCH_REPS * 420 + 300))}" --results "$work/$series" \
			"$LAB_DIR/scenarios/bench.sh" || rc=$?
		if [ "$rc" != 0 ]; then
			echo "lab: bench on Linux $series ended with status $rc" >&2
			failed=1
		fi
	done
	ls "$work"/*/runs.jsonl >/dev/null 2>&1 || die "bench: no repetitions were recorded"
	echo
	(cd "$REPO" && GOTOOLCHAIN=local go run ./src/lab/cmd/benchreport -o dist/bench.json "$work"/*/runs.jsonl)
	return "$failed"
}
