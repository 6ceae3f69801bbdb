#!/bin/bash
# Runs inside the lab VM (Linux 6.12): the lab router runs OpenWrt's own
# services (procd, netifd, firewall4, ubusd, rpcd, opkg from
# openwrt-userland's start.sh, in its own network namespace), fastpath
# arrives by `opkg install`, and the checks go through the doors a router
# owner uses: opkg, UCI with `/etc/init.d/firewall reload`, fw4 reloads and
# restarts, ifdown/ifup, procd's respawn and init script, `opkg remove`,
# and ubus `fastpath set`. Every other VM test uses imitations of these
# (hand-written fw4 rulesets, `ip` topologies, no procd); this one finds
# where the real ones differ.
#
#   src/lab/lab run --kernel 6.12 --timeout 900 src/lab/scenarios/openwrt.sh
#
# PASS/FAIL lines go to /lab-results/checks as tests.sh's do; `lab test`
# runs this on 6.12 in a VM of its own. The script runs twice: in the VM's
# root namespace (modules, the config files, start.sh) and, as start.sh's
# command, inside the router's namespaces ("inner").
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=src/lab/scenarios/lib.sh
. "$here/lib.sh"

SLOW_MAX=${LAB_SLOW_MAX:-20}
WORK=/tmp/owrt
# The stack's logs (syslog.log has the daemon's) stay with the results.
OUTDIR=$RESULTS/openwrt-logs

# --- outer: the VM's root namespace ------------------------------------------

# owrt_files writes start.sh's FILES_DIR: /etc/config/network (br-lan over
# lan1 and lan2, wan on wan0, a VLAN wan0.20 as ISPs hand out for IPTV or
# VoIP) and /etc/config/firewall, firewall4's own default with the VLAN's
# interface added to the wan zone.
owrt_files() {
	local userland=$1 files=$WORK/files
	mkdir -p "$files/etc/config"
	cat > "$files/etc/config/network" <<'UCI'

config interface 'loopback'
	option device 'lo'
	option proto 'static'
	option ipaddr '127.0.0.1'
	option netmask '255.0.0.0'

config device
	option name 'br-lan'
	option type 'bridge'
	list ports 'lan1'
	list ports 'lan2'

config interface 'lan'
	option device 'br-lan'
	option proto 'static'
	option ipaddr '10.0.1.1'
	option netmask '255.255.255.0'

config interface 'wan'
	option device 'wan0'
	option proto 'static'
	option ipaddr '10.0.2.1'
	option netmask '255.255.255.0'

config device
	option name 'wan0.20'
	option type '8021q'
	option ifname 'wan0'
	option vid '20'

config interface 'iptv'
	option device 'wan0.20'
	option proto 'static'
	option ipaddr '10.0.3.1'
	option netmask '255.255.255.0'
UCI
	# firewall4's default (the runtime ships it as /etc/config/firewall):
	# lan and wan zones, masquerade and MSS clamping on wan, lan -> wan
	# forwarding; the only change is the VLAN's interface in the wan zone.
	sed "s/^\(\tlist   network\t\t'wan6'\)$/\1\n\tlist   network\t\t'iptv'/" "$userland/root/etc/config/firewall" > "$files/etc/config/firewall"
	grep -q "'iptv'" "$files/etc/config/firewall"
}

