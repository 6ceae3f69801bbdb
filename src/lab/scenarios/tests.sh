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
# table_handle: a re-created table has a new one (a new table's flowtable may get handle 1 again).
table_handle() { nft -a list table inet fastpath 2>/dev/null | sed -n '1s/^table inet fastpath { # handle \([0-9]*\).*/\1/p'; }

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
	# Then a stream that lasts while the status is asked (the volume above
	# can pass in seconds): ask until it shows offloaded flows, 90 s at
	# most. The offloaded count is made again only once it is older than
	# 100 times what the last one took, and in a VM slowed by its host a
	# count of even a small table can take a tenth of a second.
	iperf_start
	ip netns exec server iperf3 -c 10.0.1.2 -t 300 -f m > /tmp/iperf-status.txt 2>&1 &
	local sid=$! offl=-1 n age=- t0=$SECONDS
	sleep 2
	while kill -0 "$sid" 2>/dev/null && [ $((SECONDS - t0)) -lt 90 ]; do
		if fastpath_status; then
			n=$(sj '.flows.offloaded // 0')
			[ "$n" -gt "$offl" ] && offl=$n age=$(sj '.flows.offloaded_age_s // 0')
			[ "$offl" -ge 1 ] && break
		fi
		sleep 1
	done
	kill "$sid" 2>/dev/null; wait "$sid" 2>/dev/null
	cp "$vol" /tmp/iperf-last.txt
	MBPS=$(iperf_field Mbits/sec); SLOW=$(cat /tmp/measure-slow)
	local mb; mb=$(iperf_mbytes)
	log "software offload: $MBPS Mbit/s, $mb MB, $SLOW slow-path packets; status showed $offl offloaded flows mid-stream (counted ${age} s before the answer, $((SECONDS - t0)) s into the stream)"
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

# stream_both NAME SERVER_ADDR CLIENT_ADDR: a TCP stream each way between
# the two addresses (the server sends, then with -R the client sends),
# each checked for fewer than SLOW_MAX slow-path packets, or 1 % of the
# stream's packets when that is more: a flow whose either direction
# missed the flowtable sends every packet of that direction through the
# forward chain, while a slowed VM adds a few dozen to an offloaded one
# (83 for 134 MB in one run on a loaded host: packets in flight when a
# pass ran).
stream_both() {
	local name=$1 addr=$2 dir n mb what
	for dir in down up; do
		ip netns exec client iperf3 -s -D -1 -B "$3" >/dev/null 2>&1
		for _ in $(seq 1 50); do ip netns exec client ss -Hltn 'sport = :5201' | grep -q . && break; sleep 0.1; done
		n=$(slow_count)
		if [ "$dir" = down ]; then
			ip netns exec server iperf3 -c "$3" -B "$addr" -t 3 -f m > /tmp/iperf-last.txt 2>&1
		else
			ip netns exec server iperf3 -c "$3" -B "$addr" -t 3 -f m -R > /tmp/iperf-last.txt 2>&1
		fi
		n=$(( $(slow_count) - n )); mb=$(iperf_mbytes)
		local max=$(( mb * 1000000 / 1500 / 100 )); [ "$max" -lt "$SLOW_MAX" ] && max=$SLOW_MAX
		what="server to client"; [ "$dir" = up ] && what="client to server"
		log "$name $dir: $(iperf_field Mbits/sec) Mbit/s, $mb MB, $n slow-path packets"
		check "$name-offloaded-$dir" "stream $what: $n slow-path packets for $mb MB (want < $max, > 0 MB)" \
			eval "lt $n $max && [ $mb -gt 0 ]"
	done
}

# xdp_forward_daemon NAME: the daemon with xdp_forward on the router's
# veths (cut_backend xdp) and the ends ready for redirected frames; fails
# NAME when it cannot start.
xdp_forward_daemon() {
	xdp_forward_ends || { fail "$1" "the ends' veths could not be set up"; return 1; }
	cat > /etc/config/fastpath <<'UCI'
config fastpath 'main'
	option enabled '1'
	option cut_backend 'xdp'
	option xdp_forward '1'
UCI
	cut_broker_start || { fail "$1" "no ubus broker"; return 1; }
	started_or_fail "$1" || { cut_broker_stop; return 1; }
}

