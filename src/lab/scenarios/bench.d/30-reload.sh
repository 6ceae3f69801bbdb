# shellcheck shell=bash
# A fw4 reload (table inet fw4 replaced, its flowtable with it) in the middle
# of four TCP streams. surviving_pct: of the flows offloaded before the
# reload, the share that never came back to the slow path afterwards (a flow
# torn down from its flowtable sends its next packet through the forward
# path, where the lab chain notes its port). The same share over an equal
# window just before the reload, baseline_surviving_pct, is the control:
# what the measure reads when nothing happens.
#   reload/fw4        fastpath's own flowtable beside fw4's
#   reload/fw4-alone  fw4's flowtable only: the flows it tears down

reload_run() {
	local name=$1 with=$2 before torn survived total s0 c0 c1
	topo_forward; topo_fw4; slow_setup
	torn_setup
	if [ "$with" = fastpath ]; then
		fastpath_start > /tmp/fastpath-start.err || { bench_error "$name" "$(cat /tmp/fastpath-start.err)"; return; }
	fi
	iperf_start
	# Long enough that both windows end well before the streams do: the
	# streams' own close must not count as a torn flow.
	ip netns exec server iperf3 -c 10.0.1.2 -t 20 -P 4 -f m > /tmp/reload-iperf.txt 2>&1 &
	local ipid=$!
	sleep 3
	before=$(offloaded_ports)
	torn_reset
	sleep 2
	local base; base=$(torn_ports)
	torn_reset
	s0=$(slow_count); c0=$(cpu_ticks)
	fw4_reload
	sleep 2
	c1=$(cpu_ticks)
	torn=$(torn_ports)
	if ! kill -0 "$ipid" 2>/dev/null; then
		bench_error "$name" "the iperf3 streams ended before the reload window did: the window measured nothing"
		fastpath_stop; return
	fi
	wait "$ipid"
	MBPS=$(iperf_field Mbits/sec /tmp/reload-iperf.txt)
	total=$(echo "$before" | grep -c . || true)
	if [ "$total" = 0 ]; then
		bench_error "$name" "no offloaded iperf3 flow before the reload"
		fastpath_stop; return
	fi
	survived=$(comm -23 <(echo "$before") <(echo "$torn") | grep -c . || true)
	local base_survived; base_survived=$(comm -23 <(echo "$before") <(echo "$base") | grep -c . || true)
	log "reload: offloaded before: $(echo "$before" | tr '\n' ' '); back in the slow path after: $(echo "$torn" | tr '\n' ' ')"
	bench_record "$name" surviving_pct="$(awk -v s="$survived" -v t="$total" 'BEGIN { printf "%.1f", 100*s/t }')" \
		baseline_surviving_pct="$(awk -v s="$base_survived" -v t="$total" 'BEGIN { printf "%.1f", 100*s/t }')" \
		flows="$total" throughput_mbps="$MBPS" slowpath_packets="$(( $(slow_count) - s0 ))" router_cpu_pct="$(cpu_pct "$c0" "$c1")"
	fastpath_stop
}

bench_reload_fw4() { reload_run "$1" fastpath; }
bench_reload_fw4_alone() { reload_run "$1" alone; }

bench_scenario reload/fw4 6.12 bench_reload_fw4
bench_scenario reload/fw4-alone 6.12 bench_reload_fw4_alone