outer() {
	local userland rc=0 m
	rm -rf "$WORK" "$OUTDIR"; mkdir -p "$WORK" "$OUTDIR"
	# --links: a copy of the runtime that lost its symbolic links (its
	# libraries among them) gets them back through FILES_DIR.
	if ! userland=$("$LAB_REPO/src/build/openwrt-userland.sh" --links "$WORK/files" 2> "$WORK/userland.err"); then
		fail openwrt/stack "no openwrt-userland: $(cat "$WORK/userland.err")"; return 1
	fi
	# The kernel cannot load modules by itself in the VM (its modules are a
	# share the init mounted); a router's kmodloader loads these at boot.
	lab_modules
	for m in 8021q nft_fib nft_fib_inet nft_fib_ipv4 nft_fib_ipv6 nf_log_syslog nft_quota nft_objref; do modprobe -q "$m" 2>/dev/null || true; done
	owrt_files "$userland" || { fail openwrt/stack "could not write the firewall config from $userland/root/etc/config/firewall"; return 1; }
	log "openwrt-userland: $userland; starting procd, netifd and firewall4"
	# Scripts and files the command needs must be bound in: start.sh's /tmp
	# and /run are its own, and the repository is a mount of its own here.
	SERVICES="procd network firewall" FILES_DIR="$WORK/files" OUT="$OUTDIR" READY_TIMEOUT=120 \
		BIND="$WORK $LAB_REPO $RESULTS" "$userland/start.sh" /bin/bash "$here/openwrt.sh" inner || rc=$?
	if [ "$rc" != 0 ]; then
		fail openwrt/stack "start.sh exited $rc (125: the stack did not come up; else the inner script's status)"
		local f
		for f in start services procd syslog; do
			[ -s "$OUTDIR/logs/$f.log" ] && { echo "--- $f.log (last lines)"; tail -n 40 "$OUTDIR/logs/$f.log"; }
		done
	fi
	return 0
}

# --- inner: the router's namespaces, OpenWrt's services running ---------------

FASTPATH=/usr/sbin/fastpath

# until_true SECONDS COMMAND...: COMMAND every 0.5 s until it succeeds or
# SECONDS pass; WAITED says how long it took (seconds, one decimal). The
# commands (ubus, nft, conntrack) each cost a good part of that under TCG.
until_true() {
	local bound=$1 t0 now; shift
	t0=$(date +%s%N)
	while :; do
		if "$@"; then break; fi
		now=$(date +%s%N)
		if [ $(( (now - t0) / 1000000000 )) -ge "$bound" ]; then
			WAITED=$(awk -v n=$(( ($(date +%s%N) - t0) / 100000000 )) 'BEGIN { printf "%.1f", n / 10 }')
			return 1
		fi
		sleep 0.5
	done
	WAITED=$(awk -v n=$(( ($(date +%s%N) - t0) / 100000000 )) 'BEGIN { printf "%.1f", n / 10 }')
}

first() { echo "$1"; }
iface_up() { ifstatus "$1" 2>/dev/null | jq -e '.up == true' >/dev/null; }
ft_devs() { # TABLE: the devices of flowtable ft in table inet TABLE, or "none"
	local d
	d=$(nft list flowtable inet "$1" ft 2>/dev/null | sed -n 's/.*devices = { \(.*\) }.*/\1/p')
	if nft list flowtable inet "$1" ft >/dev/null 2>&1; then echo "${d:-(no devices)}"; else echo none; fi
}
devs_are() { [ "$(ft_devs "$1")" = "$2" ]; }
plan_devs() { "$FASTPATH" print --json 2>/dev/null | jq -r 'if .flowtable.enabled then .flowtable.devices | sort | join(", ") else "none" end'; }
kernel_is_plan() { local p; p=$(plan_devs); [ -n "$p" ] && [ "$(ft_devs fastpath)" = "$p" ]; }
table_handle() { nft -a list table "$1" 2>/dev/null | sed -n "1s/^table .* { # handle \([0-9]*\).*/\1/p"; }
recorded_digest() { nft list chain inet fastpath forward 2>/dev/null | sed -n 's/.*comment "fw4 forward rules \([0-9a-f]*\)".*/\1/p'; }
table_gone() { ! nft list table "$@" >/dev/null 2>&1; }
svc() { ubus call service list '{"name":"fastpath"}' 2>/dev/null; }
svc_pid() { svc | jq -r '.fastpath.instances.main.pid // empty' 2>/dev/null; }
svc_running() { [ "$(svc | jq -r '.fastpath.instances.main.running // false' 2>/dev/null)" = true ]; }
svc_stopped() { ! svc_running && ! pgrep -x fastpath >/dev/null; }
status_answers() { STATUS_JSON=$(ubus -t 5 call fastpath status 2>/dev/null) && echo "$STATUS_JSON" | jq -e '.mode.effective' >/dev/null; }
svc_new_pid() { local p; p=$(svc_pid); svc_running && [ -n "$p" ] && [ "$p" != "$1" ] && status_answers; }
# fw4's reload flushes its table and deletes and re-creates only its
# flowtable (the table keeps its handle); a restart deletes the table. A
# new flowtable handle says either has rendered.
fw4_ft_handle() { nft -a list flowtable inet fw4 ft 2>/dev/null | sed -n 's/.*flowtable ft { # handle \([0-9]*\).*/\1/p'; }
fw4_replaced() { local h; h=$(fw4_ft_handle); [ -n "$h" ] && [ "$h" != "$1" ]; }
uci_fw() { uci -q get firewall.@defaults[0]."$1"; }
daemon_log() { grep -E 'fastpath' "$OUT/logs/syslog.log" 2>/dev/null | tail -n "${1:-8}" | cut -c1-240; }

