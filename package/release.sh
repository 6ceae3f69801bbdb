#!/bin/sh
# Prints FASTPATH_RELEASE (package/version.mk): the committer time of the
# commit the tree was built from, in seconds since 1970. package/version.mk
# (the SDK's recipes) and src/build/cross.sh (make ipk) both ask this script,
# so both give a commit the same release.
#
# Why the commit time: it grows with every commit without a number raised by
# hand; a depth-1 clone (the SDK's src-git feed) knows it, where a commit count
# would be 1; and git archive writes it into package/release-stamp
# (export-subst, package/.gitattributes), so a tarball knows it too. Every
# such number is far above the commit counts that builds carried before
# (0.1.0-r182 and the like: the history has a few hundred commits).
#
# In order:
#   1. DIR is the top of a git work tree: HEAD's committer time. Uncommitted
#      changes do not alter it (the release stays a plain integer).
#   2. package/release-stamp holds a number (a git archive): that number.
#   3. Neither (a plain copy without .git): 0, with a warning. It sorts below
#      every build from a commit, so it never replaces one on an upgrade.
#
# Usage: package/release.sh [DIR]   (DIR: the tree; default: this script's ..)
set -eu
dir=$(cd "${1:-$(dirname "$0")/..}" && pwd -P)
# The tree's own repository, never one it sits in (a tarball unpacked inside
# an OpenWrt buildroot, itself a git checkout).
unset GIT_DIR GIT_WORK_TREE
if top=$(git -C "$dir" rev-parse --show-toplevel 2>/dev/null) && [ "$top" = "$dir" ] &&
	time=$(git -C "$dir" log -1 --format=%ct HEAD 2>/dev/null); then
	case $time in
	'' | *[!0-9]*) ;;
	*)
		echo "$time"
		exit 0
		;;
	esac
fi
stamp=$(cat "$dir/package/release-stamp" 2>/dev/null || :)
case $stamp in
'' | *[!0-9]*) ;;
*)
	echo "$stamp"
	exit 0
	;;
esac
echo "fastpath: $dir is no git work tree git can read, nor a git archive (package/release-stamp is not stamped): release 0, below every build from a commit" >&2
echo 0
