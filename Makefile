# Developer Makefile for fastpath. The OpenWrt package recipe lives in
# package/fastpath/Makefile; this file only drives local builds and tests.

export GOTOOLCHAIN := local
export CGO_ENABLED := 0

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.0.0)
GO_LDFLAGS := -s -w -X github.com/fastpath-wrt/fastpath/src/version.Version=$(VERSION)
GO_BUILD := go build -trimpath -ldflags '$(GO_LDFLAGS)'

.PHONY: all deps build lab-tools cross ipk test test-unit test-root test-cross test-pkg test-luci test-luci-browser test-vm lab bench fuzz clean

all: build

deps:
	src/build/deps.sh

build:
	mkdir -p dist
	$(GO_BUILD) -o dist/fastpath ./src/cmd/fastpath

cross:
	src/build/cross.sh

ipk: cross
	src/build/ipk.sh

# Everything this machine can run: unit and golden tests with fuzz seed
# corpora, root network-namespace integration tests, the unit tests of every
# target architecture under qemu-user, the package install test, the LuCI
# tests (node, and the real LuCI in headless Chromium), and the VM lab tests
# on real flowtable kernels.
test: deps build test-unit test-root test-cross test-pkg test-luci test-luci-browser test-vm

test-unit:
	go vet ./...
	go test -count=1 -skip Integration ./...

test-root:
	src/build/test-root.sh

test-cross:
	src/build/test-cross.sh

test-pkg: ipk
	src/build/test-pkg.sh

test-luci:
	node --test luci-app/tests/

# The LuCI app in openwrt-userland (src/build/openwrt-userland.sh finds it;
# OPENWRT_USERLAND overrides) with the real daemon, driven in headless
# Chromium as root, readonly and noapp; screenshots in dist/luci-browser/.
test-luci-browser: build
	luci-app/tests/browser/run.sh

# The lab's own tools: a UDP sender with fixed ports and rate, and a ubusd
# stand-in so the daemon's ubus object and the CLI work inside the VM.
lab-tools:
	mkdir -p dist
	go build -trimpath -o dist/udpflood ./src/lab/udpflood
	go build -trimpath -o dist/testbroker ./src/lab/testbroker

test-vm: build lab-tools
	src/lab/lab test

lab: deps build lab-tools
	src/lab/lab demo

bench: deps build lab-tools
	src/lab/lab bench

fuzz:
	src/build/fuzz.sh

clean:
	rm -rf dist
