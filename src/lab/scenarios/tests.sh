#!/bin/bash
# Runs inside the lab VM: the VM tests for this kernel series. Each test
# starts from an empty router (topo_reset) and records PASS/FAIL lines in
# /lab-results/checks; the host adds them up. Nothing skips: a missing
# product binary or kernel feature is a FAIL that names it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=src/lab/scenarios/lib.sh
. "$here/lib.sh"
# shellcheck source=src/lab/scenarios/cut.sh
. "$here/cut.sh"

SLOW_MAX=${LAB_SLOW_MAX:-20}
OFFLOAD_MBYTES=${LAB_OFFLOAD_MBYTES:-2048}

# started_or_fail NAME: start the daemon, or record NAME as failed with why.
started_or_fail() {
	fastpath_start > /tmp/fastpath-start.txt && return 0
	fail "$1" "$(tr '\n' ' ' < /tmp/fastpath-start.txt)"
	return 1
}

lt() { [ "$(printf '%.0f' "$1")" -lt "$2" ]; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
tables_named() { nft list tables | grep -c "$1" || true; }
ft_handle() { nft -a list table inet fastpath 2>/dev/null | sed -n 's/.*flowtable ft { # handle \([0-9]*\).*/\1/p'; }

# The lab itself: without a flowtable every packet is counted, with the
# seed's hand-written flowtable almost none. If this fails, no other figure
# of the lab means anything.
t_lab_counts_the_slow_path() {
	topo_forward; slow_setup
	measure 3
	check lab/slow-path-counted "no flowtable: $SLOW slow-path packets for $MBPS Mbit/s (want >= 1000)" ge "$SLOW" 1000
	nft_by_hand "lan0, wan0"
	measure 3
	check lab/hand-written-flowtable-offloads "hand-written flowtable: $SLOW slow-path packets (want < $SLOW_MAX)" lt "$SLOW" "$SLOW_MAX"
}

t_software_offload() {
	topo_forward; uci_firewall 1 0; slow_setup
	started_or_fail fastpath/software-offload || return
	# A fixed volume, not a fixed time: the emulated machine's speed varies
	# with the host's load, the claim is about gigabytes.
	measure_volume "$OFFLOAD_MBYTES"
	local vol=/tmp/iperf-volume.txt; cp /tmp/iperf-last.txt "$vol"
	# Then a timed stream, long enough for the status to be asked during
	# it (the volume above can pass in seconds): ask until it shows
	# offloaded flows or ends.
	iperf_start
	ip netns exec server iperf3 -c 10.0.1.2 -t 15 -f m > /tmp/iperf-status.txt 2>&1 &
	local sid=$! offl=-1 n
	sleep 2
	while kill -0 "$sid" 2>/dev/null; do
		if fastpath_status; then
			n=$(sj '.flows.offloaded // 0')
			[ "$n" -gt "$offl" ] && offl=$n
			[ "$offl" -ge 1 ] && break
		fi
		sleep 1
	done
	kill "$sid" 2>/dev/null; wait "$sid" 2>/dev/null
	cp "$vol" /tmp/iperf-last.txt
	MBPS=$(iperf_field Mbits/sec); SLOW=$(cat /tmp/measure-slow)
	local mb; mb=$(iperf_mbytes)
	log "software offload: $MBPS Mbit/s, $mb MB, $SLOW slow-path packets; status showed $offl offloaded flows mid-stream"
	check fastpath/software-offload "$SLOW slow-path packets for $mb MB (want < $SLOW_MAX while >= $OFFLOAD_MBYTES MB pass)" \
		eval "lt $SLOW $SLOW_MAX && ge $mb $OFFLOAD_MBYTES"
	check fastpath/status-counts-offloaded-flows "status .flows.offloaded = $offl mid-stream (want >= 1)" ge "$offl" 1
	fastpath_stop
}

t_hw_fallback() {
	topo_forward; uci_firewall 1 1
	started_or_fail fastpath/hw-fallback || { return; }
	sleep 2
	if ! fastpath_status; then fail fastpath/hw-fallback "cannot read status"; return; fi
	log "mode: $(sj -c .mode)"
	check fastpath/hw-fallback-software "mode.effective is '$(sj .mode.effective)' (want software on veth)" \
		[ "$(sj .mode.effective)" = software ]
	check fastpath/hw-fallback-reason "mode.reason is '$(sj .mode.reason)' (want why hardware was refused)" \
		eval "sj .mode.reason | grep -qiE 'hardware|hw'"
	check fastpath/hw-fallback-uci "firewall flow_offloading_hw is '$(uci_option firewall flow_offloading_hw)' (want 0)" \
		[ "$(uci_option firewall flow_offloading_hw)" = 0 ]
	check fastpath/hw-fallback-no-offload-flag "fastpath's flowtable carries 'flags offload' on veth" \
		eval "! nft list table inet fastpath | grep -q 'flags offload'"
	fastpath_stop
}

# offload_after_packets: the first N packets of each connection stay in
# the slow path (where an inspector sees them), then the flow is offloaded;
# changing N replaces the rule and keeps the flowtable (and its flows).
t_offload_after_packets() {
	local n=30 h0 h1 rule why
	topo_forward; uci_firewall 1 0; slow_setup
	printf "config fastpath 'main'\n\toption offload_after_packets '%s'\n" "$n" > /etc/config/fastpath
	started_or_fail fastpath/offload-after-packets || return
	rule=$(nft list chain inet fastpath forward | grep 'flow add' | xargs)
	check fastpath/offload-after-packets-rule "forward rule '$rule' (want ct packets >= $n before flow add)" \
		eval "[[ '$rule' == *'ct packets >= $n flow add @ft'* ]]"
	fastpath_status && why=$(sj '[.decisions[]? | select(.topic == "flowtable") | .reason] | join("; ")')
	check fastpath/offload-after-packets-said "status decisions: '${why:-}' (want offload_after_packets named)" \
		eval "[[ '${why:-}' == *offload_after_packets* ]]"
	measure 3
	log "offload after $n packets: $MBPS Mbit/s, $SLOW slow-path packets"
	check fastpath/offload-after-packets-first-in-slow-path "$SLOW slow-path packets (want >= $n: the first $n of the stream)" ge "$SLOW" "$n"
	check fastpath/offload-after-packets-then-offloaded "$SLOW slow-path packets for $MBPS Mbit/s (want < $((2 * n + SLOW_MAX)): offloaded after them)" \
		lt "$SLOW" $((2 * n + SLOW_MAX))
	h0=$(ft_handle)
	sed -i "s/offload_after_packets '$n'/offload_after_packets '0'/" /etc/config/fastpath
	kill -HUP "$FASTPATH_PID"
	for _ in $(seq 1 100); do
		nft list chain inet fastpath forward | grep -q 'ct packets' || break
		sleep 0.2
	done
	h1=$(ft_handle)
	rule=$(nft list chain inet fastpath forward | grep 'flow add' | xargs)
	check fastpath/offload-after-packets-changed-in-place "after N=0 and SIGHUP: rule '$rule', flowtable handle $h0 -> $h1 (want no packet count, the same handle)" \
		eval "[[ '$rule' != *'ct packets'* && -n '$h0' && '$h0' == '$h1' ]]"
	measure 3
	check fastpath/offload-after-packets-zero-offloads-at-once "$SLOW slow-path packets with N=0 (want < $SLOW_MAX)" lt "$SLOW" "$SLOW_MAX"
	fastpath_stop
}

ft_devices() { nft list flowtable inet fastpath ft 2>/dev/null | sed -n 's/.*devices = { \(.*\) }.*/\1/p'; }

# A bridge LAN: the flowtable lists the bridge's ports, and a port added at
# run time (as hostapd adds Wi-Fi interfaces) joins it without the
# flowtable being recreated; a stream to a client behind it is offloaded.
t_bridge_port_added() {
	local h0 h1 devs n
	topo_bridge; uci_firewall 1 0; slow_setup
	started_or_fail fastpath/bridge-port-added || return
	devs=$(ft_devices)
	check fastpath/bridge-lists-ports "flowtable devices '$devs' (want lan0, wan0: the bridge's port, not br-lan)" [ "$devs" = "lan0, wan0" ]
	h0=$(ft_handle)
	ip link set lan1 master br-lan
	for _ in $(seq 1 100); do
		[[ "$(ft_devices)" == *lan1* ]] && break
		sleep 0.2
	done
	devs=$(ft_devices); h1=$(ft_handle)
	fastpath_status && log "device decisions: $(sj '[.decisions[]? | select(.topic == "device") | .reason] | join("; ")'); br-lan lower: $(ls -d /sys/class/net/br-lan/lower_* 2>/dev/null | xargs -n1 basename | xargs)"
	check fastpath/bridge-port-joins "after 'ip link set lan1 master br-lan': devices '$devs', flowtable handle $h0 -> $h1 (want lan1 listed, the same handle)" \
		eval "[[ '$devs' == *lan1* && -n '$h0' && '$h0' == '$h1' ]]"
	ip netns exec client2 iperf3 -s -D -1 -B 10.0.1.3 >/dev/null 2>&1
	for _ in $(seq 1 50); do ip netns exec client2 ss -Hltn 'sport = :5201' | grep -q . && break; sleep 0.1; done
	n=$(slow_count)
	ip netns exec server iperf3 -c 10.0.1.3 -t 3 -f m > /tmp/iperf-last.txt 2>&1
	n=$(( $(slow_count) - n ))
	log "bridge port added at run time: $(iperf_field Mbits/sec) Mbit/s to client2, $n slow-path packets"
	check fastpath/bridge-port-offloaded "a stream to the client behind the added port: $n slow-path packets, $(iperf_mbytes) MB (want < $SLOW_MAX, > 0 MB)" \
		eval "lt $n $SLOW_MAX && [ $(iperf_mbytes) -gt 0 ]"
	fastpath_stop
}

t_fw4_reload() {
	local s0 f4 offl
	topo_forward; topo_fw4; slow_setup; torn_setup
	started_or_fail fastpath/fw4-reload || { return; }
	iperf_start
	ip netns exec server iperf3 -c 10.0.1.2 -t 15 -P 2 -f m > /tmp/fw4-iperf.txt 2>&1 &
	local ipid=$!
	sleep 3
	f4=$(fw4_count)
	s0=$(slow_count)
	local before; before=$(offloaded_ports)
	offl=$(echo "$before" | grep -c . || true)
	torn_reset
	fw4_reload
	sleep 3
	local after; after=$(( $(slow_count) - s0 ))
	local torn; torn=$(comm -12 <(echo "$before") <(torn_ports) | tr '\n' ' ')
	local still; still=$(comm -23 <(echo "$before") <(offloaded_ports) | tr '\n' ' ')
	wait "$ipid"
	log "fw4-shaped: fw4 chain $f4 packets, $offl offloaded flows before reload, $after slow-path packets after, $(iperf_field Mbits/sec /tmp/fw4-iperf.txt) Mbit/s"
	check fastpath/fw4-flows-in-fastpath "fw4's forward chain counted $f4 packets (want < $SLOW_MAX: only handshakes)" lt "$f4" "$SLOW_MAX"
	check fastpath/fw4-flows-offloaded "$offl offloaded iperf3 flows before the reload (want >= 2)" ge "$offl" 2
	check fastpath/fw4-reload-keeps-flows "$after slow-path packets after fw4's flowtable was replaced (want < $SLOW_MAX)" lt "$after" "$SLOW_MAX"
	# A flow torn down from its flowtable sends its next data packet through
	# the forward chain, which notes its port (FIN and RST aside): none may.
	check fastpath/fw4-reload-no-flow-torn "offloaded flows seen in the slow path after the reload: $torn(want none)" [ -z "${torn// /}" ]
	check fastpath/fw4-reload-flows-stay-offloaded "flows offloaded before the reload and not after: $still(want none)" [ -z "${still// /}" ]
	fastpath_stop
}

t_ipip_612() {
	topo_ipip; uci_network_ipip; uci_firewall 1 0
	started_or_fail fastpath/ipip-6.12-no-rx-accel || { return; }
	sleep 1
	fastpath_status || { fail fastpath/ipip-6.12-no-rx-accel "cannot read status"; return; }
	check fastpath/ipip-6.12-no-rx-accel "kernel.ipip_rx_accel is '$(sj .kernel.ipip_rx_accel)' on $LAB_KERNEL (want false)" \
		[ "$(sj .kernel.ipip_rx_accel)" = false ]
	fastpath_stop
}

t_ipip_7() {
	topo_ipip; slow_setup
	nft_by_hand "lan0, wan0"; measure 3
	check lab/ipip-underlay-by-hand "seed flowtable {lan0, wan0}: $SLOW_TUN packets from the tunnel in the forward path (want < $SLOW_MAX)" lt "$SLOW_TUN" "$SLOW_MAX"
	nft delete table inet filter
	uci_network_ipip; uci_firewall 1 0
	started_or_fail fastpath/ipip-underlay || { return; }
	sleep 1
	fastpath_status || { fail fastpath/ipip-underlay "cannot read status"; return; }
	log "flowtable.devices: $(sj -c .flowtable.devices); tunnels: $(sj -c .tunnels)"
	check fastpath/ipip-rx-accel-detected "kernel.ipip_rx_accel is '$(sj .kernel.ipip_rx_accel)' on $LAB_KERNEL (want true)" \
		[ "$(sj .kernel.ipip_rx_accel)" = true ]
	check fastpath/ipip-underlay-listed "flowtable.devices = $(sj -c .flowtable.devices) (want wan0 in, ipip-tun out)" \
		eval "echo '$STATUS_JSON' | jq -e '(.flowtable.devices | index(\"wan0\")) != null and (.flowtable.devices | index(\"ipip-tun\")) == null' >/dev/null"
	measure 4
	log "ipip with fastpath: $MBPS Mbit/s, $SLOW_TUN packets from the tunnel in the forward path"
	check fastpath/ipip-rx-bypasses-forward "$SLOW_TUN packets from ipip-tun in the forward path (want < $SLOW_MAX)" lt "$SLOW_TUN" "$SLOW_MAX"
	fastpath_stop
}

# Multi-WAN (mwan3, pbr): a policy rule sends the tunnel's peer out of a
# second WAN the main table knows nothing of. The underlay is the device
# the kernel really uses, not the main table's.
t_ipip_policy_route() {
	topo_ipip
	ip link add wan1 type veth peer name eth1 netns remote
	ip -n remote link set eth1 up; ip -n remote addr add 10.0.5.2/24 dev eth1
	ip link set wan1 up; ip addr add 10.0.5.1/24 dev wan1
	ip route add 10.0.2.2 via 10.0.5.2 dev wan1 table 100
	ip rule add to 10.0.2.2 lookup 100 pref 100
	uci_network_ipip
	sed -i "/option tunlink 'wan'/d" /etc/config/network
	uci_firewall 1 0
	started_or_fail fastpath/ipip-policy-route || { return; }
	fastpath_status || { fail fastpath/ipip-policy-route "cannot read status"; return; }
	log "flowtable.devices: $(sj -c .flowtable.devices); tunnels: $(sj -c .tunnels)"
	check fastpath/ipip-underlay-by-policy-route "tunnel underlay '$(sj '.tunnels[0].underlay')' (want wan1, where rule pref 100 sends the peer), flowtable.devices = $(sj -c .flowtable.devices) (want wan1 in)" \
		sj -e '.tunnels[0].underlay == "wan1" and (.flowtable.devices | index("wan1")) != null'
	fastpath_stop
}

t_kill9() {
	local h0 h1 s0 after
	topo_forward; uci_firewall 1 0; slow_setup; torn_setup
	started_or_fail fastpath/kill9 || { return; }
	h0=$(ft_handle)
	iperf_start
	ip netns exec server iperf3 -c 10.0.1.2 -t 20 -f m > /tmp/kill9-iperf.txt 2>&1 &
	local ipid=$!
	sleep 3
	s0=$(slow_count)
	local before; before=$(offloaded_ports)
	torn_reset
	kill -9 "$FASTPATH_PID"; wait "$FASTPATH_PID" 2>/dev/null; FASTPATH_PID=""
	sleep 1
	started_or_fail fastpath/kill9-restart || { wait "$ipid"; return; }
	sleep 3
	after=$(( $(slow_count) - s0 ))
	h1=$(ft_handle)
	local torn; torn=$(comm -12 <(echo "$before") <(torn_ports) | tr '\n' ' ')
	local still; still=$(comm -23 <(echo "$before") <(offloaded_ports) | tr '\n' ' ')
	wait "$ipid"; local rc=$?
	local mbps; mbps=$(iperf_field Mbits/sec /tmp/kill9-iperf.txt)
	log "kill -9: stream $mbps Mbit/s (iperf3 exit $rc), $after slow-path packets after the kill, flowtable handle $h0 -> $h1"
	check fastpath/kill9-forwarding-continues "the stream ended with exit $rc at $mbps Mbit/s" eval "[ $rc = 0 ] && ge $mbps 1"
	check fastpath/kill9-flows-not-torn-down "$after slow-path packets after kill -9 and restart (want < $SLOW_MAX)" lt "$after" "$SLOW_MAX"
	check fastpath/kill9-no-flow-torn "offloaded flows seen in the slow path after the restart: $torn(want none)" [ -z "${torn// /}" ]
	check fastpath/kill9-flows-stay-offloaded "flows offloaded before the kill and not after the restart: $still(want none)" [ -z "${still// /}" ]
	check fastpath/kill9-no-duplicate-tables "tables: $(nft list tables | tr '\n' ' ') (want one 'inet fastpath')" [ "$(tables_named 'inet fastpath$')" = 1 ]
	check fastpath/kill9-flowtable-kept "flowtable handle $h0 -> $h1 (want unchanged: not recreated)" eval "[ -n '$h0' ] && [ '$h0' = '$h1' ]"
	fastpath_stop
	check fastpath/sigterm-leaves-tables "after SIGTERM: tables $(nft list tables | tr '\n' ' ') (want inet fastpath kept)" [ "$(tables_named 'inet fastpath$')" = 1 ]
	"$FASTPATH" daemon --cleanup > /tmp/cleanup.txt 2>&1
	check fastpath/cleanup-removes-everything "after 'fastpath daemon --cleanup' (exit $?): tables $(nft list tables | grep fastpath | tr '\n' ' ')" \
		[ "$(tables_named fastpath)" = 0 ]
}

# The packages' integration tests, built on the host as
# dist/vmtests/<path with - for />.test from src/<path>; LAB_VMTESTS lists
# the paths (e.g. "nft cut/engine"). Each runs in its package directory, as
# go test would, with FASTPATH_EXPECT_FLOWTABLE=1. Every top-level test
# counts as one check; a skip is listed with its reason.
t_package_tests() {
	local pkg bin name out rc
	for pkg in ${LAB_VMTESTS:-}; do
		name=${pkg//\//-}
		bin=$LAB_REPO/dist/vmtests/$name.test
		out=/tmp/pkg-$name.txt
		if [ ! -x "$bin" ]; then fail "pkg/$pkg" "no test binary $bin (the host could not build it)"; continue; fi
		log "package tests: src/$pkg"
		rc=0
		(cd "$LAB_REPO/src/$pkg" && FASTPATH_EXPECT_FLOWTABLE=1 FASTPATH_BIN="$FASTPATH" timeout 300 "$bin" -test.v -test.count=1) > "$out" 2>&1 || rc=$?
		grep -E '^--- (PASS|FAIL|SKIP): ' "$out" | while read -r _ verdict test _; do
			case $verdict in
			PASS:) pass "pkg/$pkg/$test" ;;
			FAIL:) fail "pkg/$pkg/$test" "see the output above" ;;
			SKIP:) echo "SKIP pkg/$pkg/$test: $(grep -A3 -F -- "--- SKIP: $test " "$out" | sed -n '2p' | sed 's/^ *//')" ;;
			esac
		done
		if [ "$rc" != 0 ]; then
			echo "--- what the failing tests said (all of $out is in the VM):"
			grep -E '_test\.go:[0-9]+:|^--- FAIL' "$out" | head -n 80
			echo "--- the last lines:"
			tail -n 40 "$out"
			grep -q '^--- FAIL: ' "$out" || fail "pkg/$pkg" "FASTPATH_EXPECT_FLOWTABLE=1 $name.test exited $rc without a failing test (panic or timeout: output above)"
		elif ! grep -q '^--- PASS: ' "$out"; then
			fail "pkg/$pkg" "$name.test ran no test"
		fi
	done
}

run() { log "=== $1"; topo_reset; "$1"; }

lab_modules
case ${LAB_TEST_ONLY:-} in
"") ;;
*) for t in $LAB_TEST_ONLY; do run "$t"; done; topo_reset; exit 0 ;;
esac
if [ "$LAB_KERNEL_SERIES" = 7 ]; then
	run t_ipip_7
else
	run t_lab_counts_the_slow_path
	run t_software_offload
	run t_hw_fallback
	run t_fw4_reload
	run t_offload_after_packets
	run t_bridge_port_added
	run t_ipip_612
	run t_ipip_policy_route
	run t_kill9
	run t_cut_udp_flood
	run t_cut_forward
	run t_cut_ipv6
	run t_cut_xdp
	run t_cut_xdp_ipv6
	run t_cut_blocklist_1000
	topo_reset
	t_package_tests
fi
topo_reset