# client_reaches: the client pings the server through the router.
client_reaches() { ip netns exec client ping -c1 -W1 10.0.2.2 >/dev/null 2>&1; }

# server_listen: an iperf3 server for one test on the server (10.0.2.2).
server_listen() {
	ip netns exec server iperf3 -s -D -1 -B 10.0.2.2 >/dev/null 2>&1
	until_true 10 eval "ip netns exec server ss -Hltn 'sport = :5201' | grep -q ."
}

# stream NAME DIR: a 3-s TCP stream between client and server, the
# connection from the client (a LAN host), as firewall4's default lets
# through lan -> wan; DIR up (the client sends) or down (-R: the server
# sends). Sets N (slow-path packets), MB (received) and MAX: the lab's
# bound for an offloaded stream (stream_both's in tests.sh: SLOW_MAX, or
# 1 % of the stream's packets when that is more).
stream() {
	local r=""; [ "$2" = down ] && r=-R
	server_listen || log "$1: no iperf3 server listening on the server after ${WAITED}s"
	N=$(slow_count)
	# shellcheck disable=SC2086 # r is empty or -R
	ip netns exec client iperf3 -c 10.0.2.2 -t 3 -f m $r > /tmp/iperf-last.txt 2>&1
	N=$(( $(slow_count) - N )); MB=$(iperf_mbytes /tmp/iperf-last.txt)
	MAX=$(( MB * 1000000 / 1500 / 100 )); [ "$MAX" -lt "$SLOW_MAX" ] && MAX=$SLOW_MAX
	log "$1 $2: $(iperf_field Mbits/sec) Mbit/s, $MB MB, $N slow-path packets"
}
offloaded() { [ "$(( N < MAX ))" = 1 ] && [ "$MB" -gt 0 ]; }
not_offloaded() { [ "$N" -ge 1000 ] && [ "$MB" -gt 0 ]; }

# The long stream the life events are measured on: client -> server,
# until the events are done, at 100 Mbit/s: at full speed it kept both
# emulated CPUs busy, and every event and conntrack read beside it took
# several times as long.
long_start() {
	server_listen || log "long stream: no iperf3 server listening after ${WAITED}s"
	ip netns exec client iperf3 -c 10.0.2.2 -t 600 -b 100M -f m > /tmp/iperf-long.txt 2>&1 &
	LONG=$!
}
long_stop() { kill -INT "$LONG" 2>/dev/null; wait "$LONG" 2>/dev/null; LONG=""; }
# long_port: the client's port of the busiest open connection to 5201 (the
# stream's data, not iperf3's control connection, nor a stream before it
# that conntrack keeps in TIME_WAIT, with more packets); conntrack shows
# the tuple before masquerade in its original direction.
long_port() {
	conntrack -L -p tcp --dport 5201 2>/dev/null | grep 'src=10.0.1.2 ' | grep -vE 'TIME_WAIT|CLOSE|FIN_WAIT|LAST_ACK' |
		sed -n 's/.* sport=\([0-9]*\) dport=5201 packets=\([0-9]*\) .*/\2 \1/p' | sort -n | tail -n1 | cut -d' ' -f2
}
port_offloaded() { [ -n "$1" ] && conntrack -L -p tcp --dport 5201 2>/dev/null | grep -F '[OFFLOAD]' | grep -q " sport=$1 dport=5201 "; }
long_offloaded() { LPORT=$(long_port); port_offloaded "$LPORT"; }
long_running() { [ -n "${LONG:-}" ] && kill -0 "$LONG" 2>/dev/null; }

