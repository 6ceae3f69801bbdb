// Package status defines the report fastpath gives about itself: the plan's
// decisions with their reasons beside the kernel's truth. The CLI, the ubus
// object and the LuCI app all speak this one shape.
package status

import (
	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/nft"
	"github.com/fastpath-wrt/fastpath/src/platform"
	"github.com/fastpath-wrt/fastpath/src/supervise"
)

// Modes, in the order of how much they offload.
const (
	ModeOff      = "off"
	ModeSoftware = "software"
	ModeHardware = "hardware"
)

// Status is the answer of `fastpath status`, `ubus call fastpath status`.
type Status struct {
	Version   string        `json:"version"`
	Mode      Mode          `json:"mode"`
	Decisions []Decision    `json:"decisions"`
	Platform  platform.Info `json:"platform"`
	Flowtable Flowtable     `json:"flowtable"`
	Flows     FlowCounts    `json:"flows"`
	Kernel    Kernel        `json:"kernel"`
	Tunnels   []Tunnel      `json:"tunnels"`
	Cut       cut.Summary   `json:"cut"`
	// Watchers are the daemon's event sources; a degraded one says since
	// when and why (it is also named in Errors).
	Watchers []supervise.Source `json:"watchers"`
	Errors   []string           `json:"errors,omitempty"`
	// ErrorsTotal: how many when an answer holds only the first; 0 when whole.
	ErrorsTotal int `json:"errors_total,omitempty"`
}

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

// Flowtable is the planned flowtable beside the one the kernel has.
type Flowtable struct {
	Table   string     `json:"table"` // "inet fastpath"
	Name    string     `json:"name"`
	Devices []string   `json:"devices"` // planned
	Flags   []string   `json:"flags"`   // planned: "counter", "offload"
	Kernel  nft.Kernel `json:"kernel"`  // read back
	InSync  bool       `json:"in_sync"`
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

// Kernel lists the features fastpath depends on and whether they are there.
type Kernel struct {
	Release           string   `json:"release"`
	Flowtable         bool     `json:"flowtable"`
	NetdevTable       bool     `json:"netdev_table"`
	IPIPRxAccel       bool     `json:"ipip_rx_accel"`
	CTDeleteOffloaded bool     `json:"ct_delete_offloaded"` // deleting an offloaded conntrack entry works (>= 6.4)
	Missing           []string `json:"missing,omitempty"`   // human sentences naming module/config
}

// Tunnel is one IPIP interface and whether its underlay is in the fast path.
type Tunnel struct {
	Interface  string `json:"interface"` // UCI interface name
	Device     string `json:"device"`    // tunnel netdev, e.g. "ipip-wan6"
	Remote     string `json:"remote"`
	Local      string `json:"local,omitempty"`
	Underlay   string `json:"underlay"` // physical device carrying the tunnel
	InFastpath bool   `json:"in_fastpath"`
	Reason     string `json:"reason"`
}

// Flow is one conntrack entry as fastpath reports it.
type Flow struct {
	ID       uint32    `json:"id"`
	Family   string    `json:"family"` // "ipv4", "ipv6"
	Proto    string    `json:"proto"`  // "tcp", "udp", ...
	State    string    `json:"state,omitempty"`
	Original cut.Tuple `json:"original"`
	Reply    cut.Tuple `json:"reply"`
	Offload  string    `json:"offload"` // "", "software", "hardware"
	Assured  bool      `json:"assured"`
	Packets  uint64    `json:"packets"` // both directions; 0 when accounting is off
	Bytes    uint64    `json:"bytes"`
	Timeout  uint32    `json:"timeout_s"`
	Mark     uint32    `json:"mark,omitempty"`
	// Local: the router itself is an end (LuCI, SSH, DNS to the router);
	// cutting such a flow can lock its admin out.
	Local bool `json:"local,omitempty"`
}
