#!/bin/sh
# Install test for the packages that ipk.sh built, and lint of our shell
# scripts. For every dist/*.ipk: the format opkg reads (a gzipped tar of
# debian-binary, data.tar.gz, control.tar.gz; root-owned; control fields;
# conffiles; OpenWrt's postinst/prerm), then an install into a staging root
# as opkg does it, with the modes every file must have. The package scripts
# run twice: offline (IPKG_INSTROOT set, as in an image build: only the
# rc.d links may change) and live, chrooted into the staging root with
# recording stand-ins for procd, ubus and uci (src/build/pkgtest/root).
#
# Prints a line per check and 'N passed, N failed, N skipped'.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=/dev/null # arches.sh is checked on its own
. src/build/arches.sh

passed=0 failed=0 skipped=0
ok() {
	passed=$((passed + 1))
	echo "ok    $1"
}
bad() {
	failed=$((failed + 1))
	echo "FAIL  $1${2:+: $2}"
}
skip() {
	skipped=$((skipped + 1))
	echo "SKIP  $1: $2"
}
# check DESCRIPTION COMMAND...: ok when the command succeeds.
check() {
	desc=$1
	shift
	if out=$("$@" 2>&1); then ok "$desc"; else bad "$desc" "$(echo "$out" | tail -n 5)"; fi
}

