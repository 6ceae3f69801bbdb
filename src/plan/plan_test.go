package plan

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/config"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/observe"
	"github.com/fastpath-wrt/fastpath/src/platform"
)

// lab is the seed-001 router: lan0, underlay wan0, tunnel ipip-tun.
func lab(peer string) observe.Snapshot {
	s := observe.Snapshot{
		Settings: config.Settings{
			Offload:  config.Offload{FlowOffloading: true},
			Fastpath: config.Defaults(),
			Network: config.Network{Interfaces: []config.Interface{
				{Name: "loopback", Proto: "static", Device: "lo"},
				{Name: "lan", Proto: "static", Device: "lan0"},
				{Name: "wan", Proto: "static", Device: "wan0"},
				{Name: "tun", Proto: "ipip", PeerAddr: peer, IPAddr: "192.168.1.1"},
			}},
		},
		Platform: platform.Info{SoC: "unknown", Devices: []platform.Device{
			{Name: "lo", Kind: "loopback"}, {Name: "lan0", Kind: "ether"}, {Name: "wan0", Kind: "ether"}, {Name: "ipip-tun", Kind: "ipip"},
		}},
		Routes: []observe.Route{
			{Dst: netip.MustParsePrefix("192.168.0.0/24"), Device: "lan0"},
			{Dst: netip.MustParsePrefix("192.168.1.0/24"), Device: "wan0"},
			{Dst: netip.MustParsePrefix("0.0.0.0/0"), Device: "ipip-tun"},
		},
		Kernel: netstate.KernelFeatures{Release: "7.2.13+deb14-amd64", Flowtable: true, IPIPRxAccel: true},
	}
	return s
}

func TestTunnelUnderlayByRoute(t *testing.T) {
	p := Make(lab("192.168.1.2"), Constraints{})
	if want := []string{"lan0", "wan0"}; !slices.Equal(p.Flowtable.Devices, want) {
		t.Fatalf("devices %v, want %v", p.Flowtable.Devices, want)
	}
	if len(p.Tunnels) != 1 || p.Tunnels[0].Underlay != "wan0" || !p.Tunnels[0].InFastpath {
		t.Fatalf("tunnels = %+v", p.Tunnels)
	}
}

// With mwan3 or pbr a policy rule may send the peer out of a second WAN
// that the main table knows nothing of: the kernel's answer wins.
func TestTunnelUnderlayByPolicyRoute(t *testing.T) {
	s := lab("192.168.1.2")
	s.Settings.Network.Interfaces = append(s.Settings.Network.Interfaces, config.Interface{Name: "wanb", Proto: "static", Device: "wan1"})
	s.Platform.Devices = append(s.Platform.Devices, platform.Device{Name: "wan1", Kind: "ether"})
	s.PeerRoutes = map[string]observe.Route{
		"192.168.1.2": {Dst: netip.MustParsePrefix("192.168.1.2/32"), Device: "wan1", Table: 100},
	}
	p := Make(s, Constraints{})
	if len(p.Tunnels) != 1 || p.Tunnels[0].Underlay != "wan1" {
		t.Fatalf("tunnels = %+v, want underlay wan1 (the kernel's route)", p.Tunnels)
	}
	if r := p.Tunnels[0].Reason; !strings.Contains(r, "policy rules applied: table 100") {
		t.Fatalf("reason %q does not say the policy route was used", r)
	}
	s.PeerRoutes = nil // a fixture tree, or no answer from the kernel
	p = Make(s, Constraints{})
	if p.Tunnels[0].Underlay != "wan0" || !strings.Contains(p.Tunnels[0].Reason, "in the main table") {
		t.Fatalf("without the kernel's answer: tunnel = %+v, want wan0 from the main table", p.Tunnels[0])
	}
}

func TestTunnelUnderlayOnlyFromTheTunnel(t *testing.T) {
	s := lab("192.168.1.2")
	s.Settings.Network.Interfaces[2].Disabled = true // wan not routed: only the tunnel brings wan0 in
	p := Make(s, Constraints{})
	if want := []string{"lan0", "wan0"}; !slices.Equal(p.Flowtable.Devices, want) {
		t.Fatalf("devices %v, want %v: the underlay must be listed for the tunnel alone", p.Flowtable.Devices, want)
	}
}

