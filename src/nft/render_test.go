package nft

import (
	"embed"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/netstate"
)

// goldenFiles are compiled in, so the test binary runs anywhere (the VM lab
// copies only the binary).
//
//go:embed testdata/*.nft
var goldenFiles embed.FS

// One golden file per case: the exact text `fastpath print` shows.
func TestRenderGolden(t *testing.T) {
	cases := []struct {
		file string
		spec netstate.FlowtableSpec
	}{
		{"software.nft", netstate.FlowtableSpec{Enabled: true, Devices: []string{"wan0", "lan0"}, Counter: true}},
		// duplicates collapse, a VLAN device is quoted for nft's parser
		{"hardware.nft", netstate.FlowtableSpec{Enabled: true, Devices: []string{"wan0", "lan0", "eth0.2", "lan0"}, Hardware: true, Counter: true}},
		{"no-devices.nft", netstate.FlowtableSpec{Enabled: true, Counter: true}},
		{"after-packets.nft", netstate.FlowtableSpec{Enabled: true, Devices: []string{"lan0", "wan0"}, Counter: true, OffloadAfterPackets: 30}},
		{"disabled.nft", netstate.FlowtableSpec{Enabled: false, Devices: []string{"lan0"}, Hardware: true, Counter: true}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("testdata", c.file)
			want, err := fs.ReadFile(goldenFiles, path)
			if err != nil {
				t.Fatalf("missing golden file: create %s with the expected nft text (%v)", path, err)
			}
			if got := Render(c.spec); got != string(want) {
				t.Errorf("Render(%+v) differs from %s\n--- got\n%s--- want\n%s", c.spec, path, got, want)
			}
		})
	}
}

func TestRenderDoesNotReorderCallersDevices(t *testing.T) {
	devs := []string{"wan0", "lan0"}
	Render(netstate.FlowtableSpec{Enabled: true, Devices: devs})
	if devs[0] != "wan0" || devs[1] != "lan0" {
		t.Fatalf("Render sorted the caller's slice in place: %v", devs)
	}
}

func TestRenderWithoutCounterHasNoCounterLine(t *testing.T) {
	got := Render(netstate.FlowtableSpec{Enabled: true, Devices: []string{"lan0"}})
	if strings.Contains(got, "counter") {
		t.Fatalf("Counter false but rendered a counter line:\n%s", got)
	}
}

func TestValidate(t *testing.T) {
	good := netstate.FlowtableSpec{Enabled: true, Devices: []string{"lan0", "eth0.2", "br-lan", "wlan0-1", "pppoe-wan"}}
	if err := validate(good); err != nil {
		t.Fatalf("valid devices refused: %v", err)
	}
	for _, bad := range []string{"", "averyveryverylongname", "lan 0", `a"b`, "a/b", "a}b"} {
		err := validate(netstate.FlowtableSpec{Devices: []string{"lan0", bad}})
		if err == nil {
			t.Errorf("device %q accepted", bad)
			continue
		}
		if bad != "" && !strings.Contains(err.Error(), fmt.Sprintf("%q", bad)) {
			t.Errorf("error for %q does not name it: %v", bad, err)
		}
	}
}

// Every spec that validates renders each device exactly once, inside the
// flowtable block, with balanced braces.
func FuzzRenderValidSpec(f *testing.F) {
	f.Add("lan0,wan0", true, true)
	f.Add("eth0.2,eth0.2,br-lan", false, true)
	f.Add("", true, false)
	f.Fuzz(func(t *testing.T, list string, hw, counter bool) {
		var devs []string
		if list != "" {
			devs = strings.Split(list, ",")
		}
		s := netstate.FlowtableSpec{Enabled: true, Devices: devs, Hardware: hw, Counter: counter}
		if validate(s) != nil {
			return
		}
		out := Render(s)
		if strings.Count(out, "{") != strings.Count(out, "}") {
			t.Fatalf("unbalanced braces:\n%s", out)
		}
		for _, d := range normalDevices(devs) {
			if n := strings.Count(out, " "+quoteDevice(d)+",") + strings.Count(out, " "+quoteDevice(d)+" }"); n != 1 {
				t.Fatalf("device %q rendered %d times:\n%s", d, n, out)
			}
		}
		if hw != strings.Contains(out, "flags offload") || counter != strings.Contains(out, "\t\tcounter\n") {
			t.Fatalf("flags not rendered as asked (hw=%v counter=%v):\n%s", hw, counter, out)
		}
	})
}
