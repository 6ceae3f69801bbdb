# shellcheck shell=bash disable=SC2034 # MBPS, SLOW, ... are read by the sourcing scripts
# Scenario helpers, sourced by the scripts that run inside the lab VM: the
# topologies (forward, ipip, fw4-shaped), the router's UCI tree, slow-path
# counting, router CPU, iperf3 runs, the fastpath daemon, and the PASS/FAIL
# and bench records the host reads from /lab-results.

FASTPATH=${FASTPATH_BIN:-$LAB_REPO/dist/fastpath}
PPPOESESSION=${PPPOESESSION_BIN:-$LAB_REPO/dist/pppoesession}
RESULTS=${LAB_RESULTS:-/lab-results}
IPERF_SECONDS=${LAB_IPERF_SECONDS:-4}

log() { echo "[$(date +%T)] $*"; }

# --- records ---------------------------------------------------------------

# pass/fail NAME [WHY] print and record one check for the host's tally.
pass() { echo "PASS $1" | tee -a "$RESULTS/checks"; }
fail() { echo "FAIL $1: ${2:-}" | tee -a "$RESULTS/checks"; }

# check NAME WHY COMMAND... runs COMMAND; PASS if it succeeds, else FAIL WHY.
check() {
	local name=$1 why=$2; shift 2
	if "$@"; then pass "$name"; else fail "$name" "$why"; fi
}

