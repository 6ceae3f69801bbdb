package daemon

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/observe"
	"github.com/fastpath-wrt/fastpath/src/plan"
	"github.com/fastpath-wrt/fastpath/src/platform"
	"github.com/fastpath-wrt/fastpath/src/ppe"
	"github.com/fastpath-wrt/fastpath/src/rpc"
	"github.com/fastpath-wrt/fastpath/src/status"
	"github.com/fastpath-wrt/fastpath/src/why"
)

// The facts of a connection come from the status (the kernel's flowtable,
// the platform's devices, the plan's tunnels, the cuts) and the kernel's
// route toward each end.
func TestWhyFacts(t *testing.T) {
	var st status.Status
	st.Mode.Effective = "software"
	st.Flowtable.Devices = []string{"lan1", "wan"}
	st.Flowtable.Kernel = netstate.KernelFlowtable{FlowtablePresent: true, ForwardRule: true, Devices: []string{"lan1", "wan"}, OffloadAfterPackets: 30}
	st.Platform = platform.Info{SoC: "mt7986", Devices: []platform.Device{
		{Name: "br-lan", Kind: "bridge", Lower: []string{"lan1", "phy0-ap0"}},
		{Name: "lan1", Kind: "dsa-user"}, {Name: "phy0-ap0", Kind: "wireless"}, {Name: "wan", Kind: "ether"},
		{Name: "wg0", Kind: "other"},
	}}
	st.Tunnels = []plan.Tunnel{{Device: "wg0", Kind: "wireguard", Reason: "no path"}}
	conn := netstate.Tuple{Proto: "tcp", Src: "192.168.1.23", Dst: "10.8.0.1", SrcPort: 50000, DstPort: 443}
	st.Cut.Cuts = []cut.Cut{{Original: conn, Reply: conn.Reverse(), Trigger: "ubus", Reason: "ids", InFastpath: true}}
	routes := map[string]string{"192.168.1.23": "br-lan", "10.8.0.1": "wg0"}
	no, yes := false, true
	r := routerFacts{
		status: st,
		own:    []netip.Addr{netip.MustParseAddr("192.168.1.1")},
		route: func(a netip.Addr) (observe.Route, error) {
			if d, ok := routes[a.String()]; ok {
				return observe.Route{Device: d}, nil
			}
			return observe.Route{}, errors.New("network is unreachable")
		},
		accounting: &yes,
		wed:        &no,
	}
	f := r.facts(netstate.Entry{Flow: netstate.Flow{Proto: "tcp", Original: conn, Reply: conn.Reverse()}})
	if f.Offload.AfterPkts != 30 || !f.Offload.Flowtable || f.Offload.WED == nil || *f.Offload.WED || f.Local != "" {
		t.Errorf("offload facts %+v, local %q", f.Offload, f.Local)
	}
	if s := f.Sides[0]; s.Device != "br-lan" || s.Kind != "bridge" || len(s.Enter) != 2 || s.Enter[1] != (why.Port{Name: "phy0-ap0", Kind: "wireless"}) {
		t.Errorf("source side %+v", s)
	}
	if s := f.Sides[1]; s.Device != "wg0" || s.Tunnel == nil || s.Tunnel.Kind != "wireguard" {
		t.Errorf("destination side %+v", s)
	}
	if f.Cut == nil || f.Cut.Trigger != "ubus" {
		t.Errorf("cut %+v", f.Cut)
	}
	r.ppe = func(dirs ...ppe.Dir) ppe.Found {
		if len(dirs) != 2 || dirs[0].Src.String() != "192.168.1.23" || dirs[1].Dst.String() != "192.168.1.23" {
			t.Errorf("engine asked for %+v, want both directions", dirs)
		}
		return ppe.Found{State: "UNB", Table: "ppe0"}
	}
	f = r.facts(netstate.Entry{Flow: netstate.Flow{Proto: "tcp", Offload: "hardware", Original: conn, Reply: conn.Reverse()}})
	if f.PPE == nil || f.PPE.State != "UNB" || f.PPE.Table != "ppe0" {
		t.Errorf("engine's entry %+v", f.PPE)
	}
	r.ppe = nil
	// PPPoE in a VLAN: pppoe-wan runs on wan0.500, whose frames enter on wan0.
	r.status.Platform.Devices = append(r.status.Platform.Devices,
		platform.Device{Name: "wan0.500", Kind: "vlan", Lower: []string{"wan0"}}, platform.Device{Name: "wan0", Kind: "ether"})
	r.pppoe = map[string]string{"pppoe-wan": "wan0.500"}
	routes["10.8.0.1"] = "pppoe-wan"
	f = r.facts(netstate.Entry{Flow: netstate.Flow{Proto: "tcp", Original: conn, Reply: conn.Reverse()}})
	if s := f.Sides[1]; s.Kind != "ppp" || len(s.Enter) != 1 || s.Enter[0] != (why.Port{Name: "wan0", Kind: "ether"}) {
		t.Errorf("PPPoE side %+v, want its frames entering on wan0", s)
	}
	routes["10.8.0.1"] = "wg0"
	r.pppoe = nil
	local := netstate.Tuple{Proto: "tcp", Src: "192.168.1.23", Dst: "192.168.1.1", SrcPort: 50000, DstPort: 22}
	f = r.facts(netstate.Entry{Flow: netstate.Flow{Proto: "tcp", Original: local, Reply: local.Reverse()}})
	if f.Local != "192.168.1.1" || f.Sides[1].Error != "network is unreachable" {
		t.Errorf("local %q, sides %+v", f.Local, f.Sides)
	}
}