# keeps_offloaded NAME WHAT COMMAND...: runs the event COMMAND with the long
# stream offloaded; afterwards the flow must still be offloaded, none of
# its packets in the slow path (torn set), fewer than SLOW_MAX slow-path
# packets in the 3 s after the event (a measuring window, not a wait),
# fastpath's table and flowtable the same (handle), the digest the same.
keeps_offloaded() {
	local name=$1 what=$2 h0 h1 d0 d1 s0 s1 f0 t0 torn ok; shift 2
	until_true 30 long_offloaded || { fail "$name" "the long stream was not offloaded before $what (waited ${WAITED}s for [OFFLOAD] on its data connection)"; return; }
	h0=$(table_handle "inet fastpath"); d0=$(recorded_digest); f0=$(fw4_ft_handle); t0=$(table_handle "inet fw4")
	torn_reset; s0=$(slow_count)
	"$@" > /tmp/event.txt 2>&1
	local erc=$?
	# The event is done when fw4 has made its flowtable again (a new handle).
	until_true 30 fw4_replaced "$f0"; ok=$?
	local wfw4=$WAITED
	sleep 3 # the window the slow path is counted in
	s1=$(slow_count); h1=$(table_handle "inet fastpath"); d1=$(recorded_digest)
	torn=$(torn_ports | grep -cx "$LPORT" || true)
	log "$what (exit $erc; fw4's flowtable handle $f0 -> $(fw4_ft_handle) after ${wfw4}s, its table's $t0 -> $(table_handle "inet fw4")): fastpath table $h0 -> $h1, digest $d0 -> $d1, $((s1 - s0)) slow-path packets in 3 s, the stream's port $LPORT seen in the slow path $torn times; $(tail -n 2 /tmp/event.txt | tr '\n' ' ')"
	check "$name" "after $what: fw4 re-made its flowtable: $([ $ok = 0 ] && echo "yes, in ${wfw4}s" || echo "no, waited ${wfw4}s"); fastpath's table handle $h0 -> $h1, rule digest '$d0' -> '$d1' (want both unchanged); $((s1 - s0)) slow-path packets in the 3 s after (want < $SLOW_MAX); the stream's data (port $LPORT) seen in the slow path $torn times (want 0) and still offloaded (want yes): $(port_offloaded "$LPORT" && echo yes || echo no)" \
		eval "[ $ok = 0 ] && [ -n '$h0' ] && [ '$h0' = '$h1' ] && [ -n '$d0' ] && [ '$d0' = '$d1' ] && [ $((s1 - s0)) -lt $SLOW_MAX ] && [ '$torn' = 0 ] && port_offloaded '$LPORT'"
}

# opkg_status_provides: the packages fastpath's ipk depends on, recorded as
# installed. On a router they come with the image (firewall4, the kernel
# modules) or the feeds; here the runtime and the VM's kernel provide what
# they stand for, and opkg's own status file lists nothing.
opkg_status_provides() {
	local p
	for p in libc firewall4 kmod-nft-offload kmod-nft-netdev kmod-nf-conntrack-netlink luci-base; do
		grep -qx "Package: $p" /usr/lib/opkg/status && continue
		: > "/usr/lib/opkg/info/$p.list" # opkg reads each installed package's file list
		printf 'Package: %s\nVersion: 0-lab\nStatus: install user installed\nArchitecture: x86_64\nInstalled-Time: 0\n\n' "$p" >> /usr/lib/opkg/status
	done
}

