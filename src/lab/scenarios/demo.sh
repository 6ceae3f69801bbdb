#!/bin/bash
# Runs inside the lab VM for `make lab`: the router the bench trusts (the
# forward/* rows: firewall4's router ruleset, wire-sized frames) without and
# with fastpath, what fastpath decided and why; then a flood cut by a
# block-list addition; then what fastpath would decide on an Archer C7.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=src/lab/scenarios/lib.sh
. "$here/lib.sh"
# shellcheck source=src/lab/scenarios/cut.sh
. "$here/cut.sh"
T=${LAB_DEMO_SECONDS:-4}
FLOOD_PPS=${LAB_DEMO_PPS:-3000}

# stream_sample SECONDS: a stream; halfway, the number of offloaded flows as
# conntrack sees them ([OFFLOAD]). Sets MBPS SLOW CPU OFFLOADED.
stream_sample() {
	local s0 c0
	iperf_start
	s0=$(slow_count); c0=$(cpu_ticks)
	ip netns exec server iperf3 -c 10.0.1.2 -t "$1" -f m > /tmp/iperf-last.txt 2>&1 &
	local ipid=$!
	sleep $(( $1 / 2 ))
	OFFLOADED=$(conntrack -L 2>/dev/null | grep -c OFFLOAD || true)
	wait "$ipid"
	MBPS=$(iperf_field Mbits/sec); CPU=$(cpu_pct "$c0" "$(cpu_ticks)"); SLOW=$(( $(slow_count) - s0 ))
}

echo
echo "== The lab: client netns -- router (this VM, Linux $LAB_KERNEL) -- server netns"
echo "   lan0 10.0.1.1/24, wan0 10.0.2.1/24; the router runs firewall4's ruleset for its"
echo "   lan and wan zones, and both ends send wire-sized frames, as Ethernet ports do;"
echo "   /etc/config/firewall: flow_offloading '1'"
topo_reset
topo_forward; wire_frames; topo_fw4_router; slow_setup; uci_firewall 1 0
# Step 4's block lists, watched from the start (the sets appear later), and
# the ubusd stand-in, so that `fastpath cuts` reaches the daemon.
cut_config 1 10
cut_tools_present && cut_broker_start >/dev/null || echo "   (no ubus stand-in: step 4 will show less)"

echo
echo "== 1. Without fastpath: every packet takes firewall4's forward path (${T} s TCP stream)"
stream_sample "$T"; B_MBPS=$MBPS B_SLOW=$SLOW B_CPU=$CPU B_OFF=$OFFLOADED
echo "   $MBPS Mbit/s, $SLOW packets through the forward path"

echo
echo "== 2. fastpath daemon starts and decides"
if ! fastpath_start > /tmp/demo-start.txt; then
	cat /tmp/demo-start.txt
	echo "fastpath could not start: the demo stops here"
	exit 1
fi
if fastpath_status; then
	echo "   mode: requested $(sj .mode.requested), running $(sj .mode.effective): $(sj .mode.reason)"
	echo "   flowtable $(sj .flowtable.table) $(sj .flowtable.name): devices $(sj '.flowtable.devices | join(", ")')"
	echo "   decisions:"
	sj '.decisions[]? | "     [\(.topic)] \(.reason)"'
else
	echo "   (no status: $STATUS_JSON)"
fi
echo
echo "   what fastpath put into the kernel, beside firewall4's table:"
nft list table inet fastpath | sed 's/^/     /'

echo
echo "== 3. With fastpath (${T} s TCP stream)"
stream_sample "$T"; F_MBPS=$MBPS F_SLOW=$SLOW F_CPU=$CPU F_OFF=$OFFLOADED
echo "   $MBPS Mbit/s, $SLOW packets through the forward path"