func TestTunnelOnOldKernel(t *testing.T) {
	s := lab("192.168.1.2")
	s.Kernel.Release, s.Kernel.IPIPRxAccel = "6.12.43+deb12-amd64", false
	p := Make(s, Constraints{})
	tun := p.Tunnels[0]
	if tun.InFastpath || !strings.Contains(tun.Reason, "cannot follow ipip tunnels (Linux 6.19 and newer can, both ways)") {
		t.Fatalf("tunnel = %+v", tun)
	}
}

func TestTunnelProblems(t *testing.T) {
	for peer, want := range map[string]string{
		"":               "is not an IPv4 address",
		"peer.example":   "is not an IPv4 address",
		"198.51.100.200": "goes through the tunnel itself", // only the default route, via the tunnel
	} {
		p := Make(lab(peer), Constraints{})
		if len(p.Tunnels) != 1 || p.Tunnels[0].Underlay != "" || !strings.Contains(p.Tunnels[0].Reason, want) {
			t.Errorf("peer %q: tunnels = %+v, want a reason containing %q", peer, p.Tunnels, want)
		}
		if slices.Contains(p.Flowtable.Devices, "ipip-tun") {
			t.Errorf("peer %q: the tunnel device was listed", peer)
		}
	}
}

func TestHardwareRefusedFallsBackAndCorrectsUCI(t *testing.T) {
	s := lab("192.168.1.2")
	s.Settings.Offload.FlowOffloadingHW = true
	s.Platform.SoC, s.Platform.HWOffloadCapable, s.Platform.HWOffloadEngine = "mt7621", true, "MediaTek PPE"
	p := Make(s, Constraints{})
	if p.Mode.Effective != ModeHardware || !p.Flowtable.Hardware || len(p.UCIFixes) != 0 {
		t.Fatalf("capable chip: mode %+v fixes %v", p.Mode, p.UCIFixes)
	}
	p = Make(s, Constraints{HardwareRefused: "Operation not supported"})
	if p.Mode.Effective != ModeSoftware || p.Flowtable.Hardware || len(p.UCIFixes) != 1 ||
		!strings.Contains(p.Mode.Reason, "kernel refused") {
		t.Fatalf("refused: mode %+v fixes %v", p.Mode, p.UCIFixes)
	}
}

func TestHWCorrectedKeepsExplaining(t *testing.T) {
	s := lab("192.168.1.2")
	p := Make(s, Constraints{HWCorrected: "hw offload requested, but this chipset has no flow-offload engine: software offload"})
	if p.Mode.Effective != ModeSoftware || !strings.Contains(p.Mode.Reason, "set back to 0") || len(p.UCIFixes) != 0 {
		t.Fatalf("mode %+v fixes %v", p.Mode, p.UCIFixes)
	}
}

func TestMakeIsDeterministic(t *testing.T) {
	s := lab("192.168.1.2")
	a, b := Make(s, Constraints{}), Make(s, Constraints{})
	if !slices.Equal(a.Flowtable.Devices, b.Flowtable.Devices) || !slices.Equal(a.Decisions, b.Decisions) {
		t.Fatal("two plans of one snapshot differ")
	}
}

func TestResolveFollowsBridgesAndVLANs(t *testing.T) {
	r := resolver{devs: map[string]platform.Device{
		"br-lan": {Name: "br-lan", Kind: "bridge", Lower: []string{"lan1", "wlan0"}},
		"lan1":   {Name: "lan1", Kind: "dsa-user", Lower: []string{"eth0"}},
		"wlan0":  {Name: "wlan0", Kind: "wireless"},
		"eth0.2": {Name: "eth0.2", Kind: "vlan", Lower: []string{"eth0"}},
		"eth0":   {Name: "eth0", Kind: "dsa-conduit"},
	}, bridges: map[string][]string{"br-down": {"lan1"}}}
	for dev, want := range map[string][]string{
		"br-lan":  {"lan1", "wlan0"},
		"eth0.2":  {"eth0"},
		"br-down": {"lan1"}, // a bridge that is down: its UCI ports
		"missing": nil,
	} {
		if got := r.resolve(dev); !slices.Equal(got, want) {
			t.Errorf("resolve(%s) = %v, want %v", dev, got, want)
		}
	}
}

