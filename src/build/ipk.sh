#!/bin/sh
# Builds OpenWrt .ipk packages from the cross-built binaries (cross.sh),
# without the SDK, byte for byte in the shape of OpenWrt's scripts/ipkg-build:
# a gzipped tar (not an ar archive) of ./debian-binary, ./data.tar.gz and
# ./control.tar.gz; owners root:root, mtimes the last commit's time.
#
#   dist/fastpath_<version>_<pkgarch>.ipk    one per built architecture
#   dist/luci-app-fastpath_<version>_all.ipk when luci-app/ has htdocs/ and root/
#
# Control fields come from the package recipes (package/fastpath/Makefile,
# luci-app/Makefile), so the SDK's packages and these say the same.
# Fails when the mips_24kc binary or its ipk is over the flash budget.
# Env: SOURCE_DATE_EPOCH (default: the last commit's time).
set -eu
cd "$(dirname "$0")/../.."

die() {
	echo "ipk: $*" >&2
	exit 1
}

# shellcheck source=/dev/null # arches.sh is checked on its own
. src/build/arches.sh

[ -s dist/VERSION ] || die "dist/VERSION is missing: run src/build/cross.sh (make cross) first"
version=$(cat dist/VERSION)
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
arches=${*:-$ARCHES}

# Budget for a router with 16 MiB of flash such as the Archer C7
# (mips_24kc): 4 MiB for the binary, 1.6 MiB for its package. Flash sizes
# are binary megabytes, and so are these.
max_bin=$((4 * 1024 * 1024))
max_ipk=$((16 * 1024 * 1024 / 10))

# Packages of an older version would be installed by test-pkg too.
rm -f dist/*.ipk
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# make_var FILE NAME: the value of the first 'NAME:=' line in a Makefile,
# with backslash-continued lines joined as make joins them.
make_var() {
	awk -v name="$2" '
		index($0, name ":=") == 1 && !found { found = 1; value = substr($0, length(name) + 3); $0 = "" }
		found { line = $0; sub(/^[ \t]+/, "", line); value = value line }
		found { if (value ~ /\\$/) { sub(/[ \t]*\\$/, " ", value); next } print value; exit }
	' "$1"
}

# make_define FILE NAME: the lines of 'define NAME' ... 'endef'.
make_define() {
	awk -v name="$2" '
		$0 == "define " name { inside = 1; next }
		inside && $0 == "endef" { exit }
		inside { print }
	' "$1"
}

# depends_field DEPENDS: OpenWrt's Depends field from a recipe's DEPENDS:
# '+pkg' and 'pkg' are packages; '@COND' and $(VAR) (build-time conditions
# such as GO_ARCH_DEPENDS) are not. Every package depends on libc.
depends_field() {
	out=libc
	for dep in $1; do
		case "$dep" in
		"\$("* | @* | +@*) continue ;;
		esac
		out="$out, ${dep#+}"
	done
	echo "$out"
}

# description_field TEXT: 'Description:' as package-pack.mk writes it.
description_field() {
	printf 'Description: '
	printf '%s\n' "$1" | sed -e 's,^[[:space:]]*, ,g'
}

# write_scripts DIR: postinst and prerm exactly as package-pack.mk generates
# them; a package's own steps go to postinst-pkg, run by default_postinst.
write_scripts() {
	# shellcheck disable=SC2016 # the $ are for the router's shell
	printf '%s\n' '#!/bin/sh' \
		'[ "${IPKG_NO_SCRIPT}" = "1" ] && exit 0' \
		'[ -s ${IPKG_INSTROOT}/lib/functions.sh ] || exit 0' \
		'. ${IPKG_INSTROOT}/lib/functions.sh' \
		'default_postinst $0 $@' >"$1/postinst"
	# shellcheck disable=SC2016
	printf '%s\n' '#!/bin/sh' \
		'[ -s ${IPKG_INSTROOT}/lib/functions.sh ] || exit 0' \
		'. ${IPKG_INSTROOT}/lib/functions.sh' \
		'default_prerm $0 $@' >"$1/prerm"
	chmod 0755 "$1/postinst" "$1/prerm"
}

# pack NAME ARCH ROOT CONTROL: dist/NAME_VERSION_ARCH.ipk from a data root
# and a control directory; sets Installed-Size as ipkg-build does.
pack() {
	out="dist/$1_${version}_$2.ipk"
	chmod 0755 "$3" "$4"
	set -- "$3" "$4" "$out" --format=gnu --numeric-owner --owner=0 --group=0 --sort=name --mtime="@$epoch"
	root=$1 control=$2 out=$3
	shift 3
	(cd "$root" && tar "$@" -cf - .) | gzip -n >"$work/data.tar.gz"
	size=$(gzip -dc "$work/data.tar.gz" | wc -c)
	sed -i -e "s/^Installed-Size: .*/Installed-Size: $size/" "$control/control"
	(cd "$control" && tar "$@" -cf - .) | gzip -n >"$work/control.tar.gz"
	echo "2.0" >"$work/debian-binary"
	(cd "$work" && tar "$@" -cf - ./debian-binary ./data.tar.gz ./control.tar.gz) | gzip -n >"$out"
	rm -f "$work/data.tar.gz" "$work/control.tar.gz" "$work/debian-binary"
	printf 'ipk: %-48s %9d bytes (installed %d)\n' "$out" "$(wc -c <"$out")" "$size"
}

