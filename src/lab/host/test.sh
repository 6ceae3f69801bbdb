# shellcheck shell=bash
# `lab test`: builds the packages' integration test binaries, boots the 6.12
# kernel and the 7.x kernel once each, runs scenarios/tests.sh in them, then
# scenarios/openwrt.sh in one more 6.12 VM, and adds up their PASS/FAIL
# lines. Ends with "N passed, N failed"; exits 1 on any failure.
# Sourced by src/lab/lab.

# Packages whose TestIntegration... tests need a real flowtable kernel
# (paths under src/; PATH:REGEX runs only the tests REGEX matches, as
# go test -run does). Override with LAB_VMTEST_PKGS.
LAB_VMTEST_PKGS_DEFAULT="nft cmd/fastpath cut/xdp:^TestIntegrationForward"

lab_test() {
	local work pkgs pkg name passed failed rc series
	pkgs=${LAB_VMTEST_PKGS:-$LAB_VMTEST_PKGS_DEFAULT}
	work=$(mktemp -d /tmp/fastpath-labtest.XXXXXX)
	# shellcheck disable=SC2064
	trap "rm -rf '$work'" EXIT
	: > "$work/host-checks"

	mkdir -p "$REPO/dist/vmtests"
	for pkg in $pkgs; do
		pkg=${pkg%%:*}
		name=${pkg//\//-}
		rm -f "$REPO/dist/vmtests/$name.test"
		echo "lab: building src/$pkg integration tests" >&2
		if ! (cd "$REPO" && GOTOOLCHAIN=local CGO_ENABLED=0 go test -c -o "dist/vmtests/$name.test" "./src/$pkg") >&2; then
			echo "FAIL pkg/$pkg: 'go test -c ./src/$pkg' failed on the host" >> "$work/host-checks"
		elif [ ! -x "$REPO/dist/vmtests/$name.test" ]; then
			echo "FAIL pkg/$pkg: src/$pkg has no test files, so no VM test binary" >> "$work/host-checks"
		fi
	done
	[ -x "$REPO/dist/fastpath" ] || echo "lab: warning: $REPO/dist/fastpath is missing (make build): the product tests will fail" >&2

	lab_oops_check "$work"

	for series in 6.12 7; do
		mkdir -p "$work/$series"
		if ! lab_kernel "$series" > "$work/$series.kernel" 2> "$work/$series.err"; then
			cat "$work/$series.err" >&2
			echo "FAIL kernel/$series: Linux $series cannot be had: $(tr '\n' ' ' < "$work/$series.err")" >> "$work/host-checks"
			[ "$series" = 7 ] && echo "FAIL fastpath/ipip-rx-bypasses-forward: needs sid's Linux 7.x kernel, which cannot be had (see kernel/7)" >> "$work/host-checks"
			continue
		fi
		rc=0
		LAB_VMTESTS=$pkgs lab_run --kernel "$series" --timeout "${LAB_TEST_TIMEOUT:-2400}" --results "$work/$series" \
			"$LAB_DIR/scenarios/tests.sh" || rc=$?
		if [ "$rc" != 0 ]; then
			echo "FAIL vm/$series: the VM run ended with status $rc (124: hard timeout, 125: the VM could not run the script, $LAB_OOPS: a guest kernel oops, again after a retry)" >> "$work/host-checks"
		fi
	done

	# OpenWrt's own services (procd, netifd, firewall4, opkg) on the 6.12
	# router, fastpath installed from make ipk's package: a VM of its own,
	# so nothing tests.sh left behind in the root namespace meets them.
	if [ -s "$work/6.12.kernel" ]; then
		mkdir -p "$work/openwrt"
		rc=0
		lab_run --kernel 6.12 --timeout "${LAB_OPENWRT_TIMEOUT:-1200}" --results "$work/openwrt" \
			"$LAB_DIR/scenarios/openwrt.sh" || rc=$?
		if [ "$rc" != 0 ]; then
			echo "FAIL vm/openwrt: the VM run ended with status $rc (124: hard timeout, 125: the VM could not run the script, $LAB_OOPS: a guest kernel oops, again after a retry)" >> "$work/host-checks"
		elif ! grep -q '^PASS openwrt/' "$work/openwrt/checks" 2>/dev/null; then
			echo "FAIL vm/openwrt: scenarios/openwrt.sh recorded no passing check" >> "$work/host-checks"
		fi
	fi

	cat "$work"/*/checks "$work/host-checks" 2>/dev/null > "$work/all"
	passed=$(grep -c '^PASS ' "$work/all" || true)
	failed=$(grep -c '^FAIL ' "$work/all" || true)
	echo
	echo "VM tests:"
	sed 's/^/  /' "$work/all"
	# Oopses the runs survived by a retry are no failures, but are told.
	# (oops-check's are the fake ones.)
	local f
	for f in "$work"/*/guest-oopses; do
		case $f in "$work"/oops-check/*) ;; *) cat "$f" ;; esac
	done > "$work/oopses" 2>/dev/null || true
	if [ -s "$work/oopses" ]; then
		echo "guest oopses (each run retried once): $(wc -l < "$work/oopses")"
		sed 's/^/  /' "$work/oopses"
	fi
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
}

# lab_oops_check WORK: the lab's own check that a guest kernel oops ends a
# VM run at once (scenarios/fake-oops.sh puts an oops line on the console
# and then waits 600 s): the run must end within LAB_OOPS_CHECK_LIMIT
# seconds (240: two boots) with status $LAB_OOPS, the oops line in the
# error of both runs, retried exactly once, and the script's own "BUG:"
# line not taken for the kernel's. Records lab/guest-oops-ends-run.
lab_oops_check() {
	local work=$1 limit=${LAB_OOPS_CHECK_LIMIT:-240} start took rc=0 why="" log=$1/oops-check.log
	start=$(date +%s)
	timeout -k 10 "$limit" "$LAB_DIR/lab" run --kernel 6.12 --timeout 600 --results "$work/oops-check" \
		"$LAB_DIR/scenarios/fake-oops.sh" > "$log" 2>&1 || rc=$?
	took=$(($(date +%s) - start))
	if [ "$rc" = 124 ] && [ "$took" -ge "$limit" ]; then
		why="the run did not end within ${limit}s of starting (the fake oops should end each of its two boots within seconds)"
	elif [ "$rc" != "$LAB_OOPS" ]; then
		why="the run ended with status $rc, not $LAB_OOPS (a guest oops)"
	elif [ "$(grep -c '^lab: guest oops: retried once$' "$log")" != 1 ]; then
		why="not retried exactly once"
	elif [ "$(grep -cE '^lab:   \[ *[0-9]+\.[0-9]+\] Oops: int3: .*fake-oops' "$log")" != 2 ]; then
		why="the fake oops line is not in the error of both runs"
	elif grep -q "^lab:   .*a test's own line" "$log"; then
		why="a user-space line holding BUG: was taken for the kernel's"
	fi
	echo "lab: the guest-oops check took ${took}s for two boots (log: $log)" >&2
	if [ -z "$why" ]; then
		echo "PASS lab/guest-oops-ends-run" >> "$work/host-checks"
	else
		sed 's/^/lab: oops check: /' "$log" >&2
		echo "FAIL lab/guest-oops-ends-run: $why" >> "$work/host-checks"
	fi
}
