package netstate

// FlowtableSpec is the flowtable state a plan wants.
type FlowtableSpec struct {
	Enabled  bool     `json:"enabled"`  // false: the flowtable and forward chain are removed
	Devices  []string `json:"devices"`  // sorted ingress devices of the flowtable
	Hardware bool     `json:"hardware"` // "flags offload"
	Counter  bool     `json:"counter"`  // "counter": per-flow byte counters in conntrack
	// OffloadAfterPackets > 0: a connection is offloaded only once it has
	// that many packets (both directions), so inspectors see the first ones.
	OffloadAfterPackets uint64 `json:"offload_after_packets,omitempty"`
	// FirewallDigest is the digest of firewall4's forward-path rules the
	// plan saw ("": none to read, and the recorded one stays). Our rule
	// records it in its comment, so the next apply tells a real change of
	// those rules from a re-render of the same ones.
	FirewallDigest string `json:"firewall_digest,omitempty"`
	// RecheckOnRuleChange: when FirewallDigest differs from the recorded
	// one, the flowtable is replaced, so every offloaded flow takes the
	// slow path (and the new rules) once; off: the new digest is only
	// recorded.
	RecheckOnRuleChange bool `json:"recheck_on_rule_change"`
}

// KernelFlowtable is what the kernel really has for our table.
type KernelFlowtable struct {
	TablePresent     bool     `json:"table_present"`
	FlowtablePresent bool     `json:"flowtable_present"`
	Devices          []string `json:"devices"`
	Hardware         bool     `json:"hardware"`
	Counter          bool     `json:"counter"`
	Hook             string   `json:"hook,omitempty"`
	Priority         int32    `json:"priority"`
	ForwardRule      bool     `json:"forward_rule"` // our "flow add @ft" rule is in place
	// OffloadAfterPackets is the packet count our rule waits for (0: none).
	OffloadAfterPackets uint64 `json:"offload_after_packets,omitempty"`
	// FirewallDigest is the digest of fw4's forward-path rules our rule
	// recorded when it was written ("": none).
	FirewallDigest string `json:"firewall_digest,omitempty"`

	Handle       uint64 `json:"handle,omitempty"` // flowtable handle: unchanged while the flowtable lives
	ChainPresent bool   `json:"chain_present"`    // our forward chain exists (hook and priority may still differ)
}

// KernelFeatures lists the features fastpath depends on and whether they are there.
type KernelFeatures struct {
	Release           string   `json:"release"`
	Flowtable         bool     `json:"flowtable"`
	NetdevTable       bool     `json:"netdev_table"`
	IPIPRxAccel       bool     `json:"ipip_rx_accel"`       // the flowtable follows ipip tunnels, rx and tx (>= 6.19)
	IP6TnlPath        bool     `json:"ip6tnl_path"`         // the flowtable follows ip6tnl tunnels, as if they carried IPv6 (>= 7.0)
	CTDeleteOffloaded bool     `json:"ct_delete_offloaded"` // deleting an offloaded conntrack entry works (>= 6.4)
	Missing           []string `json:"missing,omitempty"`   // human sentences naming module/config
}