t_router() {
	local ok
	ip netns add client; ip netns add client2; ip netns add server
	veth_pair lan1 client 10.0.1.2/24 10.0.1.1 fd00:1::2/64 fd00:1::1
	veth_pair lan2 client2 10.0.1.3/24 10.0.1.1 fd00:1::3/64 fd00:1::1
	veth_pair wan0 server 10.0.2.2/24 10.0.2.1 fd00:2::2/64 fd00:2::1
	ip -n server link add link eth0 name eth0.20 type vlan id 20
	ip -n server link set eth0.20 up; ip -n server addr add 10.0.3.2/24 dev eth0.20
	# OpenWrt's base-files sets these at boot (/etc/sysctl.d: ip_forward,
	# nf_conntrack_acct); the runtime runs no boot.
	sysctl_router
	until_true 60 eval "iface_up lan && iface_up wan && iface_up iptv"; ok=$?
	check openwrt/router-interfaces-up "netifd brought lan (br-lan over lan1, lan2), wan (wan0) and iptv (wan0.20) up: lan $(iface_up lan && echo up || echo down), wan $(iface_up wan && echo up || echo down), iptv $(iface_up iptv && echo up || echo down) (waited ${WAITED}s, at most 60)" [ $ok = 0 ]
	log "interfaces up after ${WAITED}s; br-lan ports: $(cd /sys/class/net/br-lan && echo lower_* | sed 's/lower_//g')"
	# fw4 started before the ports existed; each ifup reloaded it (20-firewall).
	until_true 30 eval "nft list table inet fw4 >/dev/null 2>&1"
	until_true 30 client_reaches; ok=$?
	check openwrt/router-forwards "the client pings the server through firewall4's default ruleset (lan -> wan, masquerade) (waited ${WAITED}s, at most 30)" [ $ok = 0 ]
	# reload_config sends config.change only for configs whose checksum
	# changed since its last run, so its first run sends nothing; OpenWrt's
	# /etc/init.d/boot runs it once at the end of boot for that baseline,
	# and the runtime runs no boot.
	reload_config
	slow_setup; torn_setup
	log "fw4's forward chain begins: $(nft list chain inet fw4 forward 2>/dev/null | sed -n '3,4p' | xargs)"
}

t_opkg_install() {
	local ipk luci out rc=0 ok pid
	ipk=$(first "$LAB_REPO"/dist/fastpath_*_x86_64.ipk)
	luci=$(first "$LAB_REPO"/dist/luci-app-fastpath_*_all.ipk)
	if [ ! -f "$ipk" ] || [ ! -f "$luci" ]; then
		fail openwrt/opkg-install "no dist/fastpath_*_x86_64.ipk or dist/luci-app-fastpath_*_all.ipk: run 'make ipk' on the host"; return 1
	fi
	opkg_status_provides
	out=$(opkg install "$ipk" "$luci" 2>&1) || rc=$?
	log "opkg install: $(echo "$out" | tr '\n' ' ' | cut -c1-600)"
	check openwrt/opkg-install "opkg install $(basename "$ipk") $(basename "$luci"): exit $rc, installed: $(opkg list-installed 2>/dev/null | grep fastpath | tr '\n' ' ')(want 0, both)" \
		eval "[ $rc = 0 ] && opkg list-installed | grep -q '^fastpath ' && opkg list-installed | grep -q '^luci-app-fastpath '"
	until_true 60 svc_running; ok=$?
	pid=$(svc_pid)
	check openwrt/opkg-service-running "procd's service list: fastpath instance main running=$(svc_running && echo true || echo false) pid=${pid:-none}, enabled: $(cd /etc/rc.d && echo ./*fastpath*) (waited ${WAITED}s, at most 60; want running, S??fastpath)" \
		eval "[ $ok = 0 ] && ls /etc/rc.d/S??fastpath >/dev/null 2>&1"
	until_true 30 status_answers; ok=$?
	check openwrt/opkg-ubus-status "ubus call fastpath status: mode $(echo "${STATUS_JSON:-}" | jq -c .mode 2>/dev/null) (waited ${WAITED}s, at most 30, for an answer with mode.effective)" [ $ok = 0 ]
	log "after install: fastpath's tables: $(nft list tables | grep -c fastpath), flowtable devices: $(ft_devs fastpath), fw4's: $(ft_devs fw4)"
}

