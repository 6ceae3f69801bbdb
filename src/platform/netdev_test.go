package platform

import (
	"testing"
)

func TestClassifyDevices(t *testing.T) {
	conduit := merge(netdevFiles("eth0", "2", "mtk_soc_eth"), map[string]string{
		"sys/class/net/eth0/dsa/tagging": "mtk\n",
	})
	dt := map[string]string{"proc/device-tree/compatible": "vendor,board\x00mediatek,mt7621-soc\x00"}
	cases := []struct {
		name    string
		files   map[string]string
		dev     string
		kind    string
		conduit string
		hw      bool
		up      bool
	}{
		{name: "DSA user port without device link, conduit by lower_",
			files: merge(dt, conduit, map[string]string{
				"sys/class/net/lan1/type":           "1\n",
				"sys/class/net/lan1/ifindex":        "3\n",
				"sys/class/net/lan1/operstate":      "up\n",
				"sys/class/net/lan1/phys_port_name": "p0\n",
				"sys/class/net/lan1/lower_eth0":     "-> ../eth0",
			}),
			dev: "lan1", kind: KindDSAUser, conduit: "eth0", hw: true, up: true},
		{name: "DSA user port found through iflink (no lower_ links)",
			files: merge(dt, conduit, map[string]string{
				"sys/class/net/lan2/type":    "1\n",
				"sys/class/net/lan2/ifindex": "4\n",
				"sys/class/net/lan2/iflink":  "2\n",
			}),
			dev: "lan2", kind: KindDSAUser, conduit: "eth0", hw: true},
		{name: "DEVTYPE=dsa without a conduit",
			files: merge(dt, map[string]string{
				"sys/class/net/lan3/type":   "1\n",
				"sys/class/net/lan3/uevent": "DEVTYPE=dsa\nINTERFACE=lan3\n",
			}),
			dev: "lan3", kind: KindDSAUser},
		{name: "vlan on a conduit stays a vlan",
			files: merge(dt, conduit, map[string]string{
				"sys/class/net/eth0.1/type":       "1\n",
				"sys/class/net/eth0.1/uevent":     "DEVTYPE=vlan\nINTERFACE=eth0.1\n",
				"sys/class/net/eth0.1/lower_eth0": "-> ../eth0",
			}),
			dev: "eth0.1", kind: KindVLAN},
		{name: "conduit", files: merge(dt, conduit), dev: "eth0", kind: KindDSAConduit, hw: true, up: true},
		{name: "ppp", files: map[string]string{"sys/class/net/pppoe-wan/type": "512\n"}, dev: "pppoe-wan", kind: KindPPP},
		{name: "sit is other", files: map[string]string{"sys/class/net/6in4-wan6/type": "776\n"}, dev: "6in4-wan6", kind: KindOther},
		{name: "wireguard (ARPHRD_NONE) is other", files: map[string]string{"sys/class/net/wg0/type": "65534\n"}, dev: "wg0", kind: KindOther},
		{name: "wireless by phy80211 directory",
			files: map[string]string{"sys/class/net/wlan0/type": "1\n", "sys/class/net/wlan0/phy80211/name": "phy0\n"},
			dev:   "wlan0", kind: KindWireless},
		{name: "bridge by bridge/ directory",
			files: map[string]string{"sys/class/net/br0/type": "1\n", "sys/class/net/br0/bridge/stp_state": "0\n"},
			dev:   "br0", kind: KindBridge},
		{name: "tunnel up with operstate unknown",
			files: map[string]string{"sys/class/net/ipip-x/type": "768\n", "sys/class/net/ipip-x/operstate": "unknown\n",
				"sys/class/net/ipip-x/flags": "0x91\n"},
			dev: "ipip-x", kind: KindIPIP, up: true},
		{name: "tunnel down with operstate unknown",
			files: map[string]string{"sys/class/net/ipip-y/type": "768\n", "sys/class/net/ipip-y/operstate": "unknown\n",
				"sys/class/net/ipip-y/flags": "0x90\n"},
			dev: "ipip-y", kind: KindIPIP},
		{name: "no type file", files: map[string]string{"sys/class/net/odd/ifindex": "9\n"}, dev: "odd", kind: KindOther},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			info, err := Detect(writeTree(t, c.files))
			if err != nil {
				t.Fatal(err)
			}
			d := deviceByName(t, info, c.dev)
			if d.Kind != c.kind || d.Conduit != c.conduit || d.HWOffload != c.hw || d.OperUp != c.up {
				t.Errorf("got kind=%q conduit=%q hw=%v up=%v; want %q %q %v %v",
					d.Kind, d.Conduit, d.HWOffload, d.OperUp, c.kind, c.conduit, c.hw, c.up)
			}
		})
	}
}

// TestIflinkEvidence checks a conduit found through iflink is credited to
// iflink, not to a lower_ link that does not exist.
func TestIflinkEvidence(t *testing.T) {
	root := writeTree(t, merge(netdevFiles("eth0", "2", "mtk_soc_eth"), map[string]string{
		"sys/class/net/eth0/dsa/tagging": "mtk\n",
		"sys/class/net/lan2/type":        "1\n",
		"sys/class/net/lan2/ifindex":     "4\n",
		"sys/class/net/lan2/iflink":      "2\n",
	}))
	info, err := Detect(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range info.Evidence {
		if e.Source == "/sys/class/net/lan2/iflink" && e.Value == "eth0" {
			return
		}
	}
	t.Errorf("no iflink evidence for lan2 in %+v", info.Evidence)
}

// TestNonDirectoryEntriesSkipped: /sys/class/net/bonding_masters is a file.
func TestNonDirectoryEntriesSkipped(t *testing.T) {
	root := writeTree(t, merge(netdevFiles("eth0", "2", "igc"), map[string]string{
		"sys/class/net/bonding_masters": "\n",
	}))
	info, err := Detect(root)
	if err != nil {
		t.Fatal(err)
	}
	if names := deviceNames(info); len(names) != 1 || names[0] != "eth0" {
		t.Errorf("devices %v, want [eth0]", names)
	}
}

// TestSymlinkedDeviceDirectories: on a real system the entries of
// /sys/class/net are symlinks into /sys/devices.
func TestSymlinkedDeviceDirectories(t *testing.T) {
	root := writeTree(t, map[string]string{
		"sys/devices/virtual/net/lo/type":                        "772\n",
		"sys/devices/virtual/net/lo/ifindex":                     "1\n",
		"sys/devices/platform/1e100000.ethernet/net/eth0/type":   "1\n",
		"sys/devices/platform/1e100000.ethernet/net/eth0/device": "-> ../../../1e100000.ethernet",
		"sys/devices/platform/1e100000.ethernet/driver":          "-> ../../../bus/platform/drivers/mtk_soc_eth",
		"sys/class/net/lo":                                       "-> ../../devices/virtual/net/lo",
		"sys/class/net/eth0":                                     "-> ../../devices/platform/1e100000.ethernet/net/eth0",
	})
	info, err := Detect(root)
	if err != nil {
		t.Fatal(err)
	}
	if d := deviceByName(t, info, "lo"); d.Kind != KindLoopback || d.IfIndex != 1 {
		t.Errorf("lo = %+v", d)
	}
	if d := deviceByName(t, info, "eth0"); d.Kind != KindEther || d.Driver != "mtk_soc_eth" {
		t.Errorf("eth0 = %+v", d)
	}
}
