package conntrack

import (
	"net/netip"

	"github.com/fastpath-wrt/fastpath/src/status"
)

// Filter selects conntrack entries. The zero Filter selects all of them.
type Filter struct {
	Family      string       // "ipv4", "ipv6" or "" for both
	Proto       string       // "tcp", "udp", ... or "" for any
	Offloaded   bool         // only entries with IPS_OFFLOAD (software or hardware)
	HWOffloaded bool         // only entries with IPS_HW_OFFLOAD
	Address     netip.Prefix // only entries with an end in this prefix, either direction; zero: any
}

// matches reports whether a mapped flow passes the filter.
func (f Filter) matches(fl flowView) bool {
	if f.Family != "" && f.Family != fl.Family {
		return false
	}
	if f.Proto != "" && f.Proto != fl.Proto {
		return false
	}
	if f.Offloaded && fl.Status&statusOffload == 0 {
		return false
	}
	if f.HWOffloaded && fl.Status&statusHWOffload == 0 {
		return false
	}
	if f.Address.IsValid() && !fl.hasAddressIn(f.Address) {
		return false
	}
	return true
}

// flowView is a kernel entry mapped for reporting, with the raw status word
// and addresses kept for filtering.
type flowView struct {
	status.Flow
	Status uint32
	addrs  [4]netip.Addr // original src, dst, reply src, dst
}

// hasAddressIn reports whether either end, in the original or the reply
// direction, lies in p. With NAT the far end of a connection shows up only
// in one of the two directions, so all four addresses are checked.
func (v flowView) hasAddressIn(p netip.Prefix) bool {
	for _, a := range v.addrs {
		if a.IsValid() && p.Contains(a.Unmap()) {
			return true
		}
	}
	return false
}