# bench_record NAME KEY=NUMBER... appends one repetition to runs.jsonl.
bench_record() {
	local name=$1 kv k v json; shift
	json=$(printf '{"name":"%s","kernel":"%s"' "$name" "$LAB_KERNEL")
	for kv in "$@"; do
		k=${kv%%=*}; v=${kv#*=}
		json="$json,\"$k\":${v:-0}"
	done
	echo "$json}" | tee -a "$RESULTS/runs.jsonl"
}

# bench_error NAME REASON records a repetition that could not be measured.
bench_error() { printf '{"name":"%s","kernel":"%s","error":"%s"}\n' "$1" "$LAB_KERNEL" "$(echo "$2" | tr -d '"\\' | tr '\n' ' ')" | tee -a "$RESULTS/runs.jsonl"; }

# --- kernel and topology ---------------------------------------------------

# lab_modules loads what the scenarios use, once per boot (each modprobe is
# slow under emulation, and topo_reset runs before every scenario).
lab_modules() {
	local m
	if [ -e /tmp/lab-modules-loaded ]; then timestamps_on; return 0; fi
	for m in veth bridge nf_tables nf_conntrack nf_flow_table nf_flow_table_inet nft_flow_offload \
		nft_ct nft_counter nft_chain_nat nf_nat nft_masq nft_limit nft_reject nft_reject_inet nft_exthdr nft_rt nft_log nft_nat ipip tunnel4 ip_tunnel nfnetlink_queue nf_conntrack_netlink; do
		modprobe -q "$m" 2>/dev/null || true
	done
	: > /tmp/lab-modules-loaded
	timestamps_on
}

# timestamps_on keeps one socket with SO_TIMESTAMP open (an idle ping) for
# the VM's life. Every ping otherwise turns the kernel's receive-timestamp
# static key on and off again, and under qemu's multi-threaded TCG the code
# patching behind that can leave a stale int3 for the other CPU: an Oops in
# netif_rx_internal seen once in a bench run.
timestamps_on() {
	[ -e /tmp/lab-timestamps-on ] && return 0
	ping -q -i 1000 127.0.0.1 >/dev/null 2>&1 &
	: > /tmp/lab-timestamps-on
}

# topo_reset removes everything a scenario may have created, so the next one
# starts from the same empty router.
topo_reset() {
	lab_modules
	fastpath_stop_hard
	pkill -x iperf3 2>/dev/null || true
	pppoe_stop
	local ns
	for ns in client client2 server remote; do ip netns del "$ns" 2>/dev/null || true; done
	ip link del br-lan 2>/dev/null || true
	ip link del lan1 2>/dev/null || true
	ip link del lan0 2>/dev/null || true
	ip link del wan0 2>/dev/null || true
	ip link del ipip-tun 2>/dev/null || true
	ip link del ds-dsl 2>/dev/null || true
	ip rule del pref 100 2>/dev/null || true # t_ipip_policy_route's
	nft flush ruleset
	conntrack -F >/dev/null 2>&1 || true
	rm -f /etc/config/fastpath
	uci_network; uci_firewall 0 0
	sleep 0.2
}

sysctl_router() {
	sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
		net.netfilter.nf_conntrack_acct=1 2>/dev/null || sysctl -qw net.ipv4.ip_forward=1
}

# veth_pair ROUTERDEV NS ADDR4 GW4 ADDR6 GW6: a veth with one end in the router.
veth_pair() {
	local dev=$1 ns=$2 a4=$3 gw4=$4 a6=$5 gw6=$6
	ip link add "$dev" type veth peer name eth0 netns "$ns"
	ip -n "$ns" link set lo up
	ip -n "$ns" link set eth0 up
	ip -n "$ns" addr add "$a4" dev eth0
	ip -n "$ns" -6 addr add "$a6" dev eth0 nodad
	ip -n "$ns" route add default via "$gw4"
	ip -n "$ns" -6 route add default via "$gw6"
	ip link set "$dev" up
}

# topo_forward: client (10.0.1.2) -- lan0 [router] wan0 -- server (10.0.2.2).
topo_forward() {
	lab_modules; sysctl_router
	ip netns add client; ip netns add server
	veth_pair lan0 client 10.0.1.2/24 10.0.1.1 fd00:1::2/64 fd00:1::1
	veth_pair wan0 server 10.0.2.2/24 10.0.2.1 fd00:2::2/64 fd00:2::1
	ip addr add 10.0.1.1/24 dev lan0; ip -6 addr add fd00:1::1/64 dev lan0 nodad
	ip addr add 10.0.2.1/24 dev wan0; ip -6 addr add fd00:2::1/64 dev wan0 nodad
	SERVER_ADDR=10.0.2.2
	ip netns exec client ping -c1 -W2 "$SERVER_ADDR" >/dev/null 2>&1 || log "topo_forward: client cannot reach server"
}

# topo_bridge: an OpenWrt LAN bridge. client (10.0.1.2) -- lan0 [br-lan
# 10.0.1.1, router] wan0 -- server (10.0.2.2); lan1 -- client2 (10.0.1.3)
# exists but is not a port yet: hostapd adds Wi-Fi interfaces to br-lan
# that way, and /etc/config/network does not name them.
topo_bridge() {
	lab_modules; sysctl_router
	ip netns add client; ip netns add client2; ip netns add server
	ip link add br-lan type bridge
	veth_pair lan0 client 10.0.1.2/24 10.0.1.1 fd00:1::2/64 fd00:1::1
	veth_pair lan1 client2 10.0.1.3/24 10.0.1.1 fd00:1::3/64 fd00:1::1
	veth_pair wan0 server 10.0.2.2/24 10.0.2.1 fd00:2::2/64 fd00:2::1
	ip link set lan0 master br-lan; ip link set br-lan up
	ip addr add 10.0.1.1/24 dev br-lan; ip -6 addr add fd00:1::1/64 dev br-lan nodad
	ip addr add 10.0.2.1/24 dev wan0; ip -6 addr add fd00:2::1/64 dev wan0 nodad
	SERVER_ADDR=10.0.2.2
	ip netns exec client ping -c1 -W2 "$SERVER_ADDR" >/dev/null 2>&1 || log "topo_bridge: client cannot reach server"
	uci_network
	sed -i "s/option device 'lan0'/option device 'br-lan'/" /etc/config/network
	printf "\nconfig device\n\toption name 'br-lan'\n\toption type 'bridge'\n\tlist ports 'lan0'\n" >> /etc/config/network
}

# topo_vlan_pppoe: a UniFi-style WAN, the ISP's VLAN 500 on wan0 carrying a
# kernel PPPoE session. client (10.0.1.2) -- lan0 [router] wan0 > wan0.500 >
# pppoe-wan 100.64.0.1 == PPPoE session 1 == server eth0.500 > ppp
# 100.64.0.2 (the ISP's end, and the server). The lab has no pppd:
# dist/pppoesession opens the session at each end (no LCP or IPCP).
topo_vlan_pppoe() {
	lab_modules; sysctl_router
	modprobe -q 8021q; modprobe -q pppoe
	[ -x "$PPPOESESSION" ] || { log "no $PPPOESESSION: run 'make lab-tools' on the host"; return 1; }
	[ -e /dev/ppp ] || mknod /dev/ppp c 108 0
	ip netns add client; ip netns add server
	veth_pair lan0 client 10.0.1.2/24 10.0.1.1 fd00:1::2/64 fd00:1::1
	ip addr add 10.0.1.1/24 dev lan0; ip -6 addr add fd00:1::1/64 dev lan0 nodad
	ip link add wan0 type veth peer name eth0 netns server
	ip link set wan0 up; ip -n server link set lo up; ip -n server link set eth0 up
	ip link add link wan0 name wan0.500 type vlan id 500; ip link set wan0.500 up
	ip -n server link add link eth0 name eth0.500 type vlan id 500; ip -n server link set eth0.500 up
	local rmac smac rdev sdev
	rmac=$(ip -o link show wan0.500 | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
	smac=$(ip -n server -o link show eth0.500 | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
	"$PPPOESESSION" wan0.500 "$smac" 1 > /tmp/pppoe-router.txt 2>&1 &
	PPPOE_PIDS=$!
	ip netns exec server "$PPPOESESSION" eth0.500 "$rmac" 1 > /tmp/pppoe-server.txt 2>&1 &
	PPPOE_PIDS="$PPPOE_PIDS $!"
	for _ in $(seq 1 50); do
		[ -s /tmp/pppoe-router.txt ] && [ -s /tmp/pppoe-server.txt ] && break
		sleep 0.1
	done
	rdev=$(head -n1 /tmp/pppoe-router.txt); sdev=$(head -n1 /tmp/pppoe-server.txt)
	case "$rdev $sdev" in ppp[0-9]*\ ppp[0-9]*) ;; *) log "topo_vlan_pppoe: no PPPoE session: router '$rdev', server '$sdev'"; return 1 ;; esac
	ip link set "$rdev" name pppoe-wan
	ip link set pppoe-wan mtu 1492 up
	ip addr add 100.64.0.1 peer 100.64.0.2/32 dev pppoe-wan
	ip -n server link set "$sdev" mtu 1492 up
	ip -n server addr add 100.64.0.2 peer 100.64.0.1/32 dev "$sdev"
	ip -n server route add default dev "$sdev"
	ip route add default dev pppoe-wan
	SERVER_ADDR=100.64.0.2
	ip netns exec client ping -c1 -W2 "$SERVER_ADDR" >/dev/null 2>&1 || log "topo_vlan_pppoe: client cannot reach server over PPPoE"
	uci_network
	sed -i "/^config interface 'wan'/,\$ d" /etc/config/network
	printf "config interface 'wan'\n\toption device 'wan0.500'\n\toption proto 'pppoe'\n\toption username 'lab'\n\toption password 'lab'\n" >> /etc/config/network
}

# pppoe_stop ends the PPPoE sessions topo_vlan_pppoe started.
pppoe_stop() {
	local pid
	for pid in ${PPPOE_PIDS:-}; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
	PPPOE_PIDS=""
	ip link del wan0.500 2>/dev/null || true
}

# topo_ipip: the seed's topology. client (10.0.1.2) -- lan0 [router] wan0
# (underlay 10.0.2.1) == ipip-tun 192.168.100.1 <=> remote (10.0.2.2, tun
# 192.168.100.2) -- server (10.0.3.2) behind the remote. Traffic from the
# server reaches the router through the tunnel (its rx path).
topo_ipip() {
	lab_modules; sysctl_router
	ip netns add client; ip netns add remote; ip netns add server
	veth_pair lan0 client 10.0.1.2/24 10.0.1.1 fd00:1::2/64 fd00:1::1
	veth_pair wan0 remote 10.0.2.2/24 10.0.2.1 fd00:2::2/64 fd00:2::1
	ip addr add 10.0.1.1/24 dev lan0; ip addr add 10.0.2.1/24 dev wan0
	# server behind the remote
	ip -n remote link add srv0 type veth peer name eth0 netns server
	ip -n server link set lo up; ip -n server link set eth0 up
	ip -n server addr add 10.0.3.2/24 dev eth0
	ip -n server route add default via 10.0.3.1
	ip -n remote link set srv0 up; ip -n remote addr add 10.0.3.1/24 dev srv0
	ip netns exec remote sysctl -qw net.ipv4.ip_forward=1
	# the tunnel: OpenWrt names an ipip interface's netdev ipip-<iface>
	ip link add ipip-tun type ipip local 10.0.2.1 remote 10.0.2.2
	ip addr add 192.168.100.1/24 dev ipip-tun; ip link set ipip-tun up
	ip -n remote link add tun1 type ipip local 10.0.2.2 remote 10.0.2.1
	ip -n remote addr add 192.168.100.2/24 dev tun1; ip -n remote link set tun1 up
	ip route add 10.0.3.0/24 via 192.168.100.2 dev ipip-tun
	ip -n remote route add 10.0.1.0/24 via 192.168.100.1 dev tun1
	SERVER_ADDR=10.0.3.2
	ip netns exec client ping -c1 -W2 "$SERVER_ADDR" >/dev/null 2>&1 || log "topo_ipip: client cannot reach server through the tunnel"
}

# FW4_RULESET is what firewall4 renders for offload, reduced to the parts
# that matter here: its own flowtable and `flow offload @ft` first in forward.
# A fw4 reload replaces the table (and so the flowtable) in one transaction.
fw4_ruleset() {
	cat <<'NFT'
table inet fw4
delete table inet fw4
table inet fw4 {
	flowtable ft {
		hook ingress priority filter
		devices = { lan0, wan0 }
		counter
	}
	chain forward {
		type filter hook forward priority filter; policy accept;
		meta l4proto { tcp, udp } flow offload @ft
		counter name fw4_forward
	}
	counter fw4_forward {
	}
}
NFT
}
topo_fw4() { fw4_ruleset | nft -f -; uci_firewall 1 0; }

# fw4_router_ruleset is what firewall4 renders for the lab's zones with
# offloading off: the slow path every forwarded packet of an OpenWrt router
# takes (raw, mangle, filter and nat chains; zone jumps; MSS clamping; a
# rule that lets iperf3 in from the wan zone; masquerade on wan).
fw4_router_ruleset() {
	cat <<'NFT'
table inet fw4
delete table inet fw4
table inet fw4 {
	chain input {
		type filter hook input priority filter; policy drop;
		iifname "lo" accept
		ct state vmap { established : accept, related : accept }
		tcp flags syn / fin,syn,rst,ack jump syn_flood
		iifname "lan0" jump input_lan
		iifname "wan0" jump input_wan
		jump handle_reject
	}
	chain forward {
		type filter hook forward priority filter; policy drop;
		ct state vmap { established : accept, related : accept }
		iifname "lan0" jump forward_lan
		iifname "wan0" jump forward_wan
		jump handle_reject
	}
	chain output {
		type filter hook output priority filter; policy accept;
		oifname "lo" accept
		ct state vmap { established : accept, related : accept }
		oifname "lan0" jump output_lan
		oifname "wan0" jump output_wan
	}
	chain prerouting {
		type filter hook prerouting priority filter; policy accept;
		iifname "lan0" jump helper_lan
	}
	chain handle_reject {
		meta l4proto tcp reject with tcp reset
		reject
	}
	chain syn_flood {
		limit rate 25/second burst 50 packets return
		drop
	}
	chain input_lan { ct status dnat accept; jump accept_from_lan; }
	chain output_lan { jump accept_to_lan; }
	chain forward_lan { jump accept_to_wan; jump accept_to_lan; }
	chain helper_lan { }
	chain accept_from_lan { iifname "lan0" counter accept; }
	chain accept_to_lan { oifname "lan0" counter accept; }
	chain input_wan {
		meta nfproto ipv4 udp dport 68 counter accept
		icmp type echo-request counter accept
		meta nfproto ipv6 udp dport 546 counter accept
		ct status dnat accept
		jump reject_from_wan
	}
	chain output_wan { jump accept_to_wan; }
	chain forward_wan {
		icmp type echo-request counter accept
		meta nfproto ipv6 icmpv6 type { destination-unreachable, time-exceeded, packet-too-big, parameter-problem } counter accept
		tcp dport 5201 counter accept comment "!fw4: Allow-iperf3"
		ct status dnat accept
		jump reject_to_wan
	}
	chain accept_to_wan { meta nfproto ipv4 oifname "wan0" ct state invalid counter drop; oifname "wan0" counter accept; }
	chain reject_from_wan { iifname "wan0" counter jump handle_reject; }
	chain reject_to_wan { oifname "wan0" counter jump handle_reject; }
	chain dstnat { type nat hook prerouting priority dstnat; policy accept; }
	chain srcnat {
		type nat hook postrouting priority srcnat; policy accept;
		oifname "wan0" jump srcnat_wan
	}
	chain srcnat_wan { meta nfproto ipv4 masquerade; }
	chain raw_prerouting { type filter hook prerouting priority raw; policy accept; }
	chain raw_output { type filter hook output priority raw; policy accept; }
	chain mangle_prerouting { type filter hook prerouting priority mangle; policy accept; }
	chain mangle_postrouting { type filter hook postrouting priority mangle; policy accept; }
	chain mangle_input { type filter hook input priority mangle; policy accept; }
	chain mangle_output { type route hook output priority mangle; policy accept; }
	chain mangle_forward {
		type filter hook forward priority mangle; policy accept;
		iifname "wan0" tcp flags syn tcp option maxseg size set rt mtu
		oifname "wan0" tcp flags syn tcp option maxseg size set rt mtu
	}
}
NFT
}
topo_fw4_router() { fw4_router_ruleset | nft -f -; }

# wire_frames: the client and server send and take frames no larger than
# the link's MTU, as on an Ethernet wire. Without it veths hand the router
# 64 KB TCP super-packets, and every per-packet cost (the slow path's most
# of all) is paid once per 40-odd frames.
wire_frames() {
	local ns
	for ns in client server; do
		ip netns exec "$ns" ethtool -K eth0 tso off gso off gro off >/dev/null 2>&1 ||
			log "wire_frames: ethtool -K eth0 in $ns failed"
	done
}
fw4_reload() { fw4_ruleset | nft -f -; }
fw4_count() { nft list counter inet fw4 fw4_forward 2>/dev/null | awk '/packets/ { print $2; exit }'; }

# nft_by_hand: the flowtable exactly as the seed writes it.
nft_by_hand() {
	local devs=${1:-lan0, wan0}
	nft -f - <<NFT
table inet filter {
	flowtable ft {
		hook ingress priority filter
		devices = { $devs }
	}
	chain forward {
		type filter hook forward priority filter; policy accept;
		meta l4proto { tcp, udp } flow add @ft
	}
}
NFT
}

# --- UCI tree ------------------------------------------------------------

uci_network() {
	mkdir -p /etc/config
	cp "$LAB_REPO/src/testdata/uci/network" /etc/config/network
}

uci_network_ipip() {
	uci_network
	cat >> /etc/config/network <<'UCI'

config interface 'tun'
	option proto 'ipip'
	option peeraddr '10.0.2.2'
	option ipaddr '10.0.2.1'
	option tunlink 'wan'
UCI
}

# uci_firewall FLOW_OFFLOADING FLOW_OFFLOADING_HW
uci_firewall() {
	mkdir -p /etc/config
	cat > /etc/config/firewall <<UCI
config defaults
	option input 'ACCEPT'
	option output 'ACCEPT'
	option forward 'ACCEPT'
	option flow_offloading '$1'
	option flow_offloading_hw '$2'

config zone
	option name 'lan'
	list network 'lan'
	option input 'ACCEPT'
	option output 'ACCEPT'
	option forward 'ACCEPT'

config zone
	option name 'wan'
	list network 'wan'
	option input 'ACCEPT'
	option output 'ACCEPT'
	option forward 'ACCEPT'
UCI
}

# uci_option FILE OPTION prints the option's value from a UCI file.
uci_option() { sed -n "s/^[[:space:]]*option[[:space:]]\{1,\}$2[[:space:]]\{1,\}'\{0,1\}\([^']*\)'\{0,1\}.*/\1/p" "/etc/config/$1" | head -n1; }

# --- measurements ----------------------------------------------------------

# slow_setup: a chain after every offload chain; only packets that are not
# offloaded reach it. slow_all counts all, slow_tun those from the tunnel.
slow_setup() {
	nft -f - <<'NFT'
table inet lab {
	chain slow {
		type filter hook forward priority filter + 10; policy accept;
		counter name slow_all
		iifname "ipip-tun" counter name slow_tun
	}
	counter slow_all {
	}
	counter slow_tun {
	}
}
NFT
}
slow_count() { nft list counter inet lab "${1:-slow_all}" | awk '/packets/ { print $2; exit }'; }

# offloaded_ports prints the client-side ports of offloaded iperf3 flows.
offloaded_ports() {
	conntrack -L -p tcp --dport 5201 2>/dev/null | grep -F '[OFFLOAD]' |
		sed -n 's/.* sport=\([0-9]*\) dport=5201 .*/\1/p' | sort -u
}

# torn_setup: the slow-path chain also notes the port of every iperf3 flow
# it sees; a flow torn down from its flowtable sends its next packet there.
# FIN and RST segments take the slow path by design (the flowtable hands
# a closing flow back to conntrack), so they mark nothing.
torn_setup() {
	nft add set inet lab torn '{ type inet_service; flags dynamic; }'
	nft add rule inet lab slow meta l4proto tcp ct original proto-dst 5201 'tcp flags & (fin | rst) == 0' update @torn '{ ct original proto-src }'
}
torn_reset() { nft flush set inet lab torn; }
torn_ports() { nft -j list set inet lab torn | jq -r '.nftables[].set.elem[]?' | sort -u; }

# cpu_ticks prints "busy total" jiffies (busy = system + softirq).
cpu_ticks() { awk '/^cpu / { print $4+$8, $2+$3+$4+$5+$6+$7+$8+$9 }' /proc/stat; }
cpu_pct() { # BEFORE AFTER (each "busy total")
	echo "$1 $2" | awk '{ b=$3-$1; t=$4-$2; printf "%.1f\n", (t>0 ? 100*b/t : 0) }'
}

# iperf_start: an iperf3 server in the client netns (data flows server ->
# client, the way downloads and the tunnel's rx path go).
iperf_start() {
	ip netns exec client iperf3 -s -D -1 -B 10.0.1.2 >/dev/null 2>&1
	# Listening, not just started: a busy emulated machine takes its time.
	local i
	for i in $(seq 1 50); do
		ip netns exec client ss -Hltn 'sport = :5201' | grep -q . && return 0
		sleep 0.1
	done
	log "iperf_start: no iperf3 server listening after 5 s"
}

# iperf_run SECONDS [EXTRA...] prints the received Mbit/s of a TCP stream
# sent from the server netns to the client netns; the full report stays in
# /tmp/iperf-last.txt (iperf_mbytes reads the volume from it).
iperf_run() {
	local t=$1; shift
	iperf_start
	ip netns exec server iperf3 -c 10.0.1.2 -t "$t" -f m "$@" > /tmp/iperf-last.txt 2>&1
	iperf_field Mbits/sec
}
iperf_field() {
	awk -v unit="$1" '/receiver/ { for (i=1;i<=NF;i++) if ($i==unit) v=$(i-1) } END { print (v=="" ? 0 : v) }' "${2:-/tmp/iperf-last.txt}"
}
# iperf_sent: as iperf_field, from the sender's summary line, the one an
# interrupted client prints with its figures (its receiver line is zero).
iperf_sent() {
	awk -v unit="$1" '/sender/ { for (i=1;i<=NF;i++) if ($i==unit) v=$(i-1) } END { print (v=="" ? 0 : v) }' "$2"
}
# iperf_mbytes prints the received volume in MB (iperf3 picks the unit).
iperf_mbytes() {
	awk '/receiver/ { for (i=2;i<=NF;i++) {
		if ($i=="KBytes") v=$(i-1)/1024; if ($i=="MBytes") v=$(i-1); if ($i=="GBytes") v=$(i-1)*1024 } }
		END { printf "%.0f\n", v }' "${1:-/tmp/iperf-last.txt}"
}

