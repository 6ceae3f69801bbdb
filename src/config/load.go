package config

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/fastpath-wrt/fastpath/src/cut"
	"github.com/fastpath-wrt/fastpath/src/uci"
)

// Load reads firewall, network and fastpath from root/etc/config. A missing
// fastpath or network file means defaults; a missing firewall file means
// offloading is off. A file that does not parse is an error: nothing can be
// planned from half a file.
func Load(root string) (Settings, error) {
	s := Settings{Fastpath: Defaults()}
	fw, err := loadOptional(root, "firewall")
	if err != nil {
		return s, err
	}
	s.loadOffload(fw)
	fp, err := loadOptional(root, "fastpath")
	if err != nil {
		return s, err
	}
	s.loadFastpath(fp)
	nw, err := loadOptional(root, "network")
	if err != nil {
		return s, err
	}
	s.loadNetwork(nw)
	return s, nil
}

func loadOptional(root, pkg string) (*uci.File, error) {
	f, err := uci.Load(root, pkg)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return f, err
}

func (s *Settings) problem(format string, args ...any) {
	s.Problems = append(s.Problems, fmt.Sprintf(format, args...))
}

// boolOpt reads a UCI boolean, keeping def (and saying so) when the value
// is not one UCI accepts.
func (s *Settings) boolOpt(sec *uci.Section, addr, name string, def bool) bool {
	v, err := sec.Bool(name, def)
	if err != nil {
		s.problem("%s.%s: %v; using %v", addr, name, err, def)
		return def
	}
	return v
}

func (s *Settings) loadOffload(fw *uci.File) {
	if fw == nil {
		return
	}
	sec, err := fw.Section("@defaults[0]")
	if err != nil {
		s.problem("firewall: no defaults section; flow offloading is off (add `config defaults` to /etc/config/firewall)")
		return
	}
	s.Offload.Section = "@defaults[0]"
	s.Offload.FlowOffloading = s.boolOpt(sec, "firewall.@defaults[0]", "flow_offloading", false)
	s.Offload.FlowOffloadingHW = s.boolOpt(sec, "firewall.@defaults[0]", "flow_offloading_hw", false)
}

func (s *Settings) loadFastpath(fp *uci.File) {
	if fp == nil {
		return
	}
	d := &s.Fastpath
	if secs := fp.SectionsOfType("fastpath"); len(secs) > 0 {
		sec := secs[0]
		addr := "fastpath." + sectionAddr(sec, "fastpath")
		d.Enabled = s.boolOpt(sec, addr, "enabled", d.Enabled)
		d.CutInFastpath = s.boolOpt(sec, addr, "cut_in_fastpath", d.CutInFastpath)
		if v, ok := sec.Get("hw_offload"); ok {
			switch v {
			case HWFollow, HWAuto, HWOff:
				d.HWOffload = v
			default:
				s.problem("%s.hw_offload: %q is not one of follow, auto, off; using %s", addr, v, d.HWOffload)
			}
		}
		if v, ok := sec.Get("cut_expiry"); ok {
			secs, err := strconv.Atoi(v)
			_, rerr := cut.Config{Expiry: time.Duration(secs) * time.Second, SetSize: d.CutSetSize}.Normalized()
			if err != nil || secs == 0 || rerr != nil {
				s.problem("%s.cut_expiry: %q is not a whole number of seconds from 1 to 86400; using %d", addr, v, int(d.CutExpiry.Seconds()))
			} else {
				d.CutExpiry = time.Duration(secs) * time.Second
			}
		}
		if v, ok := sec.Get("cut_set_size"); ok {
			n, err := strconv.Atoi(v)
			_, rerr := cut.Config{Expiry: d.CutExpiry, SetSize: n}.Normalized()
			if err != nil || n == 0 || rerr != nil {
				s.problem("%s.cut_set_size: %q is not a number from 1 to 16777216; using %d", addr, v, d.CutSetSize)
			} else {
				d.CutSetSize = n
			}
		}
		for _, o := range []struct {
			name string
			max  int
			to   *int
		}{{"cut_min_prefix4", 32, &d.CutMinPrefix4}, {"cut_min_prefix6", 128, &d.CutMinPrefix6}} {
			if v, ok := sec.Get(o.name); ok {
				if n, err := strconv.Atoi(v); err != nil || n < 1 || n > o.max {
					s.problem("%s.%s: %q is not a prefix length from 1 to %d; using %d", addr, o.name, v, o.max, *o.to)
				} else {
					*o.to = n
				}
			}
		}
		if v, ok := sec.Get("log_level"); ok {
			switch v {
			case "debug", "info", "warn", "error":
				d.LogLevel = v
			default:
				s.problem("%s.log_level: %q is not one of debug, info, warn, error; using %s", addr, v, d.LogLevel)
			}
		}
		d.ExtraDevices = sec.GetList("device")
	}
	for i, sec := range fp.SectionsOfType("blocklist") {
		if b, ok := s.blocklist(sec, i); ok {
			d.Blocklists = append(d.Blocklists, b)
		}
	}
}

