package plan

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/fastpath-wrt/fastpath/src/config"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/observe"
)

// tunnelKind is one tunnel proto of OpenWrt's netifd and what the
// flowtable makes of it. The flowtable follows a flow into a tunnel, and
// finds it again where the tunnel's frames enter (its underlay), only
// through the tunnel driver's ndo_fill_forward_path
// (net/netfilter/nf_flow_table_path.c): ipip.c has one from Linux 6.19
// (rx and tx); ip6_tunnel.c has one from 7.0, which takes every tunnel
// for IPv6 inside, so IPv4 in it (DS-Lite, MAP-E) is offloaded into a
// path that carries nothing; ip_gre.c, ip6_gre.c, sit.c and wireguard
// have none.
type tunnelKind struct {
	proto  string // UCI proto
	prefix string // the netdev is prefix + interface name; "" for the interface name itself
	v6     bool   // the underlay (peer) is IPv6
	what   string // for people
	// accel is the kernel feature that lets the flowtable follow the
	// kind (accelNone: no kernel does, and slow says why).
	accel int
	slow  string
}

const (
	accelNone  = iota
	accelIPIP  // netstate.KernelFeatures.IPIPRxAccel, Linux 6.19
	stallsIPv4 // ip6tnl with IPv4 inside: followed from 7.0 (netstate.KernelFeatures.IP6TnlPath) as IPv6, and stalls
)

const (
	sitSlow = "sit has no flowtable path (no ndo_fill_forward_path in net/ipv6/sit.c)"
	greSlow = "GRE has no flowtable path (no ndo_fill_forward_path in net/ipv4/ip_gre.c, net/ipv6/ip6_gre.c)"
)

// tunnelKinds is static data (no init code: the binary's budget is tight).
var tunnelKinds = [...]tunnelKind{
	{proto: "ipip", prefix: "ipip-", what: "IPv4 in IPv4", accel: accelIPIP},
	{proto: "dslite", prefix: "ds-", v6: true, what: "IPv4 in IPv6, ip6tnl", accel: stallsIPv4},
	{proto: "ipip6", prefix: "ipip6-", v6: true, what: "IPv4 in IPv6, ip6tnl", accel: stallsIPv4},
	{proto: "map", prefix: "map-", v6: true, what: "MAP-E: IPv4 in IPv6, ip6tnl", accel: stallsIPv4},
	{proto: "6in4", prefix: "6in4-", what: "IPv6 in IPv4, sit", slow: sitSlow},
	{proto: "6rd", prefix: "6rd-", what: "IPv6 in IPv4, sit", slow: sitSlow},
	{proto: "6to4", prefix: "6to4-", what: "IPv6 in IPv4, sit", slow: sitSlow},
	{proto: "gre", prefix: "gre4-", what: "GRE over IPv4", slow: greSlow},
	{proto: "gretap", prefix: "gre4t-", what: "GRE over IPv4", slow: greSlow},
	{proto: "grev6", prefix: "gre6-", v6: true, what: "GRE over IPv6", slow: greSlow},
	{proto: "grev6tap", prefix: "gre6t-", v6: true, what: "GRE over IPv6", slow: greSlow},
	{proto: "wireguard", what: "encrypted, over UDP", slow: "WireGuard has no flowtable path (no ndo_fill_forward_path in drivers/net/wireguard)"},
}

func tunnelKindOf(proto string) (tunnelKind, bool) {
	for _, k := range tunnelKinds {
		if k.proto == proto {
			return k, true
		}
	}
	return tunnelKind{}, false
}

// follows reports whether kernel k's flowtable follows the kind, and the
// release that does.
func (kind tunnelKind) follows(k netstate.KernelFeatures) (bool, string) {
	return k.IPIPRxAccel && kind.accel == accelIPIP, "Linux 6.19"
}

