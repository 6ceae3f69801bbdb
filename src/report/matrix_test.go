package report

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/lab/boardtree"
	"github.com/fastpath-wrt/fastpath/src/observe"
	"github.com/fastpath-wrt/fastpath/src/plan"
	"github.com/fastpath-wrt/fastpath/src/uci"
)

// What each board fixture really is: its SoC and whether it has a
// flow-offload engine.
var boards = map[string]struct {
	soc     string
	capable bool
}{
	"archer-c7-v2":   {"qca9558", false},
	"mt7621-ax23":    {"mt7621", true},
	"mt7621-ipip":    {"mt7621", true},
	"mt7622-rt3200":  {"mt7622", true},
	"mt7981-ax3000t": {"mt7981", true},
	"ipq40xx":        {"ipq40xx", false},
	"x86-64":         {"x86_64", false},
}

// printJSON is the part of `fastpath print --json` scripts rely on.
type printJSON struct {
	Mode     struct{ Requested, Effective, Reason string }
	Platform struct {
		SoC              string `json:"soc"`
		HWOffloadCapable bool   `json:"hw_offload_capable"`
	}
	Flowtable struct {
		Devices []string
		Flags   []string
	}
	UCIFixes []plan.UCIFix `json:"uci_fixes"`
	Tunnels  []struct{ Device, Underlay string }
}

// TestPrintJSONMatrix runs every board with flow_offloading and
// flow_offloading_hw at 0 and 1 through `print --json`'s encoding.
func TestPrintJSONMatrix(t *testing.T) {
	for board, want := range boards {
		for _, sw := range [][2]string{{"0", "0"}, {"0", "1"}, {"1", "0"}, {"1", "1"}} {
			t.Run(board+"/"+sw[0]+sw[1], func(t *testing.T) {
				root := boardtree.Copy(t, boardsDir, board)
				for i, opt := range []string{"flow_offloading", "flow_offloading_hw"} {
					if _, err := uci.SetCommitted(root, "firewall", "@defaults[0]", opt, sw[i]); err != nil {
						t.Fatal(err)
					}
				}
				snap, err := observe.Observe(root)
				if err != nil {
					t.Fatal(err)
				}
				data, err := json.Marshal(NewPrintout(snap, plan.Make(snap, plan.Constraints{})))
				if err != nil {
					t.Fatal(err)
				}
				var got printJSON
				if err := json.Unmarshal(data, &got); err != nil {
					t.Fatal(err)
				}
				if got.Platform.SoC != want.soc || got.Platform.HWOffloadCapable != want.capable {
					t.Fatalf("platform = %+v, want soc %s capable %v", got.Platform, want.soc, want.capable)
				}
				if got.Mode.Reason == "" {
					t.Error("mode without a reason")
				}
				wantMode, wantFix := "off", false
				switch {
				case sw[0] == "0":
				case sw[1] == "0":
					wantMode = "software"
				case want.capable:
					wantMode = "hardware"
				default:
					wantMode, wantFix = "software", true
				}
				if got.Mode.Effective != wantMode {
					t.Errorf("effective mode %q, want %q (%s)", got.Mode.Effective, wantMode, got.Mode.Reason)
				}
				hasFix := slices.ContainsFunc(got.UCIFixes, func(f plan.UCIFix) bool { return f.Option == "flow_offloading_hw" && f.Value == "0" })
				if hasFix != wantFix {
					t.Errorf("flow_offloading_hw correction = %v, want %v", hasFix, wantFix)
				}
				if len(got.Flowtable.Devices) == 0 {
					t.Error("no flowtable devices planned")
				}
				for _, d := range got.Flowtable.Devices {
					if strings.HasPrefix(d, "br-") || strings.HasPrefix(d, "ipip-") || d == "lo" {
						t.Errorf("device %s listed: bridges, tunnels and loopback never are", d)
					}
				}
				if slices.Contains(got.Flowtable.Flags, "offload") != (wantMode == "hardware") {
					t.Errorf("flags %v for mode %s", got.Flowtable.Flags, wantMode)
				}
				for _, tun := range got.Tunnels {
					if tun.Underlay == "" || !slices.Contains(got.Flowtable.Devices, tun.Underlay) {
						t.Errorf("tunnel %s: underlay %q not among the devices %v", tun.Device, tun.Underlay, got.Flowtable.Devices)
					}
				}
			})
		}
	}
}
