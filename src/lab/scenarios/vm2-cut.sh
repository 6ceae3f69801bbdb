#!/bin/bash
# Runs in the router VM of a two-VM run (make bench-vm2: lab run --peer
# scenarios/vm2-traffic.sh): the verdict cut measured the way seed 003
# measured it, with the flood coming from outside the router, so the
# router VM's CPU is the router's own. Its virtio-net NICs eth0 and eth1
# become lan0 (10.0.1.1) and wan0 (10.0.2.1); the traffic VM's client sits
# behind lan0, its server behind wan0. Each row, LAB_BENCH_REPS times
# (3), rotated:
#   cut/off     cut_in_fastpath 0: the block list's forward rule drops the flood
#   cut/netdev  cut_in_fastpath 1, cut_backend netdev: the ingress table drops it
#   cut/xdp     cut_in_fastpath 1, cut_backend xdp: virtio_net's XDP drops it
#   cut/xdp-1000 the same with 1,000 other connections cut before the flood
#               (2,000 tuples in the XDP map): what many cuts cost a frame
#   router/idle the router's CPU over 10 s with the daemon and no flood
# One round: a fresh daemon; the traffic VM starts the client's flow and,
# half a second later, the flood back at LAB_CUT_PPS (10,000/s) for 26 s;
# the server joins the watched block list at second 10 (this VM's clock,
# counted from the flood's start as the control share reports it); from
# second 12 to 22 the router counts the frames its wan0 received, those
# that reached its stack (an ingress chain after the cut and the
# flowtable), and its own system+softirq time. With LAB_VM2_SMOKE=1 it only
# proves the set-up: frames cross, the flow is offloaded and the XDP cut
# attaches natively to virtio_net and drops the flood.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=src/lab/scenarios/vm2-router.sh
. "$here/vm2-router.sh"
SECONDS_FLOOD=26

# vm2_snapshot prints "to_stack from_client wan0_rx_packets": rx_packets
# counts every frame virtio_net took from its ring, XDP's drops included.
# and "irq": the interrupts of wan0's receive queue (virtioN-input.0).
vm2_snapshot() {
	local vdev
	vdev=$(basename "$(readlink /sys/class/net/wan0/device)")
	{ counters netdev lab_stack; echo "rx $(cat /sys/class/net/wan0/statistics/rx_packets)"
		awk -v q="$vdev-input.0" '$NF == q { n = 0; for (i = 2; i < NF; i++) if ($i ~ /^[0-9]+$/) n += $i; print "irq", n }' /proc/interrupts; } |
		awk '{ v[$1] = $2 } END { printf "%d %d %d %d\n", v["to_stack"], v["from_client"], v["rx"], v["irq"] }'
}

# vm2_router IN_FASTPATH BACKEND: the router of cut_router, on the NICs.
vm2_router() {
	cut_tools_present || return 1
	uci_network; uci_firewall 1 0
	cut_blocklist_table || { echo "cannot create the block list table lab_bl"; return 1; }
	CUT_BACKEND=$2 cut_config "$1" "${VM2_EXPIRY:-5}"
	cut_stack_counters || { echo "cannot create the router's counters"; return 1; }
	cut_broker_start || return 1
	# shellcheck disable=SC2119 # no daemon arguments
	fastpath_start || return 1
	sleep 1
}

req=0
# vm2_many_cut: 1,000 UDP flows to the server's second address, cut by
# the block list, their datagrams stopped: 2,000 quiet tuples in the map
# (cut_expiry 120 keeps them through the round).
vm2_many_cut() {
	local i n=0
	req=$((req + 1)); put "req.$req" "flows 1000 6"
	await "done.$req" 30 "the flows did not start" || return 1
	for i in $(seq 1 40); do
		n=$(conntrack -L -p udp --dport 5202 2>/dev/null | grep -c 'src=10.0.1.2' || true)
		[ "$n" -ge 1000 ] && break
		sleep 0.25
	done
	nft add element inet lab_bl blocked "{ 10.0.2.3 }"
	for i in $(seq 1 40); do
		n=$(cuts_active)
		[ "$n" != none ] && [ "$n" -ge 1000 ] && break
		sleep 0.25
	done
	[ "$n" != none ] && [ "$n" -ge 1000 ] || { echo "1,000 flows: $n cuts active (want 1000)"; return 1; }
	sleep 7 # the flows end: their tuples stay cut, quiet
}

