module github.com/fastpath-wrt/fastpath

go 1.23.0

require (
	github.com/google/nftables v0.3.0
	github.com/mdlayher/netlink v1.8.0
	github.com/ti-mo/conntrack v0.6.0
	github.com/ti-mo/netfilter v0.5.3
	github.com/vishvananda/netlink v1.3.1
	github.com/vishvananda/netns v0.0.5
	golang.org/x/sys v0.35.0
)

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/mdlayher/socket v0.5.1 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	golang.org/x/net v0.43.0 // indirect
	golang.org/x/sync v0.14.0 // indirect
)
