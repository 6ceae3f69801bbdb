package plan

import (
	"github.com/fastpath-wrt/fastpath/src/config"
	"github.com/fastpath-wrt/fastpath/src/observe"
	"github.com/fastpath-wrt/fastpath/src/platform"
)

// flowtableDevices lists the L2 devices of the routed interfaces, the
// underlays of the tunnels the flowtable can follow (never the tunnel
// devices: the flowtable hooks where frames enter, and a tunnel's frames
// enter on its underlay), and the extra devices of fastpath.main.device.
func (p *Plan) flowtableDevices(s observe.Snapshot) []string {
	r := newResolver(s)
	set := map[string]bool{}
	ifaces := map[string]config.Interface{}
	for _, ifc := range s.Settings.Network.Interfaces {
		ifaces[ifc.Name] = ifc
	}
	for _, ifc := range s.Settings.Network.Interfaces {
		switch {
		case ifc.Disabled:
			p.note("device", "interface %s is disabled: not listed", ifc.Name)
		case ifc.Name == "loopback" || ifc.Device == "lo":
		case isTunnel(ifc.Proto):
			kind, _ := tunnelKindOf(ifc.Proto)
			p.planTunnel(s, ifc, kind, ifaces, r, set)
		case ifc.Proto == "none" || ifc.Proto == "":
			p.note("device", "interface %s has proto none: nothing is routed through it, not listed", ifc.Name)
		case ifc.Device == "":
			p.note("device", "interface %s has no device option: not listed", ifc.Name)
		case ifc.Device[0] == '@':
			// An alias (wan6 on @wan) shares its parent's device.
		default:
			devs := r.resolve(ifc.Device)
			if len(devs) == 0 {
				p.note("device", "interface %s: device %s does not exist now: not listed until it appears", ifc.Name, ifc.Device)
				continue
			}
			for _, d := range devs {
				set[d] = true
			}
			p.note("device", "interface %s (%s): %s", ifc.Name, ifc.Device, describe(ifc.Device, devs))
		}
	}
	for _, d := range s.Settings.Fastpath.ExtraDevices {
		if _, ok := r.devs[d]; !ok {
			p.note("device", "fastpath.main.device %s does not exist now: not listed until it appears", d)
			continue
		}
		set[d] = true
		p.note("device", "%s listed by fastpath.main.device", d)
	}
	return sortedSet(set)
}

func describe(dev string, devs []string) string {
	if len(devs) == 1 && devs[0] == dev {
		return "listed"
	}
	out := "frames enter on"
	for i, d := range devs {
		if i == 0 {
			out += " "
		} else {
			out += ", "
		}
		out += d
	}
	return out
}

// resolver maps a device name to the devices where its frames enter.
func newResolver(s observe.Snapshot) resolver {
	r := resolver{devs: map[string]platform.Device{}, bridges: map[string][]string{}}
	for _, d := range s.Platform.Devices {
		r.devs[d.Name] = d
	}
	for _, d := range s.Settings.Network.Devices {
		if d.Type == "bridge" {
			r.bridges[d.Name] = d.Ports
		}
	}
	return r
}

type resolver struct {
	devs    map[string]platform.Device
	bridges map[string][]string // bridges declared in UCI, for ports of a bridge that is down
}

// resolve follows bridges to their ports and VLANs to their parent; DSA
// user ports, Ethernet, wireless and others stand for themselves. Tunnel
// and loopback devices are never listed.
func (r resolver) resolve(name string) []string {
	seen := map[string]bool{}
	var out []string
	var walk func(n string, depth int)
	walk = func(n string, depth int) {
		if seen[n] || depth > 8 {
			return
		}
		seen[n] = true
		d, ok := r.devs[n]
		if !ok {
			for _, port := range r.bridges[n] {
				walk(port, depth+1)
			}
			return
		}
		switch d.Kind {
		case "bridge", "vlan":
			lower := d.Lower
			if len(lower) == 0 {
				lower = r.bridges[n]
			}
			for _, l := range lower {
				walk(l, depth+1)
			}
		case "ipip", "loopback":
		default:
			out = append(out, n)
		}
	}
	walk(name, 0)
	return out
}

func isTunnel(proto string) bool {
	_, ok := tunnelKindOf(proto)
	return ok
}
