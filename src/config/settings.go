// Package config turns the UCI files fastpath reads (firewall, network,
// fastpath, sqm) into typed, validated settings; bad values fall back to their
// defaults with a problem that names the option and the fix.
package config

import (
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
)

// Hardware-offload policies of fastpath.main.hw_offload.
const (
	HWFollow = "follow" // do what firewall.@defaults[0].flow_offloading_hw says
	HWAuto   = "auto"   // hardware wherever the chipset can
	HWOff    = "off"    // never hardware
)

// SQM policies of fastpath.main.sqm_policy: what wins when hardware
// offload would run on a path that SQM shapes (the PPE forwards without the
// CPU, past every qdisc).
const (
	SQMPreferSQM = "prefer_sqm" // software offload there: the qdiscs keep shaping
	SQMPreferHW  = "prefer_hw"  // hardware anyway: offloaded flows are not shaped
)

// Settings is everything fastpath takes from UCI.
type Settings struct {
	Offload  Offload  `json:"offload"`
	Fastpath Fastpath `json:"fastpath"`
	Network  Network  `json:"network"`
	// SQM lists the enabled queues of /etc/config/sqm (sqm-scripts).
	SQM []SQMQueue `json:"sqm,omitempty"`
	// Problems are values that were ignored, each naming the option and
	// the fix; the setting's default was used instead.
	Problems []string `json:"problems,omitempty"`
}

// Offload holds the firewall's own switches, the user's intent.
type Offload struct {
	FlowOffloading   bool   `json:"flow_offloading"`
	FlowOffloadingHW bool   `json:"flow_offloading_hw"`
	Section          string `json:"section"` // the defaults section's address, for writing back
}

// Fastpath holds /etc/config/fastpath.
type Fastpath struct {
	Enabled       bool          `json:"enabled"`
	HWOffload     string        `json:"hw_offload"`
	CutInFastpath bool          `json:"cut_in_fastpath"`
	CutExpiry     time.Duration `json:"cut_expiry"`
	CutSetSize    int           `json:"cut_set_size"`
	CutMinPrefix4 int           `json:"cut_min_prefix4"`
	CutMinPrefix6 int           `json:"cut_min_prefix6"`
	CutBackend    string        `json:"cut_backend"` // cut.BackendAuto, BackendXDP or BackendNetdev
	// XDPForward sends established flows of fastpath's flowtable out in
	// the driver (bpf_xdp_flow_lookup) where the XDP cut runs.
	XDPForward bool `json:"xdp_forward"`
	// OffloadAfterPackets > 0 leaves a connection's first packets in the
	// slow path (inspectors such as DPI tools need them).
	OffloadAfterPackets uint64 `json:"offload_after_packets,omitempty"`
	SQMPolicy           string `json:"sqm_policy"`
	// RecheckOnRuleChange sends every offloaded flow back through the
	// slow path once when firewall4's forward-path rules really change.
	RecheckOnRuleChange bool                  `json:"recheck_on_rule_change"`
	LogLevel            string                `json:"log_level"`
	ExtraDevices        []string              `json:"extra_devices,omitempty"`
	Blocklists          []cut.BlocklistConfig `json:"blocklists,omitempty"`
}

// Network holds the interfaces of /etc/config/network.
type Network struct {
	Interfaces []Interface `json:"interfaces"`
	Devices    []Device    `json:"devices,omitempty"`
}

// Interface is one `config interface` section.
type Interface struct {
	Name     string `json:"name"`
	Proto    string `json:"proto"`
	Device   string `json:"device,omitempty"` // option device (21.02+) or ifname
	Disabled bool   `json:"disabled,omitempty"`
	// Tunnels (proto ipip, dslite, map, 6in4, gre, ...).
	PeerAddr string `json:"peeraddr,omitempty"`
	IPAddr   string `json:"ipaddr,omitempty"`
	TunLink  string `json:"tunlink,omitempty"`
	IP6Addr  string `json:"ip6addr,omitempty"`    // dslite: the local IPv6 end
	Type     string `json:"type,omitempty"`       // map: map-e (default), map-t, lw4o6
	EncapLim string `json:"encaplimit,omitempty"` // dslite, map: "ignore" or a number
}

// SQMQueue is one enabled `config queue` of /etc/config/sqm.
type SQMQueue struct {
	Section string `json:"section"`         // its UCI address, e.g. sqm.eth1
	Device  string `json:"device"`          // option interface: the Linux device it shapes
	Qdisc   string `json:"qdisc,omitempty"` // e.g. cake, fq_codel
}

// Device is one `config device` section (bridges and their ports).
type Device struct {
	Name  string   `json:"name"`
	Type  string   `json:"type,omitempty"`
	Ports []string `json:"ports,omitempty"`
}

// Defaults are the settings of a router without /etc/config/fastpath.
func Defaults() Fastpath {
	return Fastpath{
		Enabled:             true,
		HWOffload:           HWFollow,
		CutInFastpath:       true,
		CutExpiry:           cut.DefaultExpiry,
		CutSetSize:          cut.DefaultSetSize,
		SQMPolicy:           SQMPreferSQM,
		RecheckOnRuleChange: true,
		CutMinPrefix4:       cut.DefaultMinPrefix4,
		CutMinPrefix6:       cut.DefaultMinPrefix6,
		CutBackend:          cut.BackendAuto,
		LogLevel:            "info",
	}
}
