# Stand-in for OpenWrt's /lib/functions.sh (install test): default_postinst
# and default_prerm with base-files' offline and live steps. Sourced.
# shellcheck shell=sh disable=SC1090,SC2013 # as base-files' own

record() {
	echo "$*" >>"${IPKG_INSTROOT}/tmp/calls.log"
}

# As base-files' (OpenWrt 24.10): live, the package's own uci-defaults
# scripts run first (one that exits 0 is deleted), then its postinst-pkg,
# then every init script it installs is enabled, except on an upgrade, and
# started; offline only the rc.d links are made.
default_postinst() {
	root="${IPKG_INSTROOT}"
	pkgname=$(basename "${1%.*}")
	list="$root/usr/lib/opkg/info/$pkgname.list"
	record "default_postinst $pkgname root=${root:+set}"
	if [ -z "$root" ] && grep -q -s "^/etc/uci-defaults/" "$list"; then
		for i in $(grep -s "^/etc/uci-defaults/" "$list"); do
			([ -f "$i" ] && cd "$(dirname "$i")" && . "$i") && rm -f "$i"
		done
		uci commit
	fi
	if [ -f "$root/usr/lib/opkg/info/$pkgname.postinst-pkg" ]; then
		(. "$root/usr/lib/opkg/info/$pkgname.postinst-pkg")
	fi
	for i in $(grep -s "^/etc/init.d/" "$list"); do
		if [ -n "$root" ]; then
			/bin/sh "$root/etc/rc.common" "$root$i" enable
		else
			[ "$PKG_UPGRADE" = 1 ] || "$i" enable
			"$i" start
		fi
	done
	return 0
}

default_prerm() {
	root="${IPKG_INSTROOT}"
	pkgname=$(basename "${1%.*}")
	record "default_prerm $pkgname root=${root:+set}"
	for i in $(grep -s "^/etc/init.d/" "$root/usr/lib/opkg/info/$pkgname.list"); do
		if [ -n "$root" ]; then
			/bin/sh "$root/etc/rc.common" "$root$i" disable
		else
			[ "$PKG_UPGRADE" = 1 ] || "$i" disable
			"$i" stop || true
		fi
	done
	return 0
}