# vm2_round NAME IN_FASTPATH BACKEND: one repetition; sets V_* and records
# the row (bench_error with the reason when a step failed).
vm2_round() {
	local name=$1 t0 a b c0 c1 s0 s1 late off held xdp_frames
	vm2_reset
	local VM2_EXPIRY=5
	[ "$name" = cut/xdp-1000 ] && VM2_EXPIRY=120
	vm2_router "$2" "$3" > /tmp/vm2-setup.txt 2>&1 || { bench_error "$name" "$(cat /tmp/vm2-setup.txt)"; return 1; }
	if [ "$name" = cut/xdp-1000 ]; then
		vm2_many_cut > /tmp/vm2-many.txt 2>&1 || { bench_error "$name" "$(cat /tmp/vm2-many.txt)"; return 1; }
	fi
	local rx0 rx1
	rx0=$(cat /sys/class/net/wan0/statistics/rx_packets)
	req=$((req + 1))
	put "req.$req" "flood $SECONDS_FLOOD $CUT_PPS"
	await "started.$req" 60 "the flood did not start" > /tmp/vm2-wait.txt || { bench_error "$name" "$(cat /tmp/vm2-wait.txt)"; return 1; }
	t0=$(now_s)
	sleep_until "$t0" 3
	off=$(flow_offloaded)
	sleep_until "$t0" 10
	nft add element inet lab_bl blocked "{ 10.0.2.2 }"
	sleep_until "$t0" 12
	read -r -a a <<< "$(vm2_snapshot)"; c0=$(cpu_ticks); s0=$(softirq_ticks)
	late=$(awk -v t0="$t0" -v now="$(now_s)" 'BEGIN { printf "%.1f", now - t0 - 12 }')
	sleep_until "$t0" 22
	read -r -a b <<< "$(vm2_snapshot)"; c1=$(cpu_ticks); s1=$(softirq_ticks)
	late="$late/$(awk -v t0="$t0" -v now="$(now_s)" 'BEGIN { printf "%.1f", now - t0 - 22 }')"
	held=0 xdp_frames=0
	if [ "$2" = 1 ]; then
		local cj; cj=$("$FASTPATH" cuts --json 2>/dev/null)
		held=$(echo "$cj" | jq '[.cuts[]? | select(.in_fastpath and (.original.dst == "10.0.2.2" or .original.src == "10.0.2.2"))] | length' 2>/dev/null || echo 0)
		xdp_frames=$(echo "$cj" | jq '.frames_dropped // 0' 2>/dev/null || echo 0)
		V_BACKENDS=$(echo "$cj" | jq -r '[.backends[]? | "\(.device)=\(.backend)"] | join(" ")' 2>/dev/null)
	fi
	V_XDP_ATTACHED=$(ip -d link show wan0 | grep -c 'prog/xdp' || true)
	await "done.$req" $((SECONDS_FLOOD + 60)) "the flood did not end" > /tmp/vm2-wait.txt || { bench_error "$name" "$(cat /tmp/vm2-wait.txt)"; return 1; }
	rx1=$(cat /sys/class/net/wan0/statistics/rx_packets)
	local t; t=$(cat "$ctl/done.$req")
	tv() { echo "$t" | sed -n "s/^$1=//p"; }
	V_OFFERED=$((b[2] - a[2])) V_STACK=$((b[0] - a[0])) V_FROM_CLIENT=$((b[1] - a[1]))
	V_CPU=$(cpu_pct "$c0" "$c1") V_SOFTIRQ=$(cpu_pct "$s0" "$s1") V_OFFLOADED=$off V_HELD=$held V_XDP_FRAMES=$xdp_frames
	# The router's busy time per frame its wan0 received (jiffies of 10 ms,
	# both CPUs): on the instruction clock each VM keeps its own time, so
	# frames per router-second differ between rows while the traffic VM
	# sends the same; the cost of one frame does not.
	V_PER_IRQ=$(awk -v f="$V_OFFERED" -v i=$((b[3] - a[3])) 'BEGIN { printf "%.1f\n", (i > 0 ? f / i : 0) }')
	V_US_PER_FRAME=$(echo "$c0 $c1 $V_OFFERED" | awk '{ printf "%.2f\n", ($5 > 0 ? ($3 - $1) * 10000 / $5 : 0) }')
	V_SENT=$(tv window_sent) V_FAR=$(tv window_far) V_BACK=$(tv window_back)
	V_SENT_ALL=$(tv sent) V_RX_ALL=$((rx1 - rx0))
	log "$name: offloaded before the cut $off; seconds 12-22 (read $late s late): wan0 received $V_OFFERED, to the stack $V_STACK, client frames to the stack $V_FROM_CLIENT," \
		"router CPU $V_CPU %, softirq $V_SOFTIRQ %, $V_US_PER_FRAME us per frame received, $V_PER_IRQ frames per wan0 receive interrupt; the cut held at 22 s: $held (the cut counted $xdp_frames, XDP on wan0: $V_XDP_ATTACHED);" \
		"the whole flood: $V_SENT_ALL sent, $V_RX_ALL received by wan0 (with the client's own frames); traffic VM: $(echo "$t" | tr '\n' ' ')"
	bench_record "$name" frames_offered="$V_OFFERED" frames_to_stack="$V_STACK" router_cpu_pct="$V_CPU" router_softirq_pct="$V_SOFTIRQ" router_us_per_frame="$V_US_PER_FRAME" frames_per_irq="$V_PER_IRQ" \
		frames_sent="${V_SENT:-0}" far_side_frames="${V_FAR:-0}" flood_sent="${V_SENT_ALL:-0}" flood_received="$V_RX_ALL" back_frames="${V_BACK:-0}" cut_held="$V_HELD" offloaded_before="$off" pps="$CUT_PPS"
}

