package rpc

import (
	"net/netip"

	"github.com/fastpath-wrt/fastpath/src/status"
)

// Match reports whether a flow passes the query's filters (Limit aside),
// so a controller can filter conntrack's entries the way `flows` means.
func (q FlowQuery) Match(f status.Flow) bool {
	switch q.Offload {
	case "any":
		if f.Offload == "" {
			return false
		}
	case "none":
		if f.Offload != "" {
			return false
		}
	case "software", "hardware":
		if f.Offload != q.Offload {
			return false
		}
	}
	if q.Proto != "" && f.Proto != q.Proto {
		return false
	}
	if q.Address == "" {
		return true
	}
	prefix, err := netip.ParsePrefix(q.Address)
	if err != nil {
		a, err := netip.ParseAddr(q.Address)
		if err != nil {
			return false
		}
		prefix = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
	}
	prefix = netip.PrefixFrom(prefix.Addr().Unmap(), min(prefix.Bits(), prefix.Addr().Unmap().BitLen()))
	for _, s := range []string{f.Original.Src, f.Original.Dst, f.Reply.Src, f.Reply.Dst} {
		if a, err := netip.ParseAddr(s); err == nil && prefix.Contains(a.Unmap()) {
			return true
		}
	}
	return false
}
