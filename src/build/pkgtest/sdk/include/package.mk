# Stand-in for the SDK's include/package.mk (install test), as OpenWrt
# 24.10's does it:
#   VERSION         PKG_VERSION-rPKG_RELEASE (package-defaults.mk)
#   STAMP_PREPARED  named after a hash of the files below the recipe's
#                   directory and PKG_FILE_DEPENDS, their names and mtimes,
#                   taken when BuildPackage is evaluated: a changed file
#                   there is a new stamp, and the package is prepared and
#                   built again
# BuildPackage reads the package definition as the real one does and gives
# targets:
#   prepare         Build/Prepare
#   compile         Build/Compile
#   install-NAME    Package/NAME/install into $(BUILD_DIR)/ipkg/NAME
#   info-NAME       the fields the control file is made of, and the stamp
PKG_BUILD_DIR?=$(BUILD_DIR)/$(PKG_NAME)$(if $(PKG_VERSION),-$(PKG_VERSION))

STAMP_PREPARED=$(PKG_BUILD_DIR)/.prepared_$(shell find $(wildcard $(CURDIR) $(PKG_FILE_DEPENDS)) -type f -printf '%p%T@\n' | sort | md5sum | cut -c1-32)

define Package/Default
  SECTION:=opt
  CATEGORY:=Extra packages
  DEPENDS:=
  TITLE:=
  MAINTAINER:=$(PKG_MAINTAINER)
  URL:=$(PKG_URL)
  LICENSE:=$(PKG_LICENSE)
  PKGARCH:=x86_64
  ifneq ($(PKG_VERSION),)
    ifneq ($(PKG_RELEASE),)
      VERSION:=$(PKG_VERSION)-r$(PKG_RELEASE)
    else
      VERSION:=$(PKG_VERSION)
    endif
  else
    VERSION:=$(PKG_RELEASE)
  endif
endef

define Build/Compile
endef

define BuildPackage
$(eval $(Package/Default))
$(eval $(Package/$(1)))
.PHONY: prepare compile install-$(1) info-$(1)
prepare:
	rm -rf $(PKG_BUILD_DIR)
	mkdir -p $(PKG_BUILD_DIR)
	$(Build/Prepare)
compile:
	$(Build/Compile)
install-$(1):
	rm -rf $(BUILD_DIR)/ipkg/$(1)
	mkdir -p $(BUILD_DIR)/ipkg/$(1)
	$(call Package/$(1)/install,$(BUILD_DIR)/ipkg/$(1))
info-$(1):
	@echo 'PKG_NAME=$(PKG_NAME)'
	@echo 'VERSION=$(VERSION)'
	@echo 'SECTION=$(SECTION)'
	@echo 'CATEGORY=$(CATEGORY)'
	@echo 'DEPENDS=$(strip $(DEPENDS))'
	@echo 'MAINTAINER=$(MAINTAINER)'
	@echo 'URL=$(URL)'
	@echo 'LICENSE=$(LICENSE)'
	@echo 'PKGARCH=$(PKGARCH)'
	@echo 'PKG_BUILD_DEPENDS=$(PKG_BUILD_DEPENDS)'
	@echo 'GO_PKG=$(GO_PKG)'
	@echo 'CONFFILES=$(strip $(Package/$(1)/conffiles))'
	@echo 'STAMP_PREPARED=$(STAMP_PREPARED)'
endef