# xdp_forward through the daemon: a TCP stream each way leaves the router in
# the XDP program (the status counts its frames), with no more slow-path
# packets than the flowtable alone; across a daemon restart (the new
# program replaces the old, no detach) and a fw4-style reload of fastpath's
# plan (SIGHUP) it keeps forwarding; turned off, the program stays for the
# cut and forwards nothing, and streams still flow.
t_xdp_forward() {
	local name=fastpath/xdp-forward line f0 f1
	topo_forward; wire_frames; uci_firewall 1 0; slow_setup
	xdp_forward_daemon "$name" || return
	line=$("$FASTPATH" status | grep '^xdp forward' || true)
	check "$name/status-text" "fastpath status: '$line' (want: xdp forward on lan0, wan0)" eval "echo '$line' | grep -q '^xdp forward on lan0, wan0: '"
	f0=$(xdp_forwarded)
	stream_both "$name" 10.0.2.2 10.0.1.2
	f1=$(xdp_forwarded)
	check "$name/in-driver" "frames the XDP program sent out for the two 3-s streams: $((f1 - f0)) (want >= 10000)" cut_ge $((f1 - f0)) 10000
	kill -9 "$FASTPATH_PID" 2>/dev/null; wait "$FASTPATH_PID" 2>/dev/null
	started_or_fail "$name-restart" || { cut_broker_stop; return; }
	f0=$(xdp_forwarded)
	stream_both "$name-restart" 10.0.2.2 10.0.1.2
	f1=$(xdp_forwarded)
	check "$name/after-restart" "after kill -9 and a restart: $((f1 - f0)) frames sent out in the driver (want >= 10000)" cut_ge $((f1 - f0)) 10000
	sed -i "s/option xdp_forward '1'/option xdp_forward '0'/" /etc/config/fastpath
	"$FASTPATH" reload >/dev/null 2>&1
	sleep 2
	line=$("$FASTPATH" status --json | jq -c '.cut.xdp_forward')
	f0=$(ip -d link show lan0 | grep -c 'prog/xdp' || true)
	stream_both "$name-off" 10.0.2.2 10.0.1.2
	check "$name/off" "xdp_forward 0 after a reload: status $line, XDP on lan0: $f0 (want none reported, the cut's program still there)" \
		eval "[ '$line' = null ] && [ '$f0' = 1 ]"
	fastpath_stop; cut_broker_stop
}

# The kernel's XDP lookup reads the first flowtable that lists a device.
# With firewall4's flowtable made before fastpath's (as at boot), the
# flows are in fastpath's and the lookups find none, and the status says
# why; a firewall4 reload (its table deleted and made again) puts
# fastpath's first, and the program forwards.
t_xdp_forward_fw4_first() {
	local name=fastpath/xdp-forward-fw4-first f0 f1 why
	topo_forward; wire_frames; topo_fw4; slow_setup
	xdp_forward_daemon "$name" || return
	f0=$(xdp_forwarded)
	stream_both "$name-before" 10.0.2.2 10.0.1.2
	f1=$(xdp_forwarded)
	why=$("$FASTPATH" status --json | jq -r '.cut.xdp_forward.reason')
	check "$name/fw4-first-none" "firewall4's flowtable first: $((f1 - f0)) frames sent out in the driver (want 0); status: $why (want the cause named)" \
		eval "[ $((f1 - f0)) = 0 ] && echo \"\$why\" | grep -q 'made first'"
	fw4_reload
	sleep 1
	f0=$(xdp_forwarded)
	stream_both "$name-after" 10.0.2.2 10.0.1.2
	f1=$(xdp_forwarded)
	check "$name/after-fw4-reload" "after a firewall4 reload: $((f1 - f0)) frames sent out in the driver (want >= 10000)" cut_ge $((f1 - f0)) 10000
	fastpath_stop; cut_broker_stop
}

# A UniFi-style WAN: PPPoE in VLAN 500. fastpath lists the VLAN's parent
# (wan0), never wan0.500 or pppoe-wan, and the flowtable takes both ways of
# a stream through the VLAN and PPPoE stacks.
t_vlan_pppoe() {
	local devs why
	topo_vlan_pppoe || { fail fastpath/vlan-pppoe "the PPPoE topology did not come up: $(cat /tmp/pppoe-router.txt /tmp/pppoe-server.txt 2>/dev/null | tr '\n' ' ')"; return; }
	uci_firewall 1 0; slow_setup
	started_or_fail fastpath/vlan-pppoe || return
	devs=$(ft_devices)
	fastpath_status && why=$(sj '[.decisions[]? | select(.topic == "device") | .reason] | join("; ")')
	log "vlan + pppoe: devices '$devs'; $why"
	check fastpath/vlan-pppoe-lists-the-vlan-parent "flowtable devices '$devs' (want lan0, wan0: the parent of wan0.500, which carries pppoe-wan)" [ "$devs" = "lan0, wan0" ]
	stream_both fastpath/vlan-pppoe 100.64.0.2 10.0.1.2
	fastpath_stop
}

