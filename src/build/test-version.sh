#!/bin/sh
# The package version grows from commit to commit, as opkg and apk order it.
# In a temporary clone of this repository (with this tree's package/version.mk
# and release.sh committed in it), the version is computed at a commit and at
# the next one, a second later, as the SDK's recipes compute it (make,
# package/version.mk) and as make ipk does (package/release.sh); then the
# real opkg and apk-tools v3 of openwrt-userland (src/build/openwrt-userland.sh)
# must order the second above the first and above the builds handed out
# before, and apk version --check must accept both. A depth-1 clone, a git
# archive and a dirty tree must give the commit's version too.
#
# Prints a line per check and 'N passed, N failed'; test-pkg.sh runs it.
set -u
cd "$(dirname "$0")/../.." || exit 1
passed=0 failed=0
ok() {
	passed=$((passed + 1))
	echo "ok    version: $1"
}
bad() {
	failed=$((failed + 1))
	echo "FAIL  version: $1${2:+: $2}"
}
# is DESC GOT WANT
is() {
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "got '$2', want '$3'"; fi
}
finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

userland=$(src/build/openwrt-userland.sh) || {
	bad "openwrt-userland" "needed for the real opkg and apk"
	finish
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
apk() { "$userland/root/usr/bin/apk" "$@"; }
# opkg reads a configuration before any command: one that points it here.
printf 'dest root %s/opkg\nlists_dir ext %s/opkg/lists\n' "$work" "$work" >"$work/opkg.conf"
opkg() { LD_LIBRARY_PATH="$userland/root/usr/lib" "$userland/root/usr/bin/opkg" -f "$work/opkg.conf" "$@"; }

# version_make DIR: FASTPATH_VERSION-rFASTPATH_RELEASE as a recipe includes it.
version_make() {
	# shellcheck disable=SC2016 # make's $(...)
	printf 'include %s/package/version.mk\nall: ; @echo $(FASTPATH_VERSION)-r$(FASTPATH_RELEASE)\n' "$1" |
		make -s --no-print-directory -C "$work" -f - 2>"$work/make.err"
}
# version_ipk DIR: the version as src/build/cross.sh makes it.
version_ipk() {
	echo "$(sed -n 's/^FASTPATH_VERSION:=//p' "$1/package/version.mk")-r$(sh "$1/package/release.sh" "$1" 2>/dev/null)"
}
git_in() {
	dir=$1
	shift
	git -C "$dir" -c user.name=test -c user.email=test@example.invalid -c commit.gpgsign=false "$@"
}

# Only package/ is checked out: all the version needs, and quick.
clone=$work/clone
if ! git clone -q --no-checkout "$(pwd)" "$clone" || ! git -C "$clone" read-tree HEAD ||
	! git -C "$clone" checkout -q HEAD -- package; then
	bad "clone" "git clone of $(pwd) failed"
	finish
fi
cp package/version.mk package/release.sh package/release-stamp package/.gitattributes "$clone/package/"
git_in "$clone" add package
# The first commit some time after HEAD, the next one a second after it: the
# closest two commits can be and still get different releases.
t0=$(($(git -C "$clone" log -1 --format=%ct) + 3600))
GIT_COMMITTER_DATE="@$t0 +0000" git_in "$clone" commit -q --allow-empty -m "this tree's version files"
old=$(version_make "$clone")
GIT_COMMITTER_DATE="@$((t0 + 1)) +0000" git_in "$clone" commit -q --allow-empty -m "the next commit"
new=$(version_make "$clone")
echo "      version: at $(git -C "$clone" rev-parse --short HEAD~1) $old, at $(git -C "$clone" rev-parse --short HEAD) $new"

for v in "$old" "$new"; do
	if apk version --check "$v" >/dev/null 2>&1; then ok "apk version --check $v"; else bad "apk version --check $v" "apk rejects it"; fi
done
is "make ipk (release.sh) gives the recipes' (version.mk) $new" "$(version_ipk "$clone")" "$new"
is "version.mk evaluates without messages" "$(cat "$work/make.err")" ""

# above OLD NEW: opkg and apk both order NEW above OLD.
above() {
	is "apk version -t $1 $2 is <" "$(apk version -t "$1" "$2" 2>&1)" "<"
	if opkg compare-versions "$1" '<<' "$2" && opkg compare-versions "$2" '>>' "$1"; then
		ok "opkg compare-versions $1 '<<' $2"
	else
		bad "opkg compare-versions $1 '<<' $2" "opkg does not order them so"
	fi
}
above "$old" "$new"
# Builds handed out before: 0.1.0-r182 was seen; the older make ipk gave
# r<commit count>, which is at most this history's count now.
above 0.1.0-r182 "$new"
above "0.1.0-r$(git -C "$clone" rev-list --count HEAD)" "$new"

# A depth-1 clone (the SDK's src-git feed) knows the same release.
git clone -q --depth 1 "file://$clone" "$work/shallow" 2>/dev/null
is "a depth-1 clone gives $new" "$(version_make "$work/shallow")" "$new"
# A git archive (a tarball) carries it in package/release-stamp.
mkdir "$work/archive"
git -C "$clone" archive HEAD package | tar -xm -C "$work/archive"
is "a git archive gives $new" "$(version_make "$work/archive")" "$new"
# A dirty tree keeps its commit's version, valid for apk.
echo "edited" >>"$clone/package/README.md"
is "a dirty tree gives $new" "$(version_make "$clone")" "$new"
# A copy with neither: release 0 (below every build from a commit), and says so.
cp -R "$work/archive" "$work/copy"
cp package/release-stamp "$work/copy/package/release-stamp"
got=$(version_make "$work/copy")
if [ "${got##*-r}" = 0 ] && apk version --check "$got" >/dev/null 2>&1 && grep -q 'release 0' "$work/make.err"; then
	ok "a copy without git or stamp gives release 0 and warns"
else
	bad "a copy without git or stamp gives release 0 and warns" "got '$got', said '$(cat "$work/make.err")'"
fi
finish
