#!/bin/bash
# Runs inside the lab VM for `make lab`: the same router without and with
# fastpath, what fastpath decided and why, and a short table of the result.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=src/lab/scenarios/lib.sh
. "$here/lib.sh"
T=${LAB_DEMO_SECONDS:-4}

# stream_sample SECONDS: a stream; halfway, the number of offloaded flows as
# conntrack sees them ([OFFLOAD]). Sets MBPS SLOW CPU OFFLOADED.
stream_sample() {
	local s0 c0
	iperf_start
	s0=$(slow_count); c0=$(cpu_ticks)
	ip netns exec server iperf3 -c 10.0.1.2 -t "$1" -f m > /tmp/iperf-last.txt 2>&1 &
	local ipid=$!
	sleep $(( $1 / 2 ))
	OFFLOADED=$(conntrack -L 2>/dev/null | grep -c OFFLOAD || true)
	wait "$ipid"
	MBPS=$(iperf_field Mbits/sec); CPU=$(cpu_pct "$c0" "$(cpu_ticks)"); SLOW=$(( $(slow_count) - s0 ))
}

echo
echo "== The lab: client netns -- router (this VM, Linux $LAB_KERNEL) -- server netns"
echo "   lan0 10.0.1.1/24, wan0 10.0.2.1/24; /etc/config/firewall: flow_offloading '1'"
topo_reset
topo_forward; uci_firewall 1 0; slow_setup

echo
echo "== 1. Without fastpath: every packet takes the forward path (${T} s TCP stream)"
stream_sample "$T"; B_MBPS=$MBPS B_SLOW=$SLOW B_CPU=$CPU B_OFF=$OFFLOADED
echo "   $MBPS Mbit/s, $SLOW packets through the forward path"

echo
echo "== 2. fastpath daemon starts and decides"
if ! fastpath_start > /tmp/demo-start.txt; then
	cat /tmp/demo-start.txt
	echo "fastpath could not start: the demo stops here"
	exit 1
fi
sleep 1
if fastpath_status; then
	echo "   mode: requested $(sj .mode.requested), running $(sj .mode.effective): $(sj .mode.reason)"
	echo "   flowtable $(sj .flowtable.table) $(sj .flowtable.name): devices $(sj '.flowtable.devices | join(", ")')"
	echo "   decisions:"
	sj '.decisions[]? | "     [\(.topic)] \(.reason)"'
else
	echo "   (no status: $STATUS_JSON)"
fi
echo
echo "   what fastpath put into the kernel:"
nft list table inet fastpath | sed 's/^/     /'

echo
echo "== 3. With fastpath (${T} s TCP stream)"
stream_sample "$T"; F_MBPS=$MBPS F_SLOW=$SLOW F_CPU=$CPU F_OFF=$OFFLOADED
echo "   $MBPS Mbit/s, $SLOW packets through the forward path"
fastpath_stop

echo
echo "== Result (qemu TCG: compare the rows, not the absolute numbers)"
printf '   %-18s %14s %18s %16s %16s\n' "" "throughput" "slow-path packets" "offloaded flows" "router CPU"
printf '   %-18s %9s Mbit/s %18s %16s %14s %%\n' "without fastpath" "$B_MBPS" "$B_SLOW" "$B_OFF" "$B_CPU"
printf '   %-18s %9s Mbit/s %18s %16s %14s %%\n' "with fastpath" "$F_MBPS" "$F_SLOW" "$F_OFF" "$F_CPU"
topo_reset