# IPv6: the router forwards fd00:2::/64 <-> fd00:1::/64; both ways of a
# stream are offloaded, and conntrack marks the IPv6 flows offloaded.
t_ipv6() {
	local devs offl
	topo_forward; uci_firewall 1 0; slow_setup
	started_or_fail fastpath/ipv6 || return
	devs=$(ft_devices)
	check fastpath/ipv6-devices "flowtable devices '$devs' (want lan0, wan0)" [ "$devs" = "lan0, wan0" ]
	stream_both fastpath/ipv6 fd00:2::2 fd00:1::2
	ip netns exec client iperf3 -s -D -1 -B fd00:1::2 >/dev/null 2>&1
	for _ in $(seq 1 50); do ip netns exec client ss -Hltn 'sport = :5201' | grep -q . && break; sleep 0.1; done
	ip netns exec server iperf3 -c fd00:1::2 -t 6 -f m > /tmp/iperf-v6.txt 2>&1 &
	local ipid=$!
	offl=0
	for _ in $(seq 1 25); do
		offl=$(conntrack -L -f ipv6 -p tcp --dport 5201 2>/dev/null | grep -c -F '[OFFLOAD]' || true)
		[ "$offl" -ge 1 ] && break
		sleep 0.2
	done
	wait "$ipid"
	check fastpath/ipv6-conntrack-offloaded "IPv6 iperf3 conntrack entries with [OFFLOAD] mid-stream: $offl (want >= 1)" ge "$offl" 1
	fastpath_stop
}

# fw4_recheck_ruleset [RULE...]: the fw4-shaped table with a mangle_forward
# chain (priority mangle: where fw4 puts the rules and includes that see a
# forwarded packet before its forward chain and its own flow offload rule)
# holding the RULEs.
fw4_recheck_ruleset() {
	local r
	fw4_ruleset | sed '$d'
	printf '\tchain mangle_forward {\n\t\ttype filter hook forward priority mangle; policy accept;\n'
	for r in "$@"; do printf '\t\t%s\n' "$r"; done
	printf '\t}\n}\n'
}

# client_from COUNT: packets the client netns received from 10.0.2.3.
client_from_setup() {
	ip netns exec client nft -f - <<'NFT'
table inet labc {
	chain in {
		type filter hook input priority filter; policy accept;
		ip saddr 10.0.2.3 tcp sport != 5201 counter
	}
}
NFT
}
client_from() { ip netns exec client nft list chain inet labc in | awk '/counter packets/ { for (i=1;i<=NF;i++) if ($i=="packets") print $(i+1); exit }'; }
recorded_digest() { nft list chain inet fastpath forward 2>/dev/null | sed -n 's/.*comment "fw4 forward rules \([0-9a-f]*\)".*/\1/p'; }

# recheck_streams: two iperf3 streams server -> client, A from 10.0.2.3
# (the address the new rule drops) to port 5202, B from 10.0.2.2 to 5201.
recheck_streams() {
	ip -n server addr add 10.0.2.3/24 dev eth0
	ip netns exec client iperf3 -s -D -1 -B 10.0.1.2 -p 5201 >/dev/null 2>&1
	ip netns exec client iperf3 -s -D -1 -B 10.0.1.2 -p 5202 >/dev/null 2>&1
	for _ in $(seq 1 50); do [ "$(ip netns exec client ss -Hltn 'sport = :5201 or sport = :5202' | grep -c .)" -ge 2 ] && break; sleep 0.1; done
	ip netns exec server iperf3 -c 10.0.1.2 -p 5202 -B 10.0.2.3 -t 300 -f m > /tmp/recheck-a.txt 2>&1 &
	STREAM_A=$!
	ip netns exec server iperf3 -c 10.0.1.2 -p 5201 -B 10.0.2.2 -t 300 -f m > /tmp/recheck-b.txt 2>&1 &
	STREAM_B=$!
}
recheck_streams_end() { kill "$STREAM_A" "$STREAM_B" 2>/dev/null; wait "$STREAM_A" "$STREAM_B" 2>/dev/null; }
offloaded_to() { conntrack -L -p tcp --dport "$1" 2>/dev/null | grep -F '[OFFLOAD]' | grep -c "src=$2 " || true; }
# data_port DPORT SRC: the client-side port of the busiest connection from SRC to DPORT (iperf3's data, not its control connection).
data_port() {
	conntrack -L -p tcp --dport "$1" 2>/dev/null | grep "src=$2 " |
		sed -n "s/.* sport=\([0-9]*\) dport=$1 packets=\([0-9]*\) .*/\2 \1/p" | sort -n | tail -n1 | cut -d' ' -f2
}
port_offloaded() { conntrack -L -p tcp --dport "$1" 2>/dev/null | grep -F '[OFFLOAD]' | grep -q " sport=$2 dport=$1 "; }
daemon_said() { grep -E "$1" /tmp/fastpath-daemon.log | tail -n 3 | tr '\n' ' '; }

