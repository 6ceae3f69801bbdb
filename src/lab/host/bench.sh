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
	# Figures are compared to within 2 %: the guest's time counts its own
	# instructions, so the host's load cannot move them (see lab_run).
	export LAB_CLOCK=${LAB_CLOCK:-instructions}
	for series in ${LAB_BENCH_KERNELS:-6.12 7}; do
		rc=0
		# One repetition of every 6.12 row takes about seven minutes of the
		# host's time on the instruction clock; the limit only stops a hang.
		lab_run --kernel "$series" --timeout "${LAB_BENCH_TIMEOUT:-$((LAB_BENCH_REPS * 840 + 600))}" --results "$work/$series" \
			"$LAB_DIR/scenarios/bench.sh" || rc=$?
		lab_bench_oopses "$work/$series" "$rc"
		if [ "$rc" != 0 ]; then
			echo "lab: bench on Linux $series ended with status $rc" >&2
			failed=1
		fi
	done
	ls "$work"/*/runs.jsonl >/dev/null 2>&1 || die "bench: no repetitions were recorded"
	echo
	(cd "$REPO" && GOTOOLCHAIN=local go run ./src/lab/cmd/benchreport -o dist/bench.json -clock "$LAB_CLOCK" "$work"/*/runs.jsonl)
	return "$failed"
}

# `lab bench-vm2` (make bench-vm2): the cut rows in the two-VM lab (the
# flood comes from a traffic VM, so the router VM's CPU is the router's
# own: scenarios/vm2-cut.sh) beside the old rows of one VM with two NICs on
# a qemu hub (scenarios/xdp-virtio.sh, whose sender shares the VM), then
# the forward rows of the two-VM lab (scenarios/vm2-forward.sh), in one
# run; writes dist/bench-vm2.json and prints the table. Instruction clock,
# both VMs: each VM is one host thread (the host has two cores), and each
# VM's CPU figures count its own instructions, not the other's or the load.
lab_bench_vm2() {
	local work rc failed=0
	work=$(mktemp -d /tmp/fastpath-labbench.XXXXXX)
	# shellcheck disable=SC2064
	trap "rm -rf '$work'" EXIT
	mkdir -p "$REPO/dist"
	export LAB_BENCH_REPS=${LAB_BENCH_REPS:-3}
	export LAB_CLOCK=${LAB_CLOCK:-instructions}
	rc=0
	LAB_NICS=hub2 lab_run --kernel 6.12 --timeout 900 --results "$work/hub2" "$LAB_DIR/scenarios/xdp-virtio.sh" || rc=$?
	lab_bench_oopses "$work/hub2" "$rc"
	[ "$rc" = 0 ] || { echo "lab: the hub2 rows ended with status $rc" >&2; failed=1; }
	rc=0
	# One round takes about a minute of the guests' time; the limit only stops a hang.
	lab_run --kernel 6.12 --timeout "${LAB_BENCH_TIMEOUT:-$((LAB_BENCH_REPS * 300 + 600))}" --results "$work/vm2" \
		--peer "$LAB_DIR/scenarios/vm2-traffic.sh" "$LAB_DIR/scenarios/vm2-cut.sh" || rc=$?
	lab_bench_oopses "$work/vm2" "$rc"
	[ "$rc" = 0 ] || { echo "lab: the two-VM rows ended with status $rc" >&2; failed=1; }
	rc=0
	lab_run --kernel 6.12 --timeout "${LAB_BENCH_TIMEOUT:-$((LAB_BENCH_REPS * 300 + 600))}" --results "$work/vm2-forward" \
		--peer "$LAB_DIR/scenarios/vm2-traffic.sh" "$LAB_DIR/scenarios/vm2-forward.sh" || rc=$?
	lab_bench_oopses "$work/vm2-forward" "$rc"
	[ "$rc" = 0 ] || { echo "lab: the two-VM forward rows ended with status $rc" >&2; failed=1; }
	ls "$work"/*/runs.jsonl >/dev/null 2>&1 || die "bench-vm2: no repetitions were recorded"
	echo
	(cd "$REPO" && GOTOOLCHAIN=local go run ./src/lab/cmd/benchreport -o dist/bench-vm2.json -clock "$LAB_CLOCK" "$work"/*/runs.jsonl)
	return "$failed"
}

# lab_bench_oopses RESULTS STATUS: what guest kernel oopses did to the rows
# of one lab_run (it runs a job that died of one once more). bench.sh
# resumes such a run and notes the repetition it measures again; the row a
# second oops cut short (bench.current) fails here with the oops as its
# error. The two-VM scripts run again from the start: each row they
# recorded gets the note.
lab_bench_oopses() {
	local results=$1 rc=$2 oops rows
	[ -s "$results/guest-oopses" ] || return 0
	oops=$(tail -n 1 "$results/guest-oopses" | sed 's/^[^:]*: //')
	if [ -s "$results/bench.current" ]; then
		[ "$rc" != "$LAB_OOPS" ] || jq -cn --arg name "$(cat "$results/bench.current")" --arg kernel "$LAB_VER" --arg oops "$oops" \
			'{name: $name, kernel: $kernel, error: "guest oops again after the retry (\($oops))"}' >> "$results/runs.jsonl"
	elif [ -s "$results/runs.jsonl" ]; then
		rows=$(jq -c --arg oops "$oops" '{name, kernel, note: "guest oops: the VM run was retried once (\($oops))"}' "$results/runs.jsonl" | sort -u)
		echo "$rows" >> "$results/runs.jsonl"
	fi
}
