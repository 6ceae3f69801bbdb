# shellcheck shell=bash
# Plain forwarding between two veths: the slow path, the seed's hand-written
# flowtable, and fastpath's daemon deciding the same on its own.

bench_forward_slowpath() {
	topo_forward; slow_setup; measure
	bench_record "$1" throughput_mbps="$MBPS" slowpath_packets="$SLOW" router_cpu_pct="$CPU"
}

bench_forward_nft_by_hand() {
	topo_forward; slow_setup; nft_by_hand "lan0, wan0"; measure
	bench_record "$1" throughput_mbps="$MBPS" slowpath_packets="$SLOW" router_cpu_pct="$CPU"
}

bench_forward_fastpath() {
	topo_forward; uci_firewall 1 0; slow_setup
	fastpath_start > /tmp/fastpath-start.err || { bench_error "$1" "$(cat /tmp/fastpath-start.err)"; return; }
	measure_daemon
	bench_record "$1" throughput_mbps="$MBPS" slowpath_packets="$SLOW" router_cpu_pct="$CPU" daemon_cpu_pct="$DAEMON_CPU"
	fastpath_stop
}

bench_scenario forward/slowpath 6.12 bench_forward_slowpath
bench_scenario forward/nft-by-hand 6.12 bench_forward_nft_by_hand
bench_scenario forward/fastpath 6.12 bench_forward_fastpath
