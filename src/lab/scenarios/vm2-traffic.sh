#!/bin/bash
# Runs in the traffic VM of a two-VM run (lab run --peer, src/lab/lab): its
# eth0 is the router VM's lan link, eth1 its wan link. eth0 goes into netns
# client (10.0.1.2/24 via 10.0.1.1), eth1 into netns server (10.0.2.2/24 via
# 10.0.2.1), so nothing crosses between them in this VM: every frame from
# one to the other is forwarded by the router VM. Once both ends answer the
# router's ARP and ping it writes "ready" to the control share ($LAB_CTL),
# then serves the router's requests there, one at a time:
#   req.N "flood SECONDS PPS": the client keeps the flow client:5000 ->
#     server:5201 going (10 datagrams a second) for SECONDS+1 s; from half
#     a second later the server floods server:5201 -> client:5000 at PPS
#     for SECONDS s (1200-byte datagrams, dist/udpflood). started.N is
#     written as the flood starts, done.N (key=value lines) once it ended:
#     sent (flood frames out of the server), far (flood frames that reached
#     the client), back (client frames that reached the server), each over
#     the whole flood and over its seconds 12-22 (this VM's clock), and
#     the sender's own summary.
#   req.N "ping": one ping client -> server through the router; done.N says.
#   req.N "flows N SECONDS": N UDP flows client:10000+i -> 10.0.2.3:5202
#     (a second address of the server, for a block list to cut them all),
#     one datagram each a second for SECONDS s, answered by an echo; done.N
#     as soon as they started.
#   req.N "stream SECONDS": a download through the router: the client
#     connects to an iperf3 server on the server (masqueraded on the
#     router's wan0) and takes a TCP stream from it for SECONDS s
#     (iperf3 -R). started.N as the stream starts, done.N with mbps (the
#     client's received rate) and retransmits.
# It ends when "stop" appears, or when no request came for
# LAB_TRAFFIC_IDLE seconds (600).
set -u
UDPFLOOD=$LAB_REPO/dist/udpflood
ctl=${LAB_CTL:?no control share: run in the traffic VM of lab run --peer}
say() { echo "[$(date +%T)] traffic: $*"; }
# put NAME TEXT writes a control file in one rename, so the router never
# reads half of it.
put() { printf '%s\n' "$2" > "$ctl/.$1.tmp" && mv "$ctl/.$1.tmp" "$ctl/$1"; }
[ -x "$UDPFLOOD" ] || { put ready "error no $UDPFLOOD (make lab-tools builds it)"; exit 1; }
for m in virtio_net nf_tables nft_counter; do modprobe -q "$m" 2>/dev/null; done

link_ns() { # DEV NS ADDR GW
	ip netns add "$2"
	ip link set "$1" netns "$2"
	ip -n "$2" link set lo up
	ip -n "$2" link set "$1" name eth0
	ip -n "$2" link set eth0 up
	ip -n "$2" addr add "$3" dev eth0
	ip -n "$2" route add default via "$4"
}
link_ns eth0 client 10.0.1.2/24 10.0.1.1 || { put ready "error no eth0 (the lan link)"; exit 1; }
link_ns eth1 server 10.0.2.2/24 10.0.2.1 || { put ready "error no eth1 (the wan link)"; exit 1; }
ip -n server addr add 10.0.2.3/24 dev eth0
# Counters before each namespace's conntrack and sockets, which drop the
# flow's datagrams so that no ICMP answers them.
ip netns exec client nft -f - <<'NFT'
table inet far {
	counter far {
	}
	chain pre {
		type filter hook prerouting priority -300; policy accept;
		udp dport 5000 counter name far drop
	}
}
NFT
ip netns exec server nft -f - <<'NFT'
table inet near {
	counter back {
	}
	counter sent {
	}
	chain pre {
		type filter hook prerouting priority -300; policy accept;
		udp sport 5000 udp dport 5201 counter name back drop
	}
	chain out {
		type filter hook output priority 0; policy accept;
		udp sport 5201 udp dport 5000 counter name sent
	}
}
NFT
count() { ip netns exec "$1" nft list counter inet "$2" "$3" 2>/dev/null | awk '/packets/ { print $2; exit }'; }
snapshot() { echo "$(count server near sent) $(count client far far) $(count server near back)"; }

# The router must answer on both links before anything is measured.
ok=0
for _ in $(seq 1 120); do
	if ip netns exec client ping -c1 -W1 10.0.1.1 >/dev/null 2>&1 && ip netns exec server ping -c1 -W1 10.0.2.1 >/dev/null 2>&1; then ok=1; break; fi
	[ -e "$ctl/stop" ] && exit 0
	sleep 1
