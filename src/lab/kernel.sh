# shellcheck shell=bash
# Kernel resolution and caching for the lab: finds the newest Debian kernel of
# a series in the package lists, downloads and unpacks it once, and tells the
# runner where its vmlinuz and modules are. Sourced by src/lab/lab.
#
# Series "6.12": bookworm's linux-image-6.12.*+deb12-amd64 (the full flavour;
# -cloud- lacks 9p). Series "7": sid's linux-binary-7.* + linux-modules-7.*.
# Series "5.10": bullseye's linux-image-5.10.0-*-amd64, the kernel OpenWrt
# 22.03 ships, for what must run on old kernels (the XDP cut's verifier).
# sid and bullseye are fetched through private sources lists built from the
# URI this machine already uses for bookworm, so the machine's own apt
# sources never change.

LAB_CACHE=${FASTPATH_LAB_CACHE:-/var/cache/fastpath-lab}

# lab_debian_uri prints the first archive URI configured for bookworm (not
# -security), from one-line sources.list files or deb822 .sources files.
lab_debian_uri() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		awk '$1=="deb" { for (i=2;i<=NF;i++) if ($i !~ /^\[/ && $i !~ /\]$/ && $i ~ /:\/\//) { if ($(i+1)=="bookworm") { print $i; exit } } }' "$f"
	done | head -n1 | grep . && return 0
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk 'BEGIN{RS=""; FS="\n"}
			{ uri=""; suites=""
			  for (i=1;i<=NF;i++) {
				if ($i ~ /^URIs:/) { sub(/^URIs:[ \t]*/, "", $i); split($i, u, /[ \t]+/); uri=u[1] }
				if ($i ~ /^Suites:/) { suites=" " $i " " }
			  }
			  if (uri != "" && suites ~ /[ \t]bookworm[ \t]/) { print uri; exit } }' "$f"
	done | head -n1 | grep .
}

# lab_suite_apt SUITE TOOL ARGS runs apt-get/apt-cache against the private
# list of SUITE (sid, bullseye).
lab_suite_apt() {
	local suite=$1 tool=$2; shift 2
	"$tool" -o Dir::Etc::sourcelist="$LAB_CACHE/$suite/sources.list" \
		-o Dir::Etc::sourceparts=- \
		-o Dir::State::Lists="$LAB_CACHE/$suite/lists" \
		-o Dir::Cache="$LAB_CACHE/$suite/cache" \
		-o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root "$@"
}

lab_sid_apt() { lab_suite_apt sid "$@"; }

# lab_suite_update SUITE refreshes the private lists of SUITE at most once a
# day.
lab_suite_update() {
	local suite=$1 uri stamp=$LAB_CACHE/$1/updated
	mkdir -p "$LAB_CACHE/$suite/lists/partial" "$LAB_CACHE/$suite/cache/archives/partial"
	if [ -f "$stamp" ] && [ -z "$(find "$stamp" -mmin +1440)" ]; then
		return 0
	fi
	uri=$(lab_debian_uri) || { echo "lab: no bookworm URI in /etc/apt/sources.list or /etc/apt/sources.list.d/: cannot build the $suite list" >&2; return 1; }
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main" > "$LAB_CACHE/$suite/sources.list"
	echo "lab: refreshing $suite package lists from $uri" >&2
	lab_suite_apt "$suite" apt-get -qq update >&2 || { echo "lab: apt-get update of the $suite list failed" >&2; return 1; }
	touch "$stamp"
}

lab_sid_update() { lab_suite_update sid; }

