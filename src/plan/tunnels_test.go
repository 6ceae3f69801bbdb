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
	s.Kernel.IP4in6Accel = true
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
		{"dslite by route", config.Interface{Name: "dsl", Proto: "dslite", PeerAddr: "fd00:2::2"}, "ds-dsl", true, true,
			"underlay wan0 found by route to fd00:2::2 in the main table and listed"},
		{"dslite by tunlink alias", config.Interface{Name: "dsl", Proto: "dslite", PeerAddr: "fd00:2::2", TunLink: "wan6"}, "ds-dsl", true, true,
			"underlay wan0 found by tunlink wan6"},
		{"dslite with encaplimit", config.Interface{Name: "dsl", Proto: "dslite", PeerAddr: "fd00:2::2", EncapLim: "4"}, "ds-dsl", false, false,
			"encaplimit 4 puts a destination option in every packet"},
		{"dslite to an IPv4 peer", config.Interface{Name: "dsl", Proto: "dslite", PeerAddr: "192.168.1.2"}, "ds-dsl", false, false,
			"is not an IPv6 address"},
		{"map-e", config.Interface{Name: "wanmap", Proto: "map", PeerAddr: "fd00:2::2", TunLink: "wan6"}, "map-wanmap", true, true,
			"interface wanmap (map, MAP-E: IPv4 in IPv6, ip6tnl), map-wanmap: underlay wan0"},
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

func TestTunnelKindsOnAKernelThatCannotFollowIPv4InIPv6(t *testing.T) {
	s := kinds(config.Interface{Name: "dsl", Proto: "dslite", PeerAddr: "fd00:2::2"})
	s.Kernel.Release, s.Kernel.IP4in6Accel = "6.19.2", false
	tun := Make(s, Constraints{}).Tunnels[0]
	if tun.InFastpath || !strings.Contains(tun.Reason, "cannot follow dslite tunnels (Linux 7.2 and newer can, both ways)") {
		t.Errorf("tunnel %+v", tun)
	}
}
