// Package status defines the report fastpath gives about itself: the plan's
// decisions with their reasons beside the kernel's truth. The CLI, the ubus
// object and the LuCI app all speak this one shape.
package status

import (
	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/plan"
	"github.com/fastpath-wrt/fastpath/src/platform"
	"github.com/fastpath-wrt/fastpath/src/ppe"
	"github.com/fastpath-wrt/fastpath/src/supervise"
)

// Status is the answer of `fastpath status`, `ubus call fastpath status`.
type Status struct {
	Version   string              `json:"version"`
	Mode      plan.Mode           `json:"mode"`
	Decisions []plan.Decision     `json:"decisions"`
	Platform  platform.Info       `json:"platform"`
	Flowtable Flowtable           `json:"flowtable"`
	Flows     netstate.FlowCounts `json:"flows"`
	// HWFlows is what the SoC's offload engine itself has bound, read
	// with the counts (a MediaTek PPE's debugfs tables).
	HWFlows ppe.Summary             `json:"hw_flows"`
	Kernel  netstate.KernelFeatures `json:"kernel"`
	Tunnels []plan.Tunnel           `json:"tunnels"`
	Cut     cut.Summary             `json:"cut"`
	Recheck Recheck                 `json:"recheck"`
	// Watchers are the daemon's event sources; a degraded one says since
	// when and why (it is also named in Errors).
	Watchers []supervise.Source `json:"watchers"`
	Errors   []string           `json:"errors,omitempty"`
	// ErrorsTotal: how many when an answer holds only the first; 0 when whole.
	ErrorsTotal int `json:"errors_total,omitempty"`
}

// Flowtable is the planned flowtable beside the one the kernel has.
type Flowtable struct {
	Table   string                   `json:"table"` // "inet fastpath"
	Name    string                   `json:"name"`
	Devices []string                 `json:"devices"` // planned
	Flags   []string                 `json:"flags"`   // planned: "counter", "offload"
	Kernel  netstate.KernelFlowtable `json:"kernel"`  // read back
	InSync  bool                     `json:"in_sync"`
}

// Recheck is what recheck_on_rule_change compares, and what it did last.
type Recheck struct {
	_       [0]func() // not comparable: no equality function in the binary (flash)
	Enabled bool      `json:"enabled"`
	// Firewall is firewall4's forward-path rules as read now: chains,
	// rules and digest, or why there is none.
	Firewall string `json:"firewall"`
	Digest   string `json:"digest,omitempty"`
	// Recorded is the digest our rule records: the rules the offloaded
	// flows were last checked against.
	Recorded string `json:"recorded,omitempty"`
	// Last is the last change of the rules this daemon saw (nil: none).
	Last *RecheckEvent `json:"last,omitempty"`
}

// RecheckEvent is one change of firewall4's forward-path rules.
type RecheckEvent struct {
	_      [0]func() // not comparable: no equality function in the binary (flash)
	At     string    `json:"at"`     // RFC 3339
	Flows  int       `json:"flows"`  // offloaded flows sent back through the slow path (0 when not re-checked)
	Reason string    `json:"reason"` // what happened, for people
}