work=$(mktemp -d)
# The live test mounts a /proc in a staging root: unmount it before removing.
cleanup() {
	for m in "$work"/*/root/proc; do umount "$m" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT

# --- shell scripts: sh -n, busybox ash -n, shellcheck ---------------------
scripts="files/fastpath.init files/fastpath.hotplug files/fastpath.uci-defaults package/release.sh $(ls src/build/*.sh)"
for f in $scripts; do
	check "sh -n $f" sh -n "$f"
	case "$f" in
	files/*)
		if command -v busybox >/dev/null; then
			check "busybox ash -n $f (OpenWrt's shell)" busybox ash -n "$f"
		else
			skip "busybox ash -n $f" "busybox is missing (busybox-static)"
		fi
		;;
	esac
done
if command -v shellcheck >/dev/null; then
	# The init script is sourced by rc.common, which provides the procd_*
	# functions and $initscript; its own directive says so.
	for f in $scripts; do check "shellcheck $f" shellcheck -s sh "$f"; done
	check "shellcheck src/build/pkgtest/root" shellcheck -s sh \
		src/build/pkgtest/root/lib/functions.sh src/build/pkgtest/root/lib/functions/procd.sh \
		src/build/pkgtest/root/etc/rc.common src/build/pkgtest/root/usr/bin/ubus \
		src/build/pkgtest/root/sbin/uci src/build/pkgtest/root/usr/sbin/fastpath.stub
else
	bad "shellcheck" "not installed: install shellcheck (src/build/deps.sh does)"
fi

# --- the version grows from commit to commit (opkg, apk) -----------------
out=$(src/build/test-version.sh 2>&1)
rc=$?
printf '%s\n' "$out" | grep -v '^[0-9]* passed, [0-9]* failed$'
passed=$((passed + $(printf '%s\n' "$out" | grep -c '^ok ')))
failed=$((failed + $(printf '%s\n' "$out" | grep -c '^FAIL ')))
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | grep -q '^FAIL ' || bad "src/build/test-version.sh" "exited $rc"

# --- package format -------------------------------------------------------
version=$(cat dist/VERSION 2>/dev/null)
ipks=$(ls dist/*.ipk 2>/dev/null)
if [ -z "$ipks" ] || [ -z "$version" ]; then
	bad "packages" "no dist/*.ipk or dist/VERSION: run make ipk first"
	echo "$passed passed, $failed failed, $skipped skipped"
	exit 1
fi
# The recipes below give HEAD's version: make ipk must have built HEAD.
check "dist/VERSION $version is HEAD's (a commit since make ipk: run it again)" \
	test "${version##*-r}" = "$(sh package/release.sh)"

# field FILE NAME: a control field's value.
field() { sed -n "s/^$2: //p" "$1" | head -n 1; }

# elf_matches FILE ARCH: the ELF header is the one the architecture needs
# (class, byte order, machine).
elf_matches() {
	hex=$(od -A n -t x1 -N 20 "$1" | tr -d ' \n')
	got="$(echo "$hex" | cut -c1-8) class=$(echo "$hex" | cut -c9-10) data=$(echo "$hex" | cut -c11-12) machine=$(echo "$hex" | cut -c37-40)"
	case "$2" in
	mips_24kc) want="7f454c46 class=01 data=02 machine=0008" ;;
	mipsel_24kc) want="7f454c46 class=01 data=01 machine=0800" ;;
	aarch64_cortex-a53) want="7f454c46 class=02 data=01 machine=b700" ;;
	arm_cortex-a7_neon-vfpv4) want="7f454c46 class=01 data=01 machine=2800" ;;
	x86_64) want="7f454c46 class=02 data=01 machine=3e00" ;;
	*) want="a known architecture" ;;
	esac
	[ "$got" = "$want" ] || {
		echo "ELF header: $got; $2 needs $want"
		return 1
	}
}

# shellcheck disable=SC2016 # the scripts' own $ signs
postinst_want='#!/bin/sh
[ "${IPKG_NO_SCRIPT}" = "1" ] && exit 0
[ -s ${IPKG_INSTROOT}/lib/functions.sh ] || exit 0
. ${IPKG_INSTROOT}/lib/functions.sh
default_postinst $0 $@'
# shellcheck disable=SC2016
prerm_want='#!/bin/sh
[ -s ${IPKG_INSTROOT}/lib/functions.sh ] || exit 0
. ${IPKG_INSTROOT}/lib/functions.sh
default_prerm $0 $@'

# unpack IPK DIR: the outer archive as opkg reads it, into DIR/{control,data}.
unpack() {
	ipk=$1 dir=$2
	mkdir -p "$dir/outer" "$dir/control"
	magic=$(od -A n -t x1 -N 2 "$ipk" | tr -d ' ')
	[ "$magic" = 1f8b ] || {
		bad "$ipk is a gzipped tar" "starts with $magic (an ar archive starts with 213c): opkg rejects it"
		return 1
	}
	members=$(tar -tzf "$ipk" | tr '\n' ' ')
	if [ "$members" = "./debian-binary ./data.tar.gz ./control.tar.gz " ]; then
		ok "$ipk members are ./debian-binary ./data.tar.gz ./control.tar.gz"
	else
		bad "$ipk members" "got '$members'"
	fi
	tar -xzf "$ipk" -C "$dir/outer" || return 1
	check "$ipk debian-binary is 2.0" test "$(cat "$dir/outer/debian-binary")" = "2.0"
	owners=$(for t in "$ipk" "$dir/outer/control.tar.gz" "$dir/outer/data.tar.gz"; do
		tar --numeric-owner -tvzf "$t" | awk '$2 != "0/0" { print $NF " " $2 }'
	done)
	if [ -z "$owners" ]; then ok "$ipk every entry is owned by 0/0"; else bad "$ipk owners" "$owners"; fi
	tar -xzf "$dir/outer/control.tar.gz" -C "$dir/control"
}

# control_checks IPK DIR NAME ARCH: the control file says what it must.
control_checks() {
	ipk=$1 ctl=$2/control/control name=$3 arch=$4
	for f in Package Version Depends Source SourceName License Section SourceDateEpoch Maintainer Architecture Installed-Size Description; do
		[ -n "$(field "$ctl" "$f")" ] || bad "$ipk control field $f" "missing or empty"
	done
	check "$ipk control: Package $name" test "$(field "$ctl" Package)" = "$name"
	check "$ipk control: Version $version" test "$(field "$ctl" Version)" = "$version"
	check "$ipk control: Architecture $arch" test "$(field "$ctl" Architecture)" = "$arch"
	size=$(gzip -dc "$2/outer/data.tar.gz" | wc -c)
	check "$ipk control: Installed-Size is data.tar's size ($size)" test "$(field "$ctl" Installed-Size)" = "$size"
	epoch=$(field "$ctl" SourceDateEpoch)
	stamps=$(TZ=UTC tar --numeric-owner --full-time -tvzf "$2/outer/data.tar.gz" | awk '{ print $4 " " $5 }' | sort -u)
	want=$(TZ=UTC date -d "@$epoch" '+%Y-%m-%d %H:%M:%S' 2>/dev/null)
	check "$ipk data mtimes are SourceDateEpoch ($want UTC)" test "$stamps" = "$want"
	check "$ipk postinst is OpenWrt's" test "$(cat "$2/control/postinst")" = "$postinst_want"
	check "$ipk prerm is OpenWrt's" test "$(cat "$2/control/prerm")" = "$prerm_want"
	check "$ipk postinst and prerm are executable" test -x "$2/control/postinst" -a -x "$2/control/prerm"
}

# install_root IPK DIR: opkg's install into DIR/root: data files, the
# package's info files and status entry, and the stand-in OpenWrt root.
install_root() {
	ipk=$1 dir=$2 root=$2/root
	mkdir -p "$root/tmp" "$root/etc/rc.d" "$root/usr/lib/opkg/info"
	cp -R src/build/pkgtest/root/. "$root/"
	name=$(field "$dir/control/control" Package)
	tar -xzf "$dir/outer/data.tar.gz" -C "$root" --same-permissions
	tar -tzf "$dir/outer/data.tar.gz" | sed -n 's|^\./\(.*[^/]\)$|/\1|p' >"$root/usr/lib/opkg/info/$name.list"
	for f in control conffiles postinst prerm postinst-pkg; do
		[ ! -f "$dir/control/$f" ] || cp -p "$dir/control/$f" "$root/usr/lib/opkg/info/$name.$f"
	done
	{
		cat "$dir/control/control"
		echo "Status: install user installed"
		echo
	} >>"$root/usr/lib/opkg/status"
	: >"$root/tmp/calls.log"
}

# mode_is FILE MODE
mode_is() {
	got=$(stat -c %a "$1" 2>/dev/null) || {
		echo "$1 does not exist"
		return 1
	}
	[ "$got" = "$2" ] || {
		echo "$1 has mode $got"
		return 1
	}
}

calls() { cat "$1/tmp/calls.log"; }
: >"$work/none"

# --- fastpath, one per architecture ---------------------------------------
live_done=""
for ipk in $ipks; do
	base=$(basename "$ipk" .ipk)
	case "$base" in fastpath_*) ;; *) continue ;; esac
	arch=${base#fastpath_"${version}"_}
	dir=$work/$base root=$work/$base/root
	unpack "$ipk" "$dir" || continue
	control_checks "$ipk" "$dir" fastpath "$arch"
	depends=$(field "$dir/control/control" Depends)
	for dep in libc kmod-nft-offload kmod-nft-netdev kmod-nf-conntrack-netlink firewall4; do
		case ", $depends," in
		*", $dep,"*) ok "$ipk Depends has $dep" ;;
		*) bad "$ipk Depends has $dep" "Depends: $depends" ;;
		esac
	done
	check "$ipk conffiles is /etc/config/fastpath" test "$(cat "$dir/control/conffiles")" = "/etc/config/fastpath"

	install_root "$ipk" "$dir"
	while read -r conffile; do
		check "$ipk conffile $conffile is installed as a file" test -f "$root$conffile"
	done <"$dir/control/conffiles"
	check "$arch /usr/sbin/fastpath 0755" mode_is "$root/usr/sbin/fastpath" 755
	check "$arch /etc/init.d/fastpath 0755" mode_is "$root/etc/init.d/fastpath" 755
	check "$arch /etc/config/fastpath 0600" mode_is "$root/etc/config/fastpath" 600
	check "$arch /etc/hotplug.d/iface/30-fastpath 0644" mode_is "$root/etc/hotplug.d/iface/30-fastpath" 644
	check "$arch /etc/uci-defaults/90-fastpath 0755" mode_is "$root/etc/uci-defaults/90-fastpath" 755
	for f in fastpath.init:etc/init.d/fastpath fastpath.config:etc/config/fastpath \
		fastpath.hotplug:etc/hotplug.d/iface/30-fastpath fastpath.uci-defaults:etc/uci-defaults/90-fastpath; do
		check "$arch /${f#*:} is files/${f%%:*}" cmp "files/${f%%:*}" "$root/${f#*:}"
	done
	check "$arch binary is an ELF for $arch" elf_matches "$root/usr/sbin/fastpath" "$arch"
	qemu=$(qemu_user "$arch")
	[ "$qemu" = - ] && qemu=""
	if [ -n "$qemu" ] && ! command -v "$qemu" >/dev/null; then
		skip "$arch fastpath version" "$qemu is missing (install qemu-user-static)"
	else
		# shellcheck disable=SC2086 # $qemu is empty for x86_64
		got=$($qemu "$root/usr/sbin/fastpath" version 2>&1)
		case "$got" in
		*"$version"*) ok "$arch 'fastpath version' says $version" ;;
		*) bad "$arch 'fastpath version' says $version" "got: $(echo "$got" | head -n 3)" ;;
		esac
	fi

	# Offline, as an image build runs it: only the rc.d link may appear.
	export IPKG_INSTROOT="$root"
	check "$arch offline postinst exits 0" sh "$root/usr/lib/opkg/info/fastpath.postinst" configure
	check "$arch offline postinst enabled the service (/etc/rc.d/S20fastpath)" \
		test "$(readlink "$root/etc/rc.d/S20fastpath")" = "../init.d/fastpath"
	check "$arch offline postinst called default_postinst, nothing live" \
		test "$(calls "$root")" = "default_postinst fastpath root=set"
	: >"$root/tmp/calls.log"
	check "$arch offline prerm exits 0" sh "$root/usr/lib/opkg/info/fastpath.prerm" remove
	check "$arch offline prerm disabled the service" test ! -e "$root/etc/rc.d/S20fastpath"
	check "$arch offline prerm ran no cleanup" test "$(calls "$root")" = "default_prerm fastpath root=set"
	: >"$root/tmp/calls.log"
	IPKG_NO_SCRIPT=1 sh "$root/usr/lib/opkg/info/fastpath.postinst" configure
	check "$arch IPKG_NO_SCRIPT=1 postinst does nothing" test ! -s "$root/tmp/calls.log"
	unset IPKG_INSTROOT

	# Live, once: the scripts are the same in every architecture's package.
	[ -z "$live_done" ] || continue
	live_done=1
	if [ "$(id -u)" != 0 ] || ! command -v busybox >/dev/null || ! command -v chroot >/dev/null; then
		skip "live install scripts (chroot)" "need root, chroot and busybox (busybox-static)"
		continue
	fi
	mkdir -p "$root/bin" "$root/dev"
	mknod -m 666 "$root/dev/null" c 1 3
	cp "$(command -v busybox)" "$root/bin/busybox"
	chroot "$root" /bin/busybox --install -s /bin
	if ! chroot "$root" /bin/sh -c 'echo >/dev/null' 2>/dev/null; then
		skip "live install scripts (chroot)" "the staging root's /dev/null does not work (is $work on a nodev mount? set TMPDIR)"
		continue
	fi
	mv "$root/usr/sbin/fastpath" "$work/fastpath.real"
	cp -p "$root/usr/sbin/fastpath.stub" "$root/usr/sbin/fastpath"
	in_root() { chroot "$root" /bin/sh -c "$1"; }
	reset() {
		: >"$root/tmp/calls.log"
		rm -f "$root/tmp/ubus-fastpath" "$root/tmp/ubus-delay" "$root/tmp/procd-running"
	}

	# postinst on a router: uci-defaults run and are deleted, the service
	# is enabled and started.
	reset
	check "live postinst exits 0" in_root '/usr/lib/opkg/info/fastpath.postinst configure'
	check "live postinst ran and removed the uci-defaults script" test ! -e "$root/etc/uci-defaults/90-fastpath"
	check "live postinst kept the shipped config (no uci batch)" sh -c "! grep -q 'uci batch' '$root/tmp/calls.log'"
	check "live postinst enabled the service" test "$(readlink "$root/etc/rc.d/S20fastpath")" = "../init.d/fastpath"
	check "live start runs '/usr/sbin/fastpath daemon' under procd" \
		grep -qx "procd_set_param command /usr/sbin/fastpath daemon" "$root/tmp/calls.log"
	check "live start asks procd to respawn" grep -qx "procd_set_param respawn 3600 5 5" "$root/tmp/calls.log"
	check "live start logs stdout to logd" grep -qx "procd_set_param stdout 1" "$root/tmp/calls.log"
	check "live start logs stderr to logd" grep -qx "procd_set_param stderr 1" "$root/tmp/calls.log"
	check "live start sets GOMEMLIMIT from the router's RAM" \
		grep -qx "procd_set_param env GOMEMLIMIT=[0-9]*MiB" "$root/tmp/calls.log"
	# The rule: a fifth of MemTotal, 16 to 64 MiB; 128 MiB when unreadable.
	for case in 60000:16MiB 123456:24MiB 250000:48MiB 1000000:64MiB none:25MiB; do
		printf 'MemTotal:       %s kB\nMemFree:         1000 kB\n' "${case%%:*}" >"$work/meminfo"
		[ "${case%%:*}" != none ] || rm -f "$work/meminfo"
		check "GOMEMLIMIT for MemTotal ${case%%:*} kB is ${case#*:}" \
			test "$(sh -c '. ./files/fastpath.init; go_memlimit "$1"' sh "$work/meminfo")" = "${case#*:}"
	done
	check "live start sets reload triggers on firewall, network, fastpath" \
		grep -qx "procd_add_reload_trigger firewall network fastpath" "$root/tmp/calls.log"
	check "live start touched no flow (no fastpath command run)" sh -c "! grep -q '^fastpath ' '$root/tmp/calls.log'"

	# uci-defaults on an emptied config: the main section comes back.
	reset
	cp "files/fastpath.uci-defaults" "$root/etc/uci-defaults/90-fastpath"
	: >"$root/etc/config/fastpath"
	in_root 'cd /etc/uci-defaults && . ./90-fastpath'
	check "uci-defaults adds the main section to an emptied config" \
		grep -qx "uci batch: set fastpath.main=fastpath" "$root/tmp/calls.log"
	cp "files/fastpath.config" "$root/etc/config/fastpath"
	# With banIP and the CrowdSec bouncer installed, their block lists are
	# offered, off; without them nothing is added (checked above).
	reset
	cp "files/fastpath.uci-defaults" "$root/etc/uci-defaults/90-fastpath"
	: >"$root/etc/config/banip"
	mkdir -p "$root/etc/init.d" && printf '#!/bin/sh\n' >"$root/etc/init.d/crowdsec-firewall-bouncer" && chmod 755 "$root/etc/init.d/crowdsec-firewall-bouncer"
	in_root 'cd /etc/uci-defaults && . ./90-fastpath'
	check "uci-defaults offers banIP's sets, off" sh -c "grep -qx 'uci batch: set fastpath.banip.type=banip' '$root/tmp/calls.log' && grep -qx 'uci batch: set fastpath.banip.enabled=0' '$root/tmp/calls.log'"
	check "uci-defaults offers the CrowdSec bouncer's sets, off" sh -c "grep -qx 'uci batch: set fastpath.crowdsec.type=crowdsec' '$root/tmp/calls.log' && grep -qx 'uci batch: set fastpath.crowdsec.enabled=0' '$root/tmp/calls.log'"
	rm -f "$root/etc/config/banip" "$root/etc/init.d/crowdsec-firewall-bouncer"
	# Enabling is default_postinst's, and an upgrade keeps a service the
	# user disabled disabled.
	reset
	rm -f "$root/etc/rc.d/S20fastpath"
	cp "files/fastpath.uci-defaults" "$root/etc/uci-defaults/90-fastpath"
	in_root 'cd /etc/uci-defaults && . ./90-fastpath'
	check "uci-defaults leaves enabling the service to default_postinst" test ! -e "$root/etc/rc.d/S20fastpath"
	cp "files/fastpath.uci-defaults" "$root/etc/uci-defaults/90-fastpath"
	check "live postinst on upgrade exits 0" in_root 'PKG_UPGRADE=1 /usr/lib/opkg/info/fastpath.postinst configure'
	check "live postinst on upgrade leaves a disabled service disabled" test ! -e "$root/etc/rc.d/S20fastpath"
	in_root '/etc/init.d/fastpath enable'

	# reload and hotplug hand events over as a SIGHUP to the pid the daemon
	# publishes, never waiting on it; the stand-in daemon records each one.
	# The scripts read /proc/PID/cmdline: the staging root gets a /proc.
	mkdir -p "$root/proc"
	mount -t proc proc "$root/proc"
	pidfile=$root/var/run/fastpath/daemon.pid
	start_daemon() {
		rm -f "$pidfile"
		# A shell cannot trap a signal ignored when it started (nohup does
		# that to SIGHUP); procd starts the daemon with none ignored.
		env --default-signal=HUP chroot "$root" /bin/sh -c '/usr/sbin/fastpath daemon </dev/null >/dev/null 2>&1 &'
		for _ in $(seq 100); do [ -s "$pidfile" ] && break; sleep 0.1; done
		daemon_pid=$(cat "$pidfile" 2>/dev/null)
	}
	# got_sighup: the stand-in daemon recorded a SIGHUP (within 10 s).
	got_sighup() {
		for _ in $(seq 100); do
			grep -qx "fastpath daemon: SIGHUP" "$root/tmp/calls.log" && return 0
			sleep 0.1
		done
		return 1
	}
	no_ubus() { ! grep -q '^ubus ' "$root/tmp/calls.log"; }
	start_daemon
	check "the stand-in daemon published its pid" test -n "$daemon_pid"

	reset
	touch "$root/tmp/ubus-fastpath"
	echo 30 >"$root/tmp/ubus-delay"
	out=$(in_root '/etc/init.d/fastpath reload' 2>&1)
	check "reload prints nothing" test -z "$out"
	check "reload hands over a SIGHUP" got_sighup
	check "reload does not wait on ubus (a busy daemon)" no_ubus
	for action in ifup ifdown ifupdate; do
		reset
		touch "$root/tmp/ubus-fastpath"
		echo 30 >"$root/tmp/ubus-delay"
		out=$(in_root "ACTION=$action INTERFACE=lan DEVICE=br-lan; . /etc/hotplug.d/iface/30-fastpath" 2>&1)
		check "hotplug $action prints nothing" test -z "$out"
		check "hotplug $action hands over a SIGHUP" got_sighup
		check "hotplug $action does not wait on ubus (a busy daemon)" no_ubus
	done
	reset
	in_root "ACTION=ifup-failed INTERFACE=wan; . /etc/hotplug.d/iface/30-fastpath"
	sleep 1
	check "hotplug ignores other actions" test ! -s "$root/tmp/calls.log"
	kill "$daemon_pid"
	# A crashed daemon's pid file: its pid is gone, or another process's.
	for _ in $(seq 100); do kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.1; done
	echo "$daemon_pid" >"$pidfile"
	reset
	out=$(in_root "ACTION=ifup INTERFACE=wan; . /etc/hotplug.d/iface/30-fastpath; /etc/init.d/fastpath reload" 2>&1)
	check "hotplug and reload without the daemon print nothing" test -z "$out"
	in_root 'exec sleep 300 </dev/null >/dev/null 2>&1 &'
	other=$(pgrep -n -x sleep)
	echo "$other" >"$pidfile"
	in_root "ACTION=ifup INTERFACE=wan; . /etc/hotplug.d/iface/30-fastpath; /etc/init.d/fastpath reload"
	check "hotplug and reload signal no other process a stale pid file names" kill -0 "$other"
	kill "$other" 2>/dev/null
	: >"$pidfile"
	umount "$root/proc"

	# stop leaves the kernel's state alone; disable stops, whatever procd
	# says about the daemon (asking needs jsonfilter), then cleans up.
	reset
	touch "$root/tmp/procd-running"
	in_root '/etc/init.d/fastpath stop'
	check "stop only stops the instance" test "$(calls "$root")" = "procd_kill fastpath "
	reset
	touch "$root/tmp/procd-running"
	in_root '/etc/init.d/fastpath disable'
	check "disable stops, then runs 'fastpath daemon --cleanup'" \
		test "$(calls "$root" | tr '\n' '|')" = "procd_kill fastpath |fastpath daemon --cleanup|"
	check "disable removes the rc.d link" test ! -e "$root/etc/rc.d/S20fastpath"
	in_root '/etc/init.d/fastpath enable'
	reset
	out=$(in_root '/etc/init.d/fastpath disable' 2>&1)
	check "disable of a stopped service prints nothing (no 'Command failed')" test -z "$out"
	check "disable of a stopped service stops it all the same (no procd_running, no jsonfilter), then cleans up" \
		test "$(calls "$root" | tr '\n' '|')" = "procd_kill fastpath |fastpath daemon --cleanup|"
	# Package removal: default_prerm disables (cleanup) and stops.
	in_root '/etc/init.d/fastpath enable'
	reset
	touch "$root/tmp/procd-running"
	check "live prerm exits 0" in_root '/usr/lib/opkg/info/fastpath.prerm remove'
	check "live prerm cleans up once" test "$(grep -c '^fastpath daemon --cleanup$' "$root/tmp/calls.log")" = 1
	reset
	touch "$root/tmp/procd-running"
	in_root 'PKG_UPGRADE=1 /usr/lib/opkg/info/fastpath.prerm upgrade'
	check "prerm on upgrade keeps fastpath's tables (no cleanup)" sh -c "! grep -q '^fastpath ' '$root/tmp/calls.log'"
done

# --- luci-app-fastpath ----------------------------------------------------
luci_ipk=$(ls dist/luci-app-fastpath_*_all.ipk 2>/dev/null)
if [ -z "$luci_ipk" ]; then
	skip "luci-app-fastpath" "no dist/luci-app-fastpath_*_all.ipk (luci-app/ has no htdocs/ and root/ yet)"
else
	dir=$work/luci root=$work/luci/root
	if unpack "$luci_ipk" "$dir"; then
		control_checks "$luci_ipk" "$dir" luci-app-fastpath all
		depends=$(field "$dir/control/control" Depends)
		for dep in libc luci-base fastpath; do
			case ", $depends," in
			*", $dep,"*) ok "$luci_ipk Depends has $dep" ;;
			*) bad "$luci_ipk Depends has $dep" "Depends: $depends" ;;
			esac
		done
		install_root "$luci_ipk" "$dir"
		check "luci: views land under /www/luci-static/resources" test -d "$root/www/luci-static/resources"
		check "luci: the rpcd ACL lands in /usr/share/rpcd/acl.d" test -f "$root/usr/share/rpcd/acl.d/luci-app-fastpath.json"
		check "luci: the menu lands in /usr/share/luci/menu.d" test -f "$root/usr/share/luci/menu.d/luci-app-fastpath.json"
		modes=$(cd "$root/www" && find . -type f ! -perm 644)
		check "luci: web files are 0644" test -z "$modes"
		export IPKG_INSTROOT="$root"
		check "luci: offline postinst exits 0" sh "$root/usr/lib/opkg/info/luci-app-fastpath.postinst" configure
		check "luci: offline postinst does nothing live" \
			test "$(calls "$root")" = "default_postinst luci-app-fastpath root=set"
		unset IPKG_INSTROOT
	fi
fi

# --- the recipes, in a stand-in SDK ----------------------------------------
# package/fastpath/Makefile and luci-app/Makefile run by make as the SDK runs
# them: through package/feeds/fastpath/<dir>, with the feed a src-link (a
# symlink to this checkout) and a src-git (a copy without .git, its release
# stamped as git archive stamps a tarball's), against stand-ins for
# rules.mk, package.mk, golang-package.mk and luci.mk
# (src/build/pkgtest/sdk) and the SDK's Go (1.23.12, as golang/host). What
# they build must be what make ipk built: the same version and control
# fields, the same files and modes, and for x86_64 (this machine, the
# stand-in's target) the same binary, byte for byte.

# sdk_field NAME INFO: a field of an info-NAME listing.
sdk_field() { printf '%s\n' "$2" | sed -n "s/^$1=//p"; }

# same_field DESC CONTROL FIELD INFO NAME: the control file's FIELD is the
# recipe's NAME.
same_field() {
	want=$(sdk_field "$5" "$4") got=$(field "$2" "$3")
	if [ -n "$want" ] && [ "$want" = "$got" ]; then
		ok "$1: $3 is the recipe's ($want)"
	else
		bad "$1: $3 is the recipe's" "recipe: '$want', make ipk: '$got'"
	fi
}

fp_ctl=$work/fastpath_${version}_x86_64/control/control
luci_ctl=$work/luci/control/control
sdk_go=$(GOTOOLCHAIN=go1.23.12 go env GOROOT 2>/dev/null)/bin/go
if ! command -v make >/dev/null; then
	bad "SDK recipes" "make is missing (src/build/deps.sh installs it)"
elif [ ! -x "$sdk_go" ]; then
	bad "SDK recipes" "Go 1.23.12 (the SDK's golang/host) is missing: run src/build/deps.sh"
elif [ ! -f "$fp_ctl" ] || [ ! -f "$luci_ctl" ]; then
	bad "SDK recipes" "need dist/fastpath_${version}_x86_64.ipk and dist/luci-app-fastpath_${version}_all.ipk: run make ipk"
else
	for style in src-link src-git; do
		sdk=$work/sdk-$style
		mkdir -p "$sdk/feeds/packages" "$sdk/feeds/luci" "$sdk/package/feeds/fastpath" "$sdk/staging_dir/hostpkg/bin"
		cp -R src/build/pkgtest/sdk/rules.mk src/build/pkgtest/sdk/include "$sdk/"
		cp -R src/build/pkgtest/sdk/feeds-packages/. "$sdk/feeds/packages/"
		cp -R src/build/pkgtest/sdk/feeds-luci/. "$sdk/feeds/luci/"
		ln -s "$sdk_go" "$sdk/staging_dir/hostpkg/bin/go"
		if [ "$style" = src-link ]; then
			ln -s "$(pwd)" "$sdk/feeds/fastpath"
		else
			mkdir -p "$sdk/feeds/fastpath"
			cp -R go.mod go.sum src files package luci-app "$sdk/feeds/fastpath/"
			git archive --worktree-attributes HEAD package/release-stamp | tar -xm -C "$sdk/feeds/fastpath"
		fi
		ln -s ../../../feeds/fastpath/package/fastpath "$sdk/package/feeds/fastpath/fastpath"
		ln -s ../../../feeds/fastpath/luci-app "$sdk/package/feeds/fastpath/luci-app"
		mk() { make --no-print-directory -C "$sdk/package/feeds/fastpath/fastpath" TOPDIR="$sdk" "$@"; }
		mk_luci() { make --no-print-directory -C "$sdk/package/feeds/fastpath/luci-app" TOPDIR="$sdk" "$@"; }

		info=$(mk info-fastpath 2>&1)
		for want in "VERSION=$version" "SECTION=net" "CATEGORY=Network" "PKG_BUILD_DEPENDS=golang/host" \
			"GO_PKG=github.com/fastpath-wrt/fastpath" "CONFFILES=/etc/config/fastpath" \
			"DEPENDS=@(aarch64||arm||i386||i686||loongarch64||mips||mips64||mips64el||mipsel||riscv64||x86_64) +kmod-nft-offload +kmod-nft-netdev +kmod-nf-conntrack-netlink +firewall4"; do
			case "$info" in
			*"$want"*) ok "$style fastpath recipe: $want" ;;
			*) bad "$style fastpath recipe: $want" "$info" ;;
			esac
		done
		for f in Version:VERSION Section:SECTION License:LICENSE Maintainer:MAINTAINER URL:URL; do
			same_field "$style fastpath recipe and make ipk" "$fp_ctl" "${f%%:*}" "$info" "${f#*:}"
		done
		# luci.mk appends PKG_RELEASE as "-" or "-r" depending on its age.
		for sep in - -r; do
			info=$(mk_luci info-luci-app-fastpath LUCI_RELEASE_SEP="$sep" 2>&1)
			for f in Version:VERSION Section:SECTION License:LICENSE Maintainer:MAINTAINER URL:URL Architecture:PKGARCH; do
				same_field "$style luci recipe (luci.mk appending '${sep}RELEASE') and make ipk" \
					"$luci_ctl" "${f%%:*}" "$info" "${f#*:}"
			done
		done

		build=$sdk/build_dir/fastpath-$(sed -n 's/^FASTPATH_VERSION:=//p' package/version.mk)
		check "$style recipe: Build/Prepare copies go.mod, go.sum and src/" mk prepare
		check "$style recipe: the build dir has go.mod and the command's source" \
			test -f "$build/go.mod" -a -f "$build/go.sum" -a -d "$build/src/cmd/fastpath"

		if [ "$style" = src-git ]; then
			# A changed file below src/, files/ or go.mod is a new prepare
			# stamp, so OpenWrt builds again; one elsewhere in the repository
			# (luci-app/) is not fastpath's.
			feed=$sdk/feeds/fastpath
			for f in src/version/version.go files/fastpath.init go.mod luci-app/Makefile; do
				before=$(sdk_field STAMP_PREPARED "$(mk info-fastpath 2>&1)")
				touch -d '2001-02-03 04:05:06' "$feed/$f"
				after=$(sdk_field STAMP_PREPARED "$(mk info-fastpath 2>&1)")
				case "$f" in
				luci-app/*) check "$style recipe: an edit to $f does not rebuild fastpath" test "$before" = "$after" ;;
				*) check "$style recipe: an edit to $f rebuilds fastpath (new prepare stamp)" \
					test -n "$before" -a "$before" != "$after" ;;
				esac
			done
			continue
		fi

		check "$style recipe: the prepared tree builds" mk compile \
			GO_BUILD_CACHE_DIR="$(go env GOCACHE)" GO_MOD_CACHE_DIR="$(go env GOMODCACHE)"
		check "$style recipe: Package/fastpath/install runs" mk install-fastpath
		ipkg=$sdk/build_dir/ipkg/fastpath
		got=$("$ipkg/usr/sbin/fastpath" version 2>&1)
		case "$got" in
		*"$version"*) ok "$style recipe: the binary's version is $version" ;;
		*) bad "$style recipe: the binary's version is $version" "got: $got" ;;
		esac
		check "$style recipe: the binary is static (no ELF interpreter)" \
			sh -c "! readelf -lW '$ipkg/usr/sbin/fastpath' | grep -q 'Requesting program interpreter'"
		check "$style recipe: the binary is make ipk's x86_64 binary, byte for byte" \
			cmp "$ipkg/usr/sbin/fastpath" dist/x86_64/fastpath
		recipe_files=$(cd "$ipkg" && find . ! -type d -printf '%m %p\n' | sort)
		ipk_files=$(tar -tvzf "$work/fastpath_${version}_x86_64/outer/data.tar.gz" 2>/dev/null |
			awk '$1 !~ /^d/ { print $1 " " $NF }' | sort)
		ipk_files=$(echo "$ipk_files" | awk '{
			m = 0; p = substr($1, 2)
			for (i = 0; i < 9; i++) if (substr(p, i + 1, 1) != "-") m += 2 ^ (8 - i)
			printf "%o %s\n", m, $2 }')
		if [ "$recipe_files" = "$ipk_files" ]; then
			ok "the SDK recipe and ipk.sh install the same files with the same modes"
		else
			bad "the SDK recipe and ipk.sh install the same files with the same modes" \
				"recipe: $(echo "$recipe_files" | tr '\n' ';') ipk: $(echo "$ipk_files" | tr '\n' ';')"
		fi
	done
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
