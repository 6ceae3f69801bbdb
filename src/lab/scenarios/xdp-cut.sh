#!/bin/bash
# Runs inside the lab VM: the XDP cut's network-namespace tests
# (src/cut/xdp, TestIntegration*) on this kernel, so the verifier of every
# kernel series the lab boots (5.10 as OpenWrt 22.03 ships, 6.12, 7) loads
# the program; then the cut engine's XDP backend tests (src/cut/engine,
# TestIntegrationXDP*: both directions held, release under a flood, expiry,
# IPv6, VLAN, fallback to netdev on a bridge). The test binaries are
# dist/xdp-cut.test and dist/cut-engine.test, which `make test-xdp-kernels`
# builds before booting each kernel.
set -u
bin=$LAB_REPO/dist/xdp-cut.test
engine=$LAB_REPO/dist/cut-engine.test
for b in "$bin" "$engine"; do
	[ -x "$b" ] || { echo "FAIL: no $b (make test-xdp-kernels builds it)"; exit 1; }
done
echo "kernel $(uname -r)"
# Modules the tests' namespaces need; some are built in, depending on the kernel.
for m in veth bridge 8021q nf_tables nft_ct nft_counter nf_conntrack nf_conntrack_netlink nft_nat nft_masq nft_chain_nat; do modprobe "$m" 2>/dev/null; done
cd "$LAB_REPO/src/cut/xdp" || exit 1
"$bin" -test.count=1 -test.v -test.run Integration || exit 1
cd "$LAB_REPO/src/cut/engine" || exit 1
log=$(mktemp)
"$engine" -test.count=1 -test.v -test.run 'IntegrationXDP' 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# The VM has every feature these tests need (VLAN devices included): a skip here is a failure.
if grep -q -- '--- SKIP' "$log"; then
	echo "FAIL: a cut engine XDP test skipped in the VM"
	exit 1
fi
exit "$rc"
