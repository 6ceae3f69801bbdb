// Package plan decides, without touching anything, what fastpath should
// make of a snapshot: the offload mode, the flowtable's devices (IPIP
// underlays included), the cut's devices and the UCI corrections — each
// with the reason a person can read.
package plan

import (
	"fmt"
	"sort"

	"github.com/fastpath-wrt/fastpath/src/config"
	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/observe"
)

// Plan is the desired state.
type Plan struct {
	Enabled   bool                   `json:"enabled"` // fastpath.main.enabled
	Mode      Mode                   `json:"mode"`
	Flowtable netstate.FlowtableSpec `json:"flowtable"`
	Tunnels   []Tunnel               `json:"tunnels"`
	Cut       Cut                    `json:"cut"`
	UCIFixes  []UCIFix               `json:"uci_fixes,omitempty"`
	Decisions []Decision             `json:"decisions"`

	stalled []int // Tunnels whose offloaded flows stall where their underlay is listed (markTunnels)
}

// Cut is where and how the verdict cut runs.
type Cut struct {
	Enabled    bool       `json:"enabled"`
	InFastpath bool       `json:"in_fastpath"`
	Devices    []string   `json:"devices"`
	Config     cut.Config `json:"config"`
}

// UCIFix is an option fastpath corrects so the firewall stays loadable.
type UCIFix struct {
	Package string `json:"package"`
	Section string `json:"section"`
	Option  string `json:"option"`
	Value   string `json:"value"`
	Reason  string `json:"reason"`
}

func (f UCIFix) String() string {
	return fmt.Sprintf("%s.%s.%s=%s", f.Package, f.Section, f.Option, f.Value)
}

// Constraints are what an earlier apply learned from the kernel.
type Constraints struct {
	// HardwareRefused is set when the kernel refused "flags offload" on
	// the planned devices; the text is the kernel's answer.
	HardwareRefused string
	// HWCorrected is the reason fastpath set flow_offloading_hw back to 0
	// earlier, so the mode keeps explaining itself after the correction.
	HWCorrected string
}

// Make computes the plan. It is pure: same inputs, same plan.
func Make(s observe.Snapshot, c Constraints) Plan {
	p := Plan{Enabled: s.Settings.Fastpath.Enabled}
	for _, pr := range s.Settings.Problems {
		p.note("config", pr)
	}
	devices := p.flowtableDevices(s)
	p.Mode = p.mode(s, c, shapedPaths(s, devices))
	p.Flowtable = netstate.FlowtableSpec{
		Enabled:  p.Enabled && p.Mode.Effective != ModeOff,
		Devices:  devices,
		Hardware: p.Mode.Effective == ModeHardware,
		Counter:  true,
	}
	if n := s.Settings.Fastpath.OffloadAfterPackets; n > 0 {
		p.Flowtable.OffloadAfterPackets = n
		if p.Flowtable.Enabled {
			p.note("flowtable", "the first %d packets of each connection (both directions counted) take the slow path before it is offloaded (offload_after_packets): inspectors see them", n)
		}
	}
	p.Flowtable.FirewallDigest = s.Firewall.Digest
	p.Flowtable.RecheckOnRuleChange = s.Settings.Fastpath.RecheckOnRuleChange
	if p.Flowtable.Enabled {
		p.noteRecheck(s)
	}
	if p.Flowtable.Enabled && len(devices) == 0 {
		p.note("device", "no routed interface has a device that exists now: the flowtable has no devices until one appears")
	}
	p.markTunnels(s)
	p.Cut = Cut{
		Enabled:    p.Enabled,
		InFastpath: p.Enabled && s.Settings.Fastpath.CutInFastpath,
		Devices:    devices,
		Config: cut.Config{
			Enabled:    p.Enabled,
			InFastpath: p.Enabled && s.Settings.Fastpath.CutInFastpath,
			Expiry:     s.Settings.Fastpath.CutExpiry,
			SetSize:    s.Settings.Fastpath.CutSetSize,
			MinPrefix4: s.Settings.Fastpath.CutMinPrefix4,
			MinPrefix6: s.Settings.Fastpath.CutMinPrefix6,
			Backend:    s.Settings.Fastpath.CutBackend,
			Blocklists: s.Settings.Fastpath.Blocklists,
		},
	}
	p.Cut.Config.XDPForward = p.planXDPForward(s)
	if p.Enabled && !s.Settings.Fastpath.CutInFastpath {
		p.note("cut", "cut_in_fastpath is off: a cut only deletes the conntrack entry, and a sender that keeps sending reaches the stack")
	} else if p.Enabled {
		p.note("cut", "%s", backendNote(s.Settings.Fastpath.CutBackend))
	}
	return p
}