# measure [SECONDS]: one repetition of a TCP stream server -> client. Sets
# MBPS (received), SLOW and SLOW_TUN (slow-path packets in all / from the
# tunnel) and CPU (router system+softirq %).
measure() {
	local t=${1:-$IPERF_SECONDS} s0 s1 u0 u1 c0 c1
	s0=$(slow_count); u0=$(slow_count slow_tun); c0=$(cpu_ticks)
	MBPS=$(iperf_run "$t")
	c1=$(cpu_ticks); s1=$(slow_count); u1=$(slow_count slow_tun)
	SLOW=$((s1 - s0)); SLOW_TUN=$((u1 - u0)); CPU=$(cpu_pct "$c0" "$c1")
}

# measure_volume MBYTES: like measure, for a stream of a fixed volume.
measure_volume() {
	local s0 s1 u0 u1 c0 c1
	s0=$(slow_count); u0=$(slow_count slow_tun); c0=$(cpu_ticks)
	iperf_start
	timeout 300 ip netns exec server iperf3 -c 10.0.1.2 -n "${1}M" -f m > /tmp/iperf-last.txt 2>&1
	MBPS=$(iperf_field Mbits/sec)
	c1=$(cpu_ticks); s1=$(slow_count); u1=$(slow_count slow_tun)
	SLOW=$((s1 - s0)); SLOW_TUN=$((u1 - u0)); CPU=$(cpu_pct "$c0" "$c1")
	echo "$SLOW" > /tmp/measure-slow # for callers that run it in the background
}