// offload_after_packets reaches the flowtable's rule and says why, in
// either mode; off, it is not mentioned.
func TestOffloadAfterPackets(t *testing.T) {
	s := lab("192.168.1.2")
	s.Settings.Fastpath.OffloadAfterPackets = 30
	p := Make(s, Constraints{})
	if p.Flowtable.OffloadAfterPackets != 30 {
		t.Fatalf("flowtable spec %+v, want offload after 30 packets", p.Flowtable)
	}
	said := func(p Plan) bool {
		for _, d := range p.Decisions {
			if d.Topic == "flowtable" && strings.Contains(d.Reason, "first 30 packets") && strings.Contains(d.Reason, "offload_after_packets") {
				return true
			}
		}
		return false
	}
	if !said(p) {
		t.Errorf("no decision explains offload_after_packets: %+v", p.Decisions)
	}
	s.Settings.Offload.FlowOffloading = false
	if p := Make(s, Constraints{}); p.Flowtable.Enabled || said(p) {
		t.Errorf("offload off: flowtable %+v, decisions %+v", p.Flowtable, p.Decisions)
	}
}

// xdp_forward is planned only where the XDP cut runs on a software
// flowtable, and each refusal says why.
func TestXDPForwardPlanned(t *testing.T) {
	xdpNote := func(p Plan) string {
		for _, d := range p.Decisions {
			if d.Topic == "xdp" {
				return d.Reason
			}
		}
		return ""
	}
	for _, c := range []struct {
		name string
		set  func(*observe.Snapshot)
		want bool
		why  string
	}{
		{"off", func(s *observe.Snapshot) { s.Settings.Fastpath.XDPForward = false }, false, ""},
		{"software flowtable", func(*observe.Snapshot) {}, true, "xdp_forward is on: established flows"},
		{"no flowtable", func(s *observe.Snapshot) { s.Settings.Offload.FlowOffloading = false }, false, "the flowtable is off"},
		{"hardware", func(s *observe.Snapshot) {
			s.Settings.Offload.FlowOffloadingHW = true
			s.Platform.SoC, s.Platform.HWOffloadCapable, s.Platform.HWOffloadEngine = "mt7621", true, "MediaTek PPE"
		}, false, "offloads in hardware"},
		{"netdev cut", func(s *observe.Snapshot) { s.Settings.Fastpath.CutBackend = "netdev" }, false, "does not run in XDP"},
		{"conntrack-only cut", func(s *observe.Snapshot) { s.Settings.Fastpath.CutInFastpath = false }, false, "does not run in XDP"},
		{"SQM on wan0", func(s *observe.Snapshot) {
			s.Shapers = []observe.Shaper{{Device: "wan0", Evidence: []string{"root qdisc cake"}}}
		}, false, "SQM would stop shaping"},
		{"SQM on wan0, prefer_hw", func(s *observe.Snapshot) {
			s.Shapers = []observe.Shaper{{Device: "wan0", Evidence: []string{"root qdisc cake"}}}
			s.Settings.Fastpath.SQMPolicy = config.SQMPreferHW
		}, true, "unshaped"},
	} {
		s := lab("192.168.1.2")
		s.Settings.Fastpath.XDPForward = true
		c.set(&s)
		p := Make(s, Constraints{})
		if p.Cut.Config.XDPForward != c.want {
			t.Errorf("%s: planned XDPForward %v, want %v", c.name, p.Cut.Config.XDPForward, c.want)
		}
		if note := xdpNote(p); c.why == "" && note != "" || !strings.Contains(note, c.why) {
			t.Errorf("%s: xdp decision %q, want one with %q", c.name, note, c.why)
		}
	}
}
