# Stand-in for the luci feed's luci.mk (install test): the package fields it
# makes from a LuCI app's Makefile, with its defaults. LUCI_RELEASE_SEP is
# the stand-in's own: how this luci.mk appends PKG_RELEASE to PKG_VERSION
# ("-" in luci.mk from 2024 on, "-r" in later ones).
LUCI_NAME?=$(notdir $(CURDIR))
LUCI_PKGARCH?=$(if $(realpath src/Makefile),,all)
LUCI_URL?=https://github.com/openwrt/luci
LUCI_MAINTAINER?=OpenWrt LuCI community
LUCI_RELEASE_SEP?=-

PKG_NAME?=$(LUCI_NAME)
PKG_RELEASE?=1
PKG_BUILD_DIR:=$(BUILD_DIR)/$(PKG_NAME)
# luci.mk's findrev: the last commit's date and hash.
PKG_SRC_VERSION?=$(shell set -- $$(git log -1 --format='%ct %h' --abbrev=7 -- . 2>/dev/null); \
	[ -n "$$1" ] && printf '%s.%05d~%s' "$$(date --utc --date=@$$1 +%y.%j)" "$$(($$1 % 86400))" "$$2" || echo 0)

include $(INCLUDE_DIR)/package.mk

define Package/$(PKG_NAME)
  SECTION:=luci
  CATEGORY:=LuCI
  TITLE:=$(LUCI_TITLE)
  DEPENDS:=$(LUCI_DEPENDS)
  VERSION:=$(if $(PKG_VERSION),$(if $(PKG_RELEASE),$(PKG_VERSION)$(LUCI_RELEASE_SEP)$(PKG_RELEASE),$(PKG_VERSION)),$(PKG_SRC_VERSION))
  $(if $(LUCI_PKGARCH),PKGARCH:=$(LUCI_PKGARCH))
  URL:=$(LUCI_URL)
  MAINTAINER:=$(LUCI_MAINTAINER)
endef

$(eval $(call BuildPackage,$(PKG_NAME)))
