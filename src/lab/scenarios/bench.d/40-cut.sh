# shellcheck shell=bash
# The verdict cut, measured the way seed 003 measured it (scenarios/cut.sh):
# a UDP flood in the offloaded flow's reply direction, its sender listed at
# second 10, counted from 12 to 22, with cut_in_fastpath on and off; and the
# cost of the setting with many established flows beside a TCP stream.
# shellcheck disable=SC2154 # here: the scenarios directory, set by bench.sh
# shellcheck source=src/lab/scenarios/cut.sh
. "$here/cut.sh"

# bench_cut_flood NAME IN_FASTPATH
bench_cut_flood() {
	cut_router "$2" 10 > /tmp/cut-setup.txt 2>&1 || { bench_error "$1" "$(cat /tmp/cut-setup.txt)"; cut_router_stop; return; }
	cut_flood_run 4
	bench_record "$1" frames_sent="$CUT_SENT" frames_to_stack="$CUT_STACK" far_side_frames="$CUT_FAR" \
		router_cpu_pct="$CUT_CPU" router_softirq_pct="$CUT_SOFTIRQ" sender_cpu_pct="$CUT_SENDER_CPU" offloaded_before="$CUT_OFFLOADED" pps="$CUT_PPS"
	cut_router_stop
}
bench_cut_off() { bench_cut_flood "$1" 0; }
bench_cut_on() { bench_cut_flood "$1" 1; }

# bench_cut_many NAME IN_FASTPATH: CUT_FLOWS established UDP flows (one
# datagram per flow and second each way) while a TCP stream runs.
bench_cut_many() {
	local n
	cut_router "$2" 10 > /tmp/cut-setup.txt 2>&1 || { bench_error "$1" "$(cat /tmp/cut-setup.txt)"; cut_router_stop; return; }
	slow_setup
	cut_many_flows_start $((IPERF_SECONDS + 10))
	sleep 5
	n=$(established_flows)
	measure
	cut_many_flows_wait
	bench_record "$1" throughput_mbps="$MBPS" router_cpu_pct="$CPU" slowpath_packets="$SLOW" flows="$n"
	cut_router_stop
}
bench_cut_many_off() { bench_cut_many "$1" 0; }
bench_cut_many_on() { bench_cut_many "$1" 1; }

# bench_cut_tcp NAME IN_FASTPATH: an iperf3 TCP stream server -> client (its
# data port fixed), the server listed at second 10 of 22.
bench_cut_tcp() {
	local t0 a b c0 c1
	cut_router "$2" 10 > /tmp/cut-setup.txt 2>&1 || { bench_error "$1" "$(cat /tmp/cut-setup.txt)"; cut_router_stop; return; }
	nft -f - <<'NFT'
table netdev lab_tcp {
	counter to_stack {
	}
	chain wan0_in {
		type filter hook ingress device "wan0" priority 10; policy accept;
		meta l4proto tcp th dport 5202 counter name to_stack
	}
}
NFT
	ip netns exec client iperf3 -s -D -1 -B 10.0.1.2 -p 5202 >/dev/null 2>&1
	sleep 0.3
	t0=$(now_s)
	ip netns exec server timeout 40 iperf3 -c 10.0.1.2 -p 5202 -t 24 -f m > /tmp/cut-tcp.txt 2>&1 &
	local ipid=$!
	sleep_until "$t0" 10
	nft add element inet lab_bl blocked "{ 10.0.2.2 }"
	sleep_until "$t0" 12
	a=$(counters netdev lab_tcp | awk '{ print $2 }'); c0=$(cpu_ticks)
	sleep_until "$t0" 22
	b=$(counters netdev lab_tcp | awk '{ print $2 }'); c1=$(cpu_ticks)
	kill "$ipid" 2>/dev/null; wait "$ipid" 2>/dev/null
	pkill -x iperf3 2>/dev/null || true
	bench_record "$1" frames_to_stack=$((b - a)) router_cpu_pct="$(cpu_pct "$c0" "$c1")"
	cut_router_stop
}
bench_cut_tcp_off() { bench_cut_tcp "$1" 0; }
bench_cut_tcp_on() { bench_cut_tcp "$1" 1; }

bench_scenario cut/off 6.12 bench_cut_off
bench_scenario cut/on 6.12 bench_cut_on
bench_scenario cut/many-off 6.12 bench_cut_many_off
bench_scenario cut/many-on 6.12 bench_cut_many_on
bench_scenario cut/tcp-off 6.12 bench_cut_tcp_off
bench_scenario cut/tcp-on 6.12 bench_cut_tcp_on
