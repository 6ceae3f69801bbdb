package plan

import (
	"fmt"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/config"
	"github.com/fastpath-wrt/fastpath/src/observe"
)

// mode decides the requested and effective offload mode. The firewall's
// switches are the user's intent; fastpath.main.hw_offload is its policy
// for hardware, fastpath.main.sqm_policy what wins over SQM; the chipset
// and the kernel have the last word.
func (p *Plan) mode(s observe.Snapshot, c Constraints, shaped []shapedPath) Mode {
	off, fp := s.Settings.Offload, s.Settings.Fastpath
	chip := chipName(s)
	if s.Platform.HWOffloadReason != "" {
		p.note("platform", "%s", s.Platform.HWOffloadReason)
	}
	m := Mode{Requested: ModeOff}
	switch {
	case !off.FlowOffloading:
		m.Effective = ModeOff
		m.Reason = "flow offloading is off (firewall.@defaults[0].flow_offloading=0)"
	case fp.HWOffload == config.HWAuto:
		m.Requested = ModeHardware
		m.Reason = "hw_offload=auto: hardware offload wherever the chipset can"
	case off.FlowOffloadingHW && fp.HWOffload == config.HWOff:
		m.Requested = ModeSoftware
		m.Reason = "flow_offloading_hw=1, but fastpath.main.hw_offload=off: software offload"
	case off.FlowOffloadingHW:
		m.Requested = ModeHardware
		m.Reason = "hardware offload requested (firewall.@defaults[0].flow_offloading_hw=1)"
	case c.HWCorrected != "":
		m.Requested = ModeSoftware
		m.Reason = c.HWCorrected + " (flow_offloading_hw was set back to 0)"
	default:
		m.Requested = ModeSoftware
		m.Reason = "software offload requested (firewall.@defaults[0].flow_offloading=1)"
	}
	if m.Requested == ModeOff {
		p.note("mode", "%s", m.Reason)
		if !p.Enabled {
			p.note("mode", "fastpath is disabled (fastpath.main.enabled=0): its tables are removed")
		}
		return m
	}
	m.Effective = m.Requested
	keepsSQM := false
	if m.Requested == ModeHardware {
		switch {
		case !s.Platform.HWOffloadCapable:
			m.Effective = ModeSoftware
			m.Reason = fmt.Sprintf("hw offload requested, but %s has no flow-offload engine: software offload", chip)
		case len(shaped) > 0 && fp.SQMPolicy != config.SQMPreferHW:
			keepsSQM = true
			m.Effective = ModeSoftware
			m.Reason = fmt.Sprintf("hw offload requested, but SQM shapes %s, and hardware offload forwards past every qdisc: software offload keeps the shaping (fastpath.main.sqm_policy=prefer_sqm; prefer_hw runs hardware anyway)", describeShaped(shaped))
		case c.HardwareRefused != "":
			m.Effective = ModeSoftware
			m.Reason = fmt.Sprintf("hw offload requested, but the kernel refused it on these devices (%s): software offload", c.HardwareRefused)
		default:
			m.Reason = fmt.Sprintf("hardware offload on %s (%s)", chip, s.Platform.HWOffloadEngine)
		}
	}
	if !p.Enabled {
		m.Effective = ModeOff
		m.Reason = "fastpath is disabled (fastpath.main.enabled=0): its tables are removed and fw4's own flowtable, if any, does the offloading"
	}
	p.note("mode", "%s", m.Reason)
	switch {
	case len(shaped) == 0 || !p.Enabled:
	case m.Effective == ModeHardware:
		p.note("sqm", "SQM shapes %s, but hardware offload forwards offloaded flows past every qdisc: they are not shaped (fastpath.main.sqm_policy=prefer_hw)", describeShaped(shaped))
	case !keepsSQM:
		p.note("sqm", "SQM shapes %s; software offload keeps it shaping: offloaded packets leave through the egress qdisc, and SQM's ingress mirror runs before the flowtable", describeShaped(shaped))
	}
	// SQM's choice is not the kernel's refusal: fw4 can load its own
	// hardware flowtable, so flow_offloading_hw stays as the user set it.
	if p.Enabled && off.FlowOffloadingHW && m.Effective != ModeHardware && m.Requested == ModeHardware && !keepsSQM {
		p.UCIFixes = append(p.UCIFixes, UCIFix{
			Package: "firewall", Section: "@defaults[0]", Option: "flow_offloading_hw", Value: "0",
			Reason: "hardware offload cannot run here, and fw4 fails to load a flowtable with flags offload that the kernel refuses",
		})
		p.note("uci", "firewall.@defaults[0].flow_offloading_hw set to 0 so fw4 keeps loading")
	}
	return m
}

func chipName(s observe.Snapshot) string {
	if s.Platform.SoC == "" || s.Platform.SoC == "unknown" {
		return "this chipset"
	}
	return upper(s.Platform.SoC)
}

// upper writes a chip name as vendors do: the letters before the first
// digit in capitals (mt7621 -> MT7621, ipq40xx -> IPQ40xx); x86 stays x86.
func upper(s string) string {
	if strings.HasPrefix(s, "x86") {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if c >= '0' && c <= '9' {
			break
		}
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
