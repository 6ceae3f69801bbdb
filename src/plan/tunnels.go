package plan

import (
	"fmt"
	"net/netip"

	"github.com/fastpath-wrt/fastpath/src/config"
	"github.com/fastpath-wrt/fastpath/src/observe"
)

// planTunnel finds the underlay of an IPIP interface — the tunlink
// interface's device, or the device of the route to the peer — and lists
// it. OpenWrt names the tunnel's netdev ipip-<interface>.
func (p *Plan) planTunnel(s observe.Snapshot, ifc config.Interface, ifaces map[string]config.Interface, r resolver, set map[string]bool) {
	t := Tunnel{Interface: ifc.Name, Device: "ipip-" + ifc.Name, Remote: ifc.PeerAddr, Local: ifc.IPAddr}
	defer func() { p.Tunnels = append(p.Tunnels, t) }()
	peer, err := netip.ParseAddr(ifc.PeerAddr)
	if err != nil || !peer.Is4() {
		t.Reason = "interface " + ifc.Name + " (ipip): peeraddr " + quote(ifc.PeerAddr) + " is not an IPv4 address: its underlay cannot be found (set network." + ifc.Name + ".peeraddr)"
		return
	}
	var via string
	if ifc.TunLink != "" {
		link, ok := ifaces[ifc.TunLink]
		if !ok || link.Device == "" {
			t.Reason = "interface " + ifc.Name + " (ipip): tunlink " + quote(ifc.TunLink) + " is not an interface with a device (fix network." + ifc.Name + ".tunlink)"
			return
		}
		t.Underlay, via = link.Device, "tunlink "+ifc.TunLink
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
			t.Reason = "interface " + ifc.Name + " (ipip): no route to the peer " + ifc.PeerAddr + " yet: underlay unknown until one appears"
			return
		}
		if rt.Device == t.Device {
			t.Reason = "interface " + ifc.Name + " (ipip): the route to the peer " + ifc.PeerAddr + " goes through the tunnel itself: no underlay"
			return
		}
		t.Underlay = rt.Device
	}
	devs := r.resolve(t.Underlay)
	if len(devs) == 0 {
		t.Reason = "interface " + ifc.Name + " (ipip): underlay " + t.Underlay + " (" + via + ") does not exist now"
		return
	}
	for _, d := range devs {
		set[d] = true
	}
	t.Reason = "interface " + ifc.Name + " (" + t.Device + "): underlay " + t.Underlay + " found by " + via + " and listed; the tunnel device itself never is"
}

// markTunnels says, once the mode is known, whether each tunnel's rx
// traffic really takes the fast path.
func (p *Plan) markTunnels(s observe.Snapshot) {
	for i := range p.Tunnels {
		t := &p.Tunnels[i]
		switch {
		case t.Underlay == "":
		case !p.Flowtable.Enabled:
			t.Reason += "; offload is off"
		case !s.Kernel.IPIPRxAccel:
			t.Reason += "; but kernel " + s.Kernel.Release + " lacks IPIP rx acceleration (Linux 6.19 and newer have it): tunnel traffic stays in the slow path"
		default:
			t.InFastpath = true
		}
		p.note("tunnel", "%s", t.Reason)
	}
}

func quote(s string) string { return "'" + s + "'" }
