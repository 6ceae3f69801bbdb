# The version of this feed's packages, fastpath and luci-app-fastpath, and
# the only place it is set: package/fastpath/Makefile and luci-app/Makefile
# include this file, and make ipk (src/build/cross.sh, ipk.sh) reads it. So
# the SDK and make ipk give the same commit the same version,
# FASTPATH_VERSION-rFASTPATH_RELEASE, and opkg and apk order their packages
# by it alone.
#
# FASTPATH_RELEASE is not set by hand: it is the committer time of the
# commit built, in seconds since 1970 (package/release.sh says how it is
# found in a clone, a depth-1 clone and a git archive, and what a tree
# without either gets). It grows with every commit, is a plain integer as
# OpenWrt 25.12's apk requires, and is far above every release handed out
# before, which were commit counts (0.1.0-r182 and the like) or 1; a commit
# count would not do, as the SDK's src-git feed is a depth-1 clone. Two
# commits made in the same second share a release, and a committer clock set
# back gives a smaller one: hand out builds of commits made in order, at
# least a second apart. src/build/test-version.sh checks the order with the
# real opkg and apk.
#
# Raising FASTPATH_VERSION needs no reset: the release keeps growing.
FASTPATH_VERSION:=0.1.0
FASTPATH_RELEASE:=$(shell sh $(dir $(lastword $(MAKEFILE_LIST)))release.sh)
ifeq ($(FASTPATH_RELEASE),)
$(error fastpath: package/release.sh gave no release)
endif
