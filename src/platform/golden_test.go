package platform

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.json from what Detect returns now")

// boardsDir holds the fixture trees shared with the other packages' tests.
const boardsDir = "../testdata/boards"

// requiredBoards must exist: other packages' golden tests rely on them.
var requiredBoards = []string{
	"archer-c7-v2", "mt7621-ax23", "mt7621-ipip", "mt7622-rt3200",
	"mt7981-ax3000t", "ipq40xx", "x86-64",
}

func boards(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(boardsDir)
	if err != nil {
		t.Fatalf("board fixtures: %v", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	for _, want := range requiredBoards {
		if _, err := os.Stat(filepath.Join(boardsDir, want)); err != nil {
			t.Errorf("board fixture %s is missing: %v", filepath.Join(boardsDir, want), err)
		}
	}
	return names
}

// TestGoldenBoards compares Detect on every fixture board with
// testdata/golden/<board>.json.
func TestGoldenBoards(t *testing.T) {
	for _, board := range boards(t) {
		t.Run(board, func(t *testing.T) {
			info, err := Detect(filepath.Join(boardsDir, board))
			if err != nil {
				t.Fatalf("Detect: %v", err)
			}
			got, err := json.MarshalIndent(info, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "golden", board+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if os.IsNotExist(err) {
				t.Fatalf("golden file src/platform/%s does not exist: create it with `go test ./src/platform -run TestGoldenBoards -update` and review it", golden)
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Detect(%s) differs from %s (rerun with -update after checking the change):\n%s",
					board, golden, lineDiff(string(want), string(got)))
			}
		})
	}
}

// lineDiff shows the first lines that differ.
func lineDiff(want, got string) string {
	w, g := bytes.Split([]byte(want), []byte("\n")), bytes.Split([]byte(got), []byte("\n"))
	var out bytes.Buffer
	shown := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b []byte
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if !bytes.Equal(a, b) {
			out.WriteString("line " + strconv.Itoa(i+1) + ":\n  want " + string(a) + "\n  got  " + string(b) + "\n")
			if shown++; shown == 5 {
				break
			}
		}
	}
	return out.String()
}

// TestBoardFacts states, independently of the golden files, what every
// board must be detected as, so a careless -update cannot bless a wrong
// answer.
func TestBoardFacts(t *testing.T) {
	cases := []struct {
		board, soc, vendor, engine string
		capable                    bool
		hw, noHW                   []string // devices that must / must not offload in hardware
		kinds                      map[string]string
		conduits                   map[string]string
	}{
		{board: "archer-c7-v2", soc: "qca9558", vendor: "Qualcomm Atheros",
			noHW:  []string{"eth0", "eth1", "eth0.2", "eth1.1", "br-lan"},
			kinds: map[string]string{"eth0": KindEther, "eth0.2": KindVLAN, "eth1.1": KindVLAN, "br-lan": KindBridge, "phy0-ap0": KindWireless, "lo": KindLoopback}},
		{board: "mt7621-ax23", soc: "mt7621", vendor: "MediaTek", engine: "MediaTek PPE", capable: true,
			hw: []string{"eth0", "wan", "lan1", "lan4"}, noHW: []string{"br-lan", "phy0-ap0"},
			kinds:    map[string]string{"eth0": KindDSAConduit, "wan": KindEther, "lan1": KindDSAUser, "br-lan": KindBridge},
			conduits: map[string]string{"lan1": "eth0", "lan4": "eth0"}},
		{board: "mt7621-ipip", soc: "mt7621", vendor: "MediaTek", engine: "MediaTek PPE", capable: true,
			hw: []string{"wan", "lan2"}, noHW: []string{"ipip-tun", "tunl0"},
			kinds: map[string]string{"ipip-tun": KindIPIP, "tunl0": KindIPIP, "wan": KindEther}},
		{board: "mt7622-rt3200", soc: "mt7622", vendor: "MediaTek", engine: "MediaTek PPE", capable: true,
			hw: []string{"eth0", "wan", "lan1", "lan2", "lan3", "lan4"}, noHW: []string{"br-lan", "phy0-ap0", "phy1-ap0"},
			kinds:    map[string]string{"wan": KindDSAUser, "eth0": KindDSAConduit},
			conduits: map[string]string{"wan": "eth0"}},
		{board: "mt7981-ax3000t", soc: "mt7981", vendor: "MediaTek", engine: "MediaTek PPE", capable: true,
			hw: []string{"eth0", "wan", "lan2", "lan4"}, kinds: map[string]string{"wan": KindDSAUser, "lan4": KindDSAUser}},
		{board: "ipq40xx", soc: "ipq40xx", vendor: "Qualcomm",
			noHW:  []string{"eth0", "wan", "lan1"},
			kinds: map[string]string{"eth0": KindDSAConduit, "wan": KindDSAUser}, conduits: map[string]string{"wan": "eth0"}},
		{board: "x86-64", soc: "x86_64",
			noHW: []string{"eth0", "eth1"}, kinds: map[string]string{"eth0": KindEther, "br-lan": KindBridge}},
	}
	for _, c := range cases {
		t.Run(c.board, func(t *testing.T) {
			info, err := Detect(filepath.Join(boardsDir, c.board))
			if err != nil {
				t.Fatal(err)
			}
			if info.SoC != c.soc || info.Vendor != c.vendor || info.HWOffloadCapable != c.capable || info.HWOffloadEngine != c.engine {
				t.Errorf("got soc=%q vendor=%q capable=%v engine=%q; want %q %q %v %q (reason: %s)",
					info.SoC, info.Vendor, info.HWOffloadCapable, info.HWOffloadEngine, c.soc, c.vendor, c.capable, c.engine, info.HWOffloadReason)
			}
			if info.HWOffloadReason == "" || info.Kernel == "" || info.Target == "" || info.BoardName == "" {
				t.Errorf("incomplete: reason=%q kernel=%q target=%q board=%q", info.HWOffloadReason, info.Kernel, info.Target, info.BoardName)
			}
			for _, n := range c.hw {
				if !deviceByName(t, info, n).HWOffload {
					t.Errorf("%s: hw_offload false, want true", n)
				}
			}
			for _, n := range c.noHW {
				if deviceByName(t, info, n).HWOffload {
					t.Errorf("%s: hw_offload true, want false", n)
				}
			}
			for n, kind := range c.kinds {
				if got := deviceByName(t, info, n).Kind; got != kind {
					t.Errorf("%s: kind %q, want %q", n, got, kind)
				}
			}
			for n, conduit := range c.conduits {
				if got := deviceByName(t, info, n).Conduit; got != conduit {
					t.Errorf("%s: conduit %q, want %q", n, got, conduit)
				}
			}
		})
	}
}
