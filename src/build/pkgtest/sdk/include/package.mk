# Stand-in for the SDK's include/package.mk (install test). BuildPackage
# reads the package definition as the real one does and gives targets:
#   prepare         Build/Prepare
#   compile         go build of GO_PKG_BUILD_PKG with GO_PKG_LDFLAGS_X
#   install-NAME    Package/NAME/install into $(BUILD_DIR)/ipkg/NAME
#   info-NAME       the fields the control file is made of
PKG_BUILD_DIR?=$(BUILD_DIR)/$(PKG_NAME)-$(PKG_VERSION)

define BuildPackage
$(eval $(Package/$(1)))
.PHONY: prepare compile install-$(1) info-$(1)
prepare:
	rm -rf $(PKG_BUILD_DIR)
	$(Build/Prepare)
compile:
	cd $(PKG_BUILD_DIR) && GOTOOLCHAIN=local CGO_ENABLED=0 go build -trimpath \
		-ldflags "$(patsubst %,-X %,$(GO_PKG_LDFLAGS_X))" \
		-o $(GO_PKG_BUILD_BIN_DIR)/ $(GO_PKG_BUILD_PKG)
install-$(1):
	rm -rf $(BUILD_DIR)/ipkg/$(1)
	mkdir -p $(BUILD_DIR)/ipkg/$(1)
	$(call Package/$(1)/install,$(BUILD_DIR)/ipkg/$(1))
info-$(1):
	@echo 'PKG_NAME=$(PKG_NAME)'
	@echo 'VERSION=$(PKG_VERSION)-r$(PKG_RELEASE)'
	@echo 'SECTION=$(SECTION)'
	@echo 'CATEGORY=$(CATEGORY)'
	@echo 'DEPENDS=$(strip $(DEPENDS))'
	@echo 'PKG_BUILD_DEPENDS=$(PKG_BUILD_DEPENDS)'
	@echo 'GO_PKG=$(GO_PKG)'
	@echo 'CONFFILES=$(strip $(Package/$(1)/conffiles))'
endef