# wait_recorded DIGEST_NOT: wait (20 s at most) until our rule records a
# digest other than DIGEST_NOT, and print it.
wait_recorded() {
	local d
	for _ in $(seq 1 100); do
		d=$(recorded_digest)
		[ -n "$d" ] && [ "$d" != "$1" ] && break
		sleep 0.2
	done
	echo "$d"
}

recheck_reason_ok() { [[ "$1" == *"forward-path rules changed at "*": "*" offloaded flows re-checked"* ]] && [ "$2" -ge 2 ]; }

# recheck_on_rule_change: a fw4 reload that re-renders the same rules
# tears nothing down; one that adds a rule dropping 10.0.2.3 sends every
# offloaded flow through the slow path once (a fresh flowtable), which
# stops that established flow within one packet, and the others are
# offloaded again.
t_recheck_rule_change() {
	local d0 d1 d2 h0 h1 h2 torn c1 c2 dropped reason flows bport
	topo_forward; fw4_recheck_ruleset | nft -f -; uci_firewall 1 0; slow_setup; torn_setup; client_from_setup
	cut_tools_present >/dev/null && cut_broker_start >/dev/null || { fail fastpath/recheck "no ubusd stand-in (dist/testbroker): status could not reach the daemon"; return; }
	started_or_fail fastpath/recheck || { cut_broker_stop; return; }
	d0=$(wait_recorded "")
	check fastpath/recheck-records-digest "our rule's comment records fw4's digest '$d0' (want 16 hex digits)" eval "[[ '$d0' =~ ^[0-9a-f]{16}$ ]]"
	recheck_streams
	for _ in $(seq 1 50); do [ "$(offloaded_to 5202 10.0.2.3)" -ge 1 ] && [ "$(offloaded_to 5201 10.0.2.2)" -ge 1 ] && break; sleep 0.2; done
	bport=$(data_port 5201 10.0.2.2)
	check fastpath/recheck-streams-offloaded "offloaded before the reloads: A $(offloaded_to 5202 10.0.2.3), B $(offloaded_to 5201 10.0.2.2), B's data from port ${bport:-none} (want 1 each)" \
		eval "[ $(offloaded_to 5202 10.0.2.3) -ge 1 ] && [ -n '$bport' ] && port_offloaded 5201 '$bport'"
	h0=$(table_handle)
	# A reload that re-renders the same rules: new handles, fresh counters.
	torn_reset
	fw4_recheck_ruleset | nft -f -
	sleep 3 # the daemon's pass after the reload's events (settle 0.3 s)
	d1=$(recorded_digest); h1=$(table_handle); torn=$(torn_ports | tr '\n' ' ')
	log "unchanged reload: digest $d0 -> $d1, table handle $h0 -> $h1, ports seen in the slow path: ${torn:-none}"
	check fastpath/recheck-unchanged-reload-keeps-flows "after a reload of the same rules: digest $d0 -> $d1, table handle $h0 -> $h1, B's data (port $bport) seen in the slow path: $(torn_ports | grep -cx "$bport" || true) (want the same digest and handle, not seen)" \
		eval "[ '$d1' = '$d0' ] && [ -n '$h0' ] && [ '$h1' = '$h0' ] && ! torn_ports | grep -qx '$bport' && port_offloaded 5201 '$bport'"
	# A reload that adds a rule dropping the server's address 10.0.2.3.
	torn_reset
	fw4_recheck_ruleset 'ip saddr 10.0.2.3 counter drop' 'ip daddr 10.0.2.3 counter drop' | nft -f -
	d2=$(wait_recorded "$d0")
	c1=$(client_from); h2=$(table_handle)
	sleep 3
	c2=$(client_from)
	dropped=$(nft list chain inet fw4 mangle_forward | awk '/saddr 10.0.2.3/ { for (i=1;i<=NF;i++) if ($i=="packets") print $(i+1) }')
	fastpath_status
	reason=$(sj '.recheck.last.reason // ""'); flows=$(sj '.recheck.last.flows // 0')
	log "changed reload: digest $d0 -> $d2, table handle $h0 -> $h2; client got $c1 then $c2 packets from 10.0.2.3; the new rule dropped $dropped; status: $(sj -c .recheck); daemon: $(daemon_said 'firewall4|flowtable')"
	check fastpath/recheck-changed-reload-replaces-flowtable "after adding the drop rule: digest $d0 -> $d2, table handle $h0 -> $h2 (want both changed)" \
		eval "[ -n '$d2' ] && [ '$d2' != '$d0' ] && [ -n '$h2' ] && [ '$h2' != '$h0' ]"
	check fastpath/recheck-stops-dropped-flow "packets from 10.0.2.3 reaching the client after the recheck: $((c2 - c1)) (want <= 1); the new rule dropped ${dropped:-0} (want >= 1)" \
		eval "[ $((c2 - c1)) -le 1 ] && [ ${dropped:-0} -ge 1 ]"
	for _ in $(seq 1 25); do port_offloaded 5201 "$bport" && break; sleep 0.2; done
	check fastpath/recheck-others-offloaded-again "stream B's data (port $bport): seen in the slow path after the recheck: $(torn_ports | grep -cx "$bport" || true), offloaded now: $(port_offloaded 5201 "$bport" && echo yes || echo no) (want seen once, and offloaded again)" \
		eval "torn_ports | grep -qx '$bport' && port_offloaded 5201 '$bport'"
	check fastpath/recheck-status-says-why "status .recheck.last: flows $flows, reason: $reason (want the change named and flows >= 2)" \
		recheck_reason_ok "$reason" "$flows"
	recheck_streams_end
	fastpath_stop
	cut_broker_stop
}

