#!/bin/bash
# Runs in the router VM of a two-VM run (make bench-vm2: lab run --peer
# scenarios/vm2-traffic.sh): forwarding with the traffic from outside the
# router, so the router VM's CPU is the router's own and XDP runs in its
# virtio_net driver. The router is an OpenWrt router (firewall4's ruleset,
# masquerade on wan0); the traffic VM's client downloads a TCP stream from
# its server through it (iperf3 -R, wire-sized frames: the qemu stream
# links carry no offloads). Each row, LAB_BENCH_REPS times (3), rotated:
#   forward/vm2-slowpath     no offload: every packet takes the forward path
#   forward/vm2-fastpath     fastpath's flowtable (software offload)
#   forward/vm2-fastpath-xdp the same with xdp_forward 1: established flows
#                            leave in the driver (bpf_xdp_flow_lookup)
# The router counts from second 3 to 13 of the stream (its own clock): its
# system+softirq time, the frames lan0 and wan0 received and the packets
# of the slow path; the traffic VM reports the client's received rate.
# The traffic VM runs both TCP ends and sets the stream's pace (the router
# has CPU to spare), so throughput compares little; router_us_per_frame
# (its busy time per frame received) is what a row costs the router.
# With LAB_VM2_SMOKE=1 it only checks the set-up: the xdp row forwards in
# the driver and the download arrives.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=src/lab/scenarios/vm2-router.sh
. "$here/vm2-router.sh"
STREAM_SECONDS=${LAB_VM2_STREAM_SECONDS:-20}

rx_frames() { echo $(($(cat /sys/class/net/lan0/statistics/rx_packets) + $(cat /sys/class/net/wan0/statistics/rx_packets))); }


# fwd_router ROW: firewall4's router ruleset and the slow-path counter; the
# fastpath rows add the daemon (xdp_forward 1 for the xdp row).
fwd_router() {
	topo_fw4_router || return 1
	slow_setup || return 1
	[ "$1" = forward/vm2-slowpath ] && return 0
	uci_network; uci_firewall 1 0
	local xdp=0
	[ "$1" = forward/vm2-fastpath-xdp ] && xdp=1
	cat > /etc/config/fastpath <<UCI
config fastpath 'main'
	option enabled '1'
	option cut_backend 'auto'
	option xdp_forward '$xdp'
UCI
	cut_broker_start || return 1
	# shellcheck disable=SC2119 # no daemon arguments
	fastpath_start || return 1
	sleep 1
}