// setFamilies are the nftables families whose tables hold sets of IP
// addresses; arp tables match ARP frames, not IP addresses.
var setFamilies = map[string]bool{"inet": true, "ip": true, "ip6": true, "bridge": true, "netdev": true}

func (s *Settings) blocklist(sec *uci.Section, i int) (cut.BlocklistConfig, bool) {
	addr := fmt.Sprintf("fastpath.@blocklist[%d]", i)
	if enabled := s.boolOpt(sec, addr, "enabled", true); !enabled {
		return cut.BlocklistConfig{}, false
	}
	b := cut.BlocklistConfig{Name: sec.Name}
	if v, ok := sec.Get("name"); ok {
		b.Name = v
	}
	if b.Name == "" {
		b.Name = fmt.Sprintf("blocklist%d", i)
	}
	b.Kind, _ = sec.Get("type")
	b.Family, _ = sec.Get("family")
	b.Table, _ = sec.Get("table")
	b.Set, _ = sec.Get("set")
	b.Path, _ = sec.Get("path")
	if b.Kind == cut.KindNftSet && b.Family == "" {
		b.Family = "inet"
	}
	if b.Kind == cut.KindNftSet && !setFamilies[b.Family] {
		s.problem("%s.family: %q is not a family of address sets; use inet, ip, ip6, bridge or netdev; block list %q ignored", addr, b.Family, b.Name)
		return b, false
	}
	for _, a := range sec.GetList("address") {
		if _, err := cut.ParsePrefix(a); err != nil {
			s.problem("%s.address: %q is not an IP address or CIDR prefix; entry skipped", addr, a)
			continue
		}
		b.Addresses = append(b.Addresses, a)
	}
	if err := b.Check(); err != nil {
		s.problem("%s: %v; block list %q ignored", addr, err, b.Name)
		return b, false
	}
	return b, true
}

func (s *Settings) loadNetwork(nw *uci.File) {
	if nw == nil {
		return
	}
	for _, sec := range nw.SectionsOfType("interface") {
		addr := "network." + sec.Name
		ifc := Interface{Name: sec.Name}
		ifc.Proto, _ = sec.Get("proto")
		if v, ok := sec.Get("device"); ok {
			ifc.Device = v
		} else if v, ok := sec.Get("ifname"); ok { // before 21.02
			if f := strings.Fields(v); len(f) > 0 {
				ifc.Device = f[0]
			}
		}
		ifc.Disabled = s.boolOpt(sec, addr, "disabled", false)
		ifc.PeerAddr, _ = sec.Get("peeraddr")
		ifc.IPAddr, _ = sec.Get("ipaddr")
		ifc.TunLink, _ = sec.Get("tunlink")
		s.Network.Interfaces = append(s.Network.Interfaces, ifc)
	}
	for _, sec := range nw.SectionsOfType("device") {
		d := Device{}
		d.Name, _ = sec.Get("name")
		d.Type, _ = sec.Get("type")
		d.Ports = sec.GetList("ports")
		if d.Name != "" {
			s.Network.Devices = append(s.Network.Devices, d)
		}
	}
}

func sectionAddr(sec *uci.Section, typ string) string {
	if sec.Anonymous {
		return "@" + typ + "[0]"
	}
	return sec.Name
}
