#!/bin/bash
# Not a test: counts how often the guest kernel survives code patching under
# qemu's TCG (see the README's "Guest oopses"). A TCP stream crosses the
# router while a flowtable on lan0/wan0 and a forward chain are added and
# deleted in a loop: each add and delete registers or drops netfilter hooks,
# which flips static keys (the ingress one sits in __netif_receive_skb_core,
# where a test run oopsed), so the kernel rewrites its own text while the
# other vCPU runs through it. An oops ends the run (the lab detects it);
# else it prints "STRESS cycles=N seconds=S" and exits 0.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=src/lab/scenarios/lib.sh
. "$here/lib.sh"

seconds=${LAB_STRESS_SECONDS:-90}
topo_reset
topo_forward
iperf_start
ip netns exec server iperf3 -c 10.0.1.2 -t "$seconds" -f m > /tmp/iperf-last.txt 2>&1 &
stream=$!
cycles=0
end=$(($(date +%s) + seconds))
while [ "$(date +%s)" -lt "$end" ]; do
	nft -f - <<'NFT' || { log "nft add failed"; break; }
table inet stress {
	flowtable ft { hook ingress priority 0; devices = { lan0, wan0 }; }
	chain forward { type filter hook forward priority 0; meta l4proto tcp flow add @ft; }
}
NFT
	nft delete table inet stress || { log "nft delete failed"; break; }
	cycles=$((cycles + 1))
done
wait "$stream"
echo "STRESS cycles=$cycles seconds=$seconds mbps=$(iperf_field Mbits/sec)"
topo_reset
