//go:build !linux

package observe

import (
	"errors"
	"net/netip"
)

// KernelRoute needs rtnetlink, which only Linux has.
func KernelRoute(netns int, dst, src netip.Addr) (Route, error) {
	return Route{}, errors.New("asking the kernel for a route is implemented on Linux only")
}