req=0
# fwd_round ROW: one repetition; records the row (bench_error when a step
# failed) and sets V_* for the smoke checks.
fwd_round() {
	local name=$1 t0 c0 c1 s0 s1 f0 f1 late st
	vm2_reset
	fwd_router "$name" > /tmp/vm2-setup.txt 2>&1 || { bench_error "$name" "$(cat /tmp/vm2-setup.txt)"; return 1; }
	req=$((req + 1))
	put "req.$req" "stream $STREAM_SECONDS"
	await "started.$req" 60 "the stream did not start" > /tmp/vm2-wait.txt || { bench_error "$name" "$(cat /tmp/vm2-wait.txt)"; return 1; }
	t0=$(now_s)
	sleep_until "$t0" 3
	c0=$(cpu_ticks); s0=$(slow_count); f0=$(rx_frames)
	late=$(awk -v t0="$t0" -v now="$(now_s)" 'BEGIN { printf "%.1f", now - t0 - 3 }')
	sleep_until "$t0" 13
	c1=$(cpu_ticks); s1=$(slow_count); f1=$(rx_frames)
	V_OFFLOADED=$(conntrack -L -p tcp --dport 5201 2>/dev/null | grep -c OFFLOAD || true)
	# virtio_net's own counts of XDP transmits and their drops, and each
	# device's dropped frames: where a stream's retransmits come from.
	V_NIC=$(for d in lan0 wan0; do printf '%s: %s; ' "$d" "$(ethtool -S "$d" 2>/dev/null | awk '/xdp_tx|xdp_redirects|xdp_drops|kicks/ && $2 != 0 { printf "%s %s ", $1, $2 }')$(ip -s link show "$d" | awk '/RX:/ { getline; printf "rx_dropped %s ", $4 } /TX:/ { getline; printf "tx_dropped %s", $4 }')"; done)
	V_XDP_FWD=0 V_XDP_LINE=""
	if [ "$name" != forward/vm2-slowpath ]; then
		st=$("$FASTPATH" status --json 2>/dev/null)
		V_XDP_FWD=$(echo "$st" | jq '.cut.xdp_forward.forwarded // 0' 2>/dev/null || echo 0)
		V_XDP_LINE=$(echo "$st" | jq -c '.cut.xdp_forward // {}' 2>/dev/null)
	fi
	await "done.$req" $((STREAM_SECONDS + 90)) "the stream did not end" > /tmp/vm2-wait.txt || { bench_error "$name" "$(cat /tmp/vm2-wait.txt)"; return 1; }
	local t; t=$(cat "$ctl/done.$req")
	V_MBPS=$(echo "$t" | sed -n 's/^mbps=//p')
	[ -n "$V_MBPS" ] || { bench_error "$name" "traffic VM: $t"; return 1; }
	V_CPU=$(cpu_pct "$c0" "$c1") V_SLOW=$((s1 - s0)) V_FRAMES=$((f1 - f0))
	V_US_PER_FRAME=$(echo "$c0 $c1 $V_FRAMES" | awk '{ printf "%.2f\n", ($5 > 0 ? ($3 - $1) * 10000 / $5 : 0) }')
	log "$name: NICs $V_NIC"
	log "$name: ${V_MBPS} Mbit/s to the client; seconds 3-13 (read $late s late): router CPU $V_CPU %, $V_FRAMES frames received, $V_US_PER_FRAME us per frame, $V_SLOW slow-path packets; offloaded flows $V_OFFLOADED; xdp $V_XDP_LINE; traffic VM: $(echo "$t" | tr '\n' ' ')"
	bench_record "$name" throughput_mbps="$V_MBPS" router_cpu_pct="$V_CPU" router_us_per_frame="$V_US_PER_FRAME" frames="$V_FRAMES" \
		slowpath_packets="$V_SLOW" offloaded="$V_OFFLOADED" xdp_forwarded="$V_XDP_FWD" retransmits="$(echo "$t" | sed -n 's/^retransmits=//p')"
}

main() {
	vm2_links

	if [ "${LAB_VM2_SMOKE:-0}" = 1 ]; then
		STREAM_SECONDS=15 RESULTS=/tmp fwd_round forward/vm2-fastpath-xdp
		check vm2/xdp-forward-stream "the client got ${V_MBPS:-0} Mbit/s (want > 0)" eval "[ '${V_MBPS:-0}' -gt 0 ]"
		check vm2/xdp-forward-in-driver "xdp_forward: ${V_XDP_LINE:-none} (want frames forwarded, >= 1000)" cut_ge "${V_XDP_FWD:-0}" 1000
		check vm2/xdp-forward-slow "${V_SLOW:-?} slow-path packets in seconds 3-13 (want < 20)" eval "[ '${V_SLOW:-99}' -lt 20 ]"
		rc=0; grep -q '^FAIL' "$RESULTS/checks" 2>/dev/null && rc=1
		vm2_reset
		finish "$rc"
	fi

	local names=(forward/vm2-slowpath forward/vm2-fastpath forward/vm2-fastpath-xdp) rep k i
	for rep in $(seq 1 "$reps"); do
		for k in 0 1 2; do
			i=$(((k + rep - 1) % 3))
			log "bench ${names[$i]} (repetition $rep/$reps)"
			fwd_round "${names[$i]}"
		done
	done
	vm2_reset
	finish 0
}

main "$@" # ends in finish, which exits