# vm2_idle NAME: the router's floor, its CPU over 10 s with the daemon
# (XDP cut in place) and no flood.
vm2_idle() {
	local c0 c1
	vm2_reset
	vm2_router 1 xdp > /tmp/vm2-setup.txt 2>&1 || { bench_error "$1" "$(cat /tmp/vm2-setup.txt)"; return 1; }
	sleep 2
	c0=$(cpu_ticks); sleep 10; c1=$(cpu_ticks)
	bench_record "$1" router_cpu_pct="$(cpu_pct "$c0" "$c1")"
}

main() {
	vm2_links
	log "the traffic VM is linked: lan0 $(cat /sys/class/net/lan0/address), wan0 $(cat /sys/class/net/wan0/address), driver $(basename "$(readlink /sys/class/net/wan0/device/driver)")"

	if [ "${LAB_VM2_SMOKE:-0}" = 1 ]; then
		rc=0
		req=$((req + 1)); put "req.$req" ping
		await "done.$req" 30 "no answer to the ping request" || finish 1
		check vm2/forwards "client -> server through the router VM: $(cat "$ctl/done.$req") (want ping=ok)" grep -qx ping=ok "$ctl/done.$req"
		RESULTS=/tmp vm2_round cut/xdp 1 xdp || rc=1
		check vm2/offloaded "the flow was offloaded before the cut: $V_OFFLOADED (want 1)" [ "${V_OFFLOADED:-0}" = 1 ]
		check vm2/xdp-native "fastpath cuts --json backends: ${V_BACKENDS:-} (want lan0=xdp wan0=xdp); XDP programs on wan0: ${V_XDP_ATTACHED:-0}" \
			eval "[ '${V_BACKENDS:-}' = 'lan0=xdp wan0=xdp' ] && [ '${V_XDP_ATTACHED:-0}' = 1 ]"
		check vm2/frames-cross "wan0 received ${V_OFFERED:-0} flood frames in seconds 12-22 (want >= 1000)" cut_ge "${V_OFFERED:-0}" 1000
		check vm2/xdp-drops "${V_STACK:-?} of ${V_OFFERED:-0} reached the stack, XDP counted ${V_XDP_FRAMES:-0}, the client got ${V_FAR:-?} (want 0, >= 1000, 0)" \
			eval "[ '${V_STACK:-1}' = 0 ] && cut_ge '${V_XDP_FRAMES:-0}' 1000 && [ '${V_FAR:-1}' = 0 ]"
		grep -q '^FAIL' "$RESULTS/checks" 2>/dev/null && rc=1
		vm2_reset
		finish "$rc"
	fi

	local names=(cut/off cut/netdev cut/xdp cut/xdp-1000) args=("0 netdev" "1 netdev" "1 xdp" "1 xdp") rep k i
	for rep in $(seq 1 "$reps"); do
		for k in 0 1 2 3; do
			i=$(((k + rep - 1) % 4))
			log "bench ${names[$i]} (repetition $rep/$reps)"
			# shellcheck disable=SC2086 # two words: IN_FASTPATH BACKEND
			vm2_round "${names[$i]}" ${args[$i]}
		done
		log "bench router/idle (repetition $rep/$reps)"
		vm2_idle router/idle
	done
	vm2_reset
	finish 0
}

# Called on the last line, so that a script edited while it runs never
# reads on into the new text.
main "$@" # ends in finish, which exits
