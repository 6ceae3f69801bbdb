# shellcheck shell=bash
# The router VM's side of a two-VM run (lab run --peer), sourced by
# vm2-cut.sh and vm2-forward.sh (which set $here): lib.sh and cut.sh, the
# control share's files, the links to the traffic VM, the repetitions.
# shellcheck source=src/lab/scenarios/lib.sh disable=SC2154 # $here: the sourcing script's
. "$here/lib.sh"
# shellcheck source=src/lab/scenarios/cut.sh
. "$here/cut.sh"
# shellcheck disable=SC2034 # the sourcing scripts' loops read it
reps=${LAB_BENCH_REPS:-3}
ctl=${LAB_CTL:?no control share: run as the router VM of lab run --peer}

# put NAME TEXT writes a control file in one rename.
put() { printf '%s\n' "$2" > "$ctl/.$1.tmp" && mv "$ctl/.$1.tmp" "$ctl/$1"; }
# await FILE SECONDS WHAT waits for a control file; on timeout says what
# did not happen and fails.
await() {
	local _
	for _ in $(seq 1 $(($2 * 10))); do
		[ -e "$ctl/$1" ] && return 0
		sleep 0.1
	done
	echo "no $1 from the traffic VM after $2 s: $3 (its console: traffic/console.log in the results)"
	return 1
}
finish() { put stop 1; exit "$1"; }
trap 'put stop 1' EXIT

# vm2_links: the virtio-net NICs eth0 and eth1 become lan0 (10.0.1.1) and
# wan0 (10.0.2.1), the router forwards, and the traffic VM has seen it
# answer on both; else the run ends failed.
vm2_links() {
	echo "kernel $(uname -r)"
	lab_modules
	modprobe -q virtio_net 2>/dev/null
	if ! ip link set eth0 name lan0 || ! ip link set eth1 name wan0; then echo "FAIL: no eth0/eth1: boot the router VM with lab run --peer"; finish 1; fi
	for d in lan0 wan0; do ip link set "$d" up; done
	ip addr add 10.0.1.1/24 dev lan0; ip addr add 10.0.2.1/24 dev wan0
	sysctl_router
	await ready 300 "the traffic VM did not see the router answer on both links" || finish 1
	read -r ready < "$ctl/ready"
	[ "$ready" = ok ] || { echo "FAIL: traffic VM: $ready"; finish 1; }
}

# vm2_reset: no daemon, no rules, no conntrack entries, no XDP program and
# no fastpath config: each round starts from the same router.
vm2_reset() {
	fastpath_stop_hard; cut_broker_stop
	nft flush ruleset
	conntrack -F >/dev/null 2>&1 || true
	ip link set lan0 xdp off 2>/dev/null; ip link set wan0 xdp off 2>/dev/null
	rm -f /etc/config/fastpath
	sleep 0.5
}
