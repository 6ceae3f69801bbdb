package nft

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeRoot makes a root directory with the given files (path: content).
// Written at run time so the test binary carries its fixtures (the VM lab
// runs it from anywhere).
func writeRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for path, content := range files {
		full := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestModuleDetail(t *testing.T) {
	// A router with kmod-nft-offload: /proc/modules lists two of the
	// modules, /sys/module has the third.
	withOffload := writeRoot(t, map[string]string{
		"proc/modules": "nft_flow_offload 12288 1 - Live 0x0000000000000000\n" +
			"nf_flow_table 40960 2 nf_flow_table_inet,nft_flow_offload, Live 0x0000000000000000\n" +
			"nf_tables 372736 1 nft_flow_offload, Live 0x0000000000000000\n",
		"sys/module/nf_flow_table_inet/refcnt": "1\n",
	})
	if d := moduleDetail(withOffload, "nf_flow_table", "nf_flow_table_inet", "nft_flow_offload"); d != "" {
		t.Errorf("all modules present, detail %q", d)
	}
	// This development machine's kind of kernel: nf_tables, no flowtable.
	without := writeRoot(t, map[string]string{
		"proc/modules": "nf_tables 372736 0 - Live 0x0000000000000000\nnf_conntrack 196608 0 - Live 0x0000000000000000\n",
	})
	if d := moduleDetail(without, "nf_flow_table", "nf_flow_table_inet"); d != "not loaded here: nf_flow_table, nf_flow_table_inet" {
		t.Errorf("detail %q", d)
	}
	if d := moduleDetail(filepath.Join(without, "does-not-exist"), "nft_flow_offload"); !strings.Contains(d, "nft_flow_offload") {
		t.Errorf("unreadable root: detail %q should name the module", d)
	}
}

func FuzzModulesListed(f *testing.F) {
	f.Add("nf_flow_table 40960 2 nf_flow_table_inet, Live 0x0\n", "nf_flow_table")
	f.Add("nf_flow_table_inet 12288 0 - Live 0x0", "nf_flow_table")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, text, name string) {
		got := modulesListed(strings.NewReader(text), name)
		// A module is listed exactly when some line starts with its name
		// as a whole word (lines beyond the scanner's 64 KiB limit aside).
		want := false
		for _, line := range strings.Split(text, "\n") {
			if len(line) >= 64*1024 {
				return
			}
			if fields := strings.Fields(line); len(fields) > 0 && fields[0] == name {
				want = true
			}
		}
		if strings.ContainsAny(text, "\r") {
			return // the scanner and Split disagree on \r; /proc never writes it
		}
		if got != want {
			t.Fatalf("modulesListed(%q, %q) = %v, want %v", text, name, got, want)
		}
	})
}