t_uci_offload() {
	local ok fp fw want="lan1, lan2, wan0"
	uci set firewall.@defaults[0].flow_offloading=1 && uci commit firewall && /etc/init.d/firewall reload > /tmp/fw-reload.txt 2>&1
	until_true 60 devs_are fastpath "$want"; ok=$?
	fp=$(ft_devs fastpath); fw=$(ft_devs fw4)
	log "flow_offloading=1 + firewall reload: fastpath's flowtable {$fp} after ${WAITED}s; fw4's own {$fw}; plan: $(plan_devs)"
	check openwrt/uci-flowtable-devices "fastpath's flowtable devices {$fp} (want {$want}: br-lan's ports and wan0, the parent of wan0.20; waited ${WAITED}s, at most 60); fw4's own flowtable {$fw}" [ $ok = 0 ]
	check openwrt/uci-fw4-flowtable "fw4's flowtable {$fw} (want the zones' L3 devices br-lan, wan0, wan0.20 as firewall4 renders them: its flowtable exists beside fastpath's)" [ "$fw" = "br-lan, wan0, wan0.20" ]
	stream openwrt/uci-on up
	check openwrt/uci-stream-offloaded-up "client -> server stream: $N slow-path packets for $MB MB (want < $MAX, > 0 MB)" offloaded
	# The long stream stays for the fw4 reload and restart (t_fw4_reloads).
	long_start
	until_true 30 long_offloaded; ok=$?
	check openwrt/uci-conntrack-offload "conntrack [OFFLOAD] on the stream's data connection (port ${LPORT:-none}) (waited ${WAITED}s, at most 30)" [ $ok = 0 ]
}

# fw4's own reload and restart with an unchanged config: the long stream
# stays offloaded, fastpath's rule digest and table stay (README: "Rule
# changes").
t_fw4_reloads() {
	keeps_offloaded openwrt/fw4-reload-keeps-flow "fw4 reload" fw4 reload
	keeps_offloaded openwrt/firewall-restart-keeps-flow "/etc/init.d/firewall restart" /etc/init.d/firewall restart
	long_stop
}

t_uci_offload_off() {
	local ok want="lan1, lan2, wan0"
	uci set firewall.@defaults[0].flow_offloading=0 && uci commit firewall && /etc/init.d/firewall reload > /tmp/fw-reload.txt 2>&1
	until_true 60 eval "devs_are fastpath none && devs_are fw4 none"; ok=$?
	log "flow_offloading=0 + firewall reload: fastpath's flowtable {$(ft_devs fastpath)}, fw4's {$(ft_devs fw4)} after ${WAITED}s"
	check openwrt/uci-off-flowtables-gone "flow_offloading=0: fastpath's flowtable {$(ft_devs fastpath)}, fw4's {$(ft_devs fw4)} (want none, none; waited ${WAITED}s, at most 60)" [ $ok = 0 ]
	stream openwrt/uci-off up
	check openwrt/uci-off-stream-slow "flow_offloading=0: a new stream sent $N slow-path packets for $MB MB (want >= 1000: not offloaded)" not_offloaded

	# Back on the way LuCI's Save & Apply does it: uci commit, then
	# reload_config, which procd turns into the services' reloads.
	uci set firewall.@defaults[0].flow_offloading=1 && uci commit firewall && reload_config
	until_true 60 eval "devs_are fastpath '$want' && [ \"\$(ft_devs fw4)\" != none ]"; ok=$?
	check openwrt/uci-reload-config "uci commit + reload_config (LuCI's apply): fastpath's flowtable {$(ft_devs fastpath)}, fw4's {$(ft_devs fw4)} (want {$want} and fw4's back; waited ${WAITED}s, at most 60)" [ $ok = 0 ]
}

