package netstate

import "net/netip"

// Flow is one conntrack entry as fastpath reports it.
type Flow struct {
	ID       uint32 `json:"id"`
	Family   string `json:"family"` // "ipv4", "ipv6"
	Proto    string `json:"proto"`  // "tcp", "udp", ...
	State    string `json:"state,omitempty"`
	Original Tuple  `json:"original"`
	Reply    Tuple  `json:"reply"`
	Offload  string `json:"offload"` // "", "software", "hardware"
	Assured  bool   `json:"assured"`
	Packets  uint64 `json:"packets"` // both directions; 0 when accounting is off
	Bytes    uint64 `json:"bytes"`
	Timeout  uint32 `json:"timeout_s"`
	Mark     uint32 `json:"mark,omitempty"`
	// Local: the router itself is an end (LuCI, SSH, DNS to the router);
	// cutting such a flow can lock its admin out.
	Local bool `json:"local,omitempty"`
}

// HasAddressIn reports whether an end of f, in the original or the reply
// direction, lies in p.
func (f Flow) HasAddressIn(p netip.Prefix) bool {
	return HasAddressIn(f.Original, f.Reply, p)
}

// FlowCounts are conntrack's entries by offload status bit.
type FlowCounts struct {
	Total       int `json:"total"`
	Offloaded   int `json:"offloaded"`    // IPS_OFFLOAD (bit 14), software or hardware
	HWOffloaded int `json:"hw_offloaded"` // IPS_HW_OFFLOAD (bit 15)
	// OffloadedAge is how many seconds ago the offloaded entries were
	// counted (the total is always read now): counting them makes the
	// kernel encode each, so a big table is counted only now and then.
	OffloadedAge float64 `json:"offloaded_age_s"`
}
