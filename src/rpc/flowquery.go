package rpc

import (
	"net/netip"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// Match reports whether a flow passes the query's filters (Limit aside),
// so a controller can filter conntrack's entries the way `flows` means.
func (q FlowQuery) Match(f netstate.Flow) bool {
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
	p, err := cut.ParsePrefix(q.Address)
	return err == nil && f.HasAddressIn(p)
}

// MarkLocal sets Local on the flows the router itself is an end of: sent
// to one of its addresses and answered from it, or sent from one and
// answered to it. A masqueraded forward flow has the router's address
// only in its reply and a port-forwarded one only in its original
// direction, so neither counts.
func MarkLocal(flows []netstate.Flow, own []netip.Addr) {
	mine := make(map[netip.Addr]bool, len(own))
	for _, a := range own {
		mine[a.Unmap()] = true
	}
	is := func(s string) bool {
		a, err := netip.ParseAddr(s)
		return err == nil && mine[a.Unmap().WithZone("")]
	}
	for i := range flows {
		o, r := flows[i].Original, flows[i].Reply
		flows[i].Local = (is(o.Dst) && is(r.Src)) || (is(o.Src) && is(r.Dst))
	}
}
