// Package observe gathers one snapshot of the router — UCI settings,
// platform, routes and kernel features — from a root directory. Nothing
// else in fastpath reads the system's configuration.
package observe

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/fastpath-wrt/fastpath/src/config"
	"github.com/fastpath-wrt/fastpath/src/netstate"
	"github.com/fastpath-wrt/fastpath/src/platform"
	"github.com/fastpath-wrt/fastpath/src/ppe"
)

// Snapshot is everything planning needs, read at one moment.
type Snapshot struct {
	Root     string          `json:"root"`
	Settings config.Settings `json:"settings"`
	Platform platform.Info   `json:"platform"`
	Routes   []Route         `json:"routes"`
	// PeerRoutes are the kernel's own answers (KernelRoute) for the peers
	// of tunnel interfaces (ipip, dslite, map), keyed by the peer's address; read on a live
	// router only (root "/"), where policy rules may route a peer past the
	// main table.
	PeerRoutes map[string]Route        `json:"peer_routes,omitempty"`
	Kernel     netstate.KernelFeatures `json:"kernel"`
	// Shapers are the devices SQM shapes, with the evidence.
	Shapers []Shaper `json:"shapers,omitempty"`
	// HWFlows is what the SoC's offload engine has bound (HWFlows).
	HWFlows ppe.Summary `json:"hw_flows"`
	// Firewall is the digest of firewall4's forward-path rules, read from
	// the kernel on a live router only (root "/").
	Firewall FirewallRules `json:"firewall"`
}

// Observe reads the snapshot below root ("/" on a router). A UCI file that
// does not parse is an error; everything else degrades to what was found.
func Observe(root string) (Snapshot, error) {
	s := Snapshot{Root: root}
	var err error
	if s.Settings, err = config.Load(root); err != nil {
		return s, err
	}
	if s.Platform, err = platform.Detect(root); err != nil {
		return s, err
	}
	if s.Routes, err = readRoutes(root); err != nil {
		return s, err
	}
	var qdiscs map[string]string
	if filepath.Clean(root) == "/" {
		s.PeerRoutes = peerRoutes(s.Settings.Network)
		qdiscs = rootQdiscsByName(s.Platform.Devices)
		s.Firewall = ReadFirewallRules(0)
	} else {
		s.Firewall.Error = "they are read from the kernel of a live router only"
	}
	s.Shapers = shapers(s.Settings.SQM, s.Platform.Devices, qdiscs)
	s.Kernel = KernelFeatures(root, s.Platform.Kernel)
	s.HWFlows = HWFlows(root, s.Platform)
	return s, nil
}

// rootQdiscsByName is RootQdiscs by device name; on error, none (the UCI
// and sysfs evidence of SQM still counts).
func rootQdiscsByName(devs []platform.Device) map[string]string {
	byIndex, err := RootQdiscs(0)
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, d := range devs {
		if kind, ok := byIndex[d.IfIndex]; ok && d.IfIndex != 0 {
			out[d.Name] = kind
		}
	}
	return out
}

// peerRoutes asks the kernel for the route to each tunnel's peer, from
// the tunnel's local address. A peer the kernel has no answer for is left
// out: planning then reads the main table, and says so.
func peerRoutes(n config.Network) map[string]Route {
	routes := map[string]Route{}
	for _, ifc := range n.Interfaces {
		peer, err := netip.ParseAddr(ifc.PeerAddr)
		if ifc.TunLink != "" || err != nil {
			continue
		}
		local, _ := netip.ParseAddr(ifc.IPAddr)
		if peer.Is6() {
			local, _ = netip.ParseAddr(ifc.IP6Addr)
		}
		if rt, err := KernelRoute(0, peer, local); err == nil {
			routes[peer.String()] = rt
		}
	}
	return routes
}

func readRoutes(root string) ([]Route, error) {
	var routes []Route
	if data, err := os.ReadFile(filepath.Join(root, "proc/net/route")); err == nil {
		r, err := ParseIPv4Routes(data, binary.NativeEndian)
		if err != nil {
			// A big-endian router's file read elsewhere (a fixture):
			// the masks are contiguous only in the right byte order.
			r, err = ParseIPv4Routes(data, otherEndian())
		}
		if err != nil {
			return nil, err
		}
		routes = append(routes, r...)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if data, err := os.ReadFile(filepath.Join(root, "proc/net/ipv6_route")); err == nil {
		r, err := ParseIPv6Routes(data)
		if err != nil {
			return nil, err
		}
		routes = append(routes, r...)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return routes, nil
}

func otherEndian() binary.ByteOrder {
	var b [2]byte
	binary.NativeEndian.PutUint16(b[:], 1)
	if b[0] == 1 {
		return binary.BigEndian
	}
	return binary.LittleEndian
}
