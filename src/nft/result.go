package nft

// Result says what Apply changed, in words a person reads in logs and status.
type Result struct {
	Changed         bool     `json:"changed"`
	Actions         []string `json:"actions,omitempty"` // "created table inet fastpath ...", "added devices wan0 to flowtable ft"
	HardwareRefused bool     `json:"hardware_refused"`  // "flags offload" was refused; see ApplyWithFallback
	Recreated       bool     `json:"recreated"`         // the flowtable was replaced: its offloaded flows went back to the slow path
	// Rechecked: it was replaced because firewall4's forward-path rules
	// changed (RecheckOnRuleChange), so the new rules see every flow.
	Rechecked bool `json:"rechecked,omitempty"`
}
