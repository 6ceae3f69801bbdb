package plan

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/config"
	"github.com/fastpath-wrt/fastpath/src/observe"
)

// kinds is the lab router with one tunnel interface of the given UCI
// proto instead of the ipip one; wan0 also carries IPv6 (fd00:2::/64).
func kinds(tun config.Interface) observe.Snapshot {
	s := lab("192.168.1.2")
	s.Settings.Network.Interfaces[3] = tun
	s.Routes = append(s.Routes, observe.Route{Dst: netip.MustParsePrefix("fd00:2::/64"), Device: "wan0"})
	s.Kernel.IP6TnlPath = true
	return s
}

func TestTunnelKinds(t *testing.T) {
	for _, c := range []struct {
		name    string
		tun     config.Interface
		device  string
		listed  bool
		fast    bool
		because string
	}{
		// Linux 7.x follows ip6tnl as if it carried IPv6: an offloaded
		// DS-Lite flow stalls, so its underlay is never listed for it.
		{"dslite by route", config.Interface{Name: "dsl", Proto: "dslite", PeerAddr: "fd00:2::2"}, "ds-dsl", false, false,
			"WARNING: kernel 7.2.13+deb14-amd64 follows ip6tnl tunnels to their underlay as if they carried IPv6"},
		{"dslite by tunlink alias", config.Interface{Name: "dsl", Proto: "dslite", PeerAddr: "fd00:2::2", TunLink: "wan6"}, "ds-dsl", false, false,
			"its underlay wan0 (tunlink wan6) is not listed for it: its flows stay in the slow path"},
		{"dslite with encaplimit", config.Interface{Name: "dsl", Proto: "dslite", PeerAddr: "fd00:2::2", EncapLim: "4"}, "ds-dsl", false, false,
			"encaplimit 4 puts a destination option in every packet"},
		{"dslite to an IPv4 peer", config.Interface{Name: "dsl", Proto: "dslite", PeerAddr: "192.168.1.2"}, "ds-dsl", false, false,
			"is not an IPv6 address"},
		{"map-e", config.Interface{Name: "wanmap", Proto: "map", PeerAddr: "fd00:2::2", TunLink: "wan6"}, "map-wanmap", false, false,
			"interface wanmap (map, MAP-E: IPv4 in IPv6, ip6tnl), map-wanmap: WARNING"},
		{"map-t", config.Interface{Name: "wanmap", Proto: "map", Type: "map-t", PeerAddr: "fd00:2::2"}, "map-wanmap", false, false,
			"type map-t translates in the nat46 module"},
		{"6in4", config.Interface{Name: "henet", Proto: "6in4", PeerAddr: "192.168.1.2"}, "6in4-henet", false, false,
			"sit has no flowtable path"},
		{"gre", config.Interface{Name: "g", Proto: "gre", PeerAddr: "192.168.1.2"}, "gre4-g", false, false,
			"GRE has no flowtable path"},
		{"wireguard", config.Interface{Name: "wg0", Proto: "wireguard"}, "wg0", false, false,
			"WireGuard has no flowtable path"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := kinds(c.tun)
			s.Settings.Network.Interfaces = append(s.Settings.Network.Interfaces, config.Interface{Name: "wan6", Proto: "dhcpv6", Device: "@wan"})
			s.Settings.Network.Interfaces[2].Disabled = true // only the tunnel can bring wan0 in
			p := Make(s, Constraints{})
			if len(p.Tunnels) != 1 {
				t.Fatalf("tunnels %+v", p.Tunnels)
			}
			tun := p.Tunnels[0]
			if tun.Device != c.device || tun.Kind != c.tun.Proto || tun.InFastpath != c.fast || !strings.Contains(tun.Reason, c.because) {
				t.Errorf("tunnel %+v; want device %s, in fast path %v, reason with %q", tun, c.device, c.fast, c.because)
			}
			if listed := slices.Contains(p.Flowtable.Devices, "wan0"); listed != c.listed {
				t.Errorf("devices %v: wan0 listed %v, want %v", p.Flowtable.Devices, listed, c.listed)
			}
			if slices.Contains(p.Flowtable.Devices, c.device) {
				t.Errorf("devices %v list the tunnel device", p.Flowtable.Devices)
			}
		})
	}
}

func TestDSLiteOnAKernelWithoutAnIP6TnlPath(t *testing.T) {
	s := kinds(config.Interface{Name: "dsl", Proto: "dslite", PeerAddr: "fd00:2::2"})
	s.Kernel.Release, s.Kernel.IP6TnlPath = "6.12.57", false
	p := Make(s, Constraints{})
	if tun := p.Tunnels[0]; tun.InFastpath || !strings.Contains(tun.Reason, "no path into ip6tnl tunnels before Linux 7.0: its flows stay in the slow path") {
		t.Errorf("tunnel %+v", tun)
	}
}

// Where the underlay is listed for another interface anyway (the WAN), the
// stall is said as such, with what to do.
func TestDSLiteStallsWhereItsUnderlayIsListed(t *testing.T) {
	s := kinds(config.Interface{Name: "dsl", Proto: "dslite", PeerAddr: "fd00:2::2"})
	p := Make(s, Constraints{})
	tun := p.Tunnels[0]
	if tun.InFastpath || !strings.Contains(tun.Reason, "is listed for other interfaces, so its flows stall: turn offload off") {
		t.Errorf("tunnel %+v", tun)
	}
	if !slices.Contains(p.Flowtable.Devices, "wan0") {
		t.Errorf("devices %v: wan0 is the wan interface's", p.Flowtable.Devices)
	}
}