echo
echo "== 4. A flood cut by a block-list addition"
echo "   firewall4's table goes (its masquerade would hide the client's address from the flood)."
echo "   A UDP flow client:5000 -> server:5201, offloaded; the server floods it back at $FLOOD_PPS"
echo "   frames/s. Two block lists, each an nft set with its own drop rule in the forward path:"
echo "   inet lab_bl unwatched, which fastpath does not know, and inet lab_bl blocked, which"
echo "   /etc/config/fastpath watches. The server's address goes into one, then the other."
echo "   Counted: frames at the client, and frames that reach the router's stack (wan0's ingress"
echo "   after fastpath's cut and the flowtable)."
nft delete table inet fw4
C_ERR=""
if ! cut_blocklist_table || ! nft -f - <<'NFT' || ! cut_counters; then C_ERR="cannot create the block lists or the counters"; fi
table inet lab_bl {
	set unwatched { type ipv4_addr; }
	chain block {
		ip saddr @unwatched drop
		ip daddr @unwatched drop
	}
}
NFT
if [ -z "$C_ERR" ]; then
	cut_addrs 4
	ip netns exec client "$UDPFLOOD" send -from "$CLI_ADDR:5000" -to "$SRV_ADDR:5201" -pps 10 -seconds 8 >/dev/null 2>&1 &
	cli_pid=$!
	sleep 0.3
	t0=$(now_s)
	cut_flood_start 4 6 "$FLOOD_PPS"
	# window T0 A B: counters at T0+A and T0+B; sets W_SENT W_STACK W_FAR.
	window() {
		local a b
		sleep_until "$1" "$2"; read -r -a a <<< "$(cut_snapshot)"
		sleep_until "$1" "$3"; read -r -a b <<< "$(cut_snapshot)"
		W_SENT=$((b[0] - a[0])) W_STACK=$((b[1] - a[1])) W_FAR=$((b[2] - a[2]))
	}
	row() { printf '   %-44s %8s %10s %17s\n' "$@"; }
	window "$t0" 0.5 1.5; r1=("$W_SENT" "$W_FAR" "$W_STACK")
	nft add element inet lab_bl unwatched "{ $SRV_ADDR }"
	window "$t0" 2 3; r2=("$W_SENT" "$W_FAR" "$W_STACK")
	nft add element inet lab_bl blocked "{ $SRV_ADDR }"
	window "$t0" 3.5 4.5; r3=("$W_SENT" "$W_FAR" "$W_STACK")
	wait "$CUT_FLOOD_PID" 2>/dev/null || true
	kill "$cli_pid" 2>/dev/null; wait "$cli_pid" 2>/dev/null || true
	echo
	row "in one second of the flood" "sent" "at client" "at router's stack"
	row "before any block list has the server" "${r1[@]}"
	row "on the list fastpath does not watch" "${r2[@]}"
	row "also on the list fastpath watches" "${r3[@]}"
	echo
	echo "   An offloaded flow never meets a block list's rule in the forward path: only fastpath's"
	echo "   cut, at ingress before the flowtable, stops it. What fastpath says (fastpath cuts):"
	"$FASTPATH" cuts 2>&1 | sed 's/^/     /'
else
	echo "   $C_ERR"
fi
fastpath_stop
cut_router_stop
topo_reset

echo
echo "== 5. On a real board: fastpath print --root (an Archer C7 v2's files, hardware offload requested)"
board=$(mktemp -d)
cp -a "$LAB_REPO/src/testdata/boards/archer-c7-v2/." "$board/"
sed -i "s/option flow_offloading '0'/option flow_offloading '1'\n\toption flow_offloading_hw '1'/" "$board/etc/config/firewall"
echo "   (src/testdata/boards/archer-c7-v2 with flow_offloading '1' and flow_offloading_hw '1')"
"$FASTPATH" print --root "$board" > /tmp/demo-board.txt 2>&1
grep '^#' /tmp/demo-board.txt | sed 's/^/   /'
BOARD=$(sed -n 's/^# mode:    //p' /tmp/demo-board.txt | head -n1)
rm -rf "$board"

echo
echo "== Result (qemu TCG: compare the rows, not the absolute numbers)"
printf '   %-18s %14s %18s %16s %12s\n' "" "throughput" "slow-path packets" "offloaded flows" "router CPU"
printf '   %-18s %9s Mbit/s %18s %16s %10s %%\n' "without fastpath" "$B_MBPS" "$B_SLOW" "$B_OFF" "$B_CPU"
printf '   %-18s %9s Mbit/s %18s %16s %10s %%\n' "with fastpath" "$F_MBPS" "$F_SLOW" "$F_OFF" "$F_CPU"
awk -v f="$F_MBPS" -v b="$B_MBPS" 'BEGIN { if (b > 0) printf "   fastpath / slow path: %.2fx\n", f / b }'
if [ -n "${r3[*]:-}" ]; then
	printf '   %-18s %s\n' "block-list cut" "frames a second at the client: ${r2[1]} with the server on a list fastpath does not watch," \
		"" "${r3[1]} on the list it watches (${r3[2]} at the router's stack)"
fi
printf '   %-18s %s\n' "Archer C7 v2" "${BOARD:-(no decision printed)}"
