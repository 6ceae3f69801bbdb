#!/bin/bash
# Runs inside the lab VM: the XDP cut's network-namespace tests
# (src/cut/xdp, TestIntegration*) on this kernel, so the verifier of every
# kernel series the lab boots (5.10 as OpenWrt 22.03 ships, 6.12, 7) loads
# the program. The test binary is dist/xdp-cut.test, which
# `make test-xdp-kernels` builds before booting each kernel.
set -u
bin=$LAB_REPO/dist/xdp-cut.test
[ -x "$bin" ] || { echo "FAIL: no $bin (make test-xdp-kernels builds it)"; exit 1; }
echo "kernel $(uname -r)"
# Modules the tests' namespaces need; some are built in, depending on the kernel.
for m in veth bridge nf_tables nft_ct nft_counter; do modprobe "$m" 2>/dev/null; done
cd "$LAB_REPO/src/cut/xdp" || exit 1
exec "$bin" -test.count=1 -test.v -test.run Integration
