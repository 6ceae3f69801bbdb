#!/bin/sh
# The x86_64 package on OpenWrt's own services: opkg, procd, ubusd and
# firewall4 of openwrt-userland (src/build/openwrt-userland.sh finds it;
# OPENWRT_USERLAND overrides), run as root by start.sh with
# SERVICES="procd firewall", twice: with the runtime's jsonfilter and
# without it. Each run checks, from procd's and firewall4's side:
#   - `ubus call fastpath set` software, then off, makes procd run the
#     reload triggers of the firewall config (a probe service holds the
#     same trigger as /etc/init.d/firewall), and after off firewall4's
#     reload rewrites table inet fw4 (nft monitor);
#   - `opkg remove fastpath` leaves no fastpath table and no daemon.
# This machine's kernel has no flowtables: fw4 refuses a ruleset with
# flow_offloading 1 and fastpath's flowtable cannot be made, but
# table netdev fastpath_cut can, and must be gone after the removal.
# Prints a line per check and 'N passed, N failed'; logs in
# dist/test-pkg-openwrt/{with,without}-jsonfilter/.
# The conditions are functions that wait_for calls:
# shellcheck disable=SC2317
set -eu

# --- inside the runtime ---------------------------------------------------
passed=0 failed=0
ok() {
	passed=$((passed + 1))
	echo "ok    $run: $1"
}
bad() {
	failed=$((failed + 1))
	echo "FAIL  $run: $1${2:+: $2}"
}

# wait_for SECONDS COMMAND...: polls the command's condition every 0.1 s
# until it holds or the bound passes.
wait_for() {
	tries=$(($1 * 10))
	shift
	while ! "$@" >/dev/null 2>&1; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || return 1
		sleep 0.1
	done
}

# probe_reloads: how often procd ran the firewall config's reload triggers.
probe_reloads() { grep -c . /tmp/fwprobe.log || :; }
reloads_past() { [ "$(probe_reloads)" -gt "$1" ]; }
fw4_rewritten() { grep -q 'inet fw4' /tmp/nft-monitor.log; }
has_table() { nft list tables | grep -qx "table $1"; }
daemon_runs() {
	for f in /proc/[0-9]*/cmdline; do
		case "$(tr '\0' ' ' <"$f" 2>/dev/null)" in "/usr/sbin/fastpath daemon"*) return 0 ;; esac
	done
	return 1
}

# install_probe: a service whose only content is the firewall config's
# reload trigger, registered with procd as /etc/init.d/firewall's is; its
# reload writes a line, so a line is procd running those triggers.
install_probe() {
	cat >/etc/init.d/fwprobe <<'EOF'
#!/bin/sh /etc/rc.common
USE_PROCD=1
start_service() { :; }
service_triggers() { procd_add_reload_trigger firewall; }
reload_service() { date '+reload %T.%N' >>/tmp/fwprobe.log; }
EOF
	chmod 0755 /etc/init.d/fwprobe
	: >/tmp/fwprobe.log
	/etc/init.d/fwprobe start
}

# provide_dependencies: the package's dependencies are the runtime's own
# (firewall4, libc) and the host kernel's (the kmods): opkg is told so.
provide_dependencies() {
	for p in libc firewall4 kmod-nft-offload kmod-nft-netdev kmod-nf-conntrack-netlink; do
		printf 'Package: %s\nVersion: 1\nStatus: install ok installed\nArchitecture: x86_64\n\n' "$p"
	done >>/usr/lib/opkg/status
}

# set_mode MODE: the call, then procd's reload of the firewall config.
set_mode() {
	before=$(probe_reloads)
	date "+set $1 %T.%N" >>"$OUT/times.log"
	: >/tmp/nft-monitor.log
	if ubus call fastpath set "{\"mode\":\"$1\"}" >"$OUT/set-$1.json" 2>&1; then
		ok "ubus call fastpath set $1 answers"
	else
		bad "ubus call fastpath set $1 answers" "$(cat "$OUT/set-$1.json")"
	fi
	if wait_for 10 reloads_past "$before"; then
		ok "set $1: procd ran the firewall config's reload triggers (waited for the probe's reload line, 10 s bound)"
	else
		bad "set $1: procd ran the firewall config's reload triggers" "no reload line in 10 s"
	fi
}

inside() {
	ipk=$1 run=$2
	[ "$run" = with-jsonfilter ] || rm -f /usr/bin/jsonfilter
	ip link add lan0 type veth peer name lan0p
	ip link add wan0 type veth peer name wan0p
	for d in lan0 lan0p wan0 wan0p; do ip link set "$d" up; done
	/etc/init.d/firewall reload >/dev/null 2>&1 # fw4 with the devices there
	provide_dependencies
	install_probe
	if opkg install "$ipk" >"$OUT/opkg-install.log" 2>&1; then ok "opkg install"; else bad "opkg install" "$(tail -n 5 "$OUT/opkg-install.log")"; fi
	wait_for 30 ubus list fastpath || bad "the daemon's ubus object" "not there 30 s after install"
	nft monitor >/tmp/nft-monitor.log 2>&1 &
	monitor=$!

	set_mode software
	set_mode off
	if wait_for 10 fw4_rewritten; then
		ok "set off: firewall4's reload rewrote table inet fw4 (waited for nft monitor's line, 10 s bound)"
	else
		bad "set off: firewall4's reload rewrote table inet fw4" "no 'inet fw4' event in 10 s"
	fi
	kill "$monitor"
	if wait_for 10 has_table "netdev fastpath_cut"; then
		ok "before removal: table netdev fastpath_cut is there"
	else
		bad "before removal: table netdev fastpath_cut is there" "$(nft list tables | tr '\n' ' ')"
	fi

	cp /tmp/fwprobe.log "$OUT/fwprobe.log"
	if opkg remove fastpath >"$OUT/opkg-remove.log" 2>&1; then ok "opkg remove"; else bad "opkg remove" "$(tail -n 5 "$OUT/opkg-remove.log")"; fi
	for t in "inet fastpath" "netdev fastpath_cut"; do
		if has_table "$t"; then bad "after removal: no table $t" "it is still there"; else ok "after removal: no table $t"; fi
	done
	if daemon_runs; then bad "after removal: no fastpath daemon runs" "one still runs"; else ok "after removal: no fastpath daemon runs"; fi
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

if [ "${1:-}" = --inside ]; then
	shift
	inside "$@"
	exit
fi

# --- on the host ------------------------------------------------------------
repo=$(cd "$(dirname "$0")/../.." && pwd -P)
fail() {
	echo "test-pkg-openwrt: $*" >&2
	exit 1
}
userland=$("$repo/src/build/openwrt-userland.sh") || fail "needs openwrt-userland (set OPENWRT_USERLAND)"
[ "$(id -u)" = 0 ] || fail "needs root (openwrt-userland's namespaces)"
ipk=$(ls "$repo"/dist/fastpath_*_x86_64.ipk 2>/dev/null) || fail "no dist/fastpath_*_x86_64.ipk: run make ipk"
status=0
for run in ${RUNS:-with-jsonfilter without-jsonfilter}; do
	out=$repo/dist/test-pkg-openwrt/$run
	rm -rf "$out"
	mkdir -p "$out/files"
	# A copy of the runtime that lost its symbolic links gets them back.
	"$repo/src/build/openwrt-userland.sh" --links "$out/files" >/dev/null
	SERVICES="procd firewall" FILES_DIR=$out/files OUT=$out BIND="$repo" \
		"$userland/start.sh" sh "$repo/src/build/test-pkg-openwrt.sh" --inside "$ipk" "$run" || status=1
done
exit "$status"
