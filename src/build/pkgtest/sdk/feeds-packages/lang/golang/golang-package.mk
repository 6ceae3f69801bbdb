# Stand-in for the packages feed's lang/golang/golang-package.mk of OpenWrt
# 24.10 (install test), for a target that is this machine (linux/amd64): the
# variables a Go recipe sets or changes, and the go command they make. As
# the real one it turns cgo on and links through the target's C compiler
# (GO_PKG_TARGET_VARS, GO_PKG_DEFAULT_LDFLAGS), stamps the SDK's date as the
# build ID, and passes GO_PKG_GCFLAGS, GO_PKG_LDFLAGS and GO_PKG_LDFLAGS_X
# to the targets only, GO_PKG_DEFAULT_* to every package. What a recipe
# builds here is what the SDK would build from it.
unexport GOOS GOARCH GOAMD64 GOBIN GOPATH GOCACHE GOMODCACHE GOENV GOFLAGS \
	GOTOOLCHAIN GO111MODULE CGO_ENABLED CC CGO_CFLAGS CGO_LDFLAGS

GO_ARCH_DEPENDS:=@(aarch64||arm||i386||i686||loongarch64||mips||mips64||mips64el||mipsel||riscv64||x86_64)

GO_PKG_BUILD_PKG?=$(strip $(GO_PKG))/...
GO_PKG_INSTALL_BIN_PATH?=/usr/bin
GO_PKG_BUILD_DIR=$(PKG_BUILD_DIR)/.go_work/build
GO_PKG_BUILD_BIN_DIR=$(GO_PKG_BUILD_DIR)/bin
GO_BUILD_CACHE_DIR?=$(TMP_DIR)/go-build
GO_MOD_CACHE_DIR?=$(DL_DIR)/go-mod-cache

GO_PKG_TARGET_VARS= \
	GOOS=linux \
	GOARCH=amd64 \
	GOAMD64=v1 \
	CGO_ENABLED=1 \
	CC="$(TARGET_CC)" \
	CGO_LDFLAGS="$(TARGET_LDFLAGS)"

GO_PKG_BUILD_VARS= \
	GOPATH="$(GO_PKG_BUILD_DIR)" \
	GOCACHE="$(GO_BUILD_CACHE_DIR)" \
	GOMODCACHE="$(GO_MOD_CACHE_DIR)" \
	GOENV=off \
	GOTOOLCHAIN=local

GO_PKG_VARS=$(GO_PKG_TARGET_VARS) $(GO_PKG_BUILD_VARS)

GO_PKG_DEFAULT_GCFLAGS=
GO_PKG_DEFAULT_LDFLAGS= \
	-buildid '$(SOURCE_DATE_EPOCH)' \
	-linkmode external \
	-extldflags '$(TARGET_LDFLAGS)'
GO_PKG_CUSTOM_LDFLAGS=$(GO_PKG_LDFLAGS) $(patsubst %,-X %,$(GO_PKG_LDFLAGS_X))

GO_PKG_INSTALL_ARGS= \
	-buildvcs=false \
	-trimpath \
	-ldflags "all=$(GO_PKG_DEFAULT_LDFLAGS)" \
	$(if $(strip $(GO_PKG_DEFAULT_GCFLAGS)),-gcflags "all=$(GO_PKG_DEFAULT_GCFLAGS)") \
	$(if $(strip $(GO_PKG_GCFLAGS)),-gcflags "$(GO_PKG_GCFLAGS) $(GO_PKG_DEFAULT_GCFLAGS)") \
	$(if $(strip $(GO_PKG_CUSTOM_LDFLAGS)),-ldflags "$(GO_PKG_CUSTOM_LDFLAGS) $(GO_PKG_DEFAULT_LDFLAGS)")

# golang-build.sh build: go install of the targets, in the module.
define GoPackage/Build/Compile
	cd $(PKG_BUILD_DIR) && $(GO_PKG_VARS) go install -modcacherw $(GO_PKG_INSTALL_ARGS) $(GO_PKG_BUILD_PKG)
endef

define GoPackage/Package/Install/Bin
	install -d -m0755 $(1)/$(GO_PKG_INSTALL_BIN_PATH)
	install -m0755 $(GO_PKG_BUILD_BIN_DIR)/* $(1)/$(GO_PKG_INSTALL_BIN_PATH)/
endef

Build/Compile=$(call GoPackage/Build/Compile)
