package observe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-wrt/fastpath/src/platform"
)

func TestHWFlowsReadsTablesOnlyWhereTheyCarryNoCounters(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sys/kernel/debug/ppe0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	line := "00312 BND IPv4 5T orig=192.168.1.120:50412->198.51.100.7:443 packets=0 bytes=0\n"
	if err := os.WriteFile(filepath.Join(dir, "bind"), []byte(line+line), 0o644); err != nil {
		t.Fatal(err)
	}
	mt7621 := platform.Info{SoC: "mt7621", HWOffloadEngine: "MediaTek PPE", Kernel: "6.6.73"}
	s := HWFlows(root, mt7621)
	if !s.Read || s.Bound != 2 || s.Counters || !strings.Contains(s.Reason, "ppe0: 2 bound (0 IPv6);") || !strings.Contains(s.Reason, "no byte counters") {
		t.Errorf("MT7621: %+v", s)
	}
	// MT7622 counts from 6.4: the table stays unread (a read would take
	// conntrack's counts), and the reason says why.
	mt7622 := platform.Info{SoC: "mt7622", HWOffloadEngine: "MediaTek PPE", HWFlowCounters: true, Kernel: "6.6.73"}
	s = HWFlows(root, mt7622)
	if s.Read || !s.Counters || s.Bound != 0 || !strings.Contains(s.Reason, "not read") {
		t.Errorf("MT7622 on 6.6: %+v", s)
	}
	mt7622.Kernel = "6.1.100"
	if s = HWFlows(root, mt7622); !s.Read || s.Counters || !strings.Contains(s.Reason, "from Linux 6.4 only") {
		t.Errorf("MT7622 on 6.1: %+v", s)
	}
	if s = HWFlows(t.TempDir(), mt7621); s.Read || !strings.Contains(s.Reason, "no PPE table to read") {
		t.Errorf("MT7621 without debugfs: %+v", s)
	}
	if s = HWFlows(root, platform.Info{SoC: "qca9558"}); s.Reason != "" || s.Read {
		t.Errorf("no engine: %+v", s)
	}
}
