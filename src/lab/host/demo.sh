# shellcheck shell=bash
# `lab demo` (make lab): one VM boot on the 6.12 kernel running
# scenarios/demo.sh. Sourced by src/lab/lab.
lab_demo() {
	[ -x "$REPO/dist/fastpath" ] || die "demo: $REPO/dist/fastpath is missing: run 'make build' (or 'make lab', which builds it)"
	# The instruction clock, as the bench: the figures are the bench's, whatever
	# else this machine runs meanwhile.
	LAB_CLOCK=${LAB_CLOCK:-instructions} lab_run --kernel "${LAB_DEMO_KERNEL:-6.12}" --timeout 300 "$LAB_DIR/scenarios/demo.sh"
}