// planTunnel finds a tunnel's underlay — the tunlink interface's device,
// or the device of the route to the peer — and lists it, for the kinds
// the flowtable can follow into a tunnel; the others are reported with
// why they stay in the slow path.
func (p *Plan) planTunnel(s observe.Snapshot, ifc config.Interface, kind tunnelKind, ifaces map[string]config.Interface, r resolver, set map[string]bool) {
	t := Tunnel{Interface: ifc.Name, Kind: ifc.Proto, Device: kind.prefix + ifc.Name, Remote: ifc.PeerAddr, Local: ifc.IPAddr}
	if kind.v6 {
		t.Local = ifc.IP6Addr
	}
	if kind.prefix == "" {
		t.Device = ifc.Name
	}
	label := "interface " + ifc.Name + " (" + ifc.Proto + ", " + kind.what + ")"
	defer func() { p.Tunnels = append(p.Tunnels, t) }()
	if kind.accel == accelNone {
		t.Reason = label + ": " + kind.slow + ": its flows stay in the slow path"
		return
	}
	if ifc.Proto == "map" && ifc.Type != "" && ifc.Type != "map-e" && ifc.Type != "lw4o6" {
		t.Reason = label + ": type " + ifc.Type + " translates in the nat46 module, which no flowtable path follows: its flows stay in the slow path"
		return
	}
	stalls := kind.accel == stallsIPv4 && s.Kernel.IP6TnlPath
	if kind.accel == stallsIPv4 && !stalls {
		t.Reason = label + ": the flowtable has no path into ip6tnl tunnels before Linux 7.0: its flows stay in the slow path"
		return
	}
	if kind.v6 && ifc.EncapLim != "" && ifc.EncapLim != "ignore" {
		t.Reason = label + ": encaplimit " + ifc.EncapLim + " puts a destination option in every packet, and the flowtable follows no ip6tnl that does (ip6_tnl_fill_forward_path refuses it): its flows stay in the slow path"
		return
	}
	peer, err := netip.ParseAddr(ifc.PeerAddr)
	family := "IPv4"
	if kind.v6 {
		family = "IPv6"
	}
	if err != nil || peer.Is4() == kind.v6 {
		t.Reason = label + ": peeraddr " + quote(ifc.PeerAddr) + " is not an " + family + " address: its underlay cannot be found (set network." + ifc.Name + ".peeraddr)"
		return
	}
	var via string
	if ifc.TunLink != "" {
		link, ok := ifaces[ifc.TunLink]
		if !ok || link.Device == "" {
			t.Reason = label + ": tunlink " + quote(ifc.TunLink) + " is not an interface with a device (fix network." + ifc.Name + ".tunlink)"
			return
		}
		t.Underlay, via = link.Device, "tunlink "+ifc.TunLink
		if t.Underlay[0] == '@' {
			// An alias (wan6 on @wan) shares its parent's device.
			if parent, ok := ifaces[t.Underlay[1:]]; ok {
				t.Underlay = parent.Device
			}
		}
	} else {
		// The kernel's answer applies policy rules (mwan3, pbr); the
		// main table is what a fixture tree, or a kernel that did not
		// answer, leaves.
		rt, ok := s.PeerRoutes[peer.String()]
		via = fmt.Sprintf("the kernel's route to %s (policy rules applied: table %d)", ifc.PeerAddr, rt.Table)
		if !ok {
			rt, ok = observe.Lookup(s.Routes, peer)
			via = "route to " + ifc.PeerAddr + " in the main table"
		}
		if !ok {
			t.Reason = label + ": no route to the peer " + ifc.PeerAddr + " yet: underlay unknown until one appears"
			return
		}
		if rt.Device == t.Device {
			t.Reason = label + ": the route to the peer " + ifc.PeerAddr + " goes through the tunnel itself: no underlay"
			return
		}
		t.Underlay = rt.Device
	}
	devs := r.resolve(t.Underlay)
	if len(devs) == 0 {
		t.Reason = label + ": underlay " + t.Underlay + " (" + via + ") does not exist now"
		return
	}
	if stalls {
		t.Reason = label + ", " + t.Device + ": WARNING: kernel " + s.Kernel.Release + " follows ip6tnl tunnels to their underlay as if they carried IPv6 (ip6_tnl_fill_forward_path, Linux 7.0; IPv4 inside was posted for nf-next in May 2026): a flow offloaded through " + t.Device + " stalls (the lab's 7.2.13: TCP streams either way received nothing); its underlay " + t.Underlay + " (" + via + ")"
		p.stalled = append(p.stalled, len(p.Tunnels))
		t.Underlay = strings.Join(devs, " ")
		return
	}
	for _, d := range devs {
		set[d] = true
	}
	t.Reason = label + ", " + t.Device + ": underlay " + t.Underlay + " found by " + via + " and listed; the tunnel device itself never is"
}

// markTunnels says, once the mode is known, whether each tunnel's flows
// really take the fast path, both ways.
func (p *Plan) markTunnels(s observe.Snapshot) {
	for _, i := range p.stalled {
		t := &p.Tunnels[i]
		devs := strings.Fields(t.Underlay)
		t.Underlay = ""
		if p.Flowtable.Enabled && slices.ContainsFunc(devs, func(d string) bool { return slices.Contains(p.Flowtable.Devices, d) }) {
			t.Reason += " is listed for other interfaces, so its flows stall: turn offload off while this tunnel carries traffic, or run a kernel with IPv4-in-ip6tnl support"
		} else {
			t.Reason += " is not listed for it: its flows stay in the slow path"
		}
	}
	for i := range p.Tunnels {
		t := &p.Tunnels[i]
		kind, _ := tunnelKindOf(t.Kind)
		ok, since := kind.follows(s.Kernel)
		switch {
		case t.Underlay == "" || kind.accel == accelNone:
		case !p.Flowtable.Enabled:
			t.Reason += "; offload is off"
		case !ok:
			t.Reason += "; but kernel " + s.Kernel.Release + " cannot follow " + t.Kind + " tunnels (" + since + " and newer can, both ways): its flows stay in the slow path"
		default:
			t.InFastpath = true
		}
		p.note("tunnel", "%s", t.Reason)
	}
}

func quote(s string) string { return "'" + s + "'" }