done
if [ "$ok" != 1 ]; then
	put ready "error the router answered no ping on 10.0.1.1 and 10.0.2.1 in 120 s"
	exit 1
fi
say "the router answers on both links"
put ready ok

flood() { # N SECONDS PPS
	local n=$1 s=$2 pps=$3 t0 a b z c cli fl
	read -r -a z <<< "$(snapshot)"
	ip netns exec client "$UDPFLOOD" send -from 10.0.1.2:5000 -to 10.0.2.2:5201 -pps 10 -seconds "$((s + 1))" >/dev/null 2>&1 &
	cli=$!
	sleep 0.5
	t0=$(date +%s.%N)
	ip netns exec server "$UDPFLOOD" send -from 10.0.2.2:5201 -to 10.0.1.2:5000 -pps "$pps" -seconds "$s" > /tmp/flood.txt 2>&1 &
	fl=$!
	put "started.$n" "$t0"
	sleep "$(awk -v t0="$t0" -v now="$(date +%s.%N)" 'BEGIN { d = t0 + 12 - now; print (d > 0 ? d : 0) }')"
	read -r -a a <<< "$(snapshot)"
	sleep "$(awk -v t0="$t0" -v now="$(date +%s.%N)" 'BEGIN { d = t0 + 22 - now; print (d > 0 ? d : 0) }')"
	read -r -a b <<< "$(snapshot)"
	wait "$fl"; wait "$cli"
	read -r -a c <<< "$(snapshot)"
	put "done.$n" "$(printf 'sent=%d\nfar=%d\nback=%d\nwindow_sent=%d\nwindow_far=%d\nwindow_back=%d\nsender=%s' \
		$((c[0] - z[0])) $((c[1] - z[1])) $((c[2] - z[2])) $((b[0] - a[0])) $((b[1] - a[1])) $((b[2] - a[2])) "$(tr '\n' ' ' < /tmp/flood.txt)")"
	say "flood $n done: $(tr '\n' ' ' < "$ctl/done.$n")"
}

flows() { # N COUNT SECONDS
	ip netns exec server "$UDPFLOOD" echo -on 10.0.2.3:5202 -seconds "$(($3 + 2))" >/dev/null 2>&1 &
	sleep 0.3
	ip netns exec client "$UDPFLOOD" flows -from 10.0.1.2 -base-port 10000 -flows "$2" -to 10.0.2.3:5202 -seconds "$3" >/dev/null 2>&1 &
	put "done.$1" "flows=$2"
}

stream() { # N SECONDS
	local n=$1 s=$2
	ip netns exec server iperf3 -s -1 -D -B 10.0.2.2 >/dev/null 2>&1
	for _ in $(seq 1 50); do
		ip netns exec server ss -ltn 2>/dev/null | grep -q '10.0.2.2:5201' && break
		sleep 0.1
	done
	put "started.$n" "$(date +%s.%N)"
	ip netns exec client iperf3 -c 10.0.2.2 -R -t "$s" -J > /tmp/stream.json 2>&1
	put "done.$n" "$(jq -r '"mbps=\(.end.sum_received.bits_per_second / 1e6 | floor)\nretransmits=\(.end.sum_sent.retransmits // 0)"' /tmp/stream.json 2>/dev/null || echo "error iperf3: $(head -c 300 /tmp/stream.json)")"
	say "stream $n done: $(tr '\n' ' ' < "$ctl/done.$n")"
}

n=1 idle=0 limit=${LAB_TRAFFIC_IDLE:-600}
while [ "$idle" -lt $((limit * 10)) ]; do
	[ -e "$ctl/stop" ] && { say "stop"; exit 0; }
	if [ -e "$ctl/req.$n" ]; then
		read -r what a1 a2 < "$ctl/req.$n"
		case $what in
		flood) flood "$n" "$a1" "$a2" ;;
		stream) stream "$n" "$a1" ;;
		flows) flows "$n" "$a1" "$a2" ;;
		ping)
			if ip netns exec client ping -c1 -W2 10.0.2.2 >/dev/null 2>&1; then put "done.$n" "ping=ok"; else put "done.$n" "ping=fail"; fi ;;
		*) put "done.$n" "error unknown request '$what'" ;;
		esac
		n=$((n + 1)) idle=0
		continue
	fi
	idle=$((idle + 1))
	sleep 0.1
done
say "no request for ${limit} s: ending"
exit 1
