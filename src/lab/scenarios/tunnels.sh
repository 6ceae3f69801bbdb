#!/bin/bash
# Runs inside the lab VM: which tunnel kinds does this kernel's flowtable
# accelerate, in which direction? For each kind OpenWrt configures (ipip,
# ip6tnl as ip6ip6 and as ipip6 for dslite/map, sit for 6in4, gre) it builds
# client -- lan0 [router] wan0 == tunnel == remote -- server, lists the
# physical devices {lan0, wan0} in a hand-written flowtable (the tunnel's
# underlay, never the tunnel device), and counts the packets of a TCP
# stream that still cross the forward path from the tunnel (rx) and into it
# (tx). A kind the flowtable accelerates leaves a handful; one it does not,
# thousands. Prints one "TUNNEL kind dir slow=N mbps=M" line each.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=src/lab/scenarios/lib.sh
. "$here/lib.sh"

SECONDS_PER_RUN=${LAB_TUNNEL_SECONDS:-3}

for m in ip6_tunnel sit ip_gre gre tunnel6 ip6_udp_tunnel wireguard; do modprobe -q "$m" 2>/dev/null || true; done

# tunnel_topo KIND LISTED [ENCAPLIMIT]: the router's end is tun0, the
# remote's tun1; LISTED is the flowtable's devices.
tunnel_topo() {
	local kind=$1 listed=$2 limit=${3:-none}
	ip link del tun0 2>/dev/null || true
	topo_reset; sysctl_router
	ip netns add client; ip netns add remote; ip netns add server
	veth_pair lan0 client 10.0.1.2/24 10.0.1.1 fd00:1::2/64 fd00:1::1
	veth_pair wan0 remote 10.0.2.2/24 10.0.2.1 fd00:2::2/64 fd00:2::1
	ip addr add 10.0.1.1/24 dev lan0; ip -6 addr add fd00:1::1/64 dev lan0 nodad
	ip addr add 10.0.2.1/24 dev wan0; ip -6 addr add fd00:2::1/64 dev wan0 nodad
	ip -n remote link add srv0 type veth peer name eth0 netns server
	ip -n server link set lo up; ip -n server link set eth0 up
	ip -n server addr add 10.0.3.2/24 dev eth0; ip -n server -6 addr add fd00:3::2/64 dev eth0 nodad
	ip -n server route add default via 10.0.3.1; ip -n server -6 route add default via fd00:3::1
	ip -n remote link set srv0 up; ip -n remote addr add 10.0.3.1/24 dev srv0; ip -n remote -6 addr add fd00:3::1/64 dev srv0 nodad
	ip netns exec remote sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	case $kind in
	ipip) ip link add tun0 type ipip local 10.0.2.1 remote 10.0.2.2
		ip -n remote link add tun1 type ipip local 10.0.2.2 remote 10.0.2.1 ;;
	gre) ip link add tun0 type gre local 10.0.2.1 remote 10.0.2.2
		ip -n remote link add tun1 type gre local 10.0.2.2 remote 10.0.2.1 ;;
	sit) ip link add tun0 type sit local 10.0.2.1 remote 10.0.2.2
		ip -n remote link add tun1 type sit local 10.0.2.2 remote 10.0.2.1 ;;
	ip6ip6|ipip6)
		ip link add tun0 type ip6tnl mode "$kind" local fd00:2::1 remote fd00:2::2 encaplimit "$limit"
		ip -n remote link add tun1 type ip6tnl mode "$kind" local fd00:2::2 remote fd00:2::1 encaplimit "$limit" ;;
	wireguard)
		wg genkey > /tmp/wg0.key; wg genkey > /tmp/wg1.key
		ip link add tun0 type wireguard
		wg set tun0 private-key /tmp/wg0.key listen-port 51820 peer "$(wg pubkey < /tmp/wg1.key)" \
			endpoint 10.0.2.2:51820 allowed-ips 10.0.3.0/24,192.168.100.0/24
		ip -n remote link add tun1 type wireguard
		ip netns exec remote wg set tun1 private-key /tmp/wg1.key listen-port 51820 peer "$(wg pubkey < /tmp/wg0.key)" \
			endpoint 10.0.2.1:51820 allowed-ips 10.0.1.0/24,192.168.100.0/24 ;;
	esac
	ip link set tun0 up; ip -n remote link set tun1 up
	case $kind in
	ipip|gre|ipip6|wireguard)
		ip addr add 192.168.100.1/24 dev tun0; ip -n remote addr add 192.168.100.2/24 dev tun1
		ip route add 10.0.3.0/24 via 192.168.100.2 dev tun0
		ip -n remote route add 10.0.1.0/24 via 192.168.100.1 dev tun1
		INNER_CLIENT=10.0.1.2 ;;
	sit|ip6ip6)
		ip -6 addr add fd00:99::1/64 dev tun0 nodad; ip -n remote -6 addr add fd00:99::2/64 dev tun1 nodad
		ip -6 route add fd00:3::/64 via fd00:99::2 dev tun0
		ip -n remote -6 route add fd00:1::/64 via fd00:99::1 dev tun1
		INNER_CLIENT=fd00:1::2 ;;
	esac
	ip netns exec server ping -c1 -W3 "$INNER_CLIENT" >/dev/null 2>&1 || log "tunnel_topo $kind: the server cannot reach $INNER_CLIENT through tun0"
	nft -f - <<NFT