# The digest over firewall4's ruleset for the lab's zones (vmaps, jumps,
# limits, rejects, MSS clamping, NAT), as the kernel dumps it: a re-render
# keeps it, a rule in a chain the forward path reaches changes it, a rule
# for the router's own input does not.
print_digest() { "$FASTPATH" print 2>/dev/null | sed -n 's/.*forward path: \(.*\)$/\1/p'; }
t_recheck_digest_router() {
	local d0 d1 d2 d3
	topo_forward; uci_firewall 1 0
	topo_fw4_router; d0=$(print_digest)
	topo_fw4_router; d1=$(print_digest)
	fw4_router_ruleset | sed 's/^\(\t\ttcp dport 5201 counter accept.*\)$/\1\n\t\tip saddr 192.0.2.7 counter drop/' | nft -f -; d2=$(print_digest)
	fw4_router_ruleset | sed 's/^\(\t\tmeta nfproto ipv4 udp dport 68 counter accept\)$/\1\n\t\ttcp dport 2222 counter accept/' | nft -f -; d3=$(print_digest)
	log "fw4 router ruleset: '$d0', re-rendered '$d1', a forward_wan rule '$d2', an input_wan rule '$d3'"
	check fastpath/recheck-digest-reads-fw4 "digest of the router ruleset: '$d0' (want chains, rules and a digest)" eval "[[ '$d0' == *' chains, '*' rules, digest '* ]]"
	check fastpath/recheck-digest-same-on-rerender "re-rendered: '$d1' (want '$d0')" [ "$d1" = "$d0" ]
	check fastpath/recheck-digest-forward-rule-changes-it "a drop rule in forward_wan: '$d2' (want other than '$d0')" eval "[ -n '$d2' ] && [ '$d2' != '$d0' ]"
	check fastpath/recheck-digest-input-rule-keeps-it "a rule in input_wan: '$d3' (want '$d0')" [ "$d3" = "$d0" ]
}

# With recheck_on_rule_change off the same reload records the new digest
# and keeps the flowtable: the established flow from 10.0.2.3 keeps
# running in the fast path past the new drop rule (what the recheck fixes).
t_recheck_off() {
	local d0 d2 h0 h2 c1 c2
	topo_forward; fw4_recheck_ruleset | nft -f -; uci_firewall 1 0; slow_setup; client_from_setup
	printf "config fastpath 'main'\n\toption recheck_on_rule_change '0'\n" > /etc/config/fastpath
	started_or_fail fastpath/recheck-off || return
	d0=$(wait_recorded "")
	recheck_streams
	for _ in $(seq 1 50); do [ "$(offloaded_to 5202 10.0.2.3)" -ge 1 ] && break; sleep 0.2; done
	h0=$(table_handle)
	fw4_recheck_ruleset 'ip saddr 10.0.2.3 counter drop' 'ip daddr 10.0.2.3 counter drop' | nft -f -
	d2=$(wait_recorded "$d0")
	c1=$(client_from); h2=$(table_handle)
	sleep 3
	c2=$(client_from)
	log "recheck off: digest $d0 -> $d2, handle $h0 -> $h2; client got $c1 then $c2 packets from 10.0.2.3"
	check fastpath/recheck-off-keeps-flowtable "digest $d0 -> $d2, table handle $h0 -> $h2 (want the new digest recorded, the same handle)" \
		eval "[ -n '$d2' ] && [ '$d2' != '$d0' ] && [ -n '$h0' ] && [ '$h2' = '$h0' ]"
	check fastpath/recheck-off-flow-escapes-new-rule "packets from 10.0.2.3 reaching the client after the reload: $((c2 - c1)) (want > 100: the offloaded flow never meets the new rule)" \
		eval "[ $((c2 - c1)) -gt 100 ]"
	recheck_streams_end
	fastpath_stop
}

