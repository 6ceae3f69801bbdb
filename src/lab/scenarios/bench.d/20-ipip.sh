# shellcheck shell=bash
# Traffic received through an IPIP tunnel (the seed's topology, 7.x kernels
# only: 6.12 has no IPIP rx acceleration). slowpath_packets counts what came
# from the tunnel into the forward path.
#   ipip/no-underlay  the flowtable fw4 renders: zone devices, the tunnel
#                     device, not its underlay
#   ipip/nft-by-hand  the seed's flowtable: LAN and the underlay
#   ipip/fastpath     fastpath finds the underlay itself

bench_ipip_no_underlay() {
	topo_ipip; slow_setup; nft_by_hand "lan0, ipip-tun"; measure
	bench_record "$1" throughput_mbps="$MBPS" slowpath_packets="$SLOW_TUN" router_cpu_pct="$CPU"
}

bench_ipip_nft_by_hand() {
	topo_ipip; slow_setup; nft_by_hand "lan0, wan0"; measure
	bench_record "$1" throughput_mbps="$MBPS" slowpath_packets="$SLOW_TUN" router_cpu_pct="$CPU"
}

bench_ipip_fastpath() {
	topo_ipip; uci_network_ipip; uci_firewall 1 0; slow_setup
	fastpath_start > /tmp/fastpath-start.err || { bench_error "$1" "$(cat /tmp/fastpath-start.err)"; return; }
	measure_daemon
	bench_record "$1" throughput_mbps="$MBPS" slowpath_packets="$SLOW_TUN" router_cpu_pct="$CPU" daemon_cpu_pct="$DAEMON_CPU"
	fastpath_stop
}

bench_scenario ipip/no-underlay 7 bench_ipip_no_underlay
bench_scenario ipip/nft-by-hand 7 bench_ipip_nft_by_hand
bench_scenario ipip/fastpath 7 bench_ipip_fastpath