# --- fastpath, one per architecture ---------------------------------------
recipe=package/fastpath/Makefile
fp_depends=$(depends_field "$(make_define "$recipe" Package/fastpath | sed -n 's/^[[:space:]]*DEPENDS:=//p')")
fp_section=$(make_define "$recipe" Package/fastpath | sed -n 's/^[[:space:]]*SECTION:=//p')
fp_url=$(make_define "$recipe" Package/fastpath | sed -n 's/^[[:space:]]*URL:=//p')
fp_license=$(make_var "$recipe" PKG_LICENSE)
fp_maintainer=$(make_var "$recipe" PKG_MAINTAINER)
fp_description=$(make_define "$recipe" Package/fastpath/description)
fp_conffiles=$(make_define "$recipe" Package/fastpath/conffiles)
for field in fp_depends fp_section fp_license fp_maintainer fp_description fp_conffiles; do
	eval "value=\$$field"
	[ -n "$value" ] || die "$recipe: could not read ${field#fp_} (check the recipe's layout)"
done

for arch in $arches; do
	bin="dist/$arch/fastpath"
	[ -x "$bin" ] || die "$bin is missing: run src/build/cross.sh $arch first"
	root="$work/root-$arch" control="$work/control-$arch"
	mkdir -p "$root" "$control"
	install -d -m 0755 "$root/usr/sbin" "$root/etc/init.d" "$root/etc/config" \
		"$root/etc/hotplug.d/iface" "$root/etc/uci-defaults"
	# Modes as the recipe's INSTALL_BIN (0755), INSTALL_CONF (0600) and
	# INSTALL_DATA (0644) give them.
	install -m 0755 "$bin" "$root/usr/sbin/fastpath"
	install -m 0755 files/fastpath.init "$root/etc/init.d/fastpath"
	install -m 0600 files/fastpath.config "$root/etc/config/fastpath"
	install -m 0644 files/fastpath.hotplug "$root/etc/hotplug.d/iface/30-fastpath"
	install -m 0755 files/fastpath.uci-defaults "$root/etc/uci-defaults/90-fastpath"
	{
		echo "Package: fastpath"
		echo "Version: $version"
		echo "Depends: $fp_depends"
		echo "Source: feeds/fastpath/package/fastpath"
		echo "SourceName: fastpath"
		echo "License: $fp_license"
		echo "Section: $fp_section"
		echo "SourceDateEpoch: $epoch"
		[ -z "$fp_url" ] || echo "URL: $fp_url"
		echo "Maintainer: $fp_maintainer"
		echo "Architecture: $arch"
		echo "Installed-Size: 0"
		description_field "$fp_description"
	} >"$control/control"
	printf '%s\n' "$fp_conffiles" >"$control/conffiles"
	chmod 0644 "$control/control" "$control/conffiles"
	write_scripts "$control"
	pack fastpath "$arch" "$root" "$control"
