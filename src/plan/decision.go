package plan

// Modes, in the order of how much they offload.
const (
	ModeOff      = "off"
	ModeSoftware = "software"
	ModeHardware = "hardware"
)

// Mode is what was asked for and what runs, with the reason they differ.
type Mode struct {
	Requested string `json:"requested"` // off, software, hardware
	Effective string `json:"effective"` // what the kernel really runs
	Reason    string `json:"reason"`
}

// Decision is one step of the plan and why it was taken.
type Decision struct {
	Topic  string `json:"topic"` // "mode", "device", "tunnel", "cut", "uci"
	Reason string `json:"reason"`
}

// Tunnel is one tunnel interface and whether its flows take the fast path.
type Tunnel struct {
	Interface  string `json:"interface"` // UCI interface name
	Kind       string `json:"kind"`      // its proto: ipip, dslite, map, 6in4, gre, wireguard, ...
	Device     string `json:"device"`    // tunnel netdev, e.g. "ipip-wan6"
	Remote     string `json:"remote"`
	Local      string `json:"local,omitempty"`
	Underlay   string `json:"underlay"` // physical device carrying the tunnel
	InFastpath bool   `json:"in_fastpath"`
	Reason     string `json:"reason"`
}