t_fw4_reload() {
	local s0 f4 offl
	topo_forward; topo_fw4; slow_setup; torn_setup
	started_or_fail fastpath/fw4-reload || { return; }
	iperf_start
	# The streams last until the checks are done (a fixed time would end
	# them first in a VM slowed by its host's load), then are interrupted.
	ip netns exec server iperf3 -c 10.0.1.2 -t 300 -P 2 -f m > /tmp/fw4-iperf.txt 2>&1 &
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
	local running=0; kill -0 "$ipid" 2>/dev/null && running=1
	kill -INT "$ipid" 2>/dev/null; wait "$ipid"
	log "fw4-shaped: fw4 chain $f4 packets, $offl offloaded flows before reload, $after slow-path packets after, $(iperf_sent Mbits/sec /tmp/fw4-iperf.txt) Mbit/s sent"
	check fastpath/fw4-reload-streams-outlast-checks "the streams were still running when the checks read conntrack (want yes: else the checks saw ended flows)" [ "$running" = 1 ]
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
		sh -c 'printf "%s" "$1" | jq -e "(.flowtable.devices | index(\"wan0\")) != null and (.flowtable.devices | index(\"ipip-tun\")) == null" >/dev/null' sh "$STATUS_JSON"
	measure 4
	log "ipip with fastpath: $MBPS Mbit/s, $SLOW_TUN packets from the tunnel in the forward path"
	check fastpath/ipip-rx-bypasses-forward "$SLOW_TUN packets from ipip-tun in the forward path (want < $SLOW_MAX)" lt "$SLOW_TUN" "$SLOW_MAX"
	fastpath_stop
}

# IPIP tx (Linux 6.19 accelerates both ways): a stream client -> server
# goes into the tunnel; with the underlay listed it leaves the forward path.
t_ipip_tx_7() {
	topo_ipip; slow_setup
	nft add counter inet lab slow_tun_tx
	nft add rule inet lab slow oifname "ipip-tun" counter name slow_tun_tx
	uci_network_ipip; uci_firewall 1 0
	started_or_fail fastpath/ipip-tx || { return; }
	sleep 1
	fastpath_status || { fail fastpath/ipip-tx "cannot read status"; return; }
	local u0 u1
	u0=$(slow_count slow_tun_tx)
	MBPS=$(iperf_run 4 -R)
	u1=$(slow_count slow_tun_tx)
	log "ipip tx with fastpath: $MBPS Mbit/s, $((u1 - u0)) packets into the tunnel in the forward path; tunnels: $(sj -c .tunnels)"
	check fastpath/ipip-tx-bypasses-forward "$((u1 - u0)) packets into ipip-tun in the forward path for $MBPS Mbit/s (want < $SLOW_MAX)" lt "$((u1 - u0))" "$SLOW_MAX"
	check fastpath/ipip-tx-in-fastpath "tunnels[0] = $(sj -c '.tunnels[0]') (want in_fastpath true)" sj -e '.tunnels[0].in_fastpath == true'
	fastpath_stop
}

# DS-Lite as OpenWrt's dslite proto sets it up: an ip6tnl in mode ipip6
# (IPv4 in IPv6) named ds-<interface>, encaplimit ignored (netifd's
# default), over wan0's IPv6. fastpath lists the underlay; TCP streams
# both ways leave the forward path.
topo_dslite() {
	lab_modules; sysctl_router; modprobe -q ip6_tunnel 2>/dev/null || true
	ip netns add client; ip netns add remote; ip netns add server
	veth_pair lan0 client 10.0.1.2/24 10.0.1.1 fd00:1::2/64 fd00:1::1
	veth_pair wan0 remote 10.0.2.2/24 10.0.2.1 fd00:2::2/64 fd00:2::1
	ip addr add 10.0.1.1/24 dev lan0; ip addr add 10.0.2.1/24 dev wan0
	ip -6 addr add fd00:2::1/64 dev wan0 nodad
	ip -n remote link add srv0 type veth peer name eth0 netns server
	ip -n server link set lo up; ip -n server link set eth0 up
	ip -n server addr add 10.0.3.2/24 dev eth0; ip -n server route add default via 10.0.3.1
	ip -n remote link set srv0 up; ip -n remote addr add 10.0.3.1/24 dev srv0
	ip netns exec remote sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	ip link add ds-dsl type ip6tnl mode ipip6 local fd00:2::1 remote fd00:2::2 encaplimit none
	ip addr add 192.0.0.2/29 dev ds-dsl; ip link set ds-dsl up
	ip -n remote link add aftr type ip6tnl mode ipip6 local fd00:2::2 remote fd00:2::1 encaplimit none
	ip -n remote addr add 192.0.0.1/29 dev aftr; ip -n remote link set aftr up
	ip route add 10.0.3.0/24 dev ds-dsl
	ip -n remote route add 10.0.1.0/24 dev aftr
	SERVER_ADDR=10.0.3.2
	ip netns exec client ping -c1 -W3 "$SERVER_ADDR" >/dev/null 2>&1 || log "topo_dslite: client cannot reach server through the tunnel"
	uci_network
	cat >> /etc/config/network <<'UCI'

config interface 'dsl'
	option proto 'dslite'
	option peeraddr 'fd00:2::2'
	option tunlink 'wan'
UCI
}

