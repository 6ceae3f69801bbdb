#!/bin/bash
# Runs inside the lab VM booted with LAB_NICS=hub2 (two virtio-net NICs on
# one qemu hub): the same UDP flood from eth0 into eth1 three times, with no
# cut, with the netdev ingress cut and with the XDP cut in virtio_net, and
# what reached the stack and the softirq time of each (dist/xdpdrop, which
# `make lab-tools` builds). Each round is also a bench row (hub2/off,
# hub2/netdev, hub2/xdp in /lab-results/runs.jsonl): its CPU figures count
# the sender's system time too, which shares this VM (make bench-vm2 prints
# them beside the two-VM rows, which do not).
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=src/lab/scenarios/lib.sh
. "$here/lib.sh"
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
		if ! out=$("$bin" -tx eth0 -rx eth1 -mode "$mode" -frames "$frames" 2>&1); then
			echo "round $round: $out"; bench_error "hub2/$mode" "$out"; rc=1; continue
		fi
		echo "round $round: $out"
		# xdpdrop's key=value words; CPU over both vCPUs of the run.
		eval "$(echo "$out" | tr ' ' '\n' | grep -E '^(frames_sent|frames_to_stack|seconds|softirq_s|system_s)=[0-9.]+$' | sed 's/^/X_/')"
		bench_record "hub2/$mode" frames_sent="${X_frames_sent:-0}" frames_to_stack="${X_frames_to_stack:-0}" \
			router_cpu_pct="$(awk -v s="${X_softirq_s:-0}" -v y="${X_system_s:-0}" -v t="${X_seconds:-0}" 'BEGIN { printf "%.1f", (t > 0 ? 100 * (s + y) / (2 * t) : 0) }')" \
			router_softirq_pct="$(awk -v s="${X_softirq_s:-0}" -v t="${X_seconds:-0}" 'BEGIN { printf "%.1f", (t > 0 ? 100 * s / (2 * t) : 0) }')" \
			router_us_per_frame="$(awk -v s="${X_softirq_s:-0}" -v y="${X_system_s:-0}" -v n="${X_frames_sent:-0}" 'BEGIN { printf "%.2f", (n > 0 ? 1e6 * (s + y) / n : 0) }')" > /dev/null
	done
done
exit $rc
