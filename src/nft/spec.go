// Package nft keeps fastpath's own nftables table (flowtable and forward
// chain) in the state a plan asks for, renders that state as nft text, and
// reads back what the kernel really has.
package nft

// Table names fastpath owns. fw4 keeps "inet fw4"; we never touch it.
const (
	TableName     = "fastpath"
	FlowtableName = "ft"
	ChainName     = "forward"
)

// digestComment is how our rule's comment records the digest of
// firewall4's forward-path rules: `comment "fw4 forward rules <digest>"`.
const digestComment = "fw4 forward rules "

// Spec is the desired flowtable state.
type Spec struct {
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

// Kernel is what the kernel really has for our table.
type Kernel struct {
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