# lab_resolve SERIES prints "version pkg..." for the newest kernel of SERIES.
# The answer is cached for a day in $LAB_CACHE/resolved-SERIES.
lab_resolve() {
	local series=$1 memo=$LAB_CACHE/resolved-$1 ver
	mkdir -p "$LAB_CACHE"
	if [ -s "$memo" ] && [ -z "$(find "$memo" -mmin +1440)" ]; then
		cat "$memo"; return 0
	fi
	case $series in
	6.12)
		if [ ! -f "$memo" ] && [ -z "$(apt-cache search --names-only '^linux-image-6\.12\.' 2>/dev/null | head -n1)" ]; then
			apt-get -qq update >&2 || true
		fi
		ver=$(apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb12-amd64$' |
			awk '{ sub(/^linux-image-/, "", $1); print $1 }' | sort -V | tail -n1)
		[ -n "$ver" ] || { echo "lab: no linux-image-6.12.*+deb12-amd64 in the package lists (apt-get update?)" >&2; return 1; }
		echo "$ver linux-image-$ver" > "$memo"
		;;
	7)
		lab_sid_update || return 1
		ver=$(lab_sid_apt apt-cache search --names-only '^linux-binary-7\.[0-9.]+\+[a-z0-9]+-amd64$' |
			awk '{ sub(/^linux-binary-/, "", $1); print $1 }' | sort -V | tail -n1)
		[ -n "$ver" ] || { echo "lab: no linux-binary-7.*-amd64 in sid's package lists" >&2; return 1; }
		echo "$ver linux-binary-$ver linux-modules-$ver" > "$memo"
		;;
	5.10)
		lab_suite_update bullseye || return 1
		ver=$(lab_suite_apt bullseye apt-cache search --names-only '^linux-image-5\.10\.0-[0-9]+-amd64$' |
			awk '{ sub(/^linux-image-/, "", $1); print $1 }' | sort -V | tail -n1)
		[ -n "$ver" ] || { echo "lab: no linux-image-5.10.0-*-amd64 in bullseye's package lists" >&2; return 1; }
		echo "$ver linux-image-$ver" > "$memo"
		;;
	*) echo "lab: unknown kernel series '$series' (use 5.10, 6.12 or 7)" >&2; return 1 ;;
	esac
	cat "$memo"
}

# lab_kernel SERIES makes sure the kernel is unpacked and prints its directory,
# which holds boot/vmlinuz-VER and lib/modules/VER (or usr/lib/modules/VER).
lab_kernel() {
	local series=$1 line ver pkgs dir deb p
	line=$(lab_resolve "$series") || return 1
	ver=${line%% *}; pkgs=${line#* }
	dir=$LAB_CACHE/kernels/$ver
	if [ -f "$dir/.unpacked" ]; then echo "$dir"; return 0; fi
	mkdir -p "$LAB_CACHE/debs" "$dir.tmp"
	for p in $pkgs; do
		# (no match is the normal case before a download: not an error under set -e and pipefail)
		deb=$(ls "$LAB_CACHE/debs/${p}_"*.deb 2>/dev/null | head -n1 || true)
		if [ -z "$deb" ]; then
			echo "lab: downloading $p" >&2
			if [ "$series" = 7 ]; then
				(cd "$LAB_CACHE/debs" && lab_sid_apt apt-get -qq download "$p") >&2 || { echo "lab: cannot download $p from sid" >&2; return 1; }
			elif [ "$series" = 5.10 ]; then
				(cd "$LAB_CACHE/debs" && lab_suite_apt bullseye apt-get -qq download "$p") >&2 || { echo "lab: cannot download $p from bullseye" >&2; return 1; }
			else
				(cd "$LAB_CACHE/debs" && apt-get -qq -o APT::Sandbox::User=root download "$p") >&2 || { echo "lab: cannot download $p" >&2; return 1; }
			fi
			deb=$(ls "$LAB_CACHE/debs/${p}_"*.deb | head -n1)
		fi
		dpkg-deb -x "$deb" "$dir.tmp" || return 1
	done
	# sid ships modules (and vmlinuz) under usr/lib/modules; give every
	# kernel the same shape and the modules.dep that depmod would write.
	if [ -d "$dir.tmp/usr/lib/modules/$ver" ] && [ ! -d "$dir.tmp/lib/modules/$ver" ]; then
		mkdir -p "$dir.tmp/lib/modules"
		mv "$dir.tmp/usr/lib/modules/$ver" "$dir.tmp/lib/modules/$ver"
	fi
	mkdir -p "$dir.tmp/boot"
	if [ ! -f "$dir.tmp/boot/vmlinuz-$ver" ] && [ -f "$dir.tmp/lib/modules/$ver/vmlinuz" ]; then
		mv "$dir.tmp/lib/modules/$ver/vmlinuz" "$dir.tmp/boot/vmlinuz-$ver"
	fi
	[ -f "$dir.tmp/boot/vmlinuz-$ver" ] || { echo "lab: no vmlinuz in $pkgs" >&2; return 1; }
	depmod -b "$dir.tmp" "$ver" || { echo "lab: depmod failed for $ver" >&2; return 1; }
	echo "$ver" > "$dir.tmp/version"
	rm -rf "$dir"; mv "$dir.tmp" "$dir"; touch "$dir/.unpacked"
	echo "$dir"
}

