// Package cut holds what the verdict cut is made of, without the kernel:
// its settings, a cut's record and the cut part of the status, the set key
// of a tuple, block-list parsing, and the nft text of its netdev table (an
// ingress chain per device, ahead of the flowtable, dropping frames of
// 5-tuples in timeout sets that every matching frame keeps alive).
// cut/blocklist follows the block lists; cut/engine applies the cut.
package cut

import (
	"time"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// Verdict is what an inspector or a block list decides for a connection.
type Verdict string

const (
	VerdictDrop    Verdict = "drop"    // cut: drop in the fast path, both ways
	VerdictForward Verdict = "forward" // clear the cut; the flow may be offloaded again
)

// Tuple is one direction of a connection, the key of a cut. It is the
// tuple conntrack reports (netstate.Tuple), so a flow's tuples are cut as
// they are read.
type Tuple = netstate.Tuple

// CutOptions are what a call may ask beyond the rules.
type CutOptions struct {
	Force bool // cut a prefix shorter than cut_min_prefix4/6
	Local bool // cut connections of the router itself (its SSH, LuCI, DNS) too
}

// Cut is one active cut as the kernel's sets show it.
type Cut struct {
	Original   Tuple         `json:"original"`
	Reply      Tuple         `json:"reply"`
	Reason     string        `json:"reason"`
	Trigger    string        `json:"trigger"` // "blocklist:<name>", "ubus", "cli", ...
	Since      time.Time     `json:"since"`
	ExpiresIn  time.Duration `json:"-"`
	Expires    float64       `json:"expires_in_s"` // seconds until the set element expires
	Frames     uint64        `json:"frames"`       // frames dropped (element counter / 2)
	Bytes      uint64        `json:"bytes"`
	InFastpath bool          `json:"in_fastpath"` // false when it fell back to conntrack deletion only
}

// Summary is the cut part of fastpath's status.
type Summary struct {
	Enabled       bool            `json:"enabled"`
	InFastpath    bool            `json:"in_fastpath"` // cut_in_fastpath setting and kernel support together
	Reason        string          `json:"reason"`      // why in_fastpath is what it is
	Devices       []string        `json:"devices"`
	Backends      []Backend       `json:"backends,omitempty"`    // per device: where its cut frames are dropped
	XDPForward    *ForwardSummary `json:"xdp_forward,omitempty"` // xdp_forward, when set
	Expiry        float64         `json:"expiry_s"`
	SetSize       int             `json:"set_size"`
	Active        int             `json:"active"`
	FramesDropped uint64          `json:"frames_dropped"`
	Blocklists    []Blocklist     `json:"blocklists"`
	Cuts          []Cut           `json:"cuts"`
	Warnings      []string        `json:"warnings,omitempty"`
	// How many there are when an answer holds only the first ones (see
	// src/rpc's fit) or one page; 0 when the list is whole.
	CutsTotal     int `json:"cuts_total,omitempty"`
	WarningsTotal int `json:"warnings_total,omitempty"`
}

// Backend is where one device drops the frames of cut connections.
type Backend struct {
	Device  string `json:"device"`
	Backend string `json:"backend"` // "xdp" (native, in the driver) or "netdev" (ingress table)
	Reason  string `json:"reason"`
}

// Blocklist is one watched source of addresses.
type Blocklist struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"` // "nftset", "banip", "crowdsec", "file", "uci"
	Source  string   `json:"source"`
	Entries int      `json:"entries"`
	Errors  []string `json:"errors,omitempty"` // malformed lines, with line numbers
	// ErrorsTotal: how many when an answer holds only the first; 0 when whole.
	ErrorsTotal int `json:"errors_total,omitempty"`
}

// ForwardSummary is the XDP program's forwarding (xdp_forward): where it
// runs or why not, and its frame counters since it was loaded.
type ForwardSummary struct {
	Active    bool     `json:"active"`
	Reason    string   `json:"reason"`
	Devices   []string `json:"devices,omitempty"`
	Forwarded uint64   `json:"forwarded"` // frames sent out in the driver
	Missed    uint64   `json:"missed"`    // TCP/UDP frames of no flow in the flowtable (first packets, the router's own)
	Passed    uint64   `json:"passed"`    // frames of a flow left to the kernel's flowtable
}