# proc_ticks PID prints the process's user+system jiffies (0 if gone).
proc_ticks() { awk '{ print $14+$15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# measure_daemon [SECONDS]: measure, plus DAEMON_CPU: the fastpath daemon's
# own share of the router's CPU time during the stream, in percent.
measure_daemon() {
	local d0 c0 d1 c1
	d0=$(proc_ticks "${FASTPATH_PID:-0}"); c0=$(cpu_ticks)
	measure "$@"
	d1=$(proc_ticks "${FASTPATH_PID:-0}"); c1=$(cpu_ticks)
	DAEMON_CPU=$(echo "$d0 $d1 ${c0#* } ${c1#* }" | awk '{ t=$4-$3; printf "%.1f\n", (t>0 ? 100*($2-$1)/t : 0) }')
}

# xdp_forward_ends: the client's and server's veths as XDP forwarding needs
# them: whole checksums (a local socket's partial checksum, which a veth
# hands on, cannot be finished by an XDP program; a NIC's frames carry
# whole ones) and GRO on, which gives a veth the NAPI context that takes
# frames redirected to it.
xdp_forward_ends() {
	local ns
	for ns in client server; do
		ip netns exec "$ns" ethtool -K eth0 tx off gro on >/dev/null 2>&1 || { echo "ethtool -K eth0 tx off gro on failed in $ns"; return 1; }
	done
}

# xdp_forward_on_lan_wan JSON: the status's xdp_forward says it runs on
# lan0 and wan0.
xdp_forward_on_lan_wan() { printf '%s' "$1" | jq -e '.active and .devices == ["lan0","wan0"]' >/dev/null; }

# xdp_forwarded prints the frames the daemon's XDP program sent out.
xdp_forwarded() { "$FASTPATH" status --json 2>/dev/null | jq '.cut.xdp_forward.forwarded // 0' 2>/dev/null || echo 0; }

# --- the product -----------------------------------------------------------

fastpath_present() {
	[ -x "$FASTPATH" ] || { echo "no product binary at $FASTPATH: run 'make build' first"; return 1; }
}

# fastpath_start [ARGS]: the daemon in the background, waiting for its table.
fastpath_start() {
	fastpath_present || return 1
	"$FASTPATH" daemon "$@" >> /tmp/fastpath-daemon.log 2>&1 &
	FASTPATH_PID=$!
	for _ in $(seq 1 100); do
		nft list table inet fastpath >/dev/null 2>&1 && return 0
		kill -0 "$FASTPATH_PID" 2>/dev/null || { echo "fastpath daemon exited:"; tail -n 20 /tmp/fastpath-daemon.log; return 1; }
		sleep 0.2
	done
	echo "fastpath daemon: no 'table inet fastpath' after 20 s"; tail -n 20 /tmp/fastpath-daemon.log
	return 1
}

fastpath_stop() {
	[ -n "${FASTPATH_PID:-}" ] || return 0
	kill -TERM "$FASTPATH_PID" 2>/dev/null || true
	wait "$FASTPATH_PID" 2>/dev/null || true
	FASTPATH_PID=""
}
fastpath_stop_hard() {
	[ -n "${FASTPATH_PID:-}" ] && { kill -9 "$FASTPATH_PID" 2>/dev/null || true; wait "$FASTPATH_PID" 2>/dev/null || true; }
	FASTPATH_PID=""
	if [ -x "$FASTPATH" ]; then "$FASTPATH" daemon --cleanup >/dev/null 2>&1 || true; fi
}

# fastpath_status: `fastpath status --json` into STATUS_JSON (and stdout on -v).
fastpath_status() {
	STATUS_JSON=$("$FASTPATH" status --json 2>/tmp/fastpath-status.err) || {
		echo "fastpath status --json failed: $(cat /tmp/fastpath-status.err)"; return 1; }
	echo "$STATUS_JSON" | jq -e . >/dev/null || { echo "fastpath status --json is not JSON: $STATUS_JSON"; return 1; }
}
sj() { echo "$STATUS_JSON" | jq -r "$@"; }
