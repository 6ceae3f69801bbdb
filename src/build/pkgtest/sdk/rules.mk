# Stand-in for the SDK's rules.mk (install test): the directories, install
# commands and toolchain a package recipe uses, as OpenWrt defines them, for
# a target that is this machine (x86_64): its C compiler is the target's.
INCLUDE_DIR:=$(TOPDIR)/include
BUILD_DIR:=$(TOPDIR)/build_dir
TMP_DIR:=$(TOPDIR)/tmp
DL_DIR:=$(TOPDIR)/dl
STAGING_DIR_HOSTPKG:=$(TOPDIR)/staging_dir/hostpkg
INSTALL_DIR:=install -d -m0755
INSTALL_BIN:=install -m0755
INSTALL_DATA:=install -m0644
INSTALL_CONF:=install -m0600
CP:=cp -fpR
TARGET_CC:=cc
TARGET_LDFLAGS:=
# The SDK's own date (toplevel.mk: the SDK tree's last commit), not the
# package's.
SOURCE_DATE_EPOCH?=$(shell date +%s)
# Host packages, golang/host's go among them, come first.
export PATH:=$(STAGING_DIR_HOSTPKG)/bin:$(PATH)
