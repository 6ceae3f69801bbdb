package platform

import (
	"fmt"
	"sort"
	"strings"
)

// decideOffload settles the SoC, whether it can offload flows in hardware,
// which devices can, and the one-sentence reason people read.
func decideOffload(info *Info) {
	m, found := matchSoC(info.Compatible, info.Target)
	if found {
		info.SoC = m.name
		info.Vendor = m.row.Vendor
		if m.row.HWOffload {
			info.HWOffloadCapable = true
			info.HWOffloadEngine = m.row.Engine
			info.HWFlowCounters = m.row.FlowCounters
		}
	}
	markDevices(info, m, found)

	var nicDevs []string
	for _, d := range info.Devices {
		if _, ok := deviceOffloadDrivers[d.Driver]; ok && d.HWOffload {
			nicDevs = append(nicDevs, fmt.Sprintf("%s (%s)", d.Name, d.Driver))
		}
	}
	sort.Strings(nicDevs)
	info.HWOffloadReason = reason(info, m, found, nicDevs)
	if len(nicDevs) > 0 && !info.HWOffloadCapable {
		info.HWOffloadCapable = true
		info.HWOffloadEngine = nicEngines(info.Devices)
	}
}

// markDevices sets Device.HWOffload: the SoC's offload-capable ethernet
// driver, a NIC with its own engine, or a DSA user port whose conduit is
// one of those. It records, per device, the evidence it decided on.
func markDevices(info *Info, m socMatch, found bool) {
	capable := map[string]bool{}
	for i := range info.Devices {
		d := &info.Devices[i]
		if d.Kind != KindEther && d.Kind != KindDSAConduit {
			continue
		}
		if _, ok := deviceOffloadDrivers[d.Driver]; ok {
			d.HWOffload = true
		} else if found && m.row.HWOffload && contains(m.row.Drivers, d.Driver) {
			d.HWOffload = true
		}
		capable[d.Name] = d.HWOffload
	}
	for i := range info.Devices {
		d := &info.Devices[i]
		base := dirClassNet + "/" + d.Name
		switch d.Kind {
		case KindDSAConduit:
			info.Evidence = append(info.Evidence, Evidence{Source: base + "/dsa/tagging", Value: d.DSATag,
				Meaning: d.Name + " is a DSA conduit"})
		case KindDSAUser:
			if d.Conduit == "" {
				info.Evidence = append(info.Evidence, Evidence{Source: base + "/uevent", Value: "DEVTYPE=dsa",
					Meaning: d.Name + " is a DSA user port whose conduit was not found: no hardware offload"})
				continue
			}
			d.HWOffload = capable[d.Conduit]
			meaning := d.Name + " is a DSA user port of conduit " + d.Conduit
			if d.HWOffload {
				meaning += ": hardware offload through it"
			}
			source := base + "/lower_" + d.Conduit
			if !contains(d.Lower, d.Conduit) {
				source = base + "/iflink" // kernels before 5.12 link no lower_ to the conduit
			}
			info.Evidence = append(info.Evidence, Evidence{Source: source, Value: d.Conduit, Meaning: meaning})
			continue
		}
		if d.Driver != "" && (d.Kind == KindEther || d.Kind == KindDSAConduit) {
			info.Evidence = append(info.Evidence, Evidence{Source: base + "/device/driver", Value: d.Driver,
				Meaning: driverMeaning(d, m, found)})
		}
	}
}

// driverMeaning explains what one ethernet driver means for offload.
func driverMeaning(d *Device, m socMatch, found bool) string {
	if engine, ok := deviceOffloadDrivers[d.Driver]; ok {
		return fmt.Sprintf("%s has its own flow-offload engine (%s): hardware offload on this device", d.Driver, engine)
	}
	if found && m.row.HWOffload && contains(m.row.Drivers, d.Driver) {
		return fmt.Sprintf("%s feeds the %s of %s: hardware offload on this device and its DSA ports", d.Driver, m.row.Engine, m.display)
	}
	for _, row := range socTable {
		if row.HWOffload && contains(row.Drivers, d.Driver) {
			if found {
				return fmt.Sprintf("%s also drives chips without an offload engine: on %s it proves nothing", d.Driver, m.display)
			}
			return fmt.Sprintf("%s also drives chips without an offload engine: without the SoC named in %s it proves nothing", d.Driver, fileCompatible)
		}
	}
	return fmt.Sprintf("%s feeds no flow-offload engine: no hardware offload on %s", d.Driver, d.Name)
}

// reason writes the sentence for people.
func reason(info *Info, m socMatch, found bool, nicDevs []string) string {
	nic := ""
	if len(nicDevs) > 0 {
		nic = ", but " + strings.Join(nicDevs, ", ") + " can offload in hardware"
	}
	if !found {
		return fmt.Sprintf("Unknown chip (%s): unknown chips are treated as software-only%s", seenSummary(info), nic)
	}
	chip := m.display
	if m.row.Family != "" && m.row.Family != m.display {
		chip = fmt.Sprintf("%s (%s)", m.display, m.row.Family)
	}
	if !m.row.HWOffload {
		if nic != "" {
			return fmt.Sprintf("%s %s%s: hardware flow offload on those devices only", chip, m.row.Limit, nic)
		}
		return fmt.Sprintf("%s %s: software offload only", chip, m.row.Limit)
	}
	for _, d := range info.Devices {
		if d.HWOffload {
			return fmt.Sprintf("%s has the %s: hardware flow offload available", m.display, m.row.Engine)
		}
	}
	return fmt.Sprintf("%s has the %s, but no network device driven by %s was found: hardware flow offload available once one appears",
		m.display, m.row.Engine, strings.Join(m.row.Drivers, " or "))
}

// seenSummary lists the identifying signals that were there, for the
// reason of an unknown chip.
func seenSummary(info *Info) string {
	var seen []string
	if len(info.Compatible) > 0 {
		seen = append(seen, fmt.Sprintf("compatible %q", strings.Join(info.Compatible, " ")))
	}
	if info.Target != "" {
		seen = append(seen, fmt.Sprintf("target %q", info.Target))
	}
	if info.BoardName != "" {
		seen = append(seen, fmt.Sprintf("board %q", info.BoardName))
	}
	if len(seen) == 0 {
		return "no device tree, no " + fileRelease + ", no board name"
	}
	if len(info.Compatible) == 0 {
		seen = append(seen, "no device tree to name the SoC")
	}
	return "seen: " + strings.Join(seen, "; ")
}

func nicEngines(devs []Device) string {
	var names []string
	seen := map[string]bool{}
	for _, d := range devs {
		if e, ok := deviceOffloadDrivers[d.Driver]; ok && d.HWOffload && !seen[e] {
			seen[e] = true
			names = append(names, e)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
