# Stand-in for OpenWrt's /lib/functions.sh (install test): default_postinst
# and default_prerm with base-files' offline and live steps. Sourced.
# shellcheck shell=sh disable=SC1090,SC2013 # as base-files' own

record() {
	echo "$*" >>"${IPKG_INSTROOT}/tmp/calls.log"
}

# As base-files' /lib/functions/system.sh: a script that exits 0 is deleted.
uci_apply_defaults() {
	(
		cd /etc/uci-defaults || return 0
		files="$(ls)"
		[ -z "$files" ] && return 0
		for file in $files; do
			(. "./$(basename "$file")") && rm -f "$file"
		done
		uci commit
	)
}

default_postinst() {
	root="${IPKG_INSTROOT}"
	pkgname=$(basename "${1%.*}")
	list="$root/usr/lib/opkg/info/$pkgname.list"
	record "default_postinst $pkgname root=${root:+set}"
	if [ -f "$root/usr/lib/opkg/info/$pkgname.postinst-pkg" ]; then
		(. "$root/usr/lib/opkg/info/$pkgname.postinst-pkg")
	fi
	if [ -z "$root" ] && grep -q -s "^/etc/uci-defaults/" "$list"; then
		uci_apply_defaults
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
