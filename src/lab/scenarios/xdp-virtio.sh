#!/bin/bash
# Runs inside the lab VM booted with LAB_NICS=hub2 (two virtio-net NICs on
# one qemu hub): the same UDP flood from eth0 into eth1 three times, with no
# cut, with the netdev ingress cut and with the XDP cut in virtio_net, and
# what reached the stack and the softirq time of each (dist/xdpdrop, which
# `make lab-tools` builds).
set -u
bin=$LAB_REPO/dist/xdpdrop
[ -x "$bin" ] || { echo "FAIL: no $bin (make lab-tools builds it)"; exit 1; }
echo "kernel $(uname -r)"
for m in virtio_net nf_tables nft_counter; do modprobe "$m" 2>/dev/null; done
if ! ip link set eth0 up || ! ip link set eth1 up; then
	echo "FAIL: no eth0/eth1 (boot with LAB_NICS=hub2)"; exit 1
fi
ip addr add 10.99.0.2/24 dev eth1
echo 0 > /proc/sys/net/ipv4/ip_forward
frames=${LAB_XDPDROP_FRAMES:-200000}
rc=0
for round in 1 2 3; do
	for mode in off netdev xdp; do
		echo "round $round: $("$bin" -tx eth0 -rx eth1 -mode "$mode" -frames "$frames" 2>&1)" || rc=1
	done
done
exit $rc