table inet ft {
	flowtable ft {
		hook ingress priority filter
		devices = { $listed }
	}
	chain forward {
		type filter hook forward priority filter; policy accept;
		meta l4proto tcp flow add @ft
	}
}
table inet lab {
	chain slow {
		type filter hook forward priority filter + 10; policy accept;
		iifname "tun0" counter name slow_rx
		oifname "tun0" counter name slow_tx
	}
	counter slow_rx {
	}
	counter slow_tx {
	}
}
NFT
}

# stream DIR: a TCP stream server -> client (rx: from the tunnel) or
# client -> server (tx: into it); prints "slow mbps".
stream() {
	local dir=$1 counter=slow_rx extra="" s0 s1 mbps
	[ "$dir" = tx ] && { counter=slow_tx; extra=-R; }
	s0=$(slow_count "$counter")
	ip netns exec client iperf3 -s -D -1 >/dev/null 2>&1; sleep 0.5
	# shellcheck disable=SC2086
	timeout $((SECONDS_PER_RUN + 30)) ip netns exec server iperf3 -c "$INNER_CLIENT" -t "$SECONDS_PER_RUN" -f m --connect-timeout 5000 $extra > /tmp/iperf-last.txt 2>&1
	mbps=$(iperf_field Mbits/sec)
	s1=$(slow_count "$counter")
	echo "$((s1 - s0)) $mbps"
}

probe() { # KIND LISTED [ENCAPLIMIT]
	local label="$1 {$2}" r
	[ $# -gt 2 ] && label="$1-encaplimit-$3 {$2}"
	tunnel_topo "$@"
	for dir in rx tx; do
		r=$(stream "$dir")
		echo "TUNNEL $label $dir slow=${r% *} mbps=${r#* } kernel=$LAB_KERNEL" | tee -a "$RESULTS/tunnels"
	done
}

lab_modules
# Each kind with the underlay listed (what a tunnel that resolves its path
# to the underlay needs) and with the tunnel device listed as well (what a
# tunnel the flowtable forwards into as an L3 device needs).
kinds=${LAB_TUNNEL_KINDS:-ipip gre sit wireguard ip6ip6 ipip6}
for k in $kinds; do
	for listed in "lan0, wan0" "lan0, wan0, tun0"; do
		case $k in
		ip6ip6|ipip6) probe "$k" "$listed" none; probe "$k" "$listed" 4 ;;
		*) probe "$k" "$listed" ;;
		esac
	done
done
topo_reset