t_life() {
	local ok pid0 pid1
	ifdown wan
	until_true 30 eval "! iface_up wan && kernel_is_plan"; ok=$?
	log "ifdown wan: fastpath's flowtable {$(ft_devs fastpath)}, plan {$(plan_devs)}, fw4's {$(ft_devs fw4)}, wan0 $(cat /sys/class/net/wan0/operstate) (${WAITED}s)"
	check openwrt/ifdown-wan-flowtable-follows "after ifdown wan: fastpath's flowtable {$(ft_devs fastpath)}, its plan {$(plan_devs)} (want equal; waited ${WAITED}s, at most 30); fw4's {$(ft_devs fw4)}" [ $ok = 0 ]
	local f0 fw4now
	f0=$(fw4_ft_handle)
	ifup wan
	until_true 60 eval "iface_up wan && devs_are fastpath 'lan1, lan2, wan0' && kernel_is_plan && client_reaches"; ok=$?
	fw4now=$(ft_devs fw4)
	log "ifup wan: fastpath's flowtable {$(ft_devs fastpath)}, fw4's {$fw4now} (${WAITED}s)"
	check openwrt/ifup-wan-flowtable-follows "after ifup wan: fastpath's flowtable {$(ft_devs fastpath)}, plan {$(plan_devs)} (want {lan1, lan2, wan0}, the client reaching the server; waited ${WAITED}s, at most 60); fw4's {$fw4now}" [ $ok = 0 ]
	# fw4 follows through its hotplug script (20-firewall: a reload on
	# ifup); how long after fastpath, for the record.
	until_true 30 fw4_replaced "$f0"
	log "ifup wan: fw4 re-made its flowtable ${WAITED}s after fastpath's matched (handle $f0 -> $(fw4_ft_handle)): {$(ft_devs fw4)}"
	stream openwrt/ifup up
	check openwrt/ifup-wan-stream-offloaded "a stream after ifup wan: $N slow-path packets for $MB MB (want < $MAX, > 0 MB)" offloaded

	pid0=$(svc_pid)
	kill -9 "$pid0"
	until_true 60 svc_new_pid "$pid0"; ok=$?
	pid1=$(svc_pid)
	check openwrt/kill9-procd-respawns "kill -9 $pid0: procd's instance pid ${pid1:-none}, running $(svc_running && echo yes || echo no), status answers: $(status_answers && echo yes || echo no) (want a new pid, running, answering; waited ${WAITED}s, at most 60: procd's respawn timeout is 5 s)" [ $ok = 0 ]
	until_true 30 devs_are fastpath "lan1, lan2, wan0"
	check openwrt/kill9-tables-one "after the respawn: tables $(nft list tables | grep fastpath | xargs), flowtable {$(ft_devs fastpath)} (want one inet fastpath, {lan1, lan2, wan0})" \
		eval "[ \"\$(nft list tables | grep -c 'inet fastpath$')\" = 1 ] && devs_are fastpath 'lan1, lan2, wan0'"

	/etc/init.d/fastpath stop > /tmp/svc.txt 2>&1
	until_true 30 svc_stopped; ok=$?
	check openwrt/initd-stop "/etc/init.d/fastpath stop: running $(svc_running && echo yes || echo no), process $(pgrep -x fastpath || echo none), tables kept: $(nft list tables | grep -c 'inet fastpath$') (want not running, no process, table kept as the init script says; waited ${WAITED}s, at most 30)" \
		eval "[ $ok = 0 ] && [ \"\$(nft list tables | grep -c 'inet fastpath$')\" = 1 ]"
	/etc/init.d/fastpath start > /tmp/svc.txt 2>&1
	until_true 60 eval "svc_running && status_answers"; ok=$?
	check openwrt/initd-start "/etc/init.d/fastpath start: running $(svc_running && echo yes || echo no) pid $(svc_pid), status answers $(status_answers && echo yes || echo no) (waited ${WAITED}s, at most 60)" [ $ok = 0 ]
}