// noteRecheck says what a change of firewall4's rules does to offloaded
// flows, and what fastpath compares.
func (p *Plan) noteRecheck(s observe.Snapshot) {
	why := "recheck_on_rule_change is off: offloaded flows stay offloaded when firewall4's rules change, so new rules see only new connections"
	if s.Settings.Fastpath.RecheckOnRuleChange {
		why = "recheck_on_rule_change is on: when firewall4's forward-path rules really change, every offloaded flow takes the slow path once, so the new rules decide (a reload that re-renders the same rules keeps every flow); " + s.Firewall.Text()
	}
	p.Decisions = append(p.Decisions, Decision{Topic: "recheck", Reason: why})
}

// planXDPForward decides xdp_forward: the forward stage runs in the XDP
// cut's program, after the cut, on a software flowtable.
func (p *Plan) planXDPForward(s observe.Snapshot) bool {
	f := s.Settings.Fastpath
	if !f.XDPForward {
		return false
	}
	why := ""
	switch {
	case !p.Flowtable.Enabled:
		why = "the flowtable is off"
	case p.Flowtable.Hardware:
		why = "the flowtable offloads in hardware, which forwards ahead of any XDP program"
	case !f.CutInFastpath || f.CutBackend == cut.BackendNetdev:
		why = "it runs in the XDP cut's program, after the cut, and here the cut does not run in XDP (cut_in_fastpath 0 or cut_backend netdev); a forward ahead of a netdev cut would let cut frames through"
	}
	shaped := shapedPaths(s, p.Flowtable.Devices)
	if why == "" && len(shaped) > 0 && f.SQMPolicy != config.SQMPreferHW {
		why = "XDP sends frames out past every qdisc, so SQM would stop shaping the flows it forwards (" + describeShaped(shaped) + "); sqm_policy prefer_hw forwards in XDP anyway, unshaped"
	}
	if why != "" {
		p.note("xdp", "xdp_forward is on, but not used: %s", why)
		return false
	}
	if len(shaped) > 0 {
		p.note("xdp", "xdp_forward with sqm_policy prefer_hw: the flows XDP forwards go out past SQM's qdisc, unshaped (%s)", describeShaped(shaped))
	}
	p.note("xdp", "xdp_forward is on: established flows of fastpath's flowtable are sent out by XDP in the driver of each device that runs the XDP cut (Linux 6.11 and later with BTF; the status says where it runs and why not); the kernel's XDP lookup finds only the first flowtable that lists a device, so a firewall4 flowtable made before fastpath's takes it until firewall4 reloads")
	return true
}

// backendNote says where cut frames will be dropped: which device runs
// which backend is known only once the daemon tries native XDP on it.
func backendNote(backend string) string {
	if backend == cut.BackendNetdev {
		return "cut_backend is netdev: cut frames are dropped by the netdev ingress table on every device"
	}
	veths := " and on veths"
	if backend == cut.BackendXDP {
		veths = ""
	}
	return "cut_backend is " + backend + ": cut frames are dropped by native XDP in the driver where it attaches, by the netdev ingress table on devices without native XDP or with another XDP program" + veths + " (the status shows which and why)"
}

func (p *Plan) note(topic, format string, args ...any) {
	p.Decisions = append(p.Decisions, Decision{Topic: topic, Reason: fmt.Sprintf(format, args...)})
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
