# shellcheck shell=bash
# Plain forwarding between two veths: the slow path, the seed's hand-written
# flowtable, and fastpath's daemon deciding the same on its own. The router
# is an OpenWrt router: firewall4's ruleset is loaded (offloading off in it),
# so the slow path is the one a router really takes, and the endpoints send
# wire-sized frames (see wire_frames) rather than veth super-packets.

forward_router() { topo_forward; wire_frames; topo_fw4_router; slow_setup; }
# The three rows are compared to within 2 %: longer streams than the lab's
# default, so that one stream's jitter on the emulated machine weighs less.
FORWARD_SECONDS=${LAB_FORWARD_SECONDS:-8}

bench_forward_slowpath() {
	forward_router; measure "$FORWARD_SECONDS"
	bench_record "$1" throughput_mbps="$MBPS" slowpath_packets="$SLOW" router_cpu_pct="$CPU"
}

bench_forward_nft_by_hand() {
	forward_router; nft_by_hand "lan0, wan0"; measure "$FORWARD_SECONDS"
	bench_record "$1" throughput_mbps="$MBPS" slowpath_packets="$SLOW" router_cpu_pct="$CPU"
}

bench_forward_fastpath() {
	forward_router; uci_firewall 1 0
	fastpath_start > /tmp/fastpath-start.err || { bench_error "$1" "$(cat /tmp/fastpath-start.err)"; return; }
	measure_daemon "$FORWARD_SECONDS"
	bench_record "$1" throughput_mbps="$MBPS" slowpath_packets="$SLOW" router_cpu_pct="$CPU" daemon_cpu_pct="$DAEMON_CPU"
	fastpath_stop
}

# One repetition varies by 1-2 % on the instruction clock (3-7 % on the
# host's), with an odd stream a few percent low: nine make a median that can
# tell 2 %.
FORWARD_REPS=${LAB_BENCH_FORWARD_REPS:-9}
bench_scenario forward/slowpath 6.12 bench_forward_slowpath "$FORWARD_REPS"
bench_scenario forward/nft-by-hand 6.12 bench_forward_nft_by_hand "$FORWARD_REPS"
bench_scenario forward/fastpath 6.12 bench_forward_fastpath "$FORWARD_REPS"
