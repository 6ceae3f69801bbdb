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

// Load reads firewall, network, fastpath and sqm from root/etc/config. A
// missing fastpath or network file means defaults; a missing firewall file
// means offloading is off. A file of ours that does not parse is an error:
// nothing can be planned from half a file. sqm is another package's: a
// broken one is a problem, planned as no SQM.
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
	sqm, err := loadOptional(root, "sqm")
	if err != nil {
		s.problem("sqm: %v; planned as if no SQM queue were enabled", err)
	}
	s.loadSQM(sqm)
	return s, nil
}

// loadSQM keeps the queues sqm-scripts would start: `option enabled '1'`
// (its default is off) on a named device.
func (s *Settings) loadSQM(f *uci.File) {
	if f == nil {
		return
	}
	for _, sec := range f.SectionsOfType("queue") {
		addr := "sqm." + sectionAddr(sec, "queue")
		if !s.boolOpt(sec, addr, "enabled", false) {
			continue
		}
		dev, _ := sec.Get("interface")
		if dev == "" {
			s.problem("%s: an enabled queue without option interface shapes nothing; not taken into account", addr)
			continue
		}
		qdisc, _ := sec.Get("qdisc")
		s.SQM = append(s.SQM, SQMQueue{Section: addr, Device: dev, Qdisc: qdisc})
	}
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

// wholeOpt reads a whole number from min to max, range-checked before any
// conversion (a duration in nanoseconds would wrap). Any other value, too
// large for 64 bits included, keeps def with a problem naming the option,
// the value and the range.
func (s *Settings) wholeOpt(sec *uci.Section, addr, name string, min, max int64, unit string, def int64) int64 {
	v, ok := sec.Get(name)
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err == nil && n >= min && n <= max:
		return n
	case err == nil && n > max, errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(v, "-"):
		s.problem("%s.%s: %q is over the maximum of %d %s; using %d", addr, name, v, max, unit, def)
	case err == nil, errors.Is(err, strconv.ErrRange):
		s.problem("%s.%s: %q is under the minimum of %d (use %d to %d %s); using %d", addr, name, v, min, min, max, unit, def)
	default:
		s.problem("%s.%s: %q is not a whole number of %s (%d to %d); using %d", addr, name, v, unit, min, max, def)
	}
	return def
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

// MaxOffloadAfterPackets bounds offload_after_packets: inspectors ask for
// tens of packets; beyond this a connection would live in the slow path.
const MaxOffloadAfterPackets = 100000

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
		d.XDPForward = s.boolOpt(sec, addr, "xdp_forward", d.XDPForward)
		d.RecheckOnRuleChange = s.boolOpt(sec, addr, "recheck_on_rule_change", d.RecheckOnRuleChange)
		if v, ok := sec.Get("hw_offload"); ok {
			switch v {
			case HWFollow, HWAuto, HWOff:
				d.HWOffload = v
			default:
				s.problem("%s.hw_offload: %q is not one of follow, auto, off; using %s", addr, v, d.HWOffload)
			}
		}
		secs := s.wholeOpt(sec, addr, "cut_expiry", 1, int64(cut.MaxExpiry/time.Second), "seconds", int64(d.CutExpiry/time.Second))
		d.CutExpiry = time.Duration(secs) * time.Second // at most 86400: no overflow
		d.CutSetSize = int(s.wholeOpt(sec, addr, "cut_set_size", 1, cut.MaxSetSize, "elements", int64(d.CutSetSize)))
		d.OffloadAfterPackets = uint64(s.wholeOpt(sec, addr, "offload_after_packets", 0, MaxOffloadAfterPackets, "packets", int64(d.OffloadAfterPackets)))
		if v, ok := sec.Get("cut_backend"); ok {
			switch v {
			case cut.BackendAuto, cut.BackendXDP, cut.BackendNetdev:
				d.CutBackend = v
			default:
				s.problem("%s.cut_backend: %q is not one of auto, xdp, netdev; using %s", addr, v, d.CutBackend)
			}
		}
		if v, ok := sec.Get("sqm_policy"); ok {
			switch v {
			case SQMPreferSQM, SQMPreferHW:
				d.SQMPolicy = v
			default:
				s.problem("%s.sqm_policy: %q is not one of prefer_sqm, prefer_hw; using %s", addr, v, d.SQMPolicy)
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
		ifc.IP6Addr, _ = sec.Get("ip6addr")
		ifc.Type, _ = sec.Get("type")
		ifc.EncapLim, _ = sec.Get("encaplimit")
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
