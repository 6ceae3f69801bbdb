package platform

import (
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Device kinds.
const (
	KindEther      = "ether"
	KindBridge     = "bridge"
	KindVLAN       = "vlan"
	KindDSAUser    = "dsa-user"
	KindDSAConduit = "dsa-conduit"
	KindIPIP       = "ipip"
	KindWireless   = "wireless"
	KindLoopback   = "loopback"
	KindPPP        = "ppp"
	KindOther      = "other"
)

// ARPHRD values of /sys/class/net/<dev>/type that decide a kind by
// themselves (include/uapi/linux/if_arp.h).
const (
	arphrdEther    = 1
	arphrdPPP      = 512
	arphrdIPIP     = 768
	arphrdLoopback = 772

	iffUp = 0x1 // IFF_UP in /sys/class/net/<dev>/flags
)

// netdev is what sysfs says about one device before classification.
type netdev struct {
	Device
	devType      string // DEVTYPE from uevent
	isConduit    bool
	isWireless   bool
	hasBridgeDir bool
	ifLink       int // iflink: a DSA user port's conduit, a vlan's parent
}

// readDevices lists root/sys/class/net and classifies every device.
func readDevices(root string) []Device {
	r := reader{root: root}
	entries, err := os.ReadDir(r.path(dirClassNet))
	if err != nil {
		return []Device{}
	}
	var devs []*netdev
	byName := map[string]*netdev{}
	byIndex := map[int]*netdev{}
	for _, e := range entries {
		// Entries are symlinks to device directories on a real system and
		// plain directories in fixtures; bonding_masters is a file.
		if st, err := os.Stat(r.path(dirClassNet + "/" + e.Name())); err != nil || !st.IsDir() {
			continue
		}
		d := r.readNetdev(e.Name())
		devs = append(devs, d)
		byName[d.Name] = d
		if d.IfIndex > 0 {
			byIndex[d.IfIndex] = d
		}
	}
	for _, d := range devs {
		d.Kind = classify(d, byName, byIndex)
	}
	out := make([]Device, 0, len(devs))
	for _, d := range devs {
		out = append(out, d.Device)
	}
	return out
}

// readNetdev reads one /sys/class/net/<name> directory.
func (r reader) readNetdev(name string) *netdev {
	base := dirClassNet + "/" + name
	d := &netdev{Device: Device{Name: name}}
	if v, ok := r.readText(base + "/type"); ok {
		d.Type, _ = strconv.Atoi(v)
	}
	if v, ok := r.readText(base + "/ifindex"); ok {
		d.IfIndex, _ = strconv.Atoi(v)
	}
	if v, ok := r.readText(base + "/iflink"); ok {
		d.ifLink, _ = strconv.Atoi(v)
	}
	// Devices without carrier tracking (loopback, tunnels) say "unknown"
	// while up; IFF_UP in flags then tells.
	operstate, _ := r.readText(base + "/operstate")
	flags, _ := r.readText(base + "/flags")
	up, _ := strconv.ParseUint(strings.TrimPrefix(flags, "0x"), 16, 32)
	d.OperUp = operstate == "up" || operstate == "unknown" && up&iffUp != 0
	if b, ok := r.read(base + "/uevent"); ok {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "DEVTYPE="); ok {
				d.devType = v
			}
		}
	}
	d.Driver = r.linkBase(base + "/device/driver")
	d.Master = r.linkBase(base + "/master")
	if st, err := os.Stat(r.path(base + "/dsa")); err == nil && st.IsDir() {
		d.isConduit = true
		d.DSATag, _ = r.readText(base + "/dsa/tagging")
	}
	d.isWireless = r.isDir(base+"/phy80211") || r.isDir(base+"/wireless")
	d.hasBridgeDir = r.isDir(base + "/bridge")
	if entries, err := os.ReadDir(r.path(base)); err == nil {
		for _, e := range entries {
			if v, ok := strings.CutPrefix(e.Name(), "lower_"); ok {
				d.Lower = append(d.Lower, v)
			}
			if v, ok := strings.CutPrefix(e.Name(), "upper_"); ok {
				d.Upper = append(d.Upper, v)
			}
		}
	}
	sort.Strings(d.Lower)
	sort.Strings(d.Upper)
	return d
}

// linkBase returns the last element of a symlink's target ("" if absent):
// the target itself need not exist, only its name matters.
func (r reader) linkBase(p string) string {
	target, err := os.Readlink(r.path(p))
	if err != nil {
		return ""
	}
	return path.Base(strings.TrimRight(target, "/"))
}

func (r reader) isDir(p string) bool {
	st, err := os.Stat(r.path(p))
	return err == nil && st.IsDir()
}

// classify names a device's kind. The ARPHRD type settles tunnels, PPP and
// loopback; DEVTYPE settles bridges, VLANs and wireless; a dsa/ directory
// marks a conduit; a DSA user port is recognised by its conduit, found
// through a lower_ link (Linux 5.12+) or, failing that, through iflink.
func classify(d *netdev, byName map[string]*netdev, byIndex map[int]*netdev) string {
	switch d.Type {
	case arphrdLoopback:
		return KindLoopback
	case arphrdIPIP:
		return KindIPIP
	case arphrdPPP:
		return KindPPP
	}
	switch {
	case d.devType == "bridge" || d.hasBridgeDir:
		return KindBridge
	case d.devType == "vlan":
		return KindVLAN
	case d.devType == "wlan" || d.isWireless:
		return KindWireless
	case d.isConduit:
		return KindDSAConduit
	}
	for _, l := range d.Lower {
		if c, ok := byName[l]; ok && c.isConduit {
			d.Conduit = l
			return KindDSAUser
		}
	}
	if d.ifLink > 0 && d.ifLink != d.IfIndex {
		if c, ok := byIndex[d.ifLink]; ok && c.isConduit {
			d.Conduit = c.Name
			return KindDSAUser
		}
	}
	if d.devType == "dsa" {
		return KindDSAUser
	}
	if d.Type == arphrdEther {
		return KindEther
	}
	return KindOther
}
