#!/bin/sh
# Runs inside openwrt-userland's namespaces (started by run.sh): makes the
# runtime's network namespace a router between two hosts, starts the real
# fastpath daemon on the real ubusd, starts the flows the test needs and
# runs the browser test.
#
#   lanhost 10.0.1.2 --eth0==lan0-- router 10.0.1.1 | 10.0.2.1 --wan0==eth0-- wanhost 10.0.2.2, 10.0.2.3
set -eu
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "test-luci-browser: $*" >&2; exit 1; }

ip netns add lanhost
ip netns add wanhost
ip link add lan0 type veth peer name eth0 netns lanhost
ip link add wan0 type veth peer name eth0 netns wanhost
ip addr add 10.0.1.1/24 dev lan0
ip addr add 10.0.2.1/24 dev wan0
ip link set lan0 up
ip link set wan0 up
echo 1 >/proc/sys/net/ipv4/ip_forward
ip -n lanhost addr add 10.0.1.2/24 dev eth0
ip -n lanhost link set eth0 up
ip -n lanhost link set lo up
ip -n lanhost route add default via 10.0.1.1
ip -n wanhost addr add 10.0.2.2/24 dev eth0
ip -n wanhost addr add 10.0.2.3/24 dev eth0
ip -n wanhost link set eth0 up
ip -n wanhost link set lo up
ip -n wanhost route add default via 10.0.2.1

# conntrack tracks a namespace's packets once a ruleset asks for it, as
# fw4's does on a router.
nft -f - <<'NFT'
table inet probe {
	chain forward { type filter hook forward priority 0; ct state new counter; }
	chain input { type filter hook input priority 0; ct state new counter; }
}
NFT
# What reaches the far host and what the near host sends on the test flow.
ip netns exec wanhost nft -f - <<'NFT'
table ip count {
	counter rx {}
	chain input { type filter hook input priority 0; udp dport 5201 counter name rx; }
}
NFT
ip netns exec lanhost nft -f - <<'NFT'
table ip count {
	counter tx {}
	chain output { type filter hook output priority 0; udp dport 5201 counter name tx; }
}
NFT

fastpath daemon -v >"$OUT/fastpath.log" 2>&1 &
n=0
until ubus -t 1 list fastpath >/dev/null 2>&1; do
	n=$((n + 1)); [ $n -lt 300 ] || fail "the fastpath daemon did not register on ubus in 30 s (see $OUT/fastpath.log)"
	sleep 0.1
done

# The test flow, a flow to a listed address (cut by the block list), one
# to the router itself (marked local) and one the test cuts over ubus.
ip netns exec lanhost node "$here/udp.js" 10.0.1.2 40000 10.0.2.2 5201 100 &
ip netns exec lanhost node "$here/udp.js" 10.0.1.2 40001 10.0.2.3 5300 20 &
ip netns exec lanhost node "$here/udp.js" 10.0.1.2 40002 10.0.1.1 5353 20 &
ip netns exec lanhost node "$here/udp.js" 10.0.1.2 40009 10.0.2.2 9 20 &

exec node "$here/drive.js"
