# Stand-in for the packages feed's lang/golang/golang-package.mk (install
# test): the variables and install call a Go package recipe uses.
GO_ARCH_DEPENDS:=@(aarch64||arm||i386||i686||mips||mips64||mips64el||mipsel||powerpc64||x86_64)
GO_PKG_BUILD_PKG?=$(strip $(GO_PKG))/...
GO_PKG_INSTALL_BIN_PATH?=/usr/bin
GO_PKG_BUILD_BIN_DIR=$(PKG_BUILD_DIR)/.go_work/build/bin

define GoPackage/Package/Install/Bin
	install -d -m0755 $(1)/$(GO_PKG_INSTALL_BIN_PATH)
	install -m0755 $(GO_PKG_BUILD_BIN_DIR)/* $(1)/$(GO_PKG_INSTALL_BIN_PATH)/
endef

define GoBinPackage
  ifndef Package/$(1)/install
    Package/$(1)/install=$$(call GoPackage/Package/Install/Bin,$$(1))
  endif
endef