func TestWhyFilter(t *testing.T) {
	f, err := whyFilter(rpc.WhyQuery{Tuple: netstate.Tuple{Proto: "udp", Src: "2001:db8::1", Dst: "2001:db8::53", SrcPort: 5300, DstPort: 53}})
	if err != nil || f.Proto != "udp" || f.Address.Bits() != 128 || f.Conn.DstPort != 53 {
		t.Errorf("tuple filter %+v, %v", f, err)
	}
	if f, err = whyFilter(rpc.WhyQuery{Address: "192.168.1.77/24"}); err != nil || f.Address.String() != "192.168.1.0/24" {
		t.Errorf("address filter %+v, %v", f, err)
	}
}

func TestReadFlag(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string]string{"1\n": "true", "Y\n": "true", "0\n": "false", "N": "false", "maybe": "nil"} {
		p := filepath.Join(dir, "flag")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		got := "nil"
		if v := readFlag(p); v != nil {
			got = map[bool]string{true: "true", false: "false"}[*v]
		}
		if got != want {
			t.Errorf("readFlag(%q) = %s, want %s", text, got, want)
		}
	}
	if readFlag(filepath.Join(dir, "absent")) != nil {
		t.Error("an absent file reads as a value")
	}
}

// A cut connection conntrack no longer holds is found from the cut.
func TestWhyCutWithoutEntry(t *testing.T) {
	conn := netstate.Tuple{Proto: "udp", Src: "10.0.1.2", Dst: "198.51.100.7", SrcPort: 5000, DstPort: 53}
	c := cut.Cut{Original: conn, Reply: conn.Reverse(), Trigger: "ubus"}
	if !cutNamed(c, rpc.WhyQuery{Address: "198.51.100.0/24"}) || !cutNamed(c, rpc.WhyQuery{Tuple: conn.Reverse()}) || cutNamed(c, rpc.WhyQuery{Address: "10.0.2.0/24"}) {
		t.Error("cutNamed does not follow the query")
	}
	if tracked(c, nil) || !tracked(c, []netstate.Entry{{Flow: netstate.Flow{Original: conn}}}) {
		t.Error("tracked does not follow the entries")
	}
	var st status.Status
	st.Cut.Cuts = []cut.Cut{c}
	r := routerFacts{status: st, route: func(netip.Addr) (observe.Route, error) { return observe.Route{Device: "lan0"}, nil }}
	a := why.Explain(r.cutFacts(c))
	if a.Where != why.WhereCut || len(a.Reasons) != 1 || a.Reasons[0].Code != "cut" || a.Flow.Family != "ipv4" {
		t.Errorf("where %q, reasons %+v, family %q", a.Where, a.Reasons, a.Flow.Family)
	}
}