t_dslite_7() {
	topo_dslite; slow_setup
	uci_firewall 1 0
	started_or_fail fastpath/dslite || { return; }
	sleep 1
	fastpath_status || { fail fastpath/dslite "cannot read status"; return; }
	log "flowtable.devices: $(sj -c .flowtable.devices); tunnels: $(sj -c .tunnels)"
	check fastpath/dslite-ip6tnl-path-detected "kernel.ip6tnl_path is '$(sj .kernel.ip6tnl_path)' on $LAB_KERNEL (want true)" \
		[ "$(sj .kernel.ip6tnl_path)" = true ]
	check fastpath/dslite-stall-said "tunnels = $(sj -c .tunnels) (want kind dslite, not in the fast path, the stall said)" \
		sj -e '.tunnels[0].kind == "dslite" and .tunnels[0].in_fastpath == false and (.tunnels[0].reason | test("its flows stall: turn offload off"))'
	# The warning's premise: wan0 is listed for the wan interface, and this
	# kernel offloads the DS-Lite flow into its ip6tnl path, where it stalls.
	iperf_start
	timeout 25 ip netns exec server iperf3 -c 10.0.1.2 -t 3 -f m --connect-timeout 4000 > /tmp/iperf-ds.txt 2>&1
	local off; off=$(conntrack -L -p tcp --dport 5201 2>/dev/null | grep -c OFFLOAD || true)
	log "dslite stream with wan0 in the flowtable: $(iperf_field Mbits/sec /tmp/iperf-ds.txt) Mbit/s received, $off offloaded iperf3 flows"
	check lab/dslite-flow-offloaded-into-ip6tnl "offloaded iperf3 flows through ds-dsl: $off (want >= 1)" ge "$off" 1
	pkill -x iperf3 2>/dev/null || true
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
	# The stream lasts until the checks are done (see t_fw4_reload).
	ip netns exec server iperf3 -c 10.0.1.2 -t 300 -f m > /tmp/kill9-iperf.txt 2>&1 &
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
	local running=no; kill -0 "$ipid" 2>/dev/null && running=yes
	kill -INT "$ipid" 2>/dev/null; wait "$ipid"
	local mbps; mbps=$(iperf_sent Mbits/sec /tmp/kill9-iperf.txt)
	log "kill -9: stream $mbps Mbit/s sent, still running at the checks: $running; $after slow-path packets after the kill, flowtable handle $h0 -> $h1"
	check fastpath/kill9-forwarding-continues "the stream still running after kill -9 and restart: $running, at $mbps Mbit/s sent (want yes, >= 1)" eval "[ $running = yes ] && ge $mbps 1"
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

# The router's day, the part that needs a flowtable (issue 19; the netns
# day in src/cmd/fastpath covers lists, cuts and answers): one daemon
# through a reload, mode switches, a port that goes and comes back, a fw4
# reload, a foreign delete of its table, a restart with its tables in place. After
# each event the kernel's flowtable devices must come to equal what
# `fastpath print` plans, with one table inet fastpath: within 60 s, a
# bound for a hang on a loaded host's TCG, not a latency (logged).
plan_devices() { "$FASTPATH" print --json 2>/dev/null | jq -r 'if .flowtable.enabled then .flowtable.devices | sort | join(", ") else "none" end'; }
kernel_devices() {
	nft list flowtable inet fastpath ft >/dev/null 2>&1 || { echo none; return; }
	ft_devices | tr -d ' ' | tr ',' '\n' | grep . | sort | paste -sd, - | sed 's/,/, /g'
}
day_event() { # N NAME: after the event, wait up to 60 s for the kernel to match the plan
	local n=$1 name=$2 want got tables t0 ms
	t0=$(date +%s%N)
	want=$(plan_devices)
	while :; do
		got=$(kernel_devices); tables=$(tables_named 'inet fastpath$')
		[ "$want" = "$got" ] && { [ "$want" = none ] || [ "$tables" = 1 ]; } && break
		if [ $(( $(date +%s%N) - t0 )) -gt 60000000000 ]; then want=$(plan_devices); break; fi
		sleep 0.2
	done
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	log "day event $n ($name): plan '$want', kernel '$got', $tables table(s) inet fastpath, after $ms ms"
	check "fastpath/routers-day-$n" "after $name: kernel flowtable devices '$got', plan '$want', $tables table(s) inet fastpath (want equal, one table, daemon running)" \
		eval "[ '$want' = '$got' ] && { [ '$want' = none ] || [ '$tables' = 1 ]; } && kill -0 $FASTPATH_PID"
}
t_routers_day() {
	local h0 h1 began=$SECONDS
	topo_forward; topo_fw4; cut_tools_present > /tmp/day-tools.txt || { fail fastpath/routers-day "$(cat /tmp/day-tools.txt)"; return; }
	cut_broker_start > /tmp/day-broker.txt || { fail fastpath/routers-day "$(cat /tmp/day-broker.txt)"; return; }
	started_or_fail fastpath/routers-day || { cut_broker_stop; return; }
	day_event 1 "start"
	"$FASTPATH" reload > /dev/null; day_event 2 "ubus reload (LuCI's Save & Apply)"
	"$FASTPATH" set off > /dev/null; day_event 3 "set off"
	"$FASTPATH" set software > /dev/null; day_event 4 "set software"
	ip link set lan0 down; ip link del lan0; day_event 5 "ifdown lan0, and the port goes (hotplug remove)"
	veth_pair lan0 client 10.0.1.2/24 10.0.1.1 fd00:1::2/64 fd00:1::1
	ip addr add 10.0.1.1/24 dev lan0; day_event 6 "the port comes back, ifup lan0 (hotplug add)"
	fw4_reload; day_event 7 "fw4 reload"
	nft delete table inet fastpath; day_event 8 "foreign delete of table inet fastpath"
	h0=$(ft_handle)
	fastpath_stop
	started_or_fail fastpath/routers-day-restart || { cut_broker_stop; return; }
	day_event 9 "daemon restart with its tables in place"
	h1=$(ft_handle)
	check fastpath/routers-day-restart-keeps-flowtable "flowtable handle $h0 -> $h1 across the restart (want unchanged)" eval "[ -n '$h0' ] && [ '$h0' = '$h1' ]"
	log "router's day: 9 events in $((SECONDS - began)) s"
	fastpath_stop; cut_broker_stop
}

# The packages' integration tests, built on the host as
# dist/vmtests/<path with - for />.test from src/<path>; LAB_VMTESTS lists
# the paths (e.g. "nft cut/engine"), each with :REGEX to run only the tests
# it matches. Each runs in its package directory, as
# go test would, with FASTPATH_EXPECT_FLOWTABLE=1. Every top-level test
# counts as one check; a skip is listed with its reason.
t_package_tests() {
	local pkg bin name out rc run
	for pkg in ${LAB_VMTESTS:-}; do
		run=.
		case $pkg in *:*) run=${pkg#*:} pkg=${pkg%%:*} ;; esac
		name=${pkg//\//-}
		bin=$LAB_REPO/dist/vmtests/$name.test
		out=/tmp/pkg-$name.txt
		if [ ! -x "$bin" ]; then fail "pkg/$pkg" "no test binary $bin (the host could not build it)"; continue; fi
		log "package tests: src/$pkg"
		rc=0
		(cd "$LAB_REPO/src/$pkg" && FASTPATH_EXPECT_FLOWTABLE=1 FASTPATH_BIN="$FASTPATH" timeout 300 "$bin" -test.v -test.count=1 -test.run "$run") > "$out" 2>&1 || rc=$?
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
	run t_ipip_tx_7
	run t_dslite_7
else
	run t_lab_counts_the_slow_path
	run t_software_offload
	run t_hw_fallback
	run t_fw4_reload
	run t_offload_after_packets
	run t_bridge_port_added
	run t_vlan_pppoe
	run t_ipv6
	run t_recheck_digest_router
	run t_recheck_rule_change
	run t_recheck_off
	run t_ipip_612
	run t_ipip_policy_route
	run t_kill9
	run t_routers_day
	run t_cut_udp_flood
	run t_cut_forward
	run t_cut_ipv6
	run t_cut_xdp
	run t_cut_xdp_ipv6
	run t_xdp_forward
	run t_xdp_forward_fw4_first
	run t_cut_xdp_forward
	run t_cut_blocklist_1000
	topo_reset
	t_package_tests
fi
topo_reset