t_opkg_remove() {
	local out rc=0 ok ipk edited
	out=$(opkg remove luci-app-fastpath fastpath 2>&1) || rc=$?
	log "opkg remove: $(echo "$out" | tr '\n' ' ' | cut -c1-600)"
	until_true 30 eval "svc_stopped && table_gone inet fastpath && table_gone netdev fastpath_cut"; ok=$?
	check openwrt/opkg-remove "opkg remove (exit $rc): running $(svc_running && echo yes || echo no), process $(pgrep -x fastpath || echo none), tables left: $(nft list tables | grep fastpath | xargs) (want none of it; waited ${WAITED}s, at most 30)" \
		eval "[ $rc = 0 ] && [ $ok = 0 ]"
	log "after remove: /etc/config/fastpath $([ -f /etc/config/fastpath ] && echo kept || echo removed); fw4's flowtable {$(ft_devs fw4)}"
	# The owner's edits, then the package again: opkg keeps a conffile
	# that differs from the package's.
	[ -f /etc/config/fastpath ] || cp "$LAB_REPO/files/fastpath.config" /etc/config/fastpath
	uci set fastpath.main.log_level=debug && uci set fastpath.main.offload_after_packets=7 && uci commit fastpath
	ipk=$(first "$LAB_REPO"/dist/fastpath_*_x86_64.ipk)
	rc=0; out=$(opkg install "$ipk" 2>&1) || rc=$?
	log "opkg install again: $(echo "$out" | tr '\n' ' ' | cut -c1-600)"
	edited="log_level $(uci -q get fastpath.main.log_level), offload_after_packets $(uci -q get fastpath.main.offload_after_packets)"
	check openwrt/opkg-reinstall-keeps-conffile "opkg install over the edited /etc/config/fastpath (exit $rc): $edited (want debug, 7)" \
		eval "[ $rc = 0 ] && [ \"\$(uci -q get fastpath.main.log_level)\" = debug ] && [ \"\$(uci -q get fastpath.main.offload_after_packets)\" = 7 ]"
	until_true 60 eval "svc_running && nft list chain inet fastpath forward 2>/dev/null | grep -q 'ct packets >= 7'"; ok=$?
	check openwrt/opkg-reinstall-daemon-reads-edits "the reinstalled daemon's rule: '$(nft list chain inet fastpath forward 2>/dev/null | grep 'flow add' | xargs)' (want ct packets >= 7; waited ${WAITED}s, at most 60)" [ $ok = 0 ]
	# The edit undone the way LuCI applies one: procd's trigger reloads fastpath.
	uci set fastpath.main.offload_after_packets=0 && uci commit fastpath && reload_config
	until_true 60 eval "nft list chain inet fastpath forward 2>/dev/null | grep 'flow add' | grep -vq 'ct packets'"; ok=$?
	check openwrt/fastpath-reload-config "offload_after_packets 0 + reload_config: rule '$(nft list chain inet fastpath forward 2>/dev/null | grep 'flow add' | xargs)' (want no packet count; waited ${WAITED}s, at most 60)" [ $ok = 0 ]
}

t_ubus_set() {
	local ok out
	out=$(ubus call fastpath set '{"mode":"off"}' 2>&1)
	log "ubus set off: $(echo "$out" | jq -c '.mode' 2>/dev/null || echo "$out")"
	until_true 60 eval "devs_are fw4 none && devs_are fastpath none"; ok=$?
	check openwrt/ubus-set-off-flowtables-gone "ubus set mode off: flow_offloading=$(uci_fw flow_offloading), fw4's flowtable {$(ft_devs fw4)}, fastpath's {$(ft_devs fastpath)} (want 0, none, none: fw4 reloaded through procd; waited ${WAITED}s, at most 60)" [ $ok = 0 ]
	stream openwrt/ubus-set-off up
	check openwrt/ubus-set-off-stream-slow "after set off: a new stream sent $N slow-path packets for $MB MB (want >= 1000: not offloaded, by fw4 either)" not_offloaded
	out=$(ubus call fastpath set '{"mode":"software"}' 2>&1)
	log "ubus set software: $(echo "$out" | jq -c '.mode' 2>/dev/null || echo "$out")"
	until_true 60 eval "devs_are fastpath 'lan1, lan2, wan0' && [ \"\$(ft_devs fw4)\" != none ]"; ok=$?
	check openwrt/ubus-set-software-back "ubus set mode software: flow_offloading=$(uci_fw flow_offloading), fastpath's flowtable {$(ft_devs fastpath)}, fw4's {$(ft_devs fw4)} (want 1, {lan1, lan2, wan0}, fw4's back; waited ${WAITED}s, at most 60)" [ $ok = 0 ]
	stream openwrt/ubus-set-software up
	check openwrt/ubus-set-software-stream-offloaded "after set software: $N slow-path packets for $MB MB (want < $MAX, > 0 MB)" offloaded
}

inner() {
	local began=$SECONDS t
	log "inside the router: $(ubus list | xargs)"
	t_router || return 0
	t_opkg_install || return 0
	for t in t_uci_offload t_fw4_reloads t_uci_offload_off t_life t_opkg_remove t_ubus_set; do
		log "=== $t ($((SECONDS - began)) s in)"
		"$t"
	done
	log "openwrt scenario: $((SECONDS - began)) s inside the router"
	if grep -q '^FAIL openwrt/' "$RESULTS/checks" 2>/dev/null; then
		echo "--- fastpath in syslog (last lines)"; daemon_log 40
		echo "--- procd.log (last lines)"; tail -n 20 "$OUT/logs/procd.log" 2>/dev/null
	fi
	return 0
}

case ${1:-} in
inner) inner ;;
*) outer ;;
esac
