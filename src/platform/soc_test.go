package platform

import (
	"strings"
	"testing"
)

// TestSoCRules runs Detect over small trees that isolate one rule of the
// chip table each.
func TestSoCRules(t *testing.T) {
	dt := func(compatible ...string) map[string]string {
		return map[string]string{"proc/device-tree/compatible": strings.Join(compatible, "\x00") + "\x00"}
	}
	target := func(t string) map[string]string {
		return map[string]string{"etc/openwrt_release": "DISTRIB_ID='OpenWrt'\nDISTRIB_TARGET='" + t + "'\n"}
	}
	eth := func(name, driver string) map[string]string { return netdevFiles(name, "2", driver) }
	eth3 := func(name, driver string) map[string]string { return netdevFiles(name, "3", driver) }

	cases := []struct {
		name    string
		files   map[string]string
		soc     string
		capable bool
		engine  string
		hw      map[string]bool // device -> HWOffload
		reason  []string        // substrings of HWOffloadReason
	}{
		{name: "mt7628 with mtk_soc_eth is not capable",
			files: merge(dt("hilink,hlk-7628n", "mediatek,mt7628an-soc"), target("ramips/mt76x8"), eth("eth0", "mtk_soc_eth")),
			soc:   "mt7628", hw: map[string]bool{"eth0": false},
			reason: []string{"MT7628 (ramips/mt76x8)", "software offload only"}},
		{name: "mt7688 is the mt7628 row",
			files: merge(dt("onion,omega2", "mediatek,mt7688-soc"), eth("eth0", "mtk_soc_eth")),
			soc:   "mt7628", hw: map[string]bool{"eth0": false}},
		{name: "mt7621 compatible is capable",
			files: merge(dt("xiaomi,mi-router-4a-gigabit", "mediatek,mt7621-soc"), target("ramips/mt7621"), eth("eth0", "mtk_soc_eth")),
			soc:   "mt7621", capable: true, engine: "MediaTek PPE", hw: map[string]bool{"eth0": true},
			reason: []string{"MT7621 has the MediaTek PPE: hardware flow offload available"}},
		{name: "compatible beats a contradicting target",
			files: merge(dt("vendor,board", "mediatek,mt7628an-soc"), target("ramips/mt7621"), eth("eth0", "mtk_soc_eth")),
			soc:   "mt7628", hw: map[string]bool{"eth0": false}},
		{name: "a capable target without device tree proves nothing",
			files: merge(target("ramips/mt7621"), eth("eth0", "mtk_soc_eth")),
			soc:   "unknown", hw: map[string]bool{"eth0": false},
			reason: []string{"Unknown chip", `target "ramips/mt7621"`, "no device tree", "treated as software-only"}},
		{name: "mt2701 is not capable",
			files: merge(dt("mediatek,mt2701-evb", "mediatek,mt2701"), eth("eth0", "mtk_soc_eth")),
			soc:   "mt2701", hw: map[string]bool{"eth0": false}},
		{name: "mt7622", files: merge(dt("bananapi,bpi-r64", "mediatek,mt7622"), eth("eth0", "mtk_soc_eth")),
			soc: "mt7622", capable: true, engine: "MediaTek PPE", hw: map[string]bool{"eth0": true}},
		{name: "mt7623", files: merge(dt("bananapi,bpi-r2", "mediatek,mt7623"), eth("eth0", "mtk_soc_eth")),
			soc: "mt7623", capable: true, engine: "MediaTek PPE", hw: map[string]bool{"eth0": true}},
		{name: "mt7986a", files: merge(dt("bananapi,bpi-r3", "mediatek,mt7986a"), eth("eth0", "mtk_soc_eth")),
			soc: "mt7986", capable: true, engine: "MediaTek PPE", hw: map[string]bool{"eth0": true}},
		{name: "mt7988a", files: merge(dt("bananapi,bpi-r4", "mediatek,mt7988a"), eth("eth0", "mtk_soc_eth")),
			soc: "mt7988", capable: true, engine: "MediaTek PPE", hw: map[string]bool{"eth0": true}},
		{name: "mt7981b", files: merge(dt("cudy,wr3000-v1", "mediatek,mt7981b"), eth("eth0", "mtk_soc_eth")),
			soc: "mt7981", capable: true, engine: "MediaTek PPE", hw: map[string]bool{"eth0": true}},
		{name: "airoha en7581", files: merge(dt("airoha,en7581-evb", "airoha,en7581"), eth("eth0", "airoha_eth")),
			soc: "en7581", capable: true, engine: "Airoha PPE", hw: map[string]bool{"eth0": true}},
		{name: "capable SoC, other driver",
			files: merge(dt("vendor,board", "mediatek,mt7621-soc"), eth("eth0", "mtk_soc_eth"), eth3("usb0", "r8152")),
			soc:   "mt7621", capable: true, engine: "MediaTek PPE", hw: map[string]bool{"eth0": true, "usb0": false}},
		{name: "capable SoC without its ethernet device",
			files: dt("vendor,board", "mediatek,mt7621-soc"),
			soc:   "mt7621", capable: true, engine: "MediaTek PPE",
			reason: []string{"no network device driven by mtk_soc_eth"}},
		{name: "ath79 qca9563", files: merge(dt("tplink,archer-c7-v5", "qca,qca9563"), eth("eth0", "ag71xx")),
			soc: "qca9563", hw: map[string]bool{"eth0": false},
			reason: []string{"QCA9563 (ath79) has no flow-offload engine: software offload only"}},
		{name: "ath79 ar9344", files: dt("tplink,tl-wdr4300-v1", "qca,ar9344"), soc: "ar9344"},
		{name: "ath79 qca9531", files: dt("glinet,gl-ar300m16", "qca,qca9531"), soc: "qca9531"},
		{name: "ath79 by target alone", files: target("ath79/generic"), soc: "ath79",
			reason: []string{"ath79 has no flow-offload engine: software offload only"}},
		{name: "mt7628 by target alone", files: target("ramips/mt76x8"), soc: "mt7628",
			reason: []string{"MT7628 (ramips/mt76x8) has no flow-offload engine"}},
		{name: "x86 generic", files: target("x86/generic"), soc: "x86",
			reason: []string{"x86 has no flow-offload engine: software offload only"}},
		{name: "ipq4018", files: dt("glinet,gl-b1300", "qcom,ipq4018"), soc: "ipq4018",
			reason: []string{"IPQ4018 (ipq40xx)", "software offload only"}},
		{name: "ipq8065", files: dt("netgear,r7800", "qcom,ipq8065"), soc: "ipq8065",
			reason: []string{"IPQ8065 (ipq806x)"}},
		{name: "x86/64", files: merge(target("x86/64"), eth("eth0", "e1000e")), soc: "x86_64",
			hw: map[string]bool{"eth0": false}, reason: []string{"x86/64 has no flow-offload engine: software offload only"}},
		{name: "x86/64 with an mlx5 NIC",
			files: merge(target("x86/64"), eth("eth0", "igc"), eth3("eth2", "mlx5_core")),
			soc:   "x86_64", capable: true, engine: "Mellanox mlx5",
			hw:     map[string]bool{"eth0": false, "eth2": true},
			reason: []string{"eth2 (mlx5_core) can offload in hardware"}},
		{name: "unknown chip", files: merge(dt("raspberrypi,4-model-b", "brcm,bcm2711"), target("bcm27xx/bcm2711")),
			soc:    "unknown",
			reason: []string{`compatible "raspberrypi,4-model-b brcm,bcm2711"`, `target "bcm27xx/bcm2711"`, "unknown chips are treated as software-only"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			info, err := Detect(writeTree(t, c.files))
			if err != nil {
				t.Fatal(err)
			}
			if info.SoC != c.soc || info.HWOffloadCapable != c.capable || info.HWOffloadEngine != c.engine {
				t.Errorf("soc=%q capable=%v engine=%q; want %q %v %q (reason: %s)",
					info.SoC, info.HWOffloadCapable, info.HWOffloadEngine, c.soc, c.capable, c.engine, info.HWOffloadReason)
			}
			for dev, want := range c.hw {
				if got := deviceByName(t, info, dev).HWOffload; got != want {
					t.Errorf("%s: hw_offload %v, want %v", dev, got, want)
				}
			}
			for _, s := range c.reason {
				if !strings.Contains(info.HWOffloadReason, s) {
					t.Errorf("reason %q lacks %q", info.HWOffloadReason, s)
				}
			}
		})
	}
}

// TestDriverAloneIsNoProof checks the evidence says why mtk_soc_eth does
// not count on a chip without a PPE.
func TestDriverAloneIsNoProof(t *testing.T) {
	root := writeTree(t, merge(
		map[string]string{"proc/device-tree/compatible": "mediatek,mt7628an-soc\x00"},
		netdevFiles("eth0", "2", "mtk_soc_eth")))
	info, err := Detect(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range info.Evidence {
		if e.Source == "/sys/class/net/eth0/device/driver" {
			if e.Value != "mtk_soc_eth" || !strings.Contains(e.Meaning, "proves nothing") {
				t.Errorf("driver evidence = %+v", e)
			}
			return
		}
	}
	t.Errorf("no evidence for eth0's driver in %+v", info.Evidence)
}