done

# --- luci-app-fastpath (architecture all) ---------------------------------
luci="luci-app/Makefile"
if [ ! -d luci-app/htdocs ] || [ ! -d luci-app/root ] || [ ! -f "$luci" ]; then
	echo "ipk: skipping luci-app-fastpath: luci-app/ has no Makefile, htdocs/ and root/ yet"
else
	root="$work/root-luci" control="$work/control-luci"
	mkdir -p "$root/www" "$control"
	# As luci.mk: htdocs/ to /www, root/ to /, modes kept from the tree.
	cp -R --preserve=mode luci-app/htdocs/. "$root/www/"
	cp -R --preserve=mode luci-app/root/. "$root/"
	# Modes as the tree has them, but never by the checkout's umask.
	find "$root" -type d -exec chmod 0755 {} +
	find "$root" -type f -perm /111 -exec chmod 0755 {} +
	find "$root" -type f ! -perm /111 -exec chmod 0644 {} +
	luci_description=$(make_var "$luci" LUCI_DESCRIPTION)
	luci_title=$(make_var "$luci" LUCI_TITLE)
	# luci.mk takes URL and Maintainer from LUCI_URL and LUCI_MAINTAINER
	# (its own defaults otherwise), never from PKG_MAINTAINER.
	luci_url=$(make_var "$luci" LUCI_URL)
	luci_maintainer=$(make_var "$luci" LUCI_MAINTAINER)
	luci_license=$(make_var "$luci" PKG_LICENSE)
	for field in luci_title luci_url luci_maintainer luci_license; do
		eval "value=\$$field"
		[ -n "$value" ] || die "$luci: could not read ${field#luci_} (check the recipe's layout)"
	done
	{
		echo "Package: luci-app-fastpath"
		echo "Version: $version"
		echo "Depends: $(depends_field "$(make_var "$luci" LUCI_DEPENDS)")"
		echo "Source: feeds/fastpath/luci-app"
		echo "SourceName: luci-app-fastpath"
		echo "License: $luci_license"
		echo "Section: luci"
		echo "SourceDateEpoch: $epoch"
		echo "URL: $luci_url"
		echo "Maintainer: $luci_maintainer"
		echo "Architecture: all"
		echo "Installed-Size: 0"
		description_field "${luci_description:-$luci_title}"
	} >"$control/control"
	chmod 0644 "$control/control"
	write_scripts "$control"
	# luci.mk's postinst: drop LuCI's caches and let rpcd load the new ACL.
	# shellcheck disable=SC2016
	printf '%s\n' '#!/bin/sh' \
		'[ -n "${IPKG_INSTROOT}" ] || { rm -f /tmp/luci-indexcache.*' \
		'	rm -rf /tmp/luci-modulecache/' \
		'	killall -HUP rpcd 2>/dev/null' \
		'	exit 0' \
		'}' >"$control/postinst-pkg"
	chmod 0755 "$control/postinst-pkg"
	pack luci-app-fastpath all "$root" "$control"
fi

# --- the flash budget (mips_24kc: Archer C7, 16 MB flash) -----------------
if [ -f dist/mips_24kc/fastpath ]; then
	bin_size=$(wc -c <dist/mips_24kc/fastpath)
	ipk_size=$(wc -c <"dist/fastpath_${version}_mips_24kc.ipk")
	echo "ipk: budget mips_24kc: binary $bin_size of $max_bin bytes, ipk $ipk_size of $max_ipk bytes"
	[ "$bin_size" -le "$max_bin" ] || die "OVER BUDGET: dist/mips_24kc/fastpath is $bin_size bytes, the limit is $max_bin: drop dependencies or features"
	[ "$ipk_size" -le "$max_ipk" ] || die "OVER BUDGET: the mips_24kc ipk is $ipk_size bytes, the limit is $max_ipk: drop dependencies or features"
fi
