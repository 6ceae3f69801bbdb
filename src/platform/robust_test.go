package platform

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDetectEmptyRoot(t *testing.T) {
	info, err := Detect(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if info.SoC != "unknown" || info.HWOffloadCapable {
		t.Errorf("soc=%q capable=%v, want unknown/false", info.SoC, info.HWOffloadCapable)
	}
	for _, s := range []string{"no device tree", "no /etc/openwrt_release", "treated as software-only"} {
		if !strings.Contains(info.HWOffloadReason, s) {
			t.Errorf("reason %q lacks %q", info.HWOffloadReason, s)
		}
	}
	// The JSON contract promises arrays, not null, for these two.
	b, _ := json.Marshal(info)
	if !strings.Contains(string(b), `"evidence":[]`) || !strings.Contains(string(b), `"devices":[]`) {
		t.Errorf("JSON %s: want empty evidence and devices arrays", b)
	}
}

func TestDetectBadRoot(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	if _, err := Detect(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing root: err %v, want one naming %s", err, missing)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	info, err := Detect(file)
	if err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("file root: err %v, want 'not a directory'", err)
	}
	if info.SoC != "unknown" || info.HWOffloadReason == "" {
		t.Errorf("file root: info %+v, want SoC unknown with a reason", info)
	}
}

func TestDetectGarbage(t *testing.T) {
	root := writeTree(t, map[string]string{
		"tmp/sysinfo/board_name":        "\x00\xff\n",
		"etc/openwrt_release":           "DISTRIB_TARGET='ath79/generic\n\xff\xfe=='\nDISTRIB_RELEASE=\"x\n",
		"proc/device-tree/compatible":   "\xff\x00\x00,\x00mediatek,\x00",
		"proc/sys/kernel/osrelease":     "",
		"sys/class/net/x/type":          "ether\n",
		"sys/class/net/x/ifindex":       "-1e9\n",
		"sys/class/net/x/flags":         "zz\n",
		"sys/class/net/x/uevent":        "\x00DEVTYPE\n=\n",
		"sys/class/net/x/lower_x":       "-> ../x",
		"sys/class/net/x/device/driver": "-> /",
	})
	info, err := Detect(root)
	if err != nil {
		t.Fatal(err)
	}
	if info.SoC != "unknown" || info.HWOffloadReason == "" {
		t.Errorf("soc=%q reason=%q", info.SoC, info.HWOffloadReason)
	}
	found := false
	for _, e := range info.Evidence {
		if e.Source == "/etc/openwrt_release" && strings.Contains(e.Value, "line 1") {
			found = true
		}
	}
	if !found {
		t.Errorf("no evidence naming the bad line of openwrt_release: %+v", info.Evidence)
	}
	if d := deviceByName(t, info, "x"); d.Kind != KindOther {
		t.Errorf("x kind %q, want other", d.Kind)
	}
}

// FuzzDetectSignals feeds arbitrary signal files to Detect: it must never
// panic and must always name a SoC and give a reason.
func FuzzDetectSignals(f *testing.F) {
	f.Add([]byte("tplink,archer-c7-v2\x00qca,qca9558\x00"), []byte("DISTRIB_TARGET='ath79/generic'\n"), []byte("DEVTYPE=vlan\n"), []byte("1\n"))
	f.Add([]byte("mediatek,mt7628an-soc\x00"), []byte("DISTRIB_TARGET=ramips/mt7621\n"), []byte(""), []byte("768"))
	f.Add([]byte("\xff\x00,\x00*\x00[\x00"), []byte("'\n\"\n\\"), []byte("\x00"), []byte("x"))
	f.Fuzz(func(t *testing.T, compatible, release, uevent, typ []byte) {
		root := t.TempDir()
		write := func(p string, b []byte) {
			full := filepath.Join(root, p)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("proc/device-tree/compatible", compatible)
		write("etc/openwrt_release", release)
		write("sys/class/net/eth0/uevent", uevent)
		write("sys/class/net/eth0/type", typ)
		info, err := Detect(root)
		if err != nil {
			t.Fatal(err)
		}
		if info.SoC == "" || info.HWOffloadReason == "" || len(info.Devices) != 1 {
			t.Fatalf("incomplete answer: %+v", info)
		}
		if info.HWOffloadCapable && info.HWOffloadEngine == "" {
			t.Fatalf("capable without an engine: %+v", info)
		}
	})
}
