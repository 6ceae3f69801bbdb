# Developer Makefile for fastpath. The OpenWrt package recipe lives in
# package/fastpath/Makefile; this file only drives local builds and tests.

export GOTOOLCHAIN := local
export CGO_ENABLED := 0

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.0.0)
GO_LDFLAGS := -s -w -X github.com/fastpath-wrt/fastpath/src/version.Version=$(VERSION)
GO_BUILD := go build -trimpath -ldflags '$(GO_LDFLAGS)'

.PHONY: all deps build lab-tools cross ipk test test-unit test-uci-libuci test-root test-cross test-pkg test-pkg-openwrt test-luci test-luci-browser test-vm test-routers-day bench-day test-xdp-kernels bench-xdp-virtio bench-vm2 lab bench bench-scale bench-scale-mips fuzz clean

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
test: deps build test-unit test-uci-libuci test-root test-cross test-pkg test-pkg-openwrt test-luci test-luci-browser test-vm

test-unit:
	go vet ./...
	go test -count=1 -skip Integration ./...

# src/uci against the real libuci and uci command (openwrt-userland, found
# by src/build/openwrt-userland.sh: $OPENWRT_USERLAND, else beside the clone):
# thousands of
# generated and mutated configs, Set and staged changes, fixed seed. The
# same as a fuzz target: go test -tags libuci -run '^$$' -fuzz FuzzLibuci ./src/uci/
test-uci-libuci:
	userland=$$(src/build/openwrt-userland.sh) && OPENWRT_USERLAND=$$userland go test -count=1 -tags libuci -run '^(TestLibuci|FuzzLibuci)' ./src/uci/

# One daemon lives through a compressed router's day (reloads, hotplugs,
# fw4 and banIP reloads, list churn, bursts, ubusd restarts) with its
# invariants checked after every event; as root. make test runs it too
# (in test-root); this target runs it alone, with its figures.
test-routers-day: build
	go test -count=1 -timeout 30m -run '^TestIntegrationRoutersDay$$' -v ./src/cmd/fastpath/

# The router's day alone as a benchmark: its cut and answer latencies
# (p50, p95, max) and peak RSS against their goals (a cut within 1 s,
# answers within 1 s at the 95th percentile), met or missed, beside its
# event count; also in dist/bench-day.json. As root. make test asserts
# only the day's invariants and RSS bounds, never its timing.
bench-day: build
	mkdir -p dist
	FASTPATH_DAY_BENCH=$(CURDIR)/dist/bench-day.json go test -count=1 -timeout 30m -run '^TestIntegrationRoutersDay$$' -v ./src/cmd/fastpath/

test-root:
	src/build/test-root.sh

test-cross:
	src/build/test-cross.sh

test-pkg: ipk
	src/build/test-pkg.sh

# The x86_64 package on OpenWrt's own opkg, procd, ubusd and firewall4
# (openwrt-userland, as root), with and without jsonfilter: ubus set makes
# procd reload the firewall, opkg remove leaves no table and no daemon.
test-pkg-openwrt: ipk
	src/build/test-pkg-openwrt.sh

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
	go build -trimpath -o dist/xdpdrop ./src/lab/xdpdrop
	go build -trimpath -o dist/pppoesession ./src/lab/pppoesession

# The VM tests; scenarios/openwrt.sh installs make ipk's x86_64 packages
# with opkg (in make test, test-pkg has built them already: make runs ipk once).
test-vm: build lab-tools ipk
	src/lab/lab test

# The XDP cut's netns tests in the lab VM on each kernel series: the program
# must pass the verifier of 5.10 (OpenWrt 22.03) as well as of 6.12 and 7.
test-xdp-kernels:
	go test -c -o dist/xdp-cut.test ./src/cut/xdp/
	go test -c -o dist/cut-engine.test ./src/cut/engine/
	for k in 5.10 6.12 7; do src/lab/lab run --kernel $$k --timeout 600 src/lab/scenarios/xdp-cut.sh || exit 1; done

# What the XDP cut saves on a real driver: one VM, two virtio-net NICs on a
# qemu hub, the same flood with no cut, the netdev cut and the XDP cut.
bench-xdp-virtio: lab-tools
	LAB_CLOCK=instructions LAB_NICS=hub2 src/lab/lab run --kernel 6.12 --timeout 600 src/lab/scenarios/xdp-virtio.sh

# The cut rows where the router's CPU is its own: a second VM sends the
# flood over qemu stream links into the router VM's virtio-net NICs
# (cut/off, cut/netdev, cut/xdp), beside the hub2 rows of one VM, then the
# forward rows there (slow path, flowtable, flowtable with XDP forwarding:
# a TCP download and a UDP flood through the router), in one run ->
# dist/bench-vm2.json. A benchmark: not in make test.
bench-vm2: deps build lab-tools
	src/lab/lab bench-vm2

lab: deps build lab-tools
	src/lab/lab demo

bench: deps build lab-tools
	src/lab/lab bench

# Router scale on this machine's own kernel (root, network namespaces; no
# flowtables needed): a conntrack table of 65,536 entries
# (FASTPATH_SCALE_ENTRIES), then status and flows per call in process
# (ns/op, B/op) and through the daemon binary over the test broker (its
# CPU per call, VmRSS, VmHWM); then banIP's 13 sets of 138,155 elements
# loaded and reloaded beside that table (the daemon's CPU, peak and
# settled RSS, how long until the listed connections are cut; about three
# minutes; FASTPATH_PROFILE=DIR writes its profiles); then the block-list
# matcher natively and under qemu-user as mips_24kc.
# Benchmarks, not tests: not in make test.
bench-scale:
	go test -count=1 -run '^$$' -bench 'IntegrationScale|IntegrationDumpCost' -benchtime 20x ./src/daemon/ ./src/conntrack/
	go test -count=1 -run '^$$' -bench 'IntegrationBanIPLoad' -benchtime 1x -timeout 20m -v ./src/daemon/
	$(MAKE) bench-scale-mips

# The block-list matcher's benchmarks natively and as mips_24kc under
# qemu-user, the MIPS cost as a ratio of CPU time per operation.
bench-scale-mips:
	src/build/bench-mips.sh

fuzz:
	src/build/fuzz.sh

clean:
	rm -rf dist
