package rpc

import (
	"github.com/fastpath-wrt/fastpath/src/conntrack"
	"github.com/fastpath-wrt/fastpath/src/cut"
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
	p, err := cut.ParsePrefix(q.Address)
	return err == nil && conntrack.FlowHasAddress(f, p)
}
